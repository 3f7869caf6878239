package ctmc

import (
	"math"
	"slices"
)

// sample is a set of counts reduced to sorted distinct values and their
// frequencies, with suffix sums that make each candidate x_min O(1) to set up.
type sample struct {
	v    []int64   // distinct values, ascending
	f    []int64   // frequency of each value
	nGE  []int64   // nGE[j] = Σ_{i≥j} f[i]
	sLog []float64 // sLog[j] = Σ_{i≥j} f[i] ln v[i]
	n    int64
}

// newSample builds a sample from counts; x is sorted in place.
func newSample(x []int64) *sample {
	slices.Sort(x)
	s := &sample{n: int64(len(x))}
	for i := 0; i < len(x); {
		j := i + 1
		for j < len(x) && x[j] == x[i] {
			j++
		}
		s.v = append(s.v, x[i])
		s.f = append(s.f, int64(j-i))
		i = j
	}
	u := len(s.v)
	s.nGE = make([]int64, u+1)
	s.sLog = make([]float64, u+1)
	for j := u - 1; j >= 0; j-- {
		s.nGE[j] = s.nGE[j+1] + s.f[j]
		s.sLog[j] = s.sLog[j+1] + float64(s.f[j])*logInt(s.v[j])
	}
	return s
}

// index returns the position of the first distinct value ≥ x.
func (s *sample) index(x int64) int {
	j, _ := slices.BinarySearch(s.v, x)
	return j
}

// Power-law exponent search range. The lower end is the support limit of
// the discrete power law (α > 1); the upper end caps the estimate when every
// tail value sits at x_min.
const (
	alphaLo = 1 + 1e-7
	alphaHi = 50.0
)

// plMLE returns the discrete power-law MLE of α for the tail starting at
// distinct value j: the root of E_α[ln X] = mean ln x, found by Brent's
// method. E_α[ln X] decreases in α, so the root is unique.
func (s *sample) plMLE(j int) float64 {
	n := float64(s.nGE[j])
	target := s.sLog[j] / n
	xmin := s.v[j]
	h := func(a float64) float64 {
		z, l := hurwitzD(a, xmin, true)
		return l/z - target
	}
	hHi := h(alphaHi)
	if hHi >= 0 {
		return alphaHi
	}
	// Closed-form approximation (CSN eq. 3.7) brackets the root tightly.
	a0 := 1 + n/(s.sLog[j]-n*math.Log(float64(xmin)-0.5))
	lo, hi := alphaLo, alphaHi
	fLo, fHi := math.NaN(), hHi
	if a0 > lo && a0 < hi {
		for _, d := range []float64{0.05, 0.3} {
			l, u := math.Max(lo, a0-d), math.Min(hi, a0+d)
			fl, fu := h(l), h(u)
			if fl >= 0 && fu <= 0 {
				lo, hi, fLo, fHi = l, u, fl, fu
				break
			}
		}
	}
	if math.IsNaN(fLo) {
		fLo = h(lo)
		if fLo <= 0 {
			return lo
		}
	}
	return brentRoot(h, lo, hi, fLo, fHi, 1e-10)
}

// plLogLik is the log-likelihood of the tail from distinct value j under a
// discrete power law with exponent a.
func (s *sample) plLogLik(j int, a float64) float64 {
	return -float64(s.nGE[j])*math.Log(hurwitz(a, s.v[j])) - a*s.sLog[j]
}

// ksGapDirect is the widest gap between consecutive distinct values that
// the KS scan bridges by summing the probability mass term by term; wider
// gaps use two Hurwitz zeta values.
const ksGapDirect = 16

// plKS returns the Kolmogorov–Smirnov distance between the tail from
// distinct value j and the discrete power law (x_min = v[j], α = a), taken
// over every integer from x_min to the largest value ≤ xmax, with the data
// CDF normalised over the values ≤ xmax, as poweRlaw does. The scan stops as
// soon as the distance reaches bound (pass +Inf for the exact value): the
// x_min search only needs to know that a candidate cannot win.
func (s *sample) plKS(j int, a float64, xmax int64, bound float64) float64 {
	end := s.index(xmax + 1) // distinct values v[j:end] are ≤ xmax
	if end <= j {
		return math.Inf(1)
	}
	nk := float64(s.nGE[j] - s.nGE[end])
	xmin := s.v[j]
	z := hurwitz(a, xmin)
	invZ := 1 / z
	d := 0.0
	cdfData := 0.0
	cdfFit := 0.0 // model CDF at the previous distinct value
	prev := xmin - 1
	for i := j; i < end; i++ {
		x := s.v[i]
		// Model CDF at x-1 (the data CDF is still at its previous level).
		gap := x - prev - 1
		if gap > 0 {
			if gap <= ksGapDirect {
				for k := prev + 1; k < x; k++ {
					cdfFit += math.Exp(-a*logInt(k)) * invZ
				}
			} else {
				cdfFit = 1 - hurwitz(a, x)*invZ
			}
			if e := math.Abs(cdfData - cdfFit); e > d {
				d = e
			}
		}
		cdfFit += math.Exp(-a*logInt(x)) * invZ
		cdfData += float64(s.f[i]) / nk
		if e := math.Abs(cdfData - cdfFit); e > d {
			d = e
		}
		if d >= bound {
			return d
		}
		prev = x
	}
	return d
}

// plFit is a discrete power-law tail fit.
type plFit struct {
	j     int     // index of x_min among the distinct values
	xmin  int64   // x_min
	alpha float64 // α̂
	ks    float64 // KS distance at (x_min, α̂)
	nTail int64   // observations ≥ x_min
}

// fitPowerLaw chooses x_min by the smallest KS distance among the candidate
// distinct values (CSN 2009, §3.3), with α̂ by maximum likelihood at each.
// Candidates follow poweRlaw's estimate_xmin: every distinct value up to
// xmax, except the two largest (at least two distinct values must remain
// above x_min for a fit). maxCand > 0 keeps only the first maxCand
// candidates. Ties go to the smaller x_min. ok is false when there are
// fewer than three distinct values.
func (s *sample) fitPowerLaw(xmax int64, maxCand int) (best plFit, ok bool) {
	u := len(s.v)
	if u < 3 {
		return plFit{}, false
	}
	last := u - 3
	if e := s.index(xmax+1) - 1; e < last {
		last = e
	}
	if maxCand > 0 && last >= maxCand {
		last = maxCand - 1
	}
	best.ks = math.Inf(1)
	for j := 0; j <= last; j++ {
		a := s.plMLE(j)
		d := s.plKS(j, a, xmax, best.ks)
		if d < best.ks {
			best = plFit{j: j, xmin: s.v[j], alpha: a, ks: d, nTail: s.nGE[j]}
			ok = true
		}
	}
	return best, ok
}
