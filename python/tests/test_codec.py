"""Codec: training, loading and saving, quantizing."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import wmzip


def test_attributes(codec, codes_codec, wide_codec):
    assert (codec.slots, codec.subspaces, codec.alphabet, codec.dim) == (4, 32, 64, 64)
    assert codec.has_gate and codec.has_quantizer and len(codec.model_id) == 32
    d, cos = codec.quantizer_quality
    assert 0 < d < 0.05 and 0.95 < cos <= 1
    assert codes_codec.dim is None and not codes_codec.has_quantizer and codes_codec.quantizer_quality is None
    assert (codes_codec.slots, codes_codec.subspaces) == (32, 32)
    assert codec.code_dtype == np.uint8 and wide_codec.code_dtype == np.uint16 and wide_codec.alphabet == 512
    assert "S=4" in repr(codec) and "codes only" in repr(codes_codec)
    with pytest.raises(TypeError):
        wmzip.Codec()


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


def test_quantize_errors(codec, codes_codec):
    with pytest.raises(wmzip.InputError, match="shape"):
        codec.quantize(np.zeros((3, 5, 64), np.float32))
    with pytest.raises(wmzip.InputError, match="finite|NaN"):
        codec.quantize(np.full((4, 64), np.nan, np.float32))
    with pytest.raises(wmzip.InputError, match="dtype"):
        codec.quantize(np.zeros((4, 64), np.int32))
    with pytest.raises(wmzip.InputError):
        codec.reconstruct(np.full((4, 32), 64, np.uint8))  # a code not below K
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
        ({"obs": obs, "actions": np.full(240, -5)}, "action"),
        ({"obs": obs[:, :, :5].astype(np.int16)}, "dtype"),
        ({"obs": obs, "codes": codes_run["codes"][:10]}, "codes"),
    ]:
        with pytest.raises(wmzip.InputError, match=msg):
            wmzip.Codec.train(**kw)
    bad = obs.copy()
    bad[100, 2, 3] = np.inf
    with pytest.raises(wmzip.InputError, match="finite|Inf|inf"):
        wmzip.Codec.train(bad)
