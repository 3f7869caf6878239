package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestBenchSpeedCLI: --json prints one object with a checked row per coder;
// bad arguments give a one-line error.
func TestBenchSpeedCLI(t *testing.T) {
	t.Parallel()
	d := t.TempDir()
	p := func(n string) string { return filepath.Join(d, n) }
	gen := []string{"gen", "graphworld", "--nodes", "20", "--graph-seed", "3", "--steps", "20", "-q"}
	mustRun(t, append(gen, "--episodes", "3", "--seed", "1", "-o", p("train.npz"))...)
	mustRun(t, append(gen, "--episodes", "2", "--seed", "2", "-o", p("test.npz"))...)
	out := mustRun(t, "bench", "speed", "--json", "-q", "--external=false", "--reads", "5", "--min-time", "1ms", "--plot", p("speed.png"), p("train.npz"), p("test.npz"))
	var rep struct {
		TestStates int `json:"test_states"`
		Rows       []struct {
			Coder string `json:"coder"`
			Exact bool   `json:"exact"`
			Reads int    `json:"reads"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.TestStates != 40 || len(rep.Rows) != 7 || rep.Rows[0].Coder != "wmzip lossless" || rep.Rows[1].Coder != "wmzip full lossless" || rep.Rows[2].Coder != "wmzip fast lossless" {
		t.Fatalf("%d test states, rows %+v", rep.TestStates, rep.Rows)
	}
	for _, r := range rep.Rows {
		if !r.Exact || r.Reads != 5 {
			t.Errorf("%+v", r)
		}
	}
	isPNG(t, p("speed.png"))
	// The plot of a saved report, drawn again.
	if err := os.WriteFile(p("speed.json"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "bench", "speed", "--from-json", p("speed.json"), "--plot", p("again.png"))
	isPNG(t, p("again.png"))
	mustFail(t, "", "never writes over its inputs", "bench", "speed", "--plot", p("test.npz"), p("train.npz"), p("test.npz"))
	mustFail(t, "", "want train.npz and test.npz", "bench", "speed", p("test.npz"))
	mustFail(t, "", "--distortion", "bench", "speed", "--distortion", "x", p("train.npz"), p("test.npz"))
}

// isPNG fails t unless path holds a PNG image.
func isPNG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("%s: not a PNG (%d bytes)", path, len(b))
	}
}
