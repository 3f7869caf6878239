package wmzip_test

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/opq"
)

// TestTrainThreadIndependent checks that a codec's bytes depend on its
// inputs and options only: not on GOMAXPROCS, with float observations (the
// quantizer trains on every core) and codes, and with a bound on the
// states read that binds.
func TestTrainThreadIndependent(t *testing.T) {
	eps := walks(3, 12)
	cases := map[string][]wmzip.TrainOption{
		"obs":   {wmzip.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 2, OPQIters: 2})},
		"codes": {wmzip.WithCodesOnly()},
		"bound": {wmzip.WithCodesOnly(), wmzip.WithMaxStates(275)},
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for name, opts := range cases {
		var first []byte
		for _, procs := range []int{1, 2, 5} {
			runtime.GOMAXPROCS(procs)
			c, err := wmzip.Train(context.Background(), eps, opts...)
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
	c1, err := wmzip.Train(context.Background(), eps, wmzip.WithCodesOnly(), wmzip.WithMaxStates(300))
	if err != nil {
		t.Fatal(err)
	}
	c2, err := wmzip.Train(context.Background(), codesOnly(eps[6:]), wmzip.WithCodesOnly())
	if err != nil {
		t.Fatal(err)
	}
	if c1.ID() != c2.ID() {
		t.Error("a bound of 6 episodes' states trains another model than those 6 episodes")
	}
}
