// Package lambda holds λ, the retention trade-off of a lossy file, in the
// one unit the codec knows below its public face, with the one conversion
// from and to the number a user gives.
package lambda

import (
	"fmt"
	"math"
)

// Lambda is the retention trade-off λ as a file stores it (SPEC.md 6.2
// and 6.4, the header's λ and levels): unsigned 16.16 fixed point, λ·65536
// rounded to nearest, so a finite λ is in [0, 65536) in steps of 2^-16; Lossless
// (0xFFFFFFFF) stands for +Inf, every coordinate kept. Larger keeps more:
// with a gate, a coordinate is kept when λ times the distance its
// prediction would miss by outweighs its coding cost.
type Lambda uint32

// Lossless is λ = +Inf: every coordinate is coded.
const Lossless Lambda = 0xFFFFFFFF

// Max is the largest finite λ FromFloat takes.
const Max = 65535.99

// FromFloat returns the Lambda of the user's λ l: +Inf is Lossless, a
// finite l must be in [0, Max] and is rounded to the nearest 2^-16. It is
// the one conversion from a float.
func FromFloat(l float64) (Lambda, error) {
	switch {
	case math.IsInf(l, 1):
		return Lossless, nil
	case !(l >= 0) || l > Max:
		return 0, fmt.Errorf("λ = %v out of range [0, 65536)", l)
	}
	return Lambda(math.Round(l * 65536)), nil
}

// Float returns λ as a number, +Inf for Lossless.
func (l Lambda) Float() float64 {
	if l == Lossless {
		return math.Inf(1)
	}
	return float64(l) / 65536
}

// Text prints λ with 4 significant digits, or "lossless". (Not String:
// %v of a Lambda prints its stored value, as it did of the bare uint32.)
func (l Lambda) Text() string {
	if l == Lossless {
		return "lossless"
	}
	return fmt.Sprintf("%.4g", l.Float())
}

// Floats returns ls as numbers (Float), nil for nil.
func Floats(ls []Lambda) []float64 {
	if ls == nil {
		return nil
	}
	out := make([]float64, len(ls))
	for i, l := range ls {
		out[i] = l.Float()
	}
	return out
}
