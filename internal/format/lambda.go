package format

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

// The distortion-target search. Chunks code independently, so a file is
// its chunks: the search codes each chunk at a few λ (and once
// losslessly), then gives each chunk the coding that serves the target
// best, several λ in one file through its level table (SPEC.md 6.4,
// chunk mode 2). Method and measurements: docs/results-gate.md.

// A Probe reports one encoding made by SearchLambda.
type Probe struct {
	Lambda     lambda.Lambda // LambdaLossless for the lossless pass
	Distortion float64       // mean distortion of the slots encoded, chunks the rule would not shrink counted lossless
	States     int64         // states encoded
	Sample     bool          // a sample of the file's chunks, not the whole file
}

// LambdaResult is the outcome of SearchLambda.
type LambdaResult struct {
	// Lambda is the file's header λ: the largest of Lambdas, or
	// LambdaLossless when nothing cheaper than lossless coding meets the
	// target.
	Lambda lambda.Lambda
	// Lambdas are the λ the file's chunks are coded at, increasing; more
	// than one makes them the file's level table.
	Lambdas    []lambda.Lambda
	Distortion float64 // of File: at most the target
	File       []byte  // the episodes encoded
	Account    Account // the writer's account of File
	Report     Report  // the report File's index records
	// Encodes is the work of the search: states encoded, over all probes
	// and the lossless pass, divided by the states of the file (one encode
	// of the file is 1).
	Encodes float64
}

// The search runs on a grid of λ = 2^(i/searchStep) over 2^-4..2^15.75.
const (
	searchStep = 32
	searchMin  = -4 * searchStep
	searchMax  = 63 * searchStep / 4
)

// Tuning (docs/results-gate.md).
const (
	sampleEvery  = 8    // the sample takes one chunk in this many,
	sampleMin    = 4    // at least this many chunks, and only when they are at most half the file
	sampleTrust  = 0.2  // a sample whose distortion is off the file's by more than this share is dropped
	locateStep   = 4    // grid points: the resolution of the sample's bracket (1/8 octave)
	landLow      = 0.8  // the file lands in [landLow·target, target] when it can
	maxFile      = 10   // whole-file probes at most
	maxLevels    = 8    // λ in one file at most
	maxShortfall = 2    // probes of part of the file to spend a budget left unspent
	maxStepOcts  = 2.0  // a secant step spans at most this many octaves
	minDist      = 1e-6 // distortions below this share of the target count as this
)

// SearchLambda encodes eps, one episode each without metadata, at the
// least storage it finds whose distortion is at most target, and returns
// that encoding.
//
// Distortion is the mean over the file's slot vectors of their distortion
// against the lossless reconstruction (the writer's Measure, WithMeasure);
// it is closed-loop (an omitted value feeds the predictions that follow),
// so it is measured by encoding. The search codes every chunk once
// losslessly, locates the target on a sample of the chunks (dropped if it
// misjudges the whole file by more than a fifth), brackets it with
// whole-file encodes, and then picks for each chunk the λ, or lossless
// coding, that saves most bytes per unit of distortion, so that the file
// lands within [0.8, 1] of the target wherever its chunks allow. A file
// whose best coding is lossless, as when no λ meets the target or the
// target is 0, is the lossless file. It holds every chunk's encodings in memory (about the
// file's size per λ probed).
//
// The model must have a GATE section. opts are Writer options; WithLambda,
// WithLevels and WithRetainRule are refused. progress, if not nil, is
// called after every probe. The search stops with ctx's error when ctx is
// done.
func SearchLambda(ctx context.Context, m *wm.Model, eps []wm.Episode, target float64, progress func(Probe), opts ...Option) (*LambdaResult, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil model", ErrInput)
	}
	if !(target >= 0) || math.IsInf(target, 1) {
		return nil, fmt.Errorf("%w: distortion target %v", ErrInput, target)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if cfg.lambdaSet || cfg.levels != nil || cfg.custom {
		return nil, fmt.Errorf("%w: SearchLambda chooses lambda (no WithLambda, WithLevels or WithRetainRule)", ErrInput)
	}
	gp, err := gate.FromModel(m)
	if err != nil {
		return nil, err
	}
	n := m.Geom.N()
	for i, e := range eps {
		if len(e.Codes)%n != 0 || len(e.Codes)/n != len(e.Actions) {
			return nil, fmt.Errorf("%w: episode %d has %d codes and %d actions for %d coordinates a state", ErrInput, i, len(e.Codes), len(e.Actions), n)
		}
	}
	s, err := newSearcher(ctx, m, gp, eps, cfg, target, progress, opts)
	if err != nil {
		return nil, err
	}
	if s.states == 0 {
		return nil, fmt.Errorf("%w: no states to encode", ErrInput)
	}
	if err := s.run(); err != nil {
		return nil, err
	}
	return s.result()
}

