package opq

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// planted returns n vectors of dim whose rotated sub-vectors (M subspaces,
// under a random orthogonal rotation) are one of k planted centers plus
// Gaussian noise of deviation sigma, and the planted labels (n x M).
func planted(seed uint64, n, dim, m, k int, sigma float64, rotated bool) ([]float32, []int) {
	r := rand.New(rand.NewPCG(seed, 99))
	dsub := dim / m
	centers := make([]float64, m*k*dsub)
	for i := range centers {
		centers[i] = r.NormFloat64()
	}
	rot := randomOrthogonal(r, dim)
	if !rotated {
		clear(rot)
		for i := 0; i < dim; i++ {
			rot[i*dim+i] = 1
		}
	}
	x := make([]float32, n*dim)
	labels := make([]int, n*m)
	z := make([]float64, dim)
	for i := 0; i < n; i++ {
		for s := 0; s < m; s++ {
			c := r.IntN(k)
			labels[i*m+s] = c
			for j := 0; j < dsub; j++ {
				z[s*dsub+j] = centers[(s*k+c)*dsub+j] + sigma*r.NormFloat64()
			}
		}
		for a := 0; a < dim; a++ { // x = rotᵀ·z
			var v float64
			for b := 0; b < dim; b++ {
				v += rot[b*dim+a] * z[b]
			}
			x[i*dim+a] = float32(v)
		}
	}
	return x, labels
}

// randomOrthogonal returns a dim x dim orthogonal matrix by Gram-Schmidt.
func randomOrthogonal(r *rand.Rand, dim int) []float64 {
	q := make([]float64, dim*dim)
	for i := 0; i < dim; i++ {
		row := q[i*dim : (i+1)*dim]
		for j := range row {
			row[j] = r.NormFloat64()
		}
		for p := 0; p < i; p++ {
			prev := q[p*dim : (p+1)*dim]
			var d float64
			for j := range row {
				d += row[j] * prev[j]
			}
			for j := range row {
				row[j] -= d * prev[j]
			}
		}
		var n float64
		for _, v := range row {
			n += v * v
		}
		n = math.Sqrt(n)
		for j := range row {
			row[j] /= n
		}
	}
	return q
}

