package gate

import (
	"math/rand/v2"
	"testing"

	"github.com/wmzip/wmzip/internal/fixed"
	"github.com/wmzip/wmzip/internal/wm"
)

// TestFillExample is the weak prediction worked in SPEC.md 5.3.
func TestFillExample(t *testing.T) {
	p := &Params{Geom: wm.Geometry{S: 1, M: 1, K: 3}, Precision: 10,
		Dist: [][]uint16{{0, 100, 900, 100, 0, 400, 900, 400, 0}}}
	p.Prepare()
	cum := []uint16{0, 448, 832}
	fc := []uint16{0, 21846, 43691} // the fallback row: about uniform
	if r := p.RowFill(0, fc); r != 1 {
		t.Fatalf("row fill %d, want 1", r)
	}
	if c, e := p.Fill(0, cum, fc); c != 1 || e != 121600 {
		t.Fatalf("fill %d, E %d; want 1, 121600", c, e)
	}
	if e := p.ExpectedDistance(0, cum, 10, 0); e != 211200 {
		t.Fatalf("E(0) = %d, want 211200", e)
	}
	h, _ := twoStepH(448, 10, uint32(fixed.Lg(2)))
	if h != 396 {
		t.Fatalf("H = %d, want 396", h)
	}
	const at = 55947601 // λ from which the coordinate is retained
	if keepWeak(at-1, 121600, WeightOne, h, 10) || !keepWeak(at, 121600, WeightOne, h, 10) {
		t.Fatalf("retained from a λ other than %d", at)
	}
	// The search fill of SPEC.md 5.3: the modal value 1 is the central code.
	if c := p.SpreadFill(0, []uint16{0, 300, 748}, 1, 448); c != 0 {
		t.Fatalf("spread fill %d, want 0", c)
	}
	// Uniform distances: the fill is the modal value.
	u := &Params{Geom: p.Geom, Precision: 10}
	if c, e := u.Fill(0, cum, fc); c != 0 || e != (1024-448)*UnitDistance {
		t.Fatalf("uniform: fill %d, E %d", c, e)
	}
}

// TestFillLowest: the row fill is the exact minimum of the expected
// distance over every value, the lowest among equals; the fill is the row
// fill only where it is strictly nearer than the modal value.
func TestFillLowest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, K := range []int{2, 3, 16, 64} {
		p, d := tiedParams(rng, K)
		for range 200 {
			fc := randomTable(rng, K, 16)
			c := p.RowFill(0, fc)
			e := p.ExpectedDistance(0, fc, 16, c)
			f := freqs(fc, 16)
			for v := range K {
				var ev uint64
				for u := range K {
					ev += uint64(f[u]) * uint64(d[v*K+u])
				}
				if ev < uint64(e) || ev == uint64(e) && v < int(c) {
					t.Fatalf("K=%d: fill %d (E %d), value %d has E %d", K, c, e, v, ev)
				}
				if v == int(c) && ev != uint64(e) {
					t.Fatalf("K=%d: E %d of the fill, computed %d", K, e, ev)
				}
			}
			cum := randomTable(rng, K, 12)
			fill, fe := p.Fill(0, cum, fc)
			m := modalOf(freqs(cum, 12))
			em := p.ExpectedDistance(0, cum, 12, m)
			er := p.ExpectedDistance(0, cum, 12, c)
			if want := map[bool]uint16{true: c, false: m}[er < em]; fill != want || fe != min(er, em) {
				t.Fatalf("K=%d: fill %d (E %d); modal %d (E %d), row fill %d (E %d)", K, fill, fe, m, em, c, er)
			}
		}
	}
}

// tiedParams returns parameters of one random distance table d over K
// codes with many equal distances, precision 12.
func tiedParams(rng *rand.Rand, K int) (*Params, []uint16) {
	d := make([]uint16, K*K)
	for a := range K {
		for b := a + 1; b < K; b++ {
			x := uint16(rng.IntN(8) * 1000) // ties are common
			d[a*K+b], d[b*K+a] = x, x
		}
	}
	p := &Params{Geom: wm.Geometry{S: 1, M: 1, K: K}, Precision: 12, Dist: [][]uint16{d}}
	p.Prepare()
	return p, d
}

func modalOf(f []uint32) uint16 {
	best := 0
	for v := range f {
		if f[v] > f[best] {
			best = v
		}
	}
	return uint16(best)
}

func randomTable(rng *rand.Rand, K int, prec uint) []uint16 {
	f := make([]uint32, K)
	left := uint32(1)<<prec - uint32(K)
	for v := range K {
		f[v] = 1
	}
	for left > 0 {
		x := min(left, uint32(rng.IntN(1<<(prec-2))+1))
		f[rng.IntN(K)] += x
		left -= x
	}
	cum := make([]uint16, K)
	var s uint32
	for v := range K {
		cum[v] = uint16(s)
		s += f[v]
	}
	return cum
}

func freqs(cum []uint16, prec uint) []uint32 {
	f := make([]uint32, len(cum))
	for v := range cum {
		if v+1 < len(cum) {
			f[v] = uint32(cum[v+1]) - uint32(cum[v])
		} else {
			f[v] = 1<<prec - uint32(cum[v])
		}
	}
	return f
}

// TestSpreadFill: the spread fill is, among the values of frequency at
// least F/16, the one whose mean distance from the other codes is nearest
// the prediction's average, the modal value on ties, else the lowest;
// the modal value under uniform distances.
func TestSpreadFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 27))
	for _, K := range []int{2, 3, 16, 64} {
		p, d := tiedParams(rng, K)
		u := &Params{Geom: p.Geom, Precision: 12}
		for range 200 {
			cum := randomTable(rng, K, 12)
			f := freqs(cum, 12)
			v := modalOf(f)
			got := p.SpreadFill(0, cum, v, f[v])
			if c := u.SpreadFill(0, cum, v, f[v]); c != v {
				t.Fatalf("uniform distances: fill %d, modal %d", c, v)
			}
			V := make([]int64, K)
			var e int64
			for c := range K {
				var s int64
				for b := range K {
					s += int64(d[c*K+b])
				}
				V[c] = s / int64(K-1)
				e += int64(f[c]) * V[c]
			}
			off := func(c int) int64 {
				x := V[c]<<12 - e
				if x < 0 {
					return -x
				}
				return x
			}
			if 16*f[got] < f[v] {
				t.Fatalf("K=%d: fill %d of frequency %d, modal %d", K, got, f[got], f[v])
			}
			for c := range K {
				if 16*f[c] < f[v] {
					continue
				}
				if off(c) < off(int(got)) || off(c) == off(int(got)) && got != v && (uint16(c) == v || c < int(got)) {
					t.Fatalf("K=%d: fill %d (off %d), value %d (off %d), modal %d", K, got, off(int(got)), c, off(c), v)
				}
			}
		}
	}
}
