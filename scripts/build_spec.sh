#!/usr/bin/env bash
# Rebuilds SPEC.md from its parts in docs/spec-*.md, in the order below
# (each part defines what the later ones use). SPEC.md is the normative
# document; the parts exist so that each package's section can be edited
# beside the others. CI checks that SPEC.md is up to date.
set -euo pipefail
cd "$(dirname "$0")/.."
parts="intro rans model wm gate format checklist vectors informative glossary"
{
cat <<'HDR'
# wmzip format specification

Container versions 3 and 4, model file versions 1 to 4, bundle version 1,
quantizer section versions 1 and 2, retention-gate section versions 1 and 2. This document specifies `.wmz` files and `.wmm` model
files: a third party must be able to write a bit-exact decoder and encoder
from it and the files of `testdata/conformance` alone. Section 1 says how
it is organized and which parts are informative.

(Generated from docs/spec-*.md by scripts/build_spec.sh; edit those files.)

Contents: 1. Introduction · 2. Entropy coding · 3. Model file (.wmm) ·
4. World model · 5. Retention gate · 6. Container (.wmz) · 7. Decoder
checklist · 8. Conformance vectors · Appendices A–C (informative) ·
Glossary.
HDR
for part in $parts; do
	f=docs/spec-$part.md
	[ -f "$f" ] || { echo "missing $f" >&2; exit 1; }
	echo
	cat "$f"
done
} > SPEC.md
