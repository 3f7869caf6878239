//go:build ignore

// Command powerlaw_compare writes synthetic discrete power-law counts, one
// per line, for scripts/powerlaw_compare.sh and timing runs:
//
//	go run scripts/powerlaw_compare.go -n 100000 -alpha 2 -xmin 1 -seed 1 > pl.counts
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/wmzip/wmzip/internal/ctmc"
)

func main() {
	n := flag.Int("n", 100000, "number of counts")
	alpha := flag.Float64("alpha", 2, "exponent (> 1)")
	xmin := flag.Int64("xmin", 1, "lower bound (≥ 1)")
	seed := flag.Uint64("seed", 1, "seed")
	flag.Parse()
	if *n < 0 || *alpha <= 1 || *xmin < 1 {
		fmt.Fprintln(os.Stderr, "powerlaw_compare: need n ≥ 0, alpha > 1, xmin ≥ 1")
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "# discrete power law alpha=%g xmin=%d n=%d seed=%d (ctmc.SamplePowerLaw)\n", *alpha, *xmin, *n, *seed)
	for _, v := range ctmc.SamplePowerLaw(*n, *xmin, *alpha, *seed) {
		fmt.Fprintln(w, v)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
