package testkit

import (
	"math"
	"math/rand/v2"
)

// Vectors for the quantizer's tests (packages opq and train).

// Planted returns n vectors of dim whose rotated sub-vectors (M subspaces,
// under a random orthogonal rotation) are one of k planted centers plus
// Gaussian noise of deviation sigma, and the planted labels (n x M).
func Planted(seed uint64, n, dim, m, k int, sigma float64, rotated bool) ([]float32, []int) {
	r := rand.New(rand.NewPCG(seed, 99))
	dsub := dim / m
	centers := make([]float64, m*k*dsub)
	for i := range centers {
		centers[i] = r.NormFloat64()
	}
	rot := RandomOrthogonal(r, dim)
	if !rotated {
		clear(rot)
		for i := 0; i < dim; i++ {
			rot[i*dim+i] = 1
		}
	}
	x := make([]float32, n*dim)
	labels := make([]int, n*m)
	z := make([]float64, dim)
	for i := 0; i < n; i++ {
		for s := 0; s < m; s++ {
			c := r.IntN(k)
			labels[i*m+s] = c
			for j := 0; j < dsub; j++ {
				z[s*dsub+j] = centers[(s*k+c)*dsub+j] + sigma*r.NormFloat64()
			}
		}
		for a := 0; a < dim; a++ { // x = rotᵀ·z
			var v float64
			for b := 0; b < dim; b++ {
				v += rot[b*dim+a] * z[b]
			}
			x[i*dim+a] = float32(v)
		}
	}
	return x, labels
}

// RandomOrthogonal returns a dim x dim orthogonal matrix by Gram-Schmidt.
func RandomOrthogonal(r *rand.Rand, dim int) []float64 {
	q := make([]float64, dim*dim)
	for i := 0; i < dim; i++ {
		row := q[i*dim : (i+1)*dim]
		for j := range row {
			row[j] = r.NormFloat64()
		}
		for p := 0; p < i; p++ {
			prev := q[p*dim : (p+1)*dim]
			var d float64
			for j := range row {
				d += row[j] * prev[j]
			}
			for j := range row {
				row[j] -= d * prev[j]
			}
		}
		var n float64
		for _, v := range row {
			n += v * v
		}
		n = math.Sqrt(n)
		for j := range row {
			row[j] /= n
		}
	}
	return q
}
