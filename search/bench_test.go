package search

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkScan times the flat scan of one slot query's table over a
// million slot vectors of 32 codes below 64 (the geometry of the
// web-pgdocs quantizer), one core: vectors/s is the figure to set beside
// faiss's IndexPQ (scripts/retrieval_faiss.py). go: the pure-Go twin.
func BenchmarkScan(b *testing.B) {
	const n, k, rows = 32, 64, 1 << 20
	rng := rand.New(rand.NewPCG(1, 1))
	tab := make([]uint32, n*k)
	for i := range tab {
		tab[i] = rng.Uint32() >> (32 - entryBits(n))
	}
	codes := make([]byte, rows*n)
	for i := range codes {
		codes[i] = byte(rng.IntN(k))
	}
	out := make([]uint32, blockStates*32)
	for _, c := range []struct {
		name string
		fn   func(tab []uint32, k int, codes []byte, n, stride, rows int, out []uint32)
	}{{"kernel", scan}, {"go", scanGo}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(rows * n)
			for b.Loop() {
				for r := 0; r < rows; r += len(out) {
					c.fn(tab, k, codes[r*n:], n, n, len(out), out)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "vectors/s")
		})
	}
}
