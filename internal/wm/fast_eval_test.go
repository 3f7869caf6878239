package wm

import (
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/wmzip/wmzip/internal/rans"
)

// fastCost drives p over the episodes as a coder would and returns the
// ideal code length in bits and the slot events' share of it.
func fastCost(p *Predictor, eps []Episode) (bits, slotBits float64, copies, escapes int) {
	g := p.Model().Geom
	n, M := g.N(), g.M
	prec := p.Precision()
	cost := func(f uint32) float64 { return float64(prec) - math.Log2(float64(f)) }
	for _, e := range eps {
		p.Reset()
		for s := range e.Actions {
			p.Begin(e.Actions[s])
			codes := e.Codes[s*n : (s+1)*n]
			for j := 0; j < n; j++ {
				if j%M == 0 && p.SlotEvents() {
					if tab := p.SlotTable(j); tab != nil {
						sym := p.SlotSymbol(codes[j : j+M])
						b := cost(rans.Freq(tab, sym, prec))
						bits += b
						slotBits += b
						if p.CommitSlot(sym) != nil {
							copies++
							j += M - 1
							continue
						}
					}
					escapes++
				}
				v := codes[j]
				top, hit := p.Predict(j)
				switch {
				case hit == 0:
					bits += cost(rans.Freq(p.Table(), int(v), prec))
				case v == top:
					bits += cost(hit)
				default:
					bits += cost(1<<prec-hit) + cost(rans.Freq(p.Table(), int(v), prec))
				}
				p.Commit(j, v)
			}
		}
	}
	return
}

// TestEvalFast reports the fast level's ideal code length of WMZIP_TEST
// with a model trained on WMZIP_TRAIN, beside the default level's.
func TestEvalFast(t *testing.T) {
	if os.Getenv("WMZIP_TRAIN") == "" || os.Getenv("WMZIP_TEST") == "" {
		t.Skip("set WMZIP_TRAIN and WMZIP_TEST")
	}
	g, tr := loadEpisodes(t, os.Getenv("WMZIP_TRAIN"))
	g2, te := loadEpisodes(t, os.Getenv("WMZIP_TEST"))
	g.K = max(g.K, g2.K)
	m, err := Train(g, tr, TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	states := 0
	for _, e := range te {
		states += len(e.Actions)
	}
	for _, l := range []int{LevelFast, LevelFull} {
		ml, err := m.WithLevel(l)
		if err != nil {
			t.Fatal(err)
		}
		p := ml.NewPredictor()
		t0 := time.Now()
		bits, sb, cp, es := fastCost(p, te)
		el := time.Since(t0)
		t.Logf("level %d: %.1f bits/state (slot events %.1f), %d copies, %d escapes; %.0f states/s (%.0f ns/coord)",
			l, bits/float64(states), sb/float64(states), cp, es, float64(states)/el.Seconds(), float64(el.Nanoseconds())/float64(states*g.N()))
	}
}

// TestEqualTile checks equalTile on tiles of every length to 9 that
// differ in one code, or in none.
func TestEqualTile(t *testing.T) {
	for n := range 10 {
		a := make([]uint16, n)
		for i := range a {
			a[i] = uint16(7*i + 1)
		}
		if !equalTile(a, slices.Clone(a)) {
			t.Fatalf("length %d: equal tiles differ", n)
		}
		for i := range n {
			for _, x := range []uint16{1, 0x8000, 0xFFFF} {
				b := slices.Clone(a)
				b[i] ^= x
				if equalTile(a, b) || equalTile(b, a) {
					t.Fatalf("length %d: tiles differing at %d by %#x equal", n, i, x)
				}
			}
		}
	}
}
