package format

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/wmzip/wmzip/internal/wm"
)

// benchFile is 64 states of 32×32 coordinates (K=64) in one episode.
func benchFile(b *testing.B) ([]episode, *wm.Model, []byte) {
	g := wm.Geometry{S: 32, M: 32, K: 64}
	eps := genEpisodes(rand.New(rand.NewPCG(31, 32)), g, []int{64})
	m := trainModel(g, 15, eps)
	return eps, m, encode(b, m, eps)
}

// benchCorpus is a file of several episodes for the random-access
// benchmarks, at 32×32 coordinates (K=64) and keyframe interval 32.
type benchCorpus struct {
	name string
	eps  []episode
	m    *wm.Model
	file []byte
}

var (
	corporaOnce sync.Once
	corpora     []benchCorpus
)

// benchCorpora returns two corpora of 4 episodes of 96 states: "gen",
// independent skewed codes under a model trained on them, and "markov",
// persisting, revisited and context-correlated tiles under a model trained
// on other episodes. They are built once per test binary.
func benchCorpora(b *testing.B) []benchCorpus {
	corporaOnce.Do(func() {
		g := wm.Geometry{S: 32, M: 32, K: 64}
		lens := []int{96, 96, 96, 96}
		gen := genEpisodes(rand.New(rand.NewPCG(71, 72)), g, lens)
		mk := markovEpisodes(rand.New(rand.NewPCG(73, 74)), g, append([]int{64, 64, 64, 64, 64}, lens...))
		for _, c := range []benchCorpus{
			{name: "gen", eps: gen, m: trainModel(g, 15, gen)},
			{name: "markov", eps: mk[5:], m: trainModel(g, 15, mk[:5])},
		} {
			c.file = encode(b, c.m, c.eps, WithKeyframeInterval(32))
			corpora = append(corpora, c)
		}
	})
	return corpora
}

// benchCaches are the cache settings of the random-access benchmarks: off,
// the default (which holds these files whole), and room for about one live
// chunk.
func benchCaches(c benchCorpus) []struct {
	name  string
	bytes int64
} {
	return []struct {
		name  string
		bytes int64
	}{
		{"off", 0},
		{"on", DefaultCacheBytes},
		{"onelive", coderBytes(c.m, 32) + 256<<10},
	}
}

func BenchmarkWrite(b *testing.B) {
	eps, m, _ := benchFile(b)
	b.SetBytes(int64(2 * len(eps[0].Codes)))
	b.ReportAllocs()
	for b.Loop() {
		encode(b, m, eps)
	}
}

// BenchmarkRead decodes whole files sequentially with a Reader.
func BenchmarkRead(b *testing.B) {
	b.Run("corpus=bench", func(b *testing.B) {
		eps, m, file := benchFile(b)
		benchRead(b, m, file, len(eps[0].Actions))
	})
	for _, c := range benchCorpora(b) {
		b.Run("corpus="+c.name, func(b *testing.B) {
			n := 0
			for _, e := range c.eps {
				n += len(e.Actions)
			}
			benchRead(b, c.m, c.file, n)
		})
	}
}

func benchRead(b *testing.B, m *wm.Model, file []byte, states int) {
	b.SetBytes(int64(2 * states * m.Geom.N()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readAll(file, m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*states), "ns/state")
}

// BenchmarkFileState reads states at random episodes and steps.
func BenchmarkFileState(b *testing.B) {
	for _, c := range benchCorpora(b) {
		for _, cache := range benchCaches(c) {
			b.Run(fmt.Sprintf("corpus=%s/cache=%s", c.name, cache.name), func(b *testing.B) {
				f, err := Open(bytes.NewReader(c.file), int64(len(c.file)), c.m, WithCacheBytes(cache.bytes))
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(75, 76))
				dst := make([]uint16, c.m.Geom.N())
				b.ReportAllocs()
				for b.Loop() {
					e := rng.IntN(len(c.eps))
					if _, _, err := f.ReadState(e, rng.IntN(len(c.eps[e].Actions)), dst); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/state")
			})
		}
	}
}

// BenchmarkFileStateNeighbour reads consecutive steps, episode after
// episode, as an agent replaying a stretch of its memory does.
func BenchmarkFileStateNeighbour(b *testing.B) {
	for _, c := range benchCorpora(b) {
		for _, cache := range benchCaches(c) {
			b.Run(fmt.Sprintf("corpus=%s/cache=%s", c.name, cache.name), func(b *testing.B) {
				f, err := Open(bytes.NewReader(c.file), int64(len(c.file)), c.m, WithCacheBytes(cache.bytes))
				if err != nil {
					b.Fatal(err)
				}
				dst := make([]uint16, c.m.Geom.N())
				e, s := 0, 0
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := f.ReadState(e, s, dst); err != nil {
						b.Fatal(err)
					}
					if s++; s == len(c.eps[e].Actions) {
						e, s = (e+1)%len(c.eps), 0
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/state")
			})
		}
	}
}
