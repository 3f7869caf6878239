package format

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/wm"
)

// The distortion-target search. Method, tuning and measurements:
// docs/results-gate.md, "Distortion target in a few encodes".

// A Probe reports one encoding made by SearchLambda.
type Probe struct {
	Lambda     uint32  // 16.16 fixed point
	Distortion float64 // relative distortion of the states encoded
	States     int64   // states encoded
	Sample     bool    // a sample of the file, not the whole file
	Stopped    bool    // a whole-file encode stopped early: it could no longer meet the target, or was far below it
}

// LambdaResult is the outcome of SearchLambda.
type LambdaResult struct {
	Lambda     uint32  // 16.16 fixed point
	Distortion float64 // relative distortion of File, at most the target
	File       []byte  // the episodes encoded at Lambda
	Account    Account // the writer's account of File
	// Encodes is the work of the search: states encoded, over all probes,
	// divided by the states of the file (one encode of the file is 1).
	Encodes float64
}

// ErrNoLambda reports a distortion target that not even the largest λ
// SearchLambda tries meets: the file needs lossless coding.
var ErrNoLambda = errors.New("wmz: no λ meets the distortion target")

// The search runs on a grid of λ = 2^(i/searchStep), over the range
// 2^-4..2^15.75 that a bisection over λ = 2^(k/4) used to search.
const (
	searchStep = 32
	searchMin  = -4 * searchStep
	searchMax  = 63 * searchStep / 4
)

// Tuning (docs/results-gate.md).
const (
	sampleShare  = 1.0 / 25 // states in the sample, as a share of the file
	samplePieces = 16       // chunks the sample takes a prefix of, at most, unless whole chunks fit
	samplePiece  = 2        // fewest states of a chunk in the sample
	locateTol    = 4        // grid points: the sample only locates; whole-file encodes land
	worthRate    = 0.05     // a rate saving below this is not worth another encode
	aim          = 0.02     // later encodes aim this far below the target,
	aimMiss      = 0.06     // or this far after one that missed: the curve is rough at fine scale
	slopeMin     = -4.0     // d ln D / d log2 λ assumed at most this steep,
	slopeMax     = -0.3     // and at least this
	maxKept      = 3        // whole-file encodes once one met the target, that one included
	lowShare     = 0.25     // an encode is judged far below the target after this share of the states,
	lowFactor    = 0.25     // if its distortion is below this share of the target
	maxProbes    = 8        // whole-file encodes in all; the last is at the largest λ
	checkpoints  = 64       // points along the file where encodes record their cost
	farOff       = 1.5      // a distortion this factor off the target is far: steps on one side double
)

// SearchLambda encodes eps, one episode each without metadata, at the
// smallest λ it finds whose encoding has relative distortion at most
// target (of the writer's Account, as gate.Params.RelDistortion gives it)
// and returns that encoding.
//
// Distortion is closed-loop (an omitted value feeds the predictions that
// follow), so it is measured by encoding. The search locates the target
// on a sample of the file (chunk prefixes spread over it, each coded
// exactly as in the file), starting from a λ derived from the gate's
// calibration; then it encodes the whole file and steps by secant in log
// distortion. It stops once landing on the target would save less than
// worthRate of the rate (by the sample's rate–distortion elasticity, or
// by the rate gap to an encode that missed), or once λ is resolved to
// 1/searchStep octave. A whole-file encode stops early once it exceeds the
// target, or when it lies far below it. Typically the search costs two to
// three encodes of the file (LambdaResult.Encodes); at most maxProbes
// whole-file encodes, re-encodes of those stopped far below the target,
// and the sample's. It holds up to maxKept encoded files in memory.
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
	s := newSearcher(ctx, m, gp, eps, cfg.keyframe, target, progress, opts)
	if s.states == 0 {
		return nil, fmt.Errorf("%w: no states to encode", ErrInput)
	}
	st := newStrategy(target)
	st.start = warmStart(gp)
	best, err := st.run(s)
	if err != nil {
		return nil, err
	}
	r := s.kept[best]
	return &LambdaResult{Lambda: lambdaAt(best), Distortion: r.d, File: r.file, Account: r.acct,
		Encodes: float64(s.encoded) / float64(s.states)}, nil
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

// lambdaAt returns the λ of grid point i, 16.16.
func lambdaAt(i int) uint32 {
	l, _ := gate.LambdaFixed(math.Exp2(float64(i) / searchStep))
	return l
}

