"""Writer: a .wmz file written from numpy arrays; Account; encode."""

from __future__ import annotations

import ctypes
import json
import math
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays
from ._codec import Codec
from ._file import Distortion, Episode, _lam
from ._lib import ClosedError, InputError, call, lib, options, out_json


@dataclass(frozen=True)
class Search:
    """The outcome of a distortion target's search.

    Attributes:
        lam: the file's λ (math.inf: nothing cheaper than lossless met the
            target), the largest of lams. A file coded by rate and
            distortion (a codec without a gate) reports math.inf: its λ
            is not recorded.
        lams: the λ the file's chunks are coded at (none when coded by
            rate and distortion).
        distortion: the file's distortion against the target's reference,
            at most the target: of a gated file, what retention cost (its
            quantizer's loss aside); of a file coded by rate and
            distortion, the whole distance to the reference (the lossless
            reconstruction, or the source floats), whichever member wrote
            it.
        encodes: the work of the search, in encodes of the whole file.
    """

    lam: float
    lams: Tuple[float, ...]
    distortion: float
    encodes: float


@dataclass(frozen=True)
class Account:
    """A Writer's record of the states placed so far (of the whole file
    after close).

    Attributes:
        states: states placed in completed chunks.
        retained: coordinates coded; wrong: those left out whose value the
            world model filled in differently (coded by rate and
            distortion: every coordinate is coded, and wrong counts those
            whose value differs from the quantizer's).
        distortion: the mean distortion retention (or the values chosen by
            rate and distortion) gave the slot vectors, against the
            lossless reconstruction of the codec that wrote the file.
        lossless_chunks: chunks of a lossy file coded losslessly, the rule
            saving nothing on them.
        bytes: bytes written to the file so far.
        report: what the file's index records (Distortion): against the
            lossless reconstruction and against the float observations.
        quantizer_distortion: the quantizer's own error on the
            observations written (what even a lossless file loses); of a
            family's lossy file, the quantizer of the member that wrote it,
            against the target's reference.
        search: the distortion target's search, after close; else None.
    """

    states: int
    retained: int
    wrong: int
    distortion: float
    lossless_chunks: int
    bytes: int
    report: Distortion
    quantizer_distortion: float
    search: Optional[Search]

    @classmethod
    def _of(cls, d: dict) -> "Account":
        s = d.get("search")
        search = None
        if s is not None:
            search = Search(_lam(s["lambda"]), tuple(_lam(x) for x in s["lambdas"] or ()), float(s["distortion"]),
                            float(s["encodes"]))
        return cls(d["states"], d["retained"], d["wrong"], float(d["distortion"]), d["lossless_chunks"], d["bytes"],
                   Distortion._of(d["report"]), float(d["quantizer_distortion"]), search)


def _meta_bytes(meta: Any) -> Optional[bytes]:
    if meta is None:
        return None
    if isinstance(meta, (bytes, bytearray)):
        return bytes(meta)
    if isinstance(meta, str):
        return meta.encode()
    return json.dumps(meta).encode()


