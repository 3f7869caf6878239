package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/cmd/wmzip/internal/bench"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/npz"
)

// TestLossyCLI runs the gate end to end: train calibrates it, encode
// --lambda and --distortion write lossy files, verify checks the writer's
// reconstruction hashes, decode returns exactly the writer's
// reconstruction, info reports λ, distortion and the retained fraction.
func TestLossyCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "gw.npz")
	model := filepath.Join(dir, "m.wmm")
	mustRun(t, "gen", "graphworld", "-q", "--nodes", "40", "--episodes", "9", "--steps", "30", "-o", data)
	mustRun(t, "train", "-q", "-o", model, data)
	m, err := loadModel(model)
	if err != nil {
		t.Fatal(err)
	}
	if m.Section("GATE") == nil {
		t.Fatal("train wrote no GATE section")
	}
	tr, err := npz.ReadTrajectory(data)
	if err != nil {
		t.Fatal(err)
	}
	lossy := filepath.Join(dir, "l.wmz")
	mustRun(t, "encode", "-q", "-m", model, "--lambda", "12", "--keyframe", "16", "-o", lossy, data)
	out := mustRun(t, "verify", "-m", model, "--against", data, lossy)
	if !strings.Contains(out, "reconstruction hash") || !strings.Contains(out, "distortion") {
		t.Fatalf("verify: %s", out)
	}
	var info struct {
		Lambda     any     `json:"lambda"`
		Distortion any     `json:"distortion"`
		Retained   float64 `json:"retained_fraction"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", "-m", model, "--ref", data, lossy)), &info); err != nil {
		t.Fatal(err)
	}
	if info.Lambda != 12.0 || info.Distortion == nil || !(info.Retained > 0 && info.Retained < 1) {
		t.Fatalf("info: %+v", info)
	}
	// The writer's reconstruction, in process, against the CLI decode.
	var buf bytes.Buffer
	var rec []uint16
	keep := format.WithSource(func(r []uint16) format.Report { rec = append(rec, r...); return format.Report{} })
	w, err := format.NewWriter(&buf, m, format.WithLambda(12<<16), format.WithKeyframeInterval(16), keep)
	if err != nil {
		t.Fatal(err)
	}
	n := m.Geom.N()
	for _, e := range tr.Episodes() {
		if err := w.WriteEpisode(nil); err != nil {
			t.Fatal(err)
		}
		for s := e[0]; s < e[1]; s++ {
			if err := w.WriteState(tr.Actions[s], tr.Codes[s*n:(s+1)*n]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	dec := filepath.Join(dir, "d.npz")
	mustRun(t, "decode", "-q", "-m", model, "-o", dec, lossy)
	got, err := npz.ReadTrajectory(dec)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Codes, rec) {
		t.Fatal("decode differs from the writer's reconstruction")
	}
	if slices.Equal(got.Codes, tr.Codes) {
		t.Fatal("λ = 12 omitted nothing wrong: the test does not bite")
	}
	// --distortion picks a λ meeting the target.
	out = mustRun(t, "encode", "-m", model, "--distortion", "0.02", "-o", filepath.Join(dir, "d.wmz"), data)
	if !strings.Contains(out, "distortion") {
		t.Fatalf("encode --distortion: %s", out)
	}
	mustFail(t, "", "exclude", "encode", "-m", model, "--lambda", "1", "--distortion", "0.1", "-o", filepath.Join(dir, "x.wmz"), data)
}

// TestBenchRD runs a small sweep of every policy.
func TestBenchRD(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "gw.npz")
	mustRun(t, "gen", "graphworld", "-q", "--nodes", "30", "--episodes", "8", "--steps", "20", "-o", data)
	var rep bench.RDReport
	if err := json.Unmarshal([]byte(mustRun(t, "bench", "rd", "-q", "--quick", "--max-states", "10", "--json", "--plot", filepath.Join(dir, "rd.png"), data)), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.AllDecodesOK || len(rep.Points) < 10 || rep.LosslessBits <= 0 {
		t.Fatalf("bench: ok=%v, %d points, lossless %.1f", rep.AllDecodesOK, len(rep.Points), rep.LosslessBits)
	}
}
