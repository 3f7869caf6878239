"""Memory: .wmz files searched for the nearest neighbours of queries;
Hits, IndexInfo."""

from __future__ import annotations

import bisect
import ctypes
import os
import warnings
from dataclasses import dataclass
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays
from ._codec import Codec
from ._lib import ClosedError, InputError, call, lib, options, out_json

PathLike = Union[str, "os.PathLike[str]"]
Bounds = Union[None, range, Tuple[Optional[int], Optional[int]], Sequence[Optional[int]]]

MAX_K = 1 << 20


class Hits(NamedTuple):
    """The nearest neighbours of queries, nearest first.

    For one query each array has shape (k,); for a batch of queries shaped
    (n, ...) or (n1, n2, ...), shape (n, k) or (n1, n2, k). k is at most
    the k asked: fewer when the memory, or the part of it the filters
    leave, holds fewer. A state query that probes only some cells (nprobe)
    may find fewer than others of its batch: its row is padded with
    episode, step and slot -1 and distance inf.

    Attributes:
        episode: int64, the neighbour's episode, numbered across the files
            of the Memory in order (Memory.locate turns it back).
        step: int64, its step in the episode.
        slot: int64, its slot (-1 for a state query).
        distance: float64, the squared Euclidean distance between the query
            and the neighbour's reconstruction (a state's summed over its
            slots).
    """

    episode: np.ndarray
    step: np.ndarray
    slot: np.ndarray
    distance: np.ndarray


@dataclass(frozen=True)
class IndexInfo:
    """How a Memory came by the index of one of its files.

    Attributes:
        path: the .wmz file.
        episodes: the number of states of each of its episodes.
        index: "loaded" (the index beside the file, its .wmzi, was current)
            or "built" (decoded from the file when the Memory was opened).
        reason: why it was built: "no index", or what was wrong with the
            one there (stale: the file or the model changed); "" if loaded.
        saved: a built index was written beside the file (save=True).
        index_bytes: the size of the index's file.
        cells: the cells of its coarse partition of states (0: none).
    """

    path: str
    episodes: Tuple[int, ...]
    index: str
    reason: str
    saved: bool
    index_bytes: int
    cells: int

    @property
    def loaded(self) -> bool:
        return self.index == "loaded"

    @property
    def states(self) -> int:
        return sum(self.episodes)


def _bounds(name: str, v: Bounds) -> Optional[List[int]]:
    """A filter as the library takes it: [first, end], end 0 for none."""
    if v is None:
        return None
    a: Optional[int]
    b: Optional[int]
    if isinstance(v, range):
        if v.step != 1:
            raise InputError(f"{name} {v!r}: want a range of step 1")
        a, b = v.start, v.stop
    else:
        try:
            a, b = v
        except (TypeError, ValueError):
            raise InputError(f"{name} {v!r}: want (first, end), end excluded, either None for no bound") from None
    first = 0 if a is None else int(a)
    if first < 0:
        raise InputError(f"{name} ({a}, {b}): want first >= 0")
    if b is None:
        return [first, 0]
    end = int(b)
    if end <= first:
        raise InputError(f"{name} ({a}, {b}): an empty range, want end > first (or None for no bound)")
    return [first, end]


