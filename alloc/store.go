package alloc

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/ctmc"
	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/wm"
)

// An Option configures Store.
type Option func(*storeConfig) error

type storeConfig struct {
	keyframe int
	embed    bool
	tau      float64
	space    Space
	tail     Tail
	guard    float64
	workers  int
	progress func(stage string, done, total int)
	logf     func(string, ...any)
}

// WithTau sets the exponent of the rank weights w(r) = r^-τ (default 1;
// 0 is one level for every state).
func WithTau(tau float64) Option {
	return Option(func(c *storeConfig) error {
		if !(tau >= 0) || math.IsInf(tau, 0) {
			return fmt.Errorf("%w: τ %v: want a finite τ ≥ 0", wmzip.ErrInput, tau)
		}
		c.tau = tau
		return nil
	})
}

// WithAllocation sets what the rank weights scale (SpaceLambda, the
// default, or SpaceBits) and how they treat the rarely read states
// (TailRanked, the default, or TailFlat).
func WithAllocation(space Space, tail Tail) Option {
	return Option(func(c *storeConfig) error {
		if space != SpaceLambda && space != SpaceBits || tail != TailRanked && tail != TailFlat {
			return fmt.Errorf("%w: allocation %q, tail %q", wmzip.ErrInput, space, tail)
		}
		c.space, c.tail = space, tail
		return nil
	})
}

// WithTailGuard bounds what the rank law takes from the least-read half of
// the states: at most g times the distortion one λ for every state would
// give them (default DefaultTailGuard; 0 is off).
func WithTailGuard(g float64) Option {
	return Option(func(c *storeConfig) error {
		if g != 0 && !(g >= 1 && !math.IsInf(g, 0)) {
			return fmt.Errorf("%w: tail guard %v: want 0 (off) or a finite factor ≥ 1", wmzip.ErrInput, g)
		}
		c.guard = g
		return nil
	})
}

// WithLog receives Store's account of its search, a line at a time.
func WithLog(logf func(format string, args ...any)) Option {
	return Option(func(c *storeConfig) error { c.logf = logf; return nil })
}

// Stored is the outcome of Store.
type Stored struct {
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
func (r *Stored) Distortion(c *wmzip.Codec, counts []int64) (mean, weighted float64, perLevel []int, err error) {
	p, err := gate.FromModel(c.Model())
	if err != nil {
		return 0, 0, nil, fmt.Errorf("%w: the codec has no retention gate: %v", wmzip.ErrInput, err)
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

// Counts counts the accesses of a trace per state of episodes of the
// given lengths (File.Episodes), in file order, and returns how many
// accesses name states the episodes do not have.
func Counts(trace []ctmc.Access, lens []int) (counts []int64, outside int64) {
	start := make([]int, len(lens)+1)
	for i, n := range lens {
		start[i+1] = start[i] + n
	}
	counts = make([]int64, start[len(lens)])
	for _, a := range trace {
		if a.Episode < 0 || a.Episode >= int64(len(lens)) || a.Step < 0 || a.Step >= int64(lens[a.Episode]) {
			outside++
			continue
		}
		counts[start[a.Episode]+int(a.Step)]++
	}
	return counts, outside
}

// Store writes eps to w within budget bits/state (model excluded) so
// that states read more often keep more: counts[i] is the accesses of
// state i in file order (Counts). Each state takes one of 16 levels (15 λ
// fitted to the file, and lossless) by its access rank; the codec needs a
// gate. ctx is checked between encodings.
func Store(ctx context.Context, w io.Writer, c *wmzip.Codec, eps []wmzip.Episode, counts []int64, budget float64, opts ...Option) (*Stored, error) {
	cfg := storeConfig{keyframe: format.DefaultKeyframeInterval, tau: 1, space: DefaultSpace, tail: DefaultTail, guard: DefaultTailGuard, workers: min(2, runtime.GOMAXPROCS(0))}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if !(budget > 0) || math.IsInf(budget, 0) {
		return nil, fmt.Errorf("%w: budget %v: want a positive number of bits/state", wmzip.ErrInput, budget)
	}
	if _, err := gate.FromModel(c.Model()); err != nil {
		return nil, fmt.Errorf("%w: the codec has no retention gate, which storage by access needs: %v", wmzip.ErrInput, err)
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
		return nil, fmt.Errorf("%w: no states", wmzip.ErrInput)
	}
	if len(counts) != n {
		return nil, fmt.Errorf("%w: %d access counts for %d states", wmzip.ErrInput, len(counts), n)
	}
	core, err := TailCore(cfg.tail, counts)
	if err != nil {
		return nil, err
	}
	logf := cfg.logf
	if core > 0 && logf != nil {
		logf("flat tail: the core is the states of access rank ≤ %d (%.0f%% of the accesses); the rest weigh as rank %d", core, 100*CoreMass, core)
	}
	if p := cfg.progress; p != nil {
		p("ladder", 0, 1)
	}
	l, err := FitLadder(c.Model(), weps, cfg.keyframe, cfg.workers, budget, logf)
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
	r, err := Allocate(c.Model(), weps, l, ctmc.Ranks(counts), Config{
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
	return &Stored{Bits: r.Bits / float64(n), Lambdas: l.Lambdas, Levels: r.Levels, Accounts: r.Accounts, Core: core, Encodings: r.Attempts}, nil
}

// codesOf returns the episodes as codes, quantizing observations.
func codesOf(c *wmzip.Codec, eps []wmzip.Episode) ([]wm.Episode, error) {
	n := c.Model().Geom.N()
	out := make([]wm.Episode, len(eps))
	for i := range eps {
		e := &eps[i]
		codes := e.Codes
		if codes == nil || e.Obs != nil && c.Quantizer() != nil {
			var err error
			if codes, err = c.Quantize(nil, e.Obs); err != nil {
				return nil, fmt.Errorf("episode %d: %w", i, err)
			}
		}
		if len(codes) != len(e.Actions)*n {
			return nil, fmt.Errorf("%w: episode %d: %d actions (one per state) but %d codes, %d a state", wmzip.ErrInput, i, len(e.Actions), len(codes), n)
		}
		out[i] = wm.Episode{Codes: codes, Actions: e.Actions}
	}
	return out, nil
}

// WithKeyframeInterval sets the most states per independently decodable
// chunk, 1 to 4,096 (default 128).
func WithKeyframeInterval(g int) Option {
	return func(c *storeConfig) error {
		if g < 1 || g > format.MaxKeyframeInterval {
			return fmt.Errorf("%w: keyframe interval %d outside 1..%d", wmzip.ErrInput, g, format.MaxKeyframeInterval)
		}
		c.keyframe = g
		return nil
	}
}

// WithEmbeddedModel stores the codec's model in the file, so that it
// decodes without the .wmm file (default false).
func WithEmbeddedModel(embed bool) Option {
	return func(c *storeConfig) error { c.embed = embed; return nil }
}

// WithProgress tells fn how far Store has come: stage "ladder" (the
// levels fitted to the file), then "allocating".
func WithProgress(fn func(stage string, done, total int)) Option {
	return func(c *storeConfig) error { c.progress = fn; return nil }
}
