package rans

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func TestQuantize(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	cum := make([]uint16, 65536)
	for trial := 0; trial < 400; trial++ {
		prec := uint(MinPrecision + trial%(MaxPrecision-MinPrecision+1))
		k := 1 + r.IntN(1<<prec)
		if trial%3 != 0 {
			k = 1 + r.IntN(80)
		}
		w := make([]uint32, k)
		for s := range w {
			switch trial % 4 {
			case 0:
				w[s] = r.Uint32()
			case 1:
				w[s] = r.Uint32N(3)
			case 2:
				w[s] = 0
			default:
				w[s] = r.Uint32() >> r.IntN(32)
			}
		}
		c := cum[:k]
		if err := Quantize(w, prec, c); err != nil {
			t.Fatal(err)
		}
		if err := CheckTable(c, prec); err != nil {
			t.Fatalf("trial %d (P=%d K=%d): %v", trial, prec, k, err)
		}
		// A larger weight never gets a smaller frequency, except for the
		// symbol that took the leftover.
		for s := 1; s < k; s++ {
			_, f0 := Symbol(c, s-1, prec)
			_, f1 := Symbol(c, s, prec)
			if w[s-1] == w[s] && f0 < f1 && trial%4 != 2 {
				// only the first of equal largest weights may be larger
				t.Fatalf("trial %d: equal weights %d, freqs %d < %d", trial, w[s], f0, f1)
			}
		}
	}
}

func TestQuantizeExamples(t *testing.T) {
	for _, c := range []struct {
		w    []uint32
		prec uint
		want []uint16
	}{
		{[]uint32{0, 0, 0}, 10, []uint16{0, 342, 683}},                 // 342, 341, 341
		{[]uint32{1, 1, 1}, 10, []uint16{0, 342, 683}},                 // 1+340 each, leftover 1 to symbol 0
		{[]uint32{3, 1}, 10, []uint16{0, 768}},                         // 1+766+1, 1+255
		{[]uint32{0, 5, 0, 0}, 10, []uint16{0, 1, 1022, 1023}},         // all spare to the one weight
		{[]uint32{1 << 31, 1 << 31, 7}, 16, []uint16{0, 32768, 65535}}, // weights halved first
		{[]uint32{9}, 16, []uint16{0}},
	} {
		got := make([]uint16, len(c.w))
		if err := Quantize(c.w, c.prec, got); err != nil {
			t.Fatal(err)
		}
		if !equal16(got, c.want) {
			t.Errorf("Quantize(%v, %d) = %v, want %v", c.w, c.prec, got, c.want)
		}
	}
}

func TestQuantizeErrors(t *testing.T) {
	for _, c := range []struct {
		k, n int
		prec uint
	}{{0, 0, 12}, {3, 2, 12}, {1025, 1025, 10}, {4, 4, 9}} {
		if err := Quantize(make([]uint32, c.k), c.prec, make([]uint16, c.n)); err == nil {
			t.Errorf("Quantize(K=%d, len(cum)=%d, P=%d) succeeded", c.k, c.n, c.prec)
		}
	}
	for _, c := range []struct {
		cum  []uint16
		prec uint
	}{{nil, 12}, {[]uint16{1}, 12}, {[]uint16{0, 5, 5}, 12}, {[]uint16{0, 4096}, 12}, {[]uint16{0, 9, 3}, 12}} {
		if err := CheckTable(c.cum, c.prec); !errors.Is(err, ErrTable) {
			t.Errorf("CheckTable(%v, %d) = %v", c.cum, c.prec, err)
		}
	}
	if err := CheckTable([]uint16{0, 4095}, 12); err != nil {
		t.Error(err)
	}
}