class Memory:
    """.wmz files searched together for the slot vectors or states nearest
    a query: Memory(paths, codec).

    The distance is asymmetric: between the query (floats, or the
    reconstruction of codes) and the reconstruction of the stored codes;
    ranks are decided in integers, ties broken by episode, step and slot,
    so the results are the same on every machine and the same as those of
    `wmzip search --json` over the same files. Episodes are numbered
    across the files in the order given, as `wmzip decode` numbers them.

    Opening loads each file's index (its .wmzi beside it, which `wmzip
    index` writes) when it is current, and builds it from the file
    otherwise, which decodes the file whole; info tells which happened,
    and save=True keeps a built index for the next time.

    Searches release the GIL and may run from several threads at once.
    Close the Memory (or use it as a context manager) to release it;
    closing twice is fine.
    """

    def __init__(self, paths: Union[PathLike, Sequence[PathLike]], codec: Optional[Codec] = None, *,
                 threads: Optional[int] = None, save: bool = False, entries: Optional[Sequence[dict]] = None):
        """Opens the .wmz files at paths (one path or a sequence of them),
        searched with codec, or with the model the first file embeds when
        codec is None; every file must be written with that codec, a codec
        with a quantizer. Given a family, the memory is searched with the
        member that wrote the files (self.codec; lossy files of a family are
        each written by one member, and the files searched together must
        all be the same member's). threads: goroutines that build a missing
        index (default: every core). save: write an index built here beside
        its file. Paths may name objects, s3://bucket/key (wmzip.catalog);
        entries, the files' entries of a catalog (one a path), spare
        requests and are checked against the files."""
        self._h = 0
        self._closed = True
        if isinstance(paths, (str, bytes, os.PathLike)):
            paths = [paths]  # type: ignore[list-item]
        self.paths: Tuple[str, ...] = tuple(os.fsdecode(p) for p in paths)  # type: ignore[arg-type]
        if not self.paths:
            raise InputError("Memory: no .wmz files to search")
        if codec is not None and not isinstance(codec, Codec):
            raise InputError(f"codec: want a wmzip.Codec, not {type(codec).__name__}")
        names = (ctypes.c_char_p * len(self.paths))(*(os.fsencode(p) for p in self.paths))
        h = ctypes.c_uint64()
        missing = next((p for p in self.paths if not p.startswith("s3://") and not os.path.exists(p)), None)
        call("wmz_search_open", names, len(self.paths), codec._h if codec else 0,
             options(threads=threads, save=save or None, entries=None if entries is None else list(entries)),
             ctypes.byref(h), filename=missing)
        self._h = h.value
        self._closed = False
        c = ctypes.c_uint64()
        call("wmz_search_codec", self._h, ctypes.byref(c))
        used = Codec._wrap(c.value)
        self.codec: Codec = codec if used == codec else used
        info = out_json(lib.wmz_search_info, self._h)
        self.info: Tuple[IndexInfo, ...] = tuple(
            IndexInfo(f["path"], tuple(f["episodes"]), f["index"], f.get("reason", ""), f["saved"], f["index_bytes"],
                      f["cells"])
            for f in info["files"])
        self.model_id: str = info["model_id"]
        self._lens = tuple(n for f in self.info for n in f.episodes)
        first, at = [], 0
        for f in self.info:
            first.append(at)
            at += len(f.episodes)
        self._first = first

    # ---- what it holds

    @property
    def episodes(self) -> Tuple[int, ...]:
        """The number of states of each episode of the memory, across the
        files in order."""
        return self._lens

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        return len(self._lens)

    def locate(self, episode: int) -> Tuple[int, int]:
        """(file, episode): the position among paths of the file that holds
        memory episode episode, and its number in that file."""
        e = int(episode)
        if not 0 <= e < len(self._lens):
            raise IndexError(f"episode {e} out of range: the memory has {len(self._lens)}")
        f = bisect.bisect_right(self._first, e) - 1
        return f, e - self._first[f]

    # ---- searches

    def slots(self, query: Any, k: int = 10, *, episodes: Bounds = None, steps: Bounds = None,
              threads: Optional[int] = None) -> Hits:
        """The k nearest stored slot vectors of each query: a slot vector
        of d floats, shape (d,), or a batch (n, d) (or more leading
        dimensions); or codes (integers, M of them: (M,) or (n, M), M of
        self.codec), which stand for their reconstruction.

        episodes=(first, end) and steps=(first, end) search only memory
        episodes first..end-1 and steps first..end-1 of each episode (end
        None: no bound; a range works too). threads: goroutines of the
        search (default: every core); the results do not depend on it."""
        return self._search(query, False, k, episodes, steps, None, threads)

    def states(self, query: Any, k: int = 10, *, episodes: Bounds = None, steps: Bounds = None,
               nprobe: Optional[int] = None, threads: Optional[int] = None) -> Hits:
        """The k nearest stored states of each query: a state of S slot
        vectors, shape (S, d), or a batch (n, S, d); or a state's codes,
        (S, M) or (n, S, M), as File.codes returns them (of self.codec, the
        codec that wrote the files). The distance is summed over the
        slots.

        nprobe: scan only the nprobe cells of each file's partition nearest
        the query (files large enough to have one, see IndexInfo.cells);
        default every state. episodes, steps, threads: as for slots."""
        return self._search(query, True, k, episodes, steps, nprobe, threads)

    def _search(self, query: Any, states: bool, k: int, episodes: Bounds, steps: Bounds, nprobe: Optional[int],
                threads: Optional[int]) -> Hits:
        self._check()
        k = int(k)
        if not 1 <= k <= MAX_K:
            raise InputError(f"k {k}: want 1 to {MAX_K} neighbours a query")
        c = self.codec
        a = np.asarray(query)
        floats = a.dtype.kind == "f"
        if floats:
            q = _arrays.floats(a, "query")
            width = c._need_quantizer()
        else:
            q = _arrays.codes(a, "query")
            width = c.subspaces
        what = "query (floats)" if floats else "query (codes)"
        if states:
            lead, n = _arrays.states(q, c.slots, width, what)
        else:
            if q.ndim == 0 or q.shape[-1] != width:
                raise InputError(f"{what} of shape {q.shape}: want (..., {width}), slot vectors of {width}")
            lead = q.shape[:-1]
            n = q.size // width
        if n == 0:
            empty = np.zeros(lead + (0,), np.int64)
            return Hits(empty, empty.copy(), empty.copy(), np.zeros(lead + (0,), np.float64))
        opts = options(episodes=_bounds("episodes", episodes), steps=_bounds("steps", steps), nprobe=nprobe,
                       threads=threads)
        need = n * k
        ep, st, sl = (np.empty(need, np.int64) for _ in range(3))
        dist = np.empty(need, np.float64)
        size = ctypes.c_size_t()
        arrays = (ep.ctypes.data, st.ctypes.data, sl.ctypes.data, dist.ctypes.data, need, ctypes.byref(size))
        if floats:
            call("wmz_search_floats", self._h, q.ctypes.data, q.size, int(states), k, opts, *arrays)
        else:
            call("wmz_search_codes", self._h, q.ctypes.data, q.size, q.itemsize, int(states), k, opts, *arrays)
        found = int((ep.reshape(n, k) >= 0).sum(axis=1).max())
        shape = lead + (found,)

        def cut(x: np.ndarray) -> np.ndarray:
            return np.ascontiguousarray(x.reshape(n, k)[:, :found]).reshape(shape)

        return Hits(cut(ep), cut(st), cut(sl), cut(dist))

    # ---- lifetime

    def _check(self) -> None:
        if self._closed:
            raise ClosedError(f"wmzip: the Memory of {', '.join(self.paths)} is closed")

    def close(self) -> None:
        """Closes the memory; searches in flight finish first. Closing
        again does nothing."""
        if self._h and not self._closed:
            self._closed = True
            call("wmz_search_close", self._h)

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_h", 0) and not self._closed and lib is not None:
            warnings.warn(f"unclosed wmzip.Memory of {self.paths!r}", ResourceWarning, stacklevel=2)
            self._closed = True
            lib.wmz_search_close(self._h)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._lens)} episodes, {sum(self._lens)} states"
        return f"<wmzip.Memory of {len(self.paths)} file(s): {state}>"