// lambdaAt returns the λ of grid point i.
func lambdaAt(i int) lambda.Lambda {
	l, _ := lambda.FromFloat(math.Exp2(float64(i) / searchStep))
	return l
}

// warmStart returns the grid point where the search starts: the λ at which
// a typical coordinate's expected damage, its marginal error rate times
// the calibration's mean impact, is worth one bit.
func warmStart(gp *gate.Params) int {
	e := slices.Clone(gp.CoordErr)
	slices.Sort(e)
	damage := float64(e[len(e)/2]) / 65536 * float64(gp.MeanV) / 65536
	if !(damage > 0) {
		return 10 * searchStep
	}
	return min(max(int(math.Round(-math.Log2(damage)*searchStep)), searchMin), searchMax)
}

// span is n states of episode ep from step first: a chunk.
type span struct {
	ep, first, n int
}

// coded is one chunk coded one way: its record (mode 0) and cost.
type coded struct {
	rec  []byte
	cost chunkCost
}

// searcher codes the file's chunks.
type searcher struct {
	ctx      context.Context
	m        *wm.Model
	gp       *gate.Params
	eps      []wm.Episode
	cfg      *config
	opts     []Option
	target   float64
	progress func(Probe)

	h       Header // a header of the file, for the coders
	chunks  []span
	states  int64
	slots   float64 // slot vectors of the file
	sample  []int   // chunks of the sample, nil without one
	trusted bool    // the sample has not misjudged the file
	encoded int64

	plain []coded         // each chunk coded losslessly
	at    map[int][]coded // per grid point: each chunk coded at its λ (rec nil: not yet)
	files map[int]float64 // grid points coded whole: the file's distortion
	// Grid points coded on some chunks only (shortfall), offered to the
	// allocator beside those of files.
	partial map[int]bool
	pool    []*chunkCoder

	choice []int // per chunk: grid point chosen, or lossless (noLambda)
}

// noLambda marks a chunk coded losslessly.
const noLambda = math.MinInt

func newSearcher(ctx context.Context, m *wm.Model, gp *gate.Params, eps []wm.Episode, cfg *config, target float64, progress func(Probe), opts []Option) (*searcher, error) {
	s := &searcher{ctx: ctx, m: m, gp: gp, eps: eps, cfg: cfg, opts: slices.Clip(opts), target: target, progress: progress,
		at: map[int][]coded{}, files: map[int]float64{}, partial: map[int]bool{}, trusted: true}
	s.h = Header{Version: Version, Geom: m.Geom, Precision: m.Precision, Lanes: cfg.lanes,
		KeyframeInterval: cfg.keyframe, Lambda: LambdaLossless, ModelID: m.ID()}
	if int64(cfg.keyframe)*int64(m.Geom.N()) > MaxChunkCoords {
		return nil, fmt.Errorf("%w: keyframe interval %d × %d coordinates exceeds %d", ErrInput, cfg.keyframe, m.Geom.N(), MaxChunkCoords)
	}
	n := m.Geom.N()
	for e, ep := range eps {
		T := len(ep.Codes) / max(n, 1)
		s.states += int64(T)
		for t := 0; t < T; t += cfg.keyframe {
			s.chunks = append(s.chunks, span{e, t, min(cfg.keyframe, T-t)})
		}
	}
	s.slots = float64(s.states) * float64(m.Geom.S)
	if k := max(sampleMin, (len(s.chunks)+sampleEvery-1)/sampleEvery); 2*k <= len(s.chunks) {
		for i := range k {
			s.sample = append(s.sample, i*len(s.chunks)/k)
		}
	}
	threads := max(1, min(cfg.threads, maxThreads, len(s.chunks)))
	for range threads {
		c, err := newEncodeCoder(&s.h, m, &retention{rules: []*gate.Rule{nil}, omit: true}, gp, cfg.measure)
		if err != nil {
			return nil, err
		}
		s.pool = append(s.pool, c)
	}
	return s, nil
}

