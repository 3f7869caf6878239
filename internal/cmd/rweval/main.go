// Command rweval calibrates a retrieval-aware retention gate for a model
// and writes the model with it (and, for comparison, with the gate
// recalibrated at unit weights), so that `wmzip bench retrieval` can set
// the two side by side.
//
//	go run ./internal/cmd/rweval -m model.wmm -o out.wmm [-rate 0.15] [-calib 6] [-marginal] [-search-fill] train.npz
//
// The model must have been trained on train.npz (float observations) with
// a quantizer. The weights (train.RetrievalWeights) need a lossy memory
// coded by a model that never saw it: the last -calib episodes are that
// memory, coded by a codec trained here on the others (its own gate
// calibrated on its last one in eight). The final gate is then calibrated
// as training calibrates it (a model trained without the last one in
// eight episodes, run on them) with those weights.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/traj"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/train"
)

func main() {
	model := flag.String("m", "", "trained model (.wmm) with a quantizer")
	out := flag.String("o", "", "the model with the retrieval-aware gate")
	unit := flag.String("unit", "", "optional: the model with its gate recalibrated at unit weights")
	rate := flag.Float64("rate", 0.15, "fraction of the lossless rate the weights are tuned at")
	calibEps := flag.Int("calib", 6, "last episodes of the input that calibrate the weights")
	wout := flag.String("w", "", "optional: the weights as .npy")
	subspaces := flag.Bool("subspaces", false, "weigh subspaces too (train.RetrievalOptions.Subspaces)")
	marginal := flag.Bool("marginal", false, "calibrate ê as each coordinate's marginal error rate (gate.CalibOptions.Marginal)")
	noWeights := flag.Bool("no-weights", false, "skip the weights (unit weights in -o)")
	searchFill := flag.Bool("search-fill", false, "the gate's fill for search (gate.CalibOptions.SearchFill)")
	plain := flag.Bool("plain-error", false, "plain error rates (gate.CalibOptions.PlainError)")
	flag.Parse()
	ctx := context.Background()
	c, err := wmzip.LoadCodec(*model)
	check(err)
	eps, err := traj.ReadTraining(flag.Args(), true, 0)
	check(err)
	if *calibEps < 2 || *calibEps >= len(eps)-1 {
		check(fmt.Errorf("-calib %d: want 2 to %d episodes of %d", *calibEps, len(eps)-2, len(eps)))
	}
	g := c.Model().Geom
	weps := make([]wm.Episode, len(eps))
	for i, e := range eps {
		cd, err := c.Quantize(nil, e.Obs)
		check(err)
		weps[i] = wm.Episode{Codes: cd, Actions: e.Actions}
	}
	qraw := c.Model().Section(gate.QuantizerTag)

	// A codec that never saw the calibration episodes.
	base := weps[:len(weps)-*calibEps]
	ma, err := wm.Train(g, base, wm.TrainOptions{})
	check(err)
	ma, err = ma.WithSection(gate.QuantizerTag, qraw)
	check(err)
	ha := gate.HoldoutEpisodes(len(base))
	ca, err := wm.Train(g, base[:len(base)-ha], wm.TrainOptions{NoFile: true})
	check(err)
	ma, _, err = train.CalibrateGate(ca, ma, base[len(base)-ha:], gate.CalibOptions{})
	check(err)
	var w []float64
	if !*noWeights {
		w = weights(ctx, ma, eps[len(eps)-*calibEps:], train.RetrievalOptions{Rate: *rate, Subspaces: *subspaces}, *wout)
	}

	// The final gate, calibrated as training calibrates it.
	hold := gate.HoldoutEpisodes(len(weps))
	calib, err := wm.Train(g, weps[:len(weps)-hold], wm.TrainOptions{NoFile: true})
	check(err)
	for _, o := range []struct {
		path string
		w    []float64
		marg bool
	}{{*out, w, *marginal}, {*unit, nil, false}} {
		if o.path == "" {
			continue
		}
		opt := gate.CalibOptions{Weights: o.w, Marginal: o.marg}
		if o.path == *out {
			opt.SearchFill, opt.PlainError = *searchFill, *plain
		}
		m, _, err := train.CalibrateGate(calib, c.Model(), weps[len(weps)-hold:], opt)
		check(err)
		b, err := m.MarshalBinary()
		check(err)
		check(os.WriteFile(o.path, b, 0o644))
	}
}

// weights calibrates and prints the retrieval weights of the codec of
// model m on episodes it never saw.
func weights(ctx context.Context, m *wm.Model, eps []wmzip.Episode, opt train.RetrievalOptions, wout string) []float64 {
	ac, err := wmzip.NewCodec(m)
	check(err)
	w, err := train.RetrievalWeights(ctx, ac, eps, opt)
	check(err)
	g := m.Geom
	for s := range g.S {
		fmt.Printf("%.2f ", w[s*g.M]/w[0])
	}
	fmt.Println("(slots, over slot 0)")
	for m := range g.M {
		fmt.Printf("%.2f ", w[m]/w[0])
	}
	fmt.Println("(subspaces, over subspace 0)")
	if wout != "" {
		check(npz.WriteNPY(wout, npz.Array{Name: "w", Dtype: "float64", Shape: []int{len(w)}, Data: w}))
	}
	return w
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
