package opq

import (
	"math/rand/v2"
	"testing"
)

// benchQuantizer is an untrained quantizer with random orthogonal-free
// tables: Encode's cost does not depend on the values.
func benchQuantizer(dim, m, k int) *Quantizer {
	r := rand.New(rand.NewPCG(3, 4))
	rot := make([]float32, dim*dim)
	for i := 0; i < dim; i++ {
		rot[i*dim+i] = 1
	}
	return newQuantizer(dim, m, k, []book{{rot: rot, cent: randFloats(r, m*k*(dim/m))}})
}

func BenchmarkEncode(b *testing.B) {
	for _, g := range []struct {
		name    string
		dim, m  int
		k       int
		threads int
	}{
		{"d512_M32_K64_t1", 512, 32, 64, 1},
		{"d512_M32_K64_t2", 512, 32, 64, 2},
		{"d512_M32_K256_t1", 512, 32, 256, 1},
	} {
		b.Run(g.name, func(b *testing.B) {
			q := benchQuantizer(g.dim, g.m, g.k)
			q.SetThreads(g.threads)
			const n = 4096
			x := randFloats(rand.New(rand.NewPCG(5, 6)), n*g.dim)
			codes := make([]uint16, n*g.m)
			b.SetBytes(int64(n * g.dim * 4))
			b.ReportAllocs()
			for b.Loop() {
				if err := q.Encode(x, codes); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "vectors/s")
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	q := benchQuantizer(512, 32, 64)
	const n = 4096
	codes := make([]uint16, n*32)
	for i := range codes {
		codes[i] = uint16(i % 64)
	}
	x := make([]float32, n*512)
	b.SetBytes(int64(n * 512 * 4))
	b.ReportAllocs()
	for b.Loop() {
		if err := q.Decode(codes, x); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "vectors/s")
}
