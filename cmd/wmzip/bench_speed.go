package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/wmzip/wmzip/cmd/wmzip/internal/bench"
	"github.com/wmzip/wmzip/internal/format"
)

func runBenchSpeed(args []string) error {
	fs := newFlags("bench speed", "[flags] [train.npz test.npz]\n\nOne table, one run, the same data: per coder, bits/state (model excluded, shown beside),\nencode and decode states/s on one goroutine (and on --threads), and p50/p90 latency of a\nrandom read of one state. wmzip lossless and at --distortion targets (needs float obs: a\nquantizer and a gate are trained; the λ search is timed apart), klauspost zstd (fastest,\ndefault, best, best with a dictionary from train), xz -9e, xz -9e given train and\nbrotli -q 11 when installed. Without files: the graphworld world of `wmzip demo`, with obs.")
	asJSON := fs.Bool("json", false, "print one JSON object")
	threads := fs.Int("threads", 1, "also measure on this many goroutines (at most GOMAXPROCS), for coders that can use them")
	reads := fs.Int("reads", 200, "random single-state reads per coder")
	seed := fs.Uint64("seed", 1, "seed of the random reads")
	minTime := fs.Duration("min-time", time.Second, "repeat each encode and decode figure for at least this long")
	keyframe := fs.Int("keyframe", format.DefaultKeyframeInterval, "wmzip's keyframe interval")
	dists := fs.String("distortion", "0.005,0.02", "target distortions of the lossy wmzip rows, comma-separated, or none")
	codes := fs.Bool("codes", false, "ignore float obs: code-only input, no quantizer and no lossy rows")
	external := fs.Bool("external", true, "run xz and brotli when installed")
	quiet := fs.Bool("q", false, "no progress output")
	fromJSON := fs.String("from-json", "", "print the table (or draw the plot) of a saved --json report instead of measuring")
	plotPath := fs.String("plot", "", "also draw bits/state against decode states/s of every coder, the lossless Pareto front joined (PNG)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	ins := []*string{fromJSON}
	for i := range pos {
		ins = append(ins, &pos[i])
	}
	if err := checkFiles(ins, output{flag: "--plot", path: plotPath}); err != nil {
		return err
	}
	if *fromJSON != "" {
		b, err := os.ReadFile(*fromJSON)
		if err != nil {
			return err
		}
		var rep bench.SpeedReport
		if err := json.Unmarshal(b, &rep); err != nil {
			return fmt.Errorf("%s: %w", *fromJSON, err)
		}
		if *plotPath != "" {
			return bench.PlotSpeed(*plotPath, &rep)
		}
		return rep.WriteText(os.Stdout)
	}
	if *threads < 1 || *reads < 1 {
		return errors.New("--threads and --reads must be at least 1")
	}
	targets := []float64{}
	if *dists != "none" {
		if targets, err = parseList(*dists, func(s string) (float64, error) {
			d, err := strconv.ParseFloat(s, 64)
			if err != nil || !(d > 0) {
				return 0, fmt.Errorf("--distortion %q: want positive numbers or none", s)
			}
			return d, nil
		}); err != nil {
			return err
		}
	}
	logf := logger(*quiet)
	train, test, name, err := bench.Pair(pos, !*codes)
	if err != nil {
		return err
	}
	s, err := bench.Prepare(name, train, test, bench.SetupOptions{CodesOnly: *codes, Log: logf})
	if err != nil {
		return err
	}
	rep, err := bench.Speed(s, bench.SpeedOptions{Threads: *threads, Reads: *reads, Seed: *seed, MinTime: *minTime,
		Keyframe: *keyframe, Distortions: targets, SkipExternal: !*external, Log: logf})
	if err != nil {
		return err
	}
	if *plotPath != "" {
		if err := bench.PlotSpeed(*plotPath, rep); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(rep)
	}
	return rep.WriteText(os.Stdout)
}
