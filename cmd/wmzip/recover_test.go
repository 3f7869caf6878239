package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecover cuts an encoded file as a crash would and recovers it: the
// fixed file verifies and holds the complete records before the cut; a
// complete file comes back unchanged; bad input fails with one line and
// leaves no output.
func TestRecover(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "graphworld", "--nodes", "30", "--graph-seed", "4", "--episodes", "3", "--steps", "30", "--seed", "1", "-q", "-o", p("t.npz"))
	mustRun(t, "train", "-q", "-o", p("m.wmm"), p("t.npz"))
	mustRun(t, "encode", "-q", "--keyframe", "8", "-m", p("m.wmm"), "-o", p("t.wmz"), p("t.npz"))
	full, err := os.ReadFile(p("t.wmz"))
	if err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "recover", "-m", p("m.wmm"), "-o", p("same.wmz"), p("t.wmz"))
	if !strings.Contains(out, "complete file") {
		t.Fatalf("recover of a complete file: %q", out)
	}
	if same, _ := os.ReadFile(p("same.wmz")); string(same) != string(full) {
		t.Fatal("recover changed a complete file")
	}
	if err := os.WriteFile(p("cut.wmz"), full[:len(full)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	mustFail(t, "", "", "verify", "-q", "-m", p("m.wmm"), p("cut.wmz"))
	out = mustRun(t, "recover", "-m", p("m.wmm"), "-o", p("fixed.wmz"), p("cut.wmz"))
	if !strings.Contains(out, "kept") {
		t.Fatalf("recover of a cut file: %q", out)
	}
	mustRun(t, "verify", "-q", "-m", p("m.wmm"), p("fixed.wmz"))
	if err := os.WriteFile(p("head.wmz"), full[:40], 0o644); err != nil {
		t.Fatal(err)
	}
	mustFail(t, p("x.wmz"), "truncated", "recover", "-m", p("m.wmm"), "-o", p("x.wmz"), p("head.wmz"))
	mustFail(t, p("x.wmz"), "no embedded model", "recover", "-o", p("x.wmz"), p("cut.wmz"))
	mustFail(t, p("x.wmz"), "missing -o", "recover", p("cut.wmz"))
	mustRun(t, "recover", "-h")
	mustFail(t, "", "another file", "recover", "-o", p("cut.wmz"), p("cut.wmz"))
}
