package main

import (
	"errors"
	"fmt"

	"github.com/wmzip/wmzip/internal/traj"
	"github.com/wmzip/wmzip/npz"
)

func init() {
	register("quantize", "quantize float observations (obs) into codes with a model's quantizer", runQuantize)
}

func runQuantize(args []string) error {
	fs := newFlags("quantize", "-m model.wmm -o codes.npz in.npz")
	modelPath := fs.String("m", "", "model file with a quantizer (required)")
	out := fs.String("o", "", "output .npz with codes (required)")
	keepObs := fs.Bool("keep-obs", false, "also copy the input's obs to the output")
	quiet := fs.Bool("q", false, "no summary output")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *modelPath == "" {
		return errors.New("missing -m model.wmm")
	}
	if *out == "" {
		return errors.New("missing -o codes.npz")
	}
	if len(pos) != 1 {
		return errors.New("want exactly one input trajectory")
	}
	if err := checkFiles([]*string{&pos[0], modelPath}, output{flag: "-o", path: out}); err != nil {
		return err
	}
	c, err := loadCodec(*modelPath)
	if err != nil {
		return err
	}
	if c.Quantizer() == nil {
		return fmt.Errorf("%s: the model has no quantizer (train it on a trajectory with `obs`)", *modelPath)
	}
	tr, err := npz.ReadTrajectory(pos[0])
	if err != nil {
		return err
	}
	if err := traj.Quantize(tr, c); err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	if !*keepObs {
		tr.Obs = nil
	}
	if err := npz.WriteTrajectory(*out, tr); err != nil {
		return err
	}
	if !*quiet {
		fmt.Printf("wrote %s: %d states of %dx%d codes\n", *out, tr.T, tr.S, tr.M)
	}
	return nil
}
