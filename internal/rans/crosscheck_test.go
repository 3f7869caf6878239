package rans

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestCrossCheck compares the assembly kernels with their Go twins in the
// same binary: identical bytes from both encoders, identical symbols, byte
// positions and lane states from both decoders, at lengths around the lane
// count, on valid and malformed tables. Under noasm or without AVX2 it only
// runs the Go side against itself.
func TestCrossCheck(t *testing.T) {
	if !useAsm {
		t.Log("assembly not in use; checking the Go path only")
	}
	r := rand.New(rand.NewPCG(21, 12))
	for _, prec := range []uint{10, 13, 16} {
		for _, lanes := range []int{1, 5, 8, 32} {
			for _, n := range []int{0, 1, lanes - 1, lanes, lanes + 1, 2*lanes - 1, 2 * lanes, 100, 513} {
				syms, cums := randomInput(r, n, 64, prec)
				packed := make([]uint32, n)
				lane := make([]uint8, n)
				for i, v := range syms {
					s, f := Symbol(cums[i*64:(i+1)*64], int(v), prec)
					packed[i], lane[i] = s|(f-1)<<16, uint8(i%lanes)
				}
				var xg, xa [MaxLanes]uint32
				for l := range xg {
					xg[l], xa[l] = stateLow, stateLow
				}
				og, oa := make([]byte, 2*n), make([]byte, 2*n)
				ng := encodeGo(&xg, packed, lane, og, prec)
				na := encode(&xa, packed, lane, oa, prec)
				if ng != na || !bytes.Equal(og[:ng], oa[:na]) || xg != xa {
					t.Fatalf("P=%d lanes=%d n=%d: encoders differ", prec, lanes, n)
				}

				e, _ := NewEncoder(lanes, prec)
				stream := encodeAll(t, e, syms, cums, 64)
				// Also decode garbage: the kernels must agree on it too.
				junk := bytes.Clone(stream)
				for i := 4 * lanes; i < len(junk); i++ {
					junk[i] = byte(r.Uint32())
				}
				for _, s := range [][]byte{stream, junk, stream[:len(stream)*3/4]} {
					dg, _ := NewDecoder(lanes, prec)
					da, _ := NewDecoder(lanes, prec)
					if dg.Reset(s) != nil || da.Reset(s) != nil {
						continue
					}
					gg, ga := make([]uint16, n), make([]uint16, n)
					saved := useAsm
					useAsm = false
					decodeN(dg, 0, gg, cums, 64)
					useAsm = saved
					decodeN(da, 0, ga, cums, 64)
					if !equal16(gg, ga) || dg.x != da.x || dg.pos != da.pos || (dg.err == nil) != (da.err == nil) {
						t.Fatalf("P=%d lanes=%d n=%d: decoders differ", prec, lanes, n)
					}
				}
			}
		}
	}
	// The searches, on valid and on malformed tables.
	cums := randomTables(r, 64, 64, 16)
	for i := 0; i < 64; i++ {
		cum := cums[i*64 : (i+1)*64]
		if i%2 == 1 {
			for j := range cum {
				cum[j] = uint16(r.Uint32())
			}
		}
		for _, slot := range []uint32{0, 1, 65535, uint32(cum[i%64]), uint32(cum[i%64]) - 1, r.Uint32N(65536)} {
			slot &= 0xffff
			if g, a := searchGo(cum, slot), search(cum, slot); g != a && i%2 == 0 {
				t.Fatalf("table %d slot %d: searchGo %d, search %d", i, slot, g, a)
			} else if a < 0 || a >= 64 {
				t.Fatalf("table %d slot %d: search out of range: %d", i, slot, a)
			}
		}
	}
}

// TestDecodeCrossCheck compares the assembly step of Decode with the Go one,
// symbol by symbol, on valid, garbled and truncated streams; on malformed
// tables, where the binary search and the vector count may disagree, it
// checks that every symbol stays in the alphabet.
func TestDecodeCrossCheck(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 71))
	saved := useAsm
	defer func() { useAsm = saved }()
	for _, prec := range []uint{10, 16} {
		for _, lanes := range []int{1, 8} {
			const n = 300
			syms, cums := randomInput(r, n, 64, prec)
			e, _ := NewEncoder(lanes, prec)
			stream := encodeAll(t, e, syms, cums, 64)
			junk := bytes.Clone(stream)
			for i := 4 * lanes; i < len(junk); i++ {
				junk[i] = byte(r.Uint32())
			}
			bad := append([]uint16(nil), cums...)
			for i := range bad {
				if i%3 == 0 {
					bad[i] = uint16(r.Uint32())
				}
			}
			for _, s := range [][]byte{stream, junk, stream[:len(stream)-1], stream[:len(stream)-2], stream[:len(stream)/2]} {
				for _, c := range [][]uint16{cums, bad} {
					dg, _ := NewDecoder(lanes, prec)
					da, _ := NewDecoder(lanes, prec)
					dg.Reset(s)
					da.Reset(s)
					malformed := &c[0] == &bad[0]
					for i := 0; i < n; i++ {
						useAsm = false
						g := dg.Decode(i%lanes, c[i*64:(i+1)*64])
						useAsm = saved
						a := da.Decode(i%lanes, c[i*64:(i+1)*64])
						if a < 0 || a >= 64 || g < 0 || g >= 64 {
							t.Fatalf("symbol %d or %d out of range", g, a)
						}
						if malformed {
							continue
						}
						if g != a || !sameState(dg, da) {
							t.Fatalf("P=%d lanes=%d len=%d symbol %d: Go %d (pos %d, %v), asm %d (pos %d, %v)", prec, lanes, len(s), i, g, dg.pos, dg.err, a, da.pos, da.err)
						}
					}
				}
			}
		}
	}
}
