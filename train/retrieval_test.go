package train_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/train"
)

func TestRetrievalWeights(t *testing.T) {
	ctx := context.Background()
	c, err := train.Codec(ctx, walks.Episodes(1, 8), train.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1}))
	if err != nil {
		t.Fatal(err)
	}
	eps := walks.Episodes(2, 6)
	w, err := train.RetrievalWeights(ctx, c, eps, train.RetrievalOptions{Rate: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	g := c.Model().Geom
	if len(w) != g.N() {
		t.Fatalf("%d weights for %d coordinates", len(w), g.N())
	}
	for j, v := range w {
		if !(v >= 1.0/8) || math.IsInf(v, 0) || v != w[j/g.M*g.M] {
			t.Fatalf("weight %d = %v: want ≥ 1/8, one per slot", j, v)
		}
	}
	ws, err := train.RetrievalWeights(ctx, c, eps, train.RetrievalOptions{Rate: 0.9, Subspaces: true})
	if err != nil {
		t.Fatal(err)
	}
	// A slot's factor (as without Subspaces) times a subspace's.
	for j, v := range ws {
		want := w[j/g.M*g.M] * ws[j%g.M] / w[0]
		if !(v >= 1.0/64) || math.Abs(v-want) > 1e-9*want {
			t.Fatalf("weight %d = %v, want %v: a slot's times a subspace's", j, v, want)
		}
	}
	// The weights calibrate a gate.
	if _, err := train.Codec(ctx, walks.Episodes(1, 8), train.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1}), train.WithGate(-1, gateWith(w))); err != nil {
		t.Fatal(err)
	}
	if _, err := train.RetrievalWeights(ctx, c, walks.CodesOnly(eps), train.RetrievalOptions{}); !errors.Is(err, wmzip.ErrInput) {
		t.Fatalf("codes only: %v", err)
	}
	if _, err := train.RetrievalWeights(ctx, c, eps[:1], train.RetrievalOptions{}); !errors.Is(err, wmzip.ErrInput) {
		t.Fatalf("one episode: %v", err)
	}
}

func gateWith(w []float64) gate.CalibOptions { return gate.CalibOptions{Weights: w} }
