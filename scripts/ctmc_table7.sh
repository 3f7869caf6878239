#!/usr/bin/env bash
# Access concentration of graphworld random walks by family and size (our
# analogue of the CTMC paper's Table 7): one walk of 20 steps per node, the
# visit count of every node audited with `wmzip audit --counts`.
# Usage: scripts/ctmc_table7.sh [outdir]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d)}
mkdir -p "$out"
go build -o "$out/wmzip" ./cmd/wmzip
echo "| family | nodes | steps | Gini | top-10% share | σ_top10 (% of accesses) | max/median |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for fam in uniform exponential scalefree modular mixed; do
	for n in 100 500 1000; do
		steps=$((20 * n))
		"$out/wmzip" gen graphworld --family $fam --nodes $n --graph-seed 1 --episodes 1 --steps $steps \
			--seed 1 -q -o "$out/w.npz" --visits "$out/$fam-$n.counts"
		"$out/wmzip" audit --counts "$out/$fam-$n.counts" --sims 0 --json -q > "$out/$fam-$n.json"
		/usr/bin/env python3 - "$out/$fam-$n.json" $fam $n $steps <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["concentration"]
print(f'| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {c["gini"]:.3f} | {100*c["top10_share"]:.1f}% | {c["sigma_top10_pct"]:.3f} | {c["max_median"]:.2f} |')
PY
	done
done
