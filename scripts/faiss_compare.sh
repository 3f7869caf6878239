#!/bin/sh
# faiss_compare.sh — train wmzip's OPQ (cmd/wmzip/internal/opqbench) and faiss's
# OPQMatrix + ProductQuantizer on the same slot vectors, with the same M,
# bits, training sample and thread count, and print their figures side by
# side: relative MSE on train and held-out vectors, training seconds, encode
# vectors/s.
#
# usage: scripts/faiss_compare.sh [train.npz [test.npz]]
#
# Environment (defaults in brackets):
#   DATA     directory with train.npz and test.npz [/work/shared/data/web-pgdocs]
#   M, BITS  subspaces and bits per code [32, 6]
#   SAMPLE   training vectors, vector i*n/SAMPLE for i < SAMPLE [0 = all]
#   THREADS  threads for both [2]
#   PYTHON   interpreter with numpy and faiss [/usr/bin/python3]
#   OUT      directory for the JSON results [a temporary directory]
#   FAISS_LOAD  prefix of a faiss model saved by an earlier run (OUT/faiss):
#            skip faiss training and reuse its recorded training time
#   GO_FLAGS extra opqbench flags, e.g. "-opq-iters 30 -seed 2"
# Without faiss installed the Go side runs alone.
set -eu
cd "$(dirname "$0")/.."
DATA=${DATA:-/work/shared/data/web-pgdocs}
TRAIN=${1:-$DATA/train.npz}
TEST=${2:-$DATA/test.npz}
M=${M:-32}
BITS=${BITS:-6}
SAMPLE=${SAMPLE:-0}
THREADS=${THREADS:-2}
PYTHON=${PYTHON:-/usr/bin/python3}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"

go build -o "$OUT/opqbench" ./cmd/wmzip/internal/opqbench

echo "== wmzip/opq" >&2
# shellcheck disable=SC2086
"$OUT/opqbench" -train "$TRAIN" -test "$TEST" -M "$M" -bits "$BITS" \
	-sample "$SAMPLE" -threads "$THREADS" ${GO_FLAGS:-} >"$OUT/go.json"

results="$OUT/go.json"
if "$PYTHON" -c 'import faiss' 2>/dev/null; then
	echo "== faiss" >&2
	if [ -n "${FAISS_LOAD:-}" ]; then
		set -- --load "$FAISS_LOAD"
	else
		set -- --save "$OUT/faiss"
	fi
	"$PYTHON" scripts/faiss_compare.py --train "$TRAIN" --test "$TEST" --M "$M" \
		--nbits "$BITS" --sample "$SAMPLE" --threads "$THREADS" "$@" >"$OUT/faiss.json"
	results="$results $OUT/faiss.json"
else
	echo "faiss_compare.sh: faiss not importable by $PYTHON; Go side only" >&2
fi
echo "results in $OUT" >&2
# shellcheck disable=SC2086
"$PYTHON" scripts/faiss_compare.py --table $results
