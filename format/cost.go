package format

import (
	"math/bits"
	"sync"

	"github.com/wmzip/wmzip/internal/fixed"
)

// Ideal code lengths are reported in units of 2^-16 bit and computed in
// integer arithmetic, so that the totals recorded in the index are the same
// on every machine (the index is part of the file's bytes).

const costFrac = 16 // fractional bits of a cost

var (
	log2Once sync.Once
	// costFracs[m − 2^15] is the fraction of log2fix(m) (SPEC.md 1.4) for
	// every 16-bit mantissa m in [2^15, 2^16): log2fix(f) of any f ≤ 2^16 is
	// its exponent above that fraction, f normalized to 16 bits being exact.
	// 64 KiB, where a table of every f took 256.
	costFracs []uint16
)

// initCosts fills the table of symbolCost; coders call it once when made.
func initCosts() {
	log2Once.Do(func() {
		costFracs = make([]uint16, 1<<15)
		for i := range costFracs {
			costFracs[i] = uint16(fixed.Log2Fix(uint64(1<<15 + i)))
		}
	})
}

// symbolCost returns -log2(freq / 2^precision) in units of 2^-16 bit, for
// 1 ≤ freq ≤ 2^16 (after initCosts).
func symbolCost(freq uint32, precision uint) uint64 {
	n := uint(bits.Len32(freq) - 1)
	m := freq << 15 >> n // freq's 16-bit mantissa, exactly
	return uint64(precision)<<costFrac - (uint64(n)<<costFrac + uint64(costFracs[(m-1<<15)&(1<<15-1)]))
}
