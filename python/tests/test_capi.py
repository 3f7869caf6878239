"""The C interface itself (wmzip.h), called through ctypes as any C
caller would, and a C program compiled against the header."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
from ctypes import byref, c_int, c_int64, c_size_t, c_uint64

import numpy as np
import pytest

import wmzip
from conftest import ROOT, episodes_of
from wmzip import _lib

lib = _lib.lib


def test_errmsg_and_codes(codec, tmp_path):
    h = c_uint64()
    assert lib.wmz_codec_load(str(tmp_path / "none").encode(), byref(h)) == -9
    assert b"no such file" in lib.wmz_errmsg()
    assert lib.wmz_codec_load(None, byref(h)) == -1
    assert b"NULL" in lib.wmz_errmsg()
    assert lib.wmz_api_version() == 1


def test_handles(codec, run, tmp_path):
    """Misused handles are errors: 0, unknown, released, of another kind."""
    p = tmp_path / "h.wmz"
    wmzip.encode(p, codec, episodes_of(run)[:1])
    f = c_uint64()
    assert lib.wmz_file_open(str(p).encode(), codec._h, None, byref(f)) == 0
    info = _lib.CodecInfo()
    assert lib.wmz_codec_describe(f.value, byref(info)) == -1  # a file, not a codec
    assert b"is a file, not a codec" in lib.wmz_errmsg()
    assert lib.wmz_file_verify(0) == -1
    assert lib.wmz_file_verify(1 << 60) == -1
    assert lib.wmz_file_close(f.value) == 0
    assert lib.wmz_file_close(f.value) == 0  # twice is fine
    assert lib.wmz_file_verify(f.value) == -7  # released: closed
    assert lib.wmz_codec_free(1 << 60) == -1


def test_buffers(codec, run, tmp_path):
    p = tmp_path / "b.wmz"
    wmzip.encode(p, codec, episodes_of(run)[:2])
    f = c_uint64()
    assert lib.wmz_file_open(str(p).encode(), codec._h, b'{"threads": 1}', byref(f)) == 0
    try:
        n = c_size_t()
        assert lib.wmz_file_info(f.value, None, 0, byref(n)) == -12  # ask for the size
        buf = ctypes.create_string_buffer(n.value + 1)
        assert lib.wmz_file_info(f.value, buf, n.value, byref(n)) == -12  # no room for the NUL
        assert lib.wmz_file_info(f.value, buf, n.value + 1, byref(n)) == 0
        assert json.loads(buf.value)["states"] == 120
        small = np.zeros(10, np.uint8)
        assert lib.wmz_file_state(f.value, 0, 0, None, small.ctypes.data, small.size, 1) == -1
        codes = np.zeros(128, np.uint16)
        assert lib.wmz_file_state(f.value, 0, 0, None, codes.ctypes.data, codes.size, 3) == -1  # width
        assert lib.wmz_file_state(f.value, 0, 0, None, codes.ctypes.data + 1, 127, 2) == -1  # alignment
        assert b"aligned" in lib.wmz_errmsg()
        assert lib.wmz_file_state(f.value, 0, 99, None, codes.ctypes.data, codes.size, 2) == -1
        assert lib.wmz_file_state(f.value, 5, 0, None, codes.ctypes.data, codes.size, 2) == -1
        a = c_int64()
        assert lib.wmz_file_state(f.value, 0, 3, byref(a), codes.ctypes.data, codes.size, 2) == 0
        with wmzip.open(p, codec) as g:
            assert np.array_equal(codes.reshape(4, 32), g.codes(0, 3)) and a.value == g.action(0, 3)
        assert lib.wmz_file_states(f.value, 0, 5, 3, None, None, 0, 1, None, 0) == -1
        assert lib.wmz_file_open(str(p).encode(), codec._h, b'{"thread": 1}', byref(c_uint64())) == -1
        assert b"thread" in lib.wmz_errmsg()
    finally:
        lib.wmz_file_close(f.value)


def test_reader(gated_codec, run, tmp_path):
    """The in-order reader: episodes, states, levels (a gate's: the file
    records them), metadata, the end."""
    codec = gated_codec
    p = tmp_path / "r.wmz"
    eps = episodes_of(run)[:3]
    with wmzip.Writer(p, codec, levels=[22, float("inf")], keyframe=16, embed_model=True) as w:
        for i, (d, a) in enumerate(eps):
            w.begin_episode({"i": i})
            w.set_level(i % 2)
            w.write_states(d, a)
    want = wmzip.decode(p, codec)
    r = c_uint64()
    assert lib.wmz_reader_open(str(p).encode(), 0, None, byref(r)) == 0  # the embedded model
    try:
        c = c_uint64()
        assert lib.wmz_reader_codec(r.value, byref(c)) == 0
        assert wmzip.Codec._wrap(c.value) == codec
        codes = np.zeros((4, 32), np.uint8)
        obs = np.zeros((4, 64), np.float32)
        a, lv = c_int64(), c_int()
        for i, ep in enumerate(want):
            assert lib.wmz_reader_next(r.value) == 0
            meta = _lib.out_bytes(lib.wmz_reader_meta, r.value, text=True)
            assert json.loads(meta) == {"i": i}
            for t in range(len(ep)):
                if t % 2:
                    assert lib.wmz_reader_state(r.value, byref(a), codes.ctypes.data, codes.size, 1) == 0
                    assert np.array_equal(codes, ep.codes[t])
                else:
                    assert lib.wmz_reader_obs(r.value, byref(a), obs.ctypes.data, obs.size) == 0
                    assert np.array_equal(obs, ep.obs[t])
                assert a.value == ep.actions[t]
                assert lib.wmz_reader_level(r.value, byref(lv)) == 0
            assert lv.value in (-1, i % 2)
            assert lib.wmz_reader_state(r.value, None, None, 0, 1) == 1  # WMZ_EOF
        assert lib.wmz_reader_next(r.value) == 1
    finally:
        assert lib.wmz_reader_close(r.value) == 0
    assert lib.wmz_reader_next(r.value) == -7


def test_reader_member(codec, run, tmp_path):
    """A reader given a family finds the member that wrote a lossy file:
    its codec handle is that member, states have its shape, and a file
    coded by rate and distortion has no levels (level 0)."""
    p = tmp_path / "m.wmz"
    eps = episodes_of(run)[:3]
    with wmzip.Writer(p, codec, levels=[22, float("inf")], keyframe=16) as w:
        for i, (d, a) in enumerate(eps):
            w.begin_episode({"i": i})
            w.set_level(i % 2)
            w.write_states(d, a)
    with wmzip.open(p, codec) as f:
        member = f.codec
        want = list(f)
    assert member in codec.members and member != codec  # these runs: a coarser member than the finest
    r = c_uint64()
    assert lib.wmz_reader_open(str(p).encode(), codec._h, None, byref(r)) == 0
    try:
        c = c_uint64()
        assert lib.wmz_reader_codec(r.value, byref(c)) == 0
        assert wmzip.Codec._wrap(c.value) == member
        codes = np.zeros((member.slots, member.subspaces), np.uint8)
        lv = c_int()
        for ep in want:
            assert lib.wmz_reader_next(r.value) == 0
            for t in range(len(ep)):
                assert lib.wmz_reader_state(r.value, None, codes.ctypes.data, codes.size, 1) == 0
                assert np.array_equal(codes, ep.codes[t])
                assert lib.wmz_reader_level(r.value, byref(lv)) == 0 and lv.value == 0
            assert lib.wmz_reader_state(r.value, None, None, 0, 1) == 1
        assert lib.wmz_reader_next(r.value) == 1
    finally:
        assert lib.wmz_reader_close(r.value) == 0


def test_codec_members_and_summary(codec, gated_codec):
    """wmz_codec_members: new handles, or the count alone (WMZ_ERR_BUFFER)
    when they do not fit; wmz_codec_summary: what the codec is, as JSON."""
    n = c_size_t()
    k = len(codec.members)
    assert lib.wmz_codec_members(codec._h, None, 0, byref(n)) == -12 and n.value == k
    few = (c_uint64 * (k - 1))()
    assert lib.wmz_codec_members(codec._h, few, k - 1, byref(n)) == -12 and n.value == k
    assert list(few) == [0] * (k - 1)  # no handle made
    hs = (c_uint64 * (k + 1))()
    assert lib.wmz_codec_members(codec._h, hs, k + 1, byref(n)) == 0 and n.value == k and hs[k] == 0
    try:
        assert [wmzip.Codec._wrap(h).model_id for h in hs[:k]] == [m.model_id for m in codec.members]
    finally:
        for h in hs[:k]:
            assert lib.wmz_codec_free(h) == 0
    one = (c_uint64 * 1)()
    assert lib.wmz_codec_members(gated_codec._h, one, 1, byref(n)) == 0 and n.value == 1
    assert wmzip.Codec._wrap(one[0]) == gated_codec and one[0] != gated_codec._h  # a new handle
    assert lib.wmz_codec_members(1 << 60, hs, k, byref(n)) == -1
    s = _lib.out_json(lib.wmz_codec_summary, codec._h)
    assert set(s) == {"model_id", "slots", "subspaces", "alphabet", "dim", "has_gate", "model_geometry", "members",
                      "quantizer", "calibration"}
    assert (s["model_id"], s["slots"], s["subspaces"], s["alphabet"], s["dim"], s["has_gate"]) == \
        (codec.model_id, 4, codec.subspaces, 256, 64, False)
    assert s["members"] == [m.model_id for m in codec.members] and s["calibration"] == []
    m = _lib.out_json(lib.wmz_codec_summary, codec.members[0]._h)
    assert m["calibration"][0]["lambda"] is None  # +inf: the quantizer's own codes
    assert [p["bits_per_state"] for p in m["calibration"]] == [p.bits_per_state for p in codec.members[0].calibration]
    g = _lib.out_json(lib.wmz_codec_summary, gated_codec._h)
    assert g["has_gate"] and g["calibration"] == [] and g["members"] == [gated_codec.model_id]
    assert g["quantizer"]["vectors"] > 0 and g["model_geometry"] == {"slots": 4, "subspaces": 32, "alphabet": 64}


@pytest.mark.parametrize("lossy", [False, True], ids=["lossless", "lossy"])
@pytest.mark.parametrize("compiler", ["gcc", "g++"])
def test_c_program(compiler, lossy, codec, run, tmp_path):
    """capi/testdata/example.c compiles against wmzip.h (as C99 and as
    C++, warnings as errors) and runs: it reads a file Python wrote and
    writes one Python reads, and searches the file; a lossy file of the
    family with the member that wrote it."""
    cc = shutil.which(compiler)
    if cc is None:
        pytest.skip(f"no {compiler}")
    libdir = os.path.dirname(_lib._library_path())
    exe = tmp_path / "example"
    std = ["-std=c99"] if compiler == "gcc" else ["-x", "c++", "-std=c++11"]
    subprocess.run([cc, *std, "-Wall", "-Wextra", "-Werror", "-I", str(ROOT / "capi"),
                    str(ROOT / "capi" / "testdata" / "example.c"), "-o", str(exe), "-L", libdir,
                    f"-Wl,-rpath,{libdir}", "-l:" + os.path.basename(_lib._library_path())], check=True)
    model, src, out = tmp_path / "m.wmm", tmp_path / "in.wmz", tmp_path / "out.wmz"
    codec.save(model)
    wmzip.encode(src, codec, episodes_of(run)[:2], **({"lam": 22} if lossy else {}))
    p = subprocess.run([str(exe), str(model), str(src), str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    with wmzip.open(src, codec) as a, wmzip.open(out, codec) as b:
        c = a.codec
        assert c in codec.members if lossy else c == codec  # lossy: the member that wrote it
        assert f"2 episodes, states of 4 slots x {c.subspaces} codes below 256, model {c.model_id} " \
               f"(of {len(codec.members)} members)" in p.stdout
        assert "nearest state 2: episode" in p.stdout
        assert b.codec == c and b.episodes == (a.episodes[1],)
        assert np.array_equal(b.episode(0).codes, a.episode(1).codes)
