"""File: a .wmz file read at random; Episode, Info; decode."""

from __future__ import annotations

import builtins
import ctypes
import json
import math
import os
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterator, List, Optional, Tuple, Union

import numpy as np

from ._codec import Codec
from ._lib import ClosedError, InputError, call, lib, options, out_bytes, out_json
from ._search import Hits, Memory


@dataclass
class Episode:
    """One episode of a file: a state per action.

    Attributes:
        actions: (T,) int64, actions[t] leading into state t (-1: none).
        codes: (T, S, M) codes, uint8 when the alphabet fits, else uint16
            (None when File.read was asked not to read them).
        obs: (T, S, d) float32, the quantizer's reconstruction of the codes,
            or None for a codec of codes only.
        meta: the JSON kept with the episode, parsed, or None (the bytes
            as stored for JSON that Python's json cannot parse).
    """

    actions: np.ndarray
    codes: Optional[np.ndarray]
    obs: Optional[np.ndarray] = None
    meta: Any = None

    def __len__(self) -> int:
        return len(self.actions)


@dataclass(frozen=True)
class Distortion:
    """What a writer measured of a file's distortion, as means over slot
    vectors (relative squared error: squared distance over squared norm).

    Attributes:
        slots: slot vectors measured against the lossless reconstruction.
        retention: their mean distortion: what leaving codes out cost (in
            a file coded by rate and distortion, what the values chosen
            cost against the quantizer's own codes of the member that
            wrote it).
        source_slots: slot vectors measured against the float observations
            they were written from (0 for a file written from codes).
        source: their mean relative squared error, quantizer and retention
            together: what a user of the floats gets back.
        source_cosine: their mean cosine similarity (1 when none).
    """

    slots: int = 0
    retention: float = 0.0
    source_slots: int = 0
    source: float = 0.0
    source_cosine: float = 1.0

    @classmethod
    def _of(cls, d: dict) -> "Distortion":
        return cls(d["slots"], float(d["retention"]), d["source_slots"], float(d["source"]), float(d["source_cosine"]))


def _lam(x: Optional[float]) -> float:
    return math.inf if x is None else x


@dataclass(frozen=True)
class Info:
    """A file's summary from its index.

    Attributes:
        lam: the file's retention trade-off λ (math.inf: every coordinate
            coded: lossless, or coded by rate and distortion).
        levels: the λ of its retention levels, if any (a file coded by rate
            and distortion records none).
        file_bytes: the file's size; model_bytes the embedded model's.
        model_id: the model that wrote it (of a family: the member's).
        ideal_bits: Σ −log2 p of what was coded.
        retained: coordinates coded (states × S × M when every one is).
        distortion: what the writer measured (Distortion).
    """

    episodes: int
    states: int
    chunks: int
    file_bytes: int
    header_bytes: int
    model_bytes: int
    payload_bytes: int
    index_bytes: int
    lam: float
    levels: Tuple[float, ...]
    embedded: bool
    model_id: str
    ideal_bits: float
    retained: int
    distortion: Distortion = field(default_factory=Distortion)

    @property
    def bits_per_state(self) -> float:
        """File bits per state, the shared model excluded."""
        return (self.file_bytes - self.model_bytes) * 8 / self.states if self.states else 0.0

    @property
    def mode(self) -> str:
        """How the file was written, as `wmzip info` says: "lossless" (the
        quantizer's own codes of the codec that wrote it), "retention" (a
        gate left codes out, at lam or per level) or "rate-distortion"
        (every coordinate coded, with values chosen for their bits and
        distortion: distortion.retention is what they changed)."""
        if not (math.isinf(self.lam) and all(math.isinf(x) for x in self.levels)):
            return "retention"
        return "rate-distortion" if self.distortion.retention > 0 else "lossless"

    @property
    def lossless(self) -> bool:
        """Whether the file holds the quantizer's own codes of the codec
        that wrote it (mode "lossless")."""
        return self.mode == "lossless"

    @classmethod
    def _of(cls, d: dict) -> "Info":
        return cls(
            d["episodes"], d["states"], d["chunks"], d["file_bytes"], d["header_bytes"], d["model_bytes"],
            d["payload_bytes"], d["index_bytes"], _lam(d["lambda"]), tuple(_lam(x) for x in d["levels"] or ()),
            d["embedded"], d["model_id"], float(d["ideal_bits"]), d["retained"], Distortion._of(d["distortion"]),
        )


