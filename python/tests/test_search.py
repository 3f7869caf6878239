"""Memory: k nearest neighbours over .wmz files, the same as `wmzip
search --json` finds them; indexes loaded or built; errors; threads."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import wmzip
from conftest import episodes_of


@pytest.fixture(scope="module")
def memory(codec, run, tmp_path_factory):
    """Two lossless files of the run's episodes (4 and 4), in a directory
    of their own, and the codec's model file: (paths, model)."""
    d = tmp_path_factory.mktemp("search")
    eps = episodes_of(run)
    paths = [d / "a.wmz", d / "b.wmz"]
    wmzip.encode(paths[0], codec, eps[:4], keyframe=16)
    wmzip.encode(paths[1], codec, eps[4:], keyframe=16)
    model = d / "model.wmm"
    codec.save(model)
    return paths, model


@pytest.fixture(scope="module")
def queries(codec, run):
    """Slot and state queries near (not at) stored states."""
    rng = np.random.default_rng(7)
    obs = run["obs"]
    picks = rng.choice(len(obs), 5, replace=False)
    states = (obs[picks] + 0.3 * rng.standard_normal(obs[picks].shape)).astype(np.float32)
    return {"slots": states[:, 1], "states": states[:3], "all": states}


def cli_search(cli, memory, tmp_path, q, *args):
    """The results of `wmzip search --json` for queries q: a list per
    query of (episode, step, slot or -1, distance)."""
    paths, model = memory
    qp = tmp_path / "q.npy"
    np.save(qp, q)
    out = cli("search", "-q", "--json", "-m", model, "--query", qp, *args, *paths).stdout
    return [[(h["episode"], h["step"], h.get("slot", -1), h["distance"]) for h in rs] for rs in json.loads(out)["results"]]


def as_lists(h: wmzip.Hits):
    return [list(zip(e.tolist(), t.tolist(), s.tolist(), d.tolist()))
            for e, t, s, d in zip(h.episode, h.step, h.slot, h.distance)]


CASES = [
    ("slots", "slots", False, 7, {}, []),
    ("slot filters", "slots", False, 5, {"episodes": (2, 7), "steps": (10, None)}, ["--episodes", "2:7", "--steps", "10:"]),
    ("states", "states", False, 6, {}, []),
    ("state filters", "states", False, 4, {"episodes": range(5, 8), "steps": (None, 30)},
     ["--episodes", "5:8", "--steps", ":30"]),
    ("slot codes", "slots", True, 5, {"steps": (3, 50)}, ["--steps", "3:50"]),
    ("state codes", "states", True, 3, {"episodes": (1, None)}, ["--episodes", "1:"]),
]


@pytest.mark.parametrize("name,kind,codes,k,kw,flags", CASES, ids=[c[0] for c in CASES])
def test_as_cli(name, kind, codes, k, kw, flags, cli, codec, memory, queries, tmp_path):
    """Results bit for bit those of `wmzip search --json` on the same
    files, queries and filters: episodes, steps, slots, distances."""
    q = queries[kind]
    if codes:  # a state's codes, or a slot vector's in its state
        q = codec.quantize(q) if kind == "states" else codec.quantize(queries["all"])[:, 1]
    want = cli_search(cli, memory, tmp_path, q, "--k", k, *flags)
    with wmzip.Memory(memory[0], codec) as m:
        hits = getattr(m, kind)(q, k, **kw)
    assert hits.episode.shape == (len(q), k) and hits.distance.dtype == np.float64
    assert as_lists(hits) == want
    if kind == "states":
        assert (hits.slot == -1).all()


def test_single_query(codec, memory, queries):
    """One query gives arrays of shape (k,), as row 0 of its batch."""
    with wmzip.Memory(memory[0], codec) as m:
        one = m.slots(queries["slots"][0], 4)
        batch = m.slots(queries["slots"], 4)
        assert one.episode.shape == (4,)
        for a, b in zip(one, batch):
            assert np.array_equal(a, b[0])
        s = m.states(queries["states"][0], 2)
        assert s.step.shape == (2,)
        grid = m.slots(queries["states"], 3)  # (3, S, d): every slot vector a query
        assert grid.episode.shape == (3, codec.slots, 3)
        assert np.array_equal(grid.distance[1, 2], m.slots(queries["states"][1, 2], 3).distance)


