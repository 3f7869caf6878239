package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/wmzip/wmzip/ctmc"
	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/wm"
)

// Storage by access (`wmzip encode --access`, `wmzip bench alloc`).
//
// Every state of a file gets one of 16 retention levels: 15 finite lambdas
// and lossless. The ladder is fitted to the file, since where a model's
// rate changes with λ depends on the model and the data:
//
//  0. Ladder: a first pass encodes the trajectory at 8 lambdas geometric
//     from 2^-4 to 2^15 (the span encode's --distortion search covers) and
//     losslessly; the 15 finite levels are then placed geometrically from
//     the largest of those lambdas whose rate is within 2% (of the
//     lossless-to-lowest range) of the lowest rate to the smallest whose
//     rate is within 2% of the lossless rate.
//
// The plan:
//
//  1. Measure: the trajectory is encoded once per level with every state at
//     that level; each state's cost (Writer.LastAccount().Cost) and
//     distortion are recorded, and the file's framing (bytes beyond the sum
//     of the state costs) is noted.
//  2. Weigh: w_i = r_i^-τ from the access ranks, through ctmc.Allocate
//     (its integer split of B·T bits in bits space, of 2^40 units in lambda
//     space, where only the ratios matter). With --tail flat (not the
//     default) the weights are a ranked core and a flat tail,
//     w_i = min(r_i, k)^-τ (ctmc.FlatTail): k is the rank cut of the
//     smallest set of top-ranked states carrying 80% of the accesses
//     (ctmc.CoreRankByCounts with ctmc.DefaultCoreMass, the Pareto split
//     ctmc already reports; fixed, not tuned on the bench), since ranks
//     among rarely read states are noise. bench alloc (docs/results-ctmc.md)
//     found its access-weighted distortion lower than the ranked tail's on
//     4 of 5 families and its tail 1.4–2.7× lighter, but it misses the bar
//     too (lowest access-weighted on 3 of 5, tail 1.50–2.39× uniform's),
//     so ranked stays the default.
//  3. Map, in one of two spaces (--alloc-space), with a global scale s
//     found by bisection so that the predicted file (measured costs plus
//     framing) fits B·T:
//     - lambda (the default): state i gets λ_i = s·w_i/mean(w) and takes
//       the highest level whose λ is ≤ λ_i (level 0 when none is; lossless
//       counts as one geometric ladder step above the top finite λ). The
//       gate keeps a coordinate iff λ·(distortion it saves) ≥ (bits it
//       costs), so λ is the price of distortion in bits, and minimising
//       Σ c_i·d_i subject to Σ R_i ≤ B gives λ_i ∝ c_i (Lagrangian); r^-τ
//       stands for c_i. τ = 0 is one λ for every state. States of equal
//       weight cross a ladder λ together, so at the largest fitting scale
//       the group the next scale would raise is raised in part (by measured
//       distortion saved per bit, then file order) while the prediction
//       fits — else a flat allocation could only take 16 file sizes.
//     - bits: state i's bit budget is b_i ∝ w_i and it takes the highest
//       level whose measured cost is ≤ s·b_i (level 0 when none is).
//     Why lambda is the default: on `wmzip bench alloc`'s five graphworld
//     families at 40% of the lossless rate (docs/results-ctmc.md), lambda
//     has the lower access-weighted distortion at τ = 1 on 3 of 5 families
//     and on average (0.137 against 0.149), and at τ = 0 on all five
//     (14–37% lower: one λ for all beats equal bits for all); the best of
//     all eight allocations is a lambda one on 4 of 5 families. Against it:
//     at τ = 1 its tail is heavier than bits' on 4 of 5 families, and
//     neither space meets the bar there (CTMC lowest of its four on every
//     family, tail ≤ 1.5× uniform's): r^-τ at τ = 1 spreads λ 370–381×
//     over 400 states, where these traces' counts are far flatter.
//  3a. Tail guard (--tail-guard G, default 1.25; 0 is off): the rank law
//     may not take more from the tail — the half of the states read least
//     — than G times the distortion one λ for every state (τ = 0, blind to
//     access) would give it at the same target, as predicted from the
//     measured ladder. The weights get a floor, w_i' = max(w_i, φ), at the
//     least φ (bisected) that meets the bound: the states above the floor
//     form a core ranked by r^-τ, the rest share the floor's weight — the
//     floor of ctmc.Allocate made a guarantee. Without it, τ = 1 on
//     bench alloc's random-walk traces (far flatter than r^-1) left the
//     tail at 1.5–5.2× uniform's distortion and lost to uniform on access-
//     weighted distortion on 3 of 5 families; with G = 1.25 it is lowest on
//     all five on the mean of three walk seeds (13 of 15 single walks),
//     the tail at 0.74–1.28× uniform's (docs/results-ctmc.md). G was fixed
//     at 1.25 before measuring, not tuned on the bench.
//  4. Encode for real, closed loop, with Writer.SetLevel per state. A
//     state's cost depends on the levels of the states before it, so the
//     file differs from the prediction: the prediction's target is scaled
//     by budget ÷ achieved (bisection once bracketed) and the encoding
//     retried (at most allocTries encodings, until within allocTol below
//     the budget); the largest file within the budget is kept. Closed-loop
//     files can jump between plans a hair apart, so when the best file is
//     still more than allocTol below the budget, the levels walk from it
//     toward the smallest file over the budget, state by state in file
//     order, bisecting how many states change (at most allocTries more).
//
// The planning uses float64 (Allocate's r^-τ, the scale, the λ): it is
// deterministic for the same inputs on one platform, and none of it is on
// the decode path — the file records each state's level, and decoding is
// integer arithmetic as always.

