// Command rareads times random reads of single states from a .wmz file,
// through format.File, and prints one JSON object: the latency percentiles
// of the reads in milliseconds. scripts/keyframe_table.sh uses it.
//
//	rareads -m model.wmm [-reads 200] [-seed 1] [-cache 0] [-run 1] [-repeat 3] [-clock cpu] file.wmz
//
// Reads start at states drawn uniformly over the file's states (seeded);
// with -run k each start is followed by the next k-1 steps of its episode,
// as far as the episode goes. -cache sets File's chunk cache (0: off, so
// every read decodes from its chunk's keyframe). One untimed read of the
// first state comes first, so that the File's coder pool is warm, as in a
// process that keeps a file open. The whole sequence runs -repeat times,
// each on a newly opened File, and each read keeps its fastest time.
// -clock cpu (the default on Linux) times the process's CPU time rather
// than the wall clock: on a shared machine, with GOMAXPROCS=1, that is the
// work of one core without the time other jobs took it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/wm"
)

func main() {
	var (
		modelPath = flag.String("m", "", "model file (default: the embedded one)")
		reads     = flag.Int("reads", 200, "random starts")
		seed      = flag.Uint64("seed", 1, "seed of the starts")
		cache     = flag.Int64("cache", 0, "chunk cache bytes (0: off)")
		run       = flag.Int("run", 1, "consecutive steps read from each start")
		repeat    = flag.Int("repeat", 3, "runs of the whole sequence; each read keeps its fastest")
		clock     = flag.String("clock", "cpu", "cpu (process CPU time, Linux) or wall")
	)
	flag.Parse()
	if flag.NArg() != 1 || *reads < 1 || *run < 1 || *repeat < 1 || (*clock != "cpu" && *clock != "wall") {
		fmt.Fprintln(os.Stderr, "usage: rareads [-m model.wmm] [-reads N] [-seed S] [-cache B] [-run K] [-repeat R] [-clock cpu|wall] file.wmz")
		os.Exit(2)
	}
	now := func() int64 { return time.Now().UnixNano() }
	if *clock == "cpu" {
		if _, ok := cpuNow(); !ok {
			fmt.Fprintln(os.Stderr, "rareads: no CPU clock here; use -clock wall")
			os.Exit(1)
		}
		now = func() int64 { t, _ := cpuNow(); return t }
	}
	if err := rareads(flag.Arg(0), *modelPath, *reads, *seed, *cache, *run, *repeat, *clock, now); err != nil {
		fmt.Fprintln(os.Stderr, "rareads:", err)
		os.Exit(1)
	}
}

func rareads(path, modelPath string, reads int, seed uint64, cache int64, run, repeat int, clock string, now func() int64) error {
	var m *wm.Model
	if modelPath != "" {
		b, err := os.ReadFile(modelPath)
		if err != nil {
			return err
		}
		if m, err = wm.UnmarshalModel(b); err != nil {
			return err
		}
	}
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	var ms []float64
	var g int
	for r := range repeat {
		f, err := format.Open(fh, st.Size(), m, format.WithCacheBytes(cache))
		if err != nil {
			return err
		}
		g = f.Header().KeyframeInterval
		t, err := timeReads(f, reads, seed, run, now)
		if err != nil {
			return err
		}
		if r == 0 {
			ms = t
		}
		for i := range ms {
			ms[i] = min(ms[i], t[i])
		}
	}
	slices.Sort(ms)
	pct := func(p float64) float64 { return ms[min(len(ms)-1, int(p*float64(len(ms))))] }
	var sum float64
	for _, x := range ms {
		sum += x
	}
	out := map[string]any{
		"file": path, "reads": len(ms), "keyframe_interval": g,
		"cache_bytes": cache, "run": run, "repeat": repeat, "clock": clock,
		"p50_ms": pct(0.5), "p90_ms": pct(0.9), "p99_ms": pct(0.99), "mean_ms": sum / float64(len(ms)),
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// timeReads times the reads of the sequence seed draws, in milliseconds.
func timeReads(f *format.File, reads int, seed uint64, run int, now func() int64) ([]float64, error) {
	// Episode of every state, to draw states uniformly.
	var owner, first []int
	for e := range f.Episodes() {
		first = append(first, len(owner))
		for range f.EpisodeLen(e) {
			owner = append(owner, e)
		}
	}
	if len(owner) == 0 {
		return nil, fmt.Errorf("the file holds no states")
	}
	_, dst, err := f.ReadState(owner[0], 0, nil)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var ms []float64
	for range reads {
		i := rng.IntN(len(owner))
		e := owner[i]
		for s := i - first[e]; s < min(i-first[e]+run, f.EpisodeLen(e)); s++ {
			t0 := now()
			if _, dst, err = f.ReadState(e, s, dst); err != nil {
				return nil, err
			}
			ms = append(ms, float64(now()-t0)/1e6)
		}
	}
	return ms, nil
}
