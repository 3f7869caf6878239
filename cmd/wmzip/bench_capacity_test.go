package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestBenchCapacityCLI: --json prints the capacities, the horizons and the
// best capacity per horizon; --png writes a plot; bad capacities fail.
func TestBenchCapacityCLI(t *testing.T) {
	t.Parallel()
	d := t.TempDir()
	p := func(n string) string { return filepath.Join(d, n) }
	gen := []string{"gen", "graphworld", "--nodes", "20", "--graph-seed", "3", "--steps", "20", "-q"}
	mustRun(t, append(gen, "--episodes", "4", "--seed", "1", "-o", p("train.npz"))...)
	mustRun(t, append(gen, "--episodes", "2", "--seed", "2", "-o", p("test.npz"))...)
	out := mustRun(t, "bench", "capacity", "--json", "-q", "--external=false", "--capacities", "0.5,1", "--png", p("c.png"), p("train.npz"), p("test.npz"))
	var rep struct {
		Coders []struct {
			Name       string  `json:"name"`
			Capacity   float64 `json:"capacity"`
			ModelBytes int64   `json:"model_bytes"`
		} `json:"coders"`
		Horizons     []int64   `json:"horizons"`
		BestCapacity []float64 `json:"best_capacity"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(rep.Coders) != 3 || rep.Coders[0].Capacity != 0.5 || rep.Coders[1].Capacity != 1 || rep.Coders[2].Name != "zstd best" {
		t.Fatalf("coders %+v", rep.Coders)
	}
	if len(rep.Horizons) != 6 || len(rep.BestCapacity) != 6 {
		t.Fatalf("%d horizons, %d best capacities", len(rep.Horizons), len(rep.BestCapacity))
	}
	if st, err := os.Stat(p("c.png")); err != nil || st.Size() == 0 {
		t.Fatalf("plot: %v", err)
	}
	mustFail(t, "", "--capacities", "bench", "capacity", "--capacities", "0,1", p("train.npz"), p("test.npz"))
	mustFail(t, "", "want train.npz and test.npz", "bench", "capacity", p("test.npz"))
}
