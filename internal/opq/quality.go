package opq

import (
	"fmt"
	"math"

	"github.com/wmzip/wmzip/internal/gemm"
)

// Quality is how closely reconstructions follow the vectors they stand
// for, per vector and averaged: the squared error relative to the
// vector's squared norm, and the cosine similarity. A zero vector counts
// as distortion 0 and cosine 1 when its reconstruction is zero too, and
// as 1 and 0 otherwise.
type Quality struct {
	Vectors int64   // vectors compared
	SumErr  float64 // Σ ‖x − x̂‖² / ‖x‖²
	SumCos  float64 // Σ x·x̂ / (‖x‖·‖x̂‖)
}

// Distortion is the mean relative squared error, 0 without vectors.
func (q Quality) Distortion() float64 {
	if q.Vectors == 0 {
		return 0
	}
	return q.SumErr / float64(q.Vectors)
}

// Cosine is the mean cosine similarity, 1 without vectors.
func (q Quality) Cosine() float64 {
	if q.Vectors == 0 {
		return 1
	}
	return q.SumCos / float64(q.Vectors)
}

// Add returns the quality of both sets of vectors.
func (q Quality) Add(o Quality) Quality {
	return Quality{Vectors: q.Vectors + o.Vectors, SumErr: q.SumErr + o.SumErr, SumCos: q.SumCos + o.SumCos}
}

// compare adds to q one vector x against its reconstruction y, given
// ‖x‖², ‖y‖², x·y and ‖x − y‖².
func (q *Quality) compare(xx, yy, xy, e float64) {
	q.Vectors++
	switch {
	case xx > 0:
		q.SumErr += e / xx
	case yy > 0:
		q.SumErr++
	}
	switch {
	case xx > 0 && yy > 0:
		q.SumCos += xy / math.Sqrt(xx*yy)
	case xx == 0 && yy == 0:
		q.SumCos++
	}
}

// Compare returns the quality of the reconstructions rec of the vectors
// src, both n vectors of dim values, in float64 arithmetic.
func Compare(src, rec []float32, dim int) (Quality, error) {
	var q Quality
	if dim < 1 || len(src)%dim != 0 || len(rec) != len(src) {
		return q, fmt.Errorf("opq: compare: %d and %d values are not matching vectors of %d", len(src), len(rec), dim)
	}
	for i := 0; i < len(src); i += dim {
		var xx, yy, xy, e float64
		for k, a := range src[i : i+dim] {
			x, y := float64(a), float64(rec[i+k])
			xx += float64(x * x)
			yy += float64(y * y)
			xy += float64(x * y)
			e += float64((x - y) * (x - y))
		}
		q.compare(xx, yy, xy, e)
	}
	return q, nil
}

// Rotate returns the vectors ([n][Slots][Dim] for a per-slot quantizer)
// as Encode sees them: rotated, each sub-vector of subspace m then
// compared with the centroids of m. The rotation is orthogonal, so norms,
// distances and inner products are those of the vectors themselves, up to
// rounding.
func (q *Quantizer) Rotate(vectors []float32) ([]float32, error) {
	n, _, err := q.layout(len(vectors), "rotate")
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(vectors))
	return out, q.EncodeRotated(vectors, make([]uint16, n*len(q.books)*q.m), out)
}

// SlotError returns the relative squared error ‖y − ĉ‖² / ‖y‖² of the
// reconstruction ĉ of the M codes of slot s against the rotated slot
// vector y (1 for a zero y reconstructed as non-zero, 0 for both zero).
func (q *Quantizer) SlotError(s int, y []float32, codes []uint16) float64 {
	b := &q.books[s%len(q.books)]
	var yy, e, cc float64
	for m, c := range codes {
		cent := b.cent[(m*q.k+int(c))*q.dsub : (m*q.k+int(c)+1)*q.dsub]
		for t, a := range y[m*q.dsub : (m+1)*q.dsub] {
			x, z := float64(a), float64(cent[t])
			yy += float64(x * x)
			cc += float64(z * z)
			e += float64((x - z) * (x - z))
		}
	}
	switch {
	case yy > 0:
		return e / yy
	case cc > 0:
		return 1
	}
	return 0
}

