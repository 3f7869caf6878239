package search

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/wm"
)

// goldenMemory is a memory built from integers alone: a quantizer whose
// rotation is a signed permutation and whose centroids are multiples of
// 1/64, and pseudo-random codes. Nothing in it depends on the machine.
func goldenMemory(t *testing.T, perSlot bool) (*Memory, *opq.Quantizer) {
	const dim, m, k, s = 16, 4, 32, 3
	rng := rand.New(rand.NewPCG(11, 12))
	sets := 1
	if perSlot {
		sets = s
	}
	var rots, cents [][]float32
	for range sets {
		rot := make([]float32, dim*dim)
		for i, j := range rng.Perm(dim) {
			rot[i*dim+j] = float32(1 - 2*rng.IntN(2))
		}
		cent := make([]float32, k*dim)
		for i := range cent {
			cent[i] = float32(rng.IntN(129)-64) / 64
		}
		rots, cents = append(rots, rot), append(cents, cent)
	}
	q, err := opq.New(dim, m, k, rots, cents)
	if err != nil {
		t.Fatal(err)
	}
	g := wm.Geometry{S: s, M: m, K: k}
	var files []*Index
	for f, lens := range [][]int{{40, 17}, {5, 60, 1}} {
		ix := &Index{geom: g, epLens: lens}
		for _, n := range lens {
			for range n * g.N() {
				ix.codes = append(ix.codes, byte(rng.IntN(k)))
			}
		}
		if f == 1 {
			if err := ix.partition(context.Background(), q, 4, 1, nil); err != nil {
				t.Fatal(err)
			}
		}
		files = append(files, ix)
	}
	return newMemory(q, g, files), q
}

// TestGoldenResults pins the results of slot and state queries, by
// vectors and by codes, flat and partitioned, as bits: the same on every
// machine and build (CI runs it under noasm and GOARCH=arm64).
func TestGoldenResults(t *testing.T) {
	for _, c := range []struct {
		perSlot bool
		want    string
	}{{false, "6a2e2f005c2c85c251f0fc3a"}, {true, "0b2836106337d174a59a69b3"}} {
		mem, q := goldenMemory(t, c.perSlot)
		rng := rand.New(rand.NewPCG(21, 22))
		h := sha256.New()
		g := mem.g
		for _, states := range []bool{false, true} {
			n := 1
			if states {
				n = g.S
			}
			var qs []Query
			for i := range 6 {
				if i%2 == 0 {
					v := make([]float32, n*q.Dim())
					for j := range v {
						v[j] = float32(rng.Float64()*4 - 2)
					}
					qs = append(qs, Query{Vectors: v})
				} else {
					cd := make([]uint16, n*g.M)
					for j := range cd {
						cd[j] = uint16(rng.IntN(g.K))
					}
					qs = append(qs, Query{Codes: cd})
				}
			}
			probes := []int{0}
			if states {
				probes = []int{0, 2}
			}
			for _, np := range probes {
				res, err := mem.Search(context.Background(), qs, Options{K: 12, States: states, NProbe: np})
				if err != nil {
					t.Fatal(err)
				}
				for _, rs := range res {
					for _, r := range rs {
						var b [32]byte
						binary.LittleEndian.PutUint64(b[0:], uint64(r.Episode))
						binary.LittleEndian.PutUint64(b[8:], uint64(r.Step))
						binary.LittleEndian.PutUint64(b[16:], uint64(int64(r.Slot)))
						binary.LittleEndian.PutUint64(b[24:], math.Float64bits(r.Distance))
						h.Write(b[:])
					}
				}
			}
		}
		if got := fmt.Sprintf("%x", h.Sum(nil)[:12]); got != c.want {
			t.Errorf("per-slot %v: results hash %s, want %s", c.perSlot, got, c.want)
		}
	}
}
