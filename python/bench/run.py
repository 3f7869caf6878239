"""Times the Python package against the Go library on the same inputs,
side by side in one run (issue 28's speed bars):

- one random state read, the file open and the codec loaded once:
  File.codes / File.obs from Python against File.State / File.Obs in Go,
  the same reads in the same order;
- writing 10,000 states from numpy, lossless, from creating the file to
  closing it: Writer.write_state per state (and write_episode per episode)
  against the Go Writer's WriteCodes / WriteObs per state.

Data: Graph World's walks (32 slots × 32 codes below 64: 1,024
coordinates a state), and float observations of their structure (32 slot
vectors of 64 floats). Each round runs every measurement once in Go and
once in Python, alternating which goes first, each in a fresh process; the
figures are medians over rounds (wall time, and CPU time, which a loaded
machine disturbs less), the ratios Python/Go medians of the rounds'
ratios. Run it with the Python that has wmzip installed:

    .venv/bin/python python/bench/run.py [--rounds 5] [--reads 400]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def sh(*args, **kw):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True, **kw).stdout


def observations(codes, dim=64, noise=0.01, seed=1):
    """Floats of the codes' structure: each slot vector the codebook
    entries of its codes, concatenated, plus noise (as the tests do)."""
    T, S, M = codes.shape
    rng = np.random.default_rng(seed)
    book = rng.standard_normal((M, int(codes.max()) + 1, dim // M)).astype(np.float32)
    obs = book[np.arange(M), codes.astype(np.intp)].reshape(T, S, dim)
    return (obs + noise * rng.standard_normal(obs.shape)).astype(np.float32)


def prepare(d: Path, states: int, reads: int):
    d.mkdir(parents=True, exist_ok=True)
    wmzip, gobench = d / "wmzip", d / "gobench"
    sh("go", "build", "-o", wmzip, "./cmd/wmzip", cwd=ROOT)
    sh("go", "build", "-o", gobench, "./python/bench/gobench", cwd=ROOT)
    if not (d / "obs.wmz").exists():
        steps = 500
        sh(wmzip, "gen", "graphworld", "-q", "--nodes", 200, "--episodes", states // steps, "--steps", steps,
           "--seed", 2, "-o", d / "codes.npz")
        sh(wmzip, "gen", "graphworld", "-q", "--nodes", 200, "--episodes", 8, "--steps", 100, "--seed", 1,
           "-o", d / "train-codes.npz")
        for name in ("codes", "train-codes"):
            with np.load(d / f"{name}.npz") as z:
                arrays = {k: z[k] for k in ("actions", "episode_start")}
                codes = z["codes"]
            out = d / f"{name.replace('codes', 'obs')}.npz"
            np.savez(out, obs=observations(codes), **arrays)
        sh(wmzip, "train", "-q", "-o", d / "codes.wmm", d / "train-codes.npz")
        sh(wmzip, "train", "-q", "-o", d / "obs.wmm", d / "train-obs.npz")
        sh(wmzip, "encode", "-q", "-m", d / "codes.wmm", "-o", d / "codes.wmz", d / "codes.npz")
        sh(wmzip, "encode", "-q", "-m", d / "obs.wmm", "-o", d / "obs.wmz", d / "obs.npz")
    with np.load(d / "codes.npz") as z:
        starts = list(z["episode_start"]) + [len(z["actions"])]
    lens = np.diff(starts)
    rng = np.random.default_rng(7)
    with open(d / "keys.txt", "w") as f:
        for e in rng.integers(len(lens), size=reads):
            f.write(f"{e} {rng.integers(lens[e])}\n")
    return gobench


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--states", type=int, default=10000)
    p.add_argument("--reads", type=int, default=400)
    p.add_argument("--dir", type=Path, default=Path("/tmp/wmzip-pybench"))
    a = p.parse_args()
    d = a.dir
    gobench = prepare(d, a.states, a.reads)
    py = [sys.executable, HERE / "bench.py"]
    tests = []  # (name, what, go args, python args)
    for kind in ("codes", "obs"):
        flag = ["--obs"] if kind == "obs" else []
        gflag = ["-obs"] if kind == "obs" else []
        m, f = d / f"{kind}.wmm", d / f"{kind}.wmz"
        tests.append((f"read one state ({kind})", "read",
                      [gobench, "-model", m, "-file", f, "-keys", d / "keys.txt", *gflag],
                      [*py, "--model", m, "--file", f, "--keys", d / "keys.txt", *flag]))
        tests.append((f"write {a.states:,} states ({kind}), write_state", "write",
                      [gobench, "-model", m, "-traj", d / f"{kind}.npz", "-out", d / "go.wmz", *gflag],
                      [*py, "--model", m, "--traj", d / f"{kind}.npz", "--out", d / "py.wmz", *flag]))
        tests.append((f"write {a.states:,} states ({kind}), write_episode", "write",
                      [gobench, "-model", m, "-traj", d / f"{kind}.npz", "-out", d / "go.wmz", *gflag],
                      [*py, "--model", m, "--traj", d / f"{kind}.npz", "--out", d / "py.wmz", "--bulk", *flag]))
    res = {t[0]: {"go": [], "py": []} for t in tests}
    for r in range(a.rounds):
        for name, what, g, pyargs in tests:
            order = [("go", g), ("py", pyargs)] if r % 2 == 0 else [("py", pyargs), ("go", g)]
            for side, cmd in order:
                out = json.loads(sh(*cmd))
                if what == "read":
                    w, c = out["read_ns"], out["read_cpu_ns"]
                    res[name][side].append({"wall": statistics.median(w), "wall mean": sum(w) / len(w),
                                            "cpu": statistics.median(c), "cpu mean": sum(c) / len(c)})
                else:
                    res[name][side].append({"wall": out["write_ns"], "cpu": out["write_cpu_ns"]})
            if what == "write":
                assert (d / "go.wmz").read_bytes() == (d / "py.wmz").read_bytes(), name
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    print(f"{a.rounds} rounds on {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end;"
          f" reads: {a.reads} random states of a {a.states:,}-state file (median per read, and mean);"
          " writes: the whole file, lossless. Wall time; CPU time of the reading thread (reads) or of the"
          " process (writes). Ratios Python/Go: the median of the rounds' ratios (their range).\n")
    print("| measurement | Go wall | Python wall | ratio | Go CPU | Python CPU | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, what, _, _ in tests:
        rows = [("", "wall", "cpu")] if what == "write" else [(" median", "wall", "cpu"), (" mean", "wall mean", "cpu mean")]
        unit, div = ("ms", 1e6) if what == "read" else ("s", 1e9)
        for label, wk, ck in rows:
            cells = []
            for k in (wk, ck):
                go = [x[k] for x in res[name]["go"]]
                pyv = [x[k] for x in res[name]["py"]]
                ratios = [b / max(a_, 1) for a_, b in zip(go, pyv)]
                cells += [f"{statistics.median(go) / div:.3g} {unit}", f"{statistics.median(pyv) / div:.3g} {unit}",
                          f"{statistics.median(ratios):.3f} ({min(ratios):.2f}–{max(ratios):.2f})"]
            print(f"| {name}{label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
