package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/npz"
)

// TestIndexAndSearch runs wmzip index and wmzip search as a user would:
// JSON shaped as documented, a state's own codes found first, the note
// for a missing or stale index, the episode numbering across files, and
// one-line errors for bad queries.
func TestIndexAndSearch(t *testing.T) {
	p, tr := obsSet(t)
	mustRun(t, "encode", "-q", "-m", p("q.wmm"), "-o", p("a.wmz"), p("obs.npz"))
	mustRun(t, "encode", "-q", "-m", p("q.wmm"), "-o", p("b.wmz"), p("obs.npz"))
	out := mustRun(t, "index", "-m", p("q.wmm"), p("a.wmz"))
	if !strings.Contains(out, "a.wmzi: 40 states") {
		t.Fatalf("index said %q", out)
	}
	if _, err := os.Stat(p("a.wmzi")); err != nil {
		t.Fatal(err)
	}
	// Queries: one state of floats [S,d], and a batch of two slot vectors.
	S, d := tr.ObsS, tr.ObsD
	state := npz.Array{Name: "q", Dtype: "float32", Shape: []int{S, d}, Data: tr.Obs[25*S*d : 26*S*d]}
	if err := npz.WriteNPY(p("state.npy"), state); err != nil {
		t.Fatal(err)
	}
	slots := npz.Array{Name: "q", Dtype: "float32", Shape: []int{2, d}, Data: tr.Obs[:2*d]}
	if err := npz.WriteNPY(p("slots.npy"), slots); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Results [][]map[string]any `json:"results"`
	}
	js, errs, ok := wmzip(t, "search", "-m", p("q.wmm"), "--query", p("state.npy"), "--state", "--k", "3", "--json", p("a.wmz"), p("b.wmz"))
	if !ok {
		t.Fatal(errs)
	}
	if !strings.Contains(errs, "b.wmz: no index") {
		t.Errorf("no note of the missing index: %q", errs)
	}
	if err := json.Unmarshal([]byte(js), &res); err != nil || len(res.Results) != 1 || len(res.Results[0]) != 3 {
		t.Fatalf("JSON %q: %v", js, err)
	}
	// State 25 is step 5 of episode 1 (episodes of 20 states).
	first := res.Results[0][0]
	if _, has := first["slot"]; has || first["episode"].(float64) != 1 || first["step"].(float64) != 5 {
		t.Fatalf("nearest state %v", first)
	}
	// b.wmz repeats a.wmz: its episodes follow a's two.
	js = mustRun(t, "search", "-m", p("q.wmm"), "--query", p("state.npy"), "--state", "--k", "2", "--json", "--episodes", "2:", p("a.wmz"), p("b.wmz"))
	if err := json.Unmarshal([]byte(js), &res); err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Results[0] {
		if r["episode"].(float64) < 2 {
			t.Fatalf("--episodes 2: gave %v", r)
		}
	}
	js = mustRun(t, "search", "-m", p("q.wmm"), "--query", p("slots.npy"), "--json", p("a.wmz"))
	if err := json.Unmarshal([]byte(js), &res); err != nil || len(res.Results) != 2 || len(res.Results[1]) != 10 {
		t.Fatalf("slot batch: %q %v", js, err)
	}
	if _, has := res.Results[0][0]["slot"]; !has {
		t.Fatal("slot result without a slot")
	}
	table := mustRun(t, "search", "-m", p("q.wmm"), "--query", p("slots.npy"), "--k", "1", p("a.wmz"))
	if !strings.Contains(table, "rank") || !strings.Contains(table, "query 1 (slot vector)") {
		t.Fatalf("table:\n%s", table)
	}
	// Appending makes a.wmzi stale: search decodes and says so.
	mustRun(t, "append", "-m", p("q.wmm"), p("a.wmz"), p("obs.npz"))
	_, errs, ok = wmzip(t, "search", "-m", p("q.wmm"), "--query", p("state.npy"), "--state", p("a.wmz"))
	if !ok || !strings.Contains(errs, "stale") {
		t.Fatalf("stale index: ok %v, %q", ok, errs)
	}
	mustFail(t, "", "state queries", "search", "-m", p("q.wmm"), "--query", p("slots.npy"), "--state", p("a.wmz"))
	mustFail(t, "", "--nprobe", "search", "-m", p("q.wmm"), "--query", p("slots.npy"), "--slot", "--nprobe", "2", p("a.wmz"))
	mustFail(t, "", "--query", "search", "-m", p("q.wmm"), p("a.wmz"))
	mustFail(t, "", "--k 0", "search", "-m", p("q.wmm"), "--query", p("obs.npz"), "--k", "0", p("a.wmz"))
	mustFail(t, "", "state queries", "search", "-m", p("q.wmm"), "--query", p("slots.npy"), "--state", p("a.wmz"))
	if _, err := os.Stat(filepath.Join(filepath.Dir(p("a.wmz")), "b.wmzi")); err == nil {
		t.Error("search wrote an index")
	}
}

// TestBenchRetrievalRuns runs the benchmark on a tiny set.
func TestBenchRetrievalRuns(t *testing.T) {
	p, _ := obsSet(t)
	js := mustRun(t, "bench", "retrieval", "-q", "-m", p("q.wmm"), "--slot-queries", "20", "--state-queries", "5", "--lambdas", "64,1", "--json", p("obs.npz"))
	var rep struct {
		Points []struct {
			Policy      string  `json:"policy"`
			StateRecall float64 `json:"state_recall"`
		} `json:"points"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil || len(rep.Points) != 3 || rep.Points[0].Policy != "lossless" {
		t.Fatalf("%q: %v", js, err)
	}
}
