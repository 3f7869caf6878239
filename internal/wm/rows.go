package wm

import (
	"github.com/wmzip/wmzip/internal/fixed"
	"github.com/wmzip/wmzip/internal/rans"
)

// fallRow is the fallback row of the current coordinate (SPEC.md 4.11):
// the first table's row f1 and, once mixed, the combined row fc, both
// cumulative at precision 16.
type fallRow struct {
	f     []uint16  // the row in use: f1, or fc once mixed
	f1    []uint16  // the first table's row
	r1    int       // its row number
	mixed bool      // f is fc (or there is no second table)
	pure  *rowModal // the modal value of f, when known
	cache rowCache  // combined rows by key
	w     []uint32  // the products Predictor.mix quantizes
}

// set selects row ctx of subspace mm of m's first table.
func (fr *fallRow) set(m *Model, mm, ctx int) {
	K := m.Geom.K
	fr.r1 = mm*m.fallCtx + ctx
	fr.f1 = m.fallCum[fr.r1*K : (fr.r1+1)*K]
	fr.f = fr.f1
	fr.pure = &m.fallModal[fr.r1]
	fr.mixed = m.fall2Ctx == 0
}

// fallRows sets the first fallback row of the current coordinate.
func (p *fullPredictor) fallRows() {
	ctx := 0
	if p.m.fallCtx > 1 {
		ctx = p.K
		if p.s > 0 {
			ctx = int(p.hist.codes[p.base+p.j-p.M])
		}
	}
	p.fall.set(p.m, p.mm, ctx)
}

// mix sets the fallback row of the current coordinate to the combined row
// of f1 and the second table's row, by the previous code of the slot: the
// rows combined geometrically at precision 16, w[v] = (G1[v]·G2[v]) >> 8,
// where G1 and G2 are the rows' powers (mixPowers), then Quantize. The
// shift keeps Σ w below 2^32 for K ≤ 256 without costing precision:
// Quantize gives every weight below Σ w / 2^16 the least frequency anyway.
// Powers peaking apart can leave every product below 2^8: a total of 0 is
// the uniform table.
func (p *fullPredictor) mix() {
	fr := &p.fall
	if fr.mixed {
		return
	}
	fr.mixed = true
	m, K := p.m, p.K
	ctx2 := K
	if p.mm > 0 {
		ctx2 = int(p.hist.codes[p.base+p.j-1])
	}
	key := uint64(fr.r1)*uint64(m.fall2Ctx) + uint64(ctx2)
	row, mod, ok := fr.cache.get(key)
	fr.pure = mod
	if !ok {
		r1, r2 := fr.r1*K, (p.mm*m.fall2Ctx+ctx2)*K
		rans.QuantizeProducts(m.pow1[r1:r1+K], m.pow2[r2:r2+K], 16, row, fr.w[:K])
	}
	fr.f = row
}

// mixPowers returns, for each row of K frequencies f, its power with
// exponent e (Q8) relative to its largest value: G[v] = W(max − l[v]),
// l[v] = (e·lg(f[v])) >> 8, capped at 65535 (the mode's), so that the
// product of two fits 32 bits.
func mixPowers(rows []uint16, k int, e uint16) []uint16 {
	out := make([]uint16, len(rows))
	l := make([]int32, k)
	for r := 0; r < len(rows); r += k {
		mx := int32(-1 << 30)
		for v, f := range rows[r : r+k] {
			l[v] = int32(e) * fixed.Lg(uint64(f)) >> 8
			mx = max(mx, l[v])
		}
		for v := range k {
			out[r+v] = uint16(min(fixed.W(mx-l[v]), 65535))
		}
	}
	return out
}
