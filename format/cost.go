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
	log2Once sync.Once
	// log2Frac[m − 2^15] is the fraction of log2Fixed(m) for every 16-bit
	// mantissa m in [2^15, 2^16): log2Fixed(f) of any f ≤ 2^16 is its
	// exponent above that fraction, f normalized to 16 bits being exact.
	// 64 KiB, where a table of every f took 256.
	log2Frac []uint16
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
		log2Frac = make([]uint16, 1<<15)
		for i := range log2Frac {
			log2Frac[i] = uint16(log2Fixed(uint64(1<<15 + i)))
		}
	})
}

// symbolCost returns -log2(freq / 2^precision) in units of 2^-16 bit, for
// 1 ≤ freq ≤ 2^16 (after initCosts).
func symbolCost(freq uint32, precision uint) uint64 {
	n := uint(bits.Len32(freq) - 1)
	m := freq << 15 >> n // freq's 16-bit mantissa, exactly
	return uint64(precision)<<costFrac - (uint64(n)<<costFrac + uint64(log2Frac[(m-1<<15)&(1<<15-1)]))
}
