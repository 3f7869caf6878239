#!/usr/bin/python3
"""Rate-distortion frontier of wmzip against what a user assembles with faiss.

Measures, on one train/test pair of trajectories (.npz with float `obs`
[T,S,d], `actions` [T], `episode_start` [E]):

  * alternatives: for each geometry MxB, a plain `faiss.ProductQuantizer(d, M,
    B)` trained on every train slot vector (pooled over slots); its test
    distortion (pq.decode), and the bits of its test codes stored (a) by
    `xz -9e` given the train codes (xz(train ++ test) - xz(train)) and (b) by
    wmzip's codes-only model (`wmzip train` on the train codes, `wmzip encode`
    of the test codes);
  * wmzip itself: its default model (a family of quantizers) and one file per
    target source distortion (`--source-distortion D`) plus a lossless file;
    each file's actual distortion is measured here from `wmzip decode`;
  * decode speed on one core: `GOMAXPROCS=1 wmzip decode -j 1 --codes-only`
    of every wmzip file and `xz -d -c` of each alternative's xz -9e file of
    the test codes alone (median of 3 runs, process start-up included);
  * retrieval: state and slot recall@10 of queries drawn from the train split
    against the test states as memory, ranked by squared L2 to the
    reconstruction, against the exact float truth;
  * that `wmzip index` + `wmzip search --state --k 10` answers on every file.

Distortion everywhere is the mean over slot vectors (every slot of every test
state) of ||x - x^||^2 / ||x||^2 against the source float obs, in float64.
Bits/state is file bytes * 8 / test states; model files are excluded.

Writes frontier.json, frontier.md and frontier.png into --out.

Run (Debian's python3, which has numpy, faiss and matplotlib):

    cd /work/main && go build -o /tmp/wmzip-frontier ./cmd/wmzip
    /usr/bin/python3 scripts/rd_frontier.py --train train.npz --test test.npz \\
        --wmzip /tmp/wmzip-frontier --out /tmp/frontier --name web-pgdocs

--from-json frontier.json --out DIR rewrites the table and plot of a saved
run without measuring. --quick runs a small subset (2x8,4x8; targets
0.01,0.02; fewer queries) to test the script.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

faiss = None  # imported in main, so that --help works without it

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMANDS = []  # every external command run, in order, for frontier.json


# ---------------------------------------------------------------- helpers

def run(cmd, env=None, check=True, stdin=None, stdout=subprocess.PIPE):
    """Run cmd (a list), record it, return (CompletedProcess, wall seconds)."""
    COMMANDS.append(" ".join(cmd))
    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update(env)
    t = time.perf_counter()
    p = subprocess.run(cmd, env=full_env, input=stdin, stdout=stdout,
                       stderr=subprocess.PIPE)
    dt = time.perf_counter() - t
    if check and p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (
            " ".join(cmd), p.returncode, p.stderr.decode(errors="replace").strip()))
    return p, dt


def looks_like_crash(stderr):
    """Whether a failing command's stderr looks like a bug rather than a refusal."""
    return bool(re.search(r"panic:|goroutine \d+|SIGSEGV|fatal error:|runtime error", stderr))


def xz_size(data):
    """Bytes of xz -9e (single-threaded: one block) of data."""
    p, _ = run(["xz", "-9e", "-T1", "-c"], stdin=data)
    return len(p.stdout)


def median_time(cmd, env=None, repeats=3):
    """Median wall seconds of repeats runs of cmd (stdout discarded)."""
    times = []
    for _ in range(repeats):
        _, dt = run(cmd, env=env, stdout=subprocess.DEVNULL)
        times.append(dt)
    return statistics.median(times)


def bits_per_state(path, states):
    return os.path.getsize(path) * 8.0 / states


# ---------------------------------------------------------------- data

def load_traj(path):
    """obs (as stored), actions, episode_start of a trajectory .npz."""
    z = np.load(path)
    obs = z["obs"]
    actions = z["actions"] if "actions" in z else np.full(obs.shape[0], -1, np.int32)
    starts = z["episode_start"] if "episode_start" in z else np.zeros(1, np.int64)
    return obs, actions, starts


