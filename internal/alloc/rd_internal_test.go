package alloc

import (
	"context"
	"sync"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/train"
)

var family struct {
	once sync.Once
	c    *wmzip.Codec
	err  error
}

// FamilyForTest returns the codec train.Codec makes of walks.Episodes(1,
// 8) by default — a family of members coded by rate and distortion,
// without a gate — trained once for all the tests of the package (about
// 8 s).
func FamilyForTest(t testing.TB) *wmzip.Codec {
	t.Helper()
	family.once.Do(func() { family.c, family.err = train.Codec(context.Background(), walks.Episodes(1, 8)) })
	if family.err != nil {
		t.Fatal(family.err)
	}
	return family.c
}

// TestRDLadderAccount: what the writer accounts of a state coded by rate
// and distortion (Writer.LastAccount().Cost) is its share of the file: at
// every level of every member's first pass, from a file of a few hundred
// bits a state to one of thousands, the file's bits beyond the sum of the
// states' costs (its framing: header, index, records, rANS flushes) stay
// the same to within a few bytes a chunk. And the distortion the ladder
// measures falls as λ falls, down to the quantizer's own at lam = 0.
func TestRDLadderAccount(t *testing.T) {
	c := FamilyForTest(t)
	refs, source, lens, acts, err := rdRefs(c, walks.Episodes(2, 2))
	if err != nil {
		t.Fatal(err)
	}
	for mi, mem := range c.Members() {
		s, err := newRDSet(mem, refs, source, lens, acts)
		if err != nil {
			t.Fatal(err)
		}
		const keyframe = 16 // 8 chunks
		l, err := s.measureLadder(keyframe, coarseLams, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := l.Framing, l.Framing
		dist := make([]float64, len(l.Lams))
		for lv := range l.Lams {
			var sum, d uint64
			for i := range l.Cost[lv] {
				sum += l.Cost[lv][i]
				d += l.Dist[lv][i]
			}
			f := l.FileBits[lv] - float64(sum)/65536
			lo, hi = min(lo, f), max(hi, f)
			dist[lv] = float64(d) / format.DistUnit / float64(s.states()*s.slots)
		}
		T := s.states()
		if hi-lo > 8*64 || lo <= 0 {
			t.Errorf("member %d: framing %.0f to %.0f bits over levels of %.0f to %.0f bits/state: the states' costs miss bits", mi, lo, hi, l.FileBits[0]/float64(T), l.FileBits[len(l.Lams)-1]/float64(T))
		}
		if top, low := dist[len(dist)-1], dist[2]; !(top < low) {
			t.Errorf("member %d: distortion %v: the own codes' (%.4g) is not below λ %s's (%.4g)", mi, dist, top, RDLambdaString(l.Lams[2]), low)
		}
		t.Logf("member %d: framing %.0f–%.0f bits; distortion by level %.4g", mi, lo, hi, dist)
	}
}
