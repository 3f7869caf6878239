package wm_test

import (
	"fmt"
	"log"

	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/internal/wm"
)

// A model is trained once on an agent's past trajectories and shared by
// every file coded with it: its bytes are what writers and readers agree
// on, named by its ID.
func ExampleTrain() {
	w, err := graphworld.Generate(graphworld.Config{
		Nodes: 40, GraphSeed: 1, Seed: 1, Episodes: 4, Steps: 50,
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

	model, err := wm.Train(g, eps, wm.TrainOptions{})
	if err != nil {
		log.Fatal(err)
	}
	b, err := model.MarshalBinary() // the .wmm file
	if err != nil {
		log.Fatal(err)
	}
	loaded, err := wm.UnmarshalModel(b)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("S=%d M=%d K=%d, precision %d, same ID: %v\n", loaded.Geom.S, loaded.Geom.M, loaded.Geom.K, loaded.Precision, loaded.ID() == model.ID())
	// Output:
	// S=8 M=8 K=16, precision 16, same ID: true
}
