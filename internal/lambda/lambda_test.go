package lambda

import (
	"math"
	"testing"
)

// TestFromFloat checks the unit (16.16, rounded to nearest), the range
// and lossless, and that Float undoes FromFloat on the 2^-16 grid.
func TestFromFloat(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want Lambda
	}{
		{0, 0}, {1, 65536}, {0.5, 32768}, {100, 100 << 16},
		{1.0 / 131072, 1}, // half a step rounds up
		{Max, Lambda(math.Round(Max * 65536))},
		{math.Inf(1), Lossless},
	} {
		got, err := FromFloat(c.in)
		if err != nil || got != c.want {
			t.Errorf("FromFloat(%v) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []float64{-1, -1e-9, 65536, math.NaN(), math.Inf(-1)} {
		if _, err := FromFloat(bad); err == nil {
			t.Errorf("FromFloat(%v): no error", bad)
		}
	}
	for _, l := range []Lambda{0, 1, 65536, 12345678, Lossless} {
		back, err := FromFloat(l.Float())
		if err != nil || back != l {
			t.Errorf("FromFloat(%d.Float()) = %d, %v", l, back, err)
		}
	}
	if s := Lossless.Text(); s != "lossless" {
		t.Errorf("Lossless prints %q", s)
	}
	if s := Lambda(110 << 16).Text(); s != "110" {
		t.Errorf("110 prints %q", s)
	}
	if f := Floats([]Lambda{65536, Lossless}); len(f) != 2 || f[0] != 1 || !math.IsInf(f[1], 1) {
		t.Errorf("Floats = %v", f)
	}
}