def test_fewer_than_k(codec, memory, queries):
    """Filters that leave fewer than k states give fewer results."""
    with wmzip.Memory(memory[0], codec) as m:
        h = m.states(queries["states"], 50, episodes=(7, 8), steps=(0, 6))
        assert h.episode.shape == (3, 6)
        assert (h.episode == 7).all() and sorted(h.step[0].tolist()) == list(range(6))


def test_index_loaded_or_built(codec, cli, memory, tmp_path):
    """Each file's index is loaded when current, built otherwise; info
    says which, and save keeps a built one."""
    paths = []
    for p in memory[0]:
        paths.append(tmp_path / p.name)
        paths[-1].write_bytes(p.read_bytes())
    with wmzip.Memory(paths, codec) as m:
        assert [i.index for i in m.info] == ["built", "built"]
        assert m.info[0].reason == "no index" and not m.info[0].saved
        assert sum(i.states for i in m.info) == sum(m.episodes)
    cli("index", "-q", "-m", memory[1], paths[0])
    with wmzip.Memory(paths, codec, save=True) as m:
        assert [i.loaded for i in m.info] == [True, False]
        assert m.info[1].saved and m.info[1].index_bytes > 0
    with wmzip.Memory(paths, codec) as m:
        assert all(i.loaded for i in m.info)
    # Appending to a file makes its index stale: rebuilt, with the reason.
    paths[1].write_bytes(memory[0][0].read_bytes())
    with wmzip.Memory(paths, codec) as m:
        assert m.info[1].index == "built" and "stale" in m.info[1].reason


def test_locate_and_numbering(codec, memory, queries):
    """Episodes are numbered across the files; locate turns them back."""
    with wmzip.Memory(memory[0], codec) as m, wmzip.open(memory[0][1], codec) as f:
        assert len(m) == 8 and m.episodes[4:] == f.episodes
        assert m.locate(0) == (0, 0) and m.locate(5) == (1, 1)
        with pytest.raises(IndexError):
            m.locate(8)
        h = m.states(queries["states"][0], 1, episodes=(4, None))
        fi, e = m.locate(int(h.episode[0]))
        assert fi == 1
        # The neighbour found is that state: zero distance to its codes.
        codes = f.codes(e, int(h.step[0]))
        assert m.states(codes, 1, episodes=(4, None)).distance[0] <= h.distance[0]


def test_file_search(codec, memory, queries):
    """File.search is Memory([path]).slots or .states."""
    with wmzip.open(memory[0][0], codec) as f, wmzip.Memory(memory[0][0], codec) as m:
        for a, b in zip(f.search(queries["slots"], 3, steps=(2, 9)), m.slots(queries["slots"], 3, steps=(2, 9))):
            assert np.array_equal(a, b)
        for a, b in zip(f.search(queries["states"], 2, states=True), m.states(queries["states"], 2)):
            assert np.array_equal(a, b)
    with pytest.raises(wmzip.ClosedError):
        f.search(queries["slots"])


