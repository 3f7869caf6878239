//go:build noasm || !amd64

package opq

const useAsm = false

func kern4x16(a *float32, lda int, b *float32, k int, bias *float32, c *float32, ldc int) {
	panic("opq: kern4x16 without assembly")
}
