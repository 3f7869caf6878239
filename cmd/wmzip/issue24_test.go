package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinySet generates a small trajectory of codes (3 episodes of 20 states,
// 32x32 codes), trains a model on it with a gate and encodes it with
// keyframe interval 8; it returns the path maker.
func tinySet(t *testing.T) func(string) string {
	t.Helper()
	d := t.TempDir()
	p := func(n string) string { return filepath.Join(d, n) }
	mustRun(t, "gen", "graphworld", "--nodes", "30", "--graph-seed", "3", "--steps", "20", "--episodes", "3", "--seed", "1", "-q", "-o", p("t.npz"))
	mustRun(t, "train", "-q", "--gate-holdout", "1", "-o", p("m.wmm"), p("t.npz"))
	mustRun(t, "encode", "-q", "--keyframe", "8", "-m", p("m.wmm"), "-o", p("t.wmz"), p("t.npz"))
	return p
}

// TestOutputNamesInput (issue 24, point 1): every verb with an input and
// an output refuses an output that names one of its inputs, by the same
// path, a symbolic link or a hard link, with one line and before any
// work; the input stays byte-identical and nothing is left beside it.
func TestOutputNamesInput(t *testing.T) {
	p := tinySet(t)
	os.WriteFile(p("trace.tsv"), []byte("episode\tstep\n0\t1\n1\t2\n"), 0o644)
	os.WriteFile(p("counts.txt"), []byte("5\n3\n1\n1\n"), 0o644)
	// Each row names its input as IN, where the output goes.
	rows := []struct {
		in   string
		args []string
	}{
		{"t.npz", []string{"encode", "-m", p("m.wmm"), "-o", "IN", p("t.npz")}},
		{"m.wmm", []string{"encode", "-m", p("m.wmm"), "-o", "IN", p("t.npz")}},
		{"trace.tsv", []string{"encode", "-m", p("m.wmm"), "--access", p("trace.tsv"), "--budget", "100", "-o", "IN", p("t.npz")}},
		{"t.wmz", []string{"decode", "-m", p("m.wmm"), "-o", "IN", p("t.wmz")}},
		{"m.wmm", []string{"decode", "-m", p("m.wmm"), "-o", "IN", p("t.wmz")}},
		{"t.wmz", []string{"decode", "-m", p("m.wmm"), "--access-log", "IN", "-o", p("x.npz"), p("t.wmz")}},
		{"t.npz", []string{"quantize", "-m", p("m.wmm"), "-o", "IN", p("t.npz")}},
		{"t.wmz", []string{"recover", "-m", p("m.wmm"), "-o", "IN", p("t.wmz")}},
		{"t.npz", []string{"train", "-o", "IN", p("t.npz")}},
		{"counts.txt", []string{"audit", "--counts", "--plot", "IN", p("counts.txt")}},
		{"t.npz", []string{"bench", "rd", "--plot", "IN", p("t.npz")}},
		{"t.npz", []string{"bench", "capacity", "--png", "IN", p("t.npz"), p("t.npz")}},
	}
	for _, r := range rows {
		in := p(r.in)
		want, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		link, hard := p("link-"+r.in), p("hard-"+r.in)
		os.Remove(link)
		os.Remove(hard)
		if err := os.Symlink(r.in, link); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(in, hard); err != nil {
			t.Fatal(err)
		}
		for _, o := range []string{in, link, hard} {
			args := make([]string, len(r.args))
			for i, a := range r.args {
				if a == "IN" {
					a = o
				}
				args[i] = a
			}
			mustFail(t, "", "never writes over its inputs", args...)
			if got, _ := os.ReadFile(in); !bytes.Equal(got, want) {
				t.Fatalf("wmzip %s changed its input", strings.Join(args, " "))
			}
		}
	}
	if left, _ := filepath.Glob(p(".*tmp-*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	mustFail(t, "", "same file", "gen", "graphworld", "-o", p("g.npz"), "--visits", p("g.npz"))
}

// TestOutputPaths (issue 24, point 1): "-" is the standard output (the
// verb's messages then go to the standard error) and the standard input;
// a symbolic link is written through; a device is written, not replaced;
// a folder, or a file in a missing folder, is refused before any work.
func TestOutputPaths(t *testing.T) {
	p := tinySet(t)
	want, err := os.ReadFile(p("t.wmz"))
	if err != nil {
		t.Fatal(err)
	}
	stdout, msgs, ok := wmzip(t, "encode", "--keyframe", "8", "-m", p("m.wmm"), "-o", "-", p("t.npz"))
	if !ok || stdout != string(want) || !strings.Contains(msgs, "wrote") {
		t.Fatalf("encode -o -: ok %v, %d bytes on stdout (want %d), messages %q", ok, len(stdout), len(want), msgs)
	}
	os.Symlink("real.wmz", p("link.wmz"))
	mustRun(t, "encode", "-q", "--keyframe", "8", "-m", p("m.wmm"), "-o", p("link.wmz"), p("t.npz"))
	if fi, err := os.Lstat(p("link.wmz")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the output link was replaced")
	}
	if got, _ := os.ReadFile(p("real.wmz")); !bytes.Equal(got, want) {
		t.Fatal("the link's target does not hold the file")
	}
	if _, err := os.Stat("/dev/null"); err == nil {
		mustRun(t, "decode", "-q", "-m", p("m.wmm"), "-o", "/dev/null", p("t.wmz"))
		if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode().IsRegular() {
			t.Fatal("/dev/null was replaced")
		}
	}
	// The standard input: a .wmz and an .npz.
	in, _ := os.Open(p("t.wmz"))
	cmd := command("info", "-")
	cmd.Stdin = in
	b, err := cmd.Output()
	in.Close()
	if err != nil || !strings.Contains(string(b), "60 states in 3 episodes") {
		t.Fatalf("info -: %v %q", err, b)
	}
	in, _ = os.Open(p("t.npz"))
	cmd = command("encode", "--keyframe", "8", "-m", p("m.wmm"), "-o", "-", "-")
	cmd.Stdin = in
	b, err = cmd.Output()
	in.Close()
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("encode - to -: %v, %d bytes", err, len(b))
	}
	mustFail(t, "", "is a folder", "train", "-o", t.TempDir(), p("t.npz"))
	mustFail(t, "", "does not exist", "decode", "-m", p("m.wmm"), "-o", p("nodir/x.npz"), p("t.wmz"))
}
