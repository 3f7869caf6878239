"""Codec: the model a Writer and its readers share."""

from __future__ import annotations

import ctypes
import math
import os
from typing import Any, List, NamedTuple, Optional, Tuple

import numpy as np

from . import _arrays
from ._lib import CodecInfo, InputError, Trajectory, call, lib, options, out_bytes, out_json

PathLike = "str | os.PathLike[str]"


class Geometry(NamedTuple):
    """The shape of a state: `slots` slot vectors of `subspaces` codes
    each, every code below `alphabet` (slots × subspaces codes a state)."""

    slots: int
    subspaces: int
    alphabet: int


class RatePoint(NamedTuple):
    """A point of a codec's calibration: coded by rate and distortion at
    λ `lam` (bits a unit of a slot vector's relative squared error is
    worth; math.inf: the quantizer's own codes), episodes held out of its
    training came back at mean `distortion` (relative squared error)
    against their source floats, in `bits_per_state` bits a state."""

    lam: float
    distortion: float
    bits_per_state: float


class Codec:
    """The shared model of a store of agent memory: the quantizer of float
    observations (if trained on them), the world model that predicts each
    state's codes from the history and the action, and the retention gate
    of the lossy modes (if calibrated). It is the model file (.wmm); a
    Writer codes with it and a File decodes with it.

    Trained on float observations, a codec is by default a family: a
    bundle of members (`members`), each a product quantizer with its own
    world model and no gate, coarsest first. The finest (the last, whose
    model_id is the bundle's) writes lossless files, and its shape is the
    bundle's; a lossy file is coded by rate and distortion by the member
    that writes it in the fewest bits, and a File given the bundle is read
    with that member (File.codec). Each member's `calibration` is what it
    cost, at each λ, on episodes held out of its training.

    Build one with Codec.train, read one with Codec.load or
    Codec.from_bytes. A Codec is immutable and safe to share between
    threads; it pickles as its model file's bytes. Two codecs are equal
    when they are of the same models: a bundle is not equal to its finest
    member, though they share a model_id.

    Attributes:
        slots: S, the slot vectors of a state.
        subspaces: M, the codes of a slot vector (a state has S×M).
        alphabet: K, every code is below it.
        geometry: (slots, subspaces, alphabet), the shape of the arrays of
            codes the codec takes and gives (Geometry).
        model_geometry: the world model's own shape of a state, which
            differs from geometry when it sees several slot vectors as one
            of its slots (the same slots × subspaces codes).
        dim: the floats of a slot vector, or None without a quantizer.
        has_gate: whether the lossy modes leave codes out by a retention
            gate; without one they code by rate and distortion (a codec
            with a quantizer) or are refused (a codec of codes only).
        model_id: the model's ID (hex), which files name; a bundle's is
            its finest member's.
        quantizer_quality: (distortion, cosine) of the quantizer on
            observations held out of its training, or None (a bundle's:
            its finest member's).
    """

    __slots__ = ("_h", "slots", "subspaces", "alphabet", "geometry", "model_geometry", "dim", "has_gate", "model_id",
                 "quantizer_quality", "_member_ids", "_calibration", "_members")

    _h: int
    slots: int
    subspaces: int
    alphabet: int
    geometry: Geometry
    model_geometry: Geometry
    dim: Optional[int]
    has_gate: bool
    model_id: str
    quantizer_quality: Optional[Tuple[float, float]]
    _member_ids: Tuple[str, ...]
    _calibration: Tuple[RatePoint, ...]
    _members: Optional[Tuple["Codec", ...]]

    def __init__(self) -> None:
        raise TypeError("build a Codec with Codec.train, Codec.load or Codec.from_bytes")

    @classmethod
    def _wrap(cls, h: int) -> "Codec":
        c = object.__new__(cls)
        c._h = h
        info = CodecInfo()
        call("wmz_codec_describe", h, ctypes.byref(info))
        c.slots, c.subspaces, c.alphabet = info.slots, info.subspaces, info.alphabet
        c.dim = info.dim or None
        c.has_gate = bool(info.has_gate)
        c.model_id = info.model_id.decode()
        c.quantizer_quality = (
            (info.quantizer_distortion, info.quantizer_cosine) if info.quantizer_vectors > 0 else None
        )
        c.geometry = Geometry(c.slots, c.subspaces, c.alphabet)
        d = out_json(lib.wmz_codec_summary, h)
        g = d["model_geometry"]
        c.model_geometry = Geometry(g["slots"], g["subspaces"], g["alphabet"])
        c._member_ids = tuple(d["members"])
        c._calibration = tuple(
            RatePoint(math.inf if p["lambda"] is None else float(p["lambda"]), float(p["distortion"]),
                      float(p["bits_per_state"]))
            for p in d["calibration"]
        )
        c._members = None
        return c

    @classmethod
    def load(cls, path: "str | os.PathLike[str]") -> "Codec":
        """Reads a codec from a model file (.wmm)."""
        h = ctypes.c_uint64()
        call("wmz_codec_load", os.fsencode(path), ctypes.byref(h), filename=os.fspath(path))
        return cls._wrap(h.value)

    @classmethod
    def from_bytes(cls, data: bytes) -> "Codec":
        """Reads a codec from the bytes of a model file."""
        b = bytes(data)
        h = ctypes.c_uint64()
        call("wmz_codec_read", b, len(b), ctypes.byref(h))
        return cls._wrap(h.value)

    @classmethod
    def train(
        cls,
        obs: Any = None,
        codes: Any = None,
        actions: Any = None,
        episode_start: Any = None,
        *,
        quantizer: "str | None" = None,
        subspaces: "int | None" = None,
        centroids: "int | None" = None,
        seed: int = 1,
        quantizer_iters: int = 0,
        quantizer_sample: int = 0,
        codes_only: bool = False,
        alphabet: int = 0,
        precision: int = 16,
        max_ref: int = 65536,
        capacity: float = 1.0,
        gate_holdout: int = -1,
        gate_bins: str = "modal",
        gate_for: str = "distortion",
        level: str = "copy",
        max_states: int = 1 << 18,
    ) -> "Codec":
        """Builds a codec from an agent's past, exactly as `wmzip train`
        does from a trajectory .npz of the same arrays and flags.

        Args:
            obs: float observations, (T, S, d) or (T, d): quantizers are
                trained on them.
            quantizer: "family" (the default: product quantizers of several
                geometries, chosen by the bits each writes at each
                distortion on held-out episodes; lossy files are coded by
                rate and distortion) or "single" (one quantizer of
                `subspaces` codes a slot vector, each below `centroids`
                (default 32 and 64: the seeds' configuration), OPQ unless
                quantizer_iters is negative, with a retention gate).
                Giving subspaces, centroids or quantizer_iters implies
                "single".
            codes: codes instead (or beside them, with codes_only),
                (T, S, M) or (T, M), uint8 or uint16.
            actions: the action leading into each state, (T,); None: none
                known (-1).
            episode_start: the ascending offsets of each episode's first
                state, the first 0; None: one episode.
            gate_holdout: episodes held out to calibrate the retention gate
                of a single quantizer or of codes (-1: one in eight; 0: no
                gate: the lossy modes then code by rate and distortion, or
                are refused for a codec of codes only). A family has no
                gate.
            gate_for: "distortion" (least damage per bit) or "search"
                (lossy memories stay findable by search, at some cost in
                distortion): what the gate is calibrated for.
            level: the world model's level: "copy" (whole slots copied
                where that has paid), "full" (every slot predicted
                coordinate by coordinate: about 1.5x slower for a tenth of
                a percent fewer bits, lossless files) or "fast" (several
                times faster, a few percent more bits).
            The rest are `wmzip train`'s flags of the same names.

        It can take minutes on large inputs; other threads run meanwhile.
        """
        if obs is None and codes is None:
            raise InputError("no training data: give obs or codes")
        t = Trajectory()
        keep = []
        T = None
        if obs is not None:
            o = _arrays.floats(obs)
            if o.ndim == 2:
                o = o.reshape(o.shape[0], 1, o.shape[1])
            if o.ndim != 3:
                raise InputError(f"obs of shape {np.shape(obs)}: want (T, S, d) or (T, d)")
            T = o.shape[0]
            t.slots, t.dim, t.obs = o.shape[1], o.shape[2], o.ctypes.data
            keep.append(o)
        if codes is not None:
            c = _arrays.codes(codes)
            if c.ndim == 2:
                c = c.reshape(c.shape[0], 1, c.shape[1])
            if c.ndim != 3:
                raise InputError(f"codes of shape {np.shape(codes)}: want (T, S, M) or (T, M)")
            if T is not None and (c.shape[0], c.shape[1]) != (T, t.slots):
                raise InputError(f"codes of shape {c.shape} and obs of {T} states of {t.slots} slots")
            T = c.shape[0]
            t.slots, t.subspaces, t.codes, t.code_width = c.shape[1], c.shape[2], c.ctypes.data, c.itemsize
            keep.append(c)
        t.states = T
        if actions is not None:
            a = _arrays.ints(actions, "actions")
            t.actions = a.ctypes.data
            keep.append(a)
            if len(a) != T:
                raise InputError(f"{len(a)} actions for {T} states")
        if episode_start is not None:
            s = _arrays.ints(episode_start, "episode_start")
            t.episode_start, t.episodes = s.ctypes.data, len(s)
            keep.append(s)
        opts = options(
            quantizer=quantizer, subspaces=subspaces, centroids=centroids, seed=seed, quantizer_iters=quantizer_iters,
            quantizer_sample=quantizer_sample, codes_only=codes_only, alphabet=alphabet, precision=precision,
            max_ref=max_ref, capacity=capacity, gate_holdout=gate_holdout, gate_bins=gate_bins,
            gate_for=gate_for, level=level,
            max_states=max_states,
        )
        h = ctypes.c_uint64()
        call("wmz_codec_train", ctypes.byref(t), opts, ctypes.byref(h))
        del keep
        return cls._wrap(h.value)

    def save(self, path: "str | os.PathLike[str]") -> None:
        """Writes the model file (.wmm) at path, atomically."""
        call("wmz_codec_save", self._h, os.fsencode(path), filename=os.fspath(path))

    def to_bytes(self) -> bytes:
        """The bytes of the model file."""
        return out_bytes(lib.wmz_codec_bytes, self._h, guess=1 << 20)

    __bytes__ = to_bytes

    def __reduce__(self):
        return (Codec.from_bytes, (self.to_bytes(),))

    @property
    def members(self) -> List["Codec"]:
        """The codecs a bundle is made of, coarsest first, each of one
        model; the last, the finest, writes the bundle's lossless files.
        A codec of one model is its own only member: [self]."""
        if len(self._member_ids) == 1:
            return [self]
        ms = self._members
        if ms is None:
            n = ctypes.c_size_t()
            hs = (ctypes.c_uint64 * len(self._member_ids))()
            call("wmz_codec_members", self._h, hs, len(hs), ctypes.byref(n))
            ms = tuple(Codec._wrap(h) for h in hs[: n.value])
            self._members = ms
        return list(ms)

    @property
    def calibration(self) -> List[RatePoint]:
        """How a codec of one model trained to code by rate and distortion
        (a family's member) did on episodes held out of its training: a
        RatePoint (lam, distortion, bits_per_state) for each λ, by
        decreasing λ, the first math.inf (its quantizer's own codes).
        Empty for a bundle (ask its members) and for a codec trained
        otherwise (quantizer="single", or on codes)."""
        return list(self._calibration)

    @property
    def has_quantizer(self) -> bool:
        """Whether the codec quantizes float observations (else it codes
        codes only)."""
        return self.dim is not None

    @property
    def code_dtype(self) -> np.dtype:
        """uint8 when every code fits (K ≤ 256), else uint16: the dtype of
        the codes a File returns, as `wmzip decode` writes them."""
        return np.dtype(np.uint8 if self.alphabet <= 256 else np.uint16)

    def quantize(self, obs: Any, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The codes of float observations: (..., S, d) or (..., S·d) in,
        (..., S, M) out, of code_dtype (or written to out). A bundle's are
        its finest member's: the codes of its lossless files."""
        d = self._need_quantizer()
        o = _arrays.floats(obs)
        lead, n = _arrays.states(o, self.slots, d, "obs")
        res = self._out(out, lead + (self.slots, self.subspaces), self.code_dtype, "out")
        call("wmz_codec_quantize", self._h, o.ctypes.data, o.size, res.ctypes.data, res.size, res.itemsize)
        return res

    def reconstruct(self, codes: Any, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The slot vectors of codes, the quantizer's reconstruction:
        (..., S, M) or (..., S·M) in, (..., S, d) float32 out (or written
        to out)."""
        d = self._need_quantizer()
        c = _arrays.codes(codes)
        lead, n = _arrays.states(c, self.slots, self.subspaces, "codes")
        res = self._out(out, lead + (self.slots, d), np.dtype(np.float32), "out")
        call("wmz_codec_reconstruct", self._h, c.ctypes.data, c.size, c.itemsize, res.ctypes.data, res.size)
        return res

    def _need_quantizer(self) -> int:
        if self.dim is None:
            raise InputError("the codec has no quantizer for float observations (it was trained on codes)")
        return self.dim

    @staticmethod
    def _out(out: Optional[np.ndarray], shape: tuple, dtype: np.dtype, what: str) -> np.ndarray:
        if out is None:
            return np.empty(shape, dtype)
        if not isinstance(out, np.ndarray) or out.dtype != dtype or not out.flags.c_contiguous or not out.flags.writeable:
            raise InputError(f"{what}: want a writable C-contiguous ndarray of {dtype}")
        if out.size != int(np.prod(shape)):
            raise InputError(f"{what} of shape {out.shape}: want {shape}")
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Codec) and other._member_ids == self._member_ids

    def __hash__(self) -> int:
        return hash(self._member_ids)

    def __repr__(self) -> str:
        q = f", dim={self.dim}" if self.dim is not None else ", codes only"
        g = ", gate" if self.has_gate else ""
        m = f", {len(self._member_ids)} members" if len(self._member_ids) > 1 else ""
        return f"<wmzip.Codec {self.model_id[:12]}: S={self.slots} M={self.subspaces} K={self.alphabet}{q}{g}{m}>"

    def __del__(self) -> None:
        h = getattr(self, "_h", 0)
        if h and lib is not None:
            lib.wmz_codec_free(h)
