package npz_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/wmzip/wmzip/npz"
)

// A trajectory .npz (numpy.savez of codes, actions and episode_start) is
// read into time-major slices and split into episodes.
func ExampleReadTrajectory() {
	path := filepath.Join(os.TempDir(), "wmzip-example.npz")
	defer os.Remove(path)
	err := npz.WriteTrajectory(path, &npz.Trajectory{
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
	n := tr.S * tr.M
	for _, e := range tr.Episodes() {
		fmt.Println("steps", e[0], "to", e[1], "actions", tr.Actions[e[0]:e[1]], "last state", tr.Codes[(e[1]-1)*n:e[1]*n])
	}
	// Output:
	// steps 0 to 3 actions [-1 3 3] last state [0 1 2 3 4 4]
	// steps 3 to 5 actions [-1 1] last state [0 1 2 3 4 5]
}
