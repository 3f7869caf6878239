package fuzz

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/wmzip/wmzip/internal/rans"
)

// ransTable builds a valid table of at most 2^prec symbols from fuzz
// bytes, two per weight.
func ransTable(t *testing.T, prec uint, wb []byte) []uint16 {
	k := max(1, min(len(wb)/2, 1<<prec, 512))
	w := make([]uint32, k)
	for i := range w {
		if 2*i+1 < len(wb) {
			w[i] = uint32(wb[2*i]) | uint32(wb[2*i+1])<<8
			w[i] = w[i] * w[i] // skewed tables with tiny frequencies
		}
	}
	cum := make([]uint16, k)
	if err := rans.Quantize(w, prec, cum); err != nil {
		t.Fatalf("Quantize: %v", err)
	}
	if err := rans.CheckTable(cum, prec); err != nil {
		t.Fatalf("Quantize made an invalid table: %v", err)
	}
	return cum
}

func addRANSSeeds(f *testing.F, withSyms bool) {
	for _, b := range seedFiles(f, 1<<20, "conformance/rans-*.json") {
		var v struct {
			Precision uint       `json:"precision"`
			Lanes     int        `json:"lanes"`
			Weights   [][]uint32 `json:"weights"`
			Symbols   []int      `json:"symbols"`
			Stream    string     `json:"stream"`
		}
		if json.Unmarshal(b, &v) != nil || len(v.Weights) == 0 {
			continue
		}
		stream, _ := hex.DecodeString(v.Stream)
		var wb []byte
		for _, w := range v.Weights[0] {
			w = min(w, 1<<16-1)
			wb = append(wb, byte(w), byte(w>>8))
		}
		syms := make([]byte, 0, len(v.Symbols))
		for _, s := range v.Symbols {
			syms = append(syms, byte(s))
		}
		if withSyms {
			f.Add(uint8(v.Lanes-1), uint8(v.Precision-10), wb, syms)
		} else {
			f.Add(uint8(v.Lanes-1), uint8(v.Precision-10), wb, stream, uint16(len(v.Symbols)))
		}
	}
}

// FuzzRANSDecode decodes arbitrary bytes as a rANS stream under a valid
// table: decoding must end in a value or an error, never a panic or an
// out-of-range symbol, and an error must stay once reported.
func FuzzRANSDecode(f *testing.F) {
	addRANSSeeds(f, false)
	f.Fuzz(func(t *testing.T, lanes, prec uint8, wb, stream []byte, n uint16) {
		l, p := 1+int(lanes)%rans.MaxLanes, uint(10+prec%7)
		cum := ransTable(t, p, wb)
		n %= 4096
		one, err := rans.NewDecoder(l, p)
		if err != nil {
			t.Fatal(err)
		}
		if err1 := one.Reset(stream); err1 != nil {
			if !errors.Is(err1, rans.ErrCorrupt) {
				t.Fatalf("Reset: %v is not ErrCorrupt", err1)
			}
			return
		}
		for i := range int(n) {
			s := one.Decode(i%l, cum)
			if s < 0 || s >= len(cum) {
				t.Fatalf("symbol %d outside a table of %d", s, len(cum))
			}
			if err := one.Err(); err != nil {
				if !errors.Is(err, rans.ErrCorrupt) {
					t.Fatalf("Decode: %v is not ErrCorrupt", err)
				}
				if one.Decode(0, cum) != 0 || one.Err() != err {
					t.Fatal("the error did not stay")
				}
				break
			}
		}
		if err := one.Close(); err != nil && !errors.Is(err, rans.ErrCorrupt) {
			t.Fatalf("Close: %v is not ErrCorrupt", err)
		}
	})
}

// FuzzRANSRoundTrip encodes arbitrary symbols under an arbitrary valid
// table and decodes them back exactly, passing the end-of-stream checks.
func FuzzRANSRoundTrip(f *testing.F) {
	addRANSSeeds(f, true)
	f.Fuzz(func(t *testing.T, lanes, prec uint8, wb, syms []byte) {
		l, p := 1+int(lanes)%rans.MaxLanes, uint(10+prec%7)
		cum := ransTable(t, p, wb)
		enc, err := rans.NewEncoder(l, p)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]uint16, len(syms))
		for i, s := range syms {
			want[i] = uint16(int(s) % len(cum))
			start, freq := rans.Symbol(cum, int(want[i]), p)
			enc.Put(i%l, start, freq)
		}
		stream, err := enc.Finish(nil)
		if err != nil {
			t.Fatal(err)
		}
		dec, _ := rans.NewDecoder(l, p)
		if err := dec.Reset(stream); err != nil {
			t.Fatal(err)
		}
		got := make([]uint16, len(want))
		for i := range got {
			got[i] = uint16(dec.Decode(i%l, cum))
		}
		if err := dec.Err(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatal("round trip changed the symbols")
		}
		if err := dec.Close(); err != nil {
			t.Fatalf("end of stream: %v", err)
		}
	})
}