// code codes the listed chunks at grid point i (noLambda: losslessly) on
// the coders of the pool, in parallel, into out.
func (s *searcher) code(i int, which []int, out []coded) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	ret := &retention{rules: []*gate.Rule{nil}, omit: true, exact: s.cfg.exactCopies}
	if i != noLambda {
		ret.rules[0] = s.gp.Rule(lambdaAt(i))
	}
	n := s.m.Geom.N()
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(s.pool))
	for w, c := range s.pool {
		c.setRetention(ret)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				k := next
				next++
				mu.Unlock()
				if k >= len(which) || errs[w] != nil {
					return
				}
				ci := which[k]
				sp := s.chunks[ci]
				ep := s.eps[sp.ep]
				c.begin(chunkMode{})
				c.enc.Reset()
				c.ep, c.step = sp.ep, sp.first
				for t := sp.first; t < sp.first+sp.n; t++ {
					c.encodeState(0, ep.Actions[t], ep.Codes[t*n:(t+1)*n])
				}
				rec, err := c.appendRecord(out[ci].rec[:0])
				out[ci] = coded{rec: rec, cost: c.cost()}
				c.states = 0
				errs[w] = err
			}
		}()
	}
	wg.Wait()
	for _, c := range which {
		s.encoded += int64(s.chunks[c].n)
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// codedAt returns the chunks coded at grid point i, coding those of which
// not yet coded.
func (s *searcher) codedAt(i int, which []int) ([]coded, error) {
	out := s.at[i]
	if out == nil {
		out = make([]coded, len(s.chunks))
		s.at[i] = out
	}
	var todo []int
	for _, c := range which {
		if out[c].rec == nil {
			todo = append(todo, c)
		}
	}
	if len(todo) > 0 {
		if err := s.code(i, todo, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// distortion returns the mean slot distortion of the listed chunks coded
// at i, each chunk the rule would not shrink counted as lossless, and the
// states it coded for it.
func (s *searcher) distortion(i int, which []int) (float64, int64, error) {
	before := s.encoded
	out, err := s.codedAt(i, which)
	if err != nil {
		return 0, 0, err
	}
	var d, slots float64
	for _, c := range which {
		if len(out[c].rec) < len(s.plain[c].rec) {
			d += out[c].cost.dist
		}
		slots += float64(out[c].cost.slots)
	}
	return d / max(slots, 1), s.encoded - before, nil
}

func (s *searcher) report(i int, d float64, states int64, sample bool) {
	if s.progress != nil {
		l := LambdaLossless
		if i != noLambda {
			l = lambdaAt(i)
		}
		s.progress(Probe{Lambda: l, Distortion: d, States: states, Sample: sample})
	}
}

// sampleD is the sample's distortion at i.
func (s *searcher) sampleD(i int) (float64, error) {
	d, states, err := s.distortion(i, s.sample)
	if err == nil {
		s.report(i, d, states, true)
	}
	return d, err
}

// fileD is the whole file's distortion at i.
func (s *searcher) fileD(i int) (float64, error) {
	if d, ok := s.files[i]; ok {
		return d, nil
	}
	all := make([]int, len(s.chunks))
	for c := range all {
		all[c] = c
	}
	d, states, err := s.distortion(i, all)
	if err != nil {
		return 0, err
	}
	s.files[i] = d
	s.report(i, d, states, false)
	if len(s.sample) > 0 && s.trusted {
		sd, _, _ := s.distortion(i, s.sample)
		if math.Abs(sd-d) > sampleTrust*max(d, s.target*minDist) {
			s.trusted = false
		}
	}
	return d, nil
}

// run codes the chunks and chooses each chunk's coding (s.choice).
func (s *searcher) run() error {
	s.plain = make([]coded, len(s.chunks))
	all := make([]int, len(s.chunks))
	for c := range all {
		all[c] = c
	}
	if err := s.code(noLambda, all, s.plain); err != nil {
		return err
	}
	s.report(noLambda, 0, s.states, false)
	s.choice = make([]int, len(s.chunks))
	for c := range s.choice {
		s.choice[c] = noLambda
	}
	if s.target <= 0 {
		// Only a lossless chunk has no distortion for certain.
		return nil
	}
	start := warmStart(s.gp)
	if len(s.sample) > 0 {
		i, err := s.locate(start)
		if err != nil {
			return err
		}
		start = i
	}
	if err := s.bracket(start); err != nil {
		return err
	}
	s.choose()
	for len(s.files) < maxFile && (s.landed() < landLow*s.target || s.wide()) {
		i, ok := s.refine()
		if !ok {
			break
		}
		if _, err := s.fileD(i); err != nil {
			return err
		}
		s.choose()
	}
	// A choice that leaves budget unspent (a chunk the rule hardly shrinks
	// taken losslessly, say) gets cheaper options for the other chunks.
	for range maxShortfall {
		if s.landed() >= landLow*s.target {
			break
		}
		i, which, ok := s.shortfall()
		if !ok {
			break
		}
		d, states, err := s.distortion(i, which)
		if err != nil {
			return err
		}
		s.report(i, d, states, true)
		s.partial[i] = true
		s.choose()
	}
	return nil
}

// shortfall returns a grid point below the lowest one the choice uses and
// the chunks the choice codes at a finite λ, when it leaves part of the
// distortion budget unspent: coded there, those chunks give the allocator
// cheaper options to spend it on. The step assumes their distortion
// ∝ λ^-2, as secant does; false when there is no such point.
func (s *searcher) shortfall() (int, []int, bool) {
	var which []int
	var d float64
	lo := noLambda
	for c, i := range s.choice {
		if i == noLambda {
			continue
		}
		which = append(which, c)
		d += s.at[i][c].cost.dist
		if lo == noLambda || i < lo {
			lo = i
		}
	}
	left := (s.target - s.landed()) * s.slots
	if lo == noLambda || lo <= searchMin || !(d > 0) || !(left > 0) {
		return 0, nil, false
	}
	i := max(searchMin, lo-clampStep(squareLawSteps(math.Log((d+left)/d))))
	if _, ok := s.files[i]; ok || s.partial[i] {
		return 0, nil, false
	}
	return i, which, true
}

// locate returns the smallest grid point, to within locateStep, at which
// the sample meets the target (searchMax if none): galloping by octaves
// from start, then bisection.
func (s *searcher) locate(start int) (int, error) {
	meets := func(i int) (bool, error) {
		d, err := s.sampleD(i)
		return d <= s.target, err
	}
	lo, hi := searchMin, searchMax // lo fails or is searchMin; hi meets or is searchMax
	ok, err := meets(start)
	if err != nil {
		return 0, err
	}
	step := searchStep
	if ok {
		hi = start
		for i := start - step; ; i -= step {
			if i <= searchMin {
				lo = searchMin
				break
			}
			if ok, err = meets(i); err != nil {
				return 0, err
			}
			if !ok {
				lo = i
				break
			}
			hi = i
			step *= 2
		}
	} else {
		lo = start
		for i := start + step; ; i += step {
			if i >= searchMax {
				hi = searchMax
				break
			}
			if ok, err = meets(i); err != nil {
				return 0, err
			}
			if ok {
				hi = i
				break
			}
			lo = i
			step *= 2
		}
	}
	for hi-lo > locateStep {
		mid := (lo + hi) / 2
		if ok, err = meets(mid); err != nil {
			return 0, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// bracket codes the whole file at grid points around start until two
// points one grid step apart, or the grid's ends, bracket the target: the
// larger meets it, the smaller does not. Steps follow the secant of log
// distortion against the grid, at most maxStepOcts octaves.
func (s *searcher) bracket(start int) error {
	i := start
	for len(s.files) < maxFile {
		if _, err := s.fileD(i); err != nil {
			return err
		}
		safe, cheap := s.bounds()
		if safe == searchMin || cheap == searchMax || (safe != noLambda && cheap != noLambda && safe-cheap <= 1) {
			return nil
		}
		if safe != noLambda && cheap != noLambda && safe-cheap <= locateStep && s.mix(safe, cheap) >= landLow*s.target {
			return nil // the chunks already land between the two, close
		}
		next, ok := s.secant(safe, cheap)
		if !ok {
			return nil
		}
		i = next
	}
	return nil
}

// bounds returns the smallest grid point coded whole that meets the
// target and the largest below it that does not (noLambda where none).
func (s *searcher) bounds() (safe, cheap int) {
	safe, cheap = noLambda, noLambda
	for i, d := range s.files {
		if d <= s.target && (safe == noLambda || i < safe) {
			safe = i
		}
	}
	for i, d := range s.files {
		if d > s.target && (safe == noLambda || i < safe) && (cheap == noLambda || i > cheap) {
			cheap = i
		}
	}
	return safe, cheap
}

// secant returns the next grid point to code whole between, or beyond,
// the bracket (safe, cheap), and false when there is none.
func (s *searcher) secant(safe, cheap int) (int, bool) {
	logD := func(d float64) float64 { return math.Log(max(d, s.target*minDist) / s.target) }
	switch {
	case safe != noLambda && cheap != noLambda:
		// Inside the bracket: the secant, kept a step from either end.
		a, b := logD(s.files[cheap]), logD(s.files[safe])
		x := cheap + (safe-cheap)/2
		if a > b {
			x = cheap + int(math.Round(float64(safe-cheap)*a/(a-b)))
		}
		return min(max(x, cheap+1), safe-1), true
	case safe != noLambda:
		// Everything coded meets the target: go cheaper.
		if safe <= searchMin {
			return 0, false
		}
		step := searchStep
		if d := s.files[safe]; d > 0 {
			step = squareLawSteps(-logD(d))
		}
		return max(searchMin, safe-clampStep(step)), true
	case cheap != noLambda:
		if cheap >= searchMax {
			return 0, false
		}
		step := squareLawSteps(logD(s.files[cheap]))
		// Where the distortion falls more slowly than λ^-2 (measured
		// between the two dearest probes above the target), step by the
		// slope measured.
		prev := noLambda
		for i, d := range s.files {
			if i < cheap && d > s.target && (prev == noLambda || i > prev) {
				prev = i
			}
		}
		if prev != noLambda {
			if sl := (logD(s.files[prev]) - logD(s.files[cheap])) / float64(cheap-prev); sl > 0 {
				step = max(step, int(math.Ceil(logD(s.files[cheap])/sl)))
			}
		}
		return min(searchMax, cheap+clampStep(step)), true
	}
	return 0, false
}

// squareLawSteps returns the grid points λ moves for the distortion to
// change by the factor e^lnRatio, were it ∝ λ^-2.
func squareLawSteps(lnRatio float64) int {
	return int(math.Ceil(lnRatio / math.Log(2) * searchStep / 2))
}

// clampStep keeps a step of the search between one grid point and
// maxStepOcts octaves.
func clampStep(step int) int { return min(max(step, 1), int(maxStepOcts*searchStep)) }

// wide reports whether the bracket spans more than locateStep grid
// points: a mix of its ends then lies on a chord far from the curve.
func (s *searcher) wide() bool {
	safe, cheap := s.bounds()
	return safe != noLambda && cheap != noLambda && safe-cheap > locateStep
}

// refine returns a grid point not yet coded whole between the bracket's
// ends, to give the chunks a finer choice, and false when there is none.
func (s *searcher) refine() (int, bool) {
	safe, cheap := s.bounds()
	if safe == noLambda || cheap == noLambda || safe-cheap <= 1 {
		return 0, false
	}
	return (safe + cheap) / 2, true
}

// option is one way to code a chunk: its bytes and distortion.
type option struct {
	i     int // grid point, or noLambda
	bytes float64
	dist  float64
}

// options returns the ways chunk c can be coded: losslessly, or at a grid
// point coded whole where the rule shrinks it; at most one per λ.
func (s *searcher) options(c int, points []int) []option {
	out := []option{{i: noLambda, bytes: float64(len(s.plain[c].rec))}}
	for _, i := range points {
		x := s.at[i][c]
		if x.rec != nil && len(x.rec) < len(s.plain[c].rec) {
			out = append(out, option{i: i, bytes: float64(len(x.rec)), dist: x.cost.dist})
		}
	}
	return out
}

// mix returns the distortion of the file whose chunks take, each, the
// cheaper of grid points safe and cheap or lossless coding, within the
// target (as choose, on two points).
func (s *searcher) mix(safe, cheap int) float64 {
	choice, _ := s.allocate([]int{safe, cheap})
	return s.fileDistortion(choice)
}

// choose sets s.choice: for each chunk, the coding among the grid points
// coded whole and lossless coding that gives the least storage whose
// distortion meets the target, using at most maxLevels λ.
func (s *searcher) choose() {
	var points []int
	for i := range s.files {
		points = append(points, i)
	}
	for i := range s.partial {
		if _, ok := s.files[i]; !ok {
			points = append(points, i)
		}
	}
	slices.Sort(points)
	choice, _ := s.allocate(points)
	// Too many λ for one file: keep the most used.
	if used := usedPoints(choice); len(used) > maxLevels {
		count := map[int]int{}
		for _, i := range choice {
			count[i]++
		}
		sort.Slice(used, func(a, b int) bool { return count[used[a]] > count[used[b]] })
		choice, _ = s.allocate(used[:maxLevels])
	}
	s.choice = choice
}

// allocate picks each chunk's option among points, least bytes first,
// within the target: a Lagrangian multiplier found by bisection, then the
// distortion left over spent greedily on the chunks that save most per
// unit of distortion. It returns the choice and its bytes.
func (s *searcher) allocate(points []int) ([]int, float64) {
	opts := make([][]option, len(s.chunks))
	for c := range opts {
		opts[c] = s.options(c, points)
	}
	budget := s.target * s.slots
	pick := func(mu float64) ([]int, float64, float64) {
		choice := make([]int, len(opts))
		var bytes, dist float64
		for c, os := range opts {
			best := os[0]
			for _, o := range os[1:] {
				if o.bytes+mu*o.dist < best.bytes+mu*best.dist {
					best = o
				}
			}
			choice[c] = best.i
			bytes += best.bytes
			dist += best.dist
		}
		return choice, bytes, dist
	}
	// μ = ∞ gives lossless everywhere (dist 0); find the least μ within
	// the budget.
	choice, bytes, dist := pick(0)
	if dist > budget {
		lo, hi := 0.0, 1.0
		for {
			if _, _, d := pick(hi); d <= budget {
				break
			}
			lo, hi = hi, hi*4
			if hi > 1e30 {
				break
			}
		}
		for range 60 {
			mid := (lo + hi) / 2
			if _, _, d := pick(mid); d <= budget {
				hi = mid
			} else {
				lo = mid
			}
		}
		choice, bytes, dist = pick(hi)
	}
	// Every chunk at one λ (lossless where the rule does not shrink it) is
	// a choice too, which the multiplier can miss: a chunk whose only
	// choices are much larger or much more distorted makes the split jump.
	for _, i := range points {
		u := make([]int, len(opts))
		var b, d float64
		for c, os := range opts {
			o := findOption(os, i)
			u[c], b, d = o.i, b+o.bytes, d+o.dist
		}
		if d <= budget && b < bytes {
			choice, bytes, dist = u, b, d
		}
	}
	// Spend what is left of the budget: move single chunks to options
	// with fewer bytes, best saving per unit of distortion first.
	for {
		bestC, bestO, bestRatio := -1, option{}, 0.0
		for c, os := range opts {
			cur := findOption(os, choice[c])
			for _, o := range os {
				save, add := cur.bytes-o.bytes, o.dist-cur.dist
				if save <= 0 || dist+add > budget {
					continue
				}
				r := math.Inf(1)
				if add > 0 {
					r = save / add
				}
				if r > bestRatio {
					bestC, bestO, bestRatio = c, o, r
				}
			}
		}
		if bestC < 0 {
			break
		}
		cur := findOption(opts[bestC], choice[bestC])
		bytes += bestO.bytes - cur.bytes
		dist += bestO.dist - cur.dist
		choice[bestC] = bestO.i
	}
	return choice, bytes
}

func findOption(os []option, i int) option {
	for _, o := range os {
		if o.i == i {
			return o
		}
	}
	return os[0]
}

// usedPoints returns the grid points a choice uses, increasing.
func usedPoints(choice []int) []int {
	var out []int
	for _, i := range choice {
		if i != noLambda && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// fileDistortion is the mean slot distortion of the file a choice makes.
func (s *searcher) fileDistortion(choice []int) float64 {
	var d float64
	for c, i := range choice {
		if i != noLambda {
			d += s.at[i][c].cost.dist
		}
	}
	return d / max(s.slots, 1)
}

// landed is the distortion of the file s.choice makes.
func (s *searcher) landed() float64 { return s.fileDistortion(s.choice) }

// reconstruct decodes a chunk record the searcher coded at grid point i
// (noLambda: losslessly) of n states, and returns its reconstruction.
func (s *searcher) reconstruct(i int, rec []byte, n int) ([]uint16, error) {
	c := s.pool[0]
	ret := &retention{rules: []*gate.Rule{nil}, omit: true, exact: s.cfg.exactCopies}
	if i != noLambda {
		ret.rules[0] = s.gp.Rule(lambdaAt(i))
	}
	c.setRetention(ret)
	actions, codes := make([]int64, n), make([]uint16, n*s.m.Geom.N())
	err := c.decodeChunk(rec[chunkHdrSize:len(rec)-crcSize], chunkMode{}, n, le.Uint32(rec[12:]), actions, codes, 0)
	return codes, err
}

// result writes the file of s.choice.
func (s *searcher) result() (*LambdaResult, error) {
	used := usedPoints(s.choice)
	lambdas := make([]lambda.Lambda, len(used))
	level := map[int]int{}
	for k, i := range used {
		lambdas[k] = lambdaAt(i)
		level[i] = k
	}
	opts := append(slices.Clip(s.opts), WithThreads(1))
	res := &LambdaResult{Lambda: LambdaLossless, Lambdas: lambdas}
	switch len(used) {
	case 0:
	case 1:
		res.Lambda = lambdas[0]
		opts = append(opts, WithLambda(lambdas[0]))
	default:
		res.Lambda = lambdas[len(lambdas)-1]
		opts = append(opts, WithLevels(lambdas...))
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, s.m, opts...)
	if err != nil {
		return nil, err
	}
	c := 0
	for e := range s.eps {
		if err := w.WriteEpisode(nil); err != nil {
			return nil, err
		}
		for ; c < len(s.chunks) && s.chunks[c].ep == e; c++ {
			i := s.choice[c]
			x := s.plain[c]
			md := chunkMode{}
			switch {
			case i == noLambda && len(used) > 0:
				md.mode = modeLossless
				x.cost.fallbacks = 1
			case i != noLambda:
				x = s.at[i][c]
				if len(used) > 1 {
					md = chunkMode{mode: modeLevel, level: uint8(level[i])}
				}
			}
			if err := w.putChunk(x.rec, md, s.chunks[c].n, x.cost); err != nil {
				return nil, err
			}
			if s.cfg.source != nil {
				recons, err := s.reconstruct(i, x.rec, s.chunks[c].n)
				if err != nil {
					return nil, err
				}
				w.addSource(recons)
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	res.File = buf.Bytes()
	res.Account = w.Account()
	res.Report = w.Report()
	res.Distortion = res.Account.Distortion
	res.Encodes = float64(s.encoded) / float64(s.states)
	return res, nil
}
