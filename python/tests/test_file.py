"""wmzip.open and File: indexing, iteration, metadata, info, concurrency,
the lifetime of a file."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import wmzip
from conftest import episodes_of


@pytest.fixture(scope="module")
def path(codec, run, tmp_path_factory):
    p = tmp_path_factory.mktemp("file") / "run.wmz"
    with wmzip.Writer(p, codec, keyframe=16) as w:
        for i, (data, actions) in enumerate(episodes_of(run)):
            w.write_episode(data, actions, meta={"episode": i, "task": "walk"})
    return p


@pytest.fixture()
def f(path, codec):
    with wmzip.open(path, codec) as f:
        yield f


def test_shape(f, codec, run):
    starts = list(run["episode_start"]) + [len(run["actions"])]
    assert len(f) == len(run["episode_start"])
    assert f.episodes == tuple(b - a for a, b in zip(starts, starts[1:]))
    assert f.states == len(run["actions"])
    x = f[1, 7]
    assert x.shape == (codec.slots, codec.dim) and x.dtype == np.float32
    c = f.codes(1, 7)
    assert c.shape == (codec.slots, codec.subspaces) and c.dtype == np.uint8
    assert np.array_equal(codec.reconstruct(c), x)
    assert f.action(1, 7) == run["actions"][starts[1] + 7]
    assert "episodes" in repr(f)


def test_negative_and_bounds(f):
    assert np.array_equal(f[-1, -1], f[len(f) - 1, f.episodes[-1] - 1])
    for key in [(len(f), 0), (0, f.episodes[0]), (-len(f) - 1, 0), (0, -f.episodes[0] - 1)]:
        with pytest.raises(IndexError):
            f[key]
    with pytest.raises(IndexError):
        f.episode(len(f))
    with pytest.raises(IndexError):
        f[0, 1, 2]


def test_episode(f, codec, run):
    ep = f.episode(3)
    a, b = run["episode_start"][3], run["episode_start"][4]
    assert len(ep) == b - a
    assert np.array_equal(ep.actions[1:], run["actions"][a + 1 : b])
    assert ep.codes.shape == (b - a, codec.slots, codec.subspaces)
    assert ep.obs.shape == (b - a, codec.slots, codec.dim)
    assert ep.meta == {"episode": 3, "task": "walk"}
    for t in (0, 15, 16, 59):
        assert np.array_equal(ep.codes[t], f.codes(3, t))
        assert np.array_equal(ep.obs[t], f[3, t])
    assert np.array_equal(f[3].codes, ep.codes)
    assert [e.meta["episode"] for e in f[1:3]] == [1, 2]


def test_slices(f):
    ep = f.episode(2)
    assert np.array_equal(f[2, 5:40], ep.obs[5:40])
    assert np.array_equal(f[2, ::7], ep.obs[::7])
    assert np.array_equal(f[2, -3:], ep.obs[-3:])
    assert f[2, 10:10].shape == (0,) + ep.obs.shape[1:]
    part = f.read(2, 20, 30, obs=False)
    assert part.obs is None and np.array_equal(part.codes, ep.codes[20:30]) and part.meta is None
    assert np.array_equal(part.actions, ep.actions[20:30])


def test_iteration(f, path, codec):
    eps = list(f)
    assert len(eps) == len(f)
    dec = wmzip.decode(path, codec)
    for a, b in zip(eps, dec):
        assert np.array_equal(a.codes, b.codes) and np.array_equal(a.obs, b.obs) and a.meta == b.meta


def test_out_buffers(f, codec):
    out = np.empty((codec.slots, codec.subspaces), codec.code_dtype)
    assert f.codes(0, 3, out=out) is out
    assert np.array_equal(out, f.codes(0, 3))
    obs = np.empty((codec.slots, codec.dim), np.float32)
    assert f.obs(0, 3, out=obs) is obs
    with pytest.raises(wmzip.InputError):
        f.codes(0, 3, out=np.empty((codec.slots, codec.subspaces), np.uint16))
    with pytest.raises(wmzip.InputError):
        f.obs(0, 3, out=np.empty(5, np.float32))


def test_info(f, codec):
    info = f.info()
    assert info.episodes == len(f) and info.states == f.states
    assert info.lossless and info.lam == float("inf") and info.levels == ()
    assert info.model_id == codec.model_id and not info.embedded
    assert info.retained == f.states * codec.slots * codec.subspaces
    assert 0 < info.bits_per_state < codec.slots * codec.subspaces * 6
    assert info.distortion.source_slots == f.states * codec.slots
    assert 0 < info.distortion.source < 0.05 and info.distortion.retention == 0
    f.verify()


def test_concurrent_reads(f, codec):
    """Reads from several threads at once give what reads one at a time
    give."""
    rng = np.random.default_rng(3)
    keys = [(int(e), int(rng.integers(f.episodes[e]))) for e in rng.integers(len(f), size=200)]
    want = [f.codes(e, t) for e, t in keys]
    got = [None] * len(keys)

    def work(part):
        for i in part:
            got[i] = f.codes(*keys[i])

    threads = [threading.Thread(target=work, args=(range(k, len(keys), 4),)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


def test_close(path, codec):
    f = wmzip.open(path, codec)
    f.close()
    f.close()  # twice is fine
    assert f.closed and "closed" in repr(f)
    for call in (lambda: f[0, 0], lambda: f.episode(0), f.info, f.verify, lambda: f.meta(0)):
        with pytest.raises(wmzip.ClosedError):
            call()
    with wmzip.open(path, codec) as g:
        pass
    assert g.closed


def test_close_while_reading(path, codec):
    """Closing a file other threads read ends their reads with ClosedError
    or their result, never a crash."""
    f = wmzip.open(path, codec)
    errors = []

    def work():
        for i in range(300):
            try:
                f.codes(i % len(f), i % 50)
            except wmzip.ClosedError:
                errors.append(i)
                return

    ts = [threading.Thread(target=work) for _ in range(3)]
    for t in ts:
        t.start()
    f.close()
    for t in ts:
        t.join()


@pytest.mark.parametrize("which", ["codec", "gated_codec"], ids=["family", "gated"])
def test_embedded(request, run, tmp_path, which):
    """A file embeds the model that wrote it: of a family's lossless file,
    its finest member (the family's model ID)."""
    codec = request.getfixturevalue(which)
    p = tmp_path / "e.wmz"
    data, actions = episodes_of(run)[0]
    with wmzip.Writer(p, codec, embed_model=True) as w:
        w.write_episode(data, actions)
    with wmzip.open(p) as f, wmzip.open(p, codec) as g:
        assert f.codec == codec.members[-1] and f.codec is not codec and f.codec.model_id == codec.model_id
        assert g.codec is codec
        assert f.info().embedded and f.info().model_bytes >= len(bytes(f.codec))
        assert np.array_equal(f[0, 5], g[0, 5])


def test_codes_codec(codes_codec, codes_run, tmp_path):
    """Without a quantizer f[e, t] is the codes, and obs are refused."""
    p = tmp_path / "c.wmz"
    wmzip.encode(p, codes_codec, codes_run)
    with wmzip.open(p, codes_codec) as f:
        assert np.array_equal(f[0, 3], codes_run["codes"][3])
        assert f.episode(0).obs is None
        with pytest.raises(wmzip.InputError, match="quantizer"):
            f.obs(0, 3)
        with pytest.raises(wmzip.InputError, match="quantizer"):
            f.read(0, obs=True)
