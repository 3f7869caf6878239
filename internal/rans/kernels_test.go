package rans

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// quantizeRef is Quantize of the products (g1[v]·g2[v]) >> 8 written
// plainly from the rule, without the kernels.
func quantizeRef(g1, g2 []uint16, prec uint) []uint16 {
	w := make([]uint32, len(g1))
	for v := range w {
		w[v] = uint32(g1[v]) * uint32(g2[v]) >> 8
	}
	cum := make([]uint16, len(w))
	QuantizeTrusted(w, prec, cum)
	return cum
}

// checkKernels compares QuantizeProducts and quantizeSteps (assembly where
// the machine has it) with the plain rule on one input.
func checkKernels(t *testing.T, g1, g2 []uint16, prec uint, f uint64) {
	t.Helper()
	want := quantizeRef(g1, g2, prec)
	got := make([]uint16, len(g1))
	w := make([]uint32, len(g1))
	QuantizeProducts(g1, g2, prec, got, w)
	if !slices.Equal(got, want) {
		t.Fatalf("QuantizeProducts(P=%d K=%d) = %v, want %v (g1 %v, g2 %v)", prec, len(g1), got, want, g1, g2)
	}
	// The step loop alone, for a factor that keeps every start below 2^16.
	var tot uint64
	var top uint32
	for _, x := range w {
		tot += uint64(x)
		top = max(top, x)
	}
	// QuantizeMax (its kernels' path where it has one) against the steps'
	// functions.
	q1, q2 := make([]uint16, len(w)), make([]uint16, len(w))
	QuantizeMax(w, tot, top, prec, q1)
	quantizeMaxGo(w, tot, top, prec, q2)
	if !slices.Equal(q1, q2) || !slices.Equal(q1, want) {
		t.Fatalf("QuantizeMax(P=%d K=%d) = %v, steps %v, want %v", prec, len(w), q1, q2, want)
	}
	if tot > 0 {
		f = min(f, (uint64(1<<16)-uint64(len(w)))<<32/tot)
	}
	c1, c2 := make([]uint16, len(w)), make([]uint16, len(w))
	if a, b := quantizeSteps(w, f, c1), quantizeGo(w, f, c2); a != b || !slices.Equal(c1, c2) {
		t.Fatalf("quantizeSteps(f=%d) = %d %v, Go %d %v", f, a, c1, b, c2)
	}
	// A fallback row's weights, scaled and lifted, and brought to 32 bits
	// at shifts that keep, cut and empty them.
	row := quantizeRef(g1, g2, 16)
	alpha, beta := f*0x9E3779B97F4A7C15, f>>3
	r1, r2 := make([]uint64, len(row)), make([]uint64, len(row))
	RowWeights(row, alpha, beta, r1)
	rowWeightsGo(row, alpha, beta, r2)
	if !slices.Equal(r1, r2) {
		t.Fatalf("RowWeights(%d, %d) = %v, Go %v (row %v)", alpha, beta, r1, r2, row)
	}
	for _, sh := range []uint{0, 7, 31, 40, 64} {
		q1, q2 := make([]uint32, len(r1)), make([]uint32, len(r1))
		t1, m1 := Narrow(r1, sh, q1)
		t2, m2 := narrowGo(r1, sh, q2)
		if t1 != t2 || m1 != m2 || !slices.Equal(q1, q2) {
			t.Fatalf("Narrow(%d) = %d %d %v, Go %d %d %v (w %v)", sh, t1, m1, q1, t2, m2, q2, r1)
		}
	}
	// The table's weighted sums of the two rows, against the plain sums
	// (exact: frequencies sum to 2^P and values are below 2^16).
	d1, d2 := Dots(want, prec, g1, g2)
	var e1, e2 uint64
	for s := range want {
		end := uint64(1) << prec
		if s+1 < len(want) {
			end = uint64(want[s+1])
		}
		e1 += (end - uint64(want[s])) * uint64(g1[s])
		e2 += (end - uint64(want[s])) * uint64(g2[s])
	}
	if uint64(d1) != e1 || uint64(d2) != e2 {
		t.Fatalf("Dots(P=%d) = %d %d, want %d %d (table %v)", prec, d1, d2, e1, e2, want)
	}
	// The mode of the quantized table, against the plain scan.
	v1, f1 := Mode(want, prec)
	v2, f2 := 0, uint32(0)
	for s := range want {
		end := uint32(1) << prec
		if s+1 < len(want) {
			end = uint32(want[s+1])
		}
		if d := end - uint32(want[s]); d > f2 {
			v2, f2 = s, d
		}
	}
	if v1 != v2 || f1 != f2 {
		t.Fatalf("Mode = %d %d, want %d %d (table %v)", v1, f1, v2, f2, want)
	}
	// The first index of every value of w, the largest among them.
	for v, x := range w {
		if got, want := firstOf(w, x), slices.Index(w, x); got != want || want > v {
			t.Fatalf("firstOf(%d) = %d, want %d (w %v)", x, got, want, w)
		}
	}
	for _, from := range []int{0, 1, len(w) / 2, len(w) - 1, len(w)} {
		d := uint16(f % 97)
		a, b := slices.Clone(c1), slices.Clone(c1)
		addFrom(a, from, d)
		addFromGo(b, from, d)
		if !slices.Equal(a, b) {
			t.Fatalf("addFrom(%d, %d) = %v, Go %v", from, d, a, b)
		}
	}
}

// TestQuantizeKernels checks the product and quantization kernels against
// the plain rule on random and extreme rows (every power 0, every power
// 65535, one peak, far-apart peaks that leave a total of 0).
func TestQuantizeKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 3000 {
		k := 64
		if trial%5 == 4 {
			k = 1 + r.IntN(100)
		}
		g1, g2 := make([]uint16, k), make([]uint16, k)
		for v := range k {
			switch trial % 6 {
			case 0:
				g1[v], g2[v] = uint16(r.Uint32()), uint16(r.Uint32())
			case 1:
				g1[v], g2[v] = 65535, 65535
			case 2:
				g1[v], g2[v] = uint16(r.Uint32()>>r.IntN(17)), uint16(r.Uint32()>>r.IntN(17))
			case 3:
				g1[v], g2[v] = uint16(r.IntN(3)), uint16(r.IntN(300))
			default:
				g1[v], g2[v] = uint16(r.Uint32()>>8), uint16(r.Uint32()>>12)
			}
		}
		if trial%6 == 5 {
			clear(g1)
			clear(g2)
			g1[r.IntN(k)], g2[r.IntN(k)] = 65535, 65535
		}
		prec := uint(MinPrecision + r.IntN(MaxPrecision-MinPrecision+1))
		for 1<<prec < k {
			prec++
		}
		checkKernels(t, g1, g2, prec, r.Uint64N(1<<33))
	}
}

// FuzzQuantizeKernels compares the kernels with the plain rule on rows of
// 64 powers taken from the input.
func FuzzQuantizeKernels(f *testing.F) {
	f.Add(make([]byte, 256), uint8(16), uint64(1<<31))
	f.Fuzz(func(t *testing.T, b []byte, p uint8, fac uint64) {
		if len(b) < 256 {
			return
		}
		g1, g2 := make([]uint16, 64), make([]uint16, 64)
		for v := range 64 {
			g1[v] = binary.LittleEndian.Uint16(b[2*v:])
			g2[v] = binary.LittleEndian.Uint16(b[128+2*v:])
		}
		prec := uint(6 + int(p)%11)
		checkKernels(t, g1, g2, prec, fac%(1<<33))
	})
}
