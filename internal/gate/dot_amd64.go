//go:build !noasm

package gate

import "golang.org/x/sys/cpu"

// useAVX2 reports whether dotRows uses its AVX2 kernel (dot_amd64.s).
var useAVX2 = cpu.X86.HasAVX2

// dotRows64AVX2 is dotRowsGo for a 64-entry table: out[i] = Σ_v f_v ·
// d[idx[i]·64 + v] for i < n, the frequencies ending at top, d holding
// 64 rows of 64 (an index is taken mod 64).
//
//go:noescape
func dotRows64AVX2(cum *uint16, top uint32, d *uint16, idx *uint16, n int, out *uint32)
