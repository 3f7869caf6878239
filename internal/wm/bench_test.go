package wm

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/wmzip/wmzip/internal/graphworld"
)

// benchWorld is a graphworld model and walk, built once: 4 walks of 300
// steps to train, 1 of 200 to predict, 32×32 coordinates, K = 64.
var benchWorld = sync.OnceValues(func() (*Model, Episode) {
	res, err := graphworld.Generate(graphworld.Config{Family: graphworld.Mixed, Nodes: 300, Episodes: 5, Steps: 300, Seed: 7, GraphSeed: 3})
	if err != nil {
		panic(err)
	}
	g := Geometry{S: res.S, M: res.M, K: res.K}
	n := g.N()
	var eps []Episode
	for i := range res.EpisodeStart {
		s64, e64 := res.Span(i)
		s, end := int(s64), int(e64)
		eps = append(eps, Episode{Codes: res.Codes[s*n : end*n], Actions: res.Actions[s:end]})
	}
	m, err := Train(g, eps[:4], TrainOptions{})
	if err != nil {
		panic(err)
	}
	test := eps[4]
	test.Codes, test.Actions = test.Codes[:200*n], test.Actions[:200]
	return m, test
})

// runStates drives p over the states of e as a decoder does: Predict,
// Table when the value is not a two-step prediction's top, Commit.
func runStates(p *Predictor, e Episode, n int) {
	p.Reset()
	for t, a := range e.Actions {
		p.Begin(a)
		st := e.Codes[t*n : (t+1)*n]
		for j, v := range st {
			if top, hit := p.Predict(j); hit == 0 || top != v {
				p.Table()
			}
			p.Commit(j, v)
		}
	}
}

func benchStates(b *testing.B, m *Model, e Episode) {
	p := m.NewPredictor()
	n := m.Geom.N()
	runStates(p, e, n) // warm the buffers and the row cache
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		runStates(p, e, n)
	}
	states := float64(b.N) * float64(len(e.Actions))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(states*float64(n)), "ns/coord")
	b.ReportMetric(states/b.Elapsed().Seconds(), "states/s")
}

// BenchmarkPredictor measures the predictor per coordinate in four
// regimes: a walk on the world it was trained on (walk), one state
// repeated (steady: every slot continues a match, the two-step path), the
// same with one code of every slot changed in each state (miss: near
// repeats, where a two-step prediction fails in every slot, its table of
// the other values is built, the groups that held the old code fall
// behind and the changed tiles are new to the episode), and fresh random
// states (new: no match, the fallback tables).
func BenchmarkPredictor(b *testing.B) {
	m, walk := benchWorld()
	n := m.Geom.N()
	b.Run("walk", func(b *testing.B) { benchStates(b, m, walk) })
	b.Run("steady", func(b *testing.B) {
		e := Episode{Codes: make([]uint16, 0, 64*n), Actions: make([]int64, 64)}
		for range 64 {
			e.Codes = append(e.Codes, walk.Codes[:n]...)
		}
		benchStates(b, m, e)
	})
	b.Run("miss", func(b *testing.B) {
		M, K := m.Geom.M, m.Geom.K
		e := Episode{Codes: make([]uint16, 0, 64*n), Actions: make([]int64, 64)}
		for t := range 64 {
			e.Codes = append(e.Codes, walk.Codes[:n]...)
			st := e.Codes[t*n:]
			for s := range m.Geom.S {
				// A code past the slot's first two, a different one each state.
				j := s*M + 2 + (t+s)%(M-2)
				st[j] = uint16((int(st[j]) + 1 + t%(K-1)) % K)
			}
		}
		benchStates(b, m, e)
	})
	b.Run("new", func(b *testing.B) {
		r := rand.New(rand.NewPCG(1, 2))
		e := Episode{Codes: make([]uint16, 16*n), Actions: make([]int64, 16)}
		for i := range e.Codes {
			e.Codes[i] = uint16(r.IntN(m.Geom.K))
		}
		benchStates(b, m, e)
	})
}
