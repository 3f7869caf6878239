#!/bin/sh
# Compare wmzip audit's discrete power-law fits with R's poweRlaw on the
# same counts files: x_min, alpha, n_tail, KS distance and bootstrap p_gof.
# Usage: scripts/powerlaw_compare.sh [SIMS [FILE...]]
# Defaults: 500 simulations, testdata/ctmc/*.counts. Needs Rscript with
# poweRlaw (Debian: r-cran-powerlaw) and jq; exits 0 without R.
set -eu
cd "$(dirname "$0")/.."
SIMS=${1:-500}
[ $# -gt 0 ] && shift
SEED=1
THREADS=${THREADS:-2}
if ! command -v Rscript >/dev/null 2>&1 || ! Rscript -e 'library(poweRlaw)' >/dev/null 2>&1; then
	echo "powerlaw_compare: R with poweRlaw not installed; skipping" >&2
	exit 0
fi
command -v jq >/dev/null 2>&1 || { echo "powerlaw_compare: needs jq" >&2; exit 1; }
BIN=$(mktemp -d)/wmzip
trap 'rm -rf "$(dirname "$BIN")"' EXIT
go build -o "$BIN" ./cmd/wmzip
[ $# -eq 0 ] && set -- testdata/ctmc/*.counts
printf 'side\tfile\txmin\talpha\tntail\tks\tp_gof\tseconds\n'
for f in "$@"; do
	start=$(date +%s.%N)
	"$BIN" audit --counts "$f" --json --sims "$SIMS" --seed "$SEED" -q >"$BIN.json"
	secs=$(echo "$(date +%s.%N) - $start" | bc)
	jq -r --arg f "$(basename "$f")" --arg s "$secs" \
		'"wmzip\t\($f)\t\(.power_law.xmin)\t\(.power_law.alpha*10000|round/10000)\t\(.power_law.n_tail)\t\(.power_law.ks*100000|round/100000)\t\(.bootstrap.p_gof // "NA")\t\($s|tonumber*10|round/10)"' "$BIN.json"
	printf 'poweRlaw\t'
	Rscript scripts/powerlaw_compare.R "$f" "$SIMS" "$SEED" "$THREADS"
done
