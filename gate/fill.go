package gate

import (
	"math/bits"

	"github.com/wmzip/wmzip/rans"
	"github.com/wmzip/wmzip/wm"
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
	K := len(cum)
	row := d[int(c)*K : (int(c)+1)*K]
	e, _ := rans.Dots(cum, prec, row, row)
	return e
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
	K := len(row)
	best, bestE := 0, uint32(1<<32-1)
	for c := 0; c < K; c += 2 {
		c2 := min(c+1, K-1)
		ea, eb := rans.Dots(row, 16, d[c*K:(c+1)*K], d[c2*K:(c2+1)*K])
		if ea < bestE {
			best, bestE = c, ea
		}
		if eb < bestE {
			best, bestE = c2, eb
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
	d := p.Dist[p.tableOf(j)]
	if r == v {
		return v, expDist(d, cum, p.Precision, v)
	}
	ev, er := expDist2(d, cum, p.Precision, v, r)
	if er < ev {
		return r, er
	}
	return v, ev
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

// expDist2 is expDist of two values at once.
func expDist2(d []uint16, cum []uint16, prec uint, a, b uint16) (uint32, uint32) {
	K := len(cum)
	return rans.Dots(cum, prec, d[int(a)*K:(int(a)+1)*K], d[int(b)*K:(int(b)+1)*K])
}

// A Decider applies a Rule to the coordinates of one coder, keeping the
// row fills it has found (a row recurs by context). It is not safe for
// concurrent use; each coder has its own.
type Decider struct {
	r     *Rule
	cache []fillEntry // direct-mapped by row key and distance table
}

type fillEntry struct {
	key uint64 // row key + 1, 0 when empty
	tab int32
	r   uint16
}

// fillCacheSize is the number of row fills a Decider keeps: the fallback
// rows of one model's contexts number a few thousand.
const fillCacheSize = 1 << 13

// NewDecider returns a Decider of rule r.
func (r *Rule) NewDecider() *Decider { return &Decider{r: r} }

// Decide is the retention rule of container version 4 for coordinate j,
// whose prediction pr holds (after Predict): it reports whether the value
// is coded and, if not, the value it takes (SPEC.md 5.2). Under SearchFill
// it is Retain, an omitted one-step prediction taking its SpreadFill.
func (d *Decider) Decide(j int, pr *wm.Predictor) (keep bool, fill uint16) {
	r := d.r
	p := r.p
	v, f := pr.ModalFreq()
	_, hit := pr.Prediction()
	if p.SearchFill {
		if r.retain(j, v, f) {
			return true, v
		}
		if hit != 0 || p.Dist == nil {
			return false, v
		}
		return false, p.spreadFill(j, pr.Table(), v, f)
	}
	if hit != 0 || !Weak(f, p.Precision) {
		return r.retain(j, v, f), v
	}
	var c uint16
	var e uint32
	if p.Dist == nil {
		c, e = v, (uint32(1)<<p.Precision-f)*UnitDistance // the modal value is nearest
	} else {
		c, e = p.fillOf(j, pr.Table(), v, d.rowFill(j, pr))
	}
	h, _ := twoStepH(f, p.Precision, r.lgK1)
	return keepWeak(r.lambda, e, p.weight(j), h, p.Precision), c
}

// keepWeak is the comparison of a weak prediction, λ·E·ω ≥ H·2^(32+P):
// λ Q16, E the fill's expected distance times 2^P, ω Q8, H Q8.
func keepWeak(lambda, e, w, h uint32, prec uint) bool {
	hi, lo := bits.Mul64(uint64(lambda)*uint64(e), uint64(w))
	return hi != 0 || lo >= uint64(h)<<(32+prec)
}

// rowFill returns RowFill of the current coordinate's row (p has distance
// tables), from the cache when the row was seen before.
func (d *Decider) rowFill(j int, pr *wm.Predictor) uint16 {
	p := d.r.p
	key, f1 := pr.Row()
	t := int32(p.tab[j])
	if d.cache == nil {
		d.cache = make([]fillEntry, fillCacheSize)
	}
	x := &d.cache[((key^uint64(t)<<40)*0x9E3779B97F4A7C15)>>51]
	if x.key != key+1 || x.tab != t {
		*x = fillEntry{key: key + 1, tab: t, r: rowFill(p.Dist[t], f1)}
	}
	return x.r
}
