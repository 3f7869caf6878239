package format

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

// noisyTiles returns episodes whose slots are drawn from a few prototype
// tiles, the slot's tile following the slot's previous one, each code
// replaced by another with probability 1/12: slots that are near, not
// equal to, the tiles a copy-level model offers.
func noisyTiles(rng *rand.Rand, g wm.Geometry, episodes, steps int) []episode {
	const protos = 6
	tiles := make([][]uint16, protos)
	for i := range tiles {
		tiles[i] = make([]uint16, g.M)
		for m := range tiles[i] {
			tiles[i][m] = uint16(rng.IntN(g.K))
		}
	}
	n := g.N()
	eps := make([]episode, episodes)
	for i := range eps {
		e := episode{Codes: make([]uint16, n*steps), Actions: make([]int64, steps)}
		cur := make([]int, g.S)
		for s := range cur {
			cur[s] = rng.IntN(protos)
		}
		for k := range steps {
			e.Actions[k] = int64(rng.IntN(3))
			for s := range g.S {
				if rng.IntN(4) == 0 {
					cur[s] = rng.IntN(protos)
				}
				for m, v := range tiles[cur[s]] {
					if rng.IntN(12) == 0 {
						v = uint16(rng.IntN(g.K))
					}
					e.Codes[k*n+s*g.M+m] = v
				}
			}
		}
		eps[i] = e
	}
	return eps
}

// TestNearestCopies: under a gate, the writer of a model with slot events
// copies a candidate that differs from a slot where it judges that
// cheaper than escaping it (an encoder's choice the decoder reads as any
// copy). The decode is the writer's reconstruction, the account counts
// the copies' differences, and at a distortion target the files are no
// larger than those that copy exact tiles only, and smaller overall.
func TestNearestCopies(t *testing.T) {
	g := wm.Geometry{S: 8, M: 8, K: 16}
	eps := noisyTiles(rand.New(rand.NewPCG(7, 8)), g, 6, 60)
	weps := make([]wm.Episode, len(eps))
	for i, e := range eps {
		weps[i] = wm.Episode{Codes: e.Codes, Actions: e.Actions}
	}
	var near, exact int
	for _, lv := range []int{wm.LevelCopy, wm.LevelFast} {
		m0, err := trainModel(g, 12, eps).WithLevel(lv)
		if err != nil {
			t.Fatal(err)
		}
		m := calibrated(t, m0, eps)
		p, err := gate.FromModel(m)
		if err != nil {
			t.Fatal(err)
		}
		differ := false
		for _, lambda := range []lambda.Lambda{1 << 14, 1 << 16, 1 << 18, 1 << 20} {
			// Every chunk at λ (no lossless alternative, which LastState
			// cannot foresee).
			opts := []Option{WithLambda(lambda), WithKeyframeInterval(16), withChunkModes(func(int) chunkMode { return chunkMode{} })}
			b, recon, acct := encodeRecon(t, m, eps, opts...)
			got, err := readAll(b, m)
			if err != nil {
				t.Fatal(err)
			}
			var wrong, dist uint64
			for i, e := range got {
				if !slices.Equal(e.Codes, recon[i]) {
					t.Fatalf("level %d λ %#x: episode %d decodes otherwise than the writer reconstructed it", lv, lambda, i)
				}
				for j, v := range e.Codes {
					if u := eps[i].Codes[j]; u != v {
						wrong++
						dist += uint64(p.Distance(j%g.N(), v, u))
					}
				}
			}
			if acct.Wrong != wrong || acct.DistSum != dist {
				t.Fatalf("level %d λ %#x: account %d wrong, distance %d; the decode %d, %d", lv, lambda, acct.Wrong, acct.DistSum, wrong, dist)
			}
			_, exact, _ := encodeRecon(t, m, eps, append(opts, withExactCopies())...)
			for i := range recon {
				differ = differ || !slices.Equal(recon[i], exact[i])
			}
		}
		if !differ {
			t.Errorf("level %d: no copy of a differing candidate", lv)
		}
		for _, target := range []float64{0.01, 0.05, 0.2} {
			a, err := SearchLambda(context.Background(), m, weps, target, nil, WithKeyframeInterval(16))
			if err != nil {
				t.Fatal(err)
			}
			b, err := SearchLambda(context.Background(), m, weps, target, nil, WithKeyframeInterval(16), withExactCopies())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("level %d, distortion at most %v: %d bytes (%.4f), %d copying exact tiles only (%.4f)", lv, target, len(a.File), a.Distortion, len(b.File), b.Distortion)
			if len(a.File) > len(b.File) || a.Distortion > target {
				t.Errorf("level %d, distortion at most %v: %d bytes at %.4f, %d copying exact tiles only", lv, target, len(a.File), a.Distortion, len(b.File))
			}
			near += len(a.File)
			exact += len(b.File)
		}
	}
	// (The copy level codes few events on these slots, which are rarely
	// exact copies: its files may be the same.)
	if near >= exact {
		t.Errorf("%d bytes over the levels and targets, %d copying exact tiles only", near, exact)
	}
}

// encodeRecon is encode returning also the writer's reconstruction of
// every episode and its account.
func encodeRecon(t *testing.T, m *wm.Model, eps []episode, opts ...Option) ([]byte, [][]uint16, Account) {
	t.Helper()
	var w *Writer
	recon := make([][]uint16, len(eps))
	var last []uint16
	b := encodeHook(t, m, eps, func(wr *Writer, i, k int) error {
		w = wr
		if k > 0 {
			last = wr.LastState(last)
			recon[i] = append(recon[i], last...)
		} else if i > 0 {
			last = wr.LastState(last)
			recon[i-1] = append(recon[i-1], last...)
		}
		return nil
	}, opts...)
	last = w.LastState(last)
	recon[len(eps)-1] = append(recon[len(eps)-1], last...)
	return b, recon, w.Account()
}
