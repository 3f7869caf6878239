"""Fleet figures of wmzip.dask (docs/results-fleet.md), against the S3
server whose address the standard AWS variables give (eval "$(bash
scripts/s3server.sh start)"):

- search: the same queries over the same fleet on a LocalCluster of one
  worker and of two (processes of one thread each), rounds alternating
  which goes first; medians of wall time and the ratio of medians, and
  of the CPU seconds of the busiest worker (what the wall time would be
  with a core a worker to itself);
- catalog: 1,000 memories under a prefix: the first update, an update
  with nothing changed, and a load (one request), medians of rounds.

    .venv/bin/python python/bench/fleet.py [--memories 100] [--states 2000] [--queries 64]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time
import uuid

import numpy as np

import wmzip
import wmzip.dask as wd

S, D, M, K = 4, 32, 8, 16
BOOK = np.random.default_rng(1).standard_normal((M, K, D // M)).astype(np.float32)


def walk(seed: int, episodes: int, steps: int) -> list:
    r = np.random.default_rng(seed)
    out = []
    for _ in range(episodes):
        codes = np.cumsum(r.integers(0, 2, (steps, S, M)), axis=0) % K
        obs = BOOK[np.arange(M), codes].reshape(steps, S, D) + 0.05 * r.standard_normal((steps, S, D))
        out.append((obs.astype(np.float32), r.integers(0, 4, steps)))
    return out


class Walk:
    """A run made on the worker (so the graph stays small)."""

    def __init__(self, seed: int, episodes: int, steps: int):
        self.seed, self.episodes, self.steps = seed, episodes, steps

    def __call__(self) -> list:
        return walk(self.seed, self.episodes, self.steps)


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cluster(n: int):
    from distributed import Client, LocalCluster

    c = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
    return c, Client(c)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=100)
    ap.add_argument("--states", type=int, default=2000, help="states a memory")
    ap.add_argument("--queries", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--catalog", type=int, default=1000, help="memories of the catalog figures (0: none)")
    ap.add_argument("--bucket", default="wmzip")
    args = ap.parse_args()
    import cloudpickle
    import sys

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    tr = walk(0, 8, 50)
    obs = np.concatenate([o for o, _ in tr])
    codec = wmzip.Codec.train(obs, actions=np.concatenate([a for _, a in tr]),
                              episode_start=np.arange(0, len(obs), 50), quantizer="single")
    tag = uuid.uuid4().hex[:8]
    out: dict = {"load_before": os.getloadavg()}
    root = f"s3://{args.bucket}/bench-fleet-{tag}/"
    cl, client = cluster(2)
    try:
        runs = [Walk(1000 + i, max(1, args.states // 100), 100) for i in range(args.memories)]
        t0 = time.perf_counter()
        wd.encode(runs, codec, root, keyframe=64)
        out["encode_s"] = time.perf_counter() - t0
        cat = wmzip.load_catalog(root)
        with wmzip.Memory(cat.urls, codec, save=True, entries=cat.entries):
            pass
        wmzip.update_catalog(root)
        if args.catalog:
            croot = f"s3://{args.bucket}/bench-catalog-{tag}/"
            wd.encode([Walk(5000 + i, 1, 20) for i in range(args.catalog)], codec, croot, keyframe=16,
                      catalog_update=False)
    finally:
        client.close()
        cl.close()
    cat = wmzip.load_catalog(root)
    q = np.concatenate([walk(7, 1, args.queries)[0][0]])
    with wmzip.Memory(cat.urls, codec) as m:
        want = m.states(q, k=10)
    times: dict = {1: [], 2: []}
    busiest: dict = {1: [], 2: []}  # CPU seconds of the busiest worker a search
    for r in range(args.rounds):
        for n in ((1, 2) if r % 2 == 0 else (2, 1)):
            cl, client = cluster(n)
            try:
                client.run(lambda: None)
                h = wd.search(cat, codec, q, k=10)  # warm: codec and library loaded per worker
                assert all(np.array_equal(a, b) for a, b in zip(h, want)), "fleet search differs from local"
                c0 = client.run(cpu_seconds)
                t0 = time.perf_counter()
                for _ in range(3):
                    wd.search(cat, codec, q, k=10)
                times[n].append((time.perf_counter() - t0) / 3)
                c1 = client.run(cpu_seconds)
                busiest[n].append(max(c1[w] - c0[w] for w in c1) / 3)
            finally:
                client.close()
                cl.close()
    out["search_s"] = {str(n): statistics.median(v) for n, v in times.items()}
    out["search_rounds"] = {str(n): v for n, v in times.items()}
    out["speedup"] = out["search_s"]["1"] / out["search_s"]["2"]
    out["busiest_worker_cpu_s"] = {str(n): statistics.median(v) for n, v in busiest.items()}
    out["cpu_speedup"] = out["busiest_worker_cpu_s"]["1"] / out["busiest_worker_cpu_s"]["2"]
    out["fleet"] = {"memories": len(cat), "states": cat.states, "bytes": cat.bytes}
    if args.catalog:
        first = time.perf_counter()
        st = wmzip.update_catalog(croot)
        out["catalog_first_update_s"] = time.perf_counter() - first
        out["catalog_first_update_requests"] = st["Requests"]
        upd, load = [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            st = wmzip.update_catalog(croot)
            upd.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            c = wmzip.load_catalog(croot)
            load.append(time.perf_counter() - t0)
        out["catalog_update_unchanged_s"] = statistics.median(upd)
        out["catalog_update_unchanged_requests"] = st["Requests"]
        out["catalog_load_s"] = statistics.median(load)
        out["catalog_memories"] = len(c)
        out["catalog_manifest_bytes"] = len(json.dumps(c.doc))
    out["load_after"] = os.getloadavg()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
