package wm

import (
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// randStore makes T states whose tiles repeat as stores do: kept from the
// previous state, copied from an earlier state, or new.
func randStore(rng *rand.Rand, g Geometry, T int) ([]uint16, []uint8) {
	n, M := g.N(), g.M
	codes := make([]uint16, 0, T*n)
	bkt := make([]uint8, T)
	for r := range T {
		bkt[r] = uint8(rng.IntN(nBuckets))
		for x := range g.S {
			p := r*g.S + x
			switch k := rng.IntN(4); {
			case k == 0 && r > 0:
				codes = append(codes, codes[(p-g.S)*M:(p-g.S+1)*M]...)
			case k == 1 && p > 0:
				q := rng.IntN(p)
				codes = append(codes, codes[q*M:(q+1)*M]...)
			default:
				for range M {
					codes = append(codes, uint16(rng.IntN(g.K)))
				}
			}
		}
	}
	return codes[:T*n], bkt
}

func TestStoreRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, g := range []Geometry{{1, 1, 2}, {2, 3, 5}, {8, 4, 64}, {3, 2, 257}, {5, 1, 65536}, {32, 32, 64}} {
		for _, T := range []int{0, 1, 7, 40} {
			codes, bkt := randStore(rng, g, T)
			off := make([]uint32, T*3)
			for i := range off {
				off[i] = uint32(rng.IntN(3)) << uint(rng.IntN(32))
			}
			st := encodeStore(g, codes, bkt, off, nil)
			gc, gb, _, goff, _, err := decodeStore(g, T, len(off), 0, st)
			if err != nil {
				t.Fatalf("%v T=%d: %v", g, T, err)
			}
			if !slices.Equal(gc, codes) || !slices.Equal(gb, bkt) || !slices.Equal(goff, off) {
				t.Fatalf("%v T=%d: store does not round-trip", g, T)
			}
			// Proper prefixes fail, and so does a claim of one more state.
			for k := 0; k < len(st); k += 1 + len(st)/64 {
				if _, _, _, _, _, err := decodeStore(g, T, len(off), 0, st[:k]); !errors.Is(err, ErrModelFormat) {
					t.Fatalf("%v T=%d: prefix of %d bytes: %v", g, T, k, err)
				}
			}
			if _, _, _, _, _, err := decodeStore(g, T+1, len(off), 0, st); !errors.Is(err, ErrModelFormat) {
				t.Fatalf("%v T=%d: one more state: %v", g, T, err)
			}
		}
	}
}

// TestStoreClaims: a store may not claim more codes than its bytes allow,
// whatever its content.
func TestStoreClaims(t *testing.T) {
	g := Geometry{S: 64, M: 1024, K: 4}
	if _, _, _, _, _, err := decodeStore(g, 1<<12, 0, 0, make([]byte, 8)); !errors.Is(err, ErrModelFormat) {
		t.Fatal(err)
	}
	if _, _, _, _, _, err := decodeStore(g, 1<<20, 0, 0, make([]byte, 1<<20)); !errors.Is(err, ErrModelFormat) {
		t.Fatal(err)
	}
}

// TestModelVersionChoice: a model whose tables are large for its store is
// written as version 2, with the ID it would have as version 3; a version-2
// model converts to version 3.
func TestModelVersionChoice(t *testing.T) {
	g := Geometry{S: 1, M: 64, K: 256}
	eps := synth(3, g, 1, 2)
	m, err := Train(g, eps, TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := m.MarshalBinary()
	if m.FileVersion() != 2 {
		t.Fatalf("version %d, want 2 (tables of %d entries, %d bytes)", m.FileVersion(), m.fallEntries(), len(raw))
	}
	if h := sha256.Sum256(raw); ModelID(h[:16]) != m.ID() {
		t.Fatal("version-2 model's ID is not its hash")
	}
	g = Geometry{S: 4, M: 4, K: 16}
	m, err = Train(g, synth(4, g, 3, 20), TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.FileVersion() != 3 {
		t.Fatalf("version %d, want 3", m.FileVersion())
	}
	c, _ := m.CanonicalBinary()
	m2, err := UnmarshalModel(c)
	if err != nil || m2.ID() != m.ID() || m2.FileVersion() != 2 {
		t.Fatalf("canonical form: %v", err)
	}
	m3, err := m2.WithDerivedFallback(m.fallBeta[0], m.fallBeta[1])
	if err != nil || m3.ID() != m.ID() || m3.FileVersion() != 3 {
		t.Fatalf("derived again: %v", err)
	}
}
