package ctmc

import (
	"fmt"
	"io"
	"time"
)

// WriteText prints the report as the lines of `wmzip audit`: name and
// source say what was counted, elapsed how long the bootstrap took.
func (r *Report) WriteText(w io.Writer, name, source string, elapsed time.Duration) {
	c := r.Concentration
	fmt.Fprintf(w, "file           %s (%s)\n", name, source)
	fmt.Fprintf(w, "items          %d with accesses, %d accesses, %d zero counts dropped\n", c.Items, c.Accesses, r.Zeros)
	fmt.Fprintf(w, "concentration  Gini %.4f  top-10%% share %.2f%% (%d items)  σ_top10 %.3f (population; %.3f pp of accesses)\n",
		c.Gini, 100*c.Top10Share, c.Top10Items, c.SigmaTop10, c.SigmaTop10Pct)
	fmt.Fprintf(w, "               max %d  median %g  max/median %.2f  skew %.3f\n", c.Max, c.Median, c.MaxMedian, c.Skew)
	if pl := r.PowerLaw; pl != nil {
		fmt.Fprintf(w, "power law      x_min %d  α̂ %.4f  KS %.5f  n_tail %d (%.1f%%)  %d x_min candidates\n",
			pl.XMin, pl.Alpha, pl.KS, pl.NTail, 100*pl.TailShare, pl.Candidates)
		t, l, e := r.Truncated, r.LogNormal, r.Exponential
		fmt.Fprintf(w, "truncated PL   α %.4f  λ %.4g\n", t.Alpha, t.Lambda)
		if l.Degenerate {
			fmt.Fprintf(w, "log-normal     degenerate (no finite maximum: μ → −∞, σ² ∝ −μ): a power law, α %.4f, on the tail\n", l.Alpha)
		} else {
			fmt.Fprintf(w, "log-normal     μ %.4f  σ %.4f\n", l.Mu, l.Sigma)
		}
		fmt.Fprintf(w, "exponential    λ %.4g\n", e.Lambda)
		fmt.Fprintln(w, "Vuong tests    (normalised log-likelihood ratio, two-sided p; positive favours the first)")
		for _, cm := range r.Comparisons {
			extra := ""
			if cm.NestedP != nil {
				extra = fmt.Sprintf("  nested χ² p %.3g", *cm.NestedP)
			}
			if cm.Reason != "" {
				fmt.Fprintf(w, "  %-19s vs %-19s  undecided: %s\n", cm.A, cm.B, cm.Reason)
				continue
			}
			fmt.Fprintf(w, "  %-19s vs %-19s  LR %+8.3f  p %.3g  favours %s%s\n", cm.A, cm.B, cm.Statistic, cm.P, cm.Favors, extra)
		}
	}
	if b := r.Bootstrap; b != nil {
		fmt.Fprintf(w, "bootstrap      p_gof %.3f  (%d simulations, seed %d, %.1fs; mean simulated x_min %.2f, α̂ %.3f)\n",
			b.P, b.Sims, b.Seed, elapsed.Seconds(), b.MeanXMin, b.MeanAlpha)
	}
	fmt.Fprintf(w, "verdict        %s\n", r.Verdict)
}
