package ctmc

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// The paper's tail-fit screen: a tail passes when it holds at least
// ScreenMinTail observations and the bootstrap goodness-of-fit p-value is
// at least ScreenMinP.
const (
	ScreenMinTail = 100
	ScreenMinP    = 0.10
)

// DefaultXMax is the upper end of the x_min search and of the KS distance,
// poweRlaw's default xmax.
const DefaultXMax = 100000

// Options control an audit. The zero value fits the tails without a
// bootstrap.
type Options struct {
	// Sims is the number of bootstrap simulations for p_gof; 0 skips it.
	Sims int
	// Seed fixes the bootstrap: simulation i draws from PCG(Seed, i+1), so
	// the result does not depend on Workers or GOMAXPROCS.
	Seed uint64
	// Workers is the number of goroutines for the bootstrap; 0 means
	// GOMAXPROCS.
	Workers int
	// XMax bounds the x_min candidates and the values entering the KS
	// distance, as poweRlaw's xmax; 0 means DefaultXMax.
	XMax int64
	// MaxCandidates > 0 keeps only the smallest MaxCandidates distinct
	// values as x_min candidates, in the fit and in every simulation; 0
	// tries them all, as poweRlaw does.
	MaxCandidates int
	// Progress, if set, is called on the calling goroutine after each
	// finished simulation.
	Progress func(done, total int)
}

// PowerLaw is the discrete power-law tail fit.
type PowerLaw struct {
	XMin  int64   `json:"xmin"`
	Alpha float64 `json:"alpha"`
	// KS is the Kolmogorov–Smirnov distance at (x_min, α̂), minimal over
	// the x_min candidates.
	KS float64 `json:"ks"`
	// NTail is the number of observations ≥ x_min; TailShare NTail / n.
	NTail     int64   `json:"n_tail"`
	TailShare float64 `json:"tail_share"`
	LogLik    float64 `json:"loglik"`
	// Candidates is the number of x_min values tried.
	Candidates int `json:"candidates"`
}

// TruncatedPowerLaw is p(x) ∝ x^-α e^{-λx} on x ≥ x_min.
type TruncatedPowerLaw struct {
	Alpha  float64 `json:"alpha"`
	Lambda float64 `json:"lambda"`
	LogLik float64 `json:"loglik"`
}

// LogNormal is the discrete log-normal tail on x ≥ x_min.
//
// On power-law-like tails its likelihood may have no maximum at finite
// (μ, σ) but rise toward μ → −∞ with σ² = −μ/(α−1), where the log-normal
// becomes a power law of exponent α on the tail; any point along that ridge
// is an arbitrary stop of the search. Such a fit is Degenerate: Mu is −Inf,
// Sigma +Inf (null in JSON), and LogLik and Alpha are those of the limit.
type LogNormal struct {
	Mu     float64 `json:"mu"`
	Sigma  float64 `json:"sigma"`
	LogLik float64 `json:"loglik"`
	// Degenerate fits only: Alpha is the exponent of the power law that
	// the fit approaches (1 − μ/σ² along the ridge).
	Alpha      float64 `json:"alpha,omitempty"`
	Degenerate bool    `json:"degenerate,omitempty"`
}

// MarshalJSON writes a degenerate fit's infinite μ and σ as null.
func (l LogNormal) MarshalJSON() ([]byte, error) {
	type plain LogNormal
	if !l.Degenerate {
		return json.Marshal(plain(l))
	}
	return json.Marshal(struct {
		Mu     *float64 `json:"mu"`
		Sigma  *float64 `json:"sigma"`
		LogLik float64  `json:"loglik"`
		Alpha  float64  `json:"alpha"`
		Degen  bool     `json:"degenerate"`
	}{nil, nil, l.LogLik, l.Alpha, true})
}

// Exponential is the discrete exponential tail on x ≥ x_min.
type Exponential struct {
	Lambda float64 `json:"lambda"`
	LogLik float64 `json:"loglik"`
}

// Bootstrap is the semi-parametric goodness-of-fit test of CSN 2009 §4.1,
// as poweRlaw's bootstrap_p: each simulated data set has n values, each
// drawn with probability n_tail/n from the fitted power law above x_min and
// otherwise uniformly from the observed values below x_min; x_min and α are
// then re-estimated on it. P is the fraction of simulations whose KS
// distance is at least the observed one.
type Bootstrap struct {
	Sims int     `json:"sims"`
	Seed uint64  `json:"seed"`
	P    float64 `json:"p_gof"`
	// Failed counts simulations with too few distinct values to fit; they
	// count as not exceeding the observed distance.
	Failed int `json:"failed,omitempty"`
	// MeanXMin and MeanAlpha are the means of the simulated estimates.
	MeanXMin  float64 `json:"mean_xmin"`
	MeanAlpha float64 `json:"mean_alpha"`
}

