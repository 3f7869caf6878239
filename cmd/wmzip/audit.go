package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/wmzip/wmzip/ctmc"
	"github.com/wmzip/wmzip/internal/atomicfile"
)

func init() {
	register("audit", "heavy-tail audit of memory-access counts (concentration, tail fits, bootstrap)", runAudit)
}

const auditUsage = `[--counts] FILE [--by page|state] [--json] [--plot ccdf.png] [--sims N] [--seed S] [-q]

FILE is an access trace (TSV with header "episode<TAB>step", one access per
line; counts are accesses per (episode, step)), or with --counts a counts
file (one non-negative integer per line), or a web-browsing step log
(*.jsonl with episode, step, page, scroll_y) counted per page or per
(page, scroll_y) state with --by. "-" reads standard input.`

func runAudit(args []string) error {
	fs := newFlags("audit", auditUsage)
	countsMode := fs.Bool("counts", false, "FILE is a counts file")
	by := fs.String("by", "page", "for a *.jsonl step log, count visits per `page|state`: per page, or per (page, scroll_y) state")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	plotPath := fs.String("plot", "", "write the CCDF with fitted tails to this `PNG` file")
	sims := fs.Int("sims", 500, "bootstrap simulations for p_gof (0 skips the bootstrap)")
	seed := fs.Uint64("seed", 1, "bootstrap seed")
	workers := fs.Int("workers", 0, "bootstrap goroutines (0 = GOMAXPROCS; results do not depend on it)")
	xmax := fs.Int64("xmax", ctmc.DefaultXMax, "upper end of the x_min search and the KS distance (poweRlaw's xmax)")
	maxCand := fs.Int("max-candidates", 0, "try only the smallest N distinct counts as x_min (0 = all)")
	quiet := fs.Bool("q", false, "no progress bar")

	// Flags may come before or after FILE: parse, take one positional,
	// parse the remainder again.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != 1 {
		return fmt.Errorf("want one FILE, got %d; see wmzip audit -h", len(pos))
	}
	if *sims < 0 || *workers < 0 || *maxCand < 0 || *xmax < 1 {
		return errors.New("--sims, --workers, --max-candidates must be ≥ 0 and --xmax ≥ 1")
	}
	name := pos[0]
	counts, zeros, source, err := loadCounts(name, *countsMode, *by)
	if err != nil {
		return err
	}

	opt := ctmc.Options{Sims: *sims, Seed: *seed, Workers: *workers, XMax: *xmax, MaxCandidates: *maxCand}
	if *sims > 0 && !*quiet && term.IsTerminal(int(os.Stderr.Fd())) {
		bar := progressbar.NewOptions(*sims,
			progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription("bootstrap"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		opt.Progress = func(done, total int) { _ = bar.Set(done) }
		defer bar.Close()
	}
	start := time.Now()
	rep, err := ctmc.Audit(counts, opt)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	rep.Zeros += zeros

	if *plotPath != "" {
		if err := writePlot(*plotPath, counts, rep, filepath.Base(name)+" ("+source+")"); err != nil {
			return err
		}
	}
	if *asJSON {
		out := struct {
			File   string `json:"file"`
			Source string `json:"source"`
			*ctmc.Report
		}{name, source, rep}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	printReport(os.Stdout, name, source, rep, elapsed)
	return nil
}

// loadCounts reads FILE in the format its flags and name select.
func loadCounts(name string, countsMode bool, by string) (counts []int64, zeros int, source string, err error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, 0, "", err
		}
		defer f.Close()
		r = f
	}
	wrap := func(err error) error { return fmt.Errorf("%s: %w", name, err) }
	switch {
	case countsMode:
		counts, zeros, err = ctmc.ReadCounts(r)
		return counts, zeros, "counts", wrapNil(wrap, err)
	case strings.HasSuffix(name, ".jsonl"):
		key, err := ctmc.ParseVisitKey(by)
		if err != nil {
			return nil, 0, "", err
		}
		items, err := ctmc.ReadStepVisits(r, key)
		if err != nil {
			return nil, 0, "", wrap(err)
		}
		return ctmc.Counts(items), 0, "visits per " + by, nil
	default:
		acc, err := ctmc.ReadTrace(r)
		if err != nil {
			return nil, 0, "", wrap(err)
		}
		return ctmc.Counts(ctmc.CountAccesses(acc)), 0, "accesses per (episode, step)", nil
	}
}

func wrapNil(wrap func(error) error, err error) error {
	if err == nil {
		return nil
	}
	return wrap(err)
}

// writePlot writes the PNG beside its destination and renames it, so a
// failed run leaves no partial file under the final name.
func writePlot(path string, counts []int64, rep *ctmc.Report, title string) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	if err := ctmc.PlotCCDF(f, counts, rep, title); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

func printReport(w io.Writer, name, source string, r *ctmc.Report, elapsed time.Duration) {
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
