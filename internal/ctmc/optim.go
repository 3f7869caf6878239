package ctmc

import "math"

// brentRoot finds a root of f in [a, b] where f(a) = fa and f(b) = fb have
// opposite signs (Brent 1973, "zeroin").
func brentRoot(f func(float64) float64, a, b, fa, fb, tol float64) float64 {
	c, fc := a, fa
	d := b - a
	e := d
	for iter := 0; iter < 100; iter++ {
		if (fb > 0) == (fc > 0) {
			c, fc = a, fa
			d = b - a
			e = d
		}
		if math.Abs(fc) < math.Abs(fb) {
			a, b, c = b, c, b
			fa, fb, fc = fb, fc, fb
		}
		tol1 := 2*2.2e-16*math.Abs(b) + tol/2
		xm := (c - b) / 2
		if math.Abs(xm) <= tol1 || fb == 0 {
			return b
		}
		if math.Abs(e) >= tol1 && math.Abs(fa) > math.Abs(fb) {
			var p, q float64
			s := fb / fa
			if a == c {
				p = 2 * xm * s
				q = 1 - s
			} else {
				q0 := fa / fc
				r := fb / fc
				p = s * (2*xm*q0*(q0-r) - (b-a)*(r-1))
				q = (q0 - 1) * (r - 1) * (s - 1)
			}
			if p > 0 {
				q = -q
			}
			p = math.Abs(p)
			if 2*p < math.Min(3*xm*q-math.Abs(tol1*q), math.Abs(e*q)) {
				e = d
				d = p / q
			} else {
				d = xm
				e = d
			}
		} else {
			d = xm
			e = d
		}
		a, fa = b, fb
		if math.Abs(d) > tol1 {
			b += d
		} else {
			b += math.Copysign(tol1, xm)
		}
		fb = f(b)
	}
	return b
}

// brentMin minimises f on [a, b] by golden-section search with parabolic
// steps (Brent 1973, "localmin"); it returns the abscissa and value.
func brentMin(f func(float64) float64, a, b, tol float64) (float64, float64) {
	const cgold = 0.3819660112501051
	x := a + cgold*(b-a)
	w, v := x, x
	fx := f(x)
	fw, fv := fx, fx
	var d, e float64
	for iter := 0; iter < 200; iter++ {
		xm := (a + b) / 2
		tol1 := tol*math.Abs(x) + 1e-12
		tol2 := 2 * tol1
		if math.Abs(x-xm) <= tol2-(b-a)/2 {
			break
		}
		golden := true
		if math.Abs(e) > tol1 {
			r := (x - w) * (fx - fv)
			q := (x - v) * (fx - fw)
			p := (x-v)*q - (x-w)*r
			q = 2 * (q - r)
			if q > 0 {
				p = -p
			}
			q = math.Abs(q)
			if math.Abs(p) < math.Abs(q*e/2) && p > q*(a-x) && p < q*(b-x) {
				e = d
				d = p / q
				u := x + d
				if u-a < tol2 || b-u < tol2 {
					d = math.Copysign(tol1, xm-x)
				}
				golden = false
			}
		}
		if golden {
			if x >= xm {
				e = a - x
			} else {
				e = b - x
			}
			d = cgold * e
		}
		u := x + d
		if math.Abs(d) < tol1 {
			u = x + math.Copysign(tol1, d)
		}
		fu := f(u)
		if fu <= fx {
			if u >= x {
				a = x
			} else {
				b = x
			}
			v, fv = w, fw
			w, fw = x, fx
			x, fx = u, fu
		} else {
			if u < x {
				a = u
			} else {
				b = u
			}
			if fu <= fw || w == x {
				v, fv = w, fw
				w, fw = u, fu
			} else if fu <= fv || v == x || v == w {
				v, fv = u, fu
			}
		}
	}
	return x, fx
}

// nelderMead minimises f from x0 with initial simplex steps step, until the
// spread of the simplex values falls below tol or maxEval evaluations.
func nelderMead(f func([]float64) float64, x0, step []float64, tol float64, maxEval int) ([]float64, float64) {
	n := len(x0)
	pts := make([][]float64, n+1)
	vals := make([]float64, n+1)
	for i := range pts {
		pts[i] = append([]float64(nil), x0...)
		if i > 0 {
			pts[i][i-1] += step[i-1]
		}
		vals[i] = f(pts[i])
	}
	evals := n + 1
	cen := make([]float64, n)
	try := func(t float64, hi int) ([]float64, float64) {
		p := make([]float64, n)
		for k := range p {
			p[k] = cen[k] + t*(pts[hi][k]-cen[k])
		}
		evals++
		return p, f(p)
	}
	for evals < maxEval {
		// Order: best first, worst last (insertion sort, n is tiny).
		for i := 1; i <= n; i++ {
			for j := i; j > 0 && vals[j] < vals[j-1]; j-- {
				vals[j], vals[j-1] = vals[j-1], vals[j]
				pts[j], pts[j-1] = pts[j-1], pts[j]
			}
		}
		if math.Abs(vals[n]-vals[0]) <= tol*(math.Abs(vals[0])+1e-300) {
			break
		}
		for k := range cen {
			cen[k] = 0
			for i := 0; i < n; i++ {
				cen[k] += pts[i][k] / float64(n)
			}
		}
		r, fr := try(-1, n)
		switch {
		case fr < vals[0]:
			if e, fe := try(-2, n); fe < fr {
				pts[n], vals[n] = e, fe
			} else {
				pts[n], vals[n] = r, fr
			}
		case fr < vals[n-1]:
			pts[n], vals[n] = r, fr
		default:
			t := 0.5
			if fr < vals[n] {
				t = -0.5
			}
			if c, fc := try(t, n); fc < math.Min(fr, vals[n]) {
				pts[n], vals[n] = c, fc
			} else {
				for i := 1; i <= n; i++ {
					for k := range pts[i] {
						pts[i][k] = pts[0][k] + 0.5*(pts[i][k]-pts[0][k])
					}
					vals[i] = f(pts[i])
					evals++
				}
			}
		}
	}
	best := 0
	for i := range vals {
		if vals[i] < vals[best] {
			best = i
		}
	}
	return pts[best], vals[best]
}
