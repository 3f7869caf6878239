package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestAuditDegenerateLogNormal is issue 15, point 7: `wmzip audit` on the
// page visits of web-pgdocs' train split printed a log-normal of μ
// −145549.97, σ 288.97, a point its search stopped at on a ridge without
// maximum, and a Vuong test that depended on it.
func TestAuditDegenerateLogNormal(t *testing.T) {
	t.Parallel()
	inputs := [][]string{{"--counts", "../../testdata/ctmc/web-pgdocs_train_pages.counts"}}
	if _, err := os.Stat("../../../shared/data/web-pgdocs/train_steps.jsonl"); err == nil {
		inputs = append(inputs, []string{"../../../shared/data/web-pgdocs/train_steps.jsonl"})
	}
	for _, in := range inputs {
		out := mustRun(t, append([]string{"audit", "--sims", "0"}, in...)...)
		if strings.Contains(out, "μ -") || !strings.Contains(out, "log-normal     degenerate") {
			t.Errorf("audit %v prints the log-normal as:\n%s", in, out)
		}
		if n := strings.Count(out, "undecided: log-normal degenerate"); n != 2 {
			t.Errorf("audit %v: %d comparisons undecided for the degenerate log-normal, want 2:\n%s", in, n, out)
		}
		var rep struct {
			LogNormal struct {
				Mu         *float64 `json:"mu"`
				Alpha      float64  `json:"alpha"`
				Degenerate bool     `json:"degenerate"`
			} `json:"log_normal"`
			Comparisons []struct {
				Statistic float64 `json:"statistic"`
				Reason    string  `json:"reason"`
			} `json:"comparisons"`
		}
		js := mustRun(t, append([]string{"audit", "--sims", "0", "--json"}, in...)...)
		if err := json.Unmarshal([]byte(js), &rep); err != nil {
			t.Fatal(err)
		}
		if !rep.LogNormal.Degenerate || rep.LogNormal.Mu != nil || rep.Comparisons[0].Reason == "" || rep.Comparisons[0].Statistic != 0 {
			t.Errorf("audit --json %v: %s", in, js)
		}
	}
}
