package wmzip

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"

	"github.com/wmzip/wmzip/alloc"
	"github.com/wmzip/wmzip/ctmc"
	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/wm"
)

type accessConfig struct {
	keyframe int
	embed    bool
	tau      float64
	space    alloc.Space
	tail     alloc.Tail
	guard    float64
	workers  int
	progress Progress
	logf     func(string, ...any)
}

// WithTau sets the exponent of the rank weights w(r) = r^-τ (default 1;
// 0 is one level for every state).
func WithTau(tau float64) AccessOption {
	return accessOpt(func(c *accessConfig) error {
		if !(tau >= 0) || math.IsInf(tau, 0) {
			return fmt.Errorf("%w: τ %v: want a finite τ ≥ 0", ErrInput, tau)
		}
		c.tau = tau
		return nil
	})
}

// WithAllocation sets what the rank weights scale (alloc.SpaceLambda, the
// default, or alloc.SpaceBits) and how they treat the rarely read states
// (alloc.TailRanked, the default, or alloc.TailFlat).
func WithAllocation(space alloc.Space, tail alloc.Tail) AccessOption {
	return accessOpt(func(c *accessConfig) error {
		if space != alloc.SpaceLambda && space != alloc.SpaceBits || tail != alloc.TailRanked && tail != alloc.TailFlat {
			return fmt.Errorf("%w: allocation %q, tail %q", ErrInput, space, tail)
		}
		c.space, c.tail = space, tail
		return nil
	})
}

// WithTailGuard bounds what the rank law takes from the least-read half of
// the states: at most g times the distortion one λ for every state would
// give them (default alloc.DefaultTailGuard; 0 is off).
func WithTailGuard(g float64) AccessOption {
	return accessOpt(func(c *accessConfig) error {
		if g != 0 && !(g >= 1 && !math.IsInf(g, 0)) {
			return fmt.Errorf("%w: tail guard %v: want 0 (off) or a finite factor ≥ 1", ErrInput, g)
		}
		c.guard = g
		return nil
	})
}

// WithLog receives StoreByAccess's account of its search, a line at a time.
func WithLog(logf func(format string, args ...any)) AccessOption {
	return accessOpt(func(c *accessConfig) error { c.logf = logf; return nil })
}

// AccessResult is the outcome of StoreByAccess.
type AccessResult struct {
	Bits      float64               // bits/state of the file, model excluded
	Lambdas   []uint32              // the file's levels (16.16 λ; the last is lossless)
	Levels    []int                 // level of every state, in file order
	Accounts  []format.StateAccount // what each state lost
	Core      int                   // the flat tail's core rank cut (0: ranked tail)
	Encodings int                   // closed-loop encodings made
}

// Distortion returns the file's mean relative distortion per state and its
// mean weighted by counts (per state, in file order; 0 if there are no
// accesses), under the codec's gate, and how many states each level holds.
func (r *AccessResult) Distortion(c *Codec, counts []int64) (mean, weighted float64, perLevel []int, err error) {
	p, err := gate.FromModel(c.Model())
	if err != nil {
		return 0, 0, nil, fmt.Errorf("%w: %v", ErrNoGate, err)
	}
	var sum uint64
	var n int64
	perLevel = make([]int, len(r.Lambdas))
	for i, ac := range r.Accounts {
		sum += ac.DistSum
		if i < len(counts) {
			weighted += float64(counts[i]) * p.RelDistortion(ac.DistSum, 1)
			n += counts[i]
		}
		perLevel[r.Levels[i]]++
	}
	if n > 0 {
		weighted /= float64(n)
	}
	return p.RelDistortion(sum, int64(len(r.Accounts))), weighted, perLevel, nil
}

// AccessCounts counts the accesses of a trace per state of eps, in file
// order, and returns how many accesses name states eps does not have.
func AccessCounts(trace []ctmc.Access, eps []Episode) (counts []int64, outside int64) {
	start := make([]int, len(eps)+1)
	for i := range eps {
		start[i+1] = start[i] + len(eps[i].Actions)
	}
	counts = make([]int64, start[len(eps)])
	for _, a := range trace {
		if a.Episode < 0 || a.Episode >= int64(len(eps)) || a.Step < 0 || a.Step >= int64(len(eps[a.Episode].Actions)) {
			outside++
			continue
		}
		counts[start[a.Episode]+int(a.Step)]++
	}
	return counts, outside
}

