//go:build !noasm

package opq

import "golang.org/x/sys/cpu"

var useAsm = cpu.X86.HasAVX

// kern4x16 computes four rows by sixteen columns of c = bias + a·b, where a
// has stride lda floats, b is one packed panel of k rows of 16, and c has
// stride ldc floats. It uses AVX multiplies and adds, not FMA: see kernel.go.
//
//go:noescape
func kern4x16(a *float32, lda int, b *float32, k int, bias *float32, c *float32, ldc int)
