#!/usr/bin/env bash
# Lossless rates on the Synthetic Graph World, one line per family: a model
# trained on 10 walks of 1,000 steps of a 500-node world, tested on 2 other
# walks of 300 steps of the same world. Usage: scripts/graphworld_bench.sh [outdir]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d)}
mkdir -p "$out"
go build -o "$out/wmzip" ./cmd/wmzip
for fam in uniform exponential scalefree modular mixed; do
	"$out/wmzip" gen graphworld --family $fam --nodes 500 --graph-seed 5 --episodes 10 --steps 1000 --seed 1 -q -o "$out/$fam-train.npz"
	"$out/wmzip" gen graphworld --family $fam --nodes 500 --graph-seed 5 --episodes 2 --steps 300 --seed 2 -q -o "$out/$fam-test.npz"
	"$out/wmzip" bench lossless -q --json --train "$out/$fam-train.npz" "$out/$fam-test.npz" > "$out/$fam.json"
	/usr/bin/env python3 - "$out/$fam.json" "$fam" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
b = {x["Name"]: x for x in r["baselines"]}
def rate(n): return b[n]["BitsPerState"] if b.get(n, {}).get("Available") else float("nan")
print(f'{sys.argv[2]:12s} wmzip {r["bits_per_state"]:7.1f}  entropy {r["generator_entropy_bits_per_state"]:6.1f}  '
      f'x{r["ratios"]["generator entropy"]:.3f}  zstd {rate("zstd"):7.1f} (x{r["bits_per_state"]/rate("zstd"):.3f})  '
      f'xz|train {rate("xz -9e given train"):6.1f}')
PY
done