// StoreByAccess writes eps to w within budget bits/state (model excluded)
// so that states read more often keep more: counts[i] is the accesses of
// state i in file order (AccessCounts). Each state takes one of 16 levels
// (15 λ fitted to the file, and lossless) by its access rank; the codec
// needs a gate. The method is package alloc's. ctx is checked between
// encodings.
func StoreByAccess(ctx context.Context, w io.Writer, c *Codec, eps []Episode, counts []int64, budget float64, opts ...AccessOption) (*AccessResult, error) {
	cfg := accessConfig{keyframe: format.DefaultKeyframeInterval, tau: 1, space: alloc.DefaultSpace, tail: alloc.DefaultTail, guard: alloc.DefaultTailGuard, workers: min(2, runtime.GOMAXPROCS(0))}
	for _, o := range opts {
		if err := o.applyAccess(&cfg); err != nil {
			return nil, err
		}
	}
	if !(budget > 0) || math.IsInf(budget, 0) {
		return nil, fmt.Errorf("%w: budget %v: want a positive number of bits/state", ErrInput, budget)
	}
	if !c.HasGate() {
		return nil, ErrNoGate
	}
	weps, err := codesOf(c, eps)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, e := range weps {
		n += len(e.Actions)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: no states", ErrInput)
	}
	if len(counts) != n {
		return nil, fmt.Errorf("%w: %d access counts for %d states", ErrInput, len(counts), n)
	}
	core, err := alloc.TailCore(cfg.tail, counts)
	if err != nil {
		return nil, err
	}
	logf := cfg.logf
	if core > 0 && logf != nil {
		logf("flat tail: the core is the states of access rank ≤ %d (%.0f%% of the accesses); the rest weigh as rank %d", core, 100*alloc.CoreMass, core)
	}
	if p := cfg.progress; p != nil {
		p("ladder", 0, 1)
	}
	l, err := alloc.FitLadder(c.m, weps, cfg.keyframe, cfg.workers, budget, logf)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p := cfg.progress; p != nil {
		p("ladder", 1, 1)
		p("allocating", 0, 1)
	}
	var fopts []format.Option
	if cfg.embed {
		fopts = append(fopts, format.WithEmbeddedModel(true))
	}
	r, err := alloc.Allocate(c.m, weps, l, ctmc.Ranks(counts), alloc.Config{
		Keyframe: cfg.keyframe, Budget: budget, Tau: cfg.tau, Space: cfg.space, Core: core,
		Guard: cfg.guard, Logf: logf, Options: fopts, Context: ctx})
	if err != nil {
		return nil, err
	}
	if p := cfg.progress; p != nil {
		p("allocating", 1, 1)
	}
	if _, err := w.Write(r.File); err != nil {
		return nil, err
	}
	return &AccessResult{Bits: r.Bits / float64(n), Lambdas: l.Lambdas, Levels: r.Levels, Accounts: r.Accounts, Core: core, Encodings: r.Attempts}, nil
}

// codesOf returns the episodes as codes, quantizing observations.
func codesOf(c *Codec, eps []Episode) ([]wm.Episode, error) {
	out := make([]wm.Episode, len(eps))
	for i := range eps {
		codes, _, err := c.episodeCodes(&eps[i], false)
		if err != nil {
			return nil, fmt.Errorf("episode %d: %w", i, err)
		}
		out[i] = wm.Episode{Codes: codes, Actions: eps[i].Actions}
	}
	return out, nil
}

// episodeCodes returns the codes of e: its observations quantized when it
// has them and the codec a quantizer, else its codes.
func (c *Codec) episodeCodes(e *Episode, rotate bool) (codes []uint16, rot []float32, err error) {
	codes = e.Codes
	if codes == nil || e.Obs != nil && c.q != nil {
		if rotate && c.q != nil {
			codes, rot, err = c.quantizeRotated(nil, nil, e.Obs)
		} else {
			codes, err = c.Quantize(nil, e.Obs)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if g := c.m.Geom; len(codes) != len(e.Actions)*g.N() {
		return nil, nil, inputErrorf("%d actions (one per state) but %d codes: %d states take %d codes (%d slots × %d subspaces)", len(e.Actions), len(codes), len(e.Actions), len(e.Actions)*g.N(), g.S, g.M)
	}
	return codes, rot, nil
}
