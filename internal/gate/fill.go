package gate

import (
	"math/bits"

	"github.com/wmzip/wmzip/internal/rans"
	"github.com/wmzip/wmzip/internal/wm"
)

// Weak reports whether a one-step prediction whose modal frequency is f at
// precision prec is weak: its modal value is more likely wrong than right
// (2f < 2^prec). Under container version 4 an omitted coordinate of a weak
// prediction takes its fill (Fill), and the rule weighs the fill's
// expected distance (SPEC.md 5.2), unless the gate has SearchFill.
func Weak(f uint32, prec uint) bool { return f < 1<<(prec-1) }

// ExpectedDistance returns E(c) = Σ_v f_v · D(c, v) for coordinate j,
// the frequencies f_v of a cumulative table cum of precision prec: 2^prec
// times the mean distance of c from the value under the table. It is
// below 2^32, the frequencies summing to 2^prec ≤ 2^16 and distances being
// below 2^16. Under uniform distances it is (2^prec − f_c)·UnitDistance.
func (p *Params) ExpectedDistance(j int, cum []uint16, prec uint, c uint16) uint32 {
	if p.Dist == nil {
		return (uint32(1)<<prec - rans.Freq(cum, int(c), prec)) * UnitDistance
	}
	return expDist(p.Dist[p.tableOf(j)], cum, prec, c)
}

// expDist is ExpectedDistance with distance table d.
func expDist(d []uint16, cum []uint16, prec uint, c uint16) uint32 {
	idx, e := [1]uint16{c}, [1]uint32{}
	dotRows(cum, prec, d, idx[:], e[:])
	return e[0]
}

// RowFill returns the value r of least ExpectedDistance under the first
// fallback row f1 of coordinate j (precision 16), the lowest among equals:
// the value nearest on average to what new content at the coordinate is.
func (p *Params) RowFill(j int, f1 []uint16) uint16 {
	if p.Dist == nil {
		v, _ := rans.Mode(f1, 16)
		return uint16(v)
	}
	return rowFill(p.Dist[p.tableOf(j)], f1)
}

func rowFill(d []uint16, row []uint16) uint16 {
	var e []uint32
	if len(row) == len(allValues) {
		var buf [len(allValues)]uint32
		e = buf[:]
		dotRows(row, 16, d, allValues[:], e)
	} else {
		idx := make([]uint16, len(row))
		for c := range idx {
			idx[c] = uint16(c)
		}
		e = make([]uint32, len(row))
		dotRows(row, 16, d, idx, e)
	}
	best := 0
	for c, x := range e {
		if x < e[best] {
			best = c
		}
	}
	return uint16(best)
}

// Fill returns the value an omitted coordinate j of a weak prediction takes
// (SPEC.md 5.2, step 3), and its expected distance: the row fill r of its
// first fallback row f1 if E(r) < E(v̂) under the prediction's table cum
// (of the model's precision), else its modal value v̂.
func (p *Params) Fill(j int, cum, f1 []uint16) (uint16, uint32) {
	v, f := rans.Mode(cum, p.Precision)
	if p.Dist == nil {
		return uint16(v), (uint32(1)<<p.Precision - f) * UnitDistance
	}
	return p.fillOf(j, cum, uint16(v), p.RowFill(j, f1))
}

// fillOf is Fill given the modal value v and the row fill r, for
// parameters with distance tables.
func (p *Params) fillOf(j int, cum []uint16, v, r uint16) (uint16, uint32) {
	return fillWith(p.Dist[p.tableOf(j)], cum, p.Precision, v, r)
}

// SpreadFill returns the value an omitted coordinate j of a one-step
// prediction takes under SearchFill (SPEC.md 5.2): with V(c) the mean
// distance of code c from the others (the impact of step 6) and Ē =
// Σ_v f_v·V(v) over the prediction's table cum (of the model's precision
// P), the value c of frequency f_c ≥ F/16 (F that of the modal value v)
// whose 2^P·V(c) is nearest Ē; on ties v if it is among them, else the
// lowest. The fill is then as far from the other codes as a value drawn
// from the prediction is on average, not nearer the centre; under uniform
// distances it is v.
func (p *Params) SpreadFill(j int, cum []uint16, v uint16, f uint32) uint16 {
	if p.Dist == nil {
		return v
	}
	return p.spreadFill(j, cum, v, f)
}

// spreadFill is SpreadFill with distance tables.
func (p *Params) spreadFill(j int, cum []uint16, v uint16, f uint32) uint16 {
	mean := p.mean[p.tab[j]]
	prec := p.Precision
	var e uint64 // Σ f_c·V(c) < 2^P·2^16
	for c := range cum {
		e += uint64(rans.Freq(cum, c, prec)) * uint64(mean[c])
	}
	off := func(c int) uint64 {
		x := uint64(mean[c]) << prec
		if x < e {
			return e - x
		}
		return x - e
	}
	best, bd := v, off(int(v))
	for c := range cum {
		if 16*rans.Freq(cum, c, prec) < f {
			continue
		}
		if d := off(c); d < bd {
			best, bd = uint16(c), d
		}
	}
	return best
}

