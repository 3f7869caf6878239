package format

import (
	"fmt"
	"math"
	"slices"
)

// Where SearchLambda probes: the decisions, apart from the encoding they
// are made on, so that they can be replayed on recorded curves.

// prober makes the strategy's probes: the searcher, or recorded curves in
// experiments.
type prober interface {
	sampleAt(i int) (samplePoint, error)
	fileAt(i int, low bool) (fileProbe, error)
}

// strategy decides where to probe, knowing the file only through a prober.
type strategy struct {
	target  float64
	start   int // grid point where locate starts
	samples map[int]samplePoint
	files   map[int]fileProbe
}

func newStrategy(target float64) *strategy {
	return &strategy{target: target, start: 10 * searchStep, samples: map[int]samplePoint{}, files: map[int]fileProbe{}}
}

// sampleD returns the sample's point at grid i, probing it once.
func (st *strategy) sampleD(p prober, i int) (samplePoint, error) {
	if q, ok := st.samples[i]; ok {
		return q, nil
	}
	q, err := p.sampleAt(i)
	if err == nil {
		st.samples[i] = q
	}
	return q, err
}

// logD is the logarithm of a distortion relative to the target, floored
// so that encodes without distortion do not pin a secant.
func (st *strategy) logD(d float64) float64 { return math.Log(max(d, st.target/64) / st.target) }

// locate returns the grid point, within locateTol of the smallest, at
// which the sample's distortion is at most the target, assuming it falls
// with λ: galloping by octaves from the warm start, then bisection and
// regula falsi (Illinois) on the logarithm. It returns searchMax if the
// sample misses everywhere.
func (st *strategy) locate(p prober) (int, error) {
	var err error
	f := func(i int) float64 {
		if err != nil {
			return 0
		}
		var q samplePoint
		q, err = st.sampleD(p, i)
		return st.logD(q.d)
	}
	lo, hi, step := searchMin, searchMax, searchStep
	a, b := 0, st.start // bracket: f(a) > 0, f(b) ≤ 0
	fa, fb := 0.0, f(b)
	if fb <= 0 {
		for {
			if b <= lo || err != nil {
				return b, err
			}
			a = max(lo, b-step)
			step *= 2
			if fa = f(a); fa > 0 {
				break
			}
			b, fb = a, fa
		}
	} else {
		for {
			a, fa = b, fb
			if a >= hi || err != nil {
				return hi, err
			}
			b = min(hi, a+step)
			step *= 2
			if fb = f(b); fb <= 0 {
				break
			}
		}
	}
	side := 0
	for b-a > locateTol && err == nil {
		c := (a + b) / 2 // bisect wide brackets: the curve may be flat
		if b-a <= 2*searchStep {
			c = a + int(math.Round(float64(b-a)*fa/(fa-fb)))
		}
		c = min(max(c, a+1), b-1)
		if fc := f(c); fc <= 0 {
			b, fb = c, fc
			if side == 1 {
				fa /= 2
			}
			side = 1
		} else {
			a, fa = c, fc
			if side == -1 {
				fb /= 2
			}
			side = -1
		}
	}
	return b, err
}

// sampleSlope returns d ln D / d log2 λ of the sample around grid point i,
// fitted over an octave either side (probing half an octave away if there
// are too few points), within [slopeMin, slopeMax].
func (st *strategy) sampleSlope(p prober, i int) (float64, error) {
	var xs, ys []float64
	collect := func() {
		xs, ys = xs[:0], ys[:0]
		for j, q := range st.samples {
			if q.d > 0 && j >= i-searchStep && j <= i+searchStep {
				xs = append(xs, float64(j)/searchStep)
				ys = append(ys, math.Log(q.d))
			}
		}
	}
	collect()
	if len(xs) < 2 || slices.Max(xs)-slices.Min(xs) < 0.5 {
		for _, j := range []int{i - searchStep/2, i + searchStep/2} {
			if _, err := st.sampleD(p, min(max(j, searchMin), searchMax)); err != nil {
				return 0, err
			}
		}
		collect()
	}
	s, ok := fit(xs, ys)
	if !ok {
		s = -1
	}
	return min(max(s, slopeMin), slopeMax), nil
}

// elasticity returns −d ln rate / d ln D of the sample around grid point
// i: a least-squares fit over its points within an octave, in [0, 4]; 1
// if there are fewer than three.
func (st *strategy) elasticity(i int) float64 {
	var xs, ys []float64
	for j, q := range st.samples {
		if q.d > 0 && q.rate > 0 && j >= i-searchStep && j <= i+searchStep {
			xs = append(xs, math.Log(q.d))
			ys = append(ys, math.Log(q.rate))
		}
	}
	s, ok := fit(xs, ys)
	if len(xs) < 3 || !ok {
		return 1
	}
	return min(max(-s, 0), 4)
}

// fit returns the least-squares slope of ys on xs.
func fit(xs, ys []float64) (float64, bool) {
	var mx, my, sxx, sxy float64
	for k := range xs {
		mx += xs[k] / float64(len(xs))
		my += ys[k] / float64(len(xs))
	}
	for k := range xs {
		sxx += (xs[k] - mx) * (xs[k] - mx)
		sxy += (xs[k] - mx) * (ys[k] - my)
	}
	if sxx == 0 {
		return 0, false
	}
	return sxy / sxx, true
}

