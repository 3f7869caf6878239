#!/usr/bin/env bash
# Proves that a conformance vector pins a rule: copies the working tree,
# changes the reference decoder's rule as a wrong implementation would,
# and runs TestConformance (the pure-Go build). The mutated decoder must
# fail exactly the vectors named (in name order) and pass every other. Usage:
#   scripts/mutate_decoder.sh            every mutation below
#   scripts/mutate_decoder.sh NAME...    the mutations named
# Each mutation: name, the vectors that must fail, file, perl substitution.
set -euo pipefail
cd "$(dirname "$0")/.."
mutations=(
	"lookup-cap|fast-reach.wmz|internal/wm/fast.go|s/e != 0 && steps < lookupCap; e = f.next/e != 0; e = f.next/"
	"lookup-cap-63|fast-reach.wmz|internal/wm/fast.go|s/e != 0 && steps < lookupCap; e = f.next/e != 0 && steps < lookupCap-1; e = f.next/"
	"lookup-cap-65|fast-reach.wmz|internal/wm/fast.go|s/e != 0 && steps < lookupCap; e = f.next/e != 0 && steps < lookupCap+1; e = f.next/"
	"dict-lookup-cap-63|fast-reach.wmz|internal/wm/fast.go|s/min\(pe.hi, pe.lo\+lookupCap\)/min(pe.hi, pe.lo+lookupCap-1)/"
	"dict-lookup-cap-65|fast-reach.wmz|internal/wm/fast.go|s/min\(pe.hi, pe.lo\+lookupCap\)/min(pe.hi, pe.lo+lookupCap+1)/"
	"dict-lookup-cap|fast-caps.wmz fast-reach.wmz|internal/wm/fast.go|s/min\(pe.hi, pe.lo\+lookupCap\)/pe.hi/"
	"dict-share-m0|round.wmz weak.wmz|internal/wm/predictor.go|s/d0 = \(fixed.W\(maxL-p.dict.l\) << 32\) \/ p.m.dictTotal/d0 = (fixed.W(maxL-p.dict.l) << 16) \/ p.m.dictTotal << 16/"
	"ep-share-m0|round.wmz|internal/wm/predictor.go|s/e0 = \(fixed.W\(maxL-p.ep.l\) << 32\) \/ p.ep.total/e0 = (fixed.W(maxL-p.ep.l) << 16) \/ p.ep.total << 16/"
	"ep-share-m1|round.wmz|internal/wm/episode.go|s/x := \(w1 << 16\) \/ e.cnt\[e.v0\] << 8\n(\s*)for _, c := range e.next\[e.v0\] \{\n(\s*)w\[c.v\] \+= x \* uint64\(c.n\)/x := (w1 << 32) \/ e.cnt[e.v0]\n\1for _, c := range e.next[e.v0] {\n\2w[c.v] += x * uint64(c.n) >> 16 << 8/"
	"dict-share-m1|round.wmz|internal/wm/dicthyp.go|s/d1 := \(w1 << 32\) \/ m.dictCnt\[d.v0\]/d1 := (w1 << 16) \/ m.dictCnt[d.v0] << 16/"
	"prune-bits|round.wmz|internal/wm/predictor.go|s/const pruneBits = 20/const pruneBits = 24/"
	"quantize-max-scaled|scaled.wmz|internal/rans/table.go|s/addFrom\(cum\[:len\(w\)\], firstOf\(w, top\)\+1, d\)/sh := uint(max(bits.Len64(total), 32) - 32)\n\t\ts := 0\n\t\tfor w[s]>>sh != top>>sh {\n\t\t\ts++\n\t\t}\n\t\taddFrom(cum[:len(w)], s+1, d)/"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for mu in "${mutations[@]}"; do
	IFS='|' read -r name want file expr <<<"$mu"
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx -- "$name"; then
		continue
	fi
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
