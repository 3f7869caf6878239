// Package alloc stores a trajectory by access: every state of a file gets
// one of 16 retention levels (15 finite λ fitted to the file, and
// lossless) so that states read often keep more and the file meets a
// budget in bits/state. A Ladder measures each state's cost and distortion
// at every level; Allocate weighs the states by access rank (w = r^-τ,
// ctmc.Allocate), maps the weights to levels in λ space (the Lagrangian of
// access-weighted distortion under the budget) or bit space, bounds what
// the rank law takes from the least-read half (the tail guard), and
// encodes closed loop until the file is within 1% below the budget.
//
// The method, the variants tried and their measurements are in
// docs/results-ctmc.md. Planning is float64 and off the decode path: the
// file records each state's level, and decoding stays integer arithmetic.
//
// A codec without a retention gate but with a quantizer (a family of
// members, the default for float observations) is stored the same way,
// coded by rate and distortion: one member writes the file, each state at
// its level's λ of the coder, and distortion is measured against the
// source floats (rd.go). Such a file records no levels; the decoder is
// the lossless one.
package alloc

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/wmzip/wmzip/internal/ctmc"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

const (
	ladderFinite = 15
	// DefaultTries is the most closed-loop encodings Allocate makes per
	// search phase when Config.Tries is 0.
	DefaultTries = 6
	allocTol     = 0.01 // stop once within 1% below the budget
)

// states returns the number of states of eps under model m.
func states(m *wm.Model, eps []wm.Episode) int {
	n := 0
	for _, e := range eps {
		n += len(e.Codes) / max(m.Geom.N(), 1)
	}
	return n
}

// geometricLambdas returns n lambdas geometric from lo to hi (n ≥ 2),
// strictly increasing in 16.16 fixed point.
func geometricLambdas(lo, hi float64, n int) []lambda.Lambda {
	l := make([]lambda.Lambda, 0, n)
	for k := range n {
		v, _ := lambda.FromFloat(lo * math.Pow(hi/lo, float64(k)/float64(n-1)))
		if len(l) > 0 && v <= l[len(l)-1] {
			v = l[len(l)-1] + 1
		}
		l = append(l, v)
	}
	return l
}

// FitLadder measures the level ladder of eps: a first pass at 8 λ
// geometric from 2^-4 to 2^15 and lossless, then 15 finite levels placed
// geometrically where the rate moves, and lossless. A budget
// (bits/state, > 0) below the first pass's lowest rate fails early with
// ErrBudget.
func FitLadder(m *wm.Model, eps []wm.Episode, keyframe, workers int, budget float64, logf func(string, ...any)) (*Ladder, error) {
	T := states(m, eps)
	if logf != nil {
		logf("ladder, first pass:")
	}
	coarse, err := MeasureLadder(m, eps, keyframe, append(geometricLambdas(1.0/16, 1<<15, 8), format.LambdaLossless), workers, logf)
	if err != nil {
		return nil, err
	}
	r := coarse.FileBits
	if low := r[0] / float64(max(T, 1)); budget > 0 && budget < low {
		return nil, fmt.Errorf("%w: %.1f bits/state at λ = %s > budget %.6g", ErrBudget, low, coarse.Lambdas[0].Text(), budget)
	}
	lo, hi := rateSpan(r)
	if logf != nil {
		logf("ladder: 15 levels from λ = %s to %s, and lossless:", coarse.Lambdas[lo].Text(), coarse.Lambdas[hi].Text())
	}
	return MeasureLadder(m, eps, keyframe, append(geometricLambdas(coarse.Lambdas[lo].Float(), coarse.Lambdas[hi].Float(), ladderFinite), format.LambdaLossless), workers, logf)
}

// rateSpan returns the levels of the coarse rates r (by level, the last
// lossless) between which the rate moves: lo the largest whose rate is
// within 2% (of the lossless-to-lowest range) of the lowest rate r[0], hi
// the smallest above it whose rate is within 2% of the lossless rate.
func rateSpan(r []float64) (lo, hi int) {
	q := len(r) - 1 // lossless
	span := r[q] - r[0]
	lo, hi = 0, q-1
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
	return lo, hi
}

