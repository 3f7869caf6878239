"""A numcodecs codec, id "wmzip": a zarr array of embeddings (T, S, d)
float32, chunked along T only (chunks=(t, S, d)), compressed chunk by
chunk as .wmz files of one episode each, with a wmzip model stored once,
in the array's metadata (the codec's configuration holds the model's
bytes in base64).

    import zarr, wmzip.numcodecs
    z = zarr.open("emb.zarr", mode="w", shape=x.shape, chunks=(256,) + x.shape[1:],
                  dtype="f4", compressor=wmzip.numcodecs.Wmzip(codec))
    z[:] = x
    zarr.open("emb.zarr")[1000]  # decodes the one chunk that holds row 1000

The package registers the codec under the numcodecs.codecs entry point,
so zarr.open finds it by its id without importing this module first.
Decoding is exact: the same bytes decode to the same floats on every
machine (the reconstruction of the stored codes; with lam or distortion
set, of the values the writer kept). Works with zarr 2 (2.13 tested).
"""

from __future__ import annotations

import base64
import hashlib
import os
import tempfile
import threading
from typing import Any, Dict, Optional

import numpy as np
from numcodecs.abc import Codec as _NumCodec
from numcodecs.compat import ensure_bytes, ensure_ndarray, ndarray_copy

from ._codec import Codec
from ._file import File
from ._lib import InputError
from ._writer import encode as _encode

_loaded: Dict[str, Codec] = {}
_lock = threading.Lock()


def _codec_of(model: str) -> Codec:
    key = hashlib.sha256(model.encode()).hexdigest()
    with _lock:
        c = _loaded.get(key)
        if c is None:
            c = Codec.from_bytes(base64.b64decode(model))
            _loaded[key] = c
        return c


class Wmzip(_NumCodec):
    """The numcodecs codec of wmzip: Wmzip(codec) or Wmzip(model=base64 of
    a model file). lam, distortion, keyframe: the Writer's options
    (default lossless, keyframe 128)."""

    codec_id = "wmzip"

    def __init__(self, codec: Optional[Codec] = None, *, model: Optional[str] = None, lam: Optional[float] = None,
                 distortion: Optional[float] = None, keyframe: Optional[int] = None):
        if (codec is None) == (model is None):
            raise InputError("Wmzip: give a codec or a model (base64 of a model file), one of them")
        self.model = model if model is not None else base64.b64encode(codec.to_bytes()).decode()  # type: ignore[union-attr]
        self.lam, self.distortion, self.keyframe = lam, distortion, keyframe
        self._codec = codec if codec is not None else _codec_of(self.model)
        if not self._codec.dim:
            raise InputError("Wmzip: the model has no quantizer: a zarr array of floats needs one")
        self._dim: int = self._codec.dim

    def get_config(self) -> Dict[str, Any]:
        cfg: Dict[str, Any] = {"id": self.codec_id, "model": self.model}
        for k in ("lam", "distortion", "keyframe"):
            if getattr(self, k) is not None:
                cfg[k] = getattr(self, k)
        return cfg

    @classmethod
    def from_config(cls, config: Dict[str, Any]) -> "Wmzip":
        cfg = dict(config)
        cfg.pop("id", None)
        return cls(**cfg)

    def _options(self) -> Dict[str, Any]:
        o = {"lam": self.lam, "distortion": self.distortion, "keyframe": self.keyframe, "threads": 1}
        return {k: v for k, v in o.items() if v is not None}

    def encode(self, buf: Any) -> bytes:
        c = self._codec
        a = ensure_ndarray(buf)
        if a.dtype != np.float32:
            raise InputError(f"Wmzip: a chunk of {a.dtype}: want float32")
        per = c.slots * self._dim
        if a.size % per:
            raise InputError(f"Wmzip: a chunk of {a.size} floats: want whole states of {c.slots}x{self._dim}")
        x = np.ascontiguousarray(a).reshape(-1, c.slots, self._dim)
        with tempfile.TemporaryDirectory(prefix="wmzip-chunk-") as d:
            p = os.path.join(d, "chunk.wmz")
            _encode(p, c, [(x, None)], **self._options())
            with open(p, "rb") as f:
                return f.read()

    def decode(self, buf: Any, out: Any = None) -> Any:
        b = ensure_bytes(buf)
        with tempfile.TemporaryDirectory(prefix="wmzip-chunk-") as d:
            p = os.path.join(d, "chunk.wmz")
            with open(p, "wb") as f:
                f.write(b)
            with File(p, self._codec, threads=1) as f:
                if len(f.episodes) != 1:
                    raise InputError(f"Wmzip: a chunk of {len(f.episodes)} episodes: want 1")
                obs = f.read(0, codes=False).obs
        assert obs is not None
        return ndarray_copy(obs, out) if out is not None else obs

    def __repr__(self) -> str:
        return f"Wmzip(model=<{len(self.model)} base64 chars>, lam={self.lam}, distortion={self.distortion})"


def register() -> None:
    """Registers the codec with numcodecs (the entry point does it when
    zarr looks the id up; importing this module does it too)."""
    from numcodecs.registry import register_codec

    register_codec(Wmzip)


register()

__all__ = ["Wmzip", "register"]
