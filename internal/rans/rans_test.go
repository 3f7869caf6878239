package rans

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// encodeAll codes symbol i on lane i mod lanes with table cums[i*k:].
func encodeAll(t testing.TB, e *Encoder, syms []uint16, cums []uint16, k int) []byte {
	t.Helper()
	e.Reset()
	for i, v := range syms {
		putSymbol(e, i%e.Lanes(), cums[i*k:(i+1)*k], int(v))
	}
	out, err := e.Finish(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func randomInput(r *rand.Rand, n, k int, prec uint) (syms, cums []uint16) {
	cums = randomTables(r, n, k, prec)
	syms = make([]uint16, n)
	for i := range syms {
		syms[i] = sample(r, cums[i*k:(i+1)*k], prec)
	}
	return syms, cums
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, prec := range []uint{10, 12, 16} {
		for _, lanes := range []int{1, 3, 8, 32} {
			for _, k := range []int{1, 2, 64, 300} {
				if k > 1<<prec {
					continue
				}
				for _, n := range []int{0, 1, lanes - 1, lanes, lanes + 1, 2*lanes + 1, 63, 64, 65, 1000} {
					syms, cums := randomInput(r, n, k, prec)
					e, err := NewEncoder(lanes, prec)
					if err != nil {
						t.Fatal(err)
					}
					stream := encodeAll(t, e, syms, cums, k)
					d, _ := NewDecoder(lanes, prec)
					if err := d.Reset(stream); err != nil {
						t.Fatal(err)
					}
					for i, want := range syms {
						if got := d.Decode(i%lanes, cums[i*k:(i+1)*k]); got != int(want) {
							t.Fatalf("P=%d lanes=%d k=%d n=%d: symbol %d = %d, want %d (%v)", prec, lanes, k, n, i, got, want, d.Err())
						}
					}
					if err := d.Close(); err != nil {
						t.Fatalf("P=%d lanes=%d k=%d n=%d: %v", prec, lanes, k, n, err)
					}
					// DecodeN, starting on lane 0.
					got := make([]uint16, n)
					d.Reset(stream)
					if err := decodeN(d, 0, got, cums, k); err != nil || !equal16(got, syms) || d.Close() != nil {
						t.Fatalf("P=%d lanes=%d k=%d n=%d: DecodeN: %v", prec, lanes, k, n, d.Err())
					}
				}
			}
		}
	}
}

func equal16(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBadStreams(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 1))
	const lanes, k, n = 4, 64, 300
	syms, cums := randomInput(r, n, k, DefaultPrecision)
	e, _ := NewEncoder(lanes, DefaultPrecision)
	stream := encodeAll(t, e, syms, cums, k)
	d, _ := NewDecoder(lanes, DefaultPrecision)
	decodeAll := func(s []byte) error {
		if err := d.Reset(s); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			d.Decode(i%lanes, cums[i*k:(i+1)*k])
		}
		return d.Close()
	}
	if err := decodeAll(stream); err != nil {
		t.Fatal(err)
	}
	for cut := 0; cut < len(stream); cut++ {
		if err := decodeAll(stream[:cut]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d of %d: err = %v", cut, len(stream), err)
		}
	}
	for _, tail := range [][]byte{{0}, {1, 2}, {0, 0, 0, 0, 0}} {
		if err := decodeAll(append(bytes.Clone(stream), tail...)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("extended by %d: err = %v", len(tail), err)
		}
	}
	for i := range stream {
		bad := bytes.Clone(stream)
		bad[i] ^= 1 << (i % 8)
		if err := decodeAll(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("bit flip in byte %d: err = %v", i, err)
		}
	}
	// Too few symbols decoded leaves state behind.
	d.Reset(stream)
	d.Decode(0, cums[:k])
	if err := d.Close(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("early Close: err = %v", err)
	}
	// Errors are sticky and Decode returns 0.
	d.Reset(stream[:10])
	for i := 0; i < 50; i++ {
		d.Decode(i%lanes, cums[i*k:(i+1)*k])
	}
	if d.Decode(0, cums[:k]) != 0 || !errors.Is(d.Err(), ErrCorrupt) {
		t.Fatal("error not sticky")
	}
	// Parameter misuse is an error, not a panic.
	d.Reset(stream)
	if d.Decode(lanes, cums[:k]); !errors.Is(d.Err(), ErrParam) {
		t.Fatalf("bad lane: %v", d.Err())
	}
	d.Reset(stream)
	if d.Decode(0, nil); !errors.Is(d.Err(), ErrTable) {
		t.Fatalf("empty table: %v", d.Err())
	}
	e.Reset()
	e.Put(0, 65535, 2)
	if _, err := e.Finish(nil); !errors.Is(err, ErrParam) {
		t.Fatalf("start+freq > 2^P: %v", err)
	}
	e.Reset()
	e.Put(0, 5, 0)
	if _, err := e.Finish(nil); !errors.Is(err, ErrParam) {
		t.Fatalf("freq 0: %v", err)
	}
}

