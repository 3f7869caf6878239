"""Writer and encode: the ways of writing, the account, misuse."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

import wmzip
from conftest import episodes_of


def test_state_by_state_is_episode_at_once(codec, run, tmp_path):
    """write_state, write_states and write_episode write the same bytes."""
    eps = episodes_of(run)[:3]
    a, b, c = tmp_path / "a.wmz", tmp_path / "b.wmz", tmp_path / "c.wmz"
    with wmzip.Writer(a, codec) as w:
        for data, actions in eps:
            w.write_episode(data, actions)
    with wmzip.Writer(b, codec) as w:
        for data, actions in eps:
            w.begin_episode()
            for x, act in zip(data, actions):
                w.write_state(x, act)
    with wmzip.Writer(c, codec, threads=1) as w:
        for data, actions in eps:
            w.begin_episode()
            w.write_states(data[:10], actions[:10])
            w.write_states(data[10:].reshape(len(data) - 10, -1), actions[10:])
    assert a.read_bytes() == b.read_bytes() == c.read_bytes()


def test_codes_and_dtypes(codes_codec, codes_run, tmp_path):
    """Codes are written from uint8, uint16 or other integers alike."""
    codes, actions = episodes_of(codes_run, "codes")[0]
    paths = []
    for conv in (lambda c: c, lambda c: c.astype(np.uint16), lambda c: c.astype(np.int64), lambda c: c.tolist()):
        p = tmp_path / f"{len(paths)}.wmz"
        with wmzip.Writer(p, codes_codec) as w:
            w.write_episode(conv(codes), actions.astype(np.int32))
        paths.append(p)
    assert len({p.read_bytes() for p in paths}) == 1
    with wmzip.open(paths[0], codes_codec) as f:
        assert np.array_equal(f.episode(0).codes, codes)


def test_float_dtypes(codec, run, tmp_path):
    data, actions = episodes_of(run)[0]
    a, b = tmp_path / "a.wmz", tmp_path / "b.wmz"
    wmzip.encode(a, codec, [(data, actions)])
    wmzip.encode(b, codec, [(data.astype(np.float64), actions)])
    assert a.read_bytes() == b.read_bytes()


def test_account(codec, run, tmp_path):
    p = tmp_path / "a.wmz"
    with wmzip.Writer(p, codec, keyframe=16) as w:
        data, actions = episodes_of(run)[0]
        w.write_episode(data, actions)
        w.flush()
        mid = w.account()
        assert 0 < mid.states <= len(data) and mid.bytes > 0
    acct = w.close()  # again: the same account
    assert acct == w.account()
    assert acct.states == len(data) and acct.bytes == p.stat().st_size
    assert acct.retained == len(data) * codec.slots * codec.subspaces and acct.wrong == 0
    assert acct.report.source_slots == len(data) * codec.slots
    assert math.isclose(acct.report.source, acct.quantizer_distortion)
    assert acct.search is None


@pytest.mark.parametrize("which", ["codec", "gated_codec"], ids=["family", "gated"])
def test_source_distortion(request, run, tmp_path, which):
    """A target against the source floats: the file holds at most it, and
    less storage than lossless; a target below what the (finest)
    quantizer alone loses is refused."""
    codec = request.getfixturevalue(which)
    p, q = tmp_path / "t.wmz", tmp_path / "l.wmz"
    acct = wmzip.encode(p, codec, run, source_distortion=0.2)
    lossless = wmzip.encode(q, codec, run)
    assert acct.bytes < lossless.bytes
    # The quantizer that wrote the file loses at least its own error (the
    # two are summed apart: equal, they may differ in the last bits).
    assert acct.quantizer_distortion * (1 - 1e-12) <= acct.report.source <= 0.2
    assert lossless.quantizer_distortion <= acct.quantizer_distortion
    assert acct.search is not None
    if codec.has_gate:  # the search measures what retention lost
        assert acct.search.distortion <= 0.2 - acct.quantizer_distortion + 1e-9
    else:  # coded by rate and distortion: the whole error against the floats
        assert acct.search.distortion == pytest.approx(acct.report.source, rel=1e-9)
    with wmzip.open(p, codec) as f:
        assert f.info().distortion.source == pytest.approx(acct.report.source)
        assert f.codec == codec if codec.has_gate else f.codec in codec.members
    with pytest.raises(wmzip.InputError, match="quantizer alone"):
        wmzip.encode(p, codec, run, source_distortion=lossless.quantizer_distortion / 2)
    assert not p.exists()  # a failed encode leaves no file


def write_levels(p, codec, data, actions):
    with wmzip.Writer(p, codec, levels=[22, math.inf], keyframe=16) as w:
        w.begin_episode()
        w.write_states(data[:32], actions[:32])
        w.set_level(1)
        w.write_states(data[32:], actions[32:])
        with pytest.raises(wmzip.InputError):
            w.set_level(2)


def test_levels(gated_codec, run, tmp_path):
    """A gate's levels: the file records them."""
    p = tmp_path / "lv.wmz"
    data, actions = episodes_of(run)[0]
    write_levels(p, gated_codec, data, actions)
    with wmzip.open(p, gated_codec) as f:
        info = f.info()
        assert info.levels == (22.0, math.inf) and info.mode == "retention"
        assert np.array_equal(f.read(0, 32).codes, gated_codec.quantize(data[32:]))  # level inf: lossless


