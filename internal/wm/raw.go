package wm

// RawBits returns the bits of one state packed raw, what rates are
// compared with: N codes of ⌈log2 K⌉ bits each.
func (g Geometry) RawBits() float64 {
	b := 0
	for 1<<b < g.K {
		b++
	}
	return float64(g.N() * b)
}