def test_errors(codec, codes_codec, memory, queries, tmp_path):
    paths = memory[0]
    with pytest.raises(FileNotFoundError):
        wmzip.Memory([paths[0], tmp_path / "none.wmz"], codec)
    bad = tmp_path / "bad.wmz"
    bad.write_bytes(b"not a wmz file, not at all" * 8)
    with pytest.raises(wmzip.CorruptError):
        wmzip.Memory(bad, codec)
    with pytest.raises(wmzip.NoModelError):
        wmzip.Memory(paths)  # the files embed no model
    with pytest.raises(wmzip.InputError) as e:
        wmzip.Memory(paths, codes_codec)  # no quantizer
    assert "quantizer" in str(e.value)
    with pytest.raises(wmzip.InputError):
        wmzip.Memory([], codec)
    m = wmzip.Memory(paths, codec)
    q = queries["slots"]
    nan = q.copy()
    nan[0, 3] = np.nan
    for call in (
        lambda: m.slots(q[:, :-1]),  # not d floats
        lambda: m.states(q),  # slot vectors as states
        lambda: m.slots(q, 0),
        lambda: m.slots(nan),
        lambda: m.slots(np.full((2, codec.subspaces), codec.alphabet, np.uint16)),  # codes ≥ K
        lambda: m.slots(q, episodes=(3, 3)),
        lambda: m.slots(q, steps=(-1, None)),
        lambda: m.slots(q, episodes=5),
        lambda: m.slots(np.array(["a", "b"])),
        lambda: m.states(queries["states"], nprobe=-1),
    ):
        with pytest.raises(wmzip.InputError):
            call()
    m.close()
    m.close()
    with pytest.raises(wmzip.ClosedError):
        m.slots(q)


def test_concurrent(codec, memory, queries):
    """Searches from many threads at once give what one thread gets;
    closing while they run lets each finish or raise ClosedError."""
    m = wmzip.Memory(memory[0], codec)
    want_slots = m.slots(queries["slots"], 5)
    want_states = m.states(queries["states"], 4, steps=(5, None))
    failures = []

    def work(i: int) -> None:
        for _ in range(10):
            if i % 2:
                got = m.slots(queries["slots"], 5, threads=1 + i % 3)
                want = want_slots
            else:
                got, want = m.states(queries["states"], 4, steps=(5, None)), want_states
            if not all(np.array_equal(a, b) for a, b in zip(got, want)):
                failures.append(f"thread {i}: results differ")
                return

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures

    closed = []

    def until_closed() -> None:
        try:
            for _ in range(500):
                m.states(queries["states"], 3)
        except wmzip.ClosedError as e:
            closed.append(e)

    threads = [threading.Thread(target=until_closed) for _ in range(3)]
    for t in threads:
        t.start()
    m.close()
    for t in threads:
        t.join()
    assert len(closed) == 3


def test_releases_the_gil(codec, memory, run):
    """A long batch runs in one call and lets other threads run."""
    from test_gil import ticks_during

    q = np.ascontiguousarray(np.resize(run["obs"][:, 0], (2048, codec.dim)))
    with wmzip.Memory(memory[0], codec) as m:
        start, end, ticks = ticks_during(lambda: m.slots(q, 10, threads=1))
    if end - start < 0.05:
        return  # too fast to tell a held GIL from a released one
    quarter = (end - start) / 4
    assert [x for x in ticks if start + quarter <= x <= end - quarter], "the GIL was held through the search"


@pytest.mark.parametrize("kind,codes", [("slots", False), ("states", False), ("states", True)])
def test_lossy_family(kind, codes, cli, codec, run, queries, tmp_path):
    """A lossy file of a family is searched with the member that wrote it
    (its index is that member's), as `wmzip search` searches it given the
    family: the memory's codec is that member, and code queries its."""
    p, model = tmp_path / "lossy.wmz", tmp_path / "model.wmm"
    wmzip.encode(p, codec, episodes_of(run)[:4], lam=22, keyframe=16)
    codec.save(model)
    with wmzip.open(p, codec) as f, wmzip.Memory([p], codec) as m:
        member = f.codec
        assert member in codec.members and member != codec  # these runs: a coarser member
        assert m.codec == member and m.model_id == member.model_id and m.info[0].states == f.states
        q = member.quantize(queries[kind]) if codes else queries[kind]
        # Codes stand for their reconstruction (`wmzip search` takes no
        # codes of a member: it wants the family's, then the member's).
        want = cli_search(cli, ([p], model), tmp_path, member.reconstruct(q) if codes else q, "--k", 4)
        assert as_lists(getattr(m, kind)(q, 4)) == want
        assert as_lists(f.search(q, 4, states=kind == "states")) == want
        if codes:
            with pytest.raises(wmzip.InputError):
                m.states(codec.quantize(queries[kind]), 4)  # the family's codes are not the member's
