//go:build !noasm

package gemm

import "golang.org/x/sys/cpu"

// The kernels below compute rows by sixteen columns of c += a·b, where
// a has stride lda floats, b is one Packed panel of k >= 1 rows of 16, and c
// has stride ldc floats. They multiply and add separately, never fused: see
// kernel.go.
var (
	useAsm    = cpu.X86.HasAVX
	useAVX512 = cpu.X86.HasAVX512F
)

// kern4x16 computes four rows with AVX.
//
//go:noescape
func kern4x16(a *float32, lda int, b *float32, k int, c *float32, ldc int)

// kern8x16z computes eight rows with AVX-512.
//
//go:noescape
func kern8x16z(a *float32, lda int, b *float32, k int, c *float32, ldc int)
