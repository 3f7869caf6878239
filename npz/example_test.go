package npz_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
)

// A trajectory .npz (numpy.savez of codes, actions and episode_start) is
// read into time-major slices and split into the episodes wm.Train and
// format.Writer take.
func ExampleReadTrajectory() {
	dir, err := os.MkdirTemp("", "wmzip-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "trajectory.npz")
	err = npz.WriteTrajectory(path, &npz.Trajectory{
		T: 5, S: 2, M: 3,
		Codes:        []uint16{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 4, 7, 7, 7, 7, 7, 7, 0, 1, 2, 3, 4, 5},
		Actions:      []int64{-1, 3, 3, -1, 1},
		HasActions:   true,
		EpisodeStart: []int64{0, 3},
	})
	if err != nil {
		log.Fatal(err)
	}

	tr, err := npz.ReadTrajectory(path)
	if err != nil {
		log.Fatal(err)
	}
	g := wm.Geometry{S: tr.S, M: tr.M, K: 64} // K: the codes' alphabet, 6 bits here
	n := g.N()
	var eps []wm.Episode
	for _, e := range tr.Episodes() {
		eps = append(eps, wm.Episode{Codes: tr.Codes[e[0]*n : e[1]*n], Actions: tr.Actions[e[0]:e[1]]})
	}
	for _, ep := range eps {
		fmt.Println("actions", ep.Actions, "last state", ep.Codes[len(ep.Codes)-n:])
	}
	// Output:
	// actions [-1 3 3] last state [0 1 2 3 4 4]
	// actions [-1 1] last state [0 1 2 3 4 5]
}
