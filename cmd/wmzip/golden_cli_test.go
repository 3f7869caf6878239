package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/ctmc"
	"github.com/wmzip/wmzip/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite testdata/golden-cli.txt")

// goldenSteps is a small session over every verb whose output must not
// change when code moves between packages: the command lines run in one
// directory, in order, with relative paths.
var goldenSteps = [][]string{
	{"gen", "graphworld", "--nodes", "40", "--graph-seed", "3", "--episodes", "6", "--steps", "30", "--seed", "1", "--obs", "-o", "train.npz"},
	{"gen", "graphworld", "--nodes", "40", "--graph-seed", "3", "--episodes", "2", "--steps", "24", "--seed", "2", "--obs", "--ideal", "--visits", "visits.txt", "-o", "test.npz"},
	{"gen", "graphworld", "--nodes", "40", "--graph-seed", "3", "--episodes", "6", "--steps", "30", "--seed", "1", "-o", "trainc.npz"},
	{"gen", "graphworld", "--nodes", "40", "--graph-seed", "3", "--episodes", "2", "--steps", "24", "--seed", "2", "-o", "testc.npz"},
	{"train", "--subspaces", "8", "--centroids", "16", "--quantizer-iters", "-1", "-o", "m.wmm", "train.npz"},
	{"train", "--no-quantizer", "-o", "mc.wmm", "trainc.npz"},
	{"train", "--gate-holdout", "0", "--gate-bins", "entropy", "-o", "ng.wmm", "trainc.npz"},
	{"train", "-q", "--max-states", "90", "-o", "f.wmm", "train.npz"},
	{"info", "f.wmm"},
	{"encode", "-m", "f.wmm", "--source-distortion", "0.2", "-o", "f2.wmz", "test.npz"},
	{"info", "f2.wmz"},
	{"verify", "-m", "f.wmm", "--against", "test.npz", "f2.wmz"},
	{"quantize", "-m", "m.wmm", "-o", "q.npz", "test.npz"},
	{"encode", "-m", "m.wmm", "-o", "ll.wmz", "test.npz"},
	{"encode", "-m", "m.wmm", "--lambda", "4", "--embed-model", "-o", "l4.wmz", "test.npz"},
	{"encode", "-m", "m.wmm", "--distortion", "0.05", "--keyframe", "16", "-o", "d.wmz", "test.npz"},
	{"encode", "-m", "mc.wmm", "-o", "c.wmz", "testc.npz"},
	{"encode", "-m", "mc.wmm", "--access", "trace.tsv", "--budget", "250", "-o", "a.wmz", "testc.npz"},
	{"encode", "-m", "mc.wmm", "--access", "trace.tsv", "--budget", "250", "--alloc-space", "bits", "--tail", "flat", "-o", "b.wmz", "testc.npz"},
	{"encode", "-m", "mc.wmm", "--lambda", "4", "-o", "x.wmz", "missing.npz"},
	{"decode", "-m", "m.wmm", "-o", "back.npz", "ll.wmz"},
	{"decode", "-o", "back4.npz", "l4.wmz"},
	{"decode", "-m", "m.wmm", "--codes-only", "--episode", "1", "-o", "e1.npz", "d.wmz"},
	{"decode", "-m", "mc.wmm", "--episode", "1", "--step", "3", "--access-log", "log.tsv", "-o", "s13.npz", "a.wmz"},
	{"decode", "-m", "mc.wmm", "--access-log", "log.tsv", "-o", "aback.npz", "a.wmz"},
	{"info", "-m", "m.wmm", "ll.wmz"},
	{"info", "l4.wmz"},
	{"info", "--json", "-m", "mc.wmm", "a.wmz"},
	{"info", "-m", "m.wmm", "--ref", "q.npz", "d.wmz"},
	{"verify", "-m", "m.wmm", "--against", "test.npz", "ll.wmz"},
	{"verify", "-m", "mc.wmm", "b.wmz"},
	{"recover", "-m", "mc.wmm", "-o", "fixed.wmz", "cut.wmz"},
	{"audit", "--counts", "visits.txt", "--sims", "20", "--seed", "1"},
	{"audit", "--json", "--sims", "10", "log.tsv"},
	{"bench", "lossless", "--external=false", "--train", "trainc.npz", "testc.npz"},
	{"bench", "alloc", "--families", "uniform", "--nodes", "40", "--train-episodes", "4", "--train-steps", "40", "--stored-episodes", "1", "--stored-steps", "60", "--access-episodes", "2", "--access-steps", "40", "--codes", "--alloc-space", "lambda", "-j", "1"},
	{"bench", "alloc", "--json", "--families", "modular", "--nodes", "40", "--train-episodes", "4", "--train-steps", "40", "--stored-episodes", "1", "--stored-steps", "40", "--access-episodes", "2", "--access-steps", "40", "--codes", "--alloc-space", "bits", "-j", "1"},
}

