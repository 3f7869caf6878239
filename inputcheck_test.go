package wmzip_test

import (
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/opq"
)

// TestNonFiniteObs (issue 24, point 2): NaN or an infinity in
// observations is an ErrInput naming the state and slot, from training,
// from WriteObs and from WriteEpisodeOf, never codes of something else.
func TestNonFiniteObs(t *testing.T) {
	eps := walks(1, 3)
	per := len(eps[0].Obs) / len(eps[0].Actions) // 8 slots of 32
	bad := slices.Clone(eps)
	bad[1].Obs = slices.Clone(eps[1].Obs)
	bad[1].Obs[4*per+2*32+5] = float32(math.Inf(-1)) // episode 1, state 4, slot 2
	_, err := wmzip.Train(context.Background(), bad, wmzip.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1}))
	if !errors.Is(err, wmzip.ErrInput) || !strings.Contains(err.Error(), "episode 1: obs at state 4, slot 2 holds -Inf") {
		t.Fatalf("Train: %v", err)
	}
	codec, err := wmzip.Train(context.Background(), eps, wmzip.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1}))
	if err != nil {
		t.Fatal(err)
	}
	w, err := wmzip.NewWriter(io.Discard, codec)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEpisodeOf(&bad[1]); !errors.Is(err, wmzip.ErrInput) || !strings.Contains(err.Error(), "obs at state 4, slot 2 holds -Inf") {
		t.Fatalf("WriteEpisodeOf: %v", err)
	}
	state := slices.Clone(eps[0].Obs[:per])
	state[7*32] = float32(math.NaN())
	if err := w.WriteObs(-1, state); !errors.Is(err, wmzip.ErrInput) || !strings.Contains(err.Error(), "slot 7 holds NaN") {
		t.Fatalf("WriteObs: %v", err)
	}
}
