package rans

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// randomTable returns a quantized table of k symbols from seeded weights.
func randomTable(r *rand.Rand, k int, prec uint) []uint16 {
	w := make([]uint32, k)
	for s := range w {
		switch r.IntN(3) {
		case 0:
			w[s] = r.Uint32() >> r.IntN(32)
		case 1:
			w[s] = uint32(r.IntN(4))
		default:
			w[s] = 1 << 20
		}
	}
	cum := make([]uint16, k)
	if err := Quantize(w, prec, cum); err != nil {
		panic(err)
	}
	return cum
}

func TestStaticRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 5))
	for _, prec := range []uint{10, 12, 16} {
		for _, k := range []int{1, 2, 3, 64, 200, 256} {
			cum := randomTable(r, k, prec)
			tab, err := NewStaticTable(cum, prec)
			if err != nil {
				t.Fatal(err)
			}
			for _, lanes := range []int{1, 3, 8, 32} {
				for _, n := range []int{0, 1, lanes - 1, lanes, lanes + 1, 2*lanes + 1, 1000} {
					syms := make([]uint16, n)
					for i := range syms {
						syms[i] = sample(r, cum, prec)
					}
					e, _ := NewEncoder(lanes, prec)
					e.PutN(0, syms, cum, k)
					stream, err := e.Finish(nil)
					if err != nil {
						t.Fatal(err)
					}
					d, _ := NewDecoder(lanes, prec)
					d.Reset(stream)
					got := make([]uint16, n)
					// Two calls, the second starting mid-round.
					h := n / 3
					if err := d.DecodeStatic(0, got[:h], tab); err != nil {
						t.Fatal(err)
					}
					if err := d.DecodeStatic(h%lanes, got[h:], tab); err != nil {
						t.Fatal(err)
					}
					if !equal16(got, syms) || d.Close() != nil {
						t.Fatalf("P=%d k=%d lanes=%d n=%d: round trip failed: %v", prec, k, lanes, n, d.Err())
					}
				}
			}
		}
	}
}

func TestStaticErrors(t *testing.T) {
	if _, err := NewStaticTable(make([]uint16, 257), 16); !errors.Is(err, ErrTable) {
		t.Errorf("257 symbols: %v", err)
	}
	if _, err := NewStaticTable([]uint16{0, 0}, 16); !errors.Is(err, ErrTable) {
		t.Errorf("invalid table: %v", err)
	}
	if _, err := NewStaticTable([]uint16{0}, 9); !errors.Is(err, ErrParam) {
		t.Errorf("precision 9: %v", err)
	}
	tab, err := NewStaticTable([]uint16{0, 100}, 12)
	if err != nil || tab.Precision() != 12 || len(tab.Cum()) != 2 {
		t.Fatalf("NewStaticTable: %v", err)
	}
	d, _ := NewDecoder(2, 16)
	d.Reset([]byte{0, 0, 0, 1, 0, 0, 0, 1})
	if err := d.DecodeStatic(0, make([]uint16, 1), tab); !errors.Is(err, ErrParam) {
		t.Errorf("precision mismatch: %v", err)
	}
	d.Reset([]byte{0, 0, 0, 1, 0, 0, 0, 1})
	if err := d.DecodeStatic(2, make([]uint16, 1), tab); !errors.Is(err, ErrParam) {
		t.Errorf("bad lane: %v", err)
	}
	d.Reset([]byte{0, 0, 0, 1, 0, 0, 0, 1})
	if err := d.DecodeStatic(0, make([]uint16, 1), nil); !errors.Is(err, ErrParam) {
		t.Errorf("nil table: %v", err)
	}
	// Errors are sticky.
	if err := d.DecodeStatic(0, nil, tab); !errors.Is(err, ErrParam) {
		t.Errorf("not sticky: %v", err)
	}
}

