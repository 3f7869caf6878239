// Package half converts between float32 and IEEE 754 binary16 (numpy's
// float16), the storage type of float16 observations and of compact
// quantizer codebooks.
package half

import "math"

// Float32 converts IEEE 754 binary16 bits to float32 exactly.
func Float32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // infinity or NaN, payload kept
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
	case man == 0:
		return math.Float32frombits(sign)
	}
	f := float32(man) * (1.0 / (1 << 24)) // subnormal: man × 2⁻²⁴, exact
	if sign != 0 {
		f = -f
	}
	return f
}

// FromFloat32 converts a float32 to IEEE 754 binary16 bits, rounding to
// nearest with ties to even, overflowing to infinity and keeping NaNs NaN,
// as numpy's astype(float16) does.
func FromFloat32(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man == 0 {
			return sign | 0x7c00
		}
		h := uint16(man >> 13)
		if h == 0 {
			h = 1
		}
		return sign | 0x7c00 | h
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 { // subnormal or zero in binary16
		if e < -10 {
			return sign
		}
		m := man | 0x800000
		shift := uint32(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry into the exponent is the correct rounding, up to infinity
	}
	return sign | uint16(h)
}
