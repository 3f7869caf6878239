package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A fixture is a set of files the CLI makes once for all the tests that
// use it, in a folder beside the test binary, and copies into a folder of
// each test's own.
type fixture struct {
	name  string                                 // the shared folder
	files []string                               // the files copied
	steps func(p func(string) string) [][]string // command lines; p names a file in the folder

	once sync.Once
	dir  string
	err  error
}

// copy returns the path maker of a new folder of t's holding f's files.
func (f *fixture) copy(t *testing.T) func(string) string {
	t.Helper()
	f.once.Do(func() {
		f.dir = filepath.Join(filepath.Dir(bin), f.name)
		if f.err = os.Mkdir(f.dir, 0o755); f.err == nil {
			f.err = f.make(f.dir)
		}
	})
	if f.err != nil {
		t.Fatal(f.err)
	}
	d := t.TempDir()
	for _, n := range f.files {
		b, err := os.ReadFile(filepath.Join(f.dir, n))
		if err == nil {
			err = os.WriteFile(filepath.Join(d, n), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return func(n string) string { return filepath.Join(d, n) }
}

// fresh makes f's files anew in a folder of t's, for a test that checks
// how the CLI writes them; it returns the path maker.
func (f *fixture) fresh(t *testing.T) func(string) string {
	t.Helper()
	d := t.TempDir()
	if err := f.make(d); err != nil {
		t.Fatal(err)
	}
	return func(n string) string { return filepath.Join(d, n) }
}

func (f *fixture) make(dir string) error {
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, args := range f.steps(p) {
		if out, err := command(args...).CombinedOutput(); err != nil {
			return fmt.Errorf("wmzip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// tiny is a small trajectory of codes (t.npz: 3 episodes of 20 states,
// 32x32 codes), a model trained on it with a gate (m.wmm) and the
// trajectory encoded with keyframe interval 8 (t.wmz).
var tiny = &fixture{
	name:  "tiny",
	files: []string{"t.npz", "m.wmm", "t.wmz"},
	steps: func(p func(string) string) [][]string {
		return [][]string{
			{"gen", "graphworld", "--nodes", "30", "--graph-seed", "3", "--steps", "20", "--episodes", "3", "--seed", "1", "-q", "-o", p("t.npz")},
			{"train", "-q", "--gate-holdout", "1", "-o", p("m.wmm"), p("t.npz")},
			{"encode", "-q", "--keyframe", "8", "-m", p("m.wmm"), "-o", p("t.wmz"), p("t.npz")},
		}
	},
}

// tinySet copies tiny into a folder of the test's own; it returns the
// path maker.
func tinySet(t *testing.T) func(string) string { t.Helper(); return tiny.copy(t) }

// small is train and test trajectories (train.npz, test.npz: 8 and 3
// episodes of 30 states, 32x32 codes, K=64) and a model trained with a
// gate (m.wmm).
var small = &fixture{
	name:  "small",
	files: []string{"train.npz", "test.npz", "m.wmm"},
	steps: func(p func(string) string) [][]string {
		gen := []string{"gen", "graphworld", "--nodes", "40", "--graph-seed", "3", "--steps", "30", "-q"}
		return [][]string{
			append(gen, "--episodes", "8", "--seed", "1", "-o", p("train.npz")),
			append(gen, "--episodes", "3", "--seed", "2", "-o", p("test.npz")),
			{"train", "-q", "--gate-holdout", "2", "-o", p("m.wmm"), p("train.npz")},
		}
	},
}

// smallSet copies small into a folder of the test's own; it returns the
// path maker.
func smallSet(t *testing.T) func(string) string { t.Helper(); return small.copy(t) }