def _meta(b: bytes) -> Any:
    """Metadata parsed as JSON; the bytes as stored when Python's json
    cannot parse them though the format accepts them (SPEC.md 6.5: bytes
    that are not UTF-8, nesting deeper than the interpreter's recursion
    limit), so that every valid file decodes."""
    if not b:
        return None
    try:
        return json.loads(b)
    except (ValueError, RecursionError):
        return b


Key = Union[int, Tuple[int, Union[int, slice]]]


class File:
    """A .wmz file open for random access: wmzip.open(path, codec).

    len(f) is its number of episodes and f.episodes their lengths; f[e] is
    episode e (an Episode), f[e, t] state t of episode e: its slot vectors
    (S, d) when the codec has a quantizer, else its codes (S, M); f[e, a:b]
    states a to b−1, stacked. Iterating gives the episodes in order.
    Negative indices count from the end.

    f.codec is the codec the file is read with, whose shape its states
    have: the one given, or the member of a family given that wrote the
    file (a lossy file is written by one member, whose subspaces may differ
    from the family's; a lossless one by its finest, and read with the
    family itself), or the model the file embeds.

    Reads decode from the chunk's keyframe (states nearby are cached) and
    may run from several threads at once. Close the file (or use it as a
    context manager) to release it; closing twice is fine.
    """

    def __init__(self, path: "str | os.PathLike[str]", codec: Optional[Codec] = None, *, threads: Optional[int] = None,
                 public_key: "str | os.PathLike[str] | bytes | None" = None, min_generation: Optional[int] = None,
                 entry: Optional[dict] = None):
        """Opens the file at path, read with codec, or with the model the
        file embeds when codec is None. threads: chunks decoded ahead at
        once when a whole episode is read (default: every core).
        public_key: a minisign public key file (a path, or its bytes): the
        file must be signed by it, and every chunk read is checked against
        its signed hash (SignatureError otherwise, naming the chunk);
        min_generation refuses an older signed version. path may name an
        object, s3://bucket/key (wmzip.catalog); entry, the file's entry
        of a catalog, spares requests and is checked against the file."""
        self._h = 0
        self.path = os.fspath(path)
        if codec is not None and not isinstance(codec, Codec):
            raise InputError(f"codec: want a wmzip.Codec, not {type(codec).__name__}")
        h = ctypes.c_uint64()
        call("wmz_file_open", os.fsencode(path), codec._h if codec else 0,
             options(threads=threads, public_key=_key_text(public_key), min_generation=min_generation, entry=entry),
             ctypes.byref(h), filename=self.path)
        self._h = h.value
        c = ctypes.c_uint64()
        call("wmz_file_codec", self._h, ctypes.byref(c))
        used = Codec._wrap(c.value)
        self.codec: Codec = codec if used == codec else used
        codec = self.codec
        n = ctypes.c_size_t()
        lib.wmz_file_episodes(self._h, None, 0, ctypes.byref(n))
        lens = np.zeros(n.value, np.int64)
        call("wmz_file_episodes", self._h, lens.ctypes.data, n.value, ctypes.byref(n))
        self._lens = tuple(int(x) for x in lens)
        self._closed = False
        self._state_shape = (codec.slots, codec.subspaces)
        self._obs_shape = (codec.slots, codec.dim) if codec.dim else None
        self._dtype = codec.code_dtype
        self._width = self._dtype.itemsize
        self._memory: Optional[Memory] = None  # the file's, opened by search
        self._memory_lock = threading.Lock()

    # ---- what the file holds

    @property
    def episodes(self) -> Tuple[int, ...]:
        """The number of states of each episode."""
        return self._lens

    @property
    def states(self) -> int:
        """The number of states of the file."""
        return sum(self._lens)

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        return len(self._lens)

    def info(self) -> Info:
        """The file's summary from its index: counts, sizes, λ and the
        distortion its writer recorded."""
        self._check()
        return Info._of(out_json(lib.wmz_file_info, self._h))

    def verify(self) -> None:
        """Decodes the whole file with every check; raises what fails."""
        self._check()
        call("wmz_file_verify", self._h)

    # ---- reads

    def _check(self) -> None:
        if self._closed:
            raise ClosedError(f"wmzip: {self.path} is closed")

    def _floats_shape(self) -> Tuple[int, int]:
        """(S, d) of a state's reconstruction; InputError without a
        quantizer."""
        if self._obs_shape is None:
            return (self.codec.slots, self.codec._need_quantizer())
        return self._obs_shape

    def _index(self, e: int, t: Optional[int] = None) -> Tuple[int, int]:
        n = len(self._lens)
        e = int(e)
        if e < 0:
            e += n
        if not 0 <= e < n:
            raise IndexError(f"episode {e} out of range: the file has {n}")
        if t is None:
            return e, 0
        t = int(t)
        if t < 0:
            t += self._lens[e]
        if not 0 <= t < self._lens[e]:
            raise IndexError(f"step {t} out of range: episode {e} has {self._lens[e]} states")
        return e, t

    def codes(self, e: int, t: int, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The codes (S, M) of state t of episode e (written to out, if
        given: a C-contiguous array of code_dtype)."""
        self._check()
        e, t = self._index(e, t)
        res = Codec._out(out, self._state_shape, self._dtype, "out") if out is not None else np.empty(self._state_shape, self._dtype)
        call("wmz_file_state", self._h, e, t, None, res.ctypes.data, res.size, self._width)
        return res

    def obs(self, e: int, t: int, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The reconstructed slot vectors (S, d) float32 of state t of
        episode e (written to out, if given)."""
        self._check()
        shape = self._floats_shape()
        e, t = self._index(e, t)
        res = Codec._out(out, shape, np.dtype(np.float32), "out") if out is not None else np.empty(shape, np.float32)
        call("wmz_file_obs", self._h, e, t, None, res.ctypes.data, res.size)
        return res

    def action(self, e: int, t: int) -> int:
        """The action that led into state t of episode e."""
        self._check()
        e, t = self._index(e, t)
        a = ctypes.c_int64()
        call("wmz_file_state", self._h, e, t, ctypes.byref(a), None, 0, self._width)
        return a.value

    def read(self, e: int, start: int = 0, stop: Optional[int] = None, *, codes: bool = True,
             obs: Optional[bool] = None) -> Episode:
        """States start to stop−1 of episode e (all of it by default) as an
        Episode: actions, codes unless codes=False, and the reconstruction
        when the codec has a quantizer unless obs=False."""
        self._check()
        e, _ = self._index(e)
        n = self._lens[e]
        start, stop, _ = slice(start, stop).indices(n)
        k = max(stop - start, 0)
        if obs is None:
            obs = self._obs_shape is not None
        elif obs and self._obs_shape is None:
            self.codec._need_quantizer()
        acts = np.empty(k, np.int64)
        c = np.empty((k,) + self._state_shape, self._dtype) if codes else None
        o = np.empty((k,) + self._floats_shape(), np.float32) if obs else None
        if k:
            call("wmz_file_states", self._h, e, start, start + k, acts.ctypes.data,
                 None if c is None else c.ctypes.data, 0 if c is None else c.size, self._width,
                 None if o is None else o.ctypes.data, 0 if o is None else o.size)
        meta = self.meta(e) if (start, stop) == (0, n) else None
        return Episode(acts, c, o, meta)

    def episode(self, e: int) -> Episode:
        """Episode e, whole: actions, codes, reconstruction, metadata."""
        return self.read(e)

    def meta(self, e: int) -> Any:
        """The metadata (JSON, parsed) kept with episode e, or None; the
        bytes as stored for JSON that Python's json cannot parse."""
        return _meta(self.meta_bytes(e))

    def meta_bytes(self, e: int) -> bytes:
        """The metadata of episode e as stored (b"" for none)."""
        self._check()
        e, _ = self._index(e)
        return out_bytes(lib.wmz_file_meta, self._h, e, text=True, guess=256)

    def __getitem__(self, key: Key) -> Any:
        if isinstance(key, tuple):
            if len(key) != 2:
                raise IndexError(f"index {key!r}: want f[e], f[e, t] or f[e, a:b]")
            e, t = key
            if isinstance(t, slice):
                e, _ = self._index(e)
                idx = range(*t.indices(self._lens[e]))
                lo, hi = (min(idx), max(idx) + 1) if idx else (0, 0)
                floats = self._obs_shape is not None
                ep = self.read(e, lo, hi, codes=not floats, obs=floats)
                arr = ep.obs if floats else ep.codes
                assert arr is not None
                return arr if idx.step == 1 or len(idx) <= 1 else arr[np.asarray(idx) - lo]
            if self._obs_shape is not None:
                return self.obs(e, t)
            return self.codes(e, t)
        if isinstance(key, slice):
            return [self.episode(e) for e in range(*key.indices(len(self._lens)))]
        return self.episode(key)

    def __iter__(self) -> Iterator[Episode]:
        for e in range(len(self._lens)):
            yield self.episode(e)

    def search(self, query: Any, k: int = 10, *, states: bool = False, **kw: Any) -> Hits:
        """The k nearest slot vectors (or, with states=True, states) of the
        file to each query, as wmzip.Memory([path], codec).slots (or
        .states) finds them, with the same keywords (episodes, steps,
        nprobe, threads): a Hits of episode, step, slot and distance
        arrays. The first search opens the file's index, built by decoding
        the file when there is none current beside it (`wmzip index`
        keeps one); the file keeps it until it is closed."""
        self._check()
        with self._memory_lock:
            if self._memory is None:
                self._memory = Memory(self.path, self.codec)
            m = self._memory
        return m.states(query, k, **kw) if states else m.slots(query, k, **kw)

    # ---- lifetime

    def close(self) -> None:
        """Closes the file; reads in flight finish first. Closing again
        does nothing."""
        if self._h and not self._closed:
            self._closed = True
            with self._memory_lock:
                if self._memory is not None:
                    self._memory.close()
            call("wmz_file_close", self._h)

    def __enter__(self) -> "File":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_h", 0) and not self._closed and lib is not None:
            warnings.warn(f"unclosed wmzip.File {self.path!r}", ResourceWarning, stacklevel=2)
            self._closed = True
            m = getattr(self, "_memory", None)
            if m is not None:
                m.close()
            lib.wmz_file_close(self._h)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._lens)} episodes, {self.states} states"
        return f"<wmzip.File {self.path!r}: {state}>"


def open(path: "str | os.PathLike[str]", codec: Optional[Codec] = None, *, threads: Optional[int] = None,
         public_key: "str | os.PathLike[str] | bytes | None" = None, min_generation: Optional[int] = None) -> File:
    """Opens the .wmz file at path for random access (see File), read with
    codec, or with the model the file embeds when codec is None; with
    public_key, only a file signed by that key, every chunk checked."""
    return File(path, codec, threads=threads, public_key=public_key, min_generation=min_generation)


def _key_text(key: "str | os.PathLike[str] | bytes | None") -> Optional[str]:
    """The text of a public key given as its file's path or bytes."""
    if key is None:
        return None
    if isinstance(key, bytes):
        return key.decode("ascii", "replace")
    with builtins.open(key, "rb") as fh:
        return fh.read(4096).decode("ascii", "replace")


def decode(path: "str | os.PathLike[str]", codec: Optional[Codec] = None, *, threads: Optional[int] = None) -> List[Episode]:
    """Every episode of the .wmz file at path: actions, codes, the
    reconstruction when the codec has a quantizer, metadata."""
    with File(path, codec, threads=threads) as f:
        return list(f)
