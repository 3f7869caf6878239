package ctmc

import "math/rand/v2"

// constSource makes rand.Float64 return (about) a chosen value.
type constSource uint64

func (c constSource) Uint64() uint64 { return uint64(c) }

func fixedRand(u float64) *rand.Rand {
	return rand.New(constSource(uint64(u * (1 << 53))))
}
