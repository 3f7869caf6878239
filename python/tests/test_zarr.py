"""The numcodecs codec "wmzip": a zarr array of embeddings compressed
chunk by chunk, found by its id through the numcodecs.codecs entry point,
decoding bit-exactly what wmzip decodes of the same chunk, and reading
only the chunk a row needs."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import wmzip

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")
import wmzip.numcodecs as wnc  # noqa: E402

CHUNK = 64


class Counting(dict):
    """A zarr store that counts the chunk keys read."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list = []

    def __getitem__(self, key):
        if not key.startswith("."):
            self.reads.append(key)
        return super().__getitem__(key)


def expected(codec, x, tmp_path, **opts) -> np.ndarray:
    """What wmzip decodes of x written chunk by chunk, one episode each."""
    out = []
    for i in range(0, len(x), CHUNK):
        p = tmp_path / f"c{i}.wmz"
        part = x[i:i + CHUNK]
        if len(part) < CHUNK:  # zarr pads an edge chunk with its fill value
            part = np.concatenate([part, np.zeros((CHUNK - len(part),) + x.shape[1:], x.dtype)])
        wmzip.encode(p, codec, [(part, None)], threads=1, **opts)
        with wmzip.open(p, codec) as f:
            obs = f.read(0).obs
            assert obs is not None
            out.append(obs)
    return np.concatenate(out)[: len(x)]


@pytest.mark.parametrize("opts", [{}, {"lam": 2.0}])
def test_round_trip(run, gated_codec, tmp_path, opts):
    x = run["obs"][:300]
    store = Counting()
    z = zarr.open(store, mode="w", shape=x.shape, chunks=(CHUNK,) + x.shape[1:], dtype="f4",
                  compressor=wnc.Wmzip(gated_codec, **opts), fill_value=0)
    z[:] = x
    want = expected(gated_codec, x, tmp_path, **opts)
    got = zarr.open(store, mode="r")
    assert got.compressor.codec_id == "wmzip"
    assert got[:].tobytes() == want.tobytes()
    store.reads.clear()
    assert got[130].tobytes() == want[130].tobytes()
    assert store.reads == ["2.0.0"]
    stored = sum(len(v) for k, v in store.items() if not k.startswith("."))
    assert stored < x.nbytes / 4, f"{stored} bytes stored for {x.nbytes}"


def test_entry_point(run, gated_codec, tmp_path):
    """A fresh interpreter opens the array without importing
    wmzip.numcodecs: numcodecs finds the codec by its id."""
    x = run["obs"][:200]
    path = tmp_path / "e.zarr"
    z = zarr.open(str(path), mode="w", shape=x.shape, chunks=(CHUNK,) + x.shape[1:], dtype="f4",
                  compressor=wnc.Wmzip(gated_codec))
    z[:] = x
    np.save(tmp_path / "want.npy", expected(gated_codec, x, tmp_path)[150])
    code = ("import sys, numpy as np, zarr; z = zarr.open(sys.argv[1], mode='r'); "
            "assert z[150].tobytes() == np.load(sys.argv[2]).tobytes(), 'rows differ'; print(type(z.compressor).__module__)")
    p = subprocess.run([sys.executable, "-c", code, str(path), str(tmp_path / "want.npy")], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "wmzip.numcodecs"


def test_config_round_trip(gated_codec):
    c = wnc.Wmzip(gated_codec, lam=1.5, keyframe=32)
    cfg = c.get_config()
    assert cfg["id"] == "wmzip" and cfg["lam"] == 1.5
    d = numcodecs.get_codec(cfg)
    assert isinstance(d, wnc.Wmzip) and d.get_config() == cfg
    with pytest.raises(wmzip.InputError):
        c.encode(np.zeros((3, 5), np.float32))
