package ctmc

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAuditDegenerateLogNormal is issue 15, point 7: on web-pgdocs train
// pages the log-normal likelihood has no finite maximum, and the audit
// printed wherever its search stopped on the ridge (μ −145,550, σ 289;
// poweRlaw stops at μ −794, σ 21) with a Vuong statistic depending on it.
func TestAuditDegenerateLogNormal(t *testing.T) {
	x := readTestCounts(t, "web-pgdocs_train_pages.counts")
	r, err := Audit(x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := r.LogNormal
	if !l.Degenerate || !math.IsInf(l.Mu, -1) || !math.IsInf(l.Sigma, 1) {
		t.Fatalf("log-normal %+v, want degenerate", *l)
	}
	if math.Abs(l.Alpha-2.7431) > 1e-3 {
		t.Errorf("limit exponent %.4f, want 2.7431", l.Alpha)
	}
	// Every point of the ridge, the two stops above included, lies below
	// the limit, and far out on it approaches the limit.
	s := newSample(x)
	fit, _ := s.fitPowerLaw(DefaultXMax, 0)
	tl := s.tail(fit.j)
	for _, p := range [][2]float64{{-794, 21}, {-145549.97, 288.97}, {-1, 2}, {1, 1}} {
		if ll := tl.lnLogLik(p[0], p[1]); ll > l.LogLik+1e-6 {
			t.Errorf("log-normal (μ %g, σ %g) has log-likelihood %.6f above the limit's %.6f", p[0], p[1], ll, l.LogLik)
		}
	}
	beta := 1e-6
	if ll := tl.lnLogLik(-(l.Alpha-1)/(2*beta), 1/math.Sqrt(2*beta)); math.Abs(ll-l.LogLik) > 1e-3 {
		t.Errorf("ridge at β=%g: log-likelihood %.6f, limit %.6f", beta, ll, l.LogLik)
	}
	for _, i := range []int{0, 2} {
		c := r.Comparisons[i]
		if c.Reason == "" || c.P != 1 || c.Statistic != 0 || c.Favors != "neither" {
			t.Errorf("comparison %s vs %s = %+v, want a tie with a reason", c.A, c.B, c)
		}
	}
	if !strings.Contains(r.Verdict, "degenerate") {
		t.Errorf("verdict %q does not say the log-normal is degenerate", r.Verdict)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"log_normal":{"mu":null,"sigma":null,`) {
		t.Errorf("JSON: %s", b)
	}
}

// TestAuditLogNormalFinite checks that tails with a finite maximum keep
// their fit: a log-normal sample, and tails where it lies at modest μ.
func TestAuditLogNormalFinite(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 1))
	x := make([]int64, 5000)
	for i := range x {
		x[i] = int64(math.Round(math.Exp(3 + r.NormFloat64())))
	}
	s := newSample(x)
	tl := s.tail(0)
	if l := tl.fitLogNormal(); l.degenerate || math.Abs(l.mu-3) > 0.1 || math.Abs(l.sigma-1) > 0.1 {
		t.Errorf("log-normal sample (μ 3, σ 1): fit %+v", l)
	}
	for name, want := range map[string][2]float64{
		"web-pgdocs_test_states.counts": {-1.7243, 1.3932},
		"pl_a2.5_n5000.counts":          {-7.6134, 2.5490},
	} {
		rep, err := Audit(readTestCounts(t, name), Options{})
		if err != nil {
			t.Fatal(err)
		}
		l := rep.LogNormal
		for _, c := range rep.Comparisons {
			if c.Reason != "" {
				t.Errorf("%s: %s vs %s: reason %q on a finite fit", name, c.A, c.B, c.Reason)
			}
		}
		if l.Degenerate || math.Abs(l.Mu-want[0]) > 1e-3 || math.Abs(l.Sigma-want[1]) > 1e-3 {
			t.Errorf("%s: log-normal %+v, want μ %g σ %g", name, *l, want[0], want[1])
		}
		if _, err := json.Marshal(rep); err != nil {
			t.Error(err)
		}
	}
}
