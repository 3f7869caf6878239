package main

import (
	"errors"
	"fmt"

	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/opq"
	"github.com/wmzip/wmzip/wm"
)

func init() {
	register("train", "train a world model (.wmm) from trajectories", runTrain)
}

func runTrain(args []string) error {
	fs := newFlags("train", "[flags] -o model.wmm train.npz...")
	addUsageNote(fs, trajectoryNote)
	out := fs.String("o", "", "output model file (required)")
	prec := fs.Uint("precision", wm.DefaultPrecision, "rANS probability precision in bits (10..16)")
	maxRef := fs.Int("max-ref", 65536, "most states kept in the model's reference store")
	capacity := fs.Float64("capacity", 1, "fraction (0,1] of the training states the reference store keeps: smaller models, more bits per state (see: wmzip bench capacity)")
	alpha := fs.Int("alphabet", 0, "alphabet size K (0: the smallest power of two above the largest code)")
	gateHold := fs.Int("gate-holdout", -1, "episodes held out to calibrate the retention gate (-1: one in eight; 0: no gate)")
	gateWeights := fs.String("gate-weights", "", "per-coordinate impact weights of the gate (.npy of N values)")
	gateBins := fs.String("gate-bins", "modal", gateBinsUsage)
	subspaces := fs.Int("subspaces", 32, "quantizer: subspaces M per slot vector, when the input has float obs")
	centroids := fs.Int("centroids", 64, "quantizer: centroids K per subspace")
	seed := fs.Uint64("seed", 1, "quantizer: seed of its k-means++ initialization")
	qIters := fs.Int("quantizer-iters", 0, "quantizer: rotation updates (0: the default; negative: plain PQ)")
	qSample := fs.Int("quantizer-sample", 0, "quantizer: training vectors sampled (0: the default; negative: all)")
	noQuant := fs.Bool("no-quantizer", false, "ignore float obs: train on the inputs' codes only")
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
	gopt, err := gateBinsFlag(*gateBins)
	if err != nil {
		return err
	}
	trs := make([]*npz.Trajectory, len(pos))
	var withObs []*npz.Trajectory
	for i, path := range pos {
		if trs[i], err = npz.ReadTrajectory(path); err != nil {
			return err
		}
		if trs[i].Obs != nil && !*noQuant {
			withObs = append(withObs, trs[i])
		} else if trs[i].Codes == nil {
			return fmt.Errorf("%s: no `codes` array", path)
		}
	}
	// Float observations: train a quantizer on them and code them with it
	// (their own `codes`, if any, are replaced so that the model's codes and
	// its quantizer agree).
	var q *opq.Quantizer
	if len(withObs) > 0 {
		if q, err = trainQuantizer(withObs, opq.Config{M: *subspaces, K: *centroids, Seed: *seed, OPQIters: *qIters, Sample: *qSample}, *quiet); err != nil {
			return err
		}
		for _, tr := range withObs {
			if err := quantizeInto(q, tr); err != nil {
				return err
			}
		}
	}
	var eps []wm.Episode
	var g wm.Geometry
	for i, path := range pos {
		tr, err := checkCodes(path, trs[i], nil)
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
	m, err := wm.Train(g, eps, wm.TrainOptions{Precision: *prec, MaxRefStates: *maxRef, Capacity: *capacity, Progress: progress(*quiet, "calibrating")})
	if err != nil {
		return err
	}
	if q != nil {
		qb, _ := q.MarshalBinary()
		if m, err = m.WithSection(opqSection, qb); err != nil {
			return err
		}
	}
	if m, err = withGate(m, eps, *gateHold, *gateWeights, gopt, wm.TrainOptions{Precision: *prec, MaxRefStates: *maxRef, Capacity: *capacity}); err != nil {
		return err
	}
	b, _ := m.MarshalBinary()
	if err := atomicfile.WriteFile(*out, b); err != nil {
		return err
	}
	if !*quiet {
		fmt.Printf("wrote %s: model %s, %d bytes, geometry %dx%d K=%d, %d reference states", *out, m.ID(), len(b), g.S, g.M, g.K, m.RefStates())
		if q != nil {
			fmt.Printf(", quantizer %d-d", q.Dim())
		}
		fmt.Println()
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
