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

// lnFit is a discrete log-normal fit.
type lnFit struct{ mu, sigma, logLik float64 }

func (t *tailStats) lnLogLik(mu, sigma float64) float64 {
	ll := 0.0
	for i, v := range t.vals {
		ll += float64(t.freq[i]) * lnPoint(v, t.xmin, mu, sigma)
	}
	return ll
}

// fitLogNormal maximises the discrete log-normal likelihood by Nelder–Mead
// over (μ, ln σ), started from the moments of ln x as poweRlaw does.
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
	// Restarts guard against Nelder–Mead stalling on a ridge: far tails
	// often want μ ≪ ln x_min with a large σ.
	start := []float64{mu0, math.Log(sd0)}
	for r := 0; r < 3; r++ {
		x, f := nelderMead(nll, start, []float64{0.5, 0.3}, 1e-12, 4000)
		if -f > best.logLik {
			best = lnFit{mu: x[0], sigma: math.Exp(x[1]), logLik: -f}
		}
		start = []float64{x[0] - 0.5, x[1] + 0.3}
	}
	return best
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
