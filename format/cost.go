package format

import "github.com/wmzip/wmzip/internal/fixed"

// Ideal code lengths are reported in units of 2^-16 bit and computed in
// integer arithmetic, so that the totals recorded in the index are the same
// on every machine (the index is part of the file's bytes).

const costFrac = fixed.CostFrac // fractional bits of a cost

// initCosts fills the table of symbolCost; coders call it once when made.
func initCosts() { fixed.InitCost() }

// symbolCost returns -log2(freq / 2^precision) in units of 2^-16 bit, for
// 1 ≤ freq ≤ 2^16 (after initCosts).
func symbolCost(freq uint32, precision uint) uint64 { return fixed.Cost(freq, precision) }