const (
	ladderFinite = 15
	allocTries   = 6
	allocTol     = 0.01 // stop once within 1% below the budget
)

// geometricLambdas returns n lambdas geometric from lo to hi (n ≥ 2),
// strictly increasing in 16.16 fixed point.
func geometricLambdas(lo, hi float64, n int) []uint32 {
	l := make([]uint32, 0, n)
	for k := range n {
		v, _ := gate.LambdaFixed(lo * math.Pow(hi/lo, float64(k)/float64(n-1)))
		if len(l) > 0 && v <= l[len(l)-1] {
			v = l[len(l)-1] + 1
		}
		l = append(l, v)
	}
	return l
}

// fitLadder measures the level ladder of tr (step 0 and 1 above). A budget
// (bits/state, > 0) below the first pass's lowest rate fails early with
// errBudget.
func fitLadder(m *wm.Model, tr *npz.Trajectory, keyframe, workers int, budget float64, logf func(string, ...any)) (*ladder, error) {
	if logf != nil {
		logf("ladder, first pass:")
	}
	coarse, err := measureLadder(m, tr, keyframe, append(geometricLambdas(1.0/16, 1<<15, 8), format.LambdaLossless), workers, logf)
	if err != nil {
		return nil, err
	}
	r := coarse.fileBits
	if low := r[0] / float64(max(tr.T, 1)); budget > 0 && budget < low {
		return nil, fmt.Errorf("%w: %.1f bits/state at λ = %s > budget %.6g", errBudget, low, lambdaString(coarse.lambdas[0]), budget)
	}
	q := len(r) - 1 // lossless
	span := r[q] - r[0]
	lo, hi := 0, q-1
	for k := 1; k < q; k++ {
		if r[k] <= r[0]+0.02*span {
			lo = k
		}
	}
	for k := q - 1; k > lo; k-- {
		if r[k] >= r[q]-0.02*span {
			hi = k
		}
	}
	if hi <= lo {
		hi = min(lo+1, q-1)
		lo = max(hi-1, 0)
	}
	f := func(l uint32) float64 { return float64(l) / 65536 }
	if logf != nil {
		logf("ladder: 15 levels from λ = %s to %s, and lossless:", lambdaString(coarse.lambdas[lo]), lambdaString(coarse.lambdas[hi]))
	}
	return measureLadder(m, tr, keyframe, append(geometricLambdas(f(coarse.lambdas[lo]), f(coarse.lambdas[hi]), ladderFinite), format.LambdaLossless), workers, logf)
}

