package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/opq"
	"github.com/wmzip/wmzip/wm"
)

// opqSection is the model-file section that holds the quantizer.
const opqSection = "OPQ "

func init() {
	register("quantize", "quantize float observations (obs) into codes with a model's quantizer", runQuantize)
}

// quantizerOf returns the model's quantizer, or nil when it has none.
func quantizerOf(m *wm.Model) (*opq.Quantizer, error) {
	b := m.Section(opqSection)
	if b == nil {
		return nil, nil
	}
	q, err := opq.UnmarshalQuantizer(b)
	if err != nil {
		return nil, fmt.Errorf("model %s: quantizer: %w", m.ID(), err)
	}
	return q, nil
}

// trainQuantizer fits a quantizer to the slot vectors of trajectories.
func trainQuantizer(trs []*npz.Trajectory, cfg opq.Config, quiet bool) (*opq.Quantizer, error) {
	d := trs[0].ObsD
	var vecs []float32
	for _, tr := range trs {
		if tr.ObsD != d {
			return nil, fmt.Errorf("observation dimension %d differs from %d", tr.ObsD, d)
		}
		vecs = append(vecs, tr.Obs...)
	}
	cfg.Dim = d
	if !quiet {
		cfg.Progress = opq.TerminalProgress(os.Stderr, quiet)
	}
	return opq.Train(vecs, cfg)
}

// quantizeInto sets tr.Codes from tr.Obs with q: each slot vector becomes
// M codes, so a [T,S,d] trajectory gets codes [T,S,M].
func quantizeInto(q *opq.Quantizer, tr *npz.Trajectory) error {
	if tr.Obs == nil {
		return errors.New("no `obs` array to quantize")
	}
	if tr.ObsD != q.Dim() {
		return fmt.Errorf("observations have %d dimensions, the quantizer %d", tr.ObsD, q.Dim())
	}
	codes := make([]uint16, tr.T*tr.ObsS*q.M())
	if err := q.Encode(tr.Obs, codes); err != nil {
		return err
	}
	tr.Codes, tr.S, tr.M = codes, tr.ObsS, q.M()
	if q.K() <= 256 {
		tr.CodesDtype = "uint8"
	} else {
		tr.CodesDtype = "uint16"
	}
	return nil
}

// reconstructInto sets tr.Obs to the quantizer's reconstruction of tr.Codes.
func reconstructInto(q *opq.Quantizer, tr *npz.Trajectory) error {
	if tr.M != q.M() {
		return fmt.Errorf("codes have %d subspaces, the quantizer %d", tr.M, q.M())
	}
	obs := make([]float32, tr.T*tr.S*q.Dim())
	if err := q.Decode(tr.Codes, obs); err != nil {
		return err
	}
	tr.Obs, tr.ObsS, tr.ObsD, tr.ObsDtype = obs, tr.S, q.Dim(), "float32"
	return nil
}

// loadStates reads a trajectory for a model: float obs quantized with the
// model's quantizer when the model has one and the file has obs, else the
// file's codes as they are.
func loadStates(path string, m *wm.Model) (*npz.Trajectory, error) {
	tr, err := npz.ReadTrajectory(path)
	if err != nil {
		return nil, err
	}
	if tr.Obs != nil && m.Section(opqSection) != nil || tr.Codes == nil {
		q, err := quantizerOf(m)
		if err != nil {
			return nil, err
		}
		if q == nil {
			return nil, fmt.Errorf("%s: no `codes` array, and the model has no quantizer for its `obs`", path)
		}
		if err := quantizeInto(q, tr); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return checkCodes(path, tr, &m.Geom)
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
	m, err := loadModel(*modelPath)
	if err != nil {
		return err
	}
	q, err := quantizerOf(m)
	if err != nil {
		return err
	}
	if q == nil {
		return fmt.Errorf("%s: the model has no quantizer (train it on a trajectory with `obs`)", *modelPath)
	}
	tr, err := npz.ReadTrajectory(pos[0])
	if err != nil {
		return err
	}
	if err := quantizeInto(q, tr); err != nil {
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
