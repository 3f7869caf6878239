#!/usr/bin/env bash
# Proves that a conformance vector pins a rule: copies the working tree,
# changes the reference decoder's rule as a wrong implementation would,
# and runs TestConformance (the pure-Go build). The mutated decoder must
# fail the vector named and pass every other. Usage:
#   scripts/mutate_decoder.sh            every mutation below
# Each mutation: name, the vector that must fail, file, perl substitution.
set -euo pipefail
cd "$(dirname "$0")/.."
mutations=(
	"lookup-cap|fast-reach.wmz|internal/wm/fast.go|s/e != 0 && steps < lookupCap; e = f.next/e != 0; e = f.next/"
	"dict-lookup-cap|fast-caps.wmz|internal/wm/fast.go|s/min\(pe.hi, pe.lo\+lookupCap\)/pe.hi/"
	"dict-share-m0|weak.wmz|internal/wm/predictor.go|s/d0 = \(fixed.W\(maxL-p.dict.l\) << 32\) \/ p.m.dictTotal/d0 = (fixed.W(maxL-p.dict.l) << 16) \/ p.m.dictTotal << 16/"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for mu in "${mutations[@]}"; do
	IFS='|' read -r name want file expr <<<"$mu"
	dst=$tmp/$name
	mkdir -p "$dst"
	git ls-files -co --exclude-standard | tar -cf - -T - | (cd "$dst" && tar -xf -)
	perl -0pi -e "$expr" "$dst/$file"
	if cmp -s "$file" "$dst/$file"; then
		echo "$name: the mutation does not apply to $file"; status=1; continue
	fi
	failed=$(cd "$dst" && go test -tags noasm -count=1 ./internal/format -run '^TestConformance$' -json 2>/dev/null |
		python3 -c 'import json,sys
f=set()
for l in sys.stdin:
    try: e=json.loads(l)
    except ValueError: continue
    t=e.get("Test","")
    if "/" in t and e.get("Action")=="fail": f.add(t.split("/",1)[1])
print(" ".join(sorted(f)))') || true # the mutated test fails
	if [ "$failed" = "$want" ]; then
		echo "$name: the mutated decoder fails $want and passes every other vector"
	else
		echo "$name: the mutated decoder fails [$failed], want exactly [$want]"; status=1
	fi
done
exit $status