// encodeWith is encodeTo with hooks around each state (numbered 0..T-1 in
// file order): before may set its level, after may read its account.
func encodeWith(w io.Writer, m *wm.Model, tr *npz.Trajectory, prog func(int, int), before func(i int, fw *format.Writer) error, after func(i int, fw *format.Writer), opts ...format.Option) (format.Account, format.Header, error) {
	fw, err := format.NewWriter(w, m, opts...)
	if err != nil {
		return format.Account{}, format.Header{}, err
	}
	n := m.Geom.N()
	eps := tr.Episodes()
	for k, e := range eps {
		if err := fw.WriteEpisode(nil); err != nil {
			return format.Account{}, format.Header{}, err
		}
		for t := e[0]; t < e[1]; t++ {
			if before != nil {
				if err := before(t, fw); err != nil {
					return format.Account{}, format.Header{}, err
				}
			}
			if err := fw.WriteState(tr.Actions[t], tr.Codes[t*n:(t+1)*n]); err != nil {
				return format.Account{}, format.Header{}, err
			}
			if after != nil {
				after(t, fw)
			}
		}
		prog(k+1, len(eps))
	}
	if err := fw.Close(); err != nil {
		return format.Account{}, format.Header{}, err
	}
	return fw.Account(), fw.Header(), nil
}

// ladder holds the measured cost and distortion of every state at every
// level.
type ladder struct {
	lambdas  []uint32
	cost     [][]uint64 // [level][state], 2^-16 bit
	dist     [][]uint64 // [level][state], gate distance sum
	fileBits []float64  // [level]: the file's bits, model excluded
	framing  float64    // bits of a file beyond its states' costs (largest over the levels)
	states   int
}

// measureLadder encodes tr once per level of lambdas, every state at that
// level, on up to workers goroutines.
func measureLadder(m *wm.Model, tr *npz.Trajectory, keyframe int, lambdas []uint32, workers int, logf func(string, ...any)) (*ladder, error) {
	q := len(lambdas)
	l := &ladder{lambdas: lambdas, cost: make([][]uint64, q), dist: make([][]uint64, q), fileBits: make([]float64, q), states: tr.T}
	errs := make([]error, q)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lv := range next {
				cost, dist := make([]uint64, tr.T), make([]uint64, tr.T)
				cw := &countWriter{}
				_, _, err := encodeWith(cw, m, tr, func(int, int) {},
					func(_ int, fw *format.Writer) error { return fw.SetLevel(lv) },
					func(i int, fw *format.Writer) {
						a := fw.LastAccount()
						cost[i], dist[i] = a.Cost, a.DistSum
					},
					format.WithKeyframeInterval(keyframe), format.WithLevels(lambdas...))
				errs[lv] = err
				l.cost[lv], l.dist[lv] = cost, dist
				l.fileBits[lv] = float64(cw.n) * 8
			}
		}()
	}
	for lv := range q {
		next <- lv
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for lv := range q {
		var sum uint64
		for _, c := range l.cost[lv] {
			sum += c
		}
		l.framing = max(l.framing, l.fileBits[lv]-float64(sum)/65536)
		if logf != nil {
			logf("  level %2d  lambda %-9s %8.1f bits/state", lv, lambdaString(lambdas[lv]), l.fileBits[lv]/float64(max(tr.T, 1)))
		}
	}
	return l, nil
}

func lambdaString(l uint32) string {
	if l == format.LambdaLossless {
		return "lossless"
	}
	return fmt.Sprintf("%.4g", float64(l)/65536)
}

// allocSpace says what the rank weights w_i = r_i^-τ scale: the states'
// bit budgets or their retention trade-offs λ (see the comment at the top
// of this file).
type allocSpace string

const (
	spaceBits   allocSpace = "bits"
	spaceLambda allocSpace = "lambda"
	// defaultAllocSpace is encode --access's mapping; the evidence for it is
	// in the comment at the top of this file and docs/results-ctmc.md.
	defaultAllocSpace = spaceLambda
)

// tailMode says how the weights treat the states outside the core (see
// the comment at the top of this file).
type tailMode string

const (
	tailRanked tailMode = "ranked" // w_i = r_i^-τ for every state
	tailFlat   tailMode = "flat"   // w_i = min(r_i, k)^-τ, k the access core's rank cut
	// defaultTail is encode --access's tail; the evidence is in
	// docs/results-ctmc.md.
	defaultTail = tailRanked
	// accessCoreMass is the share of the accesses the core carries under
	// the flat tail: ctmc.DefaultCoreMass, the Pareto 80/20 split ctmc
	// already uses for its core/tail report, fixed before any measurement
	// and not tuned on the bench.
	accessCoreMass = ctmc.DefaultCoreMass
)

