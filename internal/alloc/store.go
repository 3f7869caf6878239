package alloc

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/ctmc"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
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
	Bits float64 // bits/state of the file, model excluded
	// Lambdas are a gated file's levels (16.16 λ; the last is lossless);
	// nil for a file coded by rate and distortion, whose levels are Lams.
	Lambdas []lambda.Lambda
	Levels  []int // level of every state, in file order
	// Accounts are what the writer accounted of each state
	// (Writer.LastAccount). Coded by rate and distortion, Level is the
	// state's level (the file does not record it), DistSum is 0 (there is
	// no gate) and Distortion is what the coding changed against the
	// member's own codes, not the distortion against the source: Dist is.
	Accounts  []format.StateAccount
	Core      int // the flat tail's core rank cut (0: ranked tail)
	Encodings int // closed-loop encodings made

	// A file coded by rate and distortion (a codec with a quantizer and
	// no retention gate, such as a family trained on float observations):
	//
	// Member is the index in the codec's Members of the member that wrote
	// the file (the codec decodes it with that member; 0 for a gated
	// codec). Lams are the levels, the coder's λ of each (distortion
	// units a bit, format.DistUnit a slot vector's squared norm; the last
	// is 0, the member's own codes; RDLambdaString prints them as the
	// public λ). The file itself records no levels. Dist is each state's
	// distortion in file order, the mean over its slot vectors of
	// ‖x − x̂‖²/‖x‖² against its source floats (Source: every state had
	// them) or, for a state given as codes, against the finest
	// quantizer's reconstruction of them.
	Member int
	Lams   []uint64
	Dist   []float64
	Source bool
	// Report is what the file's index records of its distortion (for a
	// gated codec only what retention lost: Store writes codes).
	Report format.Report
}

// RD reports whether the file is coded by rate and distortion.
func (r *Stored) RD() bool { return r.Lams != nil }

// LevelString prints the λ of level lv: Lambda.Text for a gated file,
// RDLambdaString's for one coded by rate and distortion.
func (r *Stored) LevelString(lv int) string {
	if r.Lams != nil {
		return RDLambdaString(r.Lams[lv])
	}
	return r.Lambdas[lv].Text()
}

// Distortion returns the file's mean relative distortion per state and its
// mean weighted by counts (per state, in file order; 0 if there are no
// accesses), and how many states each level holds. For a gated file it is
// the gate's distortion (the accounts' DistSum under the codec's gate);
// for a file coded by rate and distortion, the mean relative squared
// error of the slot vectors, Dist (c is not needed then).
func (r *Stored) Distortion(c *wmzip.Codec, counts []int64) (mean, weighted float64, perLevel []int, err error) {
	if r.RD() {
		var n int64
		perLevel = make([]int, len(r.Lams))
		for i, d := range r.Dist {
			mean += d
			if i < len(counts) {
				weighted += float64(counts[i]) * d
				n += counts[i]
			}
			perLevel[r.Levels[i]]++
		}
		mean /= float64(max(len(r.Dist), 1))
		if n > 0 {
			weighted /= float64(n)
		}
		return mean, weighted, perLevel, nil
	}
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
// fitted to the file, and lossless) by its access rank. ctx is checked
// between encodings.
//
// The codec needs a retention gate, or a quantizer: a codec without a
// gate (a family trained on float observations, by default) codes the
// file by rate and distortion with one of its members (rd.go), each
// state at its level's λ (up to 16 levels, the top one the member's own
// codes), and the distortion measured and weighed is against the
// episodes' float observations when they have them (else against the
// codec's reconstruction of their codes).
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
		if c.Quantizer() == nil {
			return nil, fmt.Errorf("%w: the codec has neither a retention gate nor a quantizer, one of which storage by access needs: %v", wmzip.ErrInput, err)
		}
		return storeRD(ctx, w, c, eps, counts, budget, cfg)
	}
	weps, err := codesOf(c, eps)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, e := range weps {
		n += len(e.Actions)
	}
	core, err := cfg.core(n, counts)
	if err != nil {
		return nil, err
	}
	logf := cfg.logf
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
	return &Stored{Bits: r.Bits / float64(n), Lambdas: l.Lambdas, Levels: r.Levels, Accounts: r.Accounts, Core: core, Encodings: r.Attempts, Report: r.Report}, nil
}

// core checks the access counts of n states and returns the core of the
// flat tail (TailCore), logging it.
func (cfg *storeConfig) core(n int, counts []int64) (int, error) {
	if n == 0 {
		return 0, fmt.Errorf("%w: no states", wmzip.ErrInput)
	}
	if len(counts) != n {
		return 0, fmt.Errorf("%w: %d access counts for %d states", wmzip.ErrInput, len(counts), n)
	}
	core, err := TailCore(cfg.tail, counts)
	if err != nil {
		return 0, err
	}
	if core > 0 && cfg.logf != nil {
		cfg.logf("flat tail: the core is the states of access rank ≤ %d (%.0f%% of the accesses); the rest weigh as rank %d", core, 100*CoreMass, core)
	}
	return core, nil
}

// storeRD is Store for a codec coded by rate and distortion.
func storeRD(ctx context.Context, w io.Writer, c *wmzip.Codec, eps []wmzip.Episode, counts []int64, budget float64, cfg storeConfig) (*Stored, error) {
	n := 0
	for _, e := range eps {
		n += len(e.Actions)
	}
	core, err := cfg.core(n, counts)
	if err != nil {
		return nil, err
	}
	logf := cfg.logf
	if p := cfg.progress; p != nil {
		p("ladder", 0, 1)
	}
	ranks := ctmc.Ranks(counts)
	ac := Config{Keyframe: cfg.keyframe, Budget: budget, Tau: cfg.tau, Space: cfg.space, Core: core, Guard: cfg.guard, Logf: logf, Context: ctx}
	mp, err := chooseMember(c, eps, counts, ranks, ac, cfg.workers, logf)
	if err != nil {
		return nil, err
	}
	s, coarse, member := mp.s, mp.coarse, mp.index
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l, err := s.fineLadder(coarse, cfg.keyframe, cfg.workers, logf)
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
	if cfg.embed {
		ac.Options = append(ac.Options, format.WithEmbeddedModel(true))
	}
	r, err := allocate(n, l, ranks, ac, mp.guardScale, func(levels []int) (*Result, error) {
		return s.encodeLevels(cfg.keyframe, l.Lams, levels, ac.Options)
	})
	if err != nil {
		return nil, err
	}
	if p := cfg.progress; p != nil {
		p("allocating", 1, 1)
	}
	if _, err := w.Write(r.File); err != nil {
		return nil, err
	}
	source := !slices.Contains(s.source, false)
	return &Stored{Bits: r.Bits / float64(n), Levels: r.Levels, Accounts: r.Accounts, Core: core, Encodings: r.Attempts,
		Member: member, Lams: l.Lams, Dist: r.Dist, Source: source, Report: r.Report}, nil
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
