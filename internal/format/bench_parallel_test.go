package format

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/internal/wm"
)

// gwCorpus is a graphworld file for the whole-file benchmarks: the world
// of `wmzip bench speed` (uniform, 200 nodes, 32×32 coordinates, K=64),
// a model trained on 8 walks of 250 steps, and test walks of up to 1,000
// steps totalling $WMZIP_BENCH_STATES states (default 2,000).
type gwCorpus struct {
	m      *wm.Model
	eps    []episode
	states int
}

var (
	gwOnce sync.Once
	gw     gwCorpus
	gwErr  error
)

func gwWalks(episodes, steps int, seed uint64) (wm.Geometry, []episode, error) {
	r, err := graphworld.Generate(graphworld.Config{Family: graphworld.Uniform, Nodes: 200, GraphSeed: 1,
		Episodes: episodes, Steps: steps, Seed: seed})
	if err != nil {
		return wm.Geometry{}, nil, err
	}
	g := wm.Geometry{S: r.S, M: r.M, K: r.K}
	n := int64(g.N())
	var eps []episode
	for i := range r.EpisodeStart {
		s, e := r.Span(i)
		eps = append(eps, episode{Actions: r.Actions[s:e], Codes: r.Codes[s*n : e*n]})
	}
	return g, eps, nil
}

func graphworldCorpus(b *testing.B) gwCorpus {
	gwOnce.Do(func() {
		states := 2000
		if v := os.Getenv("WMZIP_BENCH_STATES"); v != "" {
			if states, gwErr = strconv.Atoi(v); gwErr != nil {
				return
			}
		}
		steps := min(states, 1000)
		g, train, err := gwWalks(8, 250, 100)
		if err != nil {
			gwErr = err
			return
		}
		tr := make([]wm.Episode, len(train))
		for i, e := range train {
			tr[i] = wm.Episode{Codes: e.Codes, Actions: e.Actions}
		}
		if gw.m, gwErr = wm.Train(g, tr, wm.TrainOptions{}); gwErr != nil {
			return
		}
		_, gw.eps, gwErr = gwWalks((states+steps-1)/steps, steps, 200)
		gw.states = (states + steps - 1) / steps * steps
	})
	if gwErr != nil {
		b.Fatal(gwErr)
	}
	return gw
}

// reportStates reports the rate in states/s of wall time, and the CPU
// seconds per op (all goroutines) since cpu0.
func reportStates(b *testing.B, states int, cpu0 time.Duration) {
	b.ReportMetric(float64(b.N)*float64(states)/b.Elapsed().Seconds(), "states/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	}
}

// BenchmarkGraphworldEncode writes the graphworld corpus whole with one
// and two threads.
func BenchmarkGraphworldEncode(b *testing.B) {
	c := graphworldCorpus(b)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			b.SetBytes(int64(2 * c.states * c.m.Geom.N()))
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				encode(b, c.m, c.eps, WithThreads(threads))
			}
			reportStates(b, c.states, cpu0)
		})
	}
}

// BenchmarkGraphworldDecode reads the graphworld corpus whole with a
// Reader and with File.DecodeEpisode, with one and two threads.
func BenchmarkGraphworldDecode(b *testing.B) {
	c := graphworldCorpus(b)
	file := encode(b, c.m, c.eps, WithThreads(1))
	for _, way := range []struct {
		name string
		read func([]byte, *wm.Model, ...Option) ([]episode, error)
	}{{"reader", readAll}, {"file", openAll}} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", way.name, threads), func(b *testing.B) {
				b.SetBytes(int64(2 * c.states * c.m.Geom.N()))
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					if _, err := way.read(file, c.m, WithThreads(threads)); err != nil {
						b.Fatal(err)
					}
				}
				reportStates(b, c.states, cpu0)
			})
		}
	}
}