def test_levels_family(codec, run, tmp_path):
    """A family's levels are coded by rate and distortion, by one member:
    the file records none; at λ inf the states are that member's own
    codes, at 22 some values change."""
    p = tmp_path / "lv.wmz"
    data, actions = episodes_of(run)[0]
    write_levels(p, codec, data, actions)
    with wmzip.open(p, codec) as f:
        info, m = f.info(), f.codec
        assert m in codec.members and info.model_id == m.model_id
        assert info.levels == () and info.mode == "rate-distortion"
        codes, own = f.read(0).codes, m.quantize(data)
        assert codes is not None and codes.shape == (len(data), 4, m.subspaces)
        assert np.array_equal(codes[32:], own[32:])
        assert not np.array_equal(codes[:32], own[:32])


def test_meta(codec, run, tmp_path):
    p = tmp_path / "m.wmz"
    data, actions = episodes_of(run)[0]
    with wmzip.Writer(p, codec) as w:
        w.write_episode(data[:5], actions[:5], meta={"url": "https://example.org", "n": [1, 2]})
        w.write_episode(data[:5], actions[:5], meta='{"raw": true}')
        w.write_episode(data[:5], actions[:5])
        with pytest.raises(wmzip.InputError):
            w.begin_episode(meta=b"not json")
    with wmzip.open(p, codec) as f:
        assert [f.meta(e) for e in range(3)] == [{"url": "https://example.org", "n": [1, 2]}, {"raw": True}, None]


def test_context_manager_on_error(codec, run, tmp_path):
    """Leaving the block by an exception completes the file with what was
    written, leaves none when nothing was; abort discards it."""
    p = tmp_path / "x.wmz"
    data, actions = episodes_of(run)[0]
    with pytest.raises(RuntimeError):
        with wmzip.Writer(p, codec) as w:
            w.write_episode(data, actions)
            raise RuntimeError("the agent crashed")
    with wmzip.open(p, codec) as f:
        assert f.episodes == (len(data),)
    q = tmp_path / "none.wmz"
    with pytest.raises(wmzip.InputError):
        with wmzip.Writer(q, codec) as w:
            w.write_episode(data[..., :1], actions)  # a shape the codec refuses
    assert not q.exists() and w.closed
    w = wmzip.Writer(p, codec)
    w.write_episode(data, actions)
    w.abort()
    w.abort()
    assert not p.exists() and w.closed
    with pytest.raises(wmzip.ClosedError):
        w.write_episode(data, actions)
    with pytest.raises(wmzip.ClosedError):
        w.close()


