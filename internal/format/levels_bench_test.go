package format

import (
	"testing"

	"github.com/wmzip/wmzip/internal/wm"
)

// BenchmarkLevels encodes and decodes the "markov" corpus of benchCorpora
// (persisting, revisited tiles) under its model at each level, to compare
// the speed of the levels' predictors; bits/state is the file's size per
// state.
func BenchmarkLevels(b *testing.B) {
	var c benchCorpus
	for _, x := range benchCorpora(b) {
		if x.name == "markov" {
			c = x
		}
	}
	states := 0
	for _, e := range c.eps {
		states += len(e.Actions)
	}
	for _, l := range []int{wm.LevelFull, wm.LevelCopy, wm.LevelFast} {
		m, err := c.m.WithLevel(l)
		if err != nil {
			b.Fatal(err)
		}
		file := encode(b, m, c.eps, WithKeyframeInterval(32))
		bits := float64(8*len(file)) / float64(states)
		b.Run("level="+wm.LevelName(l)+"/op=write", func(b *testing.B) {
			b.SetBytes(int64(2 * states * m.Geom.N()))
			for b.Loop() {
				encode(b, m, c.eps, WithKeyframeInterval(32))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*states), "ns/state")
			b.ReportMetric(bits, "bits/state")
		})
		b.Run("level="+wm.LevelName(l)+"/op=read", func(b *testing.B) {
			benchRead(b, m, file, states)
			b.ReportMetric(bits, "bits/state")
		})
	}
}