func relMSE(t *testing.T, q *Quantizer, x []float32) float64 {
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

func smallConfig() Config {
	return Config{Dim: 32, M: 4, K: 8, Iters: 10, OPQIters: 8, Seed: 42, Threads: 2}
}

func TestPlantedClustersRecovered(t *testing.T) {
	const n, sigma = 2000, 0.02
	cfg := smallConfig()
	cfg.OPQIters = -1 // clusters planted in the input coordinates: plain PQ
	x, labels := planted(1, n, cfg.Dim, cfg.M, cfg.K, sigma, false)
	q, err := Train(x, cfg)
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
	x, _ := planted(9, 2000, cfg.Dim, cfg.M, cfg.K, 0.02, true)
	pqCfg := cfg
	pqCfg.OPQIters = -1
	pq, err := Train(x, pqCfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.OPQIters = 30
	opq, err := Train(x, cfg)
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
	x, _ := planted(2, 1500, cfg.Dim, cfg.M, cfg.K, 0.3, true)
	var ref []byte
	var refCodes []uint16
	for _, threads := range []int{1, 2, 5} {
		c := cfg
		c.Threads = threads
		q, err := Train(x, c)
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
	q, _ := UnmarshalQuantizer(ref)
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
	q2, err := Train(x, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := q2.MarshalBinary(); bytes.Equal(b, ref) {
		t.Error("seed has no effect")
	}
}

func TestEncodeDecodeShapes(t *testing.T) {
	cfg := smallConfig()
	x, _ := planted(3, 300, cfg.Dim, cfg.M, cfg.K, 0.1, true)
	q, err := Train(x, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if q.Dim() != 32 || q.M() != 4 || q.K() != 8 || q.Slots() != 0 {
		t.Fatalf("geometry %d %d %d %d", q.Dim(), q.M(), q.K(), q.Slots())
	}
	if err := q.Encode(x[:31], make([]uint16, 4)); err == nil {
		t.Error("Encode accepted a partial vector")
	}
	if err := q.Encode(x[:64], make([]uint16, 4)); err == nil {
		t.Error("Encode accepted too few codes")
	}
	if err := q.Encode(nil, nil); err != nil {
		t.Errorf("Encode of nothing: %v", err)
	}
	if err := q.Decode([]uint16{0, 1, 2, 8}, make([]float32, 32)); err == nil {
		t.Error("Decode accepted a code >= K")
	}
	if err := q.Decode([]uint16{0, 1, 2}, make([]float32, 32)); err == nil {
		t.Error("Decode accepted a partial code vector")
	}
	codes := make([]uint16, 300*4)
	if err := q.Encode(x, codes); err != nil {
		t.Fatal(err)
	}
	for _, c := range codes {
		if c >= 8 {
			t.Fatalf("code %d >= K", c)
		}
	}
	a, b := make([]float32, len(x)), make([]float32, len(x))
	if err := q.Decode(codes, a); err != nil {
		t.Fatal(err)
	}
	q.SetThreads(1)
	if err := q.Decode(codes, b); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, b) {
		t.Error("Decode depends on the thread count")
	}
}

func TestTrainErrors(t *testing.T) {
	x := make([]float32, 32*100)
	for _, c := range []Config{
		{Dim: 32, M: 5, K: 8},                          // M does not divide Dim
		{Dim: 32, M: 4, K: 1},                          // K too small
		{Dim: 32, M: 4, K: 1 << 17},                    // K too large
		{Dim: 32, M: 4, K: 200},                        // fewer vectors than K
		{Dim: 32, M: 4, K: 8, PerSlot: true},           // no slot count
		{Dim: 64, M: 4, K: 8, Slots: 3, PerSlot: true}, // not whole slots
	} {
		if _, err := Train(x, c); err == nil {
			t.Errorf("Train(%+v) succeeded", c)
		}
	}
	x[5] = float32(math.NaN())
	if _, err := Train(x, Config{Dim: 32, M: 4, K: 8}); err == nil {
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
		xs, _ := planted(uint64(10+s), n, cfg.Dim, cfg.M, cfg.K, 0.05, false)
		for i := 0; i < n; i++ {
			copy(x[(i*slots+s)*cfg.Dim:], xs[i*cfg.Dim:(i+1)*cfg.Dim])
		}
	}
	q, err := Train(x, cfg)
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
	q2, err := UnmarshalQuantizer(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := q2.DistanceTables(8); len(got) != slots*cfg.M {
		t.Errorf("%d distance tables, want %d", len(got), slots*cfg.M)
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	cfg := smallConfig()
	x, _ := planted(4, 500, cfg.Dim, cfg.M, cfg.K, 0.1, true)
	q, err := Train(x, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := q.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != serializedSize(32, 4, 8, 1) {
		t.Fatalf("%d bytes", len(b))
	}
	q2, err := UnmarshalQuantizer(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := q2.MarshalBinary()
	if !bytes.Equal(b, b2) {
		t.Error("bytes change on a round trip")
	}
	c1, c2 := make([]uint16, 500*4), make([]uint16, 500*4)
	_ = q.Encode(x, c1)
	_ = q2.Encode(x, c2)
	if !slices.Equal(c1, c2) {
		t.Error("codes change on a round trip")
	}
}

func TestUnmarshalCorrupt(t *testing.T) {
	cfg := smallConfig()
	x, _ := planted(5, 200, cfg.Dim, cfg.M, cfg.K, 0.1, true)
	q, _ := Train(x, cfg)
	good, _ := q.MarshalBinary()
	reseal := func(b []byte) []byte {
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.ChecksumIEEE(b[:len(b)-4]))
		return b
	}
	cases := map[string][]byte{
		"empty":     nil,
		"truncated": good[:len(good)-1],
		"extended":  append(slices.Clone(good), 0),
		"checksum":  func() []byte { b := slices.Clone(good); b[100] ^= 1; return b }(),
		"magic":     func() []byte { b := slices.Clone(good); b[0] = 'X'; return b }(),
		"version":   reseal(func() []byte { b := slices.Clone(good); b[4] = 2; return b }()),
		"huge dim":  reseal(func() []byte { b := slices.Clone(good); binary.LittleEndian.PutUint32(b[8:], 1<<31); return b }()),
		"huge K":    reseal(func() []byte { b := slices.Clone(good); binary.LittleEndian.PutUint32(b[16:], 1<<30); return b }()),
		"bad M":     reseal(func() []byte { b := slices.Clone(good); binary.LittleEndian.PutUint32(b[12:], 5); return b }()),
		"slots":     reseal(func() []byte { b := slices.Clone(good); binary.LittleEndian.PutUint32(b[20:], 2); return b }()),
		"nan":       reseal(func() []byte { b := slices.Clone(good); binary.LittleEndian.PutUint32(b[24:], 0x7fc00000); return b }()),
	}
	for name, b := range cases {
		if _, err := UnmarshalQuantizer(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
}

func FuzzUnmarshalQuantizer(f *testing.F) {
	cfg := Config{Dim: 8, M: 2, K: 4, Iters: 2, OPQIters: 1, Seed: 1}
	x, _ := planted(6, 50, 8, 2, 4, 0.1, true)
	q, _ := Train(x, cfg)
	good, _ := q.MarshalBinary()
	f.Add(good)
	f.Add(good[:30])
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := UnmarshalQuantizer(b)
		if err != nil {
			return
		}
		out, _ := q.MarshalBinary()
		if !bytes.Equal(out, b) {
			t.Fatal("accepted bytes are not canonical")
		}
	})
}

func TestDistanceTables(t *testing.T) {
	cfg := smallConfig()
	x, _ := planted(7, 500, cfg.Dim, cfg.M, cfg.K, 0.1, true)
	q, _ := Train(x, cfg)
	for _, bits := range []uint{0, 33} {
		if q.DistanceTables(bits) != nil {
			t.Errorf("bits=%d accepted", bits)
		}
	}
	tabs := q.DistanceTables(12)
	if len(tabs) != cfg.M {
		t.Fatalf("%d tables", len(tabs))
	}
	top := uint32(0)
	for m, tab := range tabs {
		for a := 0; a < cfg.K; a++ {
			if tab[a*cfg.K+a] != 0 {
				t.Errorf("table %d: diagonal %d", m, tab[a*cfg.K+a])
			}
			for b := 0; b < cfg.K; b++ {
				if tab[a*cfg.K+b] != tab[b*cfg.K+a] {
					t.Errorf("table %d not symmetric", m)
				}
				top = max(top, tab[a*cfg.K+b])
			}
		}
	}
	if top != 1<<12-1 {
		t.Errorf("largest entry %d, want %d", top, 1<<12-1)
	}
	// Order agrees with float distances in the rotated (codebook) space.
	c := q.books[0].cent
	d := func(a, b int) float64 { return sqDist(c[a*8:a*8+8], c[b*8:b*8+8]) }
	if (d(0, 1) < d(0, 2)) != (tabs[0][1] <= tabs[0][2]) && tabs[0][1] != tabs[0][2] {
		t.Error("table order disagrees with distances")
	}
}

func TestArgmin(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for n := 1; n < 100; n++ {
		x := randFloats(r, n)
		if n > 3 {
			x[n-1] = x[1] // ties go to the first
		}
		if a, b := argmin(x), argminGeneric(x); a != b {
			t.Fatalf("n=%d: argmin %d, generic %d", n, a, b)
		}
	}
}

func TestProgress(t *testing.T) {
	cfg := smallConfig()
	x, _ := planted(11, 600, cfg.Dim, cfg.M, cfg.K, 0.1, true)
	last := map[string][2]int{}
	cfg.Progress = func(stage string, done, total int) {
		if p, ok := last[stage]; ok && done < p[0] {
			t.Errorf("%s: done went back from %d to %d", stage, p[0], done)
		}
		last[stage] = [2]int{done, total}
	}
	q, err := Train(x, cfg)
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
