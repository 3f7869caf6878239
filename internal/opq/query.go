package opq

import "fmt"

// Query-side helpers for asymmetric distance computation (ADC): a query
// vector is rotated once, then compared with every centroid of every
// subspace, and a stored vector's distance is the sum of one table entry
// per subspace. They compute in float64 with every product rounded before
// it is added and every sum in index order, so they give the same values
// on every machine (unlike Rotate, whose float32 kernel is exact on one
// machine only).

// set returns the rotation and codebooks of slot s: the shared set, or the
// slot's own for a per-slot quantizer.
func (q *Quantizer) set(s int) (*book, error) {
	if len(q.books) == 1 {
		if s < 0 {
			return nil, fmt.Errorf("opq: slot %d is negative", s)
		}
		return &q.books[0], nil
	}
	if s < 0 || s >= len(q.books) {
		return nil, fmt.Errorf("opq: slot %d out of range 0..%d", s, len(q.books)-1)
	}
	return &q.books[s], nil
}

// grow returns dst resized to n values, reallocated only when too small.
func grow(dst []float64, n int) []float64 {
	if cap(dst) < n {
		return make([]float64, n)
	}
	return dst[:n]
}

// RotateQuery returns the vector x (Dim values) rotated by the rotation
// slot s is quantized with, y = R·x, in float64. It writes to dst when it is
// large enough (dst may be nil).
func (q *Quantizer) RotateQuery(dst []float64, x []float32, s int) ([]float64, error) {
	b, err := q.set(s)
	if err != nil {
		return nil, err
	}
	if len(x) != q.dim {
		return nil, fmt.Errorf("opq: query of %d values, want %d", len(x), q.dim)
	}
	y := grow(dst, q.dim)
	if b.rot == nil {
		for i, v := range x {
			y[i] = float64(v)
		}
		return y, nil
	}
	for i := range y {
		row := b.rot[i*q.dim : (i+1)*q.dim]
		var sum float64
		for j, r := range row {
			sum += float64(float64(r) * float64(x[j]))
		}
		y[i] = sum
	}
	return y, nil
}

// RotatedCentroids returns the rotated reconstruction of one vector's codes
// (M values below K) in slot s: its centroids side by side, Dim values in
// float64, which is where codes stand in the rotated space. It writes to
// dst when it is large enough (dst may be nil).
func (q *Quantizer) RotatedCentroids(dst []float64, codes []uint16, s int) ([]float64, error) {
	b, err := q.set(s)
	if err != nil {
		return nil, err
	}
	if len(codes) != q.m {
		return nil, fmt.Errorf("opq: %d codes, want %d", len(codes), q.m)
	}
	y := grow(dst, q.dim)
	for m, c := range codes {
		if int(c) >= q.k {
			return nil, fmt.Errorf("opq: code %d at %d is not below K=%d", c, m, q.k)
		}
		cent := b.cent[(m*q.k+int(c))*q.dsub:]
		for j := range q.dsub {
			y[m*q.dsub+j] = float64(cent[j])
		}
	}
	return y, nil
}

// QueryTable returns the asymmetric distance table of a rotated query y
// (Dim values, as RotateQuery or RotatedCentroids give) against the
// codebooks of slot s: M·K values, entry m·K+c the squared Euclidean
// distance between y's sub-vector m and centroid c of subspace m. A stored
// vector's squared distance to the query, in the rotated space (the
// original one, the rotation being orthogonal), is Σ_m table[m·K+code_m].
// It writes to dst when it is large enough (dst may be nil).
func (q *Quantizer) QueryTable(dst []float64, y []float64, s int) ([]float64, error) {
	b, err := q.set(s)
	if err != nil {
		return nil, err
	}
	if len(y) != q.dim {
		return nil, fmt.Errorf("opq: rotated query of %d values, want %d", len(y), q.dim)
	}
	t := grow(dst, q.m*q.k)
	for m := range q.m {
		ym := y[m*q.dsub : (m+1)*q.dsub]
		for c := range q.k {
			cent := b.cent[(m*q.k+c)*q.dsub : (m*q.k+c+1)*q.dsub]
			var sum float64
			for j, v := range cent {
				d := ym[j] - float64(v)
				sum += float64(d * d)
			}
			t[m*q.k+c] = sum
		}
	}
	return t, nil
}
