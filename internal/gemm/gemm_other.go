//go:build noasm || !amd64

package gemm

const (
	useAsm    = false
	useAVX512 = false
)

func kern4x16(a *float32, lda int, b *float32, k int, c *float32, ldc int) {
	panic("gemm: kernel without assembly")
}

func kern8x16z(a *float32, lda int, b *float32, k int, c *float32, ldc int) {
	panic("gemm: kernel without assembly")
}
