package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/wmzip/wmzip/cmd/wmzip/internal/bench"
)

func runBenchCapacity(args []string) error {
	fs := newFlags("bench capacity", "[flags] [train.npz test.npz]\n\nTrains a world model at each capacity (the fraction of the training states its\nreference store keeps), codes test losslessly with each, and prints total storage\nper state — model bytes × 8 / horizon + episodes bits/state — for horizons of\n10^2 to 10^7 states, beside klauspost zstd (best) and xz -9e (when installed), with\nthe best capacity per horizon and the break-even horizon of every pair (MemoWM\nAppendix A.4). Without files: the graphworld world of `wmzip demo`, codes only.")
	asJSON := fs.Bool("json", false, "print one JSON object")
	png := fs.String("png", "", "also write the plot of total storage by horizon to this PNG file")
	capList := fs.String("capacities", "0.0625,0.125,0.25,0.5,1", "capacities in (0,1], comma-separated")
	external := fs.Bool("external", true, "run xz when installed")
	quiet := fs.Bool("q", false, "no progress output")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	caps, err := parseList(*capList, func(s string) (float64, error) {
		c, err := strconv.ParseFloat(s, 64)
		if err != nil || !(c > 0 && c <= 1) {
			return 0, fmt.Errorf("--capacities %q: want numbers in (0,1]", s)
		}
		return c, nil
	})
	if err != nil {
		return err
	}
	ins := []*string{}
	for i := range pos {
		ins = append(ins, &pos[i])
	}
	if err := checkFiles(ins, output{flag: "--png", path: png}); err != nil {
		return err
	}
	train, test, name, err := bench.Pair(pos, false)
	if err != nil {
		return err
	}
	logf := logger(*quiet)
	rep, err := bench.CapacityBench(name, train, test, bench.CapacityOptions{Capacities: caps, SkipExternal: !*external, Log: logf})
	if err != nil {
		return err
	}
	if *png != "" {
		if err := rep.SavePNG(*png); err != nil {
			return err
		}
	}
	if *asJSON {
		return rep.WriteJSON(os.Stdout)
	}
	return rep.WriteText(os.Stdout)
}