def slot_vectors(obs):
    """All slot vectors of obs [T,S,d] pooled, float32 C-contiguous [T*S,d]."""
    return np.ascontiguousarray(obs.reshape(-1, obs.shape[-1]), dtype=np.float32)


def distortion(x, xhat, chunk=65536):
    """Mean over slot vectors of ||x-x^||^2/||x||^2, float64; x, xhat [..., d].

    Slot vectors of zero norm would divide by zero; they are left out and
    counted (returned second)."""
    x = x.reshape(-1, x.shape[-1])
    xhat = xhat.reshape(-1, xhat.shape[-1])
    total, n, zero = 0.0, 0, 0
    for i in range(0, x.shape[0], chunk):
        a = x[i:i + chunk].astype(np.float64)
        b = xhat[i:i + chunk].astype(np.float64)
        norm = (a * a).sum(axis=1)
        err = ((a - b) ** 2).sum(axis=1)
        ok = norm > 0
        zero += int((~ok).sum())
        total += float((err[ok] / norm[ok]).sum())
        n += int(ok.sum())
    return total / n, zero


def write_codes_npz(path, codes, actions, starts):
    np.savez(path, codes=codes, actions=actions, episode_start=starts)


# ---------------------------------------------------------------- faiss PQ

def parse_geom(s):
    m, b = s.lower().split("x")
    return int(m), int(b)


def unpack_codes(packed, m, b):
    """faiss's bit-packed codes [n, code_size] -> [n, m] integers.

    faiss packs each vector's M codes of B bits as one LSB-first bitstream."""
    if b == 8:
        return packed.reshape(-1, m).copy()
    n = packed.shape[0]
    bits = np.unpackbits(packed, axis=1, bitorder="little")[:, :m * b]
    bits = bits.reshape(n, m, b).astype(np.uint32)
    weights = (1 << np.arange(b, dtype=np.uint32))
    return (bits * weights).sum(axis=2)


def raw_codes(codes, b):
    """Codes [T,S,M] as the stored dtype: uint8, or uint16 little-endian past 8 bits."""
    return codes.astype(np.uint8 if b <= 8 else np.dtype("<u2"))


def check_unpack(pq, packed, codes, m):
    """Assert the unpacked codes reproduce pq.decode (guards the bit order)."""
    cents = faiss.vector_to_array(pq.centroids).reshape(m, pq.ksub, pq.dsub)
    n = min(256, codes.shape[0])
    mine = np.concatenate([cents[j][codes[:n, j]] for j in range(m)], axis=1)
    theirs = pq.decode(packed[:n])
    if not np.allclose(mine, theirs, atol=1e-5):
        raise RuntimeError("unpacked codes do not reproduce pq.decode")


