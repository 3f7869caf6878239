#!/usr/bin/env bash
# The rate cost and random-read latency of the keyframe interval G: for
# G = 16..256, lossless bits/state of web-pgdocs' test split and of one
# graphworld family (mixed), and the latency of reading one state at a
# random episode and step on one core (GOMAXPROCS=1, process CPU time, the
# fastest of REPEAT runs of the same reads): cold (cache off, the read
# decodes its chunk from the keyframe) and within runs of 8 consecutive
# steps (default cache). Prints a markdown table.
# Usage: scripts/keyframe_table.sh [outdir]   (WEB=path/to/web-pgdocs, READS=200, REPEAT=3)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d)}
web=${WEB:-../shared/data/web-pgdocs}
reads=${READS:-200}
repeat=${REPEAT:-3}
mkdir -p "$out"
go build -o "$out/wmzip" ./cmd/wmzip
go build -o "$out/rareads" ./internal/cmd/rareads
w="$out/wmzip"
[ -f "$out/web.wmm" ] || "$w" train -q -o "$out/web.wmm" "$web/train_codes.npz"
cp "$web/test_codes.npz" "$out/web-test.npz"
[ -f "$out/gw-train.npz" ] || "$w" gen graphworld --family mixed --nodes 500 --graph-seed 5 --episodes 10 --steps 1000 --seed 1 -q -o "$out/gw-train.npz"
[ -f "$out/gw-test.npz" ] || "$w" gen graphworld --family mixed --nodes 500 --graph-seed 5 --episodes 2 --steps 300 --seed 2 -q -o "$out/gw-test.npz"
[ -f "$out/gw.wmm" ] || "$w" train -q -o "$out/gw.wmm" "$out/gw-train.npz"

echo "| data | G | bits/state | vs G=256 | cold read p50 (CPU ms) | p90 | run-of-8 read mean (CPU ms) |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for d in web gw; do
	for g in 256 128 64 32 16; do
		f="$out/$d-g$g.wmz"
		"$w" encode -q -m "$out/$d.wmm" --keyframe $g -o "$f" "$out/$d-test.npz"
		"$w" info --json -m "$out/$d.wmm" "$f" > "$f.info.json"
		GOMAXPROCS=1 "$out/rareads" -m "$out/$d.wmm" -reads "$reads" -repeat "$repeat" -seed 1 -cache 0 "$f" > "$f.cold.json"
		GOMAXPROCS=1 "$out/rareads" -m "$out/$d.wmm" -reads $((reads / 8)) -repeat "$repeat" -seed 2 -cache 67108864 -run 8 "$f" > "$f.run8.json"
		python3 - "$f" "$d" "$g" "$out/$d-g256.wmz" <<'PY'
import json, sys
f, d, g, base = sys.argv[1:]
i = json.load(open(f + ".info.json"))
b = json.load(open(base + ".info.json"))["bits_per_state"]
c = json.load(open(f + ".cold.json"))
r = json.load(open(f + ".run8.json"))
name = {"web": "web-pgdocs", "gw": "graphworld mixed"}[d]
print(f'| {name} | {g} | {i["bits_per_state"]:.1f} | {100 * (i["bits_per_state"] / b - 1):+.1f}% | '
      f'{c["p50_ms"]:.1f} | {c["p90_ms"]:.1f} | {r["mean_ms"]:.1f} |')
PY
	done
done
