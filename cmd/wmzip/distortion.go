package main

import (
	"slices"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/internal/gate"
)

// codesDistortion returns the distortion of decoded codes got against the
// lossless reconstruction want (the source's codes), as the Writer
// measures it (WithDistortion): the mean over slot vectors of the squared
// distance between the two reconstructions over the squared norm of the
// lossless one, in the quantizer's space (without a quantizer, in the
// gate's distances over its mean slot norm, or the fraction of wrong
// codes); and the number of wrong codes. Only the states both hold are
// compared.
func codesDistortion(c *wmzlib.Codec, got, want []uint16) (rel float64, wrong int64) {
	g := c.Geometry()
	M := g.M
	q := c.Quantizer()
	got = got[:min(len(got), len(want))]
	p, perr := gate.FromModel(c.Model())
	var sum float64
	slots := len(got) / M
	for k := range slots {
		a, b := got[k*M:(k+1)*M], want[k*M:(k+1)*M]
		if slices.Equal(a, b) {
			continue
		}
		var d uint64
		for m := range a {
			if a[m] != b[m] {
				wrong++
				if perr == nil {
					d += uint64(p.Distance((k%g.S)*M+m, a[m], b[m]))
				} else {
					d += gate.UnitDistance
				}
			}
		}
		switch {
		case q != nil:
			sum += q.SlotDistortion(k%g.S, b, a)
		case perr == nil && p.Dist != nil && p.SlotNorm > 0:
			sum += float64(d) / float64(p.SlotNorm)
		default:
			sum += float64(d) / float64(uint64(M)*gate.UnitDistance)
		}
	}
	return sum / float64(max(slots, 1)), wrong
}

// saveCodec writes the codec's model file to path atomically: a reader of
// path sees the old file or the whole new one.
func saveCodec(c *wmzlib.Codec, path string) error {
	b, err := c.MarshalBinary()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b)
}