func parseTailMode(v string) (tailMode, error) {
	switch m := tailMode(v); m {
	case tailRanked, tailFlat:
		return m, nil
	}
	return "", fmt.Errorf("--tail %q: want ranked or flat", v)
}

// tailCore returns the rank cut of the flat tail's core for counts (the
// smallest set of top-ranked states carrying accessCoreMass of the
// accesses; ctmc.CoreRankByCounts), or 0 for the ranked tail.
func tailCore(mode tailMode, counts []int64) (int, error) {
	if mode != tailFlat {
		return 0, nil
	}
	return ctmc.CoreRankByCounts(counts, accessCoreMass)
}

// defaultTailGuard is encode --access's and bench alloc's --tail-guard:
// the least-read half of the states may lose at most this factor of the
// distortion an access-blind allocation would give them.
const defaultTailGuard = 1.25

func checkTailGuard(g float64) error {
	if g != 0 && !(g >= 1 && !math.IsInf(g, 0)) {
		return fmt.Errorf("--tail-guard %v: want 0 (off) or a finite factor ≥ 1", g)
	}
	return nil
}

func parseAllocSpace(v string) (allocSpace, error) {
	switch s := allocSpace(v); s {
	case spaceBits, spaceLambda:
		return s, nil
	}
	return "", fmt.Errorf("--alloc-space %q: want bits or lambda", v)
}

// plan maps per-state weights to levels at a scale s (see the top of this
// file): in bits space a weight is a bit budget, in lambda space a
// relative λ.
type plan struct {
	l     *ladder
	space allocSpace
	w     []float64 // bits: the budget of state i (bits); lambda: w_i / mean(w)
	lam   []float64 // lambda space: the ladder's λ per level, lossless one geometric step above the top finite λ
	guard *tailGuard
}

// tailGuard bounds what the rank law may take from the tail: the
// least-read half of the states (tail) may reach at most rho times the
// predicted distortion that one λ for every state (the access-blind
// allocation, τ = 0) gives it at the same target. It does so with a floor
// on the weights, w_i' = max(w_i, φ), at the least φ that meets the bound:
// the weights stay monotone in access (a less-read state never outweighs a
// more-read one), the states below the floor share one weight, and φ runs
// from the rank law itself (φ = 0) to the access-blind allocation
// (φ = max w), which meets the bound by definition.
type tailGuard struct {
	rho     float64
	tail    []int     // the half of the states of the largest ranks (ties: file order)
	base    []float64 // the plan's own weights (p.w before the floor)
	uniform *plan     // the access-blind plan of the same ladder and space
}

// leastReadHalf returns the states a tail guard protects: the ⌊T/2⌋ of
// the largest ranks (the least accessed), ties in file order — the tail
// the Table 6 analogue reports.
func leastReadHalf(ranks []int) []int {
	order := make([]int, len(ranks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ranks[b], ranks[a]) })
	return order[:len(ranks)/2]
}

// tailDist is the tail's predicted distortion (measured per level) at levels.
func (p *plan) tailDist(levels []int) float64 {
	var d float64
	for _, i := range p.guard.tail {
		d += float64(p.l.dist[levels[i]][i])
	}
	return d
}

func newPlan(l *ladder, space allocSpace, w []int64) *plan {
	p := &plan{l: l, space: space, w: make([]float64, len(w))}
	var sum float64
	for _, v := range w {
		sum += float64(v)
	}
	mean := sum / float64(max(len(w), 1))
	for i, v := range w {
		if space == spaceLambda && mean > 0 {
			p.w[i] = float64(v) / mean
		} else {
			p.w[i] = float64(v)
		}
	}
	if space == spaceLambda {
		q := len(l.lambdas)
		p.lam = make([]float64, q)
		for k, v := range l.lambdas {
			p.lam[k] = float64(v) / 65536
		}
		if q >= 3 && l.lambdas[q-1] == format.LambdaLossless {
			p.lam[q-1] = p.lam[q-2] * p.lam[q-2] / p.lam[q-3]
		} else if q >= 2 && l.lambdas[q-1] == format.LambdaLossless {
			p.lam[q-1] = 2 * p.lam[q-2]
		}
	}
	return p
}

