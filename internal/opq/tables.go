package opq

import "math"

// maxTableEntries bounds the size DistanceTables will build.
const maxTableEntries = 1 << 28

// DistanceTables returns, for each subspace m (for each slot s and subspace
// m at index s*M+m when the quantizer is per-slot), a K*K table whose entry
// a*K+b is the squared Euclidean distance between centroids a and b of that
// subspace, in the rotated space, scaled and rounded to an integer:
//
//	t[m][a*K+b] = round(‖c[m][a] − c[m][b]‖² · (2^bits − 1) / D)
//
// where D is the largest squared distance over all tables, so every entry
// lies in [0, 2^bits − 1], one scale serves all subspaces (their entries
// can be added), the diagonal is 0 and each table is symmetric. Distances
// are computed in float64 with products rounded before summing. bits must
// be in 1..32; DistanceTables returns nil for other values, or when the
// tables would exceed 2^28 entries.
func (q *Quantizer) DistanceTables(bits uint) [][]uint32 {
	if bits < 1 || bits > 32 {
		return nil
	}
	nt := len(q.books) * q.m
	if int64(nt)*int64(q.k)*int64(q.k) > maxTableEntries {
		return nil
	}
	k, dsub := q.k, q.dsub
	raw := make([][]float64, nt)
	var maxD float64
	for bi := range q.books {
		for m := 0; m < q.m; m++ {
			c := q.books[bi].cent[m*k*dsub : (m+1)*k*dsub]
			t := make([]float64, k*k)
			for a := 0; a < k; a++ {
				for b := a + 1; b < k; b++ {
					var s float64
					for j := 0; j < dsub; j++ {
						d := float64(c[a*dsub+j]) - float64(c[b*dsub+j])
						s += float64(d * d)
					}
					t[a*k+b], t[b*k+a] = s, s
					maxD = math.Max(maxD, s)
				}
			}
			raw[bi*q.m+m] = t
		}
	}
	top := float64(uint64(1)<<bits - 1)
	scale := 0.0
	if maxD > 0 {
		scale = top / maxD
	}
	out := make([][]uint32, nt)
	for i, t := range raw {
		o := make([]uint32, len(t))
		for j, v := range t {
			o[j] = uint32(math.Min(math.Round(float64(v*scale)), top))
		}
		out[i] = o
	}
	return out
}
