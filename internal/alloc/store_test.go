package alloc_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/alloc"
	"github.com/wmzip/wmzip/internal/ctmc"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/train"
)

// TestStoreBadInput: every bad argument of Store is an error that
// errors.Is finds, never a panic.
func TestStoreBadInput(t *testing.T) {
	ctx := context.Background()
	codec, err := train.Codec(ctx, walks(1, 4))
	if err != nil {
		t.Fatal(err)
	}
	nogate, err := train.Codec(ctx, walks(1, 4), train.WithGate(0, gate.CalibOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	test := walks(2, 1)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	store := func(ctx context.Context, c *wmzip.Codec, counts []int64, budget float64, opts ...alloc.Option) error {
		_, err := alloc.Store(ctx, &bytes.Buffer{}, c, test, counts, budget, opts...)
		return err
	}
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"budget", store(ctx, codec, make([]int64, 50), -1), wmzip.ErrInput},
		{"counts", store(ctx, codec, make([]int64, 3), 40), wmzip.ErrInput},
		{"τ", store(ctx, codec, make([]int64, 50), 40, alloc.WithTau(math.Inf(1))), wmzip.ErrInput},
		{"tail guard", store(ctx, codec, make([]int64, 50), 40, alloc.WithTailGuard(0.5)), wmzip.ErrInput},
		{"allocation", store(ctx, codec, make([]int64, 50), 40, alloc.WithAllocation("x", alloc.TailFlat)), wmzip.ErrInput},
		{"keyframe interval", store(ctx, codec, make([]int64, 50), 40, alloc.WithKeyframeInterval(0)), wmzip.ErrInput},
		{"without gate", store(ctx, nogate, make([]int64, 50), 40), wmzip.ErrInput},
		{"below the lowest level", store(ctx, codec, make([]int64, 50), 0.5), alloc.ErrBudget},
		{"cancelled", store(cancelled, codec, make([]int64, 50), 75), context.Canceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !errors.Is(c.err, c.want) {
				t.Fatalf("%v, want %v", c.err, c.want)
			}
		})
	}
	counts, outside := alloc.Counts([]ctmc.Access{{Episode: 0, Step: 3}, {Episode: 0, Step: 3}, {Episode: 1, Step: 0}, {Episode: -1}}, []int{5, 2})
	if outside != 1 || len(counts) != 7 || counts[3] != 2 || counts[5] != 1 {
		t.Fatalf("Counts: %v, %d outside", counts, outside)
	}
}
