package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
)

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wmzip-cli-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "wmzip")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// command returns the CLI's command with args.
func command(args ...string) *exec.Cmd { return exec.Command(bin, args...) }

// wmzip runs the CLI and returns stdout, stderr and whether it succeeded.
func wmzip(t *testing.T, args ...string) (string, string, bool) {
	t.Helper()
	cmd := command(args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err == nil
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, ok := wmzip(t, args...)
	if !ok {
		t.Fatalf("wmzip %s failed: %s", strings.Join(args, " "), errs)
	}
	return out
}

// mustFail checks a failing run: non-zero exit, one line on stderr, and no
// file at out (if given).
func mustFail(t *testing.T, out string, want string, args ...string) {
	t.Helper()
	_, errs, ok := wmzip(t, args...)
	if ok {
		t.Fatalf("wmzip %s succeeded, want an error", strings.Join(args, " "))
	}
	if strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 || errs == "" {
		t.Fatalf("wmzip %s: want a one-line error, got %q", strings.Join(args, " "), errs)
	}
	if want != "" && !strings.Contains(errs, want) {
		t.Fatalf("wmzip %s: error %q does not mention %q", strings.Join(args, " "), errs, want)
	}
	if strings.Contains(errs, "panic") || strings.Contains(errs, "goroutine") {
		t.Fatalf("wmzip %s panicked: %s", strings.Join(args, " "), errs)
	}
	if out != "" {
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("wmzip %s left %s behind", strings.Join(args, " "), out)
		}
		left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*"))
		if len(left) > 0 {
			t.Fatalf("wmzip %s left temporary files %v", strings.Join(args, " "), left)
		}
	}
}

func TestPipeline(t *testing.T) {
	t.Parallel()
	d := t.TempDir()
	p := func(n string) string { return filepath.Join(d, n) }
	gen := []string{"gen", "graphworld", "--nodes", "40", "--graph-seed", "3", "--episodes", "3", "--steps", "40", "-q"}
	mustRun(t, append(gen, "--seed", "1", "-o", p("train.npz"))...)
	mustRun(t, append(gen, "--seed", "2", "-o", p("test.npz"))...)
	mustRun(t, "train", "-q", "-o", p("m.wmm"), p("train.npz"))
	mustRun(t, "encode", "-q", "-m", p("m.wmm"), "-o", p("t.wmz"), p("test.npz"))
	mustRun(t, "verify", "-q", "-m", p("m.wmm"), "--against", p("test.npz"), p("t.wmz"))
	mustRun(t, "decode", "-q", "-m", p("m.wmm"), "-o", p("back.npz"), p("t.wmz"))
	a, err := npz.ReadTrajectory(p("test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := npz.ReadTrajectory(p("back.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Codes) != len(b.Codes) || a.T != b.T {
		t.Fatalf("decoded %d states, want %d", b.T, a.T)
	}
	for i := range a.Codes {
		if a.Codes[i] != b.Codes[i] {
			t.Fatalf("code %d differs", i)
		}
	}
	for i := range a.Actions {
		if i > 0 && a.Actions[i] != b.Actions[i] && !isStart(a.EpisodeStart, i) {
			t.Fatalf("action %d differs", i)
		}
	}

	// info --json carries the documented keys.
	out := mustRun(t, "info", "--json", "-m", p("m.wmm"), p("t.wmz"))
	var info map[string]any
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("info --json: %v\n%s", err, out)
	}
	for _, k := range []string{"states", "episodes", "bits_per_state", "payload_bits_per_state", "ideal_bits_per_state", "retained_fraction", "model_id", "model_bytes"} {
		if _, ok := info[k]; !ok {
			t.Errorf("info --json lacks %q", k)
		}
	}
	if info["states"].(float64) != 120 {
		t.Errorf("states = %v, want 120", info["states"])
	}

	// A self-contained file decodes without -m.
	mustRun(t, "encode", "-q", "--embed-model", "-m", p("m.wmm"), "-o", p("e.wmz"), p("test.npz"))
	mustRun(t, "verify", "-q", "--against", p("test.npz"), p("e.wmz"))

	// Bad input.
	mustFail(t, p("x.wmz"), "no such file", "encode", "-m", p("m.wmm"), "-o", p("x.wmz"), p("missing.npz"))
	mustFail(t, p("x.wmz"), "", "encode", "-m", p("missing.wmm"), "-o", p("x.wmz"), p("test.npz"))
	mustFail(t, p("x.wmz"), "model", "encode", "-m", p("test.npz"), "-o", p("x.wmz"), p("test.npz"))
	mustFail(t, p("x.npz"), "", "decode", "-m", p("m.wmm"), "-o", p("x.npz"), p("test.npz"))

	// Codes >= K.
	big := *a
	big.Codes = append([]uint16(nil), a.Codes...)
	big.Codes[5] = 200
	big.CodesDtype = "uint8"
	if err := npz.WriteTrajectory(p("big.npz"), &big); err != nil {
		t.Fatal(err)
	}
	mustFail(t, p("x.wmz"), ">= K", "encode", "-m", p("m.wmm"), "-o", p("x.wmz"), p("big.npz"))

	// No codes array.
	noCodes := &npz.Trajectory{T: 2, Obs: make([]float32, 2*4), ObsS: 1, ObsD: 4, EpisodeStart: []int64{0}}
	if err := npz.WriteTrajectory(p("obs.npz"), noCodes); err != nil {
		t.Fatal(err)
	}
	mustFail(t, p("x.wmz"), "codes", "encode", "-m", p("m.wmm"), "-o", p("x.wmz"), p("obs.npz"))

	// Wrong geometry.
	shape := *a
	shape.S, shape.M = a.S*2, a.M/2
	if err := npz.WriteTrajectory(p("shape.npz"), &shape); err != nil {
		t.Fatal(err)
	}
	mustFail(t, p("shape.wmz"), "shape", "encode", "-q", "-m", p("m.wmm"), "-o", p("shape.wmz"), p("shape.npz")) // same N, other slots (issue 15)

	// A file from another model.
	mustRun(t, "gen", "graphworld", "--nodes", "40", "--graph-seed", "9", "--episodes", "2", "--steps", "20", "--seed", "1", "-q", "-o", p("other.npz"))
	mustRun(t, "train", "-q", "-o", p("other.wmm"), p("other.npz"))
	mustFail(t, p("x.npz"), "model", "decode", "-m", p("other.wmm"), "-o", p("x.npz"), p("t.wmz"))
	mustFail(t, "", "model", "verify", "-m", p("other.wmm"), p("t.wmz"))

	// Truncated and corrupted files.
	raw, _ := os.ReadFile(p("t.wmz"))
	os.WriteFile(p("cut.wmz"), raw[:len(raw)/2], 0o644)
	mustFail(t, p("x.npz"), "", "decode", "-m", p("m.wmm"), "-o", p("x.npz"), p("cut.wmz"))
	bad := append([]byte(nil), raw...)
	bad[len(bad)/2] ^= 0x10
	os.WriteFile(p("bad.wmz"), bad, 0o644)
	mustFail(t, p("x.npz"), "", "decode", "-m", p("m.wmm"), "-o", p("x.npz"), p("bad.wmz"))
	mustFail(t, "", "", "verify", "-m", p("m.wmm"), p("bad.wmz"))

	// Usage errors.
	mustFail(t, "", "missing -o", "encode", "-m", p("m.wmm"), p("test.npz"))
	mustFail(t, "", "unknown verb", "frobnicate")
	mustFail(t, "", "", "train", "-o", p("y.wmm"))
}

