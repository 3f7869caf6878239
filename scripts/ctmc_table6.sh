#!/usr/bin/env bash
# Storage allocated by access at matched storage (our analogue of the CTMC
# paper's Table 6) over several independent walks: `wmzip bench alloc` in
# λ space with the ranked tail and the default tail guard, once per walk
# seed, then one table with every seed's figures and the per-family means.
# Usage: scripts/ctmc_table6.sh [outdir] [seed...]   (default seeds 1 11 21)
# About 8 minutes per seed on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d)}
shift || true
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 11 21)
mkdir -p "$out"
go build -o "$out/wmzip" ./cmd/wmzip
files=()
for s in "${seeds[@]}"; do
	"$out/wmzip" bench alloc --alloc-space lambda --tail ranked --seed "$s" --json -q > "$out/alloc-seed$s.json"
	files+=("$out/alloc-seed$s.json")
done
/usr/bin/env python3 - "${files[@]}" <<'PY'
import json, statistics, sys
runs = [json.load(open(f)) for f in sys.argv[1:]]
allocs = ["CTMC", "Uniform", "Shuffled", "Reversed"]
def row(r, fam, a):
    return next(x for x in r["rows"] if x["family"] == fam and x["allocation"].startswith(a))
fams = [f["family"] for f in runs[0]["families"]]
print("Per seed (" + ", ".join(str(r["config"]["seed"]) for r in runs) + "):\n")
print("| family | allocation | bits/state | access-weighted d | tail d | tail ÷ uniform |")
print("|---|---|---|---|---|---|")
for fam in fams:
    for a in allocs:
        rs = [row(r, fam, a) for r in runs]
        j = lambda k, f: " / ".join(f % x[k] for x in rs)
        print(f"| {fam} | {a} | {j('bits_per_state', '%.1f')} | {j('access_weighted', '%.4f')} | {j('tail', '%.4f')} | {j('tail_vs_uniform', '%.2f')} |")
print("\nMeans over the seeds:\n")
print("| family | budgets | CTMC | Uniform | Shuffled | Reversed | CTMC ÷ uniform | CTMC tail ÷ uniform tail | CTMC lowest in |")
print("|---|---|---:|---:|---:|---:|---:|---:|---|")
for fam in fams:
    m = {a: statistics.mean(row(r, fam, a)["access_weighted"] for r in runs) for a in allocs}
    t = {a: statistics.mean(row(r, fam, a)["tail"] for r in runs) for a in allocs}
    wins = sum(min(allocs, key=lambda a: row(r, fam, a)["access_weighted"]) == "CTMC" for r in runs)
    budgets = " / ".join("%.1f" % next(f for f in r["families"] if f["family"] == fam)["budget_bits_per_state"] for r in runs)
    best = min(allocs, key=lambda a: m[a])
    cells = " | ".join(("**%.4f**" if a == best else "%.4f") % m[a] for a in allocs)
    print(f"| {fam} | {budgets} | {cells} | {m['CTMC'] / m['Uniform']:.3f} | {t['CTMC'] / t['Uniform']:.2f} | {wins} of {len(runs)} seeds |")
PY
