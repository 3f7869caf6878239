package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/npz"
)

// TestInfoWithoutModel (issue 15, point 2): info reads the header, index
// and trailer of a file whose model is neither given nor embedded.
func TestInfoWithoutModel(t *testing.T) {
	t.Parallel()
	p := smallSet(t)
	mustRun(t, "encode", "-q", "-m", p("m.wmm"), "-o", p("ll.wmz"), p("test.npz"))
	mustRun(t, "encode", "-q", "-m", p("m.wmm"), "--lambda", "2", "-o", p("lossy.wmz"), p("test.npz"))
	for _, c := range []struct {
		file   string
		lambda any
	}{{"ll.wmz", "inf"}, {"lossy.wmz", 2.0}} {
		st, _ := os.Stat(p(c.file))
		withModel := mustRun(t, "info", "--json", "-m", p("m.wmm"), p(c.file))
		out := mustRun(t, "info", "--json", p(c.file))
		// Only the storage account needs the model (its size): the two
		// lines that end the object with it.
		if i := strings.Index(withModel, ",\n  \"shared_model_bytes\""); i < 0 || !strings.Contains(withModel, "total_bits_per_state") {
			t.Fatalf("%s: no storage account with the model:\n%s", c.file, withModel)
		} else {
			withModel = withModel[:i] + "\n}\n"
		}
		if out != withModel {
			t.Errorf("%s: info without the model differs:\n%s\nwith it:\n%s", c.file, out, withModel)
		}
		var info map[string]any
		if err := json.Unmarshal([]byte(out), &info); err != nil {
			t.Fatalf("%s: %v\n%s", c.file, err, out)
		}
		for k, want := range map[string]any{"states": 90.0, "episodes": 3.0, "file_bytes": float64(st.Size()), "lambda": c.lambda} {
			if info[k] != want {
				t.Errorf("%s: %s = %v, want %v", c.file, k, info[k], want)
			}
		}
		for _, k := range []string{"bits_per_state", "model_id", "chunks", "model_embedded"} {
			if _, ok := info[k]; !ok {
				t.Errorf("%s: no %q", c.file, k)
			}
		}
		if text := mustRun(t, "info", p(c.file)); !strings.Contains(text, "90 states in 3 episodes") {
			t.Errorf("%s: info says %q", c.file, text)
		}
	}
	// What needs the model says so.
	mustFail(t, "", "model", "info", "--ref", p("test.npz"), p("lossy.wmz"))
}

// TestWrongInputRefused (issue 15, point 3): codes of another shape with
// the same count per state, a negative or NaN λ, and a trajectory without
// states are refused with one line and no output; a flat [T,N] is taken,
// and input without actions is stored with actions -1, as the help says.
func TestWrongInputRefused(t *testing.T) {
	t.Parallel()
	p := smallSet(t)
	src, err := npz.ReadTrajectory(p("test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if src.S != 32 || src.M != 32 {
		t.Fatalf("graphworld codes are %dx%d, want 32x32", src.S, src.M)
	}
	write := func(name string, tr *npz.Trajectory) string {
		if err := npz.WriteTrajectory(p(name), tr); err != nil {
			t.Fatal(err)
		}
		return p(name)
	}
	shape := *src
	shape.S, shape.M = 16, 64
	flat := *src
	flat.S, flat.M = 1, 32*32
	empty := &npz.Trajectory{T: 0, Codes: []uint16{}, S: 32, M: 32}
	noAct := *src
	noAct.Actions, noAct.HasActions = nil, false
	out := p("x.wmz")
	mustFail(t, out, "shape [T,16,64]", "encode", "-m", p("m.wmm"), "-o", out, write("shape.npz", &shape))
	for _, l := range []string{"-3", "NaN", "-inf", "1e9"} {
		mustFail(t, out, "--lambda", "encode", "-m", p("m.wmm"), "--lambda", l, "-o", out, p("test.npz"))
	}
	for _, d := range []string{"-1", "NaN", "inf"} {
		mustFail(t, out, "--distortion", "encode", "-m", p("m.wmm"), "--distortion", d, "-o", out, p("test.npz"))
	}
	mustFail(t, out, "no states", "encode", "-m", p("m.wmm"), "-o", out, write("empty.npz", empty))

	mustRun(t, "encode", "-q", "-m", p("m.wmm"), "-o", p("flat.wmz"), write("flat.npz", &flat))
	mustRun(t, "verify", "-q", "-m", p("m.wmm"), "--against", p("test.npz"), p("flat.wmz"))
	mustFail(t, "", "shape [T,16,64]", "verify", "-m", p("m.wmm"), "--against", p("shape.npz"), p("flat.wmz"))

	mustRun(t, "encode", "-q", "-m", p("m.wmm"), "-o", p("noact.wmz"), write("noact.npz", &noAct))
	mustRun(t, "decode", "-q", "-m", p("m.wmm"), "-o", p("noact-back.npz"), p("noact.wmz"))
	back, err := npz.ReadTrajectory(p("noact-back.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Codes, src.Codes) || slices.ContainsFunc(back.Actions, func(a int64) bool { return a != -1 }) {
		t.Fatal("input without actions does not come back with its codes and actions -1")
	}
	for _, v := range []string{"encode", "train"} {
		if _, help, _ := wmzip(t, v, "-h"); !strings.Contains(help, "without it every action is -1") {
			t.Errorf("%s -h does not say what missing actions become", v)
		}
	}
}

// TestErrorMessages (issue 15, point 6): a cut file's error suggests
// recover; a missing output folder is named as given, not by the
// temporary file.
func TestErrorMessages(t *testing.T) {
	t.Parallel()
	p := smallSet(t)
	mustRun(t, "encode", "-q", "-m", p("m.wmm"), "-o", p("t.wmz"), p("test.npz"))
	b, err := os.ReadFile(p("t.wmz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("cut.wmz"), b[:len(b)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"decode", "-m", p("m.wmm"), "-o", p("x.npz"), p("cut.wmz")},
		{"info", p("cut.wmz")},
		{"verify", "-m", p("m.wmm"), p("cut.wmz")},
	} {
		mustFail(t, p("x.npz"), "wmzip recover", args...)
	}
	// Damage to the header is recovered too (issue 24): the hint names
	// the model a file without its own needs.
	b[20] ^= 1
	os.WriteFile(p("hdr.wmz"), b, 0o644)
	if _, errs, _ := wmzip(t, "info", p("hdr.wmz")); !strings.Contains(errs, "wmzip recover -m model.wmm -o fixed.wmz") {
		t.Errorf("a damaged header: %s", errs)
	}
	out := filepath.Join(p("nodir"), "o.wmz")
	_, errs, ok := wmzip(t, "encode", "-m", p("m.wmm"), "-o", out, p("test.npz"))
	if ok || !strings.Contains(errs, out) || strings.Contains(errs, ".tmp-") {
		t.Errorf("missing output folder: %q", errs)
	}
}
