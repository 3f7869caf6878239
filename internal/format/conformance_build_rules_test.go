package format

import (
	"fmt"
	"math/bits"
	"math/rand/v2"

	"github.com/wmzip/wmzip/internal/fixed"
	"github.com/wmzip/wmzip/internal/wm"
)

// Models and inputs of the vectors that pin rules no other vector
// decides: a decoder that gets one of them wrong passes every other
// vector and fails this one (scripts/mutate_decoder.sh proves it by
// changing the reference decoder).

// buildRound pins the roundings of the virtual weights (SPEC.md 4.11):
// ep's share at m = 0 formed with 16 more bits and multiplied by |EP_v|,
// ep's share at m = 1 formed at the scale and added once per tile, and
// dict's share at m = 1 formed with 16 more bits and multiplied by pcnt.
// A rounding gets wrong by up to the count it multiplies, so the chunk
// holds hundreds of distinct tiles that start with the same two codes
// (|EP_v| and the count of tiles with one second code are then large),
// and the reference store holds long runs of one pair entry; P = 16, so
// that a small change of a weight shows in a table. It also pins the
// pruning line (4.12, step 6: 20 bits): groups pruned there would weigh
// again a few states later, had they been kept.
func buildRound() (conformanceInput, *wm.Model) {
	g := wm.Geometry{S: 8, M: 4, K: 64}
	rng := rand.New(rand.NewPCG(14, 42))
	n := g.N()
	b := &wmmBuild{version: 2, g: g, prec: 16}
	// ep and dict lead the priors, so that their weights dominate the
	// tables.
	b.classStats(rng, [8]uint32{2, 1, 1, 1, 1, 40, 40, 20}, false)
	b.ctx = 1
	b.fall = randRows(rng, g.M*b.ctx, g.K, rowSkewed, rowFlat, rowSkewed, rowTwoPeaks)
	b.subMix = 128
	b.cont = contLists(g.S, 2)
	// The store: 240 states whose tiles start with 7 and then 9 (most),
	// 10 or 11, so that DC_7 and the pair entries' counts divide nothing
	// evenly; a few other tiles.
	ref := episode{Actions: make([]int64, 240)}
	for r := range ref.Actions {
		ref.Actions[r] = int64(r % 3)
		for s := range g.S {
			second := []uint16{9, 9, 9, 10, 9, 11, 9}[(r+s)%7]
			first := uint16(7)
			if (r*g.S+s)%13 == 0 {
				first = uint16(rng.IntN(g.K))
			}
			ref.Codes = append(ref.Codes, first, second, uint16(r%23), uint16(rng.IntN(g.K)))
		}
	}
	b.refFrom([]episode{ref})
	// The chunk: 400 states of fresh tiles (7 or 8, 9 or 10, x, y), then
	// states seen before. A rounding that changes only the weight of the
	// value that takes Quantize's leftover (the likeliest) changes no
	// frequency: two first and two second codes share the tiles.
	var e episode
	k := 0
	for t := range 400 {
		st := make([]uint16, n)
		for s := range g.S {
			tl := st[s*g.M : (s+1)*g.M]
			tl[0], tl[1], tl[2], tl[3] = uint16(7+k%2), uint16(9+k/2%2), uint16(k/g.K%g.K), uint16(k%g.K)
			k++
		}
		e.Actions = append(e.Actions, int64(t%4))
		e.Codes = append(e.Codes, st...)
	}
	e.Actions[0] = wm.NoAction
	for t := range 8 {
		r := t * 37 % 400
		e.Actions = append(e.Actions, 1)
		e.Codes = append(e.Codes, e.Codes[r*n:(r+1)*n]...)
	}
	return inputOf(g, b.prec, []episode{e}), b.model()
}

