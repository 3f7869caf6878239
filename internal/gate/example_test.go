package gate_test

import (
	"fmt"
	"io"
	"log"
	"math"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

// The gate of a model trained on codes alone: calibrated on episodes the
// model has not seen, with uniform distances, so that distortion is the
// fraction of wrong codes. A Writer then codes at a fixed λ.
func ExampleCalibrate() {
	w, err := graphworld.Generate(graphworld.Config{
		Nodes: 40, GraphSeed: 1, Seed: 1, Episodes: 10, Steps: 50,
		Slots: 8, Subspaces: 8, K: 16,
	})
	if err != nil {
		log.Fatal(err)
	}
	g := wm.Geometry{S: w.S, M: w.M, K: w.K}
	n := int64(g.N())
	var eps []wm.Episode
	for i := range w.EpisodeStart {
		s, e := w.Span(i)
		eps = append(eps, wm.Episode{Codes: w.Codes[s*n : e*n], Actions: w.Actions[s:e]})
	}
	hold := gate.HoldoutEpisodes(len(eps)) // one in eight
	train, held, test := eps[:len(eps)-hold-1], eps[len(eps)-hold-1:len(eps)-1], eps[len(eps)-1:]

	model, err := wm.Train(g, train, wm.TrainOptions{})
	if err != nil {
		log.Fatal(err)
	}
	params, err := gate.Calibrate(model, held, gate.CalibOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if model, err = gate.Apply(model, params); err != nil { // a new model ID
		log.Fatal(err)
	}

	l, err := lambda.FromFloat(100) // λ = 100; +Inf is lossless
	if err != nil {
		log.Fatal(err)
	}
	fw, err := format.NewWriter(io.Discard, model, format.WithLambda(l))
	if err != nil {
		log.Fatal(err)
	}
	if err := fw.WriteEpisode(nil); err != nil {
		log.Fatal(err)
	}
	for t, a := range test[0].Actions {
		if err := fw.WriteState(a, test[0].Codes[int64(t)*n:int64(t+1)*n]); err != nil {
			log.Fatal(err)
		}
	}
	if err := fw.Close(); err != nil {
		log.Fatal(err)
	}
	acct := fw.Account() // what the writer kept and what its reconstruction lost
	coords := uint64(acct.States) * uint64(n)
	fmt.Println("some coordinates omitted:", acct.Retained < coords)
	fmt.Println("wrong codes under 1%:", float64(acct.Wrong) < 0.01*float64(coords))
	d := params.RelDistortion(acct.DistSum, acct.States)
	fmt.Println("relative distortion = wrong fraction:", math.Abs(d-float64(acct.Wrong)/float64(coords)) < 1e-12)
	// Output:
	// some coordinates omitted: true
	// wrong codes under 1%: true
	// relative distortion = wrong fraction: true
}
