package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/testkit"
	"github.com/wmzip/wmzip/internal/wm"
)

// valueNames are the placeholders usage strings may give a flag's value in
// backquotes (flag.PrintDefaults shows them after the flag's name).
var valueNames = map[string]bool{"PNG": true, "page|state": true}

// TestHelpFlagValueNames is issue 15, point 5: usage strings quoting an
// array name in backquotes made `-h` show bool flags as taking values
// (`-codes-only codes`, `-no-quantizer obs`) and `-subspaces obs`. Every
// verb's flags are checked; `wmzip decode -h` and `wmzip train -h` are
// read as a user sees them.
func TestHelpFlagValueNames(t *testing.T) {
	t.Parallel()
	defer func(fs *flag.FlagSet, failed bool) { verbFlags, flagsFailed = fs, failed }(verbFlags, flagsFailed)
	var names []string
	for n := range verbs {
		names = append(names, n)
	}
	sort.Strings(names)
	var calls [][]string
	for _, n := range names {
		switch n {
		case "bench":
			for _, b := range []string{"rd", "lossless", "alloc", "speed"} {
				calls = append(calls, []string{n, b, "-h"})
			}
			continue
		case "gen":
			calls = append(calls, []string{n, "graphworld", "-h"})
			continue
		}
		calls = append(calls, []string{n, "-h"})
	}
	for _, c := range calls {
		verbFlags = nil
		if err := verbs[c[0]].run(c[1:]); err != flag.ErrHelp || verbFlags == nil {
			t.Errorf("wmzip %s: %v, want flag.ErrHelp from a verb FlagSet", strings.Join(c, " "), err)
			continue
		}
		verbFlags.VisitAll(func(f *flag.Flag) {
			name, _ := flag.UnquoteUsage(f)
			quoted := strings.Contains(f.Usage, "`")
			b, isBool := f.Value.(interface{ IsBoolFlag() bool })
			switch {
			case isBool && b.IsBoolFlag() && name != "":
				t.Errorf("wmzip %s: bool flag -%s shows a value %q", verbFlags.Name(), f.Name, name)
			case quoted && !valueNames[name]:
				t.Errorf("wmzip %s: flag -%s shows its value as %q", verbFlags.Name(), f.Name, name)
			}
		})
	}

	for verb, want := range map[string][]string{
		"decode": {"\n  -codes-only\n"},
		"train":  {"\n  -no-quantizer\n", "\n  -subspaces int\n"},
	} {
		_, errs, ok := wmzip(t, verb, "-h")
		if !ok {
			t.Errorf("wmzip %s -h failed", verb)
		}
		for _, w := range want {
			if !strings.Contains(errs, w) {
				t.Errorf("wmzip %s -h lacks %q:\n%s", verb, w, errs)
			}
		}
	}
}

// TestUnknownFlagOneLine is issue 15, point 5: an unknown or malformed flag
// printed the verb's whole usage; it prints one line with a hint.
func TestUnknownFlagOneLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"encode", "-x"}, "wmzip encode: flag provided but not defined: -x; see wmzip encode -h"},
		{[]string{"decode", "-o"}, "wmzip decode: flag needs an argument: -o; see wmzip decode -h"},
		{[]string{"encode", "--lambda", "abc", "in.npz"}, "see wmzip encode -h"},
		{[]string{"bench", "rd", "--nope"}, "wmzip bench rd: flag provided but not defined: -nope; see wmzip bench rd -h"},
		{[]string{"audit", "in.tsv", "--zz"}, "see wmzip audit -h"},
	} {
		mustFail(t, "", c.want, c.args...)
	}
	// -h still prints the usage, and succeeds.
	_, errs, ok := wmzip(t, "encode", "-h")
	if !ok || !strings.Contains(errs, "usage: wmzip encode") || !strings.Contains(errs, "-keyframe int") {
		t.Errorf("wmzip encode -h: ok=%v\n%s", ok, errs)
	}
}

// TestVersion is issue 15, point 5: `wmzip --version` and `wmzip version`
// print the module version, with the VCS revision when the binary was
// built from a checkout, and the format versions.
func TestVersion(t *testing.T) {
	t.Parallel()
	formats := fmt.Sprintf("formats: container %d, model %d", format.Version, wm.ModelVersion)
	for _, arg := range []string{"--version", "version", "-version"} {
		out := mustRun(t, arg)
		if !strings.HasPrefix(out, "wmzip ") || !strings.Contains(out, formats) {
			t.Errorf("wmzip %s:\n%s", arg, out)
		}
	}
	if !testkit.Long() {
		return // the VCS build below links a second binary: long runs only
	}
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout: no VCS revision to check")
	}
	vcsBin := filepath.Join(t.TempDir(), "wmzip")
	cmd := exec.Command("go", "build", "-buildvcs=true", "-o", vcsBin, ".")
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("go build -buildvcs=true: %v\n%s", err, out)
	}
	if info, _ := exec.Command("go", "version", "-m", vcsBin).Output(); !strings.Contains(string(info), "vcs.revision=") {
		t.Skip("go build stamps no VCS revision here (a git worktree?)")
	}
	out, err := exec.Command(vcsBin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "revision "+string(rev[:12])) {
		t.Errorf("wmzip --version built from a checkout at %.12s:\n%s", rev, out)
	}
}
