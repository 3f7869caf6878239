"""Every valid conformance vector (SPEC.md 8.3, testdata/conformance)
decodes through the Python face to its decode digest."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import numpy as np
import pytest

import wmzip

DIR = Path(__file__).resolve().parents[2] / "testdata" / "conformance"
VECTORS = json.loads((DIR / "vectors.json").read_text()) if (DIR / "vectors.json").is_file() else []


def digest(f: wmzip.File) -> str:
    """The decode digest of 8.3: per episode its metadata length and bytes
    and its state count, then per state its action (i64) and codes (u16)."""
    h = hashlib.sha256()
    for e in range(len(f)):
        meta = f.meta_bytes(e)
        ep = f.read(e, obs=False)
        assert ep.codes is not None
        h.update(struct.pack("<I", len(meta)) + meta + struct.pack("<Q", len(ep)))
        codes = ep.codes.reshape(len(ep), int(np.prod(ep.codes.shape[1:]))).astype("<u2")
        for a, c in zip(ep.actions, codes):
            h.update(struct.pack("<q", int(a)) + c.tobytes())
    return h.hexdigest()


@pytest.mark.skipif(not VECTORS, reason="testdata/conformance is not beside the package")
@pytest.mark.parametrize("v", VECTORS, ids=[v["file"] for v in VECTORS])
def test_vector_decodes(v):
    codec = None if v["embed_model"] else wmzip.Codec.load(DIR / v["model"])
    with wmzip.open(DIR / v["file"], codec) as f:
        assert digest(f) == v["decode_sha256"]
        assert f.states == v["states"]
        eps = wmzip.decode(DIR / v["file"], codec)
        assert [len(ep) for ep in eps] == list(f.episodes)
        for e, ep in enumerate(eps):
            assert np.array_equal(ep.actions, f.read(e, obs=False).actions)