// pick sets levels at scale s and returns the predicted bits of the
// states. Bits: the highest level whose measured cost is ≤ s·b_i. Lambda:
// the highest level whose λ is ≤ s·w_i/mean(w). Level 0 when none is.
func (p *plan) pick(s float64, levels []int) float64 {
	l := p.l
	var sum uint64
	for i, w := range p.w {
		lv := 0
		if p.space == spaceLambda {
			lim := s * w
			for k := len(p.lam) - 1; k > 0; k-- {
				if p.lam[k] <= lim {
					lv = k
					break
				}
			}
		} else {
			lim := s * w * 65536
			for k := len(l.lambdas) - 1; k > 0; k-- {
				if float64(l.cost[k][i]) <= lim {
					lv = k
					break
				}
			}
		}
		levels[i] = lv
		sum += l.cost[lv][i]
	}
	return float64(sum) / 65536
}

// fit returns the levels of the largest scale whose predicted file (state
// costs plus framing) is at most target bits, and the prediction. ok is
// false when even the lowest level of every state exceeds target.
//
// In lambda space states of equal weight cross a ladder λ at the same
// scale, so the prediction moves in steps as large as a whole group (with
// τ = 0, every state: 16 possible files). At the largest fitting scale the
// group that the next scale would raise is raised in part — states in
// order of the measured distortion saved per bit of the raise, then file
// order — as long as the prediction fits: the discrete form of the
// Lagrangian's time sharing between two levels at the critical λ.
//
// With a tail guard, the weights are floored at the least φ (bisected) at
// which the tail's predicted distortion is within the guard's bound
// (tailGuard); when none meets it, the access-blind plan is returned,
// which meets it by definition.
func (p *plan) fit(target float64) (levels []int, pred float64, ok bool) {
	g := p.guard
	if g == nil {
		return p.fitScale(target)
	}
	ref, refPred, refOK := g.uniform.fitScale(target)
	if !refOK {
		return ref, refPred, false
	}
	limit := g.rho * p.tailDist(ref)
	defer copy(p.w, g.base)
	try := func(phi float64) ([]int, float64, bool, bool) {
		for i, w := range g.base {
			p.w[i] = max(w, phi)
		}
		lv, pr, fits := p.fitScale(target)
		return lv, pr, fits, fits && p.tailDist(lv) <= limit
	}
	if lv, pr, fits, met := try(0); met || !fits {
		return lv, pr, fits
	}
	// Bisect φ (in log φ) between the smallest weight, where the floor
	// binds nothing, and the largest, where every state weighs alike.
	lo, hi := math.Inf(1), slices.Max(g.base)
	for _, w := range g.base {
		if w > 0 {
			lo = min(lo, w)
		}
	}
	if !(hi > 0) {
		return ref, refPred, true
	}
	if _, _, _, met := try(hi); !met {
		return ref, refPred, true // the flat weights of one tie order: the access-blind plan
	}
	lo = min(lo, hi)
	for range 40 {
		mid := math.Sqrt(lo * hi)
		if _, _, _, met := try(mid); met {
			hi = mid
		} else {
			lo = mid
		}
	}
	lv, pr, _, _ := try(hi)
	return lv, pr, true
}

