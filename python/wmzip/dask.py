"""A fleet's memories as one dataset on Dask: read, search and encode the
.wmz memories under an S3 prefix (or a folder) on a Dask cluster's
workers, each memory read where it lies, through its catalog (the
manifest `wmzip catalog` writes, docs/catalog.md).

    import wmzip.dask as wd
    states = wd.read("s3://bucket/fleet/", codec)        # dask array (N, S, d)
    hits = wd.search("s3://bucket/fleet/", codec, q, k=10) # as wmzip.Memory
    wd.encode(runs, codec, "s3://bucket/fleet/")          # one memory a run

This module needs dask (Debian: python3-dask, and python3-distributed for
a cluster); the rest of the package works without it. Names s3://... are
read with the standard AWS environment variables (AWS_ENDPOINT_URL,
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), which the workers need too.

The codec travels to each worker once (as the bytes of its model, a task
of its own the others depend on) and is loaded once per worker process;
the C library releases the GIL, but a worker of one process and one
thread per core (distributed.LocalCluster(processes=True,
threads_per_worker=1)) scales best: searches run on threads=1 by
default, so that the cores are the workers'.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

try:
    import dask
    import dask.array as da
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError("wmzip.dask needs dask (Debian: python3-dask; pip: dask[array])") from e

from ._catalog import Catalog, load_catalog, update_catalog
from ._codec import Codec
from ._file import File
from ._lib import InputError
from ._search import Hits, Memory
from ._writer import encode as _encode_file

Source = Union[str, "os.PathLike[str]", Catalog]

# ---- the codec, once per worker process

_codecs: Dict[str, Codec] = {}
_codecs_lock = threading.Lock()


def _model_bytes(codec: Union[Codec, bytes, str, "os.PathLike[str]"]) -> bytes:
    if isinstance(codec, Codec):
        return codec.to_bytes()
    if isinstance(codec, (bytes, bytearray, memoryview)):
        return bytes(codec)
    with open(codec, "rb") as f:  # a model file (.wmm)
        return f.read()


def _ident(x: Any) -> Any:
    return x


class _Model:
    """A codec by its model's bytes and their hash: what tasks are given."""

    def __init__(self, data: bytes):
        self.data = data
        self.sha = hashlib.sha256(data).hexdigest()

    def codec(self) -> Codec:
        with _codecs_lock:
            c = _codecs.get(self.sha)
            if c is None:
                c = Codec.from_bytes(self.data)
                _codecs[self.sha] = c
            return c


def _model_task(codec: Any) -> Any:
    m = _Model(_model_bytes(codec))
    return dask.delayed(_ident, pure=True)(m, dask_key_name="wmzip-model-" + m.sha[:16])


def catalog(src: Source, *, refresh: bool = False) -> Catalog:
    """The catalog of src: a Catalog as it is, or the root (an s3:// prefix
    or a folder) whose manifest is read (one request); refresh=True, or a
    root without a manifest, writes or refreshes the manifest first."""
    if isinstance(src, Catalog):
        return src
    name = os.fspath(src)
    if refresh:
        update_catalog(name)
        return load_catalog(name)
    try:
        return load_catalog(name)
    except FileNotFoundError:
        update_catalog(name)
        return load_catalog(name)


# ---- read


def _read_chunk(url: str, entry: Dict[str, Any], model: _Model, e: int, start: int, stop: int,
                codes: bool) -> np.ndarray:
    with File(url, model.codec(), threads=1, entry=entry) as f:
        ep = f.read(e, start, stop, codes=codes, obs=not codes)
        out = ep.codes if codes else ep.obs
        assert out is not None
        return out


