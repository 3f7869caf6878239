package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
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
//  2. Allocate: per-state bit budgets b_i = ctmc.Allocate(ranks, B·T, τ).
//  3. Map: with a scale s, state i takes the highest level whose measured
//     cost is ≤ s·b_i (the lowest level if none is). s is found by
//     bisection so that the predicted file (costs plus framing) fits B·T.
//  4. Encode for real, closed loop, with Writer.SetLevel per state. A
//     state's cost depends on the levels of the states before it, so the
//     file differs from the prediction: the prediction's target is scaled
//     by budget ÷ achieved (bisection once bracketed) and the encoding
//     retried (at most allocTries encodings, until within allocTol below
//     the budget); the largest file within the budget is kept.
//
// The planning uses float64 (Allocate's r^-τ, the scale): it is
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

// pick sets levels[i] to the highest level whose cost fits s·budgets[i]
// (level 0 when none does) and returns the predicted bits of the states.
func (l *ladder) pick(budgets []int64, s float64, levels []int) float64 {
	var sum uint64
	for i, b := range budgets {
		lim := s * float64(b) * 65536
		lv := 0
		for k := len(l.lambdas) - 1; k > 0; k-- {
			if float64(l.cost[k][i]) <= lim {
				lv = k
				break
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
func (l *ladder) fit(budgets []int64, target float64) (levels []int, pred float64, ok bool) {
	levels = make([]int, len(budgets))
	lo, hi := -64.0, 64.0 // log2 of the scale
	if p := l.pick(budgets, math.Exp2(hi), levels) + l.framing; p <= target {
		return levels, p, true
	}
	if p := l.pick(budgets, math.Exp2(lo), levels) + l.framing; p > target {
		return levels, p, false
	}
	for range 80 {
		mid := (lo + hi) / 2
		if l.pick(budgets, math.Exp2(mid), levels)+l.framing <= target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return levels, l.pick(budgets, math.Exp2(lo), levels) + l.framing, true
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
// excluded) with per-state budgets from ranks and tau (see the comment at
// the top of this file). opts are extra writer options (embedding).
func allocEncode(m *wm.Model, tr *npz.Trajectory, keyframe int, l *ladder, ranks []int, budget, tau float64, tries int, logf func(string, ...any), opts ...format.Option) (*allocResult, error) {
	total := budget * float64(tr.T)
	if tr.T == 0 {
		return nil, errors.New("no states to encode")
	}
	budgets, err := ctmc.Allocate(ranks, int64(math.Round(total)), tau, ctmc.Floor(0))
	if err != nil {
		return nil, err
	}
	low := l.pick(budgets, 0, make([]int, tr.T)) + l.framing
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
		levels, pred, ok := l.fit(budgets, target)
		if !ok {
			levels, pred, _ = l.fit(budgets, low)
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
		levels, pred, _ := l.fit(budgets, max(target, low))
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
func encodeByAccess(m *wm.Model, tr *npz.Trajectory, tracePath, out string, budget, tau float64, keyframe int, embed, quiet bool) error {
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
	l, err := fitLadder(m, tr, keyframe, min(2, runtime.GOMAXPROCS(0)), budget, logf)
	if err != nil {
		return err
	}
	var opts []format.Option
	if embed {
		opts = append(opts, format.WithEmbeddedModel(true))
	}
	r, err := allocEncode(m, tr, keyframe, l, ctmc.Ranks(counts), budget, tau, allocTries, logf, opts...)
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
		fmt.Printf("wrote %s: %d states, %d bytes, %.1f bits/state (budget %g, τ %g, %d encodings), distortion %.6g",
			out, tr.T, len(r.file), r.bits/float64(tr.T), budget, tau, r.attempts, dist)
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
