package gate

import (
	"math/rand/v2"
	"testing"

	"github.com/wmzip/wmzip/internal/rans"
)

// TestDotRows: dotRows, in its kernel and in Go, is rans.Dots row by row
// on random tables and distances, extremes included.
func TestDotRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	for _, K := range []int{2, 3, 20, 63, 64, 65} {
		for _, prec := range []uint{10, 12, 16} {
			if 1<<prec < K {
				continue
			}
			for trial := range 300 {
				cum := randomTable(rng, K, prec)
				d := make([]uint16, K*K)
				for i := range d {
					switch trial % 3 {
					case 0:
						d[i] = uint16(rng.UintN(1 << 16))
					case 1:
						d[i] = 0xFFFF
					default:
						d[i] = uint16(rng.UintN(4))
					}
				}
				if trial%5 == 0 {
					// One value takes almost all the mass, the last or another.
					cum = make([]uint16, K)
					at := K - 1
					if trial%10 == 0 {
						at = rng.IntN(K)
					}
					for v := 1; v < K; v++ {
						cum[v] = uint16(v)
						if v > at {
							cum[v] = uint16(1<<prec - K + v)
						}
					}
				}
				n := 1 + rng.IntN(2*K)
				idx := make([]uint16, n)
				for i := range idx {
					idx[i] = uint16(rng.IntN(K))
				}
				got, ref := make([]uint32, n), make([]uint32, n)
				dotRows(cum, prec, d, idx, got)
				dotRowsGo(cum, uint32(1)<<prec, d, idx, ref)
				for i, c := range idx {
					row := d[int(c)*K : (int(c)+1)*K]
					want, _ := rans.Dots(cum, prec, row, row)
					if got[i] != want || ref[i] != want {
						t.Fatalf("K %d P %d row %d: dotRows %d, Go %d, rans.Dots %d", K, prec, c, got[i], ref[i], want)
					}
				}
			}
		}
	}
}