def read(src: Source, codec: Any, *, codes: bool = False) -> "da.Array":
    """The states of every memory of src (a Catalog, or a root whose
    catalog is read) as one dask array, memories in key order and their
    episodes in order: (states, S, d) float32 reconstructions, or with
    codes=True (states, S, M) codes. A block is one chunk of one file (the
    catalog says which), so one task decodes one chunk with one ranged
    read; a memory replaced since the catalog was made fails its tasks
    (wmzip.Error naming the catalog) rather than give its bytes. The
    episode boundaries are in the catalog (entry["episodes"])."""
    cat = catalog(src)
    c = codec if isinstance(codec, Codec) else Codec.from_bytes(_model_bytes(codec))
    model = _model_task(c)
    width = c.subspaces if codes else c.dim
    dtype = c.code_dtype if codes else np.dtype(np.float32)
    blocks = []
    for ent in cat.entries:
        url = cat.url(ent)
        ed = dask.delayed(_ident, pure=True)(ent, dask_key_name="wmzip-entry-" + ent["key"] + "-" + ent["etag"])
        for e, chunks in enumerate(ent["chunks"]):
            at = 0
            for n in chunks:
                d = dask.delayed(_read_chunk, pure=True)(url, ed, model, e, at, at + n, codes)
                blocks.append(da.from_delayed(d, shape=(n, c.slots, width), dtype=dtype))
                at += n
    if not blocks:
        return da.zeros((0, c.slots, width), dtype=dtype)
    return da.concatenate(blocks, axis=0)


# ---- search


def _search_group(urls: List[str], entries: List[Dict[str, Any]], model: _Model, queries: np.ndarray, k: int,
                  states: bool, nprobe: Optional[int], threads: int) -> Tuple[Any, ...]:
    """One run of memories searched: (episode, step, slot, distance), each
    (queries, k) (missing neighbours: -1 and inf), episodes numbered
    within the run; and the run's episodes, as the search found them."""
    with Memory(urls, model.codec(), threads=threads, entries=entries) as m:
        if states:
            h = m.states(queries, k, nprobe=nprobe, threads=threads)
        else:
            h = m.slots(queries, k, threads=threads)
        episodes = len(m)
    n = queries.shape[0]

    def full(x: np.ndarray, fill: Any) -> np.ndarray:
        x = x.reshape(n, -1)
        if x.shape[1] == k:
            return x
        return np.concatenate([x, np.full((n, k - x.shape[1]), fill, x.dtype)], axis=1)

    return full(h.episode, -1), full(h.step, -1), full(h.slot, -1), full(h.distance, np.inf), episodes


def _merge(k: int, *parts: Tuple[Any, ...]) -> Tuple[np.ndarray, ...]:
    """The k best of the runs' results, episodes numbered across the runs
    (in order) by the episodes each run found."""
    first, eps = 0, []
    for p in parts:
        eps.append(np.where(p[0] >= 0, p[0] + first, p[0]))
        first += p[4]
    ep = np.concatenate(eps, axis=1)
    st, sl, dist = (np.concatenate([p[i] for p in parts], axis=1) for i in (1, 2, 3))
    order = np.lexsort((sl, st, ep, dist), axis=-1)[:, :k]

    def pick(x: np.ndarray) -> np.ndarray:
        return np.take_along_axis(x, order, axis=1)

    return pick(ep), pick(st), pick(sl), pick(dist)


