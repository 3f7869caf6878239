package format

import (
	"math/bits"
	"sync"
)

// Ideal code lengths are reported in units of 2^-16 bit and computed in
// integer arithmetic, so that the totals recorded in the index are the same
// on every machine (the index is part of the file's bytes).

const costFrac = 16 // fractional bits of a cost

var (
	log2Once  sync.Once
	log2Table []uint32 // log2Table[f] = floor(log2(f) * 2^16) for f in [1, 2^16]
)

// log2Fixed returns floor(log2(x) · 2^16) for x ≥ 1, by repeated squaring of
// the mantissa in Q1.31: each squaring yields one fractional bit.
func log2Fixed(x uint64) uint32 {
	n := uint(bits.Len64(x) - 1)
	var y uint64 // x / 2^n in Q1.31, in [2^31, 2^32)
	if n <= 31 {
		y = x << (31 - n)
	} else {
		y = x >> (n - 31)
	}
	r := uint32(n) << costFrac
	for i := costFrac - 1; i >= 0; i-- {
		y = y * y >> 31
		if y >= 1<<32 {
			y >>= 1
			r |= 1 << uint(i)
		}
	}
	return r
}

// initCosts fills the table of symbolCost; coders call it once when made.
func initCosts() {
	log2Once.Do(func() {
		log2Table = make([]uint32, 1<<16+1)
		for f := 1; f <= 1<<16; f++ {
			log2Table[f] = log2Fixed(uint64(f))
		}
	})
}

// symbolCost returns -log2(freq / 2^precision) in units of 2^-16 bit
// (after initCosts).
func symbolCost(freq uint32, precision uint) uint64 {
	return uint64(precision)<<costFrac - uint64(log2Table[freq])
}