// buildReach pins the fast level's chunk lookup limit (SPEC.md 4.15.4:
// among the first 64 slots of SL(h0, h1)): a chunk of 72 slots of tiles
// (7, 9, x, y), x distinct, then slots that repeat the first ones, whose
// lookups meet their earlier tile past the 64th slot of the list (no
// match) or within it, the 65th and the 64th among them, so that a limit
// of 63 or 65 fails the vector as no limit does; then two slots whose
// lookups go to the dictionary and meet the 64th and the 65th tile of a
// run. The reference store holds no tile starting with 7.
func buildReach() (conformanceInput, *wm.Model) {
	g := wm.Geometry{S: 2, M: 4, K: 128}
	rng := rand.New(rand.NewPCG(14, 43))
	n := g.N()
	b := &wmmBuild{version: 2, g: g, prec: 12}
	b.classStats(rng, [8]uint32{20, 4, 6, 8, 8, 6, 6, 10}, false)
	b.ctx = 1
	b.fall = randRows(rng, g.M*b.ctx, g.K, rowSkewed)
	b.subMix = 128
	b.cont = contLists(g.S, 1)
	ref := episode{Actions: make([]int64, 6)}
	for range ref.Actions {
		for range n {
			ref.Codes = append(ref.Codes, uint16(20+rng.IntN(g.K-20)))
		}
	}
	// A second reference episode: 70 tiles (11, 13, x, y), x distinct and
	// each once, so that tile x is at position lo + x of the pair entry
	// (13, …) of DICT_11.
	dtile := func(x int) []uint16 { return []uint16{11, 13, uint16(x), uint16((3*x + 1) % g.K)} }
	var dref episode
	for r := range 35 {
		dref.Actions = append(dref.Actions, 0)
		dref.Codes = append(append(dref.Codes, dtile(2*r)...), dtile(2*r+1)...)
	}
	b.refFrom([]episode{ref, dref})
	var e episode
	tile := func(x int) []uint16 { return []uint16{7, 9, uint16(x), uint16((5 * x) % g.K)} }
	for t := range 36 {
		e.Actions = append(e.Actions, 0)
		e.Codes = append(append(e.Codes, tile(2*t)...), tile(2*t+1)...)
	}
	// Slot x of the first states is the (72 − x)th of SL(7, 9) once 72
	// slots are finished: tiles 0 to 7 lie past the 64th, tile 7 the 65th;
	// one slot later tile 9 is the 64th; 40 lies within the limit.
	for _, p := range [][2]int{{7, 9}, {3, 40}, {5, 1}, {6, 60}} {
		e.Actions = append(e.Actions, 1)
		e.Codes = append(append(e.Codes, tile(p[0])...), tile(p[1])...)
	}
	// The dictionary's limit: no slot of the chunk starts with (11, 13),
	// so the lookups of these slots go to DICT_11, where tile 63 is the
	// 64th of the run (found) and tile 64 the 65th (not found).
	e.Actions = append(e.Actions, 2)
	e.Codes = append(append(e.Codes, dtile(63)...), dtile(64)...)
	e.Actions[0] = wm.NoAction
	m, err := b.model().WithLevel(wm.LevelFast)
	if err != nil {
		panic(err)
	}
	return inputOf(g, b.prec, []episode{e}), m
}