def alternative(geom, d, xtr, xte, train, test, wmzip, work):
    """Train one faiss PQ geometry and measure it; returns (record, test reconstruction)."""
    m, b = parse_geom(geom)
    T, S = test[0].shape[:2]
    Ttr = train[0].shape[0]
    gdir = os.path.join(work, "alt-" + geom)
    os.makedirs(gdir, exist_ok=True)

    pq = faiss.ProductQuantizer(d, m, b)
    t = time.perf_counter()
    pq.train(xtr)
    train_s = time.perf_counter() - t
    ptr, pte = pq.compute_codes(xtr), pq.compute_codes(xte)
    ctr = unpack_codes(ptr, m, b)
    cte = unpack_codes(pte, m, b)
    check_unpack(pq, pte, cte, m)
    rec = pq.decode(pte).reshape(T, S, d)
    dist, _ = distortion(test[0], rec)
    ctr = raw_codes(ctr, b).reshape(Ttr, S, m)
    cte = raw_codes(cte, b).reshape(T, S, m)

    # (a) xz -9e given the train codes; and of the test codes alone, for speed.
    rtr, rte = ctr.tobytes(), cte.tobytes()
    xz_given = xz_size(rtr + rte) - xz_size(rtr)
    xz_alone_path = os.path.join(gdir, "test_codes.raw.xz")
    p, _ = run(["xz", "-9e", "-T1", "-c"], stdin=rte)
    with open(xz_alone_path, "wb") as f:
        f.write(p.stdout)

    # (b) wmzip's codes-only model.
    tr_npz, te_npz = os.path.join(gdir, "train_codes.npz"), os.path.join(gdir, "test_codes.npz")
    write_codes_npz(tr_npz, ctr, train[1], train[2])
    write_codes_npz(te_npz, cte, test[1], test[2])
    model, wmz = os.path.join(gdir, "m.wmm"), os.path.join(gdir, "t.wmz")
    rec_w = {"wmzip_codes_bits": None, "wmzip_codes_error": None, "model_bytes": None}
    try:
        run([wmzip, "train", "-q", "-o", model, tr_npz])
        run([wmzip, "encode", "-q", "-m", model, "-o", wmz, te_npz])
        rec_w["wmzip_codes_bits"] = bits_per_state(wmz, T)
        rec_w["model_bytes"] = os.path.getsize(model)
    except RuntimeError as e:
        rec_w["wmzip_codes_error"] = str(e)
        rec_w["wmzip_codes_crash"] = looks_like_crash(str(e))

    xz_bits = xz_given * 8.0 / T
    options = [("xz", xz_bits)]
    if rec_w["wmzip_codes_bits"] is not None:
        options.append(("wmzip-codes", rec_w["wmzip_codes_bits"]))
    best = min(options, key=lambda o: o[1])
    r = {
        "geom": geom, "M": m, "B": b, "train_seconds": train_s,
        "distortion": dist, "raw_bits": m * (8 if b <= 8 else 16) * S,  # bits/state of the raw codes
        "xz_bits": xz_bits, "xz_alone_bits": bits_per_state(xz_alone_path, T),
        "xz_alone_file": xz_alone_path,
        "best": best[0], "best_bits": best[1],
    }
    r.update(rec_w)
    return r, rec


# ---------------------------------------------------------------- wmzip

def wmzip_files(wmzip, train_path, test_path, targets, work, test_obs):
    """Train wmzip's default model and encode the test set at each target.

    Returns (model path, train seconds, list of per-file records)."""
    model = os.path.join(work, "fam.wmm")
    _, train_s = run([wmzip, "train", "-q", "-o", model, train_path])
    T = test_obs.shape[0]
    jobs = [("lossless", None)] + [("D=%g" % d, d) for d in targets]
    files = []
    for label, d in jobs:
        out = os.path.join(work, "lossless.wmz" if d is None else "f%g.wmz" % d)
        cmd = [wmzip, "encode", "-q", "-m", model, "-o", out, test_path]
        if d is not None:
            cmd[3:3] = ["--source-distortion", "%g" % d]
        r = {"label": label, "target": d, "file": out, "command": " ".join(cmd)}
        p, dt = run(cmd, check=False)
        r["encode_seconds"] = dt
        if p.returncode != 0:
            msg = p.stderr.decode(errors="replace").strip()
            r["status"] = "crash" if looks_like_crash(msg) else "refused"
            r["message"] = msg
        else:
            r["status"] = "ok"
            r["bits"] = bits_per_state(out, T)
        files.append(r)
    return model, train_s, files


def decode_obs(wmzip, model, path, tmp):
    """The reconstruction (float32 [T,S,d]) of a wmzip file, via wmzip decode."""
    out = os.path.join(tmp, "dec.npz")
    run([wmzip, "decode", "-q", "-m", model, "-o", out, path])
    obs = np.load(out)["obs"]
    os.remove(out)
    return obs


def search_check(wmzip, model, path, query):
    """Whether wmzip index + search --state --k 10 answers 10 results on path."""
    r = {}
    p, _ = run([wmzip, "index", "-q", "-m", model, path], check=False)
    if p.returncode != 0:
        msg = p.stderr.decode(errors="replace").strip()
        return {"ok": False, "stage": "index", "error": msg, "crash": looks_like_crash(msg)}
    cmd = [wmzip, "search", "-m", model, "--query", query, "--state", "--k", "10", "--json", path]
    p, dt = run(cmd, check=False)
    r["seconds"] = dt
    if p.returncode != 0:
        msg = p.stderr.decode(errors="replace").strip()
        r.update(ok=False, stage="search", error=msg, crash=looks_like_crash(msg))
        return r
    try:
        res = json.loads(p.stdout)["results"]
        n = len(res[0]) if res else 0
    except (ValueError, KeyError, IndexError) as e:
        r.update(ok=False, stage="parse", error="%s: %r" % (e, p.stdout[:300]))
        return r
    r.update(ok=(n == 10), results=n, top=res[0][:3] if res else [])
    if n != 10:
        r["error"] = "returned %d results" % n
    return r