// goldenLong says which steps only a long run (WMZIP_LONG=1, or -update)
// takes: the two experiments of bench alloc, half the session's time,
// whose options TestBenchAlloc covers by default. They write no file.
func goldenLong(args []string) bool { return args[0] == "bench" && args[1] == "alloc" }

// goldenMasks hide what changes from run to run: times and speeds.
var goldenMasks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(?m)^wmzip: [^\n]* [0-9]+/[0-9]+ \([0-9]+%\), [^\n]*\n`), ``}, // progress lines of a slow step
	{regexp.MustCompile(`"(seconds[a-z_]*|[a-z_]*_seconds|[a-z_]*ns_per_[a-z_]*)": [0-9.e+-]+`), `"$1": <t>`},
	{regexp.MustCompile(`[0-9]+ ns/coordinate`), `<t> ns/coordinate`},
	{regexp.MustCompile(`\b[0-9]+(\.[0-9]+)?(ns|µs|ms|s)\b`), `<t>`},
}

// TestGoldenCLI runs goldenSteps and compares every verb's stdout, stderr
// and exit status, and the bytes of every file they write (as SHA-256),
// with testdata/golden-cli.txt; -update rewrites it. A default run leaves
// out the goldenLong steps and compares the others with their part of the
// file. Training the quantizer is float arithmetic that may round
// differently elsewhere, so the comparison holds on amd64 only.
func TestGoldenCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if runtime.GOARCH != "amd64" {
		t.Skip("the golden session was recorded on amd64")
	}
	t.Parallel()
	all := *update || testkit.Long()
	d := t.TempDir()
	var log strings.Builder
	for _, args := range goldenSteps {
		if !all && goldenLong(args) {
			continue
		}
		switch args[0] {
		case "encode":
			if slices.Contains(args, "trace.tsv") {
				writeGoldenTrace(t, filepath.Join(d, "trace.tsv"))
			}
		case "recover":
			b, err := os.ReadFile(filepath.Join(d, "c.wmz"))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(d, "cut.wmz"), b[:len(b)*2/3], 0o644)
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = d
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&log, "%sexit %d\n--- stdout\n%s--- stderr\n%s\n", goldenHeader(args), code, ensureNL(out.String()), ensureNL(errb.String()))
	}
	ents, err := os.ReadDir(d)
	if err != nil {
		t.Fatal(err)
	}
	log.WriteString("--- files\n")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(d, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&log, "%x %8d %s\n", sha256.Sum256(b), len(b), e.Name())
	}
	got := log.String()
	for _, m := range goldenMasks {
		got = m.re.ReplaceAllString(got, m.with)
	}
	path := filepath.Join("testdata", "golden-cli.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGoldenCLI -update)", err)
	}
	want := string(b)
	if !all {
		want = goldenWithout(t, want, goldenLong)
	}
	if got != want {
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range max(len(gl), len(wl)) {
			g, w := "", ""
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("CLI output differs from %s at line %d:\n got: %s\nwant: %s\n(-update rewrites it after a deliberate change)", path, i+1, g, w)
			}
		}
	}
}

// goldenWithout returns the golden session less the blocks of the steps
// skip says a run left out. Each step's block starts with its command line
// and ends where the next step's, or the list of files, starts.
func goldenWithout(t *testing.T, golden string, skip func([]string) bool) string {
	t.Helper()
	var out strings.Builder
	at := 0
	for i, args := range goldenSteps {
		if !strings.HasPrefix(golden[at:], goldenHeader(args)) {
			t.Fatalf("testdata/golden-cli.txt: step %d is not %q (run go test -run TestGoldenCLI -update)", i, goldenHeader(args))
		}
		next := "--- files\n"
		if i+1 < len(goldenSteps) {
			next = goldenHeader(goldenSteps[i+1])
		}
		end := strings.Index(golden[at:], "\n"+next)
		if end < 0 {
			t.Fatalf("testdata/golden-cli.txt: no %q after step %d", next, i)
		}
		end += at + 1
		if !skip(args) {
			out.WriteString(golden[at:end])
		}
		at = end
	}
	out.WriteString(golden[at:])
	return out.String()
}

// goldenHeader is the line that starts a step's block.
func goldenHeader(args []string) string { return "$ wmzip " + strings.Join(args, " ") + "\n" }

// writeGoldenTrace writes an access trace over testc.npz's two episodes of
// 24 steps: the first ten states of episode 0 read often, a few others
// once, one access outside the file.
func writeGoldenTrace(t *testing.T, path string) {
	var b strings.Builder
	b.WriteString(ctmc.TraceHeader + "\n")
	for k := range 20 {
		for s := range 10 {
			fmt.Fprintf(&b, "0\t%d\n", s)
		}
		if k < 6 {
			fmt.Fprintf(&b, "1\t%d\n", 3*k)
		}
	}
	b.WriteString("7\t0\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ensureNL(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}
