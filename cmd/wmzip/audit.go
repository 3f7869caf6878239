package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wmzip/wmzip/cmd/wmzip/internal/plot"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/internal/ctmc"
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

	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("want one FILE, got %d; see wmzip audit -h", len(pos))
	}
	if *sims < 0 || *workers < 0 || *maxCand < 0 || *xmax < 1 {
		return errors.New("--sims, --workers, --max-candidates must be ≥ 0 and --xmax ≥ 1")
	}
	name := pos[0]
	ins := []*string{}
	if name != "-" { // read by LoadCounts itself
		ins = append(ins, &name)
	}
	if err := checkFiles(ins, output{flag: "--plot", path: plotPath}); err != nil {
		return err
	}
	counts, zeros, source, err := ctmc.LoadCounts(name, *countsMode, *by)
	if err != nil {
		return err
	}

	opt := ctmc.Options{Sims: *sims, Seed: *seed, Workers: *workers, XMax: *xmax, MaxCandidates: *maxCand}
	if *sims > 0 {
		opt.Progress = progress(*quiet, "bootstrap")
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
		return printJSON(out)
	}
	rep.WriteText(os.Stdout, name, source, elapsed)
	return nil
}

// writePlot writes the PNG beside its destination and renames it, so a
// failed run leaves no partial file under the final name.
func writePlot(path string, counts []int64, rep *ctmc.Report, title string) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	if err := plot.CCDF(f, counts, rep, title); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