// buildScaled pins Quantize's index of the largest weight, taken before
// the scaling (SPEC.md 2.3, step 3: amax is not recomputed). Its combined
// row (4.11; C = 1 and M = 1, so one row serves every coordinate) has
// weights of total 2^32 or more (sh = 1) whose largest, at value 20, is
// odd and one more than the weight of value 10: after the shift the two
// are equal, so a decoder that looks for the largest weight after scaling
// gives the leftover to value 10 instead of 20. Every one-step table and
// miss table of the chunk is made from that row.
func buildScaled() (conformanceInput, *wm.Model) {
	g := wm.Geometry{S: 4, M: 1, K: 300}
	rng := rand.New(rand.NewPCG(14, 44))
	b := &wmmBuild{version: 2, g: g, prec: 16}
	b.classStats(rng, [8]uint32{20, 4, 6, 8, 8, 6, 6, 10}, false)
	b.ctx = 1
	b.ctx2 = g.K + 1
	b.e1, b.e2 = 64, 64
	// The distances d = mx − lp(f) of the two rows' powers (SPEC.md 3.2)
	// at every value: the product's weight W(d1)·W(d2) >> 8 is largest at
	// value 20 (3, 17), one less at value 10 (2, 18), and smaller wherever
	// d1 + d2 ≥ 22, the rows' modes (values 0 and 1) included.
	lo1, hi1 := make([]int32, g.K), make([]int32, g.K)
	lo2, hi2 := make([]int32, g.K), make([]int32, g.K)
	for v := range g.K {
		lo1[v], hi1[v], lo2[v], hi2[v] = 11, 16, 11, 16
	}
	exact := func(v int, x, y int32) { lo1[v], hi1[v], lo2[v], hi2[v] = x, x, y, y }
	exact(0, 0, 24)
	exact(1, 24, 0)
	exact(10, 2, 18)
	exact(20, 3, 17)
	row1, d1 := powerRow(b.e1, lo1, hi1)
	row2, d2 := powerRow(b.e2, lo2, hi2)
	b.fall = row1
	b.fall2 = randRows(rng, g.M*b.ctx2, g.K, rowFlat, rowSkewed)
	copy(b.fall2[g.K*g.K:], row2) // the row of ctx2 = K, the only one read at M = 1
	w := make([]uint64, g.K)
	var total uint64
	for v := range w {
		w[v] = min(fixed.W(d1[v]), 65535) * min(fixed.W(d2[v]), 65535) >> 8
		total += w[v]
	}
	sh := bits.Len64(total) - 32
	for v := range w {
		if v != 20 && w[v] >= w[20] || total < 1<<32 || w[10]>>sh != w[20]>>sh {
			panic(fmt.Sprintf("buildScaled: value %d weighs %d, value 20 %d, total %d", v, w[v], w[20], total))
		}
	}
	b.subMix = 128
	b.cont = contLists(g.S, 1)
	pages := randPages(rng, g, 4)
	b.refFrom(walk(rng, g, pages, []int{12}, 4))
	eps := walk(rng, g, pages, []int{40, 9}, 3)
	return inputOf(g, b.prec, eps), b.model()
}

// powerRow returns a row of frequencies (each ≥ 1, sum 65536) whose power
// of exponent e (SPEC.md 3.2: lp(f) = (e·lg(f)) >> 8, d = max lp − lp)
// has a distance d in [lo[v], hi[v]] at every value v, and the distances
// of the row; exactly one value must have the range [0, 0], the row's
// mode.
func powerRow(e uint16, lo, hi []int32) ([]uint16, []int32) {
	lp := func(f int) int32 { return int32(e) * fixed.Lg(uint64(f)) >> 8 }
	for top := 64; top < 4096; top++ {
		mx := lp(top)
		fmin, fmax := make([]int, len(lo)), make([]int, len(lo))
		sumLo, sumHi := 0, 0
		ok := true
		for v := range lo {
			if hi[v] == 0 {
				fmin[v], fmax[v] = top, top
			} else {
				for f := top - 1; f >= 1 && mx-lp(f) <= hi[v]; f-- {
					if mx-lp(f) >= lo[v] {
						fmin[v] = f
						if fmax[v] == 0 {
							fmax[v] = f
						}
					}
				}
			}
			if fmin[v] == 0 {
				ok = false
				break
			}
			sumLo, sumHi = sumLo+fmin[v], sumHi+fmax[v]
		}
		if !ok || sumLo > 1<<16 || sumHi < 1<<16 {
			continue
		}
		row, d := make([]uint16, len(lo)), make([]int32, len(lo))
		left := 1<<16 - sumLo
		for v := range lo {
			add := min(left, fmax[v]-fmin[v])
			row[v], left = uint16(fmin[v]+add), left-add
			d[v] = mx - lp(int(row[v]))
		}
		return row, d
	}
	panic("powerRow: no row has these distances")
}
