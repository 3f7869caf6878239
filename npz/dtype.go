package npz

import (
	"fmt"
	"math"
	"strings"
)

// dtype describes one supported element type.
type dtype struct {
	name   string // Array.Dtype, numpy's dtype name
	descr  string // numpy type string written to headers
	size   int    // bytes per element in the file
	goSize int    // bytes per element in memory (float16 decodes to float32)
}

var dtypes = []dtype{
	{"float32", "<f4", 4, 4},
	{"float16", "<f2", 2, 4},
	{"float64", "<f8", 8, 8},
	{"uint8", "|u1", 1, 1},
	{"uint16", "<u2", 2, 2},
	{"int32", "<i4", 4, 4},
	{"int64", "<i8", 8, 8},
}

// Dtypes lists the supported dtype names, in the order used in messages.
func Dtypes() []string {
	names := make([]string, len(dtypes))
	for i, d := range dtypes {
		names[i] = d.name
	}
	return names
}

func dtypeByName(name string) (dtype, bool) {
	for _, d := range dtypes {
		if d.name == name {
			return d, true
		}
	}
	return dtype{}, false
}

// dtypeByDescr maps a header's type string to a supported dtype. On failure
// it returns a message for an ErrUnsupported error.
func dtypeByDescr(descr string) (dtype, string) {
	if descr == "<u1" { // numpy writes "|u1", but '<' is as good for one byte
		descr = "|u1"
	}
	for _, d := range dtypes {
		if d.descr == descr {
			return d, ""
		}
	}
	if len(descr) >= 2 {
		switch order, kind := descr[0], descr[1:]; {
		case strings.ContainsRune(descr, 'O'):
			return dtype{}, fmt.Sprintf("has object dtype %q (pickled Python objects), which is not supported", descr)
		case order == '>' || order == '!':
			for _, d := range dtypes {
				if d.descr[1:] == kind {
					return dtype{}, fmt.Sprintf("has big-endian dtype %q, which is not supported", descr)
				}
			}
		}
	}
	return dtype{}, fmt.Sprintf("has dtype %q, which is not supported (want little-endian %s)",
		descr, strings.Join(Dtypes(), ", "))
}

// halfToFloat32 converts IEEE 754 binary16 bits to float32 exactly.
func halfToFloat32(h uint16) float32 {
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

// float32ToHalf converts a float32 to IEEE 754 binary16 bits, rounding to
// nearest with ties to even, overflowing to infinity and keeping NaNs NaN,
// as numpy's astype(float16) does.
func float32ToHalf(f float32) uint16 {
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
