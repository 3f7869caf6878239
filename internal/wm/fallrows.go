package wm

import (
	"math/bits"

	"github.com/wmzip/wmzip/internal/rans"
)

// maxBetaQ bounds the smoothing of a derived fallback table (Q8, in
// observations): 2^24 is 65,536 observations, far beyond any useful value,
// and keeps every weight of fallbackRows below 2^64.
const maxBetaQ = 1 << 24

// fallEntriesFit reports whether a version-3 file of fileLen bytes may
// derive fallback tables of n entries: at most 2^16 + 64 per byte of the
// file, so that the header's M and K alone never size them. A writer whose
// tables would exceed it writes version 2.
func fallEntriesFit(n, fileLen int64) bool { return n <= 1<<16+64*fileLen }

// fallCounts counts the codes of the novel tiles of a store: per subspace m,
// context and value, where the context is, for kind ctxLeft, the code of
// subspace m in the previous slot (K in slot 0) and, for ctxPrev, the
// previous code of the same tile (K at subspace 0); with one context per
// subspace (nctx = 1) it is always 0. novel lists the tiles as
// p = state·S+slot, and tile(p) gives the codes of one.
func fallCounts(g Geometry, tile func(p int32) []uint16, novel []int32, kind, nctx int) []uint64 {
	K, M, S := g.K, g.M, g.S
	cnt := make([]uint64, M*nctx*K)
	for _, r := range novel {
		s := int(r) % S
		tl := tile(r)
		var left []uint16
		if kind == ctxLeft && s > 0 {
			left = tile(r - 1)
		}
		for m, v := range tl {
			ctx := 0
			if nctx > 1 {
				ctx = K
				if left != nil {
					ctx = int(left[m])
				} else if kind == ctxPrev && m > 0 {
					ctx = int(tl[m-1])
				}
			}
			cnt[(m*nctx+ctx)*K+int(v)]++
		}
	}
	return cnt
}

// fallbackRows turns counts [M][nctx][K] into rows of frequencies summing
// to 2^16: each row is the context's counts smoothed toward the subspace's
// marginal with betaQ/256 observations (SPEC.md 3.3), in integers only so
// that a decoder derives the same rows from the reference store.
func fallbackRows(g Geometry, cnt []uint64, nctx int, betaQ uint32) []uint16 {
	K, M := g.K, g.M
	out := make([]uint16, M*nctx*K)
	o := make([]uint64, K)
	pm := make([]uint64, K)
	nw := make([]uint64, K)
	w := make([]uint32, K)
	cum := make([]uint16, K)
	for m := range M {
		clear(o)
		var tot uint64
		for ctx := range nctx {
			for v, c := range cnt[(m*nctx+ctx)*K : (m*nctx+ctx+1)*K] {
				o[v] += c
				tot += c
			}
		}
		// The marginal (o[v] + 1/2)/(tot + K/2) in Q16.
		for v := range K {
			pm[v] = (2*o[v] + 1) << 16 / (2*tot + uint64(K))
		}
		for ctx := range nctx {
			row := cnt[(m*nctx+ctx)*K : (m*nctx+ctx+1)*K]
			var sum uint64
			for v, c := range row {
				nw[v] = c<<24 + uint64(betaQ)*pm[v]
				sum += nw[v]
			}
			sh := uint(0)
			if l := bits.Len64(sum); l > 32 {
				sh = uint(l - 32)
			}
			for v := range K {
				w[v] = uint32(nw[v] >> sh)
			}
			rans.QuantizeTrusted(w, 16, cum)
			f := out[(m*nctx+ctx)*K:]
			for v := range K {
				next := uint32(1 << 16)
				if v+1 < K {
					next = uint32(cum[v+1])
				}
				f[v] = uint16(next - uint32(cum[v]))
			}
		}
	}
	return out
}

// storeNovel lists the first occurrence of every distinct tile of the
// reference store (state·S+slot), in order: the dictionary's tiles.
func (m *Model) storeNovel() []int32 { return m.tileRep }

// deriveFallback computes the fallback tables of a version-3 model from its
// reference store: the counts of the dictionary tiles' codes, smoothed.
func (m *Model) deriveFallback() {
	g := m.Geom
	novel := m.storeNovel()
	tile := func(p int32) []uint16 {
		o := int(p) * g.M
		return m.refCodes[o : o+g.M]
	}
	m.fallback = fallbackRows(g, fallCounts(g, tile, novel, ctxLeft, m.fallCtx), m.fallCtx, m.fallBeta[0])
	m.fall2 = nil
	if m.fall2Ctx > 0 {
		m.fall2 = fallbackRows(g, fallCounts(g, tile, novel, ctxPrev, m.fall2Ctx), m.fall2Ctx, m.fallBeta[1])
	}
}
