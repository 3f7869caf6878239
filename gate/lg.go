package gate

import "github.com/wmzip/wmzip/wm"

// lg returns log2(x) in 1/256-bit units (0 for x ≤ 1): the world model's
// integer logarithm (SPEC.md 1.4, "Fixed-point functions").
func lg(x uint32) uint32 { return uint32(wm.Log2Q8(uint64(x))) }
