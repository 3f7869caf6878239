package gate

import "math/bits"

// Stats are the quantities the rule reads from one predicted table.
type Stats struct {
	H     uint32 // entropy, 1/256 bit
	Modal uint16 // value of highest frequency, the lowest on ties
	FMax  uint32 // its frequency
}

// TableStats computes H_j and the modal value of a cumulative table of
// precision prec (SPEC.md, "Retention gate", step 1):
//
//	H = ⌊ Σ_v f_v · (256·prec − lg(f_v)) / 2^prec ⌋
func TableStats(cum []uint16, prec uint) Stats {
	top := uint32(1) << prec
	var st Stats
	var h uint64
	for v := range cum {
		var f uint32
		if v+1 < len(cum) {
			f = uint32(cum[v+1]) - uint32(cum[v])
		} else {
			f = top - uint32(cum[v])
		}
		if f == 0 {
			continue
		}
		h += uint64(f) * uint64(256*uint32(prec)-lg(f))
		if f > st.FMax {
			st.FMax, st.Modal = f, uint16(v)
		}
	}
	st.H = uint32(h >> prec)
	return st
}

// impact returns V_j: the expected distance from the modal value to the
// true one given that they differ, ⌊Σ_{v≠v̂} f_v·D(v̂,v) / Σ_{v≠v̂} f_v⌋, in
// distance units (UnitDistance for any error under uniform distances).
func (p *Params) impact(j int, cum []uint16, st Stats) uint32 {
	rest := uint64(1)<<p.Precision - uint64(st.FMax)
	if rest == 0 {
		return 0
	}
	if p.Dist == nil {
		return UnitDistance
	}
	row := p.table(j)[int(st.Modal)*p.Geom.K:][:len(cum)]
	top := uint32(1) << p.Precision
	var s uint64
	for v := range cum {
		var f uint32
		if v+1 < len(cum) {
			f = uint32(cum[v+1]) - uint32(cum[v])
		} else {
			f = top - uint32(cum[v])
		}
		s += uint64(f) * uint64(row[v])
	}
	return uint32(s / rest)
}

// binKey returns the quantity the bins of p are taken on, in 1/256 bit: the
// entropy H, or under AxisModal lg(2^P − F), the logarithm of the table's
// own probability that its modal value is wrong (2^P − F ≥ 1 when H > 0).
func (p *Params) binKey(st Stats) uint32 {
	if p.Axis == AxisModal {
		return lg(uint32(1)<<p.Precision - st.FMax)
	}
	return st.H
}

// errRate returns ê for coordinate j whose table has statistics st, Q16.
func (p *Params) errRate(j int, st Stats) uint32 {
	b := uint64(p.binKey(st) >> p.BinShift)
	if last := uint64(len(p.BinErr) - 1); b > last {
		b = last
	}
	if e := p.BinErr[b]; e != NoEstimate {
		return e
	}
	return p.CoordErr[j]
}

func (p *Params) weight(j int) uint32 {
	if p.Weights == nil {
		return WeightOne
	}
	return uint32(p.Weights[j])
}

// keep is the comparison λ·ê·V·w ≥ H, all fixed point: λ Q16, ê Q16
// (≤ 2^24), V Q16 (UnitDistance ≈ 1), w Q8, H Q8; λ·ê < 2^56 and V·w <
// 2^32, and their product is formed in 128 bits.
func keep(lambda, e, v, w, h uint32) bool {
	hi, lo := bits.Mul64(uint64(lambda)*uint64(e), uint64(v)*uint64(w))
	return hi != 0 || lo >= uint64(h)<<48
}

// Rule is the normative retention rule at one λ (16.16 fixed point). Its
// Retain method is safe for concurrent use.
type Rule struct {
	p      *Params
	lambda uint32
}

// Rule returns the retention rule of p at λ = lambda/65536. λ = 0xFFFFFFFF
// (lossless) is handled by the container, which then calls no rule.
func (p *Params) Rule(lambda uint32) *Rule { return &Rule{p: p, lambda: lambda} }

// Retain reports whether coordinate j, whose predicted cumulative table is
// cum, is stored. An omitted coordinate takes the table's modal value.
func (r *Rule) Retain(j int, cum []uint16) bool {
	p := r.p
	st := TableStats(cum, p.Precision)
	if st.H == 0 {
		return true // costs nothing to store
	}
	e := p.errRate(j, st)
	if e == 0 {
		return false
	}
	return keep(r.lambda, e, p.impact(j, cum, st), p.weight(j), st.H)
}

// Impact returns V_j, the expected distance given an error, for
// experiments and reports.
func (p *Params) Impact(j int, cum []uint16, st Stats) uint32 { return p.impact(j, cum, st) }