// Screen is the paper's tail-fit screen.
type Screen struct {
	MinTail int     `json:"min_tail"`
	MinP    float64 `json:"min_p"`
	Pass    bool    `json:"pass"`
	// Reason says why the screen fails, or "" when it passes.
	Reason string `json:"reason,omitempty"`
}

// Report is the result of an audit.
type Report struct {
	// Zeros is the number of zero counts dropped before the audit.
	Zeros         int                `json:"zeros_dropped"`
	Concentration Concentration      `json:"concentration"`
	PowerLaw      *PowerLaw          `json:"power_law,omitempty"`
	Truncated     *TruncatedPowerLaw `json:"truncated_power_law,omitempty"`
	LogNormal     *LogNormal         `json:"log_normal,omitempty"`
	Exponential   *Exponential       `json:"exponential,omitempty"`
	// Comparisons are, in order: truncated power law vs log-normal, power
	// law vs truncated power law, power law vs log-normal, power law vs
	// exponential.
	Comparisons []Comparison `json:"comparisons,omitempty"`
	Bootstrap   *Bootstrap   `json:"bootstrap,omitempty"`
	Screen      Screen       `json:"screen"`
	// Verdict is the screen and the TPL-vs-log-normal comparison in words.
	Verdict string `json:"verdict"`
}

// ErrNoCounts is returned by Audit when no positive count is given.
var ErrNoCounts = errors.New("ctmc: no positive counts")

// Audit measures concentration, fits the tails and, with opt.Sims > 0, runs
// the bootstrap. Negative counts are an error; zero counts are dropped and
// reported. The tail fits need at least three distinct counts; with fewer,
// the report holds the concentration only.
func Audit(counts []int64, opt Options) (*Report, error) {
	if opt.XMax == 0 {
		opt.XMax = DefaultXMax
	}
	if opt.Sims < 0 || opt.Workers < 0 || opt.XMax < 1 || opt.MaxCandidates < 0 {
		return nil, errors.New("ctmc: negative option")
	}
	x := make([]int64, 0, len(counts))
	r := &Report{Screen: Screen{MinTail: ScreenMinTail, MinP: ScreenMinP}}
	for i, c := range counts {
		switch {
		case c < 0:
			return nil, fmt.Errorf("ctmc: negative count %d at index %d", c, i)
		case c == 0:
			r.Zeros++
		default:
			x = append(x, c)
		}
	}
	if len(x) == 0 {
		return nil, ErrNoCounts
	}
	r.Concentration = Concentrate(x)
	s := newSample(x)
	fit, ok := s.fitPowerLaw(opt.XMax, opt.MaxCandidates)
	if !ok {
		r.Screen.Reason = "fewer than three distinct counts: no tail fit"
		r.Verdict = "no tail fit: " + r.Screen.Reason
		return r, nil
	}
	t := s.tail(fit.j)
	r.PowerLaw = &PowerLaw{
		XMin: fit.xmin, Alpha: fit.alpha, KS: fit.ks, NTail: fit.nTail,
		TailShare:  float64(fit.nTail) / float64(s.n),
		LogLik:     s.plLogLik(fit.j, fit.alpha),
		Candidates: candidates(s, opt.XMax, opt.MaxCandidates),
	}
	tp := t.fitTPL(fit.alpha)
	ln := t.fitLogNormal()
	ex := t.fitExp()
	r.Truncated = &TruncatedPowerLaw{Alpha: tp.alpha, Lambda: tp.lambda, LogLik: tp.logLik}
	r.LogNormal = &LogNormal{Mu: ln.mu, Sigma: ln.sigma, LogLik: ln.logLik, Alpha: ln.alpha, Degenerate: ln.degenerate}
	r.Exponential = &Exponential{Lambda: ex.lambda, LogLik: ex.logLik}

	lzPL := math.Log(hurwitz(fit.alpha, fit.xmin))
	pPL := func(v int64) float64 { return -fit.alpha*logInt(v) - lzPL }
	lzTP := math.Log(tp.z)
	pTP := func(v int64) float64 { return -tp.alpha*logInt(v) - tp.lambda*float64(v) - lzTP }
	pLN := func(v int64) float64 { return lnPoint(v, fit.xmin, ln.mu, ln.sigma) }
	if ln.degenerate {
		pLN = func(v int64) float64 { return lnLimPoint(v, fit.xmin, ln.alpha) }
	}
	pEX := func(v int64) float64 { return math.Log(-math.Expm1(-ex.lambda)) - ex.lambda*float64(v-fit.xmin) }
	nested := vuong("power_law", "truncated_power_law", pPL, pTP, &t)
	np := math.Erfc(math.Sqrt(math.Abs(nested.LogLikRatio)))
	nested.NestedP = &np
	r.Comparisons = []Comparison{
		vuong("truncated_power_law", "log_normal", pTP, pLN, &t),
		nested,
		vuong("power_law", "log_normal", pPL, pLN, &t),
		vuong("power_law", "exponential", pPL, pEX, &t),
	}
	if ln.degenerate {
		// Both sides are power laws on this tail: they differ only in how a
		// density is put on the integers, which says nothing of the tail.
		why := fmt.Sprintf("log-normal degenerate: a power law (α %.2f) on this tail", ln.alpha)
		if tp.lambda == 0 {
			r.Comparisons[0].tie(why)
		}
		r.Comparisons[2].tie(why)
	}
	if opt.Sims > 0 {
		b, err := bootstrap(s, fit, opt)
		if err != nil {
			return nil, err
		}
		r.Bootstrap = b
	}
	r.screen()
	return r, nil
}

