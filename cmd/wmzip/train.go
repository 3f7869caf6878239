package main

import (
	"errors"
	"fmt"

	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/wm"
)

func init() {
	register("train", "train a world model (.wmm) from trajectories", runTrain)
}

func runTrain(args []string) error {
	fs := newFlags("train", "[flags] -o model.wmm train.npz...")
	out := fs.String("o", "", "output model file (required)")
	prec := fs.Uint("precision", wm.DefaultPrecision, "rANS probability precision in bits (10..16)")
	maxRef := fs.Int("max-ref", 65536, "most states kept in the model's reference store")
	alpha := fs.Int("alphabet", 0, "alphabet size K (0: the smallest power of two above the largest code)")
	gateHold := fs.Int("gate-holdout", -1, "episodes held out to calibrate the retention gate (-1: one in eight; 0: no gate)")
	gateWeights := fs.String("gate-weights", "", "per-coordinate impact weights of the gate (.npy of N values)")
	quiet := fs.Bool("q", false, "no progress or summary output")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return errors.New("missing -o model.wmm")
	}
	if len(pos) == 0 {
		return errors.New("no training trajectories given")
	}
	var eps []wm.Episode
	var g wm.Geometry
	for i, path := range pos {
		tr, err := loadCodes(path, nil)
		if err != nil {
			return err
		}
		gi := wm.Geometry{S: tr.S, M: tr.M, K: alphabetOf(tr.Codes)}
		if i == 0 {
			g = gi
		} else {
			if gi.S != g.S || gi.M != g.M {
				return fmt.Errorf("%s: codes shape %dx%d differs from %dx%d of %s", path, gi.S, gi.M, g.S, g.M, pos[0])
			}
			g.K = max(g.K, gi.K)
		}
		if *alpha != 0 {
			if gi.K > *alpha {
				return fmt.Errorf("%s: codes reach %d, above --alphabet %d", path, gi.K-1, *alpha)
			}
			g.K = *alpha
		}
		eps = append(eps, episodes(tr)...)
	}
	m, err := wm.Train(g, eps, wm.TrainOptions{Precision: *prec, MaxRefStates: *maxRef, Progress: progress(*quiet, "calibrating")})
	if err != nil {
		return err
	}
	if m, err = withGate(m, eps, *gateHold, *gateWeights, wm.TrainOptions{Precision: *prec, MaxRefStates: *maxRef}); err != nil {
		return err
	}
	b, _ := m.MarshalBinary()
	if err := atomicfile.WriteFile(*out, b); err != nil {
		return err
	}
	if !*quiet {
		fmt.Printf("wrote %s: model %s, %d bytes, geometry %dx%d K=%d, %d reference states\n", *out, m.ID(), len(b), g.S, g.M, g.K, m.RefStates())
	}
	return nil
}

// alphabetOf picks K for codes that carry none: the smallest power of two
// above the largest code, at least 2.
func alphabetOf(c []uint16) int {
	m := 0
	for _, v := range c {
		m = max(m, int(v))
	}
	k := 2
	for k <= m {
		k *= 2
	}
	return k
}
