// Package walks gives the tests and examples of wmzip's packages an
// agent's trajectories: random walks on a small synthetic world, as
// wmzip episodes.
package walks

import (
	"slices"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/graphworld"
)

// Episodes returns episodes of 50 states of 8 slot vectors (32 floats
// each, and their 8 codes below 16), and the actions that led into them,
// walked with the given seed on one world.
func Episodes(seed uint64, episodes int) []wmzip.Episode {
	w, err := graphworld.Generate(graphworld.Config{
		Nodes: 40, GraphSeed: 1, Seed: seed, Episodes: episodes, Steps: 50,
		Slots: 8, Subspaces: 8, K: 16, Obs: true, ObsDim: 32,
	})
	if err != nil {
		panic(err)
	}
	var eps []wmzip.Episode
	n, d := w.S*w.M, w.S*w.ObsDim
	for i := range w.EpisodeStart {
		s, e := w.Span(i)
		eps = append(eps, wmzip.Episode{
			Actions: w.Actions[s:e], Slots: w.S,
			Codes: w.Codes[s*int64(n) : e*int64(n)], Obs: w.Obs[s*int64(d) : e*int64(d)],
		})
	}
	return eps
}

// CodesOnly drops the observations: the episodes an agent with its own
// quantizer would have.
func CodesOnly(eps []wmzip.Episode) []wmzip.Episode {
	out := slices.Clone(eps)
	for i := range out {
		out[i].Obs = nil
	}
	return out
}
