package wm

import (
	"math"

	"github.com/wmzip/wmzip/internal/rans"
)

// predict runs Predict at coordinate j and returns the ideal code length
// of v in bits under the coding it reports; when out is not nil it
// appends the prediction's bytes (top, hit and the table) to it.
func predict(p *Predictor, j int, v uint16, out *[]byte) float64 {
	b, _ := predictTable(p, j, v, out)
	return b
}

// predictTable is predict returning also the table used, or nil.
func predictTable(p *Predictor, j int, v uint16, out *[]byte) (float64, []uint16) {
	top, hit := p.Predict(j)
	scale := float64(uint32(1) << p.Precision())
	var bits float64
	if hit > 0 {
		if out != nil {
			*out = append(*out, byte(top), byte(top>>8), byte(hit), byte(hit>>8), byte(hit>>16))
		}
		if v == top {
			return -math.Log2(float64(hit) / scale), nil
		}
		bits = -math.Log2(1 - float64(hit)/scale)
	}
	cum := p.Table()
	if out != nil {
		for _, c := range cum {
			*out = append(*out, byte(c), byte(c>>8))
		}
	}
	return bits - math.Log2(float64(rans.Freq(cum, int(v), p.Precision()))/scale), cum
}
