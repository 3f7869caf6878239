#!/usr/bin/python3
"""wmzip's ADC search beside faiss's IndexPQ on the same data.

Trains faiss's OPQ rotation and a product quantizer (M subspaces of `bits`
bits) on the slot vectors of a training trajectory, then on a test
trajectory (memory: its episodes but the last sixth; queries: slot vectors
spread evenly over the held-out ones, as `wmzip bench retrieval` takes
them) reports:

- recall@k of faiss's IndexPQ (OPQ applied) against exact float nearest
  neighbours;
- that the same codes and codebooks give the same top-k in wmzip's search
  (package search, through scripts/retrieval_faiss) as in IndexPQ, ties
  and float rounding aside;
- single-thread flat-scan throughput of both, vectors/s, timed in turn in
  this one run over the memory tiled to about half a million vectors;
- faiss's partitioned IndexIVFPQ (same M and bits, nlist about 4·√n) on
  the memory: recall and single-thread time against its flat IndexPQ at
  several nprobe. (wmzip partitions states, not slot vectors: its
  partitioned search is measured by `wmzip search --nprobe`, see
  docs/results-retrieval.md.)

Prints one JSON object. Needs Debian's python3-faiss (run with
/usr/bin/python3) and a Go toolchain.

    /usr/bin/python3 scripts/retrieval_faiss.py --train train.npz test.npz
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import faiss


def slots(path):
    d = np.load(path)
    obs = d["obs"].astype(np.float32)
    starts = d["episode_start"] if "episode_start" in d else np.array([0])
    return obs, list(starts) + [obs.shape[0]]


def evenly(n, total):
    n = min(n, total)
    return (np.arange(n, dtype=np.int64) * total) // n


def unpack(codes, m, nbits):
    """faiss's packed PQ codes (LSB first) to one integer per subspace."""
    bits = np.unpackbits(codes, axis=1, bitorder="little")[:, : m * nbits]
    bits = bits.reshape(codes.shape[0], m, nbits).astype(np.int64)
    return (bits << np.arange(nbits)).sum(axis=2).astype(np.uint8)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", required=True)
    ap.add_argument("test")
    ap.add_argument("-M", type=int, default=32)
    ap.add_argument("--bits", type=int, default=6)
    ap.add_argument("--sample", type=int, default=16384, help="training slot vectors")
    ap.add_argument("--opq-iters", type=int, default=10)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--timed-queries", type=int, default=20)
    ap.add_argument("--tile-to", type=int, default=500000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("-k", type=int, default=10)
    a = ap.parse_args()

    tobs, _ = slots(a.train)
    d = tobs.shape[-1]
    xt = tobs.reshape(-1, d)
    xt = np.ascontiguousarray(xt[evenly(a.sample, xt.shape[0])])
    t0 = time.perf_counter()
    opq = faiss.OPQMatrix(d, a.M)
    opq.niter = a.opq_iters
    opq.train(xt)
    xr = opq.apply_py(xt)
    pq = faiss.IndexPQ(d, a.M, a.bits)
    pq.train(xr)
    train_s = time.perf_counter() - t0

    obs, bounds = slots(a.test)
    S = obs.shape[1]
    ne = len(bounds) - 1
    hold = max(1, ne // 6)
    mem_states = bounds[ne - hold]
    mem = np.ascontiguousarray(obs[:mem_states].reshape(-1, d))
    held = obs[mem_states:].reshape(-1, d)
    q = np.ascontiguousarray(held[evenly(a.queries, held.shape[0])])

    flat = faiss.IndexFlatL2(d)
    flat.add(mem)
    _, truth = flat.search(q, a.k)
    pq.add(opq.apply_py(mem))
    qr = opq.apply_py(q)
    fd, fi = pq.search(qr, a.k)
    recall = float(np.mean([len(set(fi[i]) & set(truth[i])) / a.k for i in range(len(q))]))

    # The same codes and codebooks, searched by wmzip.
    codes = unpack(faiss.vector_to_array(pq.codes).reshape(mem.shape[0], -1), a.M, a.bits)
    rot = faiss.vector_to_array(opq.A).reshape(d, d).astype(np.float32)
    cent = faiss.vector_to_array(pq.pq.centroids).reshape(a.M, 1 << a.bits, d // a.M).astype(np.float32)
    tile = max(1, a.tile_to // mem.shape[0])
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "dump.npz")
        np.savez(dump, rot=rot, cent=cent, codes=codes, queries=q[: a.timed_queries], tile=np.array([tile], dtype=np.int64))
        np.savez(os.path.join(tmp, "all.npz"), rot=rot, cent=cent, codes=codes, queries=q, tile=np.array([1], dtype=np.int64))
        run = lambda p, rep: json.loads(subprocess.run(
            ["go", "run", os.path.join(here, "retrieval_faiss"), "-k", str(a.k), "-repeat", str(rep), p],
            check=True, capture_output=True, text=True, cwd=os.path.dirname(here)).stdout)
        w = run(os.path.join(tmp, "all.npz"), 1)
        wi, wd = np.array(w["ids"]), np.array(w["distances"])
        agree = 0
        for i in range(len(q)):
            if set(wi[i]) == set(fi[i]):
                agree += 1
                continue
            # Ties aside: the lists may differ only among neighbours at the
            # k-th distance.
            kth = fd[i][-1]
            diff = set(wi[i]) ^ set(fi[i])
            dd = {**dict(zip(fi[i], fd[i])), **dict(zip(wi[i], wd[i]))}
            if all(abs(dd[j] - kth) <= 1e-4 * max(1.0, kth) for j in diff):
                agree += 1
        wrecall = float(np.mean([len(set(wi[i]) & set(truth[i])) / a.k for i in range(len(q))]))
        maxdiff = float(np.max(np.abs(np.sort(wd, axis=1) - np.sort(fd, axis=1)) / np.maximum(1.0, np.abs(fd))))

        # Throughput, single thread, timed in turn.
        faiss.omp_set_num_threads(1)
        big = faiss.IndexPQ(d, a.M, a.bits)
        big.pq = pq.pq
        big.is_trained = True
        allc = faiss.vector_to_array(pq.codes)
        big.codes.resize(0)
        faiss.copy_array_to_vector(np.tile(allc, tile), big.codes)
        big.ntotal = mem.shape[0] * tile
        tq = np.ascontiguousarray(qr[: a.timed_queries])
        ft, wt = [], []
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            big.search(tq, a.k)
            ft.append(time.perf_counter() - t0)
            wt.append(run(dump, 1)["scan_seconds"])
        n = big.ntotal * len(tq)
        fv, wv = n / float(np.median(ft)), n / float(np.median(wt))
        # For reference: faiss with byte-aligned codes (8 bits, K = 256, its
        # fastest IndexPQ path), random codes, same size.
        pq8 = faiss.IndexPQ(d, a.M, 8)
        pq8.train(np.ascontiguousarray(xr[: 256 * 40]))
        pq8.codes.resize(0)
        faiss.copy_array_to_vector(np.random.default_rng(1).integers(0, 256, size=big.ntotal * a.M, dtype=np.uint8), pq8.codes)
        pq8.ntotal = big.ntotal
        f8 = []
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            pq8.search(tq, a.k)
            f8.append(time.perf_counter() - t0)
        f8v = n / float(np.median(f8))

        # Partitioned: faiss's IndexIVFPQ (the same M and bits, residuals
        # coded, nlist about 4·√n) on the untiled memory, against its flat
        # IndexPQ, one thread, every query, at several nprobe.
        nlist = max(8, min(int(4 * np.sqrt(mem.shape[0])), xr.shape[0] // 39))
        coarse = faiss.IndexFlatL2(d)
        ivf = faiss.IndexIVFPQ(coarse, d, nlist, a.M, a.bits)
        ivf.train(xr)
        ivf.add(opq.apply_py(mem))
        def timed(index, reps):
            ts = []
            for _ in range(reps):
                t0 = time.perf_counter()
                _, ids = index.search(qr, a.k)
                ts.append(time.perf_counter() - t0)
            return ids, float(np.median(ts))
        _, flat_s = timed(pq, a.repeat)
        ivf_rows = []
        for nprobe in (1, 2, 4, 8, 16, 32):
            if nprobe > nlist:
                break
            ivf.nprobe = nprobe
            ids, sec = timed(ivf, a.repeat)
            r = float(np.mean([len(set(ids[i]) & set(truth[i])) / a.k for i in range(len(q))]))
            ivf_rows.append({"nprobe": nprobe, "recall": round(r, 4),
                             "recall_vs_flat": round(r / recall, 3),
                             "time_vs_flat": round(sec / flat_s, 3)})

    print(json.dumps({
        "train": a.train, "test": a.test, "M": a.M, "bits": a.bits,
        "faiss_version": faiss.__version__, "faiss_train_seconds": round(train_s, 1),
        "memory_vectors": int(mem.shape[0]), "queries": int(len(q)), "k": a.k,
        "recall_exact_float": {"faiss_IndexPQ": recall, "wmzip_same_codes": wrecall},
        "same_topk_as_IndexPQ_ties_aside": f"{agree}/{len(q)}",
        "max_relative_distance_difference": maxdiff,
        "single_thread_scan": {"vectors": int(big.ntotal), "queries": int(len(tq)),
                               "faiss_vectors_per_s": round(fv), "wmzip_vectors_per_s": round(wv),
                               "wmzip_over_faiss": round(wv / fv, 3), "repeats": a.repeat,
                               "faiss_8bit_codes_vectors_per_s": round(f8v)},
        "faiss_IndexIVFPQ": {"nlist": nlist, "vectors": int(mem.shape[0]), "queries": int(len(q)),
                             "flat_IndexPQ_seconds": round(flat_s, 4), "by_nprobe": ivf_rows},
    }, indent=1))


if __name__ == "__main__":
    main()
