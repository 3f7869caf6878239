package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/internal/traj"
	"github.com/wmzip/wmzip/npz"
)

func init() {
	register("gen", "generate synthetic trajectories (gen graphworld ...)", runGen)
}

func runGen(args []string) error {
	if len(args) == 0 || args[0] != "graphworld" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return runGenGraphworld([]string{"-h"})
		}
		return errors.New("want a generator name: wmzip gen graphworld [flags] -o out.npz")
	}
	return runGenGraphworld(args[1:])
}

func runGenGraphworld(args []string) error {
	fs := newFlags("gen graphworld", "[flags] -o out.npz")
	family := fs.String("family", graphworld.DefaultFamily, "graph family: uniform, exponential, scalefree, modular or mixed")
	nodes := fs.Int("nodes", graphworld.DefaultNodes, "number of nodes (states of the world)")
	gseed := fs.Uint64("graph-seed", 1, "seed of the world: graph and every node's latent state")
	eps := fs.Int("episodes", graphworld.DefaultEpisodes, "number of episodes")
	steps := fs.Int("steps", graphworld.DefaultSteps, "steps per episode")
	seed := fs.Uint64("seed", 1, "seed of the walks")
	noise := fs.Float64("noise", graphworld.DefaultNoise, "per-coordinate substitution rate (negative: none)")
	obs := fs.Bool("obs", false, "also write float observations (array obs)")
	ideal := fs.Bool("ideal", false, "also compute the exact ideal code length under the generator's law")
	visits := fs.String("visits", "", "also write the walk's visit counts per node to this file (one count per line)")
	out := fs.String("o", "", "output .npz (required)")
	quiet := fs.Bool("q", false, "no progress or summary output")
	checkInt("nodes", nodes, 4, graphworld.MaxNodes, fmt.Sprintf("4 to %d nodes", graphworld.MaxNodes))
	checkInt("episodes", eps, 1, math.MaxInt32, "at least 1 episode")
	checkInt("steps", steps, 1, math.MaxInt32, "at least 1 step per episode")
	if err := parseNone(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("missing -o out.npz")
	}
	if err := checkFiles(nil, output{flag: "-o", path: out}, output{flag: "--visits", path: visits}); err != nil {
		return err
	}
	cfg := graphworld.Config{
		Family: *family, Nodes: *nodes, GraphSeed: *gseed,
		Episodes: *eps, Steps: *steps, Seed: *seed,
		Noise: *noise, Obs: *obs, Ideal: *ideal,
	}
	if *noise == 0 {
		cfg.Noise = -1
	}
	res, err := graphworld.Generate(cfg)
	if err != nil {
		return err
	}
	tr := traj.FromWalk(res)
	if *ideal {
		tr.Extra = append(tr.Extra, npz.Array{Name: "ideal_bits_per_state", Dtype: "float64", Shape: []int{}, Data: []float64{res.IdealBitsPerState}})
	}
	if err := npz.WriteTrajectory(*out, tr); err != nil {
		return err
	}
	if *visits != "" {
		var b strings.Builder
		for _, c := range res.VisitCounts {
			b.WriteString(strconv.FormatInt(c, 10))
			b.WriteByte('\n')
		}
		if err := atomicfile.WriteFile(*visits, []byte(b.String())); err != nil {
			return err
		}
	}
	if !*quiet {
		fmt.Printf("wrote %s: %d states, %d episodes, %dx%d codes < %d\n", *out, tr.T, len(tr.EpisodeStart), res.S, res.M, res.K)
		fmt.Printf("entropy rate: %.2f ± %.2f bits/state\n", res.EntropyBitsPerState, res.EntropyStdErr)
		if *ideal {
			fmt.Printf("ideal code length: %.2f bits/state\n", res.IdealBitsPerState)
		}
	}
	return nil
}
