//go:build !amd64 || noasm

package gate

// useAVX2 is false: dotRows is dotRowsGo.
const useAVX2 = false

func dotRows64AVX2(cum *uint16, top uint32, d *uint16, idx *uint16, n int, out *uint32) {}