class Writer:
    """Writes episodes of float observations or codes to a new .wmz file.

    Modes (at most one): lossless (the default); lam, one retention
    trade-off λ for every state (larger keeps more); levels, per-state λs
    chosen with set_level; distortion, the least storage whose distortion
    against the lossless reconstruction is at most this; source_distortion,
    the same against the float observations written (quantizer and
    retention together: what a user of the floats gets back). A distortion
    target holds every state until close, which searches λ and writes the
    file.

    With a codec that has a gate, the lossy modes leave out codes the
    world model fills in. With a family (Codec.train's default), or any
    codec of a quantizer without a gate, they code by rate and distortion:
    every coordinate is coded, with the values of least distortion +
    bits/λ, by one member, which the writer picks (by its calibration at
    λ; for a target, by searching); the file is that member's (File.codec)
    and records no levels, and its level math.inf is that member's own
    codes. A lossless file of a family is its finest member's, whose codes
    (the family's shape) write_state takes. A codec of codes only needs a
    gate for the lossy modes.

    Use it as a context manager: leaving the block completes the file with
    the states written so far, even by an exception (call abort() to
    discard it instead); an exception before any state was written leaves
    no file, not an empty one. The bytes depend only on the codec, the options
    and the states written, never on threads.
    """

    def __init__(
        self,
        path: "str | os.PathLike[str]",
        codec: Codec,
        *,
        distortion: Optional[float] = None,
        source_distortion: Optional[float] = None,
        lam: Optional[float] = None,
        levels: Optional[Sequence[float]] = None,
        keyframe: Optional[int] = None,
        threads: Optional[int] = None,
        embed_model: bool = False,
    ):
        """Creates (or truncates) the file at path. keyframe: the most
        states a chunk holds, 1 to 4096 (default 128): smaller reads at
        random faster, larger compresses better. threads: chunks encoded at
        once (default every core). embed_model: store the model in the
        file, so that it opens without the codec. Invalid options raise
        InputError and touch no file."""
        self._h = 0
        self._state = "open"
        if not isinstance(codec, Codec):
            raise InputError(f"codec: want a wmzip.Codec, not {type(codec).__name__}")
        self.path = os.fspath(path)
        self.codec = codec
        lv = None
        if levels is not None:
            lv = [None if math.isinf(x) else float(x) for x in levels]
        lam_opt = None if lam is None or lam == math.inf else float(lam)  # inf: lossless
        opts = options(**{
            "lambda": lam_opt,
            "levels": lv,
            "distortion": None if distortion is None else float(distortion),
            "source_distortion": None if source_distortion is None else float(source_distortion),
            "keyframe": keyframe,
            "threads": threads,
            "embed_model": True if embed_model else None,
        })
        h = ctypes.c_uint64()
        call("wmz_writer_create", os.fsencode(path), codec._h, opts, ctypes.byref(h), filename=self.path)
        self._h = h.value
        self._act = np.zeros(1, np.int64)
        self._act_addr = self._act.ctypes.data
        self._slots, self._m = codec.slots, codec.subspaces
        self._per_codes = codec.slots * codec.subspaces
        self._per_obs = codec.slots * codec.dim if codec.dim else 0
        self._in_episode = False
        self._written = 0  # states the library took

    @property
    def closed(self) -> bool:
        """Whether the file was completed or aborted."""
        return self._state != "open"

    def _check(self) -> None:
        if self._state != "open":
            raise ClosedError(f"wmzip: the writer of {self.path} is {self._state}")

    def begin_episode(self, meta: Any = None) -> None:
        """Starts an episode; write_state adds its states. meta, if not
        None, is kept with it: JSON (str or bytes) or what json.dumps
        takes. Not available with a distortion target."""
        self._check()
        m = _meta_bytes(meta)
        call("wmz_writer_begin", self._h, m, 0 if m is None else len(m))
        self._in_episode = True

    def write_state(self, state: Any, action: int = -1) -> None:
        """Writes the next state of the episode: float observations (S, d)
        or codes (S, M); action leads into it (-1: none known; the first
        of an episode is ignored)."""
        self._check()
        a = np.asarray(state)
        self._act[0] = action
        if a.dtype.kind == "f":
            if a.dtype != np.float32 or not a.flags.c_contiguous:
                a = _arrays.floats(a)
            if a.size != self._per_obs or not self._per_obs:
                _arrays.states(a, self._slots, self.codec._need_quantizer(), "state", single=True)
            call("wmz_writer_obs", self._h, self._act_addr, 1, a.ctypes.data, a.size)
        else:
            if a.dtype != np.uint8 and a.dtype != np.uint16 or not a.flags.c_contiguous:
                a = _arrays.codes(a, "state")
            if a.size != self._per_codes:
                _arrays.states(a, self._slots, self._m, "state", single=True)
            call("wmz_writer_codes", self._h, self._act_addr, 1, a.ctypes.data, a.size, a.itemsize)
        self._written += 1

    def write_states(self, data: Any, actions: Any = None) -> None:
        """Writes states to the episode: float observations (T, S, d) or
        codes (T, S, M), in one call; actions (T,) lead into them (None:
        none known). A state that is not finite or a code out of range
        writes none of them."""
        self._check()
        arr = np.asarray(data)
        if arr.dtype.kind == "f":
            o = _arrays.floats(arr)
            _, T = _arrays.states(o, self._slots, self.codec._need_quantizer(), "obs")
            acts = self._actions(actions, T)
            call("wmz_writer_obs", self._h, _arrays.addr(acts), T, o.ctypes.data, o.size)
            self._written += T
        else:
            c = _arrays.codes(arr)
            _, T = _arrays.states(c, self._slots, self._m, "codes")
            acts = self._actions(actions, T)
            call("wmz_writer_codes", self._h, _arrays.addr(acts), T, c.ctypes.data, c.size, c.itemsize)
        self._written += T

    def write_episode(self, data: Any, actions: Any = None, meta: Any = None) -> None:
        """Writes a whole episode: float observations (T, S, d) or codes
        (T, S, M), its actions (T,) (None: none known) and its metadata."""
        self._check()
        arr = np.asarray(data)
        if arr.ndim < 1:
            raise InputError(f"an episode of shape {arr.shape}: want (T, S, d) or (T, S, M)")
        self.begin_episode(meta)
        self.write_states(arr, actions)

    @staticmethod
    def _actions(actions: Any, T: int) -> Optional[np.ndarray]:
        if actions is None:
            return None
        a = _arrays.ints(actions, "actions")
        if len(a) != T:
            raise InputError(f"{len(a)} actions for {T} states")
        return a

    def set_level(self, level: int) -> None:
        """Sets the retention level (an index into levels) of the states
        written next."""
        self._check()
        call("wmz_writer_level", self._h, int(level))

    def flush(self) -> None:
        """Writes the completed chunks to the file, so that a crash loses
        at most the states after them (`wmzip recover` keeps the rest)."""
        self._check()
        call("wmz_writer_flush", self._h)

    def account(self) -> Account:
        """The record of the states placed so far (of the whole file after
        close): rates, distortion, the search's outcome."""
        if not self._h:
            raise ClosedError("wmzip: the writer was never opened")
        if self._state == "aborted":
            raise ClosedError(f"wmzip: the writer of {self.path} was aborted")
        return Account._of(out_json(lib.wmz_writer_account, self._h))

    def close(self) -> Account:
        """Completes the file (with a distortion target: searches λ and
        writes it) and returns the account. Closing again returns it again."""
        if self._state == "aborted":
            raise ClosedError(f"wmzip: the writer of {self.path} was aborted")
        if self._state == "open":
            self._state = "completed"
            call("wmz_writer_close", self._h)
        return self.account()

    def abort(self) -> None:
        """Discards the file: closes it without completing it and removes
        it. It does nothing to a completed file."""
        if self._state == "open":
            self._state = "aborted"
            call("wmz_writer_abort", self._h)

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        if self._state != "open":
            return
        if exc_type is not None and self._written == 0:
            self.abort()  # nothing to keep: no empty file that looks complete
        else:
            self.close()

    def __del__(self) -> None:
        h = getattr(self, "_h", 0)
        if not h or lib is None:
            return
        if self._state == "open":
            warnings.warn(f"unclosed wmzip.Writer {self.path!r}: the file is left incomplete", ResourceWarning, stacklevel=2)
        lib.wmz_writer_free(h)

    def __repr__(self) -> str:
        return f"<wmzip.Writer {self.path!r}: {self._state}>"


