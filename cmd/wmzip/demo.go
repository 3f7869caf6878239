package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/baseline"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/internal/traj"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/train"
)

func init() {
	register("demo", "generate, train, encode, decode and verify on a synthetic world; print the rates", runDemo)
}

func runDemo(args []string) error {
	fs := newFlags("demo", "[flags]")
	family := fs.String("family", graphworld.Uniform, "graph family of the generated world")
	nodes := fs.Int("nodes", 200, "nodes of the generated world")
	keep := fs.String("keep", "", "folder to keep the generated files in (default: a temporary one, removed)")
	quiet := fs.Bool("q", false, "no progress output")
	if err := parseNone(fs, args); err != nil {
		return err
	}
	dir := *keep
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "wmzip-demo-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	start := time.Now()
	step := func(format string, a ...any) {
		if !*quiet {
			fmt.Fprintf(os.Stderr, "[%5.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
		}
	}

	// 1. A world and walks on it: training walks and a held-out test walk
	//    with another seed.
	step("generating a %s world of %d nodes", *family, *nodes)
	trainRes, err := graphworld.Generate(graphworld.Config{Family: *family, Nodes: *nodes, GraphSeed: 1, Episodes: 8, Steps: 250, Seed: 100})
	if err != nil {
		return err
	}
	testRes, err := graphworld.Generate(graphworld.Config{Family: *family, Nodes: *nodes, GraphSeed: 1, Episodes: 2, Steps: 200, Seed: 200})
	if err != nil {
		return err
	}
	g := wm.Geometry{S: testRes.S, M: testRes.M, K: testRes.K}
	n := g.N()
	split := func(r *graphworld.Result) []wmzlib.Episode {
		tr := &npz.Trajectory{T: len(r.Actions), Codes: r.Codes, S: r.S, M: r.M, Actions: r.Actions, EpisodeStart: r.EpisodeStart}
		return train.SplitTrajectory(tr, false)
	}

	// 2. Train the world model.
	step("training on %d states", len(trainRes.Actions))
	ctx := context.Background()
	bar := progress(*quiet, "calibrating")
	c, err := train.Codec(ctx, split(trainRes), train.WithGate(0, gate.CalibOptions{}), train.WithAlphabet(g.K),
		train.WithProgress(func(_ string, done, total int) { bar(done, total) }))
	if err != nil {
		return err
	}
	if err := saveCodec(c, filepath.Join(dir, "model.wmm")); err != nil {
		return err
	}

	// 3. Encode the test walk losslessly.
	step("encoding %d states", len(testRes.Actions))
	var buf bytes.Buffer
	w, err := wmzlib.NewWriter(&buf, c, wmzlib.WithKeyframeInterval(256))
	if err != nil {
		return err
	}
	if err := w.WriteAll(split(testRes)); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "test.wmz"), buf.Bytes(), 0o644); err != nil {
		return err
	}

	// 4. Decode it independently and compare.
	step("decoding and verifying")
	f, err := wmzlib.NewFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()), c)
	if err != nil {
		return err
	}
	got, _, err := traj.Decode(f, nil)
	if err != nil {
		return err
	}
	if !slices.Equal(got.Codes, testRes.Codes) {
		return fmt.Errorf("decoded codes differ from the source")
	}

	// 5. Baselines on the same codes.
	step("measuring baselines")
	base, err := baseline.Run(baseline.Input{Codes: testRes.Codes, N: n, K: g.K, Train: trainRes.Codes}, baseline.Options{SkipExternal: true})
	if err != nil {
		return err
	}
	states := float64(len(testRes.Actions))
	in := f.Info()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tbits/state\tvs entropy\t\n")
	row := func(name string, bps float64) {
		fmt.Fprintf(tw, "%s\t%.1f\t%.2fx\t\n", name, bps, bps/testRes.EntropyBitsPerState)
	}
	for _, r := range base {
		switch r.Name {
		case "raw", "zstd", "zstd given train":
			name := r.Name
			if name == "zstd" {
				name = "zstd (klauspost, best)"
			}
			row(name, r.BitsPerState)
		}
	}
	row("wmzip lossless", float64(buf.Len())*8/states)
	row("wmzip ideal (model)", in.IdealBits()/states)
	row("generator entropy", testRes.EntropyBitsPerState)
	tw.Flush()
	mb, _ := c.MarshalBinary()
	fmt.Printf("\n%d test states of %dx%d codes < %d; model %s (%d bytes, not counted); decode verified exact.\n",
		len(testRes.Actions), g.S, g.M, g.K, c.Model().ID(), len(mb))
	step("done")
	return nil
}
