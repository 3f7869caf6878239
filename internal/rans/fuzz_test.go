package rans

import (
	"math/rand/v2"
	"testing"
)

// FuzzDecode decodes random stream bytes with random valid tables (and, for
// the per-symbol paths, tables taken from the input that may be malformed):
// no path may panic, read out of range or loop, every symbol must be in the
// alphabet, and the assembly and Go decoders must agree on valid tables.
//
//	go test -run '^$' -fuzz FuzzDecode ./rans
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 1}, uint8(2), uint8(16), uint16(64), uint64(1), uint16(10))
	f.Add([]byte("\xff\xff\xff\xff0123456789abcdef"), uint8(1), uint8(10), uint16(3), uint64(7), uint16(40))
	r := rand.New(rand.NewPCG(5, 5))
	cum := randomTable(r, 64, 16)
	syms := make([]uint16, 200)
	for i := range syms {
		syms[i] = sample(r, cum, 16)
	}
	e, _ := NewEncoder(8, 16)
	putN(e, 0, syms, cum, 64)
	stream, _ := e.Finish(nil)
	f.Add(stream, uint8(8), uint8(16), uint16(64), uint64(3), uint16(200))

	f.Fuzz(func(t *testing.T, data []byte, lanesB, precB uint8, kB uint16, seed uint64, nB uint16) {
		lanes := 1 + int(lanesB)%MaxLanes
		prec := MinPrecision + uint(precB)%(MaxPrecision-MinPrecision+1)
		k := 1 + int(kB)%256
		if kB%4 == 0 {
			k = 64 // the size the assembly handles
		}
		n := int(nB) % 2048
		cum := randomTable(rand.New(rand.NewPCG(seed, 1)), k, prec)
		saved := useAsm
		defer func() { useAsm = saved }()

		// Decode with the valid table, Go against assembly.
		dg, _ := NewDecoder(lanes, prec)
		da, _ := NewDecoder(lanes, prec)
		if dg.Reset(data) != nil {
			return
		}
		da.Reset(data)
		for i := 0; i < n; i++ {
			useAsm = false
			g := dg.Decode(i%lanes, cum)
			useAsm = saved
			a := da.Decode(i%lanes, cum)
			if g != a || !sameState(dg, da) {
				t.Fatalf("Decode symbol %d: Go %d, assembly %d", i, g, a)
			}
		}

		// A table read from the input, likely malformed: only range and
		// termination are promised.
		if len(data) >= 2*64 {
			bad := make([]uint16, 64)
			for i := range bad {
				bad[i] = uint16(data[2*i]) | uint16(data[2*i+1])<<8
			}
			da.Reset(data)
			for i := 0; i < n; i++ {
				if v := da.Decode(i%lanes, bad); v < 0 || v >= 64 {
					t.Fatalf("symbol %d outside the alphabet", v)
				}
			}
		}
	})
}
