package ctmc

import "math"

// Hurwitz zeta ζ(s, a) = Σ_{k≥0} (k+a)^-s and its derivative in s, by direct
// summation up to a shift m and the Euler–Maclaurin formula beyond it. The
// shift grows with s so that the Bernoulli series stays well inside its
// asymptotic range: relative error below 1e-13 for 1 < s ≤ 50, a ≥ 1
// (checked against gonum's mathext.Zeta in the tests).

// emCoef[j] = B_{2j+2} / (2j+2)!.
var emCoef = [...]float64{
	1.0 / 12,
	-1.0 / 720,
	1.0 / 30240,
	-1.0 / 1209600,
	1.0 / 47900160,
	-691.0 / 1307674368000,
	1.0 / 74724249600,
}

// logTable holds ln k for small k: the direct sums and the KS scans use
// these logarithms over and over.
var logTable = func() []float64 {
	t := make([]float64, 4096)
	for k := 1; k < len(t); k++ {
		t[k] = math.Log(float64(k))
	}
	return t
}()

func logInt(k int64) float64 {
	if k >= 0 && k < int64(len(logTable)) {
		return logTable[k]
	}
	return math.Log(float64(k))
}

// emShift returns the smallest start of the Euler–Maclaurin tail for s.
func emShift(s float64) int64 {
	m := int64(12)
	if t := int64(2*s) + 1; t > m {
		m = t
	}
	return m
}

// hurwitz returns ζ(s, a) for integer a ≥ 1 and s > 1.
func hurwitz(s float64, a int64) float64 {
	z, _ := hurwitzD(s, a, false)
	return z
}

// hurwitzD returns ζ(s, a) and, when deriv is set, L(s, a) = Σ ln(k+a)
// (k+a)^-s = -∂ζ/∂s, for integer a ≥ 1 and s > 1.
func hurwitzD(s float64, a int64, deriv bool) (z, l float64) {
	m := emShift(s)
	if a > m {
		m = a
	}
	for k := a; k < m; k++ {
		lk := logInt(k)
		t := math.Exp(-s * lk)
		z += t
		if deriv {
			l += lk * t
		}
	}
	lm := logInt(m)
	fm := float64(m)
	t := math.Exp(-s * lm) // m^-s
	// Integral and half-term.
	i0 := t * fm / (s - 1)
	z += i0 + t/2
	if deriv {
		// -d/ds of m^{1-s}/(s-1) and of m^-s/2.
		l += lm*i0 + i0/(s-1) + lm*t/2
	}
	p := s       // Pochhammer (s)_{2j+1}
	dp := 1.0    // its derivative in s
	pw := t / fm // m^{-s-2j-1}
	inv2 := 1 / (fm * fm)
	for j, c := range emCoef {
		term := c * p * pw
		z += term
		if deriv {
			l -= c * pw * (dp - lm*p)
		}
		a1 := s + float64(2*j+1)
		a2 := s + float64(2*j+2)
		dp = dp*a1*a2 + p*(a1+a2)
		p *= a1 * a2
		pw *= inv2
	}
	return z, l
}
