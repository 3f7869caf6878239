package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTrainGateForSearch: `train --gate-for search` writes a gate with
// its search fill (GATE flag bit 2) that info reports and whose lossy files
// verify; an unknown purpose is refused.
func TestTrainGateForSearch(t *testing.T) {
	t.Parallel()
	p := tinySet(t)
	mustRun(t, "train", "-q", "--gate-holdout", "1", "--gate-for", "search", "-o", p("s.wmm"), p("t.npz"))
	for name, want := range map[string]bool{"s.wmm": true, "m.wmm": false} {
		var d struct {
			Gate struct {
				SearchFill bool `json:"search_fill"`
			} `json:"gate"`
		}
		if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", p(name))), &d); err != nil {
			t.Fatal(err)
		}
		if d.Gate.SearchFill != want {
			t.Errorf("%s: search_fill %v, want %v", name, d.Gate.SearchFill, want)
		}
	}
	if out := mustRun(t, "info", p("s.wmm")); !strings.Contains(out, "for search") {
		t.Errorf("info does not say the gate is for search:\n%s", out)
	}
	mustRun(t, "encode", "-q", "--lambda", "4", "-m", p("s.wmm"), "-o", p("s.wmz"), p("t.npz"))
	mustRun(t, "verify", "-m", p("s.wmm"), p("s.wmz"))
	if _, errs, ok := wmzip(t, "train", "-q", "--gate-for", "looks", "-o", p("x.wmm"), p("t.npz")); ok || !strings.Contains(errs, "want distortion or search") {
		t.Errorf("--gate-for looks: ok %v, %q", ok, errs)
	}
}
