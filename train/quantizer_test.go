package train

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/testkit"
)

func relMSE(t *testing.T, q *opq.Quantizer, x []float32) float64 {
	t.Helper()
	codes := make([]uint16, len(x)/q.Dim()*q.M()*max(q.Slots(), 1)/max(q.Slots(), 1))
	if err := q.Encode(x, codes); err != nil {
		t.Fatal(err)
	}
	rec := make([]float32, len(x))
	if err := q.Decode(codes, rec); err != nil {
		t.Fatal(err)
	}
	var e, n float64
	for i, v := range x {
		d := float64(rec[i]) - float64(v)
		e += d * d
		n += float64(v) * float64(v)
	}
	return e / n
}

func smallConfig() opq.Config {
	return opq.Config{Dim: 32, M: 4, K: 8, Iters: 10, OPQIters: 8, Seed: 42, Threads: 2}
}

func TestPlantedClustersRecovered(t *testing.T) {
	const n, sigma = 2000, 0.02
	cfg := smallConfig()
	cfg.OPQIters = -1 // clusters planted in the input coordinates: plain PQ
	x, labels := testkit.Planted(1, n, cfg.Dim, cfg.M, cfg.K, sigma, false)
	q, err := Quantizer(x, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The noise alone costs sigma² per coordinate against a mean squared
	// norm of about 1 per coordinate.
	if got := relMSE(t, q, x); got > 2*sigma*sigma {
		t.Errorf("relative MSE %.5f, want <= %.5f", got, 2*sigma*sigma)
	}
	codes := make([]uint16, n*cfg.M)
	if err := q.Encode(x, codes); err != nil {
		t.Fatal(err)
	}
	// Each planted cluster should map to one code of its own.
	for s := 0; s < cfg.M; s++ {
		code := map[int]uint16{}
		used := map[uint16]int{}
		for i := 0; i < n; i++ {
			l, c := labels[i*cfg.M+s], codes[i*cfg.M+s]
			if prev, ok := code[l]; !ok {
				code[l] = c
				used[c]++
			} else if prev != c {
				t.Fatalf("subspace %d: cluster %d split over codes %d and %d", s, l, prev, c)
			}
		}
		if len(used) != len(code) {
			t.Errorf("subspace %d: %d clusters share %d codes", s, len(code), len(used))
		}
	}
}

// TestRotationHelps plants clusters in a randomly rotated space: the learned
// rotation must beat plain PQ by a wide margin.
func TestRotationHelps(t *testing.T) {
	cfg := smallConfig()
	x, _ := testkit.Planted(9, 2000, cfg.Dim, cfg.M, cfg.K, 0.02, true)
	pqCfg := cfg
	pqCfg.OPQIters = -1
	pq, err := Quantizer(x, pqCfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.OPQIters = 30
	opq, err := Quantizer(x, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := relMSE(t, pq, x), relMSE(t, opq, x)
	t.Logf("relative MSE: PQ %.4f, OPQ %.4f", a, b)
	if b > 0.7*a {
		t.Errorf("OPQ %.4f is not well below PQ %.4f", b, a)
	}
}

func sum(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

func TestDeterministic(t *testing.T) {
	cfg := smallConfig()
	x, _ := testkit.Planted(2, 1500, cfg.Dim, cfg.M, cfg.K, 0.3, true)
	var ref []byte
	var refCodes []uint16
	for _, threads := range []int{1, 2, 5} {
		c := cfg
		c.Threads = threads
		q, err := Quantizer(x, c)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := q.MarshalBinary()
		codes := make([]uint16, 1500*cfg.M)
		q.SetThreads(threads)
		if err := q.Encode(x, codes); err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref, refCodes = b, codes
			continue
		}
		if !bytes.Equal(b, ref) {
			t.Errorf("threads=%d: trained quantizer differs", threads)
		}
		if !slices.Equal(codes, refCodes) {
			t.Errorf("threads=%d: codes differ", threads)
		}
	}
	// Encoding in pieces gives the same codes as one call.
	q, _ := opq.UnmarshalQuantizer(ref)
	var pieces []uint16
	for i := 0; i < 1500; i += 333 {
		j := min(i+333, 1500)
		c := make([]uint16, (j-i)*cfg.M)
		if err := q.Encode(x[i*cfg.Dim:j*cfg.Dim], c); err != nil {
			t.Fatal(err)
		}
		pieces = append(pieces, c...)
	}
	if !slices.Equal(pieces, refCodes) {
		t.Error("codes depend on the batch split")
	}
	// Another seed gives another quantizer.
	cfg.Seed++
	q2, err := Quantizer(x, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := q2.MarshalBinary(); bytes.Equal(b, ref) {
		t.Error("seed has no effect")
	}
}

func TestTrainErrors(t *testing.T) {
	x := make([]float32, 32*100)
	for _, c := range []opq.Config{
		{Dim: 32, M: 5, K: 8},                          // M does not divide Dim
		{Dim: 32, M: 4, K: 1},                          // K too small
		{Dim: 32, M: 4, K: 1 << 17},                    // K too large
		{Dim: 32, M: 4, K: 200},                        // fewer vectors than K
		{Dim: 32, M: 4, K: 8, PerSlot: true},           // no slot count
		{Dim: 64, M: 4, K: 8, Slots: 3, PerSlot: true}, // not whole slots
	} {
		if _, err := Quantizer(x, c); err == nil {
			t.Errorf("Quantizer(%+v) succeeded", c)
		}
	}
	x[5] = float32(math.NaN())
	if _, err := Quantizer(x, opq.Config{Dim: 32, M: 4, K: 8}); err == nil {
		t.Error("Train accepted NaN")
	}
}

func TestPerSlot(t *testing.T) {
	const n, slots = 400, 3
	cfg := smallConfig()
	cfg.PerSlot, cfg.Slots = true, slots
	cfg.OPQIters = -1
	x := make([]float32, n*slots*cfg.Dim)
	for s := 0; s < slots; s++ {
		xs, _ := testkit.Planted(uint64(10+s), n, cfg.Dim, cfg.M, cfg.K, 0.05, false)
		for i := 0; i < n; i++ {
			copy(x[(i*slots+s)*cfg.Dim:], xs[i*cfg.Dim:(i+1)*cfg.Dim])
		}
	}
	q, err := Quantizer(x, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if q.Slots() != slots {
		t.Fatalf("Slots() = %d", q.Slots())
	}
	if err := q.Encode(x[:cfg.Dim*2], make([]uint16, 2*cfg.M)); err == nil {
		t.Error("Encode accepted a partial step")
	}
	// Each slot has its own clusters: per-slot codebooks find them all.
	if got := relMSE(t, q, x); got > 2*0.05*0.05 {
		t.Errorf("relative MSE %.5f", got)
	}
	b, _ := q.MarshalBinary()
	q2, err := opq.UnmarshalQuantizer(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := q2.DistanceTables(8); len(got) != slots*cfg.M {
		t.Errorf("%d distance tables, want %d", len(got), slots*cfg.M)
	}
}

func TestProgress(t *testing.T) {
	cfg := smallConfig()
	x, _ := testkit.Planted(11, 600, cfg.Dim, cfg.M, cfg.K, 0.1, true)
	last := map[string][2]int{}
	cfg.Progress = func(stage string, done, total int) {
		if p, ok := last[stage]; ok && done < p[0] {
			t.Errorf("%s: done went back from %d to %d", stage, p[0], done)
		}
		last[stage] = [2]int{done, total}
	}
	q, err := Quantizer(x, cfg)
	if err != nil {
		t.Fatal(err)
	}
	q.SetProgress(cfg.Progress)
	if err := q.Encode(x, make([]uint16, 600*cfg.M)); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"pca", "opq", "kmeans", "encode"} {
		if p, ok := last[s]; !ok || p[0] != p[1] {
			t.Errorf("stage %s: last report %v", s, p)
		}
	}
}
