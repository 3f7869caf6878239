package alloc_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/alloc"
	"github.com/wmzip/wmzip/internal/ctmc"
	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/train"
)

// walks stands in for an agent's episodes of codes: 50 states of 8 slots
// of 8 codes below 16.
func walks(seed uint64, episodes int) []wmzip.Episode {
	w, err := graphworld.Generate(graphworld.Config{Nodes: 40, GraphSeed: 1, Seed: seed, Episodes: episodes, Steps: 50, Slots: 8, Subspaces: 8, K: 16})
	if err != nil {
		log.Fatal(err)
	}
	tr := &npz.Trajectory{T: len(w.Actions), S: w.S, M: w.M, Codes: w.Codes, Actions: w.Actions, EpisodeStart: w.EpisodeStart}
	var eps []wmzip.Episode
	for _, e := range tr.Episodes() {
		n := tr.S * tr.M
		eps = append(eps, wmzip.Episode{Actions: tr.Actions[e[0]:e[1]], Codes: tr.Codes[e[0]*n : e[1]*n], Slots: tr.S})
	}
	return eps
}

// Storage by access: states read often keep more, the file within a
// budget. The counts come from an access trace (wmzip.WithAccessLog
// records one as a file is read).
func ExampleStore() {
	ctx := context.Background()
	codec, err := train.Codec(ctx, walks(1, 8))
	if err != nil {
		log.Fatal(err)
	}
	test := walks(2, 2)
	var trace []ctmc.Access
	for k := range 20 { // the first states of episode 0 are read often
		trace = append(trace, ctmc.Access{Episode: 0, Step: int64(k % 10)}, ctmc.Access{Episode: 1, Step: int64(k)})
	}
	counts, _ := alloc.Counts(trace, []int{50, 50})

	const budget = 40 // bits/state; lossless takes 76 here
	var file bytes.Buffer
	res, err := alloc.Store(ctx, &file, codec, test, counts, budget)
	if err != nil {
		log.Fatal(err) // alloc.ErrBudget: below the lowest level's rate
	}
	var hot, cold int // the read states' levels against the unread ones' of episode 0
	for t := range 20 {
		if t < 10 {
			hot += res.Levels[t]
		} else {
			cold += res.Levels[t]
		}
	}
	fmt.Println("within budget:", res.Bits <= budget, "read states keep more:", hot > cold)
	// Output: within budget: true read states keep more: true
}