func candidates(s *sample, xmax int64, maxCand int) int {
	last := min(len(s.v)-3, s.index(xmax+1)-1)
	if maxCand > 0 && last >= maxCand {
		last = maxCand - 1
	}
	return last + 1
}

func (r *Report) screen() {
	sc := &r.Screen
	pl := r.PowerLaw
	var why []string
	if pl.NTail < int64(sc.MinTail) {
		why = append(why, fmt.Sprintf("n_tail %d < %d", pl.NTail, sc.MinTail))
	}
	pText := "not bootstrapped"
	if r.Bootstrap == nil {
		why = append(why, "no bootstrap p_gof")
	} else {
		pText = fmt.Sprintf("p_gof %.3f", r.Bootstrap.P)
		if r.Bootstrap.P < sc.MinP {
			why = append(why, fmt.Sprintf("p_gof %.3f < %.2f", r.Bootstrap.P, sc.MinP))
		}
	}
	sc.Pass = len(why) == 0
	if sc.Pass {
		r.Verdict = fmt.Sprintf("passes the tail screen: power-law-compatible tail above x_min=%d (α̂=%.2f, n_tail=%d, %s)",
			pl.XMin, pl.Alpha, pl.NTail, pText)
	} else {
		sc.Reason = strings.Join(why, ", ")
		r.Verdict = fmt.Sprintf("fails the tail screen (%s): no power-law claim above x_min=%d (α̂=%.2f)", sc.Reason, pl.XMin, pl.Alpha)
	}
	c := r.Comparisons[0]
	if c.Reason != "" {
		r.Verdict += fmt.Sprintf("; truncated power law vs log-normal undecided (%s)", c.Reason)
		return
	}
	switch c.Favors {
	case "truncated_power_law":
		r.Verdict += fmt.Sprintf("; truncated power law favoured over log-normal (LR %.2f, p=%.3f)", c.Statistic, c.P)
	case "log_normal":
		r.Verdict += fmt.Sprintf("; log-normal favoured over truncated power law (LR %.2f, p=%.3f)", c.Statistic, c.P)
	default:
		r.Verdict += fmt.Sprintf("; truncated power law vs log-normal undecided (LR %.2f, p=%.3f)", c.Statistic, c.P)
	}
}

// simResult is one bootstrap simulation's re-estimate.
type simResult struct {
	ks    float64
	xmin  int64
	alpha float64
	ok    bool
}

func bootstrap(s *sample, fit plFit, opt Options) (*Bootstrap, error) {
	// Values below x_min, one per observation, for resampling.
	var lower []int64
	for i := 0; i < fit.j; i++ {
		for k := int64(0); k < s.f[i]; k++ {
			lower = append(lower, s.v[i])
		}
	}
	smp := newPLSampler(fit.xmin, fit.alpha)
	n := int(s.n)
	tailProp := float64(fit.nTail) / float64(s.n)
	workers := opt.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, opt.Sims)
	res := make([]simResult, opt.Sims)
	var next atomic.Int64
	done := make(chan struct{}, opt.Sims)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]int64, n)
			for {
				i := int(next.Add(1) - 1)
				if i >= opt.Sims {
					return
				}
				rng := rand.New(rand.NewPCG(opt.Seed, uint64(i)+1))
				for k := range buf {
					if rng.Float64() > tailProp {
						buf[k] = lower[rng.IntN(len(lower))]
					} else {
						buf[k] = smp.draw(rng)
					}
				}
				ss := newSample(buf)
				f, ok := ss.fitPowerLaw(opt.XMax, opt.MaxCandidates)
				res[i] = simResult{ks: f.ks, xmin: f.xmin, alpha: f.alpha, ok: ok}
				done <- struct{}{}
			}
		}()
	}
	for d := 1; d <= opt.Sims; d++ {
		<-done
		if opt.Progress != nil {
			opt.Progress(d, opt.Sims)
		}
	}
	wg.Wait()
	b := &Bootstrap{Sims: opt.Sims, Seed: opt.Seed}
	hits, good := 0, 0
	for _, r := range res {
		if !r.ok {
			b.Failed++
			continue
		}
		good++
		if r.ks >= fit.ks {
			hits++
		}
		b.MeanXMin += float64(r.xmin)
		b.MeanAlpha += r.alpha
	}
	b.P = float64(hits) / float64(opt.Sims)
	if good > 0 {
		b.MeanXMin /= float64(good)
		b.MeanAlpha /= float64(good)
	}
	return b, nil
}
