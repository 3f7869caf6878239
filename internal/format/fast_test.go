package format

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/rans"
	"github.com/wmzip/wmzip/internal/testkit"
	"github.com/wmzip/wmzip/internal/wm"
)

// TestRoundTripFast writes and reads files of a model of the fast level
// (slot events) across geometries, precisions, lanes and chunk sizes, the
// model read back from its file.
func TestRoundTripFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	geoms := []struct {
		g    wm.Geometry
		prec uint
	}{
		{wm.Geometry{S: 1, M: 1, K: 2}, 10},
		{wm.Geometry{S: 2, M: 3, K: 3}, 12},
		{wm.Geometry{S: 3, M: 5, K: 300}, 16},
		{wm.Geometry{S: 4, M: 2, K: 17}, 11},
		{wm.Geometry{S: 32, M: 32, K: 64}, 16},
	}
	for gi, tc := range geoms {
		for _, lv := range []int{wm.LevelFast, wm.LevelCopy} {
			G := []int{1, 3, 8, 5, 4}[gi]
			lanes := []int{1, 2, 5, rans.MaxLanes, rans.DefaultLanes}[gi]
			t.Run(fmt.Sprintf("level%d/%dx%dxK%d/G%d/L%d", lv, tc.g.S, tc.g.M, tc.g.K, G, lanes), func(t *testing.T) {
				eps := genEpisodes(rng, tc.g, []int{0, 1, G - 1, G, G + 1, 2*G + 3, 20})
				m0 := trainModel(tc.g, tc.prec, eps)
				mf, err := m0.WithLevel(lv)
				if err != nil {
					t.Fatal(err)
				}
				raw, err := mf.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				m, err := wm.UnmarshalModel(raw)
				if err != nil {
					t.Fatal(err)
				}
				if m.ID() != mf.ID() || m.ID() == m0.ID() || m.Level() != lv || m.FileVersion() != 4 {
					t.Fatalf("model read back: ID %v level %d version %d; written %v, default %v", m.ID(), m.Level(), m.FileVersion(), mf.ID(), m0.ID())
				}
				b := encode(t, m, eps, WithKeyframeInterval(G), WithLanes(lanes))
				got, err := readAll(b, m)
				if err != nil {
					t.Fatal(err)
				}
				if err := sameEpisodes(got, eps); err != nil {
					t.Fatal("sequential:", err)
				}
				got, err = openAll(b, m)
				if err != nil {
					t.Fatal(err)
				}
				if err := sameEpisodes(got, eps); err != nil {
					t.Fatal("random access:", err)
				}
			})
		}
	}
}

// TestLossyFast writes files of a fast model with a gate calibrated on it
// (with slot events) at a finite λ and with levels: decoding gives the
// writer's reconstruction, which omits coordinates, and the copied slots
// are exact.
func TestLossyFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g := wm.Geometry{S: 6, M: 4, K: 16}
	eps := genEpisodes(rng, g, []int{0, 1, 7, 12, 20, 3})
	for _, lv := range []int{wm.LevelFast, wm.LevelCopy} {
		t.Run(fmt.Sprint("level", lv), func(t *testing.T) { lossyLevel(t, g, eps, lv) })
	}
}

func lossyLevel(t *testing.T, g wm.Geometry, eps []episode, lv int) {
	m0, err := trainModel(g, 12, eps).WithLevel(lv)
	if err != nil {
		t.Fatal(err)
	}
	m := calibrated(t, m0, eps)
	if m.Level() != lv {
		t.Fatal("the gate section dropped the level")
	}
	p, err := gate.FromModel(m)
	if err != nil {
		t.Fatal(err)
	}
	const G = 4
	restart := func(i, k, inChunk int) bool { return k == 0 || inChunk == G }
	for _, tc := range []struct {
		name   string
		opts   []Option
		lambda lambda.Lambda
		set    bool
	}{
		{"lambda", []Option{WithLambda(1 << 12)}, 1 << 12, false},
		{"levels", []Option{WithLevels(1<<12, LambdaLossless)}, 1 << 12, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := append([]Option{WithKeyframeInterval(G), WithLanes(3)}, tc.opts...)
			b := encodeHook(t, m, eps, func(w *Writer, i, k int) error {
				if tc.set {
					return w.SetLevel(0)
				}
				return nil
			}, append(opts, withExactCopies())...)
			got, err := decodeAllWays(b, m, opts...)
			if err != nil {
				t.Fatal(err)
			}
			d := p.Rule(tc.lambda).NewDecider()
			// The writer may code a chunk losslessly (level −1).
			levels := stateLevels(t, b, m, opts...)
			rules := func(i, k int) func(int, *wm.Predictor) (bool, uint16) {
				if levels[i][k] < 0 {
					return nil
				}
				return d.Decide
			}
			want := testkit.Reconstruct(m, eps, restart, rules, true)
			if err := sameEpisodes(got, want); err != nil {
				t.Fatal("decode differs from the writer's reconstruction:", err)
			}
			if sameEpisodes(got, eps) == nil {
				t.Fatal("the gate omitted nothing")
			}
		})
	}
}
