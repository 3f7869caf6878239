package fixed

import (
	"math"
	"testing"
)

// TestTableClosedForm is issue 25, point 5: SPEC.md 1.4 defines the two
// tables by closed forms that double precision evaluates exactly, with
// their sums as check values. Every entry must be the formula's, at least
// 0.0008 from a half-integer, and the sums those the text gives.
func TestTableClosedForm(t *testing.T) {
	var sumL, sumE uint64
	for i := range 256 {
		l := 256 * math.Log2(1+float64(i)/256)
		e := 65536 * math.Exp2(-float64(i)/256)
		if uint64(math.Round(l)) != uint64(log2Frac[i]) || uint64(math.Round(e)) != uint64(exp2Neg[i]) {
			t.Fatalf("entry %d: %d, %d; the formulas give %v, %v", i, log2Frac[i], exp2Neg[i], l, e)
		}
		if i > 0 && (math.Abs(l-math.Floor(l)-0.5) < 0.0008 || math.Abs(e-math.Floor(e)-0.5) < 0.0008) {
			t.Fatalf("entry %d within 0.0008 of a half-integer: %v, %v", i, l, e)
		}
		sumL += uint64(log2Frac[i])
		sumE += uint64(exp2Neg[i])
	}
	if sumL != 36401 || sumE != 12118596 {
		t.Fatalf("sums %d, %d; SPEC.md 1.4 says 36401, 12118596", sumL, sumE)
	}
}

// TestLg checks the examples of SPEC.md 1.4.
func TestLg(t *testing.T) {
	for _, c := range []struct {
		x    uint64
		want int32
	}{{0, 0}, {1, 0}, {2, 256}, {3, 406}, {4, 512}, {65535, 4095}, {65536, 4096}, {1 << 63, 63 * 256}} {
		if got := Lg(c.x); got != c.want {
			t.Errorf("Lg(%d) = %d, want %d", c.x, got, c.want)
		}
	}
	for x := uint64(1); x < 1<<17; x++ {
		if Lg(x+1) < Lg(x) {
			t.Fatalf("Lg(%d) < Lg(%d)", x+1, x)
		}
	}
}

// TestW checks the examples of SPEC.md 1.4.
func TestW(t *testing.T) {
	for _, c := range []struct {
		d    int32
		want uint64
	}{{-5, 65536}, {0, 65536}, {1, 65359}, {256, 32768}, {16 * 256, 1}, {16*256 + 1, 0}, {17 * 256, 0}, {30 * 256, 0}, {1 << 30, 0}} {
		if got := W(c.d); got != c.want {
			t.Errorf("W(%d) = %d, want %d", c.d, got, c.want)
		}
	}
}

func TestLog2Fix(t *testing.T) {
	for x := uint64(1); x <= 1<<16; x++ {
		got := float64(Log2Fix(x)) / (1 << 16)
		want := math.Log2(float64(x))
		if got > want+1e-12 || want-got > 1.0/(1<<16)+1e-9 {
			t.Fatalf("Log2Fix(%d) = %v, want %v", x, got, want)
		}
	}
	if Log2Fix(1<<10) != 10<<16 || Log2Fix(1) != 0 {
		t.Fatal("powers of two are not exact")
	}
}

// TestCost checks Cost's table, which holds log2fix of
// normalized frequencies only, against log2fix itself.
func TestCost(t *testing.T) {
	InitCost()
	if Cost(1<<9, 10) != 1<<CostFrac {
		t.Fatal("powers of two are not exact")
	}
	for f := uint32(1); f <= 1<<16; f++ {
		for _, prec := range []uint{16, 17} {
			if got, want := Cost(f, prec), uint64(prec)<<CostFrac-uint64(Log2Fix(uint64(f))); got != want {
				t.Fatalf("Cost(%d, %d) = %d, want %d", f, prec, got, want)
			}
		}
	}
}
