"""Bit-exactness against the command line (issue 28's first bar): a file
written from Python has the bytes `wmzip encode` writes of the same
trajectory, and decoding it from Python gives exactly what `wmzip decode`
gives, codes and observations, lossless and lossy."""

from __future__ import annotations

import math

import numpy as np
import pytest

import wmzip
from conftest import episodes_of, load

# (Writer options, the same as `wmzip encode` flags): lossless, and lossy
# at targets where, on these runs, the gate leaves out part of the codes
# (the seeds' configuration) or a family writes with a coarser member, or
# changes values (coding by rate and distortion).
MODES = [
    pytest.param({}, [], id="lossless"),
    pytest.param({"lam": 22}, ["--lambda", "22"], id="lambda"),
    pytest.param({"distortion": 0.1}, ["--distortion", "0.1"], id="distortion"),
    pytest.param({"source_distortion": 0.2}, ["--source-distortion", "0.2"], id="source-distortion"),
    pytest.param({"keyframe": 16, "embed_model": True}, ["--keyframe", "16", "--embed-model"], id="keyframe-embedded"),
]
CODE_MODES = [
    pytest.param({}, [], id="lossless"),
    pytest.param({"lam": 8}, ["--lambda", "8"], id="lambda"),
    pytest.param({"distortion": 0.02}, ["--distortion", "0.02"], id="distortion"),
]
LOSSY = ("lam", "distortion", "source_distortion")


def write(path, codec, run, key="obs", **opts):
    with wmzip.Writer(path, codec, **opts) as w:
        for data, actions in episodes_of(run, key):
            w.write_episode(data, actions)
    return w.account()


def same_as_cli(cli, path, model, want_obs, tmp_path):
    """Decodes path from Python and with `wmzip decode`: they must agree
    bit for bit, whole and one state at random."""
    out = tmp_path / "cli.npz"
    cli("decode", "-q", "-m", model, "-o", out, path)
    ref = load(out)
    codec = wmzip.Codec.load(model)
    eps = wmzip.decode(path, codec)
    codes = np.concatenate([e.codes for e in eps])
    assert codes.dtype == ref["codes"].dtype
    assert np.array_equal(codes, ref["codes"])
    assert np.array_equal(np.concatenate([e.actions for e in eps]), ref["actions"])
    assert np.array_equal(np.cumsum([0] + [len(e) for e in eps])[:-1], ref["episode_start"])
    if want_obs:
        obs = np.concatenate([e.obs for e in eps])
        assert obs.dtype == ref["obs"].dtype == np.float32
        assert np.array_equal(obs.view(np.uint32), ref["obs"].view(np.uint32))
    else:
        assert "obs" not in ref and all(e.obs is None for e in eps)
    one = tmp_path / "one.npz"
    cli("decode", "-q", "-m", model, "--episode", 2, "--step", 17, "-o", one, path)
    ref1 = load(one)
    with wmzip.open(path, codec) as f:
        assert np.array_equal(f.codes(2, 17), ref1["codes"][0])
        assert f.action(2, 17) == ref1["actions"][0]
        if want_obs:
            assert np.array_equal(f[2, 17].view(np.uint32), ref1["obs"][0].view(np.uint32))
            assert np.array_equal(f.obs(2, 17), f[2, 17])
        else:
            assert np.array_equal(f[2, 17], ref1["codes"][0])


@pytest.mark.parametrize("which", ["codec", "gated_codec"], ids=["family", "gated"])
@pytest.mark.parametrize("opts,flags", MODES)
def test_obs(cli, request, run, run_npz, tmp_path, which, opts, flags):
    codec = request.getfixturevalue(which)
    model = tmp_path / "m.wmm"
    codec.save(model)
    py, ref = tmp_path / "py.wmz", tmp_path / "cli.wmz"
    acct = write(py, codec, run, **opts)
    cli("encode", "-q", "-m", model, *flags, "-o", ref, run_npz)
    assert py.read_bytes() == ref.read_bytes()
    assert acct.bytes == py.stat().st_size
    assert acct.states == len(run["actions"])
    same_as_cli(cli, py, model, True, tmp_path)
    with wmzip.open(py, codec) as f:
        info, used = f.info(), f.codec
    lossy = any(k in opts for k in LOSSY)
    if opts.get("source_distortion"):
        assert 0 < info.distortion.source <= opts["source_distortion"]
        assert acct.search is not None
    if opts.get("distortion"):
        assert acct.search is not None and acct.search.distortion <= opts["distortion"]
    if codec.has_gate:
        assert used is codec
        if opts.get("source_distortion"):
            assert acct.search.lam < np.inf
        if opts.get("distortion"):
            assert info.distortion.retention <= opts["distortion"]
        assert info.lossless == (not lossy) and info.mode == ("retention" if lossy else "lossless")
        assert (info.retained < info.states * codec.slots * codec.subspaces) == lossy
        return
    # A family: every coordinate coded, by one member, named by the file.
    assert used in codec.members or used is codec
    assert info.model_id == used.model_id and math.isinf(info.lam) and info.levels == ()
    assert info.retained == info.states * used.slots * used.subspaces
    if not lossy:
        assert used is codec and info.lossless
        return
    # Lossy: a coarser member's own codes, or values it changed, or the
    # lossless file itself when nothing lossy is smaller (a distortion
    # target never writes more than the lossless file).
    assert info.mode in ("lossless", "rate-distortion") and (info.mode == "rate-distortion") == (acct.wrong > 0)
    lossless = write(tmp_path / "lossless.wmz", codec, run)
    if used.model_id == codec.model_id and info.mode == "lossless":
        assert py.stat().st_size == lossless.bytes
        return
    assert info.distortion.source > lossless.report.source  # it lost more than the finest quantizer