// EncodeWith writes every episode of eps to w with hooks around each
// state (numbered 0..T-1 in file order): before may set its level, after
// may read its account. prog, if not nil, is told of each episode done.
func EncodeWith(w io.Writer, m *wm.Model, eps []wm.Episode, prog func(int, int), before func(i int, fw *format.Writer) error, after func(i int, fw *format.Writer), opts ...format.Option) (format.Account, format.Header, error) {
	fw, err := format.NewWriter(w, m, opts...)
	if err != nil {
		return format.Account{}, format.Header{}, err
	}
	n := m.Geom.N()
	i := 0
	for k, e := range eps {
		if err := fw.WriteEpisode(nil); err != nil {
			return format.Account{}, format.Header{}, err
		}
		for t := range e.Actions {
			if before != nil {
				if err := before(i, fw); err != nil {
					return format.Account{}, format.Header{}, err
				}
			}
			if err := fw.WriteState(e.Actions[t], e.Codes[t*n:(t+1)*n]); err != nil {
				return format.Account{}, format.Header{}, err
			}
			if after != nil {
				after(i, fw)
			}
			i++
		}
		if prog != nil {
			prog(k+1, len(eps))
		}
	}
	if err := fw.Close(); err != nil {
		return format.Account{}, format.Header{}, err
	}
	return fw.Account(), fw.Header(), nil
}

// countWriter counts and discards.
type countWriter struct{ n int64 }

func (c *countWriter) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

// Ladder holds the measured cost and distortion of every state at every
// level.
//
// A ladder of a gated codec has Lambdas, its retention λ. A ladder of a
// codec coded by rate and distortion (no gate; Store measures one for
// such codecs) has Lams instead, the coder's λ of each level, and its
// distortions are relative squared errors against each state's reference
// vectors (its source floats when it has them).
type Ladder struct {
	Lambdas []lambda.Lambda // [level]; the last is format.LambdaLossless (nil when coded by rate and distortion)
	// Lams is, coded by rate and distortion, the coder's λ of each level
	// (format.Writer.WriteStateRD's lam: distortion units a bit,
	// format.DistUnit a slot vector's squared norm), decreasing: the last
	// is 0, the member's own codes. nil for a gated ladder.
	Lams     []uint64
	Cost     [][]uint64 // [level][state], 2^-16 bit
	Dist     [][]uint64 // [level][state]: gated, the gate distance sum; by rate and distortion, Σ over the slot vectors of ‖x − x̂‖²/‖x‖² in format.DistUnit
	FileBits []float64  // [level]: the file's bits, model excluded
	Framing  float64    // bits of a file beyond its states' costs (largest over the levels)
	States   int
}

// levels returns the number of levels of l.
func (l *Ladder) levels() int {
	if l.Lams != nil {
		return len(l.Lams)
	}
	return len(l.Lambdas)
}

// levelString prints level k's λ: Lambda.Text for a gated ladder, the
// public λ (bits a unit of a slot vector's relative distortion is worth,
// DistUnit/lam; "inf" for the member's own codes) by rate and distortion.
func (l *Ladder) levelString(k int) string {
	if l.Lams != nil {
		return RDLambdaString(l.Lams[k])
	}
	return l.Lambdas[k].Text()
}

// MeasureLadder encodes eps once per level of lambdas, every state at that
// level, on up to workers goroutines.
func MeasureLadder(m *wm.Model, eps []wm.Episode, keyframe int, lambdas []lambda.Lambda, workers int, logf func(string, ...any)) (*Ladder, error) {
	T := states(m, eps)
	q := len(lambdas)
	l := &Ladder{Lambdas: lambdas, States: T}
	err := l.measure(q, T, workers, func(lv int, cw io.Writer, cost, dist []uint64) error {
		_, _, err := EncodeWith(cw, m, eps, func(int, int) {},
			func(_ int, fw *format.Writer) error { return fw.SetLevel(lv) },
			func(i int, fw *format.Writer) {
				a := fw.LastAccount()
				cost[i], dist[i] = a.Cost, a.DistSum
			},
			format.WithKeyframeInterval(keyframe), format.WithLevels(lambdas...))
		return err
	})
	if err != nil {
		return nil, err
	}
	for lv := range q {
		var sum uint64
		for _, c := range l.Cost[lv] {
			sum += c
		}
		l.Framing = max(l.Framing, l.FileBits[lv]-float64(sum)/65536)
		if logf != nil {
			logf("  level %2d  lambda %-9s %8.1f bits/state", lv, lambdas[lv].Text(), l.FileBits[lv]/float64(max(T, 1)))
		}
	}
	return l, nil
}