// span is n states of episode ep from step first: a chunk, or its prefix.
type span struct {
	ep, first, n int
}

// sampleSpans returns the sample of a file of the given chunks: about
// sampleShare of its states, as prefixes of up to samplePieces chunks
// spread over the file, or as whole chunks if that many fit. A prefix
// codes exactly as in the file (every chunk restarts the model), but its
// states sit early in their chunk, where closed-loop errors have had
// less time to accumulate.
func sampleSpans(chunks []span, states int64) []span {
	if len(chunks) == 0 {
		return nil
	}
	budget := max(1, int(math.Ceil(sampleShare*float64(states))))
	avg := int(states) / len(chunks)
	pieces := min(len(chunks), max(samplePieces, budget/max(avg, 1)))
	p := max(samplePiece, (budget+pieces-1)/pieces)
	var out []span
	for k := range pieces {
		c := chunks[k*len(chunks)/pieces]
		c.n = min(c.n, p)
		out = append(out, c)
	}
	return out
}

// samplePoint is the sample's distortion and rate at one λ.
type samplePoint struct {
	d    float64 // relative distortion
	rate float64 // ideal bits per state
}

// fileProbe is one whole-file encode, complete or stopped early.
type fileProbe struct {
	d        float64  // relative distortion of the states encoded
	rate     float64  // ideal bits per state of the states encoded
	costs    []uint64 // ideal cost of the states coded by each of the file's first checkpoints reached
	complete bool
	under    bool        // stopped far below the target
	sample   samplePoint // the sample's states within it, if complete
	file     []byte
	acct     Account
}

// searcher encodes the file and its sample.
type searcher struct {
	ctx      context.Context
	m        *wm.Model
	gp       *gate.Params
	eps      []wm.Episode
	opts     []Option
	target   float64
	progress func(Probe)

	states   int64
	sample   []span
	inSample [][]bool // per episode (nil if none), per step
	sampled  int64
	encoded  int64

	kept   map[int]*fileProbe // whole-file encodes that met the target, by grid point
	paused map[int]*fileRun   // whole-file encodes stopped far below the target
}

func newSearcher(ctx context.Context, m *wm.Model, gp *gate.Params, eps []wm.Episode, keyframe int, target float64, progress func(Probe), opts []Option) *searcher {
	s := &searcher{ctx: ctx, m: m, gp: gp, eps: eps, target: target, progress: progress,
		kept: map[int]*fileProbe{}, paused: map[int]*fileRun{}}
	// Whole-file probes write the file as asked (one of them is the
	// result); sample probes never embed the model.
	s.opts = slices.Clip(opts)
	n := m.Geom.N()
	var chunks []span
	for e, ep := range eps {
		T := len(ep.Codes) / max(n, 1)
		s.states += int64(T)
		for t := 0; t < T; t += keyframe {
			chunks = append(chunks, span{e, t, min(keyframe, T-t)})
		}
	}
	s.sample = sampleSpans(chunks, s.states)
	s.inSample = make([][]bool, len(eps))
	for _, c := range s.sample {
		s.sampled += int64(c.n)
		if s.inSample[c.ep] == nil {
			s.inSample[c.ep] = make([]bool, len(eps[c.ep].Codes)/n)
		}
		for t := c.first; t < c.first+c.n; t++ {
			s.inSample[c.ep][t] = true
		}
	}
	return s
}

// report calls the progress function.
func (s *searcher) report(i int, d float64, states int64, sample, stopped bool) {
	if s.progress != nil {
		s.progress(Probe{Lambda: lambdaAt(i), Distortion: d, States: states, Sample: sample, Stopped: stopped})
	}
}

// bitsPerState turns a sum of ideal costs over n states into bits/state.
func bitsPerState(cost uint64, n int64) float64 {
	return float64(cost) / (1 << costFrac) / float64(max(n, 1))
}