EpisodeLike = Union[Episode, Mapping, Tuple[Any, Any]]


def _episodes(episodes: Any) -> Iterable[Tuple[Any, Any, Any]]:
    """(data, actions, meta) of each episode: of a trajectory mapping (obs
    or codes, actions, episode_start: an np.load of a trajectory .npz
    will do) or of an iterable of Episodes, mappings or (data, actions)
    pairs."""
    if isinstance(episodes, Mapping) and ("obs" in episodes or "codes" in episodes):
        data = episodes["obs"] if "obs" in episodes else episodes["codes"]
        T = len(data)
        actions = episodes["actions"] if "actions" in episodes else None
        starts = list(np.asarray(episodes["episode_start"]).tolist()) if "episode_start" in episodes else [0]
        if T == 0:
            return
        bounds = starts + [T]
        for a, b in zip(bounds, bounds[1:]):
            yield data[a:b], None if actions is None else actions[a:b], None
        return
    for ep in episodes:
        if isinstance(ep, Episode):
            yield (ep.obs if ep.obs is not None else ep.codes), ep.actions, ep.meta
        elif isinstance(ep, Mapping):
            data = ep["obs"] if ep.get("obs") is not None else ep["codes"]
            yield data, ep.get("actions"), ep.get("meta")
        else:
            data, actions = ep
            yield data, actions, None


def encode(path: "str | os.PathLike[str]", codec: Codec, episodes: Any, **writer_options: Any) -> Account:
    """Writes episodes to a new .wmz file at path in one call and returns
    the Writer's account. episodes: a trajectory mapping (obs or codes,
    actions, episode_start; np.load of a trajectory .npz will do) or an
    iterable of Episodes, mappings or (data, actions) pairs.
    writer_options are Writer's (distortion, source_distortion, lam, ...).
    On an error the file is removed."""
    w = Writer(path, codec, **writer_options)
    try:
        for data, actions, meta in _episodes(episodes):
            w.write_episode(data, actions, meta)
        return w.close()
    except BaseException:
        w.abort()
        raise