# ---------------------------------------------------------------- retrieval

def evenly(n, k):
    """k indices evenly spaced over range(n): i*n//k."""
    k = min(k, n)
    return (np.arange(k, dtype=np.int64) * n) // k


def sq_dists(q, x):
    """Squared L2 distances [nq, nx] between rows of q and x, float64."""
    q = q.astype(np.float64)
    x = x.astype(np.float64)
    d = (q * q).sum(1)[:, None] - 2.0 * q @ x.T + (x * x).sum(1)[None, :]
    return np.maximum(d, 0.0)


def topk(dist, k):
    """Indices of the k smallest entries of each row, ties broken by index."""
    return np.argsort(dist, axis=1, kind="stable")[:, :k]


class Truth:
    """Exact float neighbours of the queries among the memory, computed once."""

    def __init__(self, q, memory, k=10):
        self.q, self.k = q, k
        self.dist = sq_dists(q, memory)
        self.top = topk(self.dist, k)
        # The k-th true distance: a candidate at most this far is as good as
        # a true neighbour (ties between duplicate memories are common here).
        self.kth = np.take_along_axis(self.dist, self.top[:, -1:], axis=1)

    def recall(self, recon):
        """(recall@k by indices, recall@k counting ties with the k-th as hits)."""
        cand = topk(sq_dists(self.q, recon), self.k)
        strict = np.mean([len(set(a) & set(b)) / self.k for a, b in zip(cand, self.top)])
        cd = np.take_along_axis(self.dist, cand, axis=1)
        tie = np.mean((cd <= self.kth * (1 + 1e-9) + 1e-12).sum(1) / self.k)
        return float(strict), float(tie)


class Retrieval:
    """State and slot queries from the train split against the test memory."""

    def __init__(self, train_obs, test_obs, n_states, n_slots):
        T, S, d = test_obs.shape
        self.state_idx = evenly(train_obs.shape[0], n_states)
        pooled = train_obs.reshape(-1, d)
        self.slot_idx = evenly(pooled.shape[0], n_slots)
        self.states = Truth(train_obs[self.state_idx].reshape(len(self.state_idx), -1),
                            test_obs.reshape(T, -1))
        self.slots = Truth(pooled[self.slot_idx], test_obs.reshape(-1, d))

    def measure(self, recon):
        T, S, d = recon.shape
        st, st_tie = self.states.recall(recon.reshape(T, -1))
        sl, sl_tie = self.slots.recall(recon.reshape(-1, d))
        return {"state_recall10": st, "slot_recall10": sl,
                "state_recall10_ties": st_tie, "slot_recall10_ties": sl_tie}


# ---------------------------------------------------------------- speed

def decode_speed(wmzip, model, files, alts, T, tmp):
    """States/s of one-core wmzip decodes and of xz -d of the test codes."""
    out = os.path.join(tmp, "x.npz")
    for r in files:
        if r["status"] != "ok":
            continue
        cmd = [wmzip, "decode", "-q", "-j", "1", "--codes-only", "-m", model, "-o", out, r["file"]]
        s = median_time(cmd, env={"GOMAXPROCS": "1"})
        r["decode_seconds"] = s
        r["decode_states_per_s"] = T / s
    for a in alts:
        s = median_time(["xz", "-d", "-c", a["xz_alone_file"]])
        a["xz_decode_seconds"] = s
        a["xz_decode_states_per_s"] = T / s


# ---------------------------------------------------------------- output

def fmt(x, f="%.1f"):
    return "-" if x is None else f % x


def best_alternative(alts, d):
    """The alternative storing the fewest bits among those with distortion <= d."""
    ok = [a for a in alts if a["distortion"] <= d]
    return min(ok, key=lambda a: a["best_bits"]) if ok else None