// CompareRotated returns the quality of the reconstruction of codes
// against the vectors whose rotations (Rotate) are rotated, without
// rotating back: the concatenated centroids of the codes are compared
// with the rotated vectors. Codes must be below K.
func (q *Quantizer) CompareRotated(rotated []float32, codes []uint16) (Quality, error) {
	var qu Quality
	nb := len(q.books)
	if len(rotated)%(nb*q.dim) != 0 || len(codes)/(nb*q.m) != len(rotated)/(nb*q.dim) || len(codes)%(nb*q.m) != 0 {
		return qu, fmt.Errorf("opq: compare: %d values and %d codes do not match", len(rotated), len(codes))
	}
	for v := 0; v < len(codes)/q.m; v++ {
		b := &q.books[v%nb]
		y := rotated[v*q.dim : (v+1)*q.dim]
		var xx, yy, xy, e float64
		for m, c := range codes[v*q.m : (v+1)*q.m] {
			if int(c) >= q.k {
				return qu, fmt.Errorf("opq: compare: code %d is not below K=%d", c, q.k)
			}
			cent := b.cent[(m*q.k+int(c))*q.dsub : (m*q.k+int(c)+1)*q.dsub]
			for t, a := range y[m*q.dsub : (m+1)*q.dsub] {
				x, z := float64(a), float64(cent[t])
				xx += float64(x * x)
				yy += float64(z * z)
				xy += float64(x * z)
				e += float64((x - z) * (x - z))
			}
		}
		qu.compare(xx, yy, xy, e)
	}
	return qu, nil
}

// SlotDistortion returns the squared distance between the reconstructions
// of two code vectors of slot s (M codes each, below K), relative to the
// squared norm of the first's: the distortion retention adds to a slot
// whose lossless codes are truth when it decodes to recon.
func (q *Quantizer) SlotDistortion(s int, truth, recon []uint16) float64 {
	b := &q.books[s%len(q.books)]
	var nn, e float64
	for m := range q.m {
		ct := b.cent[(m*q.k+int(truth[m]))*q.dsub : (m*q.k+int(truth[m])+1)*q.dsub]
		cr := ct
		if recon[m] != truth[m] {
			cr = b.cent[(m*q.k+int(recon[m]))*q.dsub : (m*q.k+int(recon[m])+1)*q.dsub]
		}
		for t, a := range ct {
			x, y := float64(a), float64(cr[t])
			nn += float64(x * x)
			e += float64((x - y) * (x - y))
		}
	}
	switch {
	case nn > 0:
		return e / nn
	case e > 0:
		return 1
	}
	return 0
}

// SlotDistances writes to dst (M·K values) the squared distance between
// sub-vector m of the rotated slot vector y (of slot s) and centroid v of
// subspace m, at m·K+v, computed as Encode compares them: ‖y_m‖² plus the
// kernel's −2·y_m·c + ‖c‖², clamped at 0. The values are reproducible on
// one machine.
func (q *Quantizer) SlotDistances(y []float32, s int, dst []float32) error {
	b, err := q.set(s)
	if err != nil {
		return err
	}
	if len(y) != q.dim || len(dst) != q.m*q.k {
		return fmt.Errorf("opq: slot distances of %d values into %d, want %d and %d", len(y), len(dst), q.dim, q.m*q.k)
	}
	kPad := gemm.PadTo16(q.k)
	dots := make([]float32, kPad)
	for m := range q.m {
		ym := y[m*q.dsub : (m+1)*q.dsub]
		var yy float32
		for _, v := range ym {
			yy += float32(v * v)
		}
		gemm.Gemm(dots, kPad, ym, q.dsub, 1, b.cb[m], b.cnorm2[m])
		row := dst[m*q.k : (m+1)*q.k]
		for v := range row {
			row[v] = max(yy+dots[v], 0)
		}
	}
	return nil
}