// sampleAt encodes the sample at grid point i.
func (s *searcher) sampleAt(i int) (samplePoint, error) {
	if err := s.ctx.Err(); err != nil {
		return samplePoint{}, err
	}
	w, err := NewWriter(discard{}, s.m, append(s.opts, WithEmbeddedModel(false), WithLambda(lambdaAt(i)))...)
	if err != nil {
		return samplePoint{}, err
	}
	n := s.m.Geom.N()
	var dist, cost uint64
	for _, c := range s.sample {
		if err := w.WriteEpisode(nil); err != nil {
			return samplePoint{}, err
		}
		ep := s.eps[c.ep]
		for t := c.first; t < c.first+c.n; t++ {
			if err := w.WriteState(ep.Actions[t], ep.Codes[t*n:(t+1)*n]); err != nil {
				return samplePoint{}, err
			}
			a := w.LastAccount()
			dist += a.DistSum
			cost += a.Cost
		}
	}
	s.encoded += s.sampled
	p := samplePoint{d: s.gp.RelDistortion(dist, s.sampled), rate: bitsPerState(cost, s.sampled)}
	s.report(i, p.d, s.sampled, true, false)
	return p, nil
}

// fileRun is a whole-file encode in progress. One stopped far below the
// target is kept, so that finishing it later continues where it stopped.
type fileRun struct {
	w                        *Writer
	buf                      bytes.Buffer
	e, t                     int // the next state: episode e, step t; t < 0 before the episode's record
	dist, cost, sdist, scost uint64
	done                     int64
	costs                    []uint64
}

// fileAt encodes the whole file at grid point i. It stops once the
// distortion exceeds the target, and if low is set once a share lowShare
// of the states is coded with distortion below target·lowFactor; such an
// encode continues at the next call for i.
func (s *searcher) fileAt(i int, low bool) (fileProbe, error) {
	r := s.paused[i]
	delete(s.paused, i)
	if r == nil {
		r = &fileRun{t: -1}
		var err error
		if r.w, err = NewWriter(&r.buf, s.m, append(s.opts, WithLambda(lambdaAt(i)))...); err != nil {
			return fileProbe{}, err
		}
	}
	start := r.done
	n := s.m.Geom.N()
	// The target in the account's units, per state; without a slot norm
	// every distortion is 0.
	unit := s.target * float64(s.m.Geom.S) * float64(s.gp.SlotNorm)
	limit := unit * float64(s.states)
	if s.gp.SlotNorm == 0 {
		limit = math.Inf(1)
	}
	early := int64(math.Ceil(lowShare * float64(s.states)))
	stop := func(under bool) (fileProbe, error) {
		s.encoded += r.done - start
		f := fileProbe{d: s.gp.RelDistortion(r.dist, r.done), rate: bitsPerState(r.cost, r.done), costs: r.costs, under: under}
		if under {
			s.paused[i] = r
		}
		s.report(i, f.d, r.done-start, false, true)
		return f, nil
	}
	for ; r.e < len(s.eps); r.e, r.t = r.e+1, -1 {
		ep := s.eps[r.e]
		if r.t < 0 {
			if err := r.w.WriteEpisode(nil); err != nil {
				return fileProbe{}, err
			}
			r.t = 0
		}
		for r.t < len(ep.Actions) {
			t := r.t
			if r.done%64 == 0 {
				if err := s.ctx.Err(); err != nil {
					return fileProbe{}, err
				}
			}
			if err := r.w.WriteState(ep.Actions[t], ep.Codes[t*n:(t+1)*n]); err != nil {
				return fileProbe{}, err
			}
			r.t++
			r.done++
			acc := r.w.LastAccount()
			r.dist += acc.DistSum
			r.cost += acc.Cost
			if s.inSample[r.e] != nil && s.inSample[r.e][t] {
				r.sdist += acc.DistSum
				r.scost += acc.Cost
			}
			if k := int64(len(r.costs)) + 1; r.done == (k*s.states+checkpoints-1)/checkpoints {
				r.costs = append(r.costs, r.cost)
			}
			if float64(r.dist) > limit {
				return stop(false)
			}
			if low && r.done == early && float64(r.dist) < lowFactor*unit*float64(r.done) {
				return stop(true)
			}
		}
	}
	if err := r.w.Close(); err != nil {
		return fileProbe{}, err
	}
	s.encoded += r.done - start
	acct := r.w.Account()
	f := fileProbe{d: s.gp.RelDistortion(acct.DistSum, acct.States), rate: bitsPerState(r.cost, r.done), costs: r.costs,
		complete: true, file: r.buf.Bytes(), acct: acct,
		sample: samplePoint{d: s.gp.RelDistortion(r.sdist, s.sampled), rate: bitsPerState(r.scost, s.sampled)}}
	s.report(i, f.d, r.done-start, false, false)
	if f.d <= s.target {
		s.kept[i] = &f
	}
	return f, nil
}

// discard keeps nothing.
type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }
