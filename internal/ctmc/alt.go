package ctmc

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// The alternative tails, fitted by maximum likelihood on the same tail
// x ≥ x_min as the power law. All are discrete distributions on the
// integers x ≥ x_min:
//
//	truncated power law  p(x) ∝ x^-α e^{-λx}, λ ≥ 0
//	log-normal           p(x) ∝ S(x-½) − S(x+½), S the log-normal survival (as poweRlaw's dislnorm)
//	exponential          p(x) = (1−e^{−λ}) e^{−λ(x−x_min)} (as poweRlaw's disexp)

// tplNorm returns Z(α, λ) = Σ_{k≥xmin} k^-α e^{-λk}.
func tplNorm(alpha, lambda float64, xmin int64) float64 {
	if lambda == 0 {
		if alpha <= 1 {
			return math.Inf(1)
		}
		return hurwitz(alpha, xmin)
	}
	f := func(k float64) float64 { return math.Exp(-alpha*math.Log(k) - lambda*k) }
	if lambda > 0.1 {
		// Fast geometric decay: sum until the terms vanish.
		sum := 0.0
		for k := xmin; ; k++ {
			t := f(float64(k))
			sum += t
			if t <= 1e-17*sum || k-xmin > 100000 {
				return sum
			}
		}
	}
	m := xmin
	if m < 16 {
		m = 16
	}
	sum := 0.0
	for k := xmin; k < m; k++ {
		sum += f(float64(k))
	}
	// Euler–Maclaurin tail from m: ∫ + f/2 − f'/12 + f'''/720, with
	// f = x^-α e^{-λx}; the error term is O(λ^5 f(m)), negligible for λ ≤ 0.1.
	x := float64(m)
	fm := f(x)
	g1 := -alpha/x - lambda
	g2 := alpha / (x * x)
	g3 := -2 * alpha / (x * x * x)
	d1 := fm * g1
	d3 := fm * (g1*g1*g1 + 3*g1*g2 + g3)
	integral := math.Pow(lambda, alpha-1) * upperGamma(1-alpha, lambda*x)
	return sum + integral + fm/2 - d1/12 + d3/720
}

// upperGamma returns Γ(s, z) for real s and z > 0.
func upperGamma(s, z float64) float64 {
	if s > 0 {
		return math.Gamma(s) * mathext.GammaIncRegComp(s, z)
	}
	if z >= 1 {
		// Legendre continued fraction (modified Lentz), valid for z > s+1.
		const tiny = 1e-300
		b := z + 1 - s
		c := 1 / tiny
		d := 1 / b
		h := d
		for i := 1; i < 300; i++ {
			an := -float64(i) * (float64(i) - s)
			b += 2
			d = an*d + b
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = b + an/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			del := d * c
			h *= del
			if math.Abs(del-1) < 1e-15 {
				break
			}
		}
		return math.Exp(-z+s*math.Log(z)) * h
	}
	// Small z: recur down from s+k in (0, 1]: Γ(s,z) = (Γ(s+1,z) − z^s e^{−z})/s.
	k := math.Ceil(-s)
	if s+k == 0 {
		k++
	}
	t := s + k
	g := math.Gamma(t) * mathext.GammaIncRegComp(t, z)
	for t > s+0.5 {
		t--
		g = (g - math.Exp(-z+t*math.Log(z))) / t
	}
	return g
}

// tailStats are the sufficient statistics of a tail.
type tailStats struct {
	xmin       int64
	n          float64
	sumLog     float64
	sumX       float64
	vals, freq []int64 // distinct tail values and their frequencies
}

func (s *sample) tail(j int) tailStats {
	t := tailStats{xmin: s.v[j], n: float64(s.nGE[j]), sumLog: s.sLog[j], vals: s.v[j:], freq: s.f[j:]}
	for i, v := range t.vals {
		t.sumX += float64(v) * float64(t.freq[i])
	}
	return t
}

// tplFit is a truncated power-law fit.
type tplFit struct {
	alpha, lambda, logLik, z float64
}

func (t *tailStats) tplLogLik(alpha, lambda float64) float64 {
	z := tplNorm(alpha, lambda, t.xmin)
	if !(z > 0) || math.IsInf(z, 1) {
		return math.Inf(-1)
	}
	return -t.n*math.Log(z) - alpha*t.sumLog - lambda*t.sumX
}

// Search ranges of the truncated power law. Its log-likelihood is jointly
// concave in (α, λ) (ln Z is a log-sum-exp of linear functions), so the
// profile over λ is unimodal and nested one-dimensional searches find the
// maximum.
const (
	tplAlphaLo = -1.0
	tplAlphaHi = 20.0
	tplLogLamL = -14.0 // log10 λ
)

// fitTPL fits the truncated power law; plAlpha is the power-law estimate on
// the same tail, the λ → 0 limit.
func (t *tailStats) fitTPL(plAlpha float64) tplFit {
	profile := func(lambda float64) (float64, float64) {
		lo := tplAlphaLo
		if lambda == 0 {
			lo = alphaLo
		}
		a, nll := brentMin(func(a float64) float64 { return -t.tplLogLik(a, lambda) }, lo, tplAlphaHi, 1e-10)
		return a, -nll
	}
	mean := t.sumX / t.n
	logLamHi := math.Log10(10 / mean * 10)
	if logLamHi < 1 {
		logLamHi = 1
	}
	ll10, _ := brentMin(func(u float64) float64 {
		_, ll := profile(math.Pow(10, u))
		return -ll
	}, tplLogLamL, logLamHi, 1e-9)
	lam := math.Pow(10, ll10)
	a, ll := profile(lam)
	best := tplFit{alpha: a, lambda: lam, logLik: ll}
	// The λ = 0 boundary is the power law itself; a λ at the bottom of the
	// search range is that boundary.
	if pl := t.tplLogLik(plAlpha, 0); pl >= best.logLik-1e-9*math.Abs(pl) || ll10 < tplLogLamL+1 {
		best = tplFit{alpha: plAlpha, lambda: 0, logLik: pl}
	}
	best.z = tplNorm(best.alpha, best.lambda, t.xmin)
	return best
}

// logSurvStd returns ln P(Z > z) for a standard normal Z, accurate far into
// the upper tail.
func logSurvStd(z float64) float64 {
	if z < 30 {
		return math.Log(0.5 * math.Erfc(z/math.Sqrt2))
	}
	z2 := z * z
	return -z2/2 - math.Log(z*math.Sqrt(2*math.Pi)) + math.Log1p(-1/z2+3/(z2*z2))
}

// lnPoint returns ln P(X = x) of the discrete log-normal tail (poweRlaw's
// dislnorm): [S(x−½) − S(x+½)] / S(x_min−½).
func lnPoint(x, xmin int64, mu, sigma float64) float64 {
	za := (math.Log(float64(x)-0.5) - mu) / sigma
	zb := (math.Log(float64(x)+0.5) - mu) / sigma
	norm := logSurvStd((math.Log(float64(xmin)-0.5) - mu) / sigma)
	var lp float64
	if zb < 0 {
		// Both in the lower half: difference of CDFs keeps precision.
		lp = math.Log(0.5*math.Erfc(-zb/math.Sqrt2) - 0.5*math.Erfc(-za/math.Sqrt2))
	} else {
		la, lb := logSurvStd(za), logSurvStd(zb)
		lp = la + math.Log1p(-math.Exp(lb-la))
	}
	return lp - norm
}

// lnFit is a discrete log-normal fit. A degenerate fit has no maximum at
// finite (μ, σ): its likelihood rises toward μ → −∞ with σ² = −μ/(α−1),
// where the log-normal tail becomes the power law of exponent alpha (see
// lnLimPoint); mu and sigma are then −Inf and +Inf.
type lnFit struct {
	mu, sigma, logLik float64
	degenerate        bool
	alpha             float64 // a degenerate fit's limit exponent
}

func (t *tailStats) lnLogLik(mu, sigma float64) float64 {
	ll := 0.0
	for i, v := range t.vals {
		ll += float64(t.freq[i]) * lnPoint(v, t.xmin, mu, sigma)
	}
	return ll
}

// lnDegenerateTol is how little, relative to |ln L|, a finite log-normal
// may beat its power-law limit and still count as degenerate: the
// likelihood's numerical noise far out on the ridge, not evidence.
const lnDegenerateTol = 1e-6

// fitLogNormal maximises the discrete log-normal likelihood: by
// Nelder–Mead over (μ, ln σ), started from the moments of ln x as poweRlaw
// does, and along the ridge toward the power-law limit, where (μ, σ) are
// ill-conditioned and a search in (α = 1 − μ/σ², β = 1/(2σ²)) is not.
// When no finite fit beats the limit, the fit is degenerate.
func (t *tailStats) fitLogNormal() lnFit {
	mu0 := t.sumLog / t.n
	v := 0.0
	for i, x := range t.vals {
		d := math.Log(float64(x)) - mu0
		v += float64(t.freq[i]) * d * d
	}
	sd0 := math.Sqrt(v / t.n)
	if sd0 < 0.1 {
		sd0 = 0.1
	}
	nll := func(p []float64) float64 {
		ll := t.lnLogLik(p[0], math.Exp(p[1]))
		if math.IsNaN(ll) || math.IsInf(ll, 0) {
			return 1e300
		}
		return -ll
	}
	best := lnFit{mu: mu0, sigma: sd0, logLik: -nll([]float64{mu0, math.Log(sd0)})}
	// Restarts guard against Nelder–Mead stalling on the ridge.
	start := []float64{mu0, math.Log(sd0)}
	for r := 0; r < 3; r++ {
		x, f := nelderMead(nll, start, []float64{0.5, 0.3}, 1e-12, 4000)
		if -f > best.logLik {
			best = lnFit{mu: x[0], sigma: math.Exp(x[1]), logLik: -f}
		}
		start = []float64{x[0] - 0.5, x[1] + 0.3}
	}
	lim := t.fitLNLimit()
	if r := t.fitLNRidge(lim.alpha); r.logLik > best.logLik {
		best = r
	}
	if best.logLik-lim.logLik <= lnDegenerateTol*math.Max(1, math.Abs(lim.logLik)) {
		return lim
	}
	return best
}

// lnLimPoint returns ln P(X = x) of the log-normal tail's limit as μ → −∞
// with σ² = −μ/(α−1), α > 1: a continuous power law rounded to the
// integers, [(x−½)^{1−α} − (x+½)^{1−α}] / (x_min−½)^{1−α}.
func lnLimPoint(x, xmin int64, alpha float64) float64 {
	s := 1 - alpha
	lo := math.Log(float64(x) - 0.5)
	return s*(lo-math.Log(float64(xmin)-0.5)) + math.Log(-math.Expm1(s*(math.Log(float64(x)+0.5)-lo)))
}

// fitLNLimit fits the power-law limit of the log-normal tail.
func (t *tailStats) fitLNLimit() lnFit {
	nll := func(a float64) float64 {
		ll := 0.0
		for i, v := range t.vals {
			ll += float64(t.freq[i]) * lnLimPoint(v, t.xmin, a)
		}
		return -ll
	}
	a, f := brentMin(nll, alphaLo, alphaHi, 1e-10)
	return lnFit{mu: math.Inf(-1), sigma: math.Inf(1), logLik: -f, degenerate: true, alpha: a}
}

// Ridge search range, log10 β: σ from about 2,200 down to 0.2.
const (
	lnRidgeLo = -7.0
	lnRidgeHi = 1.0
)

// fitLNRidge maximises the log-normal likelihood in (α, log10 β), from the
// limit's exponent a0: a grid over β, then Nelder–Mead from its best point.
func (t *tailStats) fitLNRidge(a0 float64) lnFit {
	ll := func(a, u float64) float64 {
		if u < lnRidgeLo || u > lnRidgeHi {
			return math.Inf(-1)
		}
		beta := math.Pow(10, u)
		l := t.lnLogLik(-(a-1)/(2*beta), 1/math.Sqrt(2*beta))
		if math.IsNaN(l) {
			return math.Inf(-1)
		}
		return l
	}
	bestA, bestU, bestLL := a0, lnRidgeLo, math.Inf(-1)
	for u := lnRidgeLo; u <= lnRidgeHi; u += 0.5 {
		a, f := brentMin(func(a float64) float64 { return -ll(a, u) }, a0-5, a0+5, 1e-9)
		if -f > bestLL {
			bestA, bestU, bestLL = a, u, -f
		}
	}
	x, f := nelderMead(func(p []float64) float64 {
		l := ll(p[0], p[1])
		if math.IsInf(l, 0) {
			return 1e300
		}
		return -l
	}, []float64{bestA, bestU}, []float64{0.05, 0.25}, 1e-12, 2000)
	if -f > bestLL {
		bestA, bestU, bestLL = x[0], x[1], -f
	}
	beta := math.Pow(10, bestU)
	return lnFit{mu: -(bestA - 1) / (2 * beta), sigma: 1 / math.Sqrt(2*beta), logLik: bestLL}
}

// expFit is a discrete exponential fit (closed form).
type expFit struct{ lambda, logLik float64 }

func (t *tailStats) fitExp() expFit {
	m := t.sumX/t.n - float64(t.xmin)
	if m <= 0 {
		return expFit{lambda: math.Inf(1), logLik: 0}
	}
	lam := math.Log1p(1 / m)
	return expFit{lambda: lam, logLik: t.n*math.Log(-math.Expm1(-lam)) - lam*(t.sumX-t.n*float64(t.xmin))}
}
