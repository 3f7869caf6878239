package opq

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQualityRotated checks that the comparisons made in the rotated space
// (without rotating back) agree with those of the decoded vectors, and
// that EncodeRotated codes as Encode does.
func TestQualityRotated(t *testing.T) {
	for _, perSlot := range []bool{false, true} {
		cfg := smallConfig()
		cfg.PerSlot, cfg.Slots = perSlot, 2
		rng := rand.New(rand.NewPCG(9, 10))
		x := make([]float32, 600*cfg.Dim*2)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		q, err := fitted(x, cfg)
		if err != nil {
			t.Fatal(err)
		}
		n := len(x) / cfg.Dim
		codes, plain := make([]uint16, n*cfg.M), make([]uint16, n*cfg.M)
		rot := make([]float32, len(x))
		if err := q.EncodeRotated(x, codes, rot); err != nil {
			t.Fatal(err)
		}
		if err := q.Encode(x, plain); err != nil || !slices.Equal(codes, plain) {
			t.Fatalf("EncodeRotated codes differ from Encode's: %v", err)
		}
		if r2, err := q.Rotate(x); err != nil || !slices.Equal(r2, rot) {
			t.Fatalf("Rotate differs from EncodeRotated: %v", err)
		}
		// Other codes than the nearest: a distortion to measure.
		for i := range codes {
			if i%5 == 0 {
				codes[i] = uint16(rng.IntN(cfg.K))
			}
		}
		dec := make([]float32, len(x))
		if err := q.Decode(codes, dec); err != nil {
			t.Fatal(err)
		}
		want, err := Compare(x, dec, cfg.Dim)
		if err != nil {
			t.Fatal(err)
		}
		got, err := q.CompareRotated(rot, codes)
		if err != nil {
			t.Fatal(err)
		}
		if got.Vectors != want.Vectors || math.Abs(got.Distortion()-want.Distortion()) > 1e-5 || math.Abs(got.Cosine()-want.Cosine()) > 1e-5 {
			t.Fatalf("rotated %+v, decoded %+v", got, want)
		}
		// Slot by slot: SlotError is the comparison of one vector.
		var sum float64
		for v := range n {
			sum += q.SlotError(v%2, rot[v*cfg.Dim:(v+1)*cfg.Dim], codes[v*cfg.M:(v+1)*cfg.M])
		}
		if math.Abs(sum-got.SumErr) > 1e-9*got.SumErr {
			t.Fatalf("slot errors sum to %g, CompareRotated %g", sum, got.SumErr)
		}
	}
}

// TestCompareEdges: zero vectors, and mismatched lengths refused.
func TestCompareEdges(t *testing.T) {
	q, err := Compare([]float32{0, 0, 1, 0, 0, 0}, []float32{0, 0, 1, 0, 1, 0}, 2)
	if err != nil {
		t.Fatal(err)
	}
	// (0,0)~(0,0): 0 and 1; (1,0)~(1,0): 0 and 1; (0,0)~(1,0): 1 and 0.
	if q.Vectors != 3 || q.SumErr != 1 || q.SumCos != 2 {
		t.Fatalf("%+v", q)
	}
	if _, err := Compare([]float32{1, 2, 3}, []float32{1, 2}, 3); err == nil {
		t.Fatal("mismatched lengths accepted")
	}
	if (Quality{}).Cosine() != 1 || (Quality{}).Distortion() != 0 {
		t.Fatal("empty quality")
	}
}