// fitScale is fit without the tail guard, with the plan's weights p.w.
func (p *plan) fitScale(target float64) (levels []int, pred float64, ok bool) {
	l := p.l
	levels = make([]int, len(p.w))
	lo, hi := -64.0, 64.0 // log2 of the scale
	if pr := p.pick(math.Exp2(hi), levels) + l.framing; pr <= target {
		return levels, pr, true
	}
	if pr := p.pick(math.Exp2(lo), levels) + l.framing; pr > target {
		return levels, pr, false
	}
	for range 80 {
		mid := (lo + hi) / 2
		if p.pick(math.Exp2(mid), levels)+l.framing <= target {
			lo = mid
		} else {
			hi = mid
		}
	}
	pred = p.pick(math.Exp2(lo), levels) + l.framing
	if p.space != spaceLambda {
		return levels, pred, true
	}
	up := make([]int, len(levels))
	p.pick(math.Exp2(hi), up)
	var group []int
	for i := range levels {
		if up[i] != levels[i] {
			group = append(group, i)
		}
	}
	gain := func(i int) float64 {
		dc := float64(l.cost[up[i]][i]) - float64(l.cost[levels[i]][i])
		dd := float64(l.dist[levels[i]][i]) - float64(l.dist[up[i]][i])
		if dc <= 0 {
			return math.Inf(1)
		}
		return dd / dc
	}
	slices.SortStableFunc(group, func(a, b int) int { return cmp.Compare(gain(b), gain(a)) })
	for _, i := range group {
		d := (float64(l.cost[up[i]][i]) - float64(l.cost[levels[i]][i])) / 65536
		if pred+d > target {
			continue
		}
		levels[i] = up[i]
		pred += d
	}
	return levels, pred, true
}

// allocResult is one closed-loop encoding with per-state levels.
type allocResult struct {
	file      []byte
	levels    []int
	acct      []format.StateAccount
	recon     []uint16 // the writer's reconstruction of every state
	bits      float64  // file bits, model excluded
	predicted float64  // the plan's prediction of bits, for the last attempt
	attempts  int      // encodings made to find it
	counts    []int    // states per level
}

// errBudget is returned when a budget is below what the ladder can reach.
var errBudget = errors.New("budget below the lowest level's rate")