// sameState reports whether two decoders agree on lane states, position
// and error status.
func sameState(a, b *Decoder) bool {
	return a.x == b.x && a.pos == b.pos && (a.err == nil) == (b.err == nil)
}

// TestStaticCrossCheck runs the assembly static kernel, its Go twin and the
// search-based Go decoder side by side on valid, garbled and truncated
// streams: identical symbols, byte positions, lane states and error status,
// at lengths around the lane count and at every cut near the end of the
// stream, where the kernel leaves its branch-free refill.
func TestStaticCrossCheck(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 8))
	for _, prec := range []uint{10, 13, 16} {
		for _, k := range []int{1, 5, 64, 256} {
			cum := randomTable(r, k, prec)
			tab, _ := NewStaticTable(cum, prec)
			for _, lanes := range []int{1, 5, 8, 32} {
				for _, n := range []int{1, lanes - 1, lanes, lanes + 1, 2*lanes - 1, 2 * lanes, 2*lanes + 1, 100, 513} {
					if n == 0 {
						continue
					}
					syms := make([]uint16, n)
					for i := range syms {
						syms[i] = sample(r, cum, prec)
					}
					e, _ := NewEncoder(lanes, prec)
					e.PutN(0, syms, cum, k)
					stream, _ := e.Finish(nil)
					junk := bytes.Clone(stream)
					for i := 4 * lanes; i < len(junk); i++ {
						junk[i] = byte(r.Uint32())
					}
					inputs := [][]byte{stream, junk}
					for cut := len(stream) - 6; cut < len(stream); cut++ {
						if cut >= 4*lanes {
							inputs = append(inputs, stream[:cut])
						}
					}
					for _, s := range inputs {
						start := r.IntN(lanes)
						crossStatic(t, s, lanes, prec, start, n, cum, tab)
					}
				}
			}
		}
	}
}

func crossStatic(t *testing.T, s []byte, lanes int, prec uint, lane, n int, cum []uint16, tab *StaticTable) {
	t.Helper()
	dr, _ := NewDecoder(lanes, prec) // reference: search, in Go
	dg, _ := NewDecoder(lanes, prec) // static, in Go
	da, _ := NewDecoder(lanes, prec) // static, assembly when in use
	if dr.Reset(s) != nil || dg.Reset(s) != nil || da.Reset(s) != nil {
		return
	}
	gr, gg, ga := make([]uint16, n), make([]uint16, n), make([]uint16, n)
	saved := useAsm
	useAsm = false
	decodeNGo(dr, lane, gr, cum, len(cum), 0)
	decodeStaticGo(dg, lane, gg, tab)
	useAsm = saved
	da.DecodeStatic(lane, ga, tab)
	if !equal16(gr, gg) || !equal16(gg, ga) || !sameState(dr, dg) || !sameState(dg, da) {
		t.Fatalf("P=%d lanes=%d n=%d k=%d len=%d: static decoders differ\nref %v %d %v\ngo  %v %d %v\nasm %v %d %v", prec, lanes, n, len(cum), len(s),
			gr, dr.pos, dr.err, gg, dg.pos, dg.err, ga, da.pos, da.err)
	}
}

// TestDecodeCrossCheck compares the assembly step of Decode with the Go one,
// symbol by symbol, on valid, garbled and truncated streams and on malformed
// tables.
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
					var one [1]uint16
					for i := 0; i < n; i++ {
						var g int
						if malformed {
							// The binary search and the vector count
							// may disagree on a malformed table, so the
							// reference is the DecodeN kernel.
							dg.DecodeN(i%lanes, one[:], c[i*64:(i+1)*64], 64)
							g = int(one[0])
							if dg.err != nil {
								g = 0
							}
						} else {
							useAsm = false
							g = dg.Decode(i%lanes, c[i*64:(i+1)*64])
							useAsm = saved
						}
						a := da.Decode(i%lanes, c[i*64:(i+1)*64])
						if a < 0 || a >= 64 {
							t.Fatalf("symbol %d out of range", a)
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
