package search

import (
	"math"
	"math/bits"
)

// table is one query's asymmetric distance table in integers: n subspaces
// of k entries each. A stored vector's distance is
//
//	Σ_j float[j][code_j] ≈ base + Σ_j tab[j·k + code_j] / scale
//
// where tab[j·k+c] = round((float[j][c] − min_c float[j][c]) · scale) and
// base = Σ_j min_c float[j][c]. scale is chosen so that the largest entry
// is 2^b − 1, with b = min(24, 32 − bitlen(n)): n entries always sum below
// 2^32, and one entry's rounding is at most 2^−(b+1) of the widest
// subspace's spread. Ranks are decided by the integer sums alone (ties by
// episode, step and slot), so they are the same on every machine; the
// float tables they come from are computed in float64 with every product
// rounded (opq.QueryTable), which every machine computes alike.
type table struct {
	tab   []uint32
	k, n  int
	base  float64
	scale float64 // integer units per squared distance unit (0: all entries equal)
}

// entryBits is b above for n subspaces.
func entryBits(n int) uint {
	return uint(min(24, 32-bits.Len(uint(n))))
}

// quantize builds the integer table of the float tables f: sets tables
// side by side, each of n subspaces of k entries, which vectors of n codes
// are scored against (the table of a vector's set). One origin per
// subspace, the least entry over every set, and one scale serve them all,
// so that sums over different sets compare.
func quantize(f []float64, sets, n, k int, dst *table) {
	dst.k, dst.n = k, n
	size := sets * n * k
	if cap(dst.tab) < size {
		dst.tab = make([]uint32, size)
	}
	dst.tab = dst.tab[:size]
	lo := make([]float64, n)
	spread := 0.0
	for j := range n {
		l, h := f[j*k], f[j*k]
		for s := range sets {
			for _, v := range f[(s*n+j)*k : (s*n+j+1)*k] {
				l, h = min(l, v), max(h, v)
			}
		}
		lo[j] = l
		spread = max(spread, h-l)
	}
	base := 0.0
	for _, l := range lo {
		base += l
	}
	dst.base = base
	top := float64(uint32(1)<<entryBits(n) - 1)
	dst.scale = 0
	if spread > 0 {
		dst.scale = top / spread
	}
	for s := range sets {
		for j := range n {
			o := (s*n + j) * k
			for c, v := range f[o : o+k] {
				dst.tab[o+c] = uint32(min(math.Round(float64((v-lo[j])*dst.scale)), top))
			}
		}
	}
}

// distance turns an integer sum back into a squared distance.
func (t *table) distance(sum uint64) float64 {
	if t.scale == 0 {
		return t.base
	}
	return t.base + float64(sum)/t.scale
}
