package traj_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/internal/traj"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/train"
)

// Trajectory .npz files of any length, state by state: an
// npz.TrajectoryReader feeds the Writer and WriteDecoded writes the
// decode, each holding a block of states at a time.
func Example() {
	codec, err := train.Codec(context.Background(), walks.CodesOnly(walks.Episodes(1, 8)))
	if err != nil {
		log.Fatal(err)
	}
	res, err := graphworld.Generate(graphworld.Config{Nodes: 40, GraphSeed: 1, Seed: 2, Episodes: 2, Steps: 50, Slots: 8, Subspaces: 8, K: 16})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "wmzip-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	in, wmz, back := filepath.Join(dir, "in.npz"), filepath.Join(dir, "x.wmz"), filepath.Join(dir, "back.npz")
	if err := npz.WriteTrajectory(in, traj.FromWalk(res)); err != nil {
		log.Fatal(err)
	}

	src, err := npz.OpenTrajectory(in)
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	w, err := wmzip.Create(wmz, codec)
	if err != nil {
		log.Fatal(err)
	}
	if err := traj.Write(w, codec, src, nil); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	f, err := wmzip.Open(wmz, codec)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if err := traj.WriteDecoded(back, f, traj.DecodeOptions{Episode: -1, Step: -1}); err != nil {
		log.Fatal(err)
	}

	tr, err := npz.ReadTrajectory(back)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tr.T, "states,", len(tr.EpisodeStart), "episodes; exact:", slices.Equal(tr.Codes, traj.FromWalk(res).Codes))
	// Output: 100 states, 2 episodes; exact: true
}