// A Decider applies a Rule to the coordinates of one coder. The row fills
// it finds (a row recurs by context) are kept for all deciders of the
// rule's parameters.
// It is not safe for concurrent use; each coder has its own.
type Decider struct {
	p      *Params
	lambda uint32
	prec   uint
	half   uint32    // 2^(P−1): a one-step prediction below is weak
	modal  bool      // the bins are on lg(2^P − F)
	search bool      // SearchFill
	lgK1   uint32    // lg(K − 1)
	fills  *rowFills // of the model last met, nil before

	// p's fields, read in place.
	binShift uint32
	lastBin  uint32
	binErr   []uint32
	coordErr []uint32
	weights  []uint16
	mean     [][]uint32 // nil: uniform distances
	tab      []uint16
}

// NewDecider returns a Decider of rule r.
func (r *Rule) NewDecider() *Decider {
	p := r.p
	if p.memo == nil {
		// Parameters not prepared: a prepared copy.
		q := *p
		q.Prepare()
		p = &q
	}
	d := &Decider{p: p, lambda: r.lambda, prec: p.Precision, half: 1 << (p.Precision - 1), modal: p.Axis == AxisModal, search: p.SearchFill,
		binShift: uint32(p.BinShift), lastBin: uint32(len(p.BinErr) - 1), binErr: p.BinErr, coordErr: p.CoordErr,
		lgK1: r.lgK1, weights: p.Weights, mean: p.mean, tab: p.tab}
	return d
}

// Decide is the retention rule of container version 4 for coordinate j,
// whose prediction pr holds (after Predict): it reports whether the value
// is coded and, if not, the value it takes (SPEC.md 5.2). Under SearchFill
// it is Retain, an omitted one-step prediction taking its SpreadFill.
//
// It is Rule.retain and the weak rule written out in one body, the row
// fills' memo read in place: the coder asks it of every coordinate not
// copied whole.
func (d *Decider) Decide(j int, pr *wm.Predictor) (coded bool, fill uint16) {
	v, f := pr.ModalFreq()
	_, hit := pr.Prediction()
	h, lgR := twoStepH(f, d.prec, d.lgK1)
	w := uint32(WeightOne)
	if ws := d.weights; ws != nil {
		w = uint32(ws[j])
	}
	if hit != 0 || f >= d.half || d.search {
		// ê·V against H (SPEC.md 5.2, steps 4 to 8). H = 0 (never, as F <
		// 2^P) keeps the coordinate in keep itself, whatever ê and V.
		key := h
		if d.modal {
			key = lgR
		}
		e := d.binErr[min(key>>d.binShift, d.lastBin)]
		if e == NoEstimate {
			e = d.coordErr[j]
		}
		V := uint32(UnitDistance)
		if d.mean != nil {
			V = d.mean[d.tab[j]][v]
		}
		if keepIt := keep(d.lambda, e, V, w, h); keepIt || hit != 0 || !d.search || d.mean == nil {
			return keepIt, v
		}
		return false, d.p.spreadFill(j, pr.Table(), v, f)
	}
	if d.mean == nil {
		// Uniform distances: the modal value is nearest.
		return keepWeak(d.lambda, (uint32(1)<<d.prec-f)*UnitDistance, w, h, d.prec), v
	}
	t := d.tab[j]
	key, f1 := pr.Row()
	c := d.fills
	if m := pr.Model(); c == nil || c.m != m {
		c = d.p.rowFillsOf(m)
		d.fills = c
	}
	r, ok := uint16(0), false
	if key < 1<<32-1 {
		k := fillTag(key, t)
		s := c.set(key, t)
		for i := range s {
			if x := s[i].Load(); x&^0xFFFF == k {
				r, ok = uint16(x), true
				break
			}
		}
	}
	if !ok {
		r = c.add(d.p, key, t, f1)
	}
	fv, e := fillWith(d.p.Dist[t], pr.Table(), d.prec, v, r)
	return keepWeak(d.lambda, e, w, h, d.prec), fv
}

// keepWeak is the comparison of a weak prediction, λ·E·ω ≥ H·2^(32+P):
// λ Q16, E the fill's expected distance times 2^P, ω Q8, H Q8.
func keepWeak(lambda, e, w, h uint32, prec uint) bool {
	hi, lo := bits.Mul64(uint64(lambda)*uint64(e), uint64(w))
	return hi != 0 || lo >= uint64(h)<<(32+prec)
}

// fillWith is fillOf with the coordinate's distance table d: the
// expected distances of v and r under cum, in one pass.
func fillWith(d []uint16, cum []uint16, prec uint, v, r uint16) (uint16, uint32) {
	idx, e := [2]uint16{v, r}, [2]uint32{}
	n := 2
	if r == v {
		n = 1
	}
	if useAVX2 && len(cum) == 64 && len(d) >= 64*64 && v < 64 && r < 64 {
		dotRows64AVX2(&cum[0], uint32(1)<<prec, &d[0], &idx[0], n, &e[0])
	} else {
		dotRows(cum, prec, d, idx[:n], e[:n])
	}
	if e[1] < e[0] && n == 2 {
		return r, e[1]
	}
	return v, e[0]
}
