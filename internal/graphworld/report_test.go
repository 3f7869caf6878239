package graphworld

import (
	"os"
	"testing"
	"time"
)

// TestReport prints the per-family figures quoted in the package notes.
// Run with GRAPHWORLD_REPORT=1 go test -run TestReport -v.
func TestReport(t *testing.T) {
	if os.Getenv("GRAPHWORLD_REPORT") == "" {
		t.Skip("set GRAPHWORLD_REPORT=1")
	}
	for _, fam := range Families {
		start := time.Now()
		r, err := Generate(Config{Family: fam, Nodes: 500, GraphSeed: 1, Seed: 2, Episodes: 4, Steps: 500, Ideal: true})
		if err != nil {
			t.Fatal(err)
		}
		el := time.Since(start)
		sum, mx := 0, 0
		for _, d := range r.Degrees {
			sum += d
			mx = max(mx, d)
		}
		p := r.EntropyParts
		t.Logf("%-11s H=%.2f±%.2f ideal=%.2f±%.2f [start %.3f act %.3f nb %.3f noise %.1f dyn %.1f] meandeg=%.2f maxdeg=%d gini=%.3f top10=%.1f%% (%v)",
			fam, r.EntropyBitsPerState, r.EntropyStdErr, r.IdealBitsPerState, r.IdealStdErr, p.Start, p.Action, p.Neighbor, p.Noise, p.Dynamic,
			float64(sum)/float64(len(r.Degrees)), mx, Gini(r.VisitCounts), 100*TopShare(r.VisitCounts, 0.1), el)
	}
}
