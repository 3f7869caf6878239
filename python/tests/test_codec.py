"""Codec: training, loading and saving, quantizing; families and their
members."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import wmzip


def test_attributes(codec, gated_codec, codes_codec, wide_codec):
    # The default, a family: the shape and model ID of its finest member,
    # which writes its lossless files; no gate.
    fine = codec.members[-1]
    assert (codec.slots, codec.alphabet, codec.dim) == (4, 256, 64) and 1 <= codec.subspaces <= 32
    assert codec.geometry == (4, codec.subspaces, 256) == fine.geometry
    assert fine.model_id == codec.model_id and len(codec.model_id) == 32
    assert not codec.has_gate and codec.has_quantizer
    d, cos = codec.quantizer_quality
    assert 0 < d < 0.05 and 0.95 < cos <= 1 and codec.quantizer_quality == fine.quantizer_quality
    # The seeds' configuration: one quantizer of 32 × 64, a gate.
    assert (gated_codec.slots, gated_codec.subspaces, gated_codec.alphabet, gated_codec.dim) == (4, 32, 64, 64)
    assert gated_codec.has_gate and gated_codec.has_quantizer and len(gated_codec.model_id) == 32
    assert gated_codec.geometry == gated_codec.model_geometry == (4, 32, 64)
    d, cos = gated_codec.quantizer_quality
    assert 0 < d < 0.05 and 0.95 < cos <= 1
    assert codes_codec.dim is None and not codes_codec.has_quantizer and codes_codec.quantizer_quality is None
    assert (codes_codec.slots, codes_codec.subspaces) == (32, 32)
    assert gated_codec.code_dtype == codec.code_dtype == np.uint8
    assert wide_codec.code_dtype == np.uint16 and wide_codec.alphabet == 512
    assert "S=4" in repr(codec) and f"{len(codec.members)} members" in repr(codec)
    assert "gate" in repr(gated_codec) and "members" not in repr(gated_codec) and "codes only" in repr(codes_codec)
    with pytest.raises(TypeError):
        wmzip.Codec()


def test_members(codec, gated_codec, codes_codec, run):
    """A family's members, coarsest first: quantizers of 256 centroids and
    1 to 32 subspaces, each a codec of its own model; one model's codec is
    its own only member."""
    ms = codec.members
    assert len(ms) >= 2 and ms is not codec.members  # the caller's list
    assert [m.subspaces for m in ms] == sorted({m.subspaces for m in ms})  # distinct, coarse to fine
    assert len({m.model_id for m in ms}) == len(ms)
    obs = run["obs"][:50]
    errs = []
    for m in ms:
        assert (m.slots, m.alphabet, m.dim) == (4, 256, 64) and 1 <= m.subspaces <= 32
        assert not m.has_gate and m.members == [m] and m.members[0] is m
        # The world model may see slot vectors together: the same codes.
        g = m.model_geometry
        assert g.slots * g.subspaces == m.slots * m.subspaces and g.alphabet == m.alphabet
        assert m.slots % g.slots == 0
        codes = m.quantize(obs)
        assert codes.shape == (50, 4, m.subspaces) and codes.dtype == np.uint8
        rec = m.reconstruct(codes)
        errs.append(float((((rec - obs) ** 2).sum(-1) / (obs**2).sum(-1)).mean()))
        assert wmzip.Codec.from_bytes(bytes(m)) == m
    assert errs == sorted(errs, reverse=True)  # finer members lose less
    assert np.array_equal(codec.quantize(obs), ms[-1].quantize(obs))  # a family quantizes with its finest
    # A family is not its finest member: they share a model ID, not bytes.
    assert ms[-1] != codec and bytes(ms[-1]) != bytes(codec) and ms[-1].model_id == codec.model_id
    c2 = pickle.loads(pickle.dumps(codec))
    assert c2 == codec and c2.members == ms and [m.calibration for m in c2.members] == [m.calibration for m in ms]
    assert gated_codec.members == [gated_codec] and codes_codec.members == [codes_codec]


def test_calibration(codec, gated_codec, codes_codec):
    """Each member's points of λ, distortion and bits a state on held-out
    episodes; none for a bundle, a single quantizer or codes."""
    assert codec.calibration == [] and gated_codec.calibration == [] and codes_codec.calibration == []
    firsts = []
    for m in codec.members:
        cal = m.calibration
        assert len(cal) >= 2 and all(isinstance(p, wmzip.RatePoint) for p in cal)
        lam, d, bits = cal[0]  # a RatePoint is a tuple
        assert lam == cal[0].lam == math.inf  # the quantizer's own codes first
        lams = [p.lam for p in cal]
        assert lams == sorted(set(lams), reverse=True) and all(0 < x for x in lams)
        assert all(0 < p.distortion < 1 and p.bits_per_state > 0 for p in cal)
        assert min(p.bits_per_state for p in cal) < cal[0].bits_per_state  # a smaller λ saves bits
        firsts.append(cal[0])
    # Coarse to fine: each member's own codes lose less and cost more.
    assert [p.distortion for p in firsts] == sorted((p.distortion for p in firsts), reverse=True)
    assert [p.bits_per_state for p in firsts] == sorted(p.bits_per_state for p in firsts)
    assert codec.members[0].calibration is not codec.members[0].calibration  # the caller's list


def test_save_load(codec, tmp_path):
    p = tmp_path / "m.wmm"
    codec.save(p)
    c = wmzip.Codec.load(p)
    assert c == codec and hash(c) == hash(codec) and bytes(c) == p.read_bytes()
    assert wmzip.Codec.from_bytes(p.read_bytes()) == codec
    c2 = pickle.loads(pickle.dumps(codec))
    assert c2 == codec and c2.dim == codec.dim
    with pytest.raises(FileNotFoundError) as e:
        wmzip.Codec.load(tmp_path / "none.wmm")
    assert e.value.filename == str(tmp_path / "none.wmm")
    with pytest.raises(wmzip.CorruptError):
        wmzip.Codec.from_bytes(b"\x00" * 100)
    with pytest.raises(wmzip.CorruptError):
        wmzip.Codec.from_bytes(p.read_bytes()[:-10])


def test_quantize_shapes(codec, run):
    obs = run["obs"][:10]
    codes = codec.quantize(obs)
    assert codes.shape == (10, 4, 32) and codes.dtype == np.uint8
    assert np.array_equal(codec.quantize(obs[3]), codes[3])
    assert np.array_equal(codec.quantize(obs.reshape(10, -1)), codes)
    assert np.array_equal(codec.quantize(obs.reshape(2, 5, 4, 64)), codes.reshape(2, 5, 4, 32))
    assert np.array_equal(codec.quantize(obs.astype(np.float64)), codes)
    assert np.array_equal(codec.quantize(np.asfortranarray(obs[:, 0, :]).reshape(10, 1, 64).repeat(4, 1)),
                          codec.quantize(np.ascontiguousarray(obs[:, 0:1, :].repeat(4, 1))))
    rec = codec.reconstruct(codes)
    assert rec.shape == obs.shape and rec.dtype == np.float32
    assert np.array_equal(codec.reconstruct(codes.astype(np.uint16)), rec)
    assert np.array_equal(codec.reconstruct(codes.astype(int).tolist()), rec)
    err = ((rec - obs) ** 2).sum(-1) / (obs**2).sum(-1)
    assert err.mean() < 0.05
    assert np.array_equal(codec.quantize(rec), codes)  # a reconstruction quantizes to its codes
    out = np.empty_like(codes)
    assert codec.quantize(obs, out=out) is out
    assert codec.quantize(np.zeros((0, 4, 64), np.float32)).shape == (0, 4, 32)


def test_quantize_errors(codec, gated_codec, codes_codec):
    with pytest.raises(wmzip.InputError, match="shape"):
        codec.quantize(np.zeros((3, 5, 64), np.float32))
    with pytest.raises(wmzip.InputError, match="finite|NaN"):
        codec.quantize(np.full((4, 64), np.nan, np.float32))
    with pytest.raises(wmzip.InputError, match="dtype"):
        codec.quantize(np.zeros((4, 64), np.int32))
    with pytest.raises(wmzip.InputError):
        gated_codec.reconstruct(np.full((4, 32), 64, np.uint8))  # a code not below K (64)
    with pytest.raises(wmzip.InputError):
        codec.reconstruct(np.full((4, codec.subspaces), codec.alphabet, np.uint16))  # nor below K (256)
    coarse = codec.members[0]
    with pytest.raises(wmzip.InputError):
        coarse.reconstruct(np.zeros((4, codec.subspaces), np.uint8))  # the finest's shape, not the member's
    with pytest.raises(wmzip.InputError):
        codec.reconstruct(np.full((4, 32), -1))
    with pytest.raises(wmzip.InputError):
        codec.quantize(np.zeros((4, 64), np.float32), out=np.empty((4, 32), np.uint16))
    with pytest.raises(wmzip.InputError, match="quantizer"):
        codes_codec.quantize(np.zeros((32, 64), np.float32))
    with pytest.raises(wmzip.InputError, match="quantizer"):
        codes_codec.reconstruct(np.zeros((32, 32), np.uint8))


def test_train_inputs(run, codes_run):
    obs, acts, starts = run["obs"][:240], run["actions"][:240], run["episode_start"][:4]
    a = wmzip.Codec.train(obs, actions=acts, episode_start=starts, subspaces=8, centroids=16)
    assert (a.subspaces, a.alphabet) == (8, 16)
    b = wmzip.Codec.train(obs.reshape(240, -1)[:, :64], subspaces=8, centroids=16, gate_holdout=0)
    assert b.slots == 1 and not b.has_gate
    c = wmzip.Codec.train(obs, codes=codes_run["codes"][:240, :4], actions=acts, episode_start=starts, codes_only=True)
    assert c.dim is None and c.slots == 4
    for kw, msg in [
        ({}, "obs or codes"),
        ({"obs": obs, "actions": acts[:10]}, "actions"),
        ({"obs": obs, "episode_start": [5, 0]}, "episode"),
        ({"obs": obs, "subspaces": 7}, "subspace|divid"),
        ({"obs": obs, "gate_bins": "median"}, "gate_bins"),
        ({"obs": obs, "gate_for": "speed"}, "gate_for"),
        ({"obs": obs, "level": "slow"}, "level"),
        ({"obs": obs[:, :, :5].astype(np.int16)}, "dtype"),
        ({"obs": obs, "codes": codes_run["codes"][:10]}, "codes"),
    ]:
        with pytest.raises(wmzip.InputError, match=msg):
            wmzip.Codec.train(**kw)
    bad = obs.copy()
    bad[100, 2, 3] = np.inf
    with pytest.raises(wmzip.InputError, match="finite|Inf|inf"):
        wmzip.Codec.train(bad)
