package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/cmd/wmzip/internal/bench"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/npz"
)

func runBenchRetrieval(args []string) error {
	fs := newFlags("bench retrieval", "-m model.wmm [flags] in.npz")
	modelPath := fs.String("m", "", "model with a quantizer and a GATE section (required)")
	slotQ := fs.Int("slot-queries", 1000, "slot vector queries, spread over the input's held-out last episodes")
	checkInt("slot-queries", slotQ, 1, 1<<20, "a count from 1")
	stateQ := fs.Int("state-queries", 200, "state queries, likewise")
	checkInt("state-queries", stateQ, 1, 1<<20, "a count from 1")
	k := fs.Int("k", 10, "recall@k")
	checkInt("k", k, 1, 1000, "a count from 1 to 1000")
	lambdas := fs.String("lambdas", "", "comma-separated λ of the rule (default: powers of two from 16384 down to 1/16)")
	policies := fs.Bool("policies", false, "also the other retention policies of bench rd")
	keyframe := fs.Int("keyframe", format.DefaultKeyframeInterval, "keyframe interval of the encodings")
	asJSON := fs.Bool("json", false, "print one JSON object")
	plotPath := fs.String("plot", "", "write recall against bits/state (PNG)")
	quiet := fs.Bool("q", false, "no progress output")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("want exactly one input trajectory with float obs")
	}
	if *modelPath == "" {
		return errors.New("missing -m model.wmm (a model with a quantizer and a gate)")
	}
	if err := checkFiles([]*string{&pos[0], modelPath}, output{flag: "--plot", path: plotPath}); err != nil {
		return err
	}
	var knobs []float64
	if *lambdas != "" {
		if knobs, err = parseList(*lambdas, func(v string) (float64, error) {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x > 0) || x >= 65536 {
				return 0, fmt.Errorf("--lambdas %q: want λ values in (0, 65536)", v)
			}
			return x, nil
		}); err != nil {
			return err
		}
	}
	codec, err := wmzlib.LoadCodec(*modelPath)
	if err != nil {
		return err
	}
	tr, err := npz.ReadTrajectory(pos[0])
	if err != nil {
		return err
	}
	c := bench.RetrievalConfig{
		RD:          bench.RDConfig{Input: pos[0], Traj: tr, Model: codec.Model(), Keyframe: *keyframe},
		SlotQueries: *slotQ, StateQueries: *stateQ, K: *k, Policies: *policies, Lambdas: knobs,
	}
	rep, err := bench.Retrieval(c, logger(*quiet))
	if err != nil {
		return err
	}
	if *plotPath != "" {
		if err := bench.PlotRetrieval(*plotPath, rep); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(rep)
	}
	bench.PrintRetrieval(os.Stdout, rep)
	return nil
}
