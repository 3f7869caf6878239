package main

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADMECommandTable is issue 15, point 8 (docs that promise more than
// the CLI does): every verb of the command table (docs/cli.md) is
// registered, every registered verb is in the table, and every --flag a
// row names is one of its verb's flags; so are those of the README's
// quick start.
func TestREADMECommandTable(t *testing.T) {
	t.Parallel()
	defer func(fs *flag.FlagSet, failed bool) { verbFlags, flagsFailed = fs, failed }(verbFlags, flagsFailed)
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	// The quick start's commands, as rows of the table.
	for _, line := range strings.Split(string(readme), "\n") {
		cmd, ok := strings.CutPrefix(line, "wmzip ")
		if _, verb := verbs[strings.Fields(cmd + " x")[0]]; ok && verb {
			cmd, _, _ = strings.Cut(cmd, "#")
			b = append(b, "\n| `wmzip "+strings.TrimSpace(cmd)+"` |"...)
		}
	}
	cmdRe := regexp.MustCompile("`wmzip ([a-z]+)((?: [a-z]+)?)([^`]*)`")
	flagRe := regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	listed := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| `wmzip ") {
			continue
		}
		cell := strings.SplitN(strings.ReplaceAll(line, `\|`, "/"), "|", 3)[1]
		for _, m := range cmdRe.FindAllStringSubmatch(cell, -1) {
			name, sub, rest := m[1], strings.TrimSpace(m[2]), m[3]
			listed[name] = true
			if name == "version" { // main's, not a verb
				continue
			}
			v, ok := verbs[name]
			if !ok {
				t.Errorf("the docs name verb %q, which wmzip does not have", name)
				continue
			}
			args := []string{"-h"}
			if name == "gen" || name == "bench" {
				args = []string{sub, "-h"}
			} else {
				rest = m[2] + rest
			}
			verbFlags = nil
			if err := v.run(args); err != flag.ErrHelp || verbFlags == nil {
				t.Errorf("wmzip %s %s: %v", name, strings.Join(args, " "), err)
				continue
			}
			for _, f := range flagRe.FindAllStringSubmatch(rest, -1) {
				if verbFlags.Lookup(f[1]) == nil {
					t.Errorf("the docs: `wmzip %s%s` has no flag --%s", name, m[2], f[1])
				}
			}
		}
	}
	for name := range verbs {
		if !listed[name] {
			t.Errorf("verb %q is not in the command table of docs/cli.md", name)
		}
	}
}