// measure fills the ladder's Cost, Dist and FileBits for q levels of T
// states, encoding level lv with enc (cost and dist to fill per state, the
// file to cw) on up to workers goroutines.
func (l *Ladder) measure(q, T, workers int, enc func(lv int, cw io.Writer, cost, dist []uint64) error) error {
	l.Cost, l.Dist, l.FileBits = make([][]uint64, q), make([][]uint64, q), make([]float64, q)
	errs := make([]error, q)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lv := range next {
				cost, dist := make([]uint64, T), make([]uint64, T)
				cw := &countWriter{}
				errs[lv] = enc(lv, cw, cost, dist)
				l.Cost[lv], l.Dist[lv] = cost, dist
				l.FileBits[lv] = float64(cw.n) * 8
			}
		}()
	}
	for lv := range q {
		next <- lv
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// Space says what the rank weights w_i = r_i^-τ scale: the states'
// bit budgets or their retention trade-offs λ (see the package doc).
type Space string

const (
	SpaceBits   Space = "bits"
	SpaceLambda Space = "lambda"
	// DefaultSpace gave the lower access-weighted distortion
	// (docs/results-ctmc.md).
	DefaultSpace = SpaceLambda
)

// ParseSpace returns the Space named v (a flag's value).
func ParseSpace(v string) (Space, error) {
	switch s := Space(v); s {
	case SpaceBits, SpaceLambda:
		return s, nil
	}
	return "", fmt.Errorf("alloc: space %q: want bits or lambda", v)
}

// ParseTail returns the Tail named v (a flag's value).
func ParseTail(v string) (Tail, error) {
	switch t := Tail(v); t {
	case TailRanked, TailFlat:
		return t, nil
	}
	return "", fmt.Errorf("alloc: tail %q: want ranked or flat", v)
}

// Tail says how the weights treat the states outside the access core.
type Tail string

const (
	TailRanked Tail = "ranked" // w_i = r_i^-τ for every state
	TailFlat   Tail = "flat"   // w_i = min(r_i, k)^-τ, k the access core's rank cut
	// DefaultTail: flat did not do better (docs/results-ctmc.md).
	DefaultTail = TailRanked
	// CoreMass is the share of the accesses the core carries under the
	// flat tail: ctmc's own Pareto split.
	CoreMass = ctmc.DefaultCoreMass
)

// TailCore returns the rank cut of the flat tail's core for counts (the
// smallest set of top-ranked states carrying CoreMass of the
// accesses; ctmc.CoreRankByCounts), or 0 for the ranked tail.
func TailCore(mode Tail, counts []int64) (int, error) {
	if mode != TailFlat {
		return 0, nil
	}
	return ctmc.CoreRankByCounts(counts, CoreMass)
}

// DefaultTailGuard is the default Config.Guard: the least-read half of the states may lose at most this factor of the
// distortion an access-blind allocation would give them.
const DefaultTailGuard = 1.25

// plan maps per-state weights to levels at a scale s (see the package
// doc): in bits space a weight is a bit budget, in lambda space a
// relative λ.
type plan struct {
	l     *Ladder
	space Space
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
	rho float64
	// scale, when not 0, multiplies the bound: a bundle's member whose
	// access-blind file is not the codec's best is held to the best's
	// (chooseMember), scale = the best's tail distortion over its own.
	scale   float64
	tail    []int     // the half of the states of the largest ranks (ties: file order)
	base    []float64 // the plan's own weights (p.w before the floor)
	uniform *plan     // the access-blind plan of the same ladder and space
}

// LeastReadHalf returns the states a tail guard protects: the ⌊T/2⌋ of
// the largest ranks (the least accessed), ties in file order — the tail
// the Table 6 analogue reports.
func LeastReadHalf(ranks []int) []int {
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
		d += float64(p.l.Dist[levels[i]][i])
	}
	return d
}

