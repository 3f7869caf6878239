package search

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// checkScan compares scan (the assembly kernel where it runs) with scanGo.
func checkScan(t *testing.T, tab []uint32, k int, codes []byte, n, stride, rows int) {
	t.Helper()
	want := make([]uint32, rows+1)
	got := make([]uint32, rows+1)
	want[rows], got[rows] = 0xdeadbeef, 0xdeadbeef // canary past the end
	scanGo(tab, k, codes, n, stride, rows, want)
	scan(tab, k, codes, n, stride, rows, got)
	if !slices.Equal(got, want) {
		t.Fatalf("n=%d stride=%d rows=%d k=%d: scan differs from scanGo", n, stride, rows, k)
	}
}

// TestScanMatchesGo checks the scan kernel against its Go twin at lengths
// around the 8-code groups of the assembly, with large entries (sums near
// 2^32) and codes up to K−1.
func TestScanMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{2, 16, 64, 256} {
		for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 32, 33, 64, 1024} {
			bits := entryBits(n)
			tab := make([]uint32, n*k)
			for i := range tab {
				tab[i] = rng.Uint32() >> (32 - bits)
			}
			tab[0] = 1<<bits - 1
			for _, stride := range []int{n, n + 3} {
				for _, rows := range []int{1, 2, 5, 64} {
					codes := make([]byte, (rows-1)*stride+n)
					for i := range codes {
						codes[i] = byte(rng.IntN(k))
					}
					checkScan(t, tab, k, codes, n, stride, rows)
				}
			}
		}
	}
}

// FuzzScan compares the scan kernel with scanGo on arbitrary codes.
func FuzzScan(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(9), uint8(3), uint16(7))
	f.Add(make([]byte, 64), uint8(32), uint8(0), uint16(1))
	f.Fuzz(func(t *testing.T, codes []byte, n, pad uint8, seed uint16) {
		if n == 0 || len(codes) < int(n) {
			return
		}
		k := 256
		stride := int(n) + int(pad)%8
		rows := (len(codes)-int(n))/stride + 1
		rng := rand.New(rand.NewPCG(uint64(seed), 3))
		tab := make([]uint32, int(n)*k)
		for i := range tab {
			tab[i] = rng.Uint32() >> (32 - entryBits(int(n)))
		}
		checkScan(t, tab, k, codes, int(n), stride, rows)
	})
}