@pytest.mark.parametrize("which", ["codes_codec", "wide_codec"])
@pytest.mark.parametrize("opts,flags", CODE_MODES)
def test_codes(cli, request, tmp_path, which, opts, flags):
    codec = request.getfixturevalue(which)
    r = request.getfixturevalue("codes_run" if which == "codes_codec" else "wide_run")
    assert codec.code_dtype == (np.uint8 if which == "codes_codec" else np.uint16)
    npz = tmp_path / "codes.npz"
    np.savez(npz, codes=r["codes"], actions=r["actions"], episode_start=r["episode_start"])
    model = tmp_path / "m.wmm"
    codec.save(model)
    py, ref = tmp_path / "py.wmz", tmp_path / "cli.wmz"
    write(py, codec, r, key="codes", **opts)
    cli("encode", "-q", "-m", model, *flags, "-o", ref, npz)
    assert py.read_bytes() == ref.read_bytes()
    same_as_cli(cli, py, model, False, tmp_path)
    info = wmzip.open(py, codec).info()
    assert (info.retained < info.states * codec.slots * codec.subspaces) == bool(opts)
    if not opts:
        eps = wmzip.decode(py, codec)
        assert np.array_equal(np.concatenate([e.codes for e in eps]), r["codes"])


@pytest.mark.parametrize("which", ["codec", "gated_codec"], ids=["family", "gated"])
def test_cli_file_read_from_python(cli, request, run_npz, tmp_path, which):
    """A file the command line wrote (embedding its model) reads from
    Python without the codec: of a family, a lossy file embeds the member
    that wrote it, which a File given the family finds too."""
    codec = request.getfixturevalue(which)
    model, path = tmp_path / "m.wmm", tmp_path / "cli.wmz"
    codec.save(model)
    cli("encode", "-q", "-m", model, "--embed-model", "--distortion", "0.05", "-o", path, run_npz)
    with wmzip.open(path) as f, wmzip.open(path, codec) as g:
        info = f.info()
        assert info.embedded and f.codec.model_id == info.model_id and g.codec == f.codec
        assert f.codec == codec if codec.has_gate else f.codec in codec.members
        assert info.model_bytes >= len(bytes(f.codec))
        assert np.array_equal(f.read(3).codes, g.read(3).codes)
        f.verify()
    same_as_cli(cli, path, model, True, tmp_path)


def test_train_as_cli(cli, codec, run_npz, tmp_path):
    """Codec.train gives the model `wmzip train` gives of the same arrays
    and options, byte for byte."""
    model = tmp_path / "cli.wmm"
    cli("train", "-q", "-o", model, run_npz)
    assert bytes(codec) == model.read_bytes()
    r = np.load(run_npz)
    c2 = wmzip.Codec.train(r["obs"], actions=r["actions"], episode_start=r["episode_start"], subspaces=16,
                           centroids=32, gate_holdout=2, max_ref=100)
    cli("train", "-q", "--subspaces", 16, "--centroids", 32, "--gate-holdout", 2, "--max-ref", 100, "-o", model, run_npz)
    assert bytes(c2) == model.read_bytes()
    c3 = wmzip.Codec.train(r["obs"], actions=r["actions"], episode_start=r["episode_start"], subspaces=16,
                           centroids=32, level="copy", gate_for="search")
    cli("train", "-q", "--subspaces", 16, "--centroids", 32, "--level", "copy", "--gate-for", "search", "-o", model, run_npz)
    assert bytes(c3) == model.read_bytes() and bytes(c3) != bytes(c2)


def test_lossless_codes_exact(codec, run, tmp_path):
    """Lossless: the codes come back as the codec quantized them, and the
    observations as its reconstruction of those."""
    path = tmp_path / "l.wmz"
    write(path, codec, run)
    eps = wmzip.decode(path, codec)
    codes = codec.quantize(run["obs"])
    assert np.array_equal(np.concatenate([e.codes for e in eps]), codes)
    assert np.array_equal(np.concatenate([e.obs for e in eps]), codec.reconstruct(codes))
