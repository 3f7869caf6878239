package main

import (
	"errors"
	"os"

	"github.com/wmzip/wmzip/cmd/wmzip/internal/bench"
	"github.com/wmzip/wmzip/internal/format"
)

func runBenchLossless(args []string) error {
	fs := newFlags("bench lossless", "[flags] --train train.npz... test.npz")
	var trains []string
	fs.Func("train", "training trajectory (repeatable; required)", func(v string) error { trains = append(trains, v); return nil })
	keyframe := fs.Int("keyframe", format.DefaultKeyframeInterval, "keyframe interval of the encoding")
	external := fs.Bool("external", true, "also run xz, brotli and the zstd CLI when installed")
	asJSON := fs.Bool("json", false, "print one JSON object")
	quiet := fs.Bool("q", false, "no progress output")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("want exactly one test trajectory")
	}
	if len(trains) == 0 {
		return errors.New("missing --train train.npz")
	}
	c := bench.LosslessConfig{TrainNames: trains, TestName: pos[0], Keyframe: *keyframe, External: *external,
		Progress: func(stage string) func(int, int) { return progress(*quiet, stage) }}
	for _, p := range trains {
		tr, err := loadCodes(p)
		if err != nil {
			return err
		}
		c.Train = append(c.Train, tr)
	}
	if c.Test, err = loadCodes(pos[0]); err != nil {
		return err
	}
	rep, err := bench.Lossless(c)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(rep)
	}
	bench.PrintLossless(os.Stdout, rep)
	return nil
}