def test_misuse(codec, codes_codec, run, codes_run, tmp_path):
    p = tmp_path / "bad.wmz"
    p.write_bytes(b"keep me")
    data, actions = episodes_of(run)[0]
    for opts in ({"keyframe": 0}, {"lam": -1}, {"distortion": 1.5}, {"lam": 2, "distortion": 0.1}, {"levels": []}):
        with pytest.raises(wmzip.InputError):
            wmzip.Writer(p, codec, **opts)
        assert p.read_bytes() == b"keep me"  # invalid options touch no file
    # Without a gate, a codec of codes only has no lossy mode; one of a
    # quantizer codes them by rate and distortion.
    r = codes_run
    codes_nogate = wmzip.Codec.train(codes=r["codes"][:120], actions=r["actions"][:120], gate_holdout=0)
    assert not codes_nogate.has_gate
    for opts in ({"distortion": 0.1}, {"lam": 8}, {"levels": [8, math.inf]}):
        with pytest.raises(wmzip.InputError, match="gate"):
            wmzip.Writer(p, codes_nogate, **opts)
        assert p.read_bytes() == b"keep me"
    nogate = wmzip.Codec.train(run["obs"][:120], actions=run["actions"][:120], quantizer="single", gate_holdout=0)
    assert not nogate.has_gate and nogate.members == [nogate]
    rd = tmp_path / "rd.wmz"
    acct = wmzip.encode(rd, nogate, episodes_of(run)[:2], distortion=0.1)
    assert acct.search is not None and acct.search.distortion <= 0.1
    with wmzip.open(rd, nogate) as f:
        assert f.codec is nogate and f.info().retained == f.states * nogate.slots * nogate.subspaces
    with pytest.raises(wmzip.InputError, match="quantizer"):
        wmzip.Writer(p, codes_codec, source_distortion=0.1)
    with pytest.raises(FileNotFoundError):
        wmzip.Writer(tmp_path / "no" / "such" / "dir.wmz", codec)
    with wmzip.Writer(p, codec) as w:
        with pytest.raises(wmzip.InputError, match="episode"):
            w.write_state(data[0])  # no episode begun
        w.begin_episode()
        bad = data[:3].copy()
        bad[2, 1, 5] = np.nan
        with pytest.raises(wmzip.InputError, match="finite|NaN"):
            w.write_states(bad, actions[:3])
        with pytest.raises(wmzip.InputError):
            w.write_states(data[:3], actions[:2])
        with pytest.raises(wmzip.InputError):
            w.write_state(data[:2])
        with pytest.raises(wmzip.InputError):
            w.write_state(np.zeros((3, 3), np.float32))
        with pytest.raises(wmzip.InputError):
            w.write_state(np.zeros((codec.slots, codec.subspaces), np.uint16) + codec.alphabet)
        with pytest.raises(wmzip.InputError):
            w.write_state(np.array(["a"] * 4))
        w.write_state(data[0], actions[0])
    with wmzip.open(p, codec) as f:
        assert f.episodes == (1,)  # the refused states wrote nothing
    with pytest.raises(wmzip.ClosedError):
        w.write_state(data[0])
    with pytest.raises(wmzip.InputError, match="quantizer"):
        with wmzip.Writer(p, codes_codec) as w:
            w.write_episode(data, actions)


def test_encode_forms(codec, run, tmp_path):
    """encode takes a trajectory mapping (an np.load of an .npz), Episodes,
    mappings and pairs alike."""
    npz = tmp_path / "r.npz"
    np.savez(npz, **run)
    paths = [tmp_path / f"{i}.wmz" for i in range(4)]
    with np.load(npz) as z:
        wmzip.encode(paths[0], codec, z)
    pairs = episodes_of(run)
    wmzip.encode(paths[1], codec, pairs)
    wmzip.encode(paths[2], codec, [{"obs": d, "actions": a} for d, a in pairs])
    eps = [wmzip.Episode(actions=a, codes=codec.quantize(d)) for d, a in pairs]
    wmzip.encode(paths[3], codec, eps)
    first = paths[0].read_bytes()
    assert all(p.read_bytes() == first for p in paths[1:3])
    # from codes, the same codes: the same bytes but for the source report
    assert np.array_equal(np.concatenate([e.codes for e in wmzip.decode(paths[3], codec)]), codec.quantize(run["obs"]))


def test_writer_del_leaves_incomplete(codec, run, tmp_path):
    p = tmp_path / "d.wmz"
    w = wmzip.Writer(p, codec)
    w.write_episode(*episodes_of(run)[0])
    with pytest.warns(ResourceWarning):
        w.__del__()
        w._h = 0
    assert p.exists()
    with pytest.raises(wmzip.Error):
        wmzip.open(p, codec).verify()
