package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/wmzip/wmzip/cmd/wmzip/internal/bench"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/npz"
)

func init() {
	register("bench", "benchmarks: 'bench rd in.npz' retention policies at matched distortion; 'bench alloc' storage by access rank; 'bench speed' speed beside zstd, xz, brotli; 'bench capacity' total storage by model capacity and horizon; 'bench retrieval' recall@10 against bits/state", runBench)
}

func runBench(args []string) error {
	if len(args) > 0 && args[0] == "lossless" {
		return runBenchLossless(args[1:])
	}
	if len(args) > 0 && args[0] == "alloc" {
		return runBenchAlloc(args[1:])
	}
	if len(args) > 0 && args[0] == "speed" {
		return runBenchSpeed(args[1:])
	}
	if len(args) > 0 && args[0] == "capacity" {
		return runBenchCapacity(args[1:])
	}
	if len(args) > 0 && args[0] == "retrieval" {
		return runBenchRetrieval(args[1:])
	}
	if len(args) == 0 || args[0] != "rd" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(os.Stderr, "usage: wmzip bench rd|lossless|alloc|speed|capacity|retrieval [flags] ...  (wmzip bench alloc -h: storage allocated by access, the Table 6 analogue; wmzip bench speed -h: rates, speeds and random reads beside zstd, xz and brotli)")
			return runBenchRD([]string{"-h"})
		}
		return errors.New("want a benchmark name: wmzip bench rd|lossless|alloc|speed|capacity|retrieval [flags] ...")
	}
	return runBenchRD(args[1:])
}

func runBenchRD(args []string) error {
	fs := newFlags("bench rd", "[flags] in.npz")
	modelPath := fs.String("m", "", "model with a GATE section; the whole input is then the test set")
	trainPath := fs.String("train", "", "training trajectories (default: the input's first episodes)")
	codesOnly := fs.Bool("codes", false, "use the input's codes even when it has float obs (distortion in code space)")
	opqM := fs.Int("opq-m", 32, "subspaces of the quantizer trained on obs")
	opqK := fs.Int("opq-k", 64, "centroids per subspace of the quantizer trained on obs")
	keyframe := fs.Int("keyframe", format.DefaultKeyframeInterval, "keyframe interval of the encodings")
	maxStates := fs.Int("max-states", 0, "use at most this many test states (0: all)")
	quick := fs.Bool("quick", false, "half the knob values")
	only := fs.String("policies", "", "comma-separated subset of policies to run (default: all)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	plotPath := fs.String("plot", "", "write the rate–distortion plot (PNG)")
	fromJSON := fs.String("from-json", "", "redraw the plot of a saved --json report instead of measuring")
	quiet := fs.Bool("q", false, "no progress output")
	gateBins := fs.String("gate-bins", "modal", gateBinsUsage+"; without -m")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("want exactly one input trajectory")
	}
	if err := checkFiles([]*string{&pos[0], modelPath, trainPath, fromJSON}, output{flag: "--plot", path: plotPath}); err != nil {
		return err
	}
	logf := logger(*quiet)
	if *fromJSON != "" {
		b, err := os.ReadFile(*fromJSON)
		if err != nil {
			return err
		}
		var rep bench.RDReport
		if err := json.Unmarshal(b, &rep); err != nil {
			return fmt.Errorf("%s: %w", *fromJSON, err)
		}
		if *plotPath == "" {
			bench.PrintRD(os.Stdout, &rep)
			return nil
		}
		return bench.PlotRD(*plotPath, &rep, pos[0])
	}
	gopt, err := gateBinsFlag(*gateBins)
	if err != nil {
		return err
	}
	c := bench.RDConfig{Input: pos[0], TrainName: *trainPath, CodesOnly: *codesOnly, OPQM: *opqM, OPQK: *opqK, MaxStates: *maxStates, Gate: gopt, Keyframe: *keyframe}
	if c.Traj, err = npz.ReadTrajectory(pos[0]); err != nil {
		return err
	}
	if *modelPath != "" {
		codec, err := loadCodec(*modelPath)
		if err != nil {
			return err
		}
		c.Model = codec.Model()
	} else if *trainPath != "" {
		if c.Train, err = npz.ReadTrajectory(*trainPath); err != nil {
			return err
		}
	}
	if *only != "" {
		c.Only = map[string]bool{}
		for _, p := range strings.Split(*only, ",") {
			c.Only[p] = true
		}
	}
	s, err := bench.PrepareRD(c, logf)
	if err != nil {
		return err
	}
	rep, err := s.Sweep(*quick, logf)
	if err != nil {
		return err
	}
	if *plotPath != "" {
		if err := bench.PlotRD(*plotPath, rep, pos[0]); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(rep)
	}
	bench.PrintRD(os.Stdout, rep)
	return nil
}
