package ctmc

import (
	"math"
	"slices"
)

// CCDF returns the empirical complementary distribution of the positive
// counts: at each distinct value x[j], ascending, the share p[j] of counts
// at least x[j].
func CCDF(counts []int64) (x []int64, p []float64, err error) {
	pos := make([]int64, 0, len(counts))
	for _, c := range counts {
		if c > 0 {
			pos = append(pos, c)
		}
	}
	if len(pos) == 0 {
		return nil, nil, ErrNoCounts
	}
	s := newSample(pos)
	p = make([]float64, len(s.v))
	for j := range s.v {
		p[j] = float64(s.nGE[j]) / float64(s.n)
	}
	return s.v, p, nil
}

// Curve is a fitted tail's P(X ≥ x) over all n counts: its survival
// function above x_min scaled by the tail's share of the counts.
type Curve struct {
	Name string
	X    []float64
	P    []float64
}

// Curves returns the tails r fitted to n counts, on a log grid from the
// power law's x_min to xmax, each cut where it falls below half a count
// (0.5/n): the power law first, then the truncated power law, the
// log-normal and the exponential as r has them. Without a power-law fit
// there is none.
func (r *Report) Curves(n, xmax int64) []Curve {
	pl := r.PowerLaw
	if pl == nil || n < 1 {
		return nil
	}
	type tail struct {
		name string
		sf   func(x int64) float64 // P(X ≥ x | X ≥ x_min)
	}
	zmin := hurwitz(pl.Alpha, pl.XMin)
	tails := []tail{{"power law", func(x int64) float64 { return hurwitz(pl.Alpha, x) / zmin }}}
	if t := r.Truncated; t != nil {
		z0 := tplNorm(t.Alpha, t.Lambda, pl.XMin)
		tails = append(tails, tail{"truncated power law", func(x int64) float64 { return tplNorm(t.Alpha, t.Lambda, x) / z0 }})
	}
	if l := r.LogNormal; l != nil && l.Degenerate {
		tails = append(tails, tail{"log-normal (degenerate: power law)", func(x int64) float64 {
			return math.Pow((float64(x)-0.5)/(float64(pl.XMin)-0.5), 1-l.Alpha)
		}})
	} else if l != nil {
		l0 := logSurvStd((math.Log(float64(pl.XMin)-0.5) - l.Mu) / l.Sigma)
		tails = append(tails, tail{"log-normal", func(x int64) float64 {
			return math.Exp(logSurvStd((math.Log(float64(x)-0.5)-l.Mu)/l.Sigma) - l0)
		}})
	}
	if e := r.Exponential; e != nil {
		tails = append(tails, tail{"exponential", func(x int64) float64 {
			return math.Exp(-e.Lambda * float64(x-pl.XMin))
		}})
	}
	grid := logGrid(pl.XMin, xmax, 80)
	floor := 0.5 / float64(n)
	var out []Curve
	for _, t := range tails {
		c := Curve{Name: t.name}
		for _, g := range grid {
			y := pl.TailShare * t.sf(g)
			if !(y >= floor) || math.IsInf(y, 0) {
				break
			}
			c.X, c.P = append(c.X, float64(g)), append(c.P, y)
		}
		out = append(out, c)
	}
	return out
}

// logGrid returns up to n distinct integers from lo to hi, log-spaced.
func logGrid(lo, hi int64, n int) []int64 {
	if hi < lo {
		return nil
	}
	var g []int64
	a, b := math.Log(float64(lo)), math.Log(float64(hi))
	for i := 0; i <= n; i++ {
		v := int64(math.Round(math.Exp(a + (b-a)*float64(i)/float64(n))))
		if len(g) == 0 || v > g[len(g)-1] {
			g = append(g, v)
		}
	}
	return slices.Compact(g)
}