def frontier_table(files, alts):
    lines = ["| target D | wmzip bits/state | wmzip actual D | best alternative (D ≤ target) "
             "| its D | its bits/state | alt / wmzip |",
             "|---|---:|---:|---|---:|---:|---:|"]
    for r in files:
        target = r["target"]
        if r["status"] != "ok":
            msg = r["message"].splitlines()[-1] if r["message"] else ""
            label = "%g" % target if target is not None else r["label"]
            lines.append("| %s | %s: %s | | | | | |" % (label, r["status"], msg.replace("|", "\\|")))
            continue
        bound = r["distortion"] if target is None else target
        a = best_alternative(alts, bound)
        note = " (above target)" if target is not None and r["distortion"] > target else ""
        if a is None:
            alt_cells = "none reaches it | | | "
        else:
            alt_cells = "PQ %s + %s | %.5f | %.1f | %.2f" % (
                a["geom"], a["best"], a["distortion"], a["best_bits"], a["best_bits"] / r["bits"])
        label = "%g" % target if target is not None else "lossless (≤ its D)"
        lines.append("| %s | %.1f | %.5f%s | %s |" % (label, r["bits"], r["distortion"], note, alt_cells))
    return lines


def alternatives_table(alts):
    lines = ["| PQ MxB | distortion | raw bits | xz -9e given train | wmzip codes-only "
             "| codes model bytes | best | xz alone |",
             "|---|---:|---:|---:|---:|---:|---|---:|"]
    for a in alts:
        wz = fmt(a["wmzip_codes_bits"]) if a["wmzip_codes_error"] is None else "error"
        lines.append("| %s | %.5f | %d | %.1f | %s | %s | %s %.1f | %.1f |" % (
            a["geom"], a["distortion"], a["raw_bits"], a["xz_bits"], wz,
            fmt(a["model_bytes"], "%d"), a["best"], a["best_bits"], a["xz_alone_bits"]))
    return lines


