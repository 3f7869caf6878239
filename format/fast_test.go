package format

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/wmzip/wmzip/rans"
	"github.com/wmzip/wmzip/wm"
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
		G := []int{1, 3, 8, 5, 4}[gi]
		lanes := []int{1, 2, 5, rans.MaxLanes, rans.DefaultLanes}[gi]
		t.Run(fmt.Sprintf("%dx%dxK%d/G%d/L%d", tc.g.S, tc.g.M, tc.g.K, G, lanes), func(t *testing.T) {
			eps := genEpisodes(rng, tc.g, []int{0, 1, G - 1, G, G + 1, 2*G + 3, 20})
			m0 := trainModel(tc.g, tc.prec, eps)
			mf, err := m0.WithLevel(wm.LevelFast)
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
			if m.ID() != mf.ID() || m.ID() == m0.ID() || m.Level() != wm.LevelFast || m.FileVersion() != 4 {
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
