package opq

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wmzip/wmzip/internal/testkit"
)

func TestEncodeDecodeShapes(t *testing.T) {
	cfg := smallConfig()
	x, _ := testkit.Planted(3, 300, cfg.Dim, cfg.M, cfg.K, 0.1, true)
	q, err := fitted(x, cfg)
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

func TestMarshalRoundTrip(t *testing.T) {
	cfg := smallConfig()
	x, _ := testkit.Planted(4, 500, cfg.Dim, cfg.M, cfg.K, 0.1, true)
	q, err := fitted(x, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := q.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != serializedSize(32, 4, 8, 1, 1, flagRotation) {
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
	x, _ := testkit.Planted(5, 200, cfg.Dim, cfg.M, cfg.K, 0.1, true)
	q, _ := fitted(x, cfg)
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
	x, _ := testkit.Planted(6, 50, 8, 2, 4, 0.1, true)
	q, _ := fitted(x, cfg)
	good, _ := q.MarshalBinary()
	f.Add(good)
	f.Add(good[:30])
	q.RoundToHalf()
	half, _ := q.MarshalBinary()
	f.Add(half)
	plain, _ := New(8, 2, 4, [][]float32{nil}, [][]float32{make([]float32, 32)})
	pb, _ := plain.MarshalBinary()
	f.Add(pb)
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := UnmarshalQuantizer(b)
		if err != nil {
			return
		}
		// The values read back exactly; a file in the layout MarshalBinary
		// picks for them (the shortest exact one) is its bytes.
		out, _ := q.MarshalBinary()
		q2, err := UnmarshalQuantizer(out)
		if err != nil {
			t.Fatalf("the serialization of accepted bytes does not read: %v", err)
		}
		if out2, _ := q2.MarshalBinary(); !bytes.Equal(out, out2) {
			t.Fatal("the serialization does not round-trip")
		}
		if bytes.Equal(b[4:8], out[4:8]) && (len(b) < 28 || len(out) < 28 || b[4] == 1 || bytes.Equal(b[24:28], out[24:28])) && !bytes.Equal(out, b) {
			t.Fatal("accepted bytes of the canonical layout are not canonical")
		}
	})
}

func TestDistanceTables(t *testing.T) {
	cfg := smallConfig()
	x, _ := testkit.Planted(7, 500, cfg.Dim, cfg.M, cfg.K, 0.1, true)
	q, _ := fitted(x, cfg)
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

func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
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

// fitted stands in for training in this package's tests: a random
// orthogonal rotation and, per subspace, centroids taken from the rotated
// vectors (evenly spaced rows), one set per slot when cfg.PerSlot is set.
func fitted(x []float32, cfg Config) (*Quantizer, error) {
	r := rand.New(rand.NewPCG(cfg.Seed, 5))
	books := 1
	if cfg.PerSlot {
		books = cfg.Slots
	}
	dim, m, k := cfg.Dim, cfg.M, cfg.K
	dsub := dim / m
	n := len(x) / (dim * books)
	rot, cent := make([][]float32, books), make([][]float32, books)
	for b := range books {
		o := testkit.RandomOrthogonal(r, dim)
		rot[b] = make([]float32, dim*dim)
		for i, v := range o {
			rot[b][i] = float32(v)
		}
		cent[b] = make([]float32, k*dim)
		for j := range k {
			row := x[((j*n/k)*books+b)*dim:][:dim]
			for a := range dim { // y = rot·x, split into subspaces
				var y float32
				for c := range dim {
					y += rot[b][a*dim+c] * row[c]
				}
				s := a / dsub
				cent[b][(s*k+j)*dsub+a%dsub] = y
			}
		}
	}
	return New(dim, m, k, rot, cent)
}

func sqDist(a, b []float32) float64 {
	var s float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		s += d * d
	}
	return s
}