// allocEncode plans and encodes tr within budget bits/state (model
// excluded) with per-state weights from ranks and tau, scaling bits or λ as
// space says (see the comment at the top of this file). core > 0 flattens
// the tail: w_i = min(r_i, core)^-τ (tailCore); core = 0 keeps r_i^-τ.
// guard > 0 bounds the tail's predicted distortion by guard times the
// access-blind allocation's (tailGuard); 0 leaves the rank law unbounded.
// opts are extra writer options (embedding).
func allocEncode(m *wm.Model, tr *npz.Trajectory, keyframe int, l *ladder, ranks []int, budget, tau float64, space allocSpace, core int, guard float64, tries int, logf func(string, ...any), opts ...format.Option) (*allocResult, error) {
	total := budget * float64(tr.T)
	if tr.T == 0 {
		return nil, errors.New("no states to encode")
	}
	// The weights r^-τ: in bits space the budgets themselves (B·T bits); in
	// lambda space only their ratios matter, so they are split finely.
	units := int64(math.Round(total))
	if space == spaceLambda {
		units = 1 << 40
	}
	aopts := []ctmc.AllocOption{ctmc.Floor(0)}
	if core > 0 {
		aopts = append(aopts, ctmc.CoreSize(core), ctmc.FlatTail())
	}
	weights, err := ctmc.Allocate(ranks, units, tau, aopts...)
	if err != nil {
		return nil, err
	}
	p := newPlan(l, space, weights)
	if guard > 0 && tau > 0 {
		flat := make([]int64, len(weights))
		for i := range flat {
			flat[i] = 1
		}
		p.guard = &tailGuard{rho: guard, tail: leastReadHalf(ranks), base: slices.Clone(p.w), uniform: newPlan(l, space, flat)}
	}
	low := p.pick(0, make([]int, tr.T)) + l.framing
	if low > total {
		return nil, fmt.Errorf("%w: %.1f bits/state at the lowest level (λ = %s) > budget %.6g", errBudget, low/float64(tr.T), lambdaString(l.lambdas[0]), budget)
	}
	// Search the plan's target: lo fits (or 0), hi overshoots (or +Inf).
	var best, last *allocResult
	seen := map[string]*allocResult{}
	lo, hi := 0.0, math.Inf(1)
	target := total
	encodes := 0
	for iter := 0; iter < 64 && encodes < tries; iter++ {
		levels, pred, ok := p.fit(target)
		if !ok {
			levels, pred, _ = p.fit(low)
		}
		key := levelKey(levels)
		r := seen[key]
		if r == nil {
			encodes++
			if r, err = encodeLevels(m, tr, keyframe, l.lambdas, levels, opts); err != nil {
				return nil, err
			}
			r.predicted = pred
			seen[key], last = r, r
			if logf != nil {
				logf("  encoding %d: predicted %.1f, file %.1f bits/state (budget %.6g)", encodes, pred/float64(tr.T), r.bits/float64(tr.T), budget)
			}
		}
		if r.bits <= total {
			lo = max(lo, target)
			if best == nil || r.bits > best.bits {
				best = r
			}
			if r.bits >= (1-allocTol)*total {
				break
			}
		} else {
			if !ok {
				break // already every state at the lowest level
			}
			hi = min(hi, target)
		}
		if hi <= lo*(1+1e-6) {
			break
		}
		next := target * total / r.bits // secant through the origin
		if next <= lo || next >= hi {
			next = (lo + hi) / 2
		}
		target = next
	}
	// Still over: shrink the target until a file fits, down to every state
	// at the lowest level.
	for k := 0; best == nil && k < tries+2; k++ {
		target = min(target, hi) * 0.97
		if k == tries+1 {
			target = low
		}
		levels, pred, _ := p.fit(max(target, low))
		if seen[levelKey(levels)] != nil {
			continue
		}
		encodes++
		r, err := encodeLevels(m, tr, keyframe, l.lambdas, levels, opts)
		if err != nil {
			return nil, err
		}
		r.predicted = pred
		seen[levelKey(levels)], last = r, r
		if logf != nil {
			logf("  encoding %d: predicted %.1f, file %.1f bits/state (budget %.6g)", encodes, pred/float64(tr.T), r.bits/float64(tr.T), budget)
		}
		if r.bits <= total {
			best = r
		}
	}
	if best == nil {
		return nil, fmt.Errorf("could not meet the budget of %.6g bits/state in %d encodings (closest %.1f)", budget, encodes, last.bits/float64(tr.T))
	}
	// A state's level changes the context of every later state, so two
	// plans a hair apart can give files far apart. When the best file is
	// still more than allocTol below the budget, walk from it toward the
	// smallest file over the budget: the states whose levels differ take
	// the over-budget plan's levels in file order, and the prefix length
	// is bisected (at most tries more encodings).
	var over *allocResult
	for _, r := range seen {
		if r.bits > total && (over == nil || r.bits < over.bits || r.bits == over.bits && levelKey(r.levels) < levelKey(over.levels)) {
			over = r
		}
	}
	if over != nil && best.bits < (1-allocTol)*total {
		var diff []int
		for i := range best.levels {
			if best.levels[i] != over.levels[i] {
				diff = append(diff, i)
			}
		}
		base := slices.Clone(best.levels)
		lo, hi := 0, len(diff)
		for k := 0; k < tries && hi-lo > 1 && best.bits < (1-allocTol)*total; k++ {
			mid := (lo + hi) / 2
			levels := slices.Clone(base)
			for _, i := range diff[:mid] {
				levels[i] = over.levels[i]
			}
			r := seen[levelKey(levels)]
			if r == nil {
				encodes++
				if r, err = encodeLevels(m, tr, keyframe, l.lambdas, levels, opts); err != nil {
					return nil, err
				}
				seen[levelKey(levels)] = r
				if logf != nil {
					logf("  encoding %d: %d of %d level changes toward the smallest file over budget, file %.1f bits/state (budget %.6g)", encodes, mid, len(diff), r.bits/float64(tr.T), budget)
				}
			}
			if r.bits <= total {
				lo = mid
				if r.bits > best.bits {
					best = r
				}
			} else {
				hi = mid
			}
		}
	}
	best.attempts = encodes
	return best, nil
}

func levelKey(levels []int) string {
	b := make([]byte, len(levels))
	for i, v := range levels {
		b[i] = byte(v)
	}
	return string(b)
}

