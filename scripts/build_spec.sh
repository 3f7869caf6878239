#!/usr/bin/env bash
# Rebuilds SPEC.md from its parts in docs/spec-*.md. SPEC.md is the
# normative document; the parts exist so that each package's section can be
# edited beside the others. CI checks that SPEC.md is up to date.
set -euo pipefail
cd "$(dirname "$0")/.."
{
cat <<'HDR'
# wmzip format specification

Version 3. This document is normative: a third party must be able to write
a bit-exact encoder and decoder of `.wmz` files and of `.wmm` model files
from it alone. Sections:

1. Container (.wmz): byte layout, records, index, checksums, limits, and the
   decoding procedure.
2. Entropy coding: rANS tables, Quantize, stream layout.
3. World model: the integer inference that gives every coordinate its
   table, and the model file (.wmm).
4. Retention: the entropy-gated rule that decides, without a stored mask,
   which coordinates a lossy file codes.

All multi-byte integers are little-endian. All arithmetic on the decode
path is integer arithmetic as written; nothing depends on floating point.
Test vectors: `testdata/rans/`, `testdata/format/`, `testdata/conformance/`.

(Generated from docs/spec-*.md by scripts/build_spec.sh; edit those files.)

HDR
for part in format rans wm gate; do
	f=docs/spec-$part.md
	[ -f "$f" ] || continue
	echo
	# Each part becomes a second-level section: a part whose first heading
	# is a first-level one is demoted by one level.
	if [ "$(grep -m1 '^#' "$f" | cut -c1-2)" = "# " ]; then
		sed -e 's/^#/##/' "$f"
	else
		cat "$f"
	fi
done
} > SPEC.md
