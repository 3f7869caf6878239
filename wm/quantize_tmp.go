package wm

// quantize maps weights to a cumulative table summing to 2^prec, every
// symbol at least 1. Stand-in until the rans package's normative Quantize
// is wired in.
func quantize(w []uint32, prec uint, cum []uint16) {
	k := uint64(len(w))
	var tot uint64
	best := 0
	for i, x := range w {
		tot += uint64(x)
		if x > w[best] {
			best = i
		}
	}
	avail := uint64(1)<<prec - k
	if tot == 0 {
		tot = 1
	}
	var used uint64
	for i, x := range w {
		f := 1 + uint64(x)*avail/tot
		used += f
		_ = i
	}
	rem := uint64(1)<<prec - used
	var acc uint64
	for i, x := range w {
		cum[i] = uint16(acc)
		f := 1 + uint64(x)*avail/tot
		if i == best {
			f += rem
		}
		acc += f
	}
}