// TestMalformedTables feeds tables that fail CheckTable to the decoder: it
// may return garbage but must not panic or read out of range.
func TestMalformedTables(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 4))
	stream := make([]byte, 4*8+500)
	for i := range stream {
		stream[i] = byte(r.Uint32())
	}
	d, _ := NewDecoder(8, 16)
	for trial := 0; trial < 50; trial++ {
		cum := make([]uint16, 64)
		for i := range cum {
			cum[i] = uint16(r.Uint32())
		}
		if CheckTable(cum, 16) == nil {
			t.Fatal("random table passed CheckTable")
		}
		d.Reset(stream)
		for i := 0; i < 200; i++ {
			if v := d.Decode(i%8, cum); v < 0 || v >= 64 {
				t.Fatalf("symbol %d out of range", v)
			}
		}
	}
}

func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		lanes int
		prec  uint
	}{{0, 16}, {33, 16}, {8, 9}, {8, 17}} {
		if _, err := NewEncoder(c.lanes, c.prec); !errors.Is(err, ErrParam) {
			t.Errorf("NewEncoder(%d, %d): %v", c.lanes, c.prec, err)
		}
		if _, err := NewDecoder(c.lanes, c.prec); !errors.Is(err, ErrParam) {
			t.Errorf("NewDecoder(%d, %d): %v", c.lanes, c.prec, err)
		}
	}
	d, _ := NewDecoder(2, 16)
	if d.Decode(0, []uint16{0}) != 0 || d.Err() == nil {
		t.Error("Decode before Reset did not fail")
	}
	if err := d.Reset([]byte{0, 0, 0, 1, 0, 0, 0}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("short stream: %v", err)
	}
	if err := d.Reset([]byte{0, 0, 0, 1, 0, 0, 0xff, 0}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("state below 2^24: %v", err)
	}
	if err := d.Reset([]byte{0, 0, 0, 1, 0, 0, 0, 1}); err != nil || d.Close() != nil {
		t.Errorf("empty stream: %v %v", err, d.Close())
	}
}

func TestZeroAlloc(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	const k, n = 64, 4096
	syms, cums := randomInput(r, n, k, DefaultPrecision)
	e, _ := NewEncoder(DefaultLanes, DefaultPrecision)
	d, _ := NewDecoder(DefaultLanes, DefaultPrecision)
	buf := make([]byte, 0, 8*n)
	got := make([]uint16, n)
	run := func() {
		e.Reset()
		for i, v := range syms {
			putSymbol(e, i%DefaultLanes, cums[i*k:(i+1)*k], int(v))
		}
		stream, _ := e.Finish(buf[:0])
		d.Reset(stream)
		for i := range syms {
			d.Decode(i%DefaultLanes, cums[i*k:(i+1)*k])
		}
		d.Close()
		d.Reset(stream)
		decodeN(d, 0, got, cums, k)
		if d.Close() != nil {
			t.Fatal(d.Err())
		}
	}
	run()
	if a := testing.AllocsPerRun(5, run); a != 0 {
		t.Fatalf("%v allocations per stream in the steady state", a)
	}
}