func isStart(starts []int64, i int) bool {
	for _, s := range starts {
		if int(s) == i {
			return true
		}
	}
	return false
}

func TestHelp(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"gen", "train", "quantize", "encode", "decode", "append", "info", "verify", "recover", "audit", "bench", "demo"} {
		_, errs, ok := wmzip(t, v, "-h")
		if !ok || !strings.Contains(errs, "usage") {
			t.Errorf("wmzip %s -h: ok=%v %q", v, ok, errs)
		}
	}
}

// TestObsPipeline: train on float observations, encode them, decode: the
// decoded obs are exactly the quantizer's reconstruction of the quantized
// input, and the codes equal what `quantize` gives.
func TestObsPipeline(t *testing.T) {
	t.Parallel()
	d := t.TempDir()
	p := func(n string) string { return filepath.Join(d, n) }
	gen := []string{"gen", "graphworld", "--obs", "--nodes", "20", "--graph-seed", "4", "--episodes", "2", "--steps", "20", "-q"}
	mustRun(t, append(gen, "--seed", "1", "-o", p("train.npz"))...)
	mustRun(t, append(gen, "--seed", "2", "-o", p("test.npz"))...)
	mustRun(t, "train", "-q", "--quantizer-iters", "1", "--quantizer-sample", "2000", "-o", p("m.wmm"), p("train.npz"))
	mustRun(t, "encode", "-q", "-m", p("m.wmm"), "-o", p("t.wmz"), p("test.npz"))
	mustRun(t, "verify", "-q", "-m", p("m.wmm"), "--against", p("test.npz"), p("t.wmz"))
	mustRun(t, "decode", "-q", "-m", p("m.wmm"), "-o", p("back.npz"), p("t.wmz"))
	mustRun(t, "quantize", "-q", "-m", p("m.wmm"), "-o", p("q.npz"), p("test.npz"))
	back, err := npz.ReadTrajectory(p("back.npz"))
	if err != nil {
		t.Fatal(err)
	}
	q, err := npz.ReadTrajectory(p("q.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if back.Obs == nil || len(back.Codes) != len(q.Codes) {
		t.Fatalf("decode gave obs=%v, %d codes; want obs and %d codes", back.Obs != nil, len(back.Codes), len(q.Codes))
	}
	for i := range q.Codes {
		if q.Codes[i] != back.Codes[i] {
			t.Fatalf("code %d: decoded %d, quantized %d", i, back.Codes[i], q.Codes[i])
		}
	}
	c, err := wmzlib.LoadCodec(p("m.wmm"))
	if err != nil || c.Quantizer() == nil {
		t.Fatalf("model has no quantizer: %v", err)
	}
	quant := c.Quantizer()
	want := make([]float32, len(back.Obs))
	if err := quant.Decode(q.Codes, want); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if want[i] != back.Obs[i] {
			t.Fatalf("obs[%d] = %v, reconstruction %v", i, back.Obs[i], want[i])
		}
	}
}

// loadModel reads the model file at path.
func loadModel(path string) (*wm.Model, error) {
	c, err := wmzlib.LoadCodec(path)
	if err != nil {
		return nil, err
	}
	return c.Model(), nil
}
