package capi

// Codes is a caller's array of codes, 8 or 16 bits wide: U8 or U16 is
// set, or neither for no array.
type Codes struct {
	U8  []uint8
	U16 []uint16
}

// Len returns the number of codes.
func (c Codes) Len() int { return len(c.U8) + len(c.U16) }

// None reports whether there is no array.
func (c Codes) None() bool { return c.U8 == nil && c.U16 == nil }

// slice returns codes [from, to).
func (c Codes) slice(from, to int) Codes {
	if c.U8 != nil {
		return Codes{U8: c.U8[from:to]}
	}
	return Codes{U16: c.U16[from:to]}
}

// put copies src to the start of c; 8-bit codes hold only codes below
// 256, which the caller checked (fits8).
func (c Codes) put(src []uint16) {
	if c.U16 != nil {
		if len(src) > 0 && &c.U16[0] == &src[0] {
			return // decoded in place
		}
		copy(c.U16, src)
		return
	}
	d := c.U8[:len(src)]
	for i, v := range src {
		d[i] = uint8(v)
	}
}

// wide returns the codes as 16-bit values: U16 itself, or U8 widened
// into buf (grown as needed).
func (c Codes) wide(buf []uint16) []uint16 {
	if c.U8 == nil {
		return c.U16
	}
	if cap(buf) < len(c.U8) {
		buf = make([]uint16, len(c.U8))
	}
	buf = buf[:len(c.U8)]
	for i, v := range c.U8 {
		buf[i] = uint16(v)
	}
	return buf
}

// dst returns where to decode n codes: c itself when it is 16 bits wide
// (decoded in place), else buf.
func (c Codes) dst(buf []uint16, n int) []uint16 {
	if c.U16 != nil {
		return c.U16[:n:n]
	}
	if cap(buf) < n {
		return make([]uint16, n)
	}
	return buf[:n]
}

// fits8 checks that codes below k fit an 8-bit array c.
func (c Codes) fits8(k int) error {
	if c.U8 != nil && k > 256 {
		return Inputf("codes reach %d (K=%d): they do not fit 8 bits, use a 16-bit array", k-1, k)
	}
	return nil
}