// passes reports whether whole-file probe f met the target, or would
// have: a probe stopped far below it counts.
func (st *strategy) passes(f fileProbe) bool { return f.under || f.complete && f.d <= st.target }

// bracket returns the smallest grid point probed on the whole file that
// met the target (searchMax+1 if none) and the largest below it that
// missed (searchMin−1 if none).
func (st *strategy) bracket() (lo, hi int) {
	lo, hi = searchMin-1, searchMax+1
	for j, f := range st.files {
		if st.passes(f) && j < hi {
			hi = j
		}
	}
	for j, f := range st.files {
		if !st.passes(f) && j < hi && j > lo {
			lo = j
		}
	}
	return lo, hi
}

// rateGap returns how much more the encode at hi costs than the one at
// lo, over the states both coded, if that is at least half the file
// (+Inf otherwise: a prefix of the file may not show the difference).
func (st *strategy) rateGap(lo, hi int) float64 {
	a, b := st.files[lo].costs, st.files[hi].costs
	k := min(len(a), len(b))
	if k < checkpoints/2 || a[k-1] == 0 {
		return math.Inf(1)
	}
	return float64(b[k-1])/float64(a[k-1]) - 1
}

// run searches and returns the grid point of the smallest λ whose
// complete whole-file encode met the target.
func (st *strategy) run(p prober) (int, error) {
	i, err := st.locate(p)
	if err != nil {
		return 0, err
	}
	var order []int    // grid points probed on the whole file, in order
	after := 0         // whole-file encodes since one met the target, that one included
	finishing := false // re-probing the best, which stopped early, to the end
	for {
		f, err := p.fileAt(i, !finishing && len(order) < maxProbes-1)
		if err != nil {
			return 0, err
		}
		st.files[i] = f
		order = append(order, i)
		if f.complete {
			st.samples[i] = f.sample
		}
		if !st.passes(f) && i == searchMax {
			return 0, fmt.Errorf("%w: distortion %.4g at the largest λ exceeds %g", ErrNoLambda, f.d, st.target)
		}
		if after > 0 || st.passes(f) {
			after++
		}
		lo, hi := st.bracket()
		done := hi-lo <= 1 || len(order) >= maxProbes
		if hi <= searchMax {
			b := st.files[hi]
			// Rate falls as distortion rises, by the sample's elasticity:
			// stop when landing on the target would save too little.
			done = done || b.d > 0 && 1-math.Pow(st.target*(1-aim)/b.d, -st.elasticity(hi)) < worthRate ||
				after >= maxKept ||
				lo >= searchMin && st.rateGap(lo, hi) < worthRate
		}
		if done {
			if hi > searchMax {
				return 0, ErrNoLambda
			}
			if st.files[hi].complete {
				return hi, nil
			}
			i, finishing = hi, true
			continue
		}
		finishing = false
		if i, err = st.next(p, order, lo, hi); err != nil {
			return 0, err
		}
		if len(order) == maxProbes-1 && hi > searchMax {
			i = searchMax
		}
		if i <= lo || i >= hi {
			if hi > searchMax {
				return 0, ErrNoLambda
			}
			i, finishing = hi, !st.files[hi].complete
			if !finishing {
				return hi, nil
			}
		}
	}
}

// next returns the grid point of the next whole-file encode: by regula
// falsi in log distortion between the encodes either side of the target,
// or by a secant (from two encodes on one side, else the sample's slope)
// stepping, while far from the target, at least twice as far as the last
// step on that side.
func (st *strategy) next(p prober, order []int, lo, hi int) (int, error) {
	goal := math.Log(1 - aim)
	if !st.passes(st.files[order[len(order)-1]]) {
		goal = math.Log(1 - aimMiss)
	}
	at := func(i int) (float64, float64) { return float64(i) / searchStep, st.logD(st.files[i].d) }
	if lo >= searchMin && hi <= searchMax {
		xa, ya := at(lo)
		xb, yb := at(hi)
		x := (xa + xb) / 2
		if ya > yb {
			x = xa + (xb-xa)*(ya-goal)/(ya-yb)
		}
		// Keep a quarter of the bracket from either end, as a safeguard
		// against a curve that is not log-linear.
		c := int(math.Round(x * searchStep))
		q := max(1, (hi-lo)/4)
		return min(max(c, lo+q), hi-q), nil
	}
	// One side: the probes so far all missed, or all met the target.
	last := order[len(order)-1]
	var side []int
	for _, j := range order {
		if st.passes(st.files[j]) == st.passes(st.files[last]) {
			side = append(side, j)
		}
	}
	x, y := at(last)
	s := 0.0
	if len(side) >= 2 {
		j := side[len(side)-2]
		xj, yj := at(j)
		if xj != x {
			s = (y - yj) / (x - xj)
		}
		s = min(max(s, slopeMin), slopeMax)
	} else {
		var err error
		if s, err = st.sampleSlope(p, last); err != nil {
			return 0, err
		}
	}
	c := int(math.Round((x + (goal-y)/s) * searchStep))
	// Far from the target the slope is least reliable: gallop.
	if len(side) >= 2 && math.Abs(y) > math.Log(farOff) {
		prev := side[len(side)-1] - side[len(side)-2]
		if prev < 0 {
			prev = -prev
		}
		if d := c - last; d >= 0 {
			c = last + max(d, 2*prev)
		} else {
			c = last - max(-d, 2*prev)
		}
	}
	return min(max(c, searchMin), searchMax), nil
}
