package format

import (
	"testing"
	"time"

	"github.com/wmzip/wmzip/internal/wm"
)

// BenchmarkLevels encodes and decodes the "markov" corpus of benchCorpora
// (persisting, revisited tiles) under its model at each level, to compare
// the speed of the levels' predictors.
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
			cpu0 := cpuTime()
			for b.Loop() {
				encode(b, m, c.eps, WithKeyframeInterval(32))
			}
			levelMetrics(b, cpuTime()-cpu0, states, bits)
		})
		b.Run("level="+wm.LevelName(l)+"/op=read", func(b *testing.B) {
			b.SetBytes(int64(2 * states * m.Geom.N()))
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := readAll(file, m); err != nil {
					b.Fatal(err)
				}
			}
			levelMetrics(b, cpuTime()-cpu0, states, bits)
		})
	}
}

// levelMetrics reports a level benchmark's wall and CPU time per state
// (on a shared machine the CPU time tells the work done from the time
// waited) and the file's bits per state.
func levelMetrics(b *testing.B, cpu time.Duration, states int, bits float64) {
	n := float64(b.N * states)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/state")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/state")
	}
	b.ReportMetric(bits, "bits/state")
}