func newPlan(l *Ladder, space Space, w []int64) *plan {
	p := &plan{l: l, space: space, w: make([]float64, len(w))}
	var sum float64
	for _, v := range w {
		sum += float64(v)
	}
	mean := sum / float64(max(len(w), 1))
	for i, v := range w {
		if space == SpaceLambda && mean > 0 {
			p.w[i] = float64(v) / mean
		} else {
			p.w[i] = float64(v)
		}
	}
	if space == SpaceLambda {
		q := l.levels()
		p.lam = make([]float64, q)
		top := false // the last level is lossless (the member's own codes)
		if l.Lams != nil {
			// The coder's λ weighs a bit in distortion units; the plan's
			// λ is its inverse, the bits a unit of distortion is worth.
			for k, v := range l.Lams {
				p.lam[k] = format.DistUnit / float64(v)
			}
			top = q >= 1 && l.Lams[q-1] == 0
		} else {
			for k, v := range l.Lambdas {
				p.lam[k] = float64(v) / 65536
			}
			top = q >= 1 && l.Lambdas[q-1] == format.LambdaLossless
		}
		if q >= 3 && top {
			p.lam[q-1] = p.lam[q-2] * p.lam[q-2] / p.lam[q-3]
		} else if q >= 2 && top {
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
		if p.space == SpaceLambda {
			lim := s * w
			for k := len(p.lam) - 1; k > 0; k-- {
				if p.lam[k] <= lim {
					lv = k
					break
				}
			}
		} else {
			lim := s * w * 65536
			for k := l.levels() - 1; k > 0; k-- {
				if float64(l.Cost[k][i]) <= lim {
					lv = k
					break
				}
			}
		}
		levels[i] = lv
		sum += l.Cost[lv][i]
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
	if g.scale != 0 {
		limit *= g.scale
	}
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
	if pr := p.pick(math.Exp2(hi), levels) + l.Framing; pr <= target {
		return levels, pr, true
	}
	if pr := p.pick(math.Exp2(lo), levels) + l.Framing; pr > target {
		return levels, pr, false
	}
	for range 80 {
		mid := (lo + hi) / 2
		if p.pick(math.Exp2(mid), levels)+l.Framing <= target {
			lo = mid
		} else {
			hi = mid
		}
	}
	pred = p.pick(math.Exp2(lo), levels) + l.Framing
	if p.space != SpaceLambda {
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
	// A ladder coded by rate and distortion raises the states of the most
	// access-weighted distortion saved per bit first: the weights before
	// the tail guard's floor, by which the states the floor made alike
	// still differ (Σ c_i·d_i is the objective; at the critical λ any
	// split is as good for the Lagrangian, not for it). The gated ladder
	// keeps the order by distortion saved per bit alone, which its files
	// and the measurements of docs/results-ctmc.md are made with; the two
	// agree on a group of states of one weight.
	var by []float64
	if l.Lams != nil {
		by = p.w
		if p.guard != nil {
			by = p.guard.base
		}
	}
	gain := func(i int) float64 {
		dc := float64(l.Cost[up[i]][i]) - float64(l.Cost[levels[i]][i])
		dd := float64(l.Dist[levels[i]][i]) - float64(l.Dist[up[i]][i])
		if dc <= 0 {
			return math.Inf(1)
		}
		if by != nil {
			return by[i] * dd / dc
		}
		return dd / dc
	}
	slices.SortStableFunc(group, func(a, b int) int { return cmp.Compare(gain(b), gain(a)) })
	for _, i := range group {
		d := (float64(l.Cost[up[i]][i]) - float64(l.Cost[levels[i]][i])) / 65536
		if pred+d > target {
			continue
		}
		levels[i] = up[i]
		pred += d
	}
	return levels, pred, true
}

// Result is one closed-loop encoding with per-state levels.
type Result struct {
	File     []byte
	Levels   []int // level of every state, in file order
	Accounts []format.StateAccount
	Recon    []uint16 // the reconstruction of every state, as the file holds it
	// Dist is, coded by rate and distortion, each state's distortion: the
	// mean over its slot vectors of ‖x − x̂‖²/‖x‖² against its reference
	// (its source floats when it has them). nil for a gated file.
	Dist      []float64
	Report    format.Report // what the file's index records of its distortion
	Bits      float64       // file bits, model excluded
	Predicted float64       // the plan's prediction of bits, for the last attempt
	Attempts  int           // encodings made to find it
	Counts    []int         // states per level
}

// ErrBudget is returned when a budget is below what the Ladder can reach.
var ErrBudget = errors.New("budget below the lowest level's rate")

// Config sets an allocation.
type Config struct {
	Keyframe int     // keyframe interval of the file
	Budget   float64 // bits/state of the file, model excluded (> 0)
	Tau      float64 // exponent of the rank weights w(r) = r^-τ (0: uniform)
	Space    Space   // what the weights scale (DefaultSpace when empty)
	// Core > 0 flattens the tail: w_i = min(r_i, Core)^-τ (TailCore);
	// 0 keeps r_i^-τ.
	Core int
	// Guard > 0 bounds the least-read half's predicted distortion by Guard
	// times the access-blind allocation's; 0 leaves the rank law unbounded.
	Guard   float64
	Tries   int                  // most encodings per search phase (DefaultTries when 0)
	Logf    func(string, ...any) // progress lines, or nil
	Options []format.Option      // extra writer options (embedding)
	// Context, if set, stops the search between encodings when done.
	Context context.Context
}

// Allocate plans and encodes eps within c.Budget bits/state with per-state
// weights from ranks (ctmc.Ranks of the access counts, in file order) and
// the ladder l measured on eps.
func Allocate(m *wm.Model, eps []wm.Episode, l *Ladder, ranks []int, c Config) (*Result, error) {
	if len(ranks) != states(m, eps) {
		return nil, fmt.Errorf("%d ranks for %d states", len(ranks), states(m, eps))
	}
	return allocate(states(m, eps), l, ranks, c, 0, func(levels []int) (*Result, error) {
		return EncodeLevels(m, eps, c.Keyframe, l.Lambdas, levels, c.Options)
	})
}

// planFor returns the plan of Config c's weights (ranks, τ, space, core,
// tail guard) on ladder l, for a file of total bits.
func planFor(l *Ladder, ranks []int, total float64, c Config) (*plan, error) {
	space := c.Space
	if space == "" {
		space = DefaultSpace
	}
	// The weights r^-τ: in bits space the budgets themselves (B·T bits); in
	// lambda space only their ratios matter, so they are split finely.
	units := int64(math.Round(total))
	if space == SpaceLambda {
		units = 1 << 40
	}
	aopts := []ctmc.AllocOption{ctmc.Floor(0)}
	if c.Core > 0 {
		aopts = append(aopts, ctmc.CoreSize(c.Core), ctmc.FlatTail())
	}
	weights, err := ctmc.Allocate(ranks, units, c.Tau, aopts...)
	if err != nil {
		return nil, err
	}
	p := newPlan(l, space, weights)
	if c.Guard > 0 && c.Tau > 0 {
		flat := make([]int64, len(weights))
		for i := range flat {
			flat[i] = 1
		}
		p.guard = &tailGuard{rho: c.Guard, tail: LeastReadHalf(ranks), base: slices.Clone(p.w), uniform: newPlan(l, space, flat)}
	}
	return p, nil
}

// allocate is Allocate of T states whose files encode writes; guardScale,
// when not 0, scales the tail guard's bound (tailGuard.scale).
func allocate(T int, l *Ladder, ranks []int, c Config, guardScale float64, encode0 func(levels []int) (*Result, error)) (*Result, error) {
	budget, tries, logf := c.Budget, c.Tries, c.Logf
	if tries == 0 {
		tries = DefaultTries
	}
	encode := func(levels []int) (*Result, error) {
		if c.Context != nil {
			if err := c.Context.Err(); err != nil {
				return nil, err
			}
		}
		return encode0(levels)
	}
	total := budget * float64(T)
	if T == 0 {
		return nil, errors.New("no states to encode")
	}
	p, err := planFor(l, ranks, total, c)
	if err != nil {
		return nil, err
	}
	if p.guard != nil {
		p.guard.scale = guardScale
	}
	low := p.pick(0, make([]int, T)) + l.Framing
	if low > total {
		return nil, fmt.Errorf("%w: %.1f bits/state at the lowest level (λ = %s) > budget %.6g", ErrBudget, low/float64(T), l.levelString(0), budget)
	}
	// Search the plan's target: lo fits (or 0), hi overshoots (or +Inf).
	var best, last *Result
	seen := map[string]*Result{}
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
			if r, err = encode(levels); err != nil {
				return nil, err
			}
			r.Predicted = pred
			seen[key], last = r, r
			if logf != nil {
				logf("  encoding %d: predicted %.1f, file %.1f bits/state (budget %.6g)", encodes, pred/float64(T), r.Bits/float64(T), budget)
			}
		}
		if r.Bits <= total {
			lo = max(lo, target)
			if best == nil || r.Bits > best.Bits {
				best = r
			}
			if r.Bits >= (1-allocTol)*total {
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
		next := target * total / r.Bits // secant through the origin
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
		r, err := encode(levels)
		if err != nil {
			return nil, err
		}
		r.Predicted = pred
		seen[levelKey(levels)], last = r, r
		if logf != nil {
			logf("  encoding %d: predicted %.1f, file %.1f bits/state (budget %.6g)", encodes, pred/float64(T), r.Bits/float64(T), budget)
		}
		if r.Bits <= total {
			best = r
		}
	}
	if best == nil {
		return nil, fmt.Errorf("could not meet the budget of %.6g bits/state in %d encodings (closest %.1f)", budget, encodes, last.Bits/float64(T))
	}
	// A state's level changes the context of every later state, so two
	// plans a hair apart can give files far apart. When the best file is
	// still more than allocTol below the budget, walk from it toward the
	// smallest file over the budget: the states whose levels differ take
	// the over-budget plan's levels in file order, and the prefix length
	// is bisected (at most tries more encodings).
	var over *Result
	for _, r := range seen {
		if r.Bits > total && (over == nil || r.Bits < over.Bits || r.Bits == over.Bits && levelKey(r.Levels) < levelKey(over.Levels)) {
			over = r
		}
	}
	if over != nil && best.Bits < (1-allocTol)*total {
		var diff []int
		for i := range best.Levels {
			if best.Levels[i] != over.Levels[i] {
				diff = append(diff, i)
			}
		}
		base := slices.Clone(best.Levels)
		lo, hi := 0, len(diff)
		for k := 0; k < tries && hi-lo > 1 && best.Bits < (1-allocTol)*total; k++ {
			mid := (lo + hi) / 2
			levels := slices.Clone(base)
			for _, i := range diff[:mid] {
				levels[i] = over.Levels[i]
			}
			r := seen[levelKey(levels)]
			if r == nil {
				encodes++
				if r, err = encode(levels); err != nil {
					return nil, err
				}
				seen[levelKey(levels)] = r
				if logf != nil {
					logf("  encoding %d: %d of %d level changes toward the smallest file over budget, file %.1f bits/state (budget %.6g)", encodes, mid, len(diff), r.Bits/float64(T), budget)
				}
			}
			if r.Bits <= total {
				lo = mid
				if r.Bits > best.Bits {
					best = r
				}
			} else {
				hi = mid
			}
		}
	}
	best.Attempts = encodes
	return best, nil
}

func levelKey(levels []int) string {
	b := make([]byte, len(levels))
	for i, v := range levels {
		b[i] = byte(v)
	}
	return string(b)
}

// EncodeLevels encodes eps closed loop with state i at levels[i].
func EncodeLevels(m *wm.Model, eps []wm.Episode, keyframe int, lambdas []lambda.Lambda, levels []int, opts []format.Option) (*Result, error) {
	T := states(m, eps)
	r := &Result{Levels: levels, Accounts: make([]format.StateAccount, T), Counts: make([]int, len(lambdas))}
	var buf bytes.Buffer
	// The reconstruction as the file holds it: a chunk coded losslessly,
	// as no larger than by its levels, holds the states themselves.
	keep := format.WithSource(func(recon []uint16) format.Report {
		r.Recon = append(r.Recon, recon...)
		return format.Report{}
	})
	acct, h, err := EncodeWith(&buf, m, eps, func(int, int) {},
		func(i int, fw *format.Writer) error { return fw.SetLevel(levels[i]) },
		func(i int, fw *format.Writer) { r.Accounts[i] = fw.LastAccount() },
		append([]format.Option{format.WithKeyframeInterval(keyframe), format.WithLevels(lambdas...), keep}, opts...)...)
	if err != nil {
		return nil, err
	}
	r.File = buf.Bytes()
	r.Report = acct.Report
	r.Bits = float64(int64(len(r.File))-h.ModelSize) * 8
	for _, lv := range levels {
		r.Counts[lv]++
	}
	return r, nil
}