def groups(cat: Catalog, n: int) -> List[List[int]]:
    """The entries of cat (their positions) in at most n runs of
    consecutive memories of about as many states each."""
    ents = cat.entries
    total = sum(e["states"] for e in ents) or 1
    out: List[List[int]] = [[] for _ in range(max(1, n))]
    at = 0
    for i, e in enumerate(ents):
        out[min(len(out) - 1, (2 * at + e["states"]) * len(out) // (2 * total))].append(i)
        at += e["states"]
    return [g for g in out if g]


def _workers() -> int:
    try:
        from distributed import get_client

        return max(1, len(get_client().scheduler_info()["workers"]))
    except (ImportError, ValueError):
        return os.cpu_count() or 1


def search(src: Source, codec: Any, queries: Any, k: int = 10, *, slots: bool = False, nprobe: Optional[int] = None,
           tasks: Optional[int] = None, threads: int = 1) -> Hits:
    """The k nearest states (slots=True: slot vectors) of each query across
    the memories of src, as wmzip.Memory(urls of the catalog, codec)
    would return them on one machine, episodes numbered across the
    memories in key order: equal results, the same ties (distance, then
    episode, step, slot). The memories are split into tasks runs (default
    two a worker), each searched on a worker through the memories' search
    indexes (two requests a memory: its HEAD and its index object, when
    the catalog's entry still matches), and the k best of the runs kept.
    threads: goroutines a task searches with (default 1: one a core is a
    worker's). Queries as Memory.states and Memory.slots take them."""
    cat = catalog(src)
    if not cat.entries:
        raise InputError(f"{cat.root}: the catalog lists no readable memory")
    q = np.ascontiguousarray(np.asarray(queries))
    c = codec if isinstance(codec, Codec) else Codec.from_bytes(_model_bytes(codec))
    tail = 1 if slots else 2
    if q.ndim < tail:
        raise InputError(f"queries of shape {q.shape}: want (..., S, d) states or (..., d) slot vectors")
    lead = q.shape[:-tail]
    flat = q.reshape((-1,) + q.shape[-tail:])
    model = _model_task(c)
    qd = dask.delayed(_ident, pure=True)(flat, dask_key_name="wmzip-queries-" + dask.base.tokenize(flat))
    parts = []
    for g in groups(cat, tasks or 2 * _workers()):
        urls = [cat.url(cat.entries[i]) for i in g]
        ents = [cat.entries[i] for i in g]
        parts.append(dask.delayed(_search_group, pure=True)(urls, ents, model, qd, k, not slots, nprobe, threads))
    ep, st, sl, dist = dask.compute(dask.delayed(_merge)(k, *parts))[0]
    found = int((ep >= 0).sum(axis=1).max()) if ep.size else 0
    shape = lead + (found,)

    def cut(x: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(x[:, :found]).reshape(shape)

    return Hits(cut(ep), cut(st), cut(sl), cut(dist))


# ---- encode


def _encode_one(url: str, model: _Model, run: Any, options: Dict[str, Any]) -> Dict[str, Any]:
    if callable(run):
        run = run()
    acc = _encode_file(url, model.codec(), run, **options)
    return {"url": url, "states": acc.states, "bytes": acc.bytes}


def encode(runs: Sequence[Any], codec: Any, prefix: str, *, names: Optional[Sequence[str]] = None,
           catalog_update: bool = True, **options: Any) -> Tuple[List[Dict[str, Any]], Optional[Dict[str, Any]]]:
    """Writes each run to a memory of its own under prefix (an s3:// prefix
    or a folder), on the workers, in parallel, and then refreshes the
    prefix's catalog. A run is what wmzip.encode takes (a trajectory
    mapping, or an iterable of episodes), or a function of no arguments
    (or a dask.delayed) that makes one on the worker. names: the
    memories' keys under prefix (default run-00000.wmz, ...). options are
    wmzip.Writer's (lam, distortion, keyframe, threads, ...).

    An object is written by a multipart upload completed only when the
    memory is whole: a task that fails, or a worker that dies, leaves no
    object, and the task run again (Dask retries the tasks of a dead
    worker) writes the same bytes, the encoding being deterministic.
    Returns each memory's (url, states, bytes), and what the catalog
    update did (None with catalog_update=False)."""
    if names is None:
        names = [f"run-{i:05d}.wmz" for i in range(len(runs))]
    if len(names) != len(runs):
        raise InputError(f"{len(names)} names for {len(runs)} runs")
    root = os.fspath(prefix)
    if not root.endswith("/"):
        root += "/"
    model = _model_task(codec)
    tasks = [dask.delayed(_encode_one, pure=True)(root + n, model, r, dict(options)) for n, r in zip(names, runs)]
    done = list(dask.compute(*tasks))
    stats = update_catalog(root) if catalog_update else None
    return done, stats


__all__ = ["catalog", "encode", "groups", "read", "search"]