def retrieval_table(files, alts):
    lines = ["| memory | distortion | bits/state | state R@10 | slot R@10 "
             "| state R@10 (ties) | slot R@10 (ties) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    rows = [("wmzip " + r["label"], r) for r in files if r["status"] == "ok"]
    rows += [("PQ " + a["geom"], dict(a, bits=a["best_bits"])) for a in alts]
    for name, r in rows:
        x = r["retrieval"]
        lines.append("| %s | %.5f | %.1f | %.3f | %.3f | %.3f | %.3f |" % (
            name, r["distortion"], r["bits"], x["state_recall10"], x["slot_recall10"],
            x["state_recall10_ties"], x["slot_recall10_ties"]))
    return lines


def speed_table(files, alts):
    lines = ["| file | bits/state | decode | states/s |", "|---|---:|---|---:|"]
    for r in files:
        if r["status"] == "ok":
            lines.append("| wmzip %s | %.1f | wmzip decode --codes-only, GOMAXPROCS=1 -j 1 | %.0f |" % (
                r["label"], r["bits"], r["decode_states_per_s"]))
    for a in alts:
        lines.append("| PQ %s test codes, xz -9e alone | %.1f | xz -d -c | %.0f |" % (
            a["geom"], a["xz_alone_bits"], a["xz_decode_states_per_s"]))
    return lines


def search_table(files):
    lines = ["| file | wmzip search --state --k 10 |", "|---|---|"]
    for r in files:
        if r["status"] != "ok":
            continue
        s = r["search"]
        cell = "ok, 10 results" if s["ok"] else "FAILED (%s): %s" % (
            s.get("stage"), s.get("error", "").replace("\n", " ").replace("|", "\\|")[:300])
        lines.append("| %s | %s |" % (r["label"], cell))
    return lines


def write_markdown(path, res):
    files, alts = res["wmzip"]["files"], res["alternatives"]
    T = res["test_states"]
    out = ["# Rate-distortion frontier: %s" % res["name"], "",
           "wmzip %s, %s, %s, %s. Test: %d states × %d slots × d=%d. Bits/state exclude model files. "
           "Distortion: mean over slot vectors of ‖x−x̂‖²/‖x‖² against the float obs." % (
               res["wmzip_commit"], res["date"], res["machine"], res["cpu"], T,
               res["slots"], res["d"]), "",
           "## Frontier", ""]
    out += frontier_table(files, alts)
    out += ["", "Alternative = faiss ProductQuantizer(d, M, B) trained on the train slot vectors, "
            "its test codes stored by the better of xz -9e given the train codes and wmzip's "
            "codes-only model. alt / wmzip > 1: the alternative needs more bits.", "",
            "## Alternatives", ""]
    out += alternatives_table(alts)
    out += ["", "## Retrieval", "",
            "Queries from the train split (%d states, %d slot vectors, evenly spaced); memory = the "
            "test states; truth = exact squared-L2 neighbours on the float obs; candidates ranked by "
            "squared L2 to the reconstruction. R@10 = mean |top10 ∩ truth10| / 10; the (ties) columns "
            "count a candidate as a hit when its true distance is no more than the 10th true distance "
            "(duplicate memories tie)." % (res["queries"]["states"], res["queries"]["slots"]), ""]
    out += retrieval_table(files, alts)
    out += ["", "## Decode speed (one core)", "",
            "Median of 3 runs; process start-up is included for both wmzip and xz. %d test states." % T, ""]
    out += speed_table(files, alts)
    out += ["", "## wmzip search on every file", ""]
    out += search_table(files)
    out += [""]
    with open(path, "w") as f:
        f.write("\n".join(out))


def write_plot(path, res):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    files = [r for r in res["wmzip"]["files"] if r["status"] == "ok"]
    alts = res["alternatives"]
    fig, ax = plt.subplots(figsize=(9, 6))
    pts = sorted((r["distortion"], r["bits"], r["label"]) for r in files)
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color="C0", label="wmzip (family)")
        for x, y, lab in pts:
            ax.annotate(lab, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7, color="C0")
    first = True
    for a in alts:
        # The two stores of one geometry's codes: joined, labelled once.
        ys = [a["xz_bits"]] + ([a["wmzip_codes_bits"]] if a["wmzip_codes_bits"] is not None else [])
        ax.plot([a["distortion"]] * len(ys), ys, "-", color="grey", linewidth=0.8, alpha=0.6)
        ax.plot(a["distortion"], a["xz_bits"], "s", color="C1", label="faiss PQ + xz -9e" if first else None)
        if a["wmzip_codes_bits"] is not None:
            ax.plot(a["distortion"], a["wmzip_codes_bits"], "^", color="C2",
                    label="faiss PQ + wmzip codes-only" if first else None)
        ax.annotate("PQ " + a["geom"], (a["distortion"], min(ys)), textcoords="offset points",
                    xytext=(5, -11), fontsize=8)
        first = False
    refused = {r["target"] for r in res["wmzip"]["files"] if r["target"] is not None and r["status"] != "ok"}
    seen = set()
    for d in res["targets"]:
        kind = "refused targets" if d in refused else "targets"
        ax.axvline(d, linestyle=":", linewidth=1, color="tab:red" if d in refused else "grey",
                   label=kind if kind not in seen else None)
        seen.add(kind)
    ax.set_yscale("log")
    ax.set_xlabel("distortion (mean over slots of ‖x−x̂‖²/‖x‖²)")
    ax.set_ylabel("bits/state (model excluded)")
    ax.set_title("Rate–distortion frontier: %s (wmzip %s)" % (res["name"], res["wmzip_commit"]))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def environment():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode().strip()
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode().strip()
    return {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "machine": platform.machine(), "cpu": cpu, "wmzip_commit": commit,
            "wmzip_tree_modified": dirty.splitlines() if dirty else [],
            "faiss_version": faiss.__version__, "numpy_version": np.__version__}


