package opq

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wmzip/wmzip/internal/half"
)

// plainQuantizer is a quantizer without rotation whose centroids are
// random binary16 values.
func plainQuantizer(t *testing.T, dim, m, k, books int) *Quantizer {
	t.Helper()
	r := rand.New(rand.NewPCG(7, uint64(books)))
	rot, cent := make([][]float32, books), make([][]float32, books)
	for i := range cent {
		cent[i] = make([]float32, k*dim)
		for j := range cent[i] {
			cent[i][j] = half.Float32(half.FromFloat32(float32(r.NormFloat64())))
		}
	}
	q, err := New(dim, m, k, rot, cent)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestMarshalPlainHalf: a plain product quantizer of binary16 values is
// version 2 without rotation at two bytes a value, reads back to the same
// codes and vectors, and every flag or size it declares is checked.
func TestMarshalPlainHalf(t *testing.T) {
	for _, books := range []int{1, 3} {
		q := plainQuantizer(t, 16, 4, 8, books)
		if q.Rotated() {
			t.Fatal("a quantizer of no rotation says it rotates")
		}
		b, err := q.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		le := binary.LittleEndian
		if v, f := le.Uint32(b[4:]), le.Uint32(b[24:]); v != 2 || f != flagHalf {
			t.Fatalf("version %d flags %#x, want 2 and %#x", v, f, flagHalf)
		}
		if want := 28 + books*8*16*2 + 4; len(b) != want {
			t.Fatalf("%d bytes, want %d", len(b), want)
		}
		back, err := UnmarshalQuantizer(b)
		if err != nil {
			t.Fatal(err)
		}
		if b2, _ := back.MarshalBinary(); !bytes.Equal(b, b2) {
			t.Error("the serialization does not round-trip")
		}
		x := make([]float32, 5*books*16)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		c1, c2 := make([]uint16, 5*books*4), make([]uint16, 5*books*4)
		if err := q.Encode(x, c1); err != nil {
			t.Fatal(err)
		}
		if err := back.Encode(x, c2); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c1, c2) {
			t.Error("codes differ after the round trip")
		}
		v1, v2 := make([]float32, len(x)), make([]float32, len(x))
		q.Decode(c1, v1)
		back.Decode(c1, v2)
		if !slices.Equal(v1, v2) {
			t.Error("reconstructions differ after the round trip")
		}
		// Without rotation Rotate is the identity.
		if y, err := q.Rotate(x); err != nil || !slices.Equal(y, x) {
			t.Errorf("Rotate without rotation changed the vectors (%v)", err)
		}
		reseal := func(c []byte) []byte {
			binary.LittleEndian.PutUint32(c[len(c)-4:], crc32.ChecksumIEEE(c[:len(c)-4]))
			return c
		}
		for name, edit := range map[string]func(c []byte) []byte{
			"flag bit 2":           func(c []byte) []byte { c[24] |= 4; return reseal(c) },
			"flags 1 in version 2": func(c []byte) []byte { le.PutUint32(c[24:], flagRotation); return reseal(c) },
			"a byte short":         func(c []byte) []byte { return reseal(c[:len(c)-1]) },
			"a value not finite":   func(c []byte) []byte { le.PutUint16(c[28:], 0x7c00); return reseal(c) },
			"the CRC":              func(c []byte) []byte { c[len(c)-1] ^= 1; return c },
			"version 3":            func(c []byte) []byte { le.PutUint32(c[4:], 3); return reseal(c) },
		} {
			if _, err := UnmarshalQuantizer(edit(bytes.Clone(b))); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s: %v, want ErrCorrupt", name, err)
			}
		}
	}
}

// TestRoundToHalf: a rotated quantizer rounded to binary16 serializes as
// version 2 with both flags, half the bytes of version 1, and encodes as
// the quantizer read back does.
func TestRoundToHalf(t *testing.T) {
	cfg := smallConfig()
	x := make([]float32, 200*cfg.Dim)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	q, err := fitted(x, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := q.MarshalBinary()
	if binary.LittleEndian.Uint32(b1[4:]) != 1 {
		t.Fatal("a rotated quantizer of float32 values is not version 1")
	}
	q.RoundToHalf()
	b2, _ := q.MarshalBinary()
	if v, f := binary.LittleEndian.Uint32(b2[4:]), binary.LittleEndian.Uint32(b2[24:]); v != 2 || f != flagRotation|flagHalf {
		t.Fatalf("version %d flags %#x after RoundToHalf", v, f)
	}
	if len(b2) >= len(b1) {
		t.Errorf("%d bytes in binary16, %d in float32", len(b2), len(b1))
	}
	back, err := UnmarshalQuantizer(b2)
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := make([]uint16, 200*cfg.M), make([]uint16, 200*cfg.M)
	q.Encode(x, c1)
	back.Encode(x, c2)
	if !slices.Equal(c1, c2) {
		t.Error("the rounded quantizer and the one read back encode differently")
	}
}

// TestSlotDistances: the distances SlotDistances gives are those of the
// centroids to the sub-vectors, and the least of each subspace is the code
// Encode picks.
func TestSlotDistances(t *testing.T) {
	q := plainQuantizer(t, 16, 4, 8, 1)
	y := make([]float32, 16)
	for i := range y {
		y[i] = float32(i%5) - 2
	}
	d := make([]float32, 4*8)
	if err := q.SlotDistances(y, 0, d); err != nil {
		t.Fatal(err)
	}
	codes := make([]uint16, 4)
	q.Encode(y, codes)
	for m := range 4 {
		best := 0
		for v := range 8 {
			c := q.books[0].cent[(m*8+v)*4 : (m*8+v+1)*4]
			var e float64
			for i, a := range y[m*4 : (m+1)*4] {
				e += float64(a-c[i]) * float64(a-c[i])
			}
			if diff := float64(d[m*8+v]) - e; diff > 1e-3*max(e, 1) || diff < -1e-3*max(e, 1) {
				t.Errorf("subspace %d value %d: distance %v, want %v", m, v, d[m*8+v], e)
			}
			if d[m*8+v] < d[m*8+best] {
				best = v
			}
		}
		if uint16(best) != codes[m] {
			t.Errorf("subspace %d: least distance at %d, Encode picks %d", m, best, codes[m])
		}
	}
	if err := q.SlotDistances(y[:15], 0, d); err == nil {
		t.Error("a short vector was accepted")
	}
}
