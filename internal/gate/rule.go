package gate

import (
	"math/bits"

	"github.com/wmzip/wmzip/internal/fixed"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/rans"
	"github.com/wmzip/wmzip/internal/wm"
)

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
	var st Stats
	var h uint64
	for v := range cum {
		f := rans.Freq(cum, v, prec)
		if f == 0 {
			continue
		}
		h += uint64(f) * uint64(256*uint32(prec)-uint32(fixed.Lg(uint64(f))))
		if f > st.FMax {
			st.FMax, st.Modal = f, uint16(v)
		}
	}
	st.H = uint32(h >> prec)
	return st
}

// TwoStepStats computes the rule's statistics of a two-step prediction:
// the value top with frequency hit at precision prec, and K−1 others. The
// entropy is that of the first step plus, for the second, the entropy of
// K−1 equally likely values:
//
//	H = ⌊ (F·(256·P − lg F) + R·(256·P − lg R) + R·lg(K−1)) / 2^P ⌋, R = 2^P − F
func TwoStepStats(top uint16, hit uint32, prec uint, k int) Stats {
	h, _ := twoStepH(hit, prec, uint32(fixed.Lg(uint64(uint32(k-1)))))
	return Stats{H: h, Modal: top, FMax: hit}
}

// twoStepH returns TwoStepStats' entropy given lgK1 = lg(K−1), and
// lg(2^P − hit).
func twoStepH(hit uint32, prec uint, lgK1 uint32) (h, lgR uint32) {
	r := uint32(1)<<prec - hit
	lgR = uint32(fixed.Lg(uint64(r)))
	x := uint64(hit)*uint64(256*uint32(prec)-uint32(fixed.Lg(uint64(hit)))) + uint64(r)*uint64(256*uint32(prec)-lgR+lgK1)
	return uint32(x >> prec), lgR
}

// PredStats returns the rule's statistics of the prediction pr holds for
// its current coordinate: its modal value, that value's frequency, and the
// entropy TwoStepStats gives them (K−1 others equally likely), for one-step
// and two-step predictions alike.
func PredStats(pr *wm.Predictor) Stats {
	v, f := pr.ModalFreq()
	return TwoStepStats(v, f, pr.Precision(), pr.Model().Geom.K)
}

// impact returns V_j, the distance from the modal value to the true one
// given that they differ, in distance units: UnitDistance for any error
// under uniform distances, otherwise the mean distance of the modal value
// from the K−1 others. (The predicted table's own tail would weight near and
// far values by their probabilities; the calibration of ê absorbs the
// difference, and the mean costs nothing per coordinate.)
func (p *Params) impact(j int, st Stats) uint32 {
	switch {
	case uint64(st.FMax) == uint64(1)<<p.Precision:
		return 0
	case p.Dist == nil:
		return UnitDistance
	case p.mean != nil:
		return p.mean[p.tab[j]][st.Modal]
	}
	return p.meanDist(j, st.Modal)
}

// binKey returns the quantity the bins of p are taken on, in 1/256 bit: the
// entropy H, or under AxisModal lg(2^P − F), the logarithm of the table's
// own probability that its modal value is wrong (2^P − F ≥ 1 when H > 0).
func (p *Params) binKey(st Stats) uint32 {
	if p.Axis == AxisModal {
		return uint32(fixed.Lg(uint64(uint32(1)<<p.Precision - st.FMax)))
	}
	return st.H
}

// errRate returns ê for coordinate j whose table has statistics st, Q16.
func (p *Params) errRate(j int, st Stats) uint32 { return p.binErr(j, p.binKey(st)) }

// binErr returns ê for coordinate j whose bin key is key: its bin's
// estimate, or the coordinate's own where the bin has none.
func (p *Params) binErr(j int, key uint32) uint32 {
	b := min(uint64(key>>p.BinShift), uint64(len(p.BinErr)-1))
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
	lgK1   uint32 // lg(K − 1) of p's geometry
}

// Rule returns the retention rule of p at λ l. Lossless is handled by the
// container, which then calls no rule.
func (p *Params) Rule(l lambda.Lambda) *Rule {
	return &Rule{p: p, lambda: uint32(l), lgK1: uint32(fixed.Lg(uint64(uint32(max(p.Geom.K-1, 0)))))}
}

// Retain reports whether coordinate j, whose prediction pr holds (after
// Predict), is stored. An omitted coordinate takes the modal value. pr
// runs the model whose parameters r's are (its geometry and precision).
func (r *Rule) Retain(j int, pr *wm.Predictor) bool {
	v, f := pr.ModalFreq()
	return r.retain(j, v, f)
}

// retain is RetainStats(j, TwoStepStats(v, f, P, K)), P and K those of r's
// parameters: the coder asks it of every coordinate, and lg(2^P − f)
// serves both the entropy and the modal bin key.
func (r *Rule) retain(j int, v uint16, f uint32) bool {
	p := r.p
	h, lgR := twoStepH(f, p.Precision, r.lgK1)
	key := h
	if p.Axis == AxisModal {
		key = lgR
	}
	return r.decide(j, Stats{H: h, Modal: v, FMax: f}, key)
}

// RetainStats is Retain on the statistics of a prediction.
func (r *Rule) RetainStats(j int, st Stats) bool { return r.decide(j, st, r.p.binKey(st)) }

// decide is the rule on statistics st whose bin key (binKey) is key.
func (r *Rule) decide(j int, st Stats, key uint32) bool {
	p := r.p
	if st.H == 0 {
		return true // costs nothing to store
	}
	e := p.binErr(j, key)
	if e == 0 {
		return false
	}
	return keep(r.lambda, e, p.impact(j, st), p.weight(j), st.H)
}

// Impact returns V_j, the expected distance given an error, for
// experiments and reports.
func (p *Params) Impact(j int, st Stats) uint32 { return p.impact(j, st) }

// DistortionCost returns what reconstructing the codes truth of
// coordinates j0, j0+1, … as recon costs under the rule, in 1/256 bit:
// Σ min(limit, λ·w_j·d_j(recon_j, truth_j)), the quantity whose comparison
// with a coordinate's entropy decides its retention, each coordinate's
// term capped at limit (1/256 bit). An encoder weighs it against the bits
// an alternative costs.
func (r *Rule) DistortionCost(j0 int, recon, truth []uint16, limit uint64) uint64 {
	var s uint64
	for k, v := range truth {
		if recon[k] == v {
			continue
		}
		// λ Q16 · d Q16 · w Q8 is Q40 bits: shift by 32 for Q8. d·w <
		// 2^48, λ < 2^32.
		dw := uint64(r.p.Distance(j0+k, recon[k], v)) * uint64(r.p.weight(j0+k))
		hi, lo := bits.Mul64(uint64(r.lambda), dw)
		c := hi<<32 | lo>>32
		if hi>>32 != 0 || c > limit {
			c = limit
		}
		if s += c; s < c {
			return ^uint64(0)
		}
	}
	return s
}