# ---------------------------------------------------------------- main

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", help="train trajectory .npz (float obs)")
    ap.add_argument("--test", help="test trajectory .npz (float obs)")
    ap.add_argument("--wmzip", help="the wmzip command line binary")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--name", default="", help="data set name, for the title")
    ap.add_argument("--targets", default="0.006,0.01,0.015,0.02,0.03",
                    help="target source distortions, comma-separated")
    ap.add_argument("--geoms", default="2x8,4x8,8x8,16x8,32x6,32x8",
                    help="faiss PQ geometries MxB, comma-separated")
    ap.add_argument("--threads", type=int, default=1, help="faiss OpenMP threads")
    ap.add_argument("--from-json", metavar="FILE",
                    help="measure nothing: rewrite frontier.md and frontier.png of a saved frontier.json into --out")
    ap.add_argument("--quick", action="store_true",
                    help="2x8,4x8, targets 0.01,0.02, 50 state and 200 slot queries")
    args = ap.parse_args()
    if not args.from_json and not (args.train and args.test and args.wmzip):
        ap.error("--train, --test and --wmzip are required (unless --from-json)")
    args.targets = [float(t) for t in args.targets.split(",") if t]
    args.geoms = [g for g in args.geoms.split(",") if g]
    args.state_queries, args.slot_queries = 200, 1000
    if args.quick:
        args.geoms, args.targets = ["2x8", "4x8"], [0.01, 0.02]
        args.state_queries, args.slot_queries = 50, 200
    if not args.name and args.test:
        args.name = os.path.basename(os.path.dirname(os.path.abspath(args.test)))
    return args


def log(msg):
    print("[rd_frontier %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def main():
    global faiss
    args = parse_args()
    if args.from_json:
        with open(args.from_json) as fh:
            res = json.load(fh)
        os.makedirs(args.out, exist_ok=True)
        write_markdown(os.path.join(args.out, "frontier.md"), res)
        write_plot(os.path.join(args.out, "frontier.png"), res)
        return
    import faiss as f
    faiss = f
    faiss.omp_set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    work = os.path.abspath(args.out)
    tmp = tempfile.mkdtemp(prefix="rd_frontier-")
    try:
        res = measure(args, work, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(work, "frontier.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    write_markdown(os.path.join(work, "frontier.md"), res)
    write_plot(os.path.join(work, "frontier.png"), res)
    log("wrote %s/frontier.{json,md,png}" % work)


def measure(args, work, tmp):
    train, test = load_traj(args.train), load_traj(args.test)
    T, S, d = test[0].shape
    res = {"name": args.name, "command": " ".join([sys.executable] + sys.argv),
           "train": os.path.abspath(args.train), "test": os.path.abspath(args.test),
           "test_states": T, "train_states": int(train[0].shape[0]), "slots": S, "d": d,
           "targets": args.targets, "geoms": args.geoms,
           "queries": {"states": int(min(args.state_queries, train[0].shape[0])),
                       "slots": int(min(args.slot_queries, train[0].shape[0] * S))},
           "notes": ["decode speed: median of 3 wall-clock runs, process start-up included "
                     "for both wmzip and xz", "faiss threads: %d" % args.threads]}
    res.update(environment())
    log("truth for retrieval")
    retr = Retrieval(train[0], test[0], args.state_queries, args.slot_queries)

    # 1. faiss alternatives.
    xtr, xte = slot_vectors(train[0]), slot_vectors(test[0])
    alts = []
    for g in args.geoms:
        log("alternative PQ %s" % g)
        a, rec = alternative(g, d, xtr, xte, train, test, args.wmzip, work)
        a["retrieval"] = retr.measure(rec)
        alts.append(a)
    del xtr, xte

    # 2. wmzip's own files, their actual distortion, retrieval and search.
    log("wmzip train (family) and encodes")
    model, train_s, files = wmzip_files(args.wmzip, args.train, args.test, args.targets, work, test[0])
    query = os.path.join(tmp, "q.npz")
    np.savez(query, obs=train[0][len(train[0]) // 2][None].astype(np.float32))
    for r in files:
        if r["status"] != "ok":
            continue
        log("wmzip %s: decode, retrieval, search" % r["label"])
        try:
            rec = decode_obs(args.wmzip, model, r["file"], tmp)
        except RuntimeError as e:
            r["status"], r["message"] = "decode failed", str(e)
            r["crash"] = looks_like_crash(str(e))
            continue
        r["distortion"], _ = distortion(test[0], rec)
        r["retrieval"] = retr.measure(rec)
        del rec
        r["search"] = search_check(args.wmzip, model, r["file"], query)

    # 3. decode speed, all in this one run.
    log("decode speed")
    decode_speed(args.wmzip, model, files, alts, T, tmp)

    res["alternatives"] = alts
    res["wmzip"] = {"model": model, "model_bytes": os.path.getsize(model),
                    "train_seconds": train_s, "files": files}
    res["commands"] = COMMANDS
    return res


if __name__ == "__main__":
    main()
