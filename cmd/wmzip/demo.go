package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/wmzip/wmzip/baseline"
	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/graphworld"
	"github.com/wmzip/wmzip/wm"
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
	split := func(r *graphworld.Result) []wm.Episode {
		var eps []wm.Episode
		for i, s := range r.EpisodeStart {
			e := int64(len(r.Actions))
			if i+1 < len(r.EpisodeStart) {
				e = r.EpisodeStart[i+1]
			}
			eps = append(eps, wm.Episode{Codes: r.Codes[s*int64(n) : e*int64(n)], Actions: r.Actions[s:e]})
		}
		return eps
	}

	// 2. Train the world model.
	step("training on %d states", len(trainRes.Actions))
	m, err := wm.Train(g, split(trainRes), wm.TrainOptions{Progress: progress(*quiet, "calibrating")})
	if err != nil {
		return err
	}
	mb, _ := m.MarshalBinary()
	if err := os.WriteFile(filepath.Join(dir, "model.wmm"), mb, 0o644); err != nil {
		return err
	}

	// 3. Encode the test walk losslessly.
	step("encoding %d states", len(testRes.Actions))
	var buf bytes.Buffer
	w, err := format.NewWriter(&buf, m, format.WithKeyframeInterval(256))
	if err != nil {
		return err
	}
	for _, e := range split(testRes) {
		if err := w.WriteEpisode(nil); err != nil {
			return err
		}
		for t := range e.Actions {
			if err := w.WriteState(e.Actions[t], e.Codes[t*n:(t+1)*n]); err != nil {
				return err
			}
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "test.wmz"), buf.Bytes(), 0o644); err != nil {
		return err
	}

	// 4. Decode it independently and compare.
	step("decoding and verifying")
	f, err := format.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), m)
	if err != nil {
		return err
	}
	var got []uint16
	for e := range f.Episodes() {
		_, codes, err := f.DecodeEpisode(e)
		if err != nil {
			return err
		}
		got = append(got, codes...)
	}
	if !slices.Equal(got, testRes.Codes) {
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
	fmt.Printf("\n%d test states of %dx%d codes < %d; model %s (%d bytes, not counted); decode verified exact.\n",
		len(testRes.Actions), g.S, g.M, g.K, m.ID(), len(mb))
	step("done")
	return nil
}
