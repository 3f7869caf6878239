package ctmc

import (
	"math"
	"math/rand/v2"
	"sort"
)

// plSampler draws from the discrete power law P(X = x) = x^-α / ζ(α, x_min),
// x ≥ x_min, by inversion: a CDF table covers the body, and values past the
// table are found from the continuous approximation, then corrected with
// Hurwitz zeta values so that the draw is exact.
type plSampler struct {
	xmin  int64
	alpha float64
	z     float64   // ζ(α, x_min)
	cdf   []float64 // cdf[i] = P(X ≤ x_min + i)
}

// plTableLen bounds the inversion table (10^5 entries, 800 KB).
const plTableLen = 100000

func newPLSampler(xmin int64, alpha float64) *plSampler {
	p := &plSampler{xmin: xmin, alpha: alpha, z: hurwitz(alpha, xmin)}
	c := 0.0
	for i := 0; i < plTableLen; i++ {
		c += math.Exp(-alpha*logInt(xmin+int64(i))) / p.z
		p.cdf = append(p.cdf, c)
		if 1-c < 1e-15 {
			break
		}
	}
	return p
}

// sf returns P(X ≥ x) for x ≥ x_min.
func (p *plSampler) sf(x int64) float64 { return hurwitz(p.alpha, x) / p.z }

// draw returns one variate.
func (p *plSampler) draw(r *rand.Rand) int64 {
	u := r.Float64()
	if u < p.cdf[len(p.cdf)-1] {
		i := sort.SearchFloat64s(p.cdf, u)
		for i < len(p.cdf) && p.cdf[i] < u { // guard against rounding
			i++
		}
		return p.xmin + int64(i)
	}
	// Past the table: the smallest x with P(X ≤ x) ≥ u, that is with
	// P(X ≥ x+1) ≤ 1-u. Start from the continuous approximation.
	q := 1 - u
	lo := p.xmin + int64(len(p.cdf)) - 1 // P(X ≥ lo+1) > q is known
	g := math.Floor((float64(p.xmin)-0.5)*math.Pow(q, -1/(p.alpha-1)) + 0.5)
	if g > 1e17 || math.IsNaN(g) {
		g = 1e17
	}
	hi := int64(g)
	if hi <= lo {
		hi = lo + 1
	}
	for p.sf(hi+1) > q && hi < 1e17 {
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 { // invariant: sf(lo+1) > q ≥ sf(hi+1)
		mid := lo + (hi-lo)/2
		if p.sf(mid+1) > q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// SamplePowerLaw returns n draws from the discrete power law with exponent
// alpha > 1 and lower bound xmin ≥ 1, reproducibly for a seed. It is the
// generator of the synthetic test counts.
func SamplePowerLaw(n int, xmin int64, alpha float64, seed uint64) []int64 {
	p := newPLSampler(xmin, alpha)
	r := rand.New(rand.NewPCG(seed, 0x63746d63)) // "ctmc"
	x := make([]int64, n)
	for i := range x {
		x[i] = p.draw(r)
	}
	return x
}
