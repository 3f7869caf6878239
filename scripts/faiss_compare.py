#!/usr/bin/python3
"""Train faiss OPQMatrix + ProductQuantizer on slot vectors and print its figures.

Reads the `obs` array (float32 [T,S,d]) of a trajectory .npz, pools the slot
vectors, trains faiss's OPQ rotation and a product quantizer with the given M
and bits on a training sample, and reports relative MSE (sum of squared errors
over sum of squared norms) on the training and held-out vectors, training
seconds and encode throughput (vectors/s, median of repeats) with a fixed
thread count. Prints one JSON object, shaped like faiss_ref.json.

With --table a.json b.json ... it prints result files (of this script or of
opqbench) side by side instead, and the ratios of the first to the second.

The sample rule matches opqbench: with n vectors and a sample of s < n, vector
i*n//s is taken for i in 0..s-1.
"""
import argparse
import json
import sys
import time

np = None  # numpy and faiss are imported in main: --table needs neither
faiss = None


def load(path):
    obs = np.load(path)["obs"]
    return np.ascontiguousarray(obs.reshape(-1, obs.shape[-1]).astype(np.float32))


def sample(x, s):
    n = x.shape[0]
    if s <= 0 or s >= n:
        return x
    idx = (np.arange(s, dtype=np.int64) * n) // s
    return np.ascontiguousarray(x[idx])


def encode(opq, pq, x):
    return pq.compute_codes(opq.apply_py(x))


def evaluate(opq, pq, x, repeats):
    times = []
    codes = None
    for _ in range(repeats):
        t = time.perf_counter()
        codes = encode(opq, pq, x)
        times.append(time.perf_counter() - t)
    rec = opq.reverse_transform(pq.decode(codes))
    err = float(((rec.astype(np.float64) - x) ** 2).sum())
    norm = float((x.astype(np.float64) ** 2).sum())
    return {
        "rel_mse": err / norm,
        "mse": err / x.shape[0],
        "encode_vectors_per_s": x.shape[0] / float(np.median(times)),
    }


def table(paths):
    """Print the figures of several result files side by side."""
    runs = []
    for p in paths:
        with open(p) as f:
            runs.append(json.load(f))
    rows = [
        ("implementation", lambda r: r.get("impl", "?")),
        ("M x bits", lambda r: "%d x %d" % (r["M"], r["nbits"])),
        ("training vectors", lambda r: "%d" % r["train_vectors"]),
        ("threads", lambda r: str(r.get("threads", "?"))),
        ("rel MSE train", lambda r: "%.5f" % r["train"]["rel_mse"]),
        ("rel MSE test", lambda r: "%.5f" % r["test"]["rel_mse"]),
        ("training s", lambda r: "%.1f" % r["train_seconds"] if r.get("train_seconds") else "?"),
        ("encode vec/s train", lambda r: "%.0f" % r["train"]["encode_vectors_per_s"]),
        ("encode vec/s test", lambda r: "%.0f" % r["test"]["encode_vectors_per_s"]),
    ]
    w = max(len(n) for n, _ in rows)
    cols = [[f(r) for r in runs] for _, f in rows]
    cw = max(len(c) for row in cols for c in row)
    for (name, _), vals in zip(rows, cols):
        print(name.ljust(w), "  ".join(v.rjust(cw) for v in vals))
    if len(runs) >= 2:
        a, b = runs[0], runs[1]
        print("%s / %s: rel MSE test %.3f, training time %.3f, encode (test) %.3f" % (
            a.get("impl"), b.get("impl"),
            a["test"]["rel_mse"] / b["test"]["rel_mse"],
            a["train_seconds"] / b["train_seconds"],
            a["test"]["encode_vectors_per_s"] / b["test"]["encode_vectors_per_s"]))


def main():
    global faiss, np
    if len(sys.argv) > 1 and sys.argv[1] == "--table":
        table(sys.argv[2:])
        return
    try:
        import numpy
        import faiss as f
    except ImportError:
        sys.exit("faiss_compare.py: numpy or python3-faiss is missing for " + sys.executable)
    faiss, np = f, numpy
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--M", type=int, default=32)
    ap.add_argument("--nbits", type=int, default=6)
    ap.add_argument("--sample", type=int, default=0, help="training vectors (0 = all)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--save", help="write the trained OPQ and PQ to this prefix")
    ap.add_argument("--load", help="skip training: read OPQ and PQ from this prefix")
    args = ap.parse_args()

    faiss.omp_set_num_threads(args.threads)
    xtrain = load(args.train)
    xtest = load(args.test)
    xs = sample(xtrain, args.sample)
    d = xtrain.shape[1]

    train_s = None
    if args.load:
        opq = faiss.downcast_VectorTransform(faiss.read_VectorTransform(args.load + ".opq"))
        pq = faiss.read_ProductQuantizer(args.load + ".pq")
        with open(args.load + ".json") as f:
            train_s = json.load(f).get("train_seconds")
    else:
        opq = faiss.OPQMatrix(d, args.M)
        pq = faiss.ProductQuantizer(d, args.M, args.nbits)
        t = time.perf_counter()
        opq.train(xs)
        pq.train(opq.apply_py(xs))
        train_s = time.perf_counter() - t
        if args.save:
            faiss.write_VectorTransform(opq, args.save + ".opq")
            faiss.write_ProductQuantizer(pq, args.save + ".pq")
            with open(args.save + ".json", "w") as f:
                json.dump({"train_seconds": train_s}, f)

    out = {
        "impl": "faiss " + faiss.__version__,
        "M": args.M,
        "nbits": args.nbits,
        "threads": args.threads,
        "train_vectors": int(xs.shape[0]),
        "train_seconds": train_s,
        "train": evaluate(opq, pq, xtrain, args.repeats),
        "test": evaluate(opq, pq, xtest, args.repeats),
    }
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
