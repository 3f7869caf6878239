package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"

	"github.com/wmzip/wmzip/cmd/wmzip/internal/bench"
	"github.com/wmzip/wmzip/internal/alloc"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/graphworld"
)

func runBenchAlloc(args []string) error {
	fs := newFlags("bench alloc", "[flags]\n\nStorage allocated by access rank at matched storage, for each graphworld family: a\ntraining walk (the model), a stored walk (the file) and an access walk on the same world\nthat reads stored states. The stored walk is encoded at one budget under four allocations\n(encode --access): CTMC (ranks by access count), uniform (τ = 0), shuffled and reversed\nranks; reported: bits/state, access-weighted distortion and the distortion of the 50%\nleast-accessed states (docs/results-ctmc.md).")

	families := fs.String("families", strings.Join(graphworld.Families, ","), "comma-separated graph families")
	nodes := fs.Int("nodes", 500, "nodes of each world")
	gseed := fs.Uint64("graph-seed", 5, "seed of the worlds")
	trainEps := fs.Int("train-episodes", 8, "training walk: episodes (one in eight calibrates the gate)")
	trainSteps := fs.Int("train-steps", 250, "training walk: steps per episode")
	storedEps := fs.Int("stored-episodes", 2, "stored walk (the file): episodes")
	storedSteps := fs.Int("stored-steps", 200, "stored walk: steps per episode")
	accEps := fs.Int("access-episodes", 10, "access walk: episodes")
	accSteps := fs.Int("access-steps", 400, "access walk: steps per episode")
	pick := fs.String("pick", "uniform", "stored state an access at node u reads: uniform (a seeded choice among the visits to u) or recent")
	frac := fs.Float64("budget-frac", 0.4, "budget as a fraction of the lossless rate (of each family's stored walk)")
	budgetAbs := fs.Float64("budget", 0, "budget in bits/state for every family (overrides --budget-frac)")
	tau := fs.Float64("tau", 1, "τ of the CTMC, shuffled and reversed allocations")
	spacesF := fs.String("alloc-space", "lambda,bits", "comma-separated allocation spaces (lambda, bits): what the rank weights scale (encode --access --alloc-space)")
	guard := fs.Float64("tail-guard", alloc.DefaultTailGuard, "encode --access's --tail-guard for the CTMC, shuffled and reversed rows; 0 is off")
	tailsF := fs.String("tail", string(alloc.DefaultTail), "comma-separated tails (ranked, flat): the weights of the states outside the access core (encode --access --tail)")
	seed := fs.Uint64("seed", 1, "seed of the walks (train: seed, stored: seed+1, access: seed+2), of the access picks and of the shuffle")
	codes := fs.Bool("codes", false, "code space: the generator's codes, uniform distances (default: float obs through a trained OPQ quantizer)")
	keyframe := fs.Int("keyframe", format.DefaultKeyframeInterval, "keyframe interval")
	tries := fs.Int("tries", 10, "most closed-loop encodings per allocation to reach the budget (within 1% below)")
	workers := fs.Int("j", min(2, runtime.GOMAXPROCS(0)), "level measurements run in parallel")
	asJSON := fs.Bool("json", false, "print one JSON object")
	quiet := fs.Bool("q", false, "no progress output")
	if err := parseNone(fs, args); err != nil {
		return err
	}
	if *tries < 1 {
		return fmt.Errorf("--tries %d: want ≥ 1", *tries)
	}
	if *pick != "uniform" && *pick != "recent" {
		return fmt.Errorf("--pick %q: want uniform or recent", *pick)
	}
	if *budgetAbs == 0 && !(*frac > 0 && *frac <= 1) {
		return fmt.Errorf("--budget-frac %v: want a fraction in (0, 1]", *frac)
	}
	if *budgetAbs < 0 || math.IsNaN(*budgetAbs) || math.IsInf(*budgetAbs, 0) {
		return fmt.Errorf("--budget %v: want a positive number of bits/state", *budgetAbs)
	}
	if !(*tau >= 0) || math.IsInf(*tau, 0) {
		return fmt.Errorf("--tau %v: want a finite τ ≥ 0", *tau)
	}
	if *trainEps < 2 || *storedEps < 1 || *accEps < 1 || *trainSteps < 2 || *storedSteps < 2 || *accSteps < 1 {
		return errors.New("walks need ≥ 2 training episodes, ≥ 1 stored and access episode, ≥ 2 steps")
	}
	if err := checkTailGuard(*guard); err != nil {
		return err
	}
	spaces, err := parseList(*spacesF, alloc.ParseSpace)
	if err != nil {
		return fmt.Errorf("--alloc-space: %w", err)
	}
	tails, err := parseList(*tailsF, alloc.ParseTail)
	if err != nil {
		return fmt.Errorf("--tail: %w", err)
	}
	logf := logger(*quiet)
	rep, err := bench.Alloc(bench.AllocConfig{
		Families: strings.Split(*families, ","), Nodes: *nodes, GraphSeed: *gseed,
		TrainEpisodes: *trainEps, TrainSteps: *trainSteps, StoredEpisodes: *storedEps, StoredSteps: *storedSteps,
		AccessEpisodes: *accEps, AccessSteps: *accSteps, Pick: *pick, BudgetFrac: *frac, Budget: *budgetAbs,
		Tau: *tau, Spaces: spaces, Tails: tails, Guard: *guard, Seed: *seed, Codes: *codes,
		Keyframe: *keyframe, Tries: *tries, Workers: *workers,
		Command: "wmzip bench alloc " + strings.Join(args, " "), Config: map[string]any{
			"nodes": *nodes, "graph_seed": *gseed, "train": fmt.Sprintf("%dx%d", *trainEps, *trainSteps),
			"stored": fmt.Sprintf("%dx%d", *storedEps, *storedSteps), "access": fmt.Sprintf("%dx%d", *accEps, *accSteps),
			"pick": *pick, "alloc_space": *spacesF, "tail": *tailsF, "tail_guard": *guard, "flat_tail_core_mass": alloc.CoreMass, "budget_frac": *frac, "budget": *budgetAbs, "tau": *tau, "seed": *seed, "codes": *codes, "keyframe": *keyframe,
		}}, logf)
	if err != nil {
		return err
	}
	if *asJSON {
		for i := range rep.Rows { // JSON has no infinity
			if math.IsInf(rep.Rows[i].TailRatio, 0) {
				rep.Rows[i].TailRatio = -1
			}
		}
		return printJSON(rep)
	}
	bench.PrintAlloc(os.Stdout, rep)
	return nil
}