// encodeLevels encodes tr closed loop with state i at levels[i].
func encodeLevels(m *wm.Model, tr *npz.Trajectory, keyframe int, lambdas []uint32, levels []int, opts []format.Option) (*allocResult, error) {
	r := &allocResult{levels: levels, acct: make([]format.StateAccount, tr.T), counts: make([]int, len(lambdas))}
	var st []uint16
	var buf bytes.Buffer
	_, h, err := encodeWith(&buf, m, tr, func(int, int) {},
		func(i int, fw *format.Writer) error { return fw.SetLevel(levels[i]) },
		func(i int, fw *format.Writer) {
			r.acct[i] = fw.LastAccount()
			st = fw.LastState(st)
			r.recon = append(r.recon, st...)
		},
		append([]format.Option{format.WithKeyframeInterval(keyframe), format.WithLevels(lambdas...)}, opts...)...)
	if err != nil {
		return nil, err
	}
	r.file = buf.Bytes()
	r.bits = float64(int64(len(r.file))-h.ModelSize) * 8
	for _, lv := range levels {
		r.counts[lv]++
	}
	return r, nil
}

// traceCounts reads an access trace and returns the access count of every
// state of tr in file order, the accesses counted, and the accesses to
// states tr does not have (ignored).
func traceCounts(path string, tr *npz.Trajectory) (counts []int64, used, outside int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, 0, err
	}
	defer f.Close()
	acc, err := ctmc.ReadTrace(f)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	eps := tr.Episodes()
	counts = make([]int64, tr.T)
	for _, a := range acc {
		if a.Episode >= int64(len(eps)) || a.Step >= int64(eps[a.Episode][1]-eps[a.Episode][0]) {
			outside++
			continue
		}
		counts[eps[a.Episode][0]+int(a.Step)]++
		used++
	}
	return counts, used, outside, nil
}

// encodeByAccess is `wmzip encode --access`.
func encodeByAccess(m *wm.Model, tr *npz.Trajectory, tracePath, out string, budget, tau float64, space allocSpace, tail tailMode, guard float64, keyframe int, embed, quiet bool) error {
	logf := func(format string, a ...any) {
		if !quiet {
			fmt.Fprintf(os.Stderr, format+"\n", a...)
		}
	}
	p, err := gate.FromModel(m)
	if err != nil {
		return fmt.Errorf("--access needs a model trained with a retention gate (wmzip train calibrates one): %w", err)
	}
	counts, used, outside, err := traceCounts(tracePath, tr)
	if err != nil {
		return err
	}
	if tr.T == 0 {
		return errors.New("the trajectory has no states")
	}
	if outside > 0 {
		logf("%s: %d of %d accesses name states the trajectory does not have (ignored)", tracePath, outside, used+outside)
	}
	if used == 0 {
		logf("%s: no access to a state of the trajectory: every state ranks alike (uniform allocation)", tracePath)
	}
	core, err := tailCore(tail, counts)
	if err != nil {
		return err
	}
	if core > 0 {
		logf("flat tail: the core is the states of access rank ≤ %d (%.0f%% of the accesses); the rest weigh as rank %d", core, 100*accessCoreMass, core)
	}
	l, err := fitLadder(m, tr, keyframe, min(2, runtime.GOMAXPROCS(0)), budget, logf)
	if err != nil {
		return err
	}
	var opts []format.Option
	if embed {
		opts = append(opts, format.WithEmbeddedModel(true))
	}
	r, err := allocEncode(m, tr, keyframe, l, ctmc.Ranks(counts), budget, tau, space, core, guard, allocTries, logf, opts...)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(out, r.file); err != nil {
		return err
	}
	if !quiet {
		var dist, wdist float64
		var sumDist uint64
		for i, a := range r.acct {
			sumDist += a.DistSum
			wdist += float64(counts[i]) * p.RelDistortion(a.DistSum, 1)
		}
		dist = p.RelDistortion(sumDist, int64(tr.T))
		g := "no tail guard"
		if guard > 0 {
			g = fmt.Sprintf("tail guard %g", guard)
		}
		fmt.Printf("wrote %s: %d states, %d bytes, %.1f bits/state (budget %g, τ %g in %s space, %s tail, %s, %d encodings), distortion %.6g",
			out, tr.T, len(r.file), r.bits/float64(tr.T), budget, tau, space, tail, g, r.attempts, dist)
		if used > 0 {
			fmt.Printf(", access-weighted %.6g", wdist/float64(used))
		}
		fmt.Println()
		fmt.Print("states per level (λ):")
		for lv, c := range r.counts {
			if c > 0 {
				fmt.Printf(" %d (%s): %d", lv, lambdaString(l.lambdas[lv]), c)
			}
		}
		fmt.Println()
	}
	return nil
}
