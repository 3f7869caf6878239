// Package ratecurve is the calibration of a codec coded by rate and
// distortion: the rate and distortion one quantizer and world model
// reached at a few λ on episodes held out of their training, kept in the
// model file's informative section RDCV (SPEC.md 3.2).
package ratecurve

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// Section is the tag of the model-file section that holds a Curve.
const Section = "RDCV"

// Point is one calibration point: the coder's λ (distortion units a
// bit, 0 for the quantizer's own codes), the mean distortion against the
// held-out source floats and the bits a state.
type Point struct {
	Lam  uint64
	Dist float64
	Bits float64
}

// Curve is one member's calibration, by ascending λ.
type Curve []Point

// Marshal returns the section data of cv.
func Marshal(cv Curve) []byte {
	b := make([]byte, 0, 8+24*len(cv))
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(cv)))
	b = binary.LittleEndian.AppendUint32(b, 0)
	for _, p := range cv {
		b = binary.LittleEndian.AppendUint64(b, p.Lam)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.Dist))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.Bits))
	}
	return b
}

// Unmarshal parses section data.
func Unmarshal(b []byte) (Curve, error) {
	le := binary.LittleEndian
	if len(b) < 8 || le.Uint16(b) != 1 || le.Uint32(b[4:]) != 0 || len(b) != 8+24*int(le.Uint16(b[2:])) {
		return nil, fmt.Errorf("section %s malformed", Section)
	}
	cv := make(Curve, le.Uint16(b[2:]))
	for i := range cv {
		o := 8 + 24*i
		cv[i] = Point{le.Uint64(b[o:]), math.Float64frombits(le.Uint64(b[o+8:])), math.Float64frombits(le.Uint64(b[o+16:]))}
		if !(cv[i].Dist >= 0) || !(cv[i].Bits >= 0) || math.IsInf(cv[i].Dist+cv[i].Bits, 0) {
			return nil, fmt.Errorf("section %s: point %d not finite", Section, i)
		}
	}
	return cv, nil
}

// byDist returns the points sorted by distortion.
func (cv Curve) byDist() Curve {
	s := append(Curve(nil), cv...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].Dist < s[j].Dist })
	return s
}

// BitsAt interpolates the bits a state at distortion d along the lower
// envelope of the points; +Inf below the least distortion or without
// points. Beyond the largest it keeps that point's bits.
func (cv Curve) BitsAt(d float64) float64 {
	s := cv.byDist()
	if len(s) == 0 || d < s[0].Dist {
		return math.Inf(1)
	}
	best := math.Inf(1)
	for i, p := range s {
		if p.Dist <= d {
			best = math.Min(best, p.Bits)
		}
		if i+1 < len(s) && p.Dist <= d && d < s[i+1].Dist {
			q := s[i+1]
			f := (d - p.Dist) / (q.Dist - p.Dist)
			best = math.Min(best, p.Bits+f*(q.Bits-p.Bits))
		}
	}
	return best
}

// LamAt interpolates, in log λ, the coder's λ that reaches distortion d;
// 0 when the curve does not tell.
func (cv Curve) LamAt(d float64) uint64 {
	s := cv.byDist()
	for i := 0; i+1 < len(s); i++ {
		p, q := s[i], s[i+1]
		if p.Dist <= d && d <= q.Dist && p.Lam > 0 && q.Lam > 0 && q.Dist > p.Dist {
			f := (d - p.Dist) / (q.Dist - p.Dist)
			return uint64(math.Exp2(math.Log2(float64(p.Lam)) + f*(math.Log2(float64(q.Lam))-math.Log2(float64(p.Lam)))))
		}
	}
	if len(s) > 0 && d > s[len(s)-1].Dist {
		return s[len(s)-1].Lam
	}
	return 0
}

// At interpolates, in log λ, the distortion and bits at the coder's λ
// lam, the last point's beyond the largest λ; ok is false without points.
func (cv Curve) At(lam uint64) (d, bits float64, ok bool) {
	if n := len(cv); n > 0 && lam >= cv[n-1].Lam {
		return cv[n-1].Dist, cv[n-1].Bits, true
	}
	for i := 0; i+1 < len(cv); i++ {
		p, q := cv[i], cv[i+1]
		if p.Lam <= lam && lam <= q.Lam {
			f := 0.0
			if q.Lam > p.Lam && p.Lam > 0 {
				f = (math.Log2(float64(lam)) - math.Log2(float64(p.Lam))) / (math.Log2(float64(q.Lam)) - math.Log2(float64(p.Lam)))
			} else if q.Lam > p.Lam {
				f = float64(lam) / float64(q.Lam)
			}
			return p.Dist + f*(q.Dist-p.Dist), p.Bits + f*(q.Bits-p.Bits), true
		}
	}
	return 0, 0, false
}
