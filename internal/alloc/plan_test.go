package alloc

import (
	"slices"
	"testing"

	"github.com/wmzip/wmzip/internal/ctmc"
	"github.com/wmzip/wmzip/internal/format"
)

// synthLadder is a measured Ladder of q levels over T states whose rate
// grows with the level (100 + 20·level bits, +0–2 by state) and whose
// distortion is dist(level) for every state.
func synthLadder(T, q int, dist func(lv int) uint64) *Ladder {
	l := &Ladder{Lambdas: append(geometricLambdas(0.5, 512, q-1), format.LambdaLossless), States: T}
	for lv := range q {
		c, d := make([]uint64, T), make([]uint64, T)
		for i := range T {
			c[i] = uint64((100 + 20*lv + i%3) * 65536)
			d[i] = dist(lv)
		}
		l.Cost, l.Dist = append(l.Cost, c), append(l.Dist, d)
	}
	return l
}

// TestAllocLambdaPlan: in lambda space the levels follow λ_i ∝ w_i (higher
// weight, level at least as high), τ = 0 puts every state at one level or
// the next, and the plan fills the target.
func TestAllocLambdaPlan(t *testing.T) {
	const T, q = 40, 16
	l := synthLadder(T, q, func(lv int) uint64 { return 1000 >> lv })
	ranks := make([]int, T)
	for i := range ranks {
		ranks[i] = i + 1
	}
	for _, tau := range []float64{0, 1} {
		w, err := ctmc.Allocate(ranks, 1<<40, tau, ctmc.Floor(0))
		if err != nil {
			t.Fatal(err)
		}
		p := newPlan(l, SpaceLambda, w)
		target := 240.5 * T
		levels, pred, ok := p.fit(target)
		if !ok || pred > target || pred < target-40 {
			t.Errorf("τ %v: predicted %.1f, target %.1f, ok %v", tau, pred, target, ok)
		}
		lo, hi := slices.Min(levels), slices.Max(levels)
		if tau == 0 && hi-lo > 1 {
			t.Errorf("τ 0: levels %v span more than two", levels)
		}
		if tau == 1 {
			if hi-lo < 3 {
				t.Errorf("τ 1: levels %v barely spread", levels)
			}
			for i := 1; i < T; i++ {
				if levels[i] > levels[i-1] { // rank i+1 has the lower weight
					t.Errorf("τ 1: levels %v not falling with rank", levels)
					break
				}
			}
		}
	}
}

// TestAllocFlatTail: with the flat tail the states outside the access core
// share one weight, so in lambda space they sit at one level or the next,
// while the core keeps falling with rank; the core is cut at 80% of the
// accesses.
func TestAllocFlatTail(t *testing.T) {
	const T, q = 40, 16
	counts := make([]int64, T)
	for i := range counts {
		counts[i] = int64(T - i) // ranks 1..40
	}
	if k, err := TailCore(TailRanked, counts); k != 0 || err != nil {
		t.Errorf("ranked tail: core %d, %v", k, err)
	}
	// Σ = 820; the top k carry k(81-k)/2 ≥ 656 first at k = 23 (667; k = 22: 649).
	k, err := TailCore(TailFlat, counts)
	if err != nil || k != 23 {
		t.Fatalf("flat tail: core %d, %v; want 23", k, err)
	}
	l := synthLadder(T, q, func(lv int) uint64 { return 1000 >> lv })
	w, err := ctmc.Allocate(ctmc.Ranks(counts), 1<<40, 1, ctmc.Floor(0), ctmc.CoreSize(k), ctmc.FlatTail())
	if err != nil {
		t.Fatal(err)
	}
	for i := k; i < T; i++ {
		if w[i] != w[k-1] {
			t.Fatalf("weights %v: the tail is not flat at rank %d's", w, k)
		}
	}
	levels, pred, ok := newPlan(l, SpaceLambda, w).fit(240.5 * T)
	if !ok || pred > 240.5*T {
		t.Fatalf("predicted %.1f, ok %v", pred, ok)
	}
	tail := levels[k-1:]
	if lo, hi := slices.Min(tail), slices.Max(tail); hi-lo > 1 {
		t.Errorf("flat tail levels %v span more than two", tail)
	}
	if levels[0] <= levels[k-1] {
		t.Errorf("levels %v: the core's top is not above its boundary", levels)
	}
	for i := 1; i < k; i++ {
		if levels[i] > levels[i-1] {
			t.Errorf("levels %v not falling with rank in the core", levels)
			break
		}
	}
}

// TestAllocTailGuard: the guard floors the weights so that the least-read
// half's predicted distortion stays within G times the access-blind plan's
// at the same target, the plan still fits the target, the core stays above
// the tail, and without the guard the same rank law takes the tail further
// down.
func TestAllocTailGuard(t *testing.T) {
	const T, q = 40, 16
	l := synthLadder(T, q, func(lv int) uint64 { return 4096 >> (lv / 2) }) // distortion halves every other level
	ranks := make([]int, T)
	for i := range ranks {
		ranks[i] = i + 1
	}
	tail := LeastReadHalf(ranks)
	if len(tail) != T/2 || tail[0] != T-1 || slices.Contains(tail, 0) {
		t.Fatalf("guarded tail %v: want the %d states of the largest ranks", tail, T/2)
	}
	w, err := ctmc.Allocate(ranks, 1<<40, 1, ctmc.Floor(0))
	if err != nil {
		t.Fatal(err)
	}
	flat := make([]int64, T)
	for i := range flat {
		flat[i] = 1
	}
	for _, space := range []Space{SpaceLambda, SpaceBits} {
		target := 240.5 * T
		uni := newPlan(l, space, flat)
		ref, _, _ := uni.fit(target)
		free := newPlan(l, space, w)
		free.guard = &tailGuard{rho: 1, tail: tail, base: slices.Clone(free.w), uniform: uni}
		refTail := free.tailDist(ref)
		free.guard = nil
		open, _, _ := free.fit(target)
		for _, rho := range []float64{1, 1.25, 2} {
			p := newPlan(l, space, w)
			p.guard = &tailGuard{rho: rho, tail: tail, base: slices.Clone(p.w), uniform: uni}
			levels, pred, ok := p.fit(target)
			if !ok || pred > target {
				t.Errorf("%s, G %v: predicted %.1f > target %.1f (ok %v)", space, rho, pred, target, ok)
			}
			if d := p.tailDist(levels); d > rho*refTail {
				t.Errorf("%s, G %v: tail distortion %.0f > %.0f (uniform's %.0f)", space, rho, d, rho*refTail, refTail)
			}
			if !slices.Equal(p.w, p.guard.base) {
				t.Errorf("%s: the plan's weights changed by fit", space)
			}
			for i := 1; i < T; i++ {
				if levels[i] > levels[i-1] { // weights stay monotone in rank
					t.Errorf("%s, G %v: levels %v not falling with rank", space, rho, levels)
					break
				}
			}
			if rho == 1.25 {
				if levels[0] <= levels[T-1] {
					t.Errorf("%s: guarded levels %v: the core is not above the tail", space, levels)
				}
				if p.tailDist(open) <= 1.25*refTail {
					t.Errorf("%s: the unguarded plan's tail (%.0f) already meets the bound; the test does not exercise the guard", space, p.tailDist(open))
				}
			}
		}
	}
}
