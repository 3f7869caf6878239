package train_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/train"
)

// TestTrainThreadIndependent checks that a codec's bytes depend on its
// inputs and options only: not on GOMAXPROCS, with float observations (the
// quantizer trains on every core) and codes, and with a bound on the
// states read that binds.
func TestTrainThreadIndependent(t *testing.T) {
	eps := walks.Episodes(3, 12)
	cases := map[string][]train.Option{
		"obs":   {train.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 2, OPQIters: 2})},
		"codes": {train.WithCodesOnly()},
		"bound": {train.WithCodesOnly(), train.WithMaxStates(275)},
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for name, opts := range cases {
		var first []byte
		for _, procs := range []int{1, 2, 5} {
			runtime.GOMAXPROCS(procs)
			c, err := train.Codec(context.Background(), eps, opts...)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			b, err := c.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = b
			} else if !bytes.Equal(b, first) {
				t.Errorf("%s: GOMAXPROCS %d trains another model", name, procs)
			}
		}
	}
	// The bound keeps the last states: training on them alone is the same.
	c1, err := train.Codec(context.Background(), eps, train.WithCodesOnly(), train.WithMaxStates(300))
	if err != nil {
		t.Fatal(err)
	}
	c2, err := train.Codec(context.Background(), walks.CodesOnly(eps[6:]), train.WithCodesOnly())
	if err != nil {
		t.Fatal(err)
	}
	if c1.Model().ID() != c2.Model().ID() {
		t.Error("a bound of 6 episodes' states trains another model than those 6 episodes")
	}
}

// TestBadInput: every bad argument is an error that errors.Is finds, never
// a panic.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	eps := walks.CodesOnly(walks.Episodes(1, 4))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	bad := walks.Episodes(1, 3)
	per := len(bad[0].Obs) / len(bad[0].Actions) // 8 slots of 32
	bad[1].Obs = slices.Clone(bad[1].Obs)
	bad[1].Obs[4*per+2*32+5] = float32(math.Inf(-1)) // episode 1, state 4, slot 2
	for _, c := range []struct {
		name string
		err  error
		want error
		msg  string
	}{
		{"no episodes", func() error { _, err := train.Codec(ctx, nil); return err }(), wmzip.ErrInput, ""},
		{"episode without codes", func() error { _, err := train.Codec(ctx, []wmzip.Episode{{Actions: []int64{0}}}); return err }(), wmzip.ErrInput, ""},
		{"codes not whole states", func() error {
			_, err := train.Codec(ctx, []wmzip.Episode{{Actions: []int64{0, 1}, Codes: []uint16{1, 2, 3}, Slots: 2}})
			return err
		}(), wmzip.ErrInput, ""},
		{"obs not whole states", func() error {
			_, err := train.Codec(ctx, []wmzip.Episode{{Actions: []int64{0, 1}, Obs: make([]float32, 5), Slots: 2}})
			return err
		}(), wmzip.ErrInput, ""},
		{"non-finite obs", func() error {
			_, err := train.Codec(ctx, bad, train.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1}))
			return err
		}(), wmzip.ErrInput, "episode 1: obs at state 4, slot 2 holds -Inf"},
		{"alphabet", func() error { _, err := train.Codec(ctx, eps, train.WithAlphabet(-1)); return err }(), wmzip.ErrInput, ""},
		{"codes above the alphabet", func() error { _, err := train.Codec(ctx, eps, train.WithAlphabet(2)); return err }(), wmzip.ErrInput, ""},
		{"quantizer", func() error { _, err := train.Codec(ctx, eps, train.WithQuantizer(opq.Config{M: -1})); return err }(), wmzip.ErrInput, ""},
		{"max states", func() error { _, err := train.Codec(ctx, eps, train.WithMaxStates(-1)); return err }(), wmzip.ErrInput, ""},
		{"holdout", func() error { _, err := train.Codec(ctx, eps, train.WithGate(4, gate.CalibOptions{})); return err }(), wmzip.ErrInput, ""},
		{"gate weights", func() error {
			_, err := train.Codec(ctx, eps, train.WithGate(-1, gate.CalibOptions{Weights: []float64{1}}))
			return err
		}(), wmzip.ErrInput, ""},
		{"cancelled", func() error { _, err := train.Codec(cancelled, eps); return err }(), context.Canceled, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(c.err, c.want) || !strings.Contains(c.err.Error(), c.msg) {
				t.Fatalf("%v, want %v (%q)", c.err, c.want, c.msg)
			}
		})
	}
}

// TestQuantizerQuality: a codec trained on observations records its
// quantizer's held-out quality, one of codes none.
func TestQuantizerQuality(t *testing.T) {
	ctx := context.Background()
	c, err := train.Codec(ctx, walks.Episodes(1, 8), train.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1}))
	if err != nil {
		t.Fatal(err)
	}
	q, ok := train.QuantizerQuality(c)
	if !ok || q.Vectors != 50*8 || !(q.Distortion() > 0 && q.Distortion() < 1) || !(q.Cosine() > 0.5 && q.Cosine() <= 1) {
		t.Fatalf("quality %+v, %v", q, ok)
	}
	c, err = train.Codec(ctx, walks.CodesOnly(walks.Episodes(1, 8)))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := train.QuantizerQuality(c); ok {
		t.Fatal("a codec of codes records a quantizer's quality")
	}
}

// ExampleCodec trains on float observations: the codec learns a
// quantizer (here 8 subspaces of 16 centroids per 32-float slot vector),
// the world model and the retention gate.
func ExampleCodec() {
	eps := walks.Episodes(1, 8) // an agent's episodes: actions, observations
	codec, err := train.Codec(context.Background(), eps,
		train.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1}),
		train.WithProgress(func(stage string, done, total int) {})) // a progress bar plugs in here
	if err != nil {
		log.Fatal(err)
	}
	g := codec.Model().Geom
	qu, _ := train.QuantizerQuality(codec)
	fmt.Printf("%d slots × %d codes < %d; slot vectors of %d floats; held out: %d\n", g.S, g.M, g.K, codec.Quantizer().Dim(), qu.Vectors)
	// Output: 8 slots × 8 codes < 16; slot vectors of 32 floats; held out: 400
}

// TestCopyLevelGate: a copy-level model's gate is calibrated on every
// coordinate, at the default level: its GATE section is the default-level
// model's, trained on the same episodes; a fast model's is its own.
func TestCopyLevelGate(t *testing.T) {
	ctx := context.Background()
	eps := walks.CodesOnly(walks.Episodes(2, 8))
	gateOf := func(level int) []byte {
		c, err := train.Codec(ctx, eps, train.WithModel(wm.TrainOptions{MaxRefStates: 65536, Level: level}))
		if err != nil {
			t.Fatal(err)
		}
		if c.Model().Level() != level {
			t.Fatalf("level %d trained as %d", level, c.Model().Level())
		}
		g := c.Model().Section(gate.Tag)
		if g == nil {
			t.Fatalf("level %d: no gate", level)
		}
		return g
	}
	def, cp, fast := gateOf(wm.LevelFull), gateOf(wm.LevelCopy), gateOf(wm.LevelFast)
	if !bytes.Equal(def, cp) {
		t.Error("the copy level's gate differs from the default level's")
	}
	if bytes.Equal(def, fast) {
		t.Error("the fast level's gate is the default level's: it should be calibrated on what a fast file codes")
	}
}
