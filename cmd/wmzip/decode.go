package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/wm"
)

func init() {
	register("decode", "decompress a .wmz file into a trajectory (.npz)", runDecode)
}

// openWMZ opens a .wmz with the model at modelPath, or its embedded model
// when modelPath is empty.
func openWMZ(path, modelPath string) (*format.File, *os.File, error) {
	var m *wm.Model
	if modelPath != "" {
		var err error
		if m, err = loadModel(modelPath); err != nil {
			return nil, nil, err
		}
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	f, err := format.Open(fh, st.Size(), m)
	if err != nil {
		fh.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, fh, nil
}

// decodeAll decodes every episode of f into a trajectory.
func decodeAll(f *format.File, quiet bool) (*npz.Trajectory, error) {
	h := f.Header()
	tr := &npz.Trajectory{S: h.Geom.S, M: h.Geom.M, HasActions: true}
	if h.Geom.K <= 256 {
		tr.CodesDtype = "uint8"
	} else {
		tr.CodesDtype = "uint16"
	}
	prog := progress(quiet, "decoding")
	for e := range f.Episodes() {
		acts, codes, err := f.DecodeEpisode(e)
		if err != nil {
			return nil, err
		}
		tr.EpisodeStart = append(tr.EpisodeStart, int64(len(tr.Actions)))
		tr.Actions = append(tr.Actions, acts...)
		tr.Codes = append(tr.Codes, codes...)
		prog(e+1, f.Episodes())
	}
	tr.T = len(tr.Actions)
	if tr.T == 0 {
		tr.EpisodeStart = []int64{0}
	}
	return tr, nil
}

func runDecode(args []string) error {
	fs := newFlags("decode", "[-m model.wmm] -o out.npz in.wmz")
	modelPath := fs.String("m", "", "model file (default: the model embedded in the file)")
	out := fs.String("o", "", "output .npz (required)")
	codesOnly := fs.Bool("codes-only", false, "write only `codes`, not the quantizer's reconstruction `obs`")
	quiet := fs.Bool("q", false, "no progress or summary output")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return errors.New("missing -o out.npz")
	}
	if len(pos) != 1 {
		return errors.New("want exactly one input .wmz")
	}
	f, fh, err := openWMZ(pos[0], *modelPath)
	if err != nil {
		return err
	}
	defer fh.Close()
	tr, err := decodeAll(f, *quiet)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	// With a quantizer in the model, also give back the slot vectors.
	q, err := quantizerOf(f.Model())
	if err != nil {
		return err
	}
	if q != nil && !*codesOnly {
		if err := reconstructInto(q, tr); err != nil {
			return err
		}
	}
	if err := npz.WriteTrajectory(*out, tr); err != nil {
		return err
	}
	if !*quiet {
		fmt.Printf("wrote %s: %d states, %d episodes\n", *out, tr.T, len(tr.EpisodeStart))
	}
	return nil
}
