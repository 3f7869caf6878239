package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	progressBar "github.com/wmzip/wmzip/cmd/wmzip/internal/progress"
	"github.com/wmzip/wmzip/internal/traj"
	"github.com/wmzip/wmzip/train"

	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
)

func init() {
	register("train", "train a world model (.wmm) from trajectories", runTrain)
}

func runTrain(args []string) error {
	fs := newFlags("train", "[flags] -o model.wmm train.npz...")
	addUsageNote(fs, trajectoryNote)
	out := fs.String("o", "", "output model file (required)")
	prec := fs.Uint("precision", wm.DefaultPrecision, "rANS probability precision in bits (10..16)")
	maxRef := fs.Int("max-ref", 65536, "most states kept in the model's reference store")
	maxStates := fs.Int("max-states", train.DefaultMaxStates, "most training states read: the most recent of the inputs")
	capacity := fs.Float64("capacity", 1, "fraction (0,1] of the training states the reference store keeps: smaller models, more bits per state")
	alpha := fs.Int("alphabet", 0, "alphabet size K (0: the smallest power of two above the largest code)")
	gateHold := fs.Int("gate-holdout", -1, "episodes held out to calibrate the retention gate (-1: one in eight; 0: no gate)")
	gateWeights := fs.String("gate-weights", "", "per-coordinate impact weights of the gate (.npy of N values)")
	gateBins := fs.String("gate-bins", "modal", gateBinsUsage)
	gateFor := fs.String("gate-for", "distortion", "what the gate keeps lossy memories for: distortion (least damage per bit) or search (states stay findable by wmzip search, at some cost in distortion)")
	quantizer := fs.String("quantizer", "family", "quantizer of float obs: family (product quantizers of several geometries, chosen by the bits each writes at each distortion on held-out episodes; lossy files coded by rate and distortion) or single (one quantizer of --subspaces and --centroids, OPQ unless --quantizer-iters is negative, with a retention gate: 32 x 64 is the seeds' configuration); setting --subspaces, --centroids or --quantizer-iters implies single")
	subspaces := fs.Int("subspaces", 32, "single quantizer: subspaces M per slot vector, when the input has float obs")
	centroids := fs.Int("centroids", 64, "single quantizer: centroids K per subspace")
	seed := fs.Uint64("seed", 1, "quantizer: seed of its k-means++ initialization")
	qIters := fs.Int("quantizer-iters", 0, "quantizer: rotation updates (0: the default; negative: plain PQ)")
	qSample := fs.Int("quantizer-sample", 0, "quantizer: training vectors sampled (0: the default; negative: all)")
	noQuant := fs.Bool("no-quantizer", false, "ignore float obs: train on the inputs' codes only")
	quiet := fs.Bool("q", false, "no progress or summary output")
	level := fs.String("level", "copy", "model level: copy (whole slots copied where that has paid); full (every slot predicted coordinate by coordinate: about 1.5x slower to encode and decode, a tenth of a percent fewer bits losslessly); or fast (several times faster than copy, a few percent more bits)")
	checkTrainFlags(prec, maxRef, maxStates, capacity, alpha, gateHold, subspaces, centroids)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return errors.New("missing -o model.wmm")
	}
	if len(pos) == 0 {
		return errors.New("no training trajectories given")
	}
	gopt, err := gateBinsFlag(*gateBins)
	if err != nil {
		return err
	}
	switch *gateFor {
	case "distortion":
	case "search":
		// docs/results-retrieval.md: the marginal ê keeps the confident
		// predictions a new page breaks, the spread fill keeps omitted new
		// content from drifting to the codebooks' centre.
		gopt.Marginal, gopt.SearchFill = true, true
	default:
		return fmt.Errorf("--gate-for %q: want distortion or search", *gateFor)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	single := set["subspaces"] || set["centroids"] || set["quantizer-iters"]
	switch *quantizer {
	case "family":
		if set["quantizer"] && single {
			return errors.New("--quantizer family chooses its own geometries: drop --subspaces, --centroids and --quantizer-iters, or use --quantizer single")
		}
	case "single":
		single = true
	default:
		return fmt.Errorf("--quantizer %q: want family or single", *quantizer)
	}
	lv, ok := wm.ParseLevel(*level)
	if !ok {
		return fmt.Errorf("-level %q: want copy, full or fast", *level)
	}
	ins := []*string{gateWeights}
	for i := range pos {
		ins = append(ins, &pos[i])
	}
	if err := checkFiles(ins, output{flag: "-o", path: out}); err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		// Training's heap is a few large pointer-free arrays, cheap to mark:
		// collecting at +25% instead of +100% keeps the peak near the live heap.
		debug.SetGCPercent(25)
	}
	eps, err := traj.ReadTraining(pos, !*noQuant, *maxStates)
	if err != nil {
		return err
	}
	if *gateWeights != "" {
		if gopt.Weights, err = npz.ReadFloats(*gateWeights); err != nil {
			return err
		}
	}
	qopt := train.WithFamily(*seed)
	if single {
		qopt = train.WithQuantizer(opq.Config{M: *subspaces, K: *centroids, Seed: *seed, OPQIters: *qIters, Sample: *qSample})
	}
	opts := []train.Option{
		qopt,
		train.WithAlphabet(*alpha),
		train.WithModel(wm.TrainOptions{Precision: *prec, MaxRefStates: *maxRef, Capacity: *capacity, Level: lv}),
		train.WithGate(*gateHold, gopt),
		train.WithMaxStates(*maxStates),
		train.WithProgress(trainProgress(*quiet)),
	}
	if *noQuant {
		opts = append(opts, train.WithCodesOnly())
	}
	c, err := train.Codec(context.Background(), eps, opts...)
	if err != nil {
		return err
	}
	b, _ := c.MarshalBinary()
	if err := atomicfile.WriteFile(*out, b); err != nil {
		return err
	}
	if !*quiet {
		g := c.Model().Geom
		fmt.Printf("wrote %s: model %s, %d bytes, geometry %dx%d K=%d, %d reference states", *out, c.Model().ID(), len(b), g.S, g.M, g.K, c.Model().RefStates())
		if c.Quantizer() != nil {
			fmt.Printf(", quantizer %d-d", c.Quantizer().Dim())
		}
		fmt.Println()
	}
	if qu, ok := train.QuantizerQuality(c); ok {
		if !*quiet {
			fmt.Printf("quantizer on %d held-out slot vectors: relative squared error %.4g, mean cosine %.4f (a lossless file of such observations decodes to them at that distortion)\n",
				qu.Vectors, qu.Distortion(), qu.Cosine())
		}
		if qu.Cosine() < poorCosine {
			q := c.Quantizer()
			if single {
				fmt.Fprintf(os.Stderr, "wmzip: warning: the quantizer reproduces held-out observations at mean cosine %.3f only: even lossless files decode to them at distortion %.3g. "+
					"More subspaces (--subspaces, now %d, dividing %d) or centroids (--centroids, now %d) quantize finer, at more bits per state.\n",
					qu.Cosine(), qu.Distortion(), q.M(), q.Dim(), q.K())
			} else {
				fmt.Fprintf(os.Stderr, "wmzip: warning: the finest quantizer of the family (%d subspaces of %d centroids) reproduces held-out observations at mean cosine %.3f only: even lossless files decode to them at distortion %.3g. "+
					"A single finer quantizer (--quantizer single --subspaces M --centroids K) may do better, at more bits per state.\n",
					q.M(), q.K(), qu.Cosine(), qu.Distortion())
			}
		}
	}
	return nil
}

// poorCosine is the held-out mean cosine below which train warns that the
// quantizer is too coarse for its observations.
const poorCosine = 0.95

// trainProgress draws a bar per quantizer stage and one per calibration
// (the gate's, the world model's), or lines away from a terminal.
func trainProgress(quiet bool) func(stage string, done, total int) {
	qp := progressBar.Terminal(os.Stderr, quiet)
	other := stages(quiet)
	return func(stage string, done, total int) {
		if s, ok := strings.CutPrefix(stage, "quantizer "); ok && qp != nil {
			qp(s, done, total)
			return
		}
		other(stage, done, total)
	}
}
