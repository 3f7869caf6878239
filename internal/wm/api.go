// Package wm is wmzip's world model: integer-only inference of a frequency
// table for every coordinate of a state from the reconstructed history of
// its episode, the action that led into it and the shared parameters learned
// offline. Inference is normative (SPEC.md, "World model"); training may use
// floating point and emits integer parameters only.
package wm

import "github.com/wmzip/wmzip/internal/fixed"

// Geometry is the shape of one state: S slots of M subspace codes, each code
// a value in [0, K). A state has N = S*M coordinates, coded in the order
// j = s*M + m.
type Geometry struct {
	S, M, K int
}

// N returns the number of coordinates of one state.
func (g Geometry) N() int { return g.S * g.M }

// Limits on geometry accepted anywhere in wmzip.
const (
	MaxSlots     = 4096
	MaxSubspaces = 4096
	MaxCoords    = 1 << 16 // S*M
	MaxAlphabet  = 1 << 16 // K
)

// NoAction is the action value of a state that has no predecessor.
const NoAction = -1

// Log2Q8 returns log2(x) in 1/256-bit units: lg(x) of SPEC.md 1.4, the
// normative integer logarithm of the world model and the retention gate.
func Log2Q8(x uint64) int32 { return fixed.Lg(x) }
