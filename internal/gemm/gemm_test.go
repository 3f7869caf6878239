package gemm

import (
	"math/rand/v2"
	"testing"
)

func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// TestGemmMatchesGeneric checks the assembly against the reference bit for
// bit at sizes around the 4-row and 16-column cut-offs.
func TestGemmMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, m := range []int{1, 3, 4, 5, 8, 67, 130} {
		for _, k := range []int{1, 2, 16, 33, 300, 513} {
			for _, n := range []int{1, 15, 16, 17, 64} {
				lda := k + 3
				a := randFloats(r, m*lda)
				b := PackRows(randFloats(r, k*n), k, n, n)
				bias := randFloats(r, b.panels*panelWidth)
				ldc := b.panels*panelWidth + 5
				got := make([]float32, m*ldc)
				want := make([]float32, m*ldc)
				Gemm(got, ldc, a, lda, m, b, bias)
				gemmGeneric(want, ldc, a, lda, m, b, bias)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("m=%d k=%d n=%d: element %d = %v, want %v", m, k, n, i, got[i], want[i])
					}
				}
			}
		}
	}
}

func TestPackColsIsTranspose(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	n, k := 20, 7
	a := randFloats(r, n*k)
	at := make([]float32, k*n)
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			at[j*n+i] = a[i*k+j]
		}
	}
	p, q := PackCols(a, n, k, k), PackRows(at, k, n, n)
	for i := range p.data {
		if p.data[i] != q.data[i] {
			t.Fatalf("PackCols differs from PackRows of the transpose at %d", i)
		}
	}
}

func BenchmarkGemm512(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const rows = 1024
	x := randFloats(r, rows*512)
	p := PackRows(randFloats(r, 512*512), 512, 512, 512)
	c := make([]float32, rows*512)
	b.SetBytes(rows * 512 * 4)
	b.ReportAllocs()
	for b.Loop() {
		Gemm(c, 512, x, 512, rows, p, nil)
	}
}

func TestArgmin(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for n := 1; n < 100; n++ {
		x := randFloats(r, n)
		if n > 3 {
			x[n-1] = x[1] // ties go to the first
		}
		if a, b := Argmin(x), argminGeneric(x); a != b {
			t.Fatalf("n=%d: argmin %d, generic %d", n, a, b)
		}
	}
}
