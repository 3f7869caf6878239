package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/baseline"
	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/wm"
)

// losslessReport is the object `wmzip bench lossless --json` prints.
type losslessReport struct {
	Test          string             `json:"test"`
	Train         []string           `json:"train"`
	States        int                `json:"states"`
	Coordinates   int                `json:"coordinates"`
	Alphabet      int                `json:"alphabet"`
	ModelID       string             `json:"model_id"`
	ModelBytes    int                `json:"model_bytes"`
	TrainSeconds  float64            `json:"train_seconds"`
	EncodeSeconds float64            `json:"encode_seconds"`
	DecodeSeconds float64            `json:"decode_seconds"`
	NsPerCoord    float64            `json:"decode_ns_per_coordinate"`
	BitsPerState  float64            `json:"bits_per_state"`
	IdealBits     float64            `json:"ideal_bits_per_state"`
	Entropy       *float64           `json:"generator_entropy_bits_per_state,omitempty"`
	Exact         bool               `json:"decoded_exactly"`
	Baselines     []baseline.Result  `json:"baselines"`
	Ratios        map[string]float64 `json:"ratios"`
}

func runBenchLossless(args []string) error {
	fs := newFlags("bench lossless", "[flags] --train train.npz... test.npz")
	var trains []string
	fs.Func("train", "training trajectory (repeatable; required)", func(v string) error { trains = append(trains, v); return nil })
	keyframe := fs.Int("keyframe", format.DefaultKeyframeInterval, "keyframe interval of the encoding")
	external := fs.Bool("external", true, "also run xz, brotli and the zstd CLI when installed")
	asJSON := fs.Bool("json", false, "print one JSON object")
	quiet := fs.Bool("q", false, "no progress output")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("want exactly one test trajectory")
	}
	if len(trains) == 0 {
		return errors.New("missing --train train.npz")
	}
	var eps []wm.Episode
	var trainCodes []uint16
	var g wm.Geometry
	for i, p := range trains {
		tr, err := loadCodes(p, nil)
		if err != nil {
			return err
		}
		gi := wm.Geometry{S: tr.S, M: tr.M, K: wmzlib.Alphabet(tr.Codes)}
		if i > 0 && gi.N() != g.N() {
			return fmt.Errorf("%s: %d coordinates per state, %s has %d", p, gi.N(), trains[0], g.N())
		}
		g.S, g.M, g.K = gi.S, gi.M, max(g.K, gi.K)
		eps = append(eps, episodes(tr)...)
		trainCodes = append(trainCodes, tr.Codes...)
	}
	test, err := loadCodes(pos[0], nil)
	if err != nil {
		return err
	}
	if test.S*test.M != g.N() {
		return fmt.Errorf("%s: %d coordinates per state, the training set has %d", pos[0], test.S*test.M, g.N())
	}
	g.K = max(g.K, wmzlib.Alphabet(test.Codes))
	rep := losslessReport{Test: pos[0], Train: trains, States: test.T, Coordinates: g.N(), Alphabet: g.K}

	t0 := time.Now()
	m, err := wm.Train(g, eps, wm.TrainOptions{Progress: progress(*quiet, "training")})
	if err != nil {
		return err
	}
	rep.TrainSeconds = time.Since(t0).Seconds()
	mb, _ := m.MarshalBinary()
	rep.ModelID, rep.ModelBytes = m.ID().String(), len(mb)

	var buf bytes.Buffer
	t1 := time.Now()
	if _, err := encodeTo(&buf, m, test, progress(*quiet, "encoding"), format.WithKeyframeInterval(*keyframe)); err != nil {
		return err
	}
	rep.EncodeSeconds = time.Since(t1).Seconds()
	t2 := time.Now()
	f, err := format.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), m)
	if err != nil {
		return err
	}
	got, _, err := decodeAll(f, true)
	if err != nil {
		return err
	}
	rep.DecodeSeconds = time.Since(t2).Seconds()
	rep.NsPerCoord = rep.DecodeSeconds * 1e9 / float64(max(1, test.T*g.N()))
	rep.Exact = slices.Equal(got.Codes, test.Codes)
	if !rep.Exact {
		return errors.New("decoded codes differ from the input")
	}
	st := float64(max(test.T, 1))
	rep.BitsPerState = float64(buf.Len()) * 8 / st
	rep.IdealBits = f.Info().IdealBits() / st
	for _, a := range test.Extra {
		if a.Name == "entropy_bits_per_state" {
			if v, ok := a.Data.([]float64); ok && len(v) == 1 {
				e := v[0]
				rep.Entropy = &e
			}
		}
	}
	starts := make([]int, len(test.EpisodeStart))
	for i, s := range test.EpisodeStart {
		starts[i] = int(s)
	}
	if rep.Baselines, err = baseline.Run(baseline.Input{Codes: test.Codes, N: g.N(), K: g.K, Train: trainCodes, EpisodeStart: starts}, baseline.Options{SkipExternal: !*external}); err != nil {
		return err
	}
	rep.Ratios = map[string]float64{}
	for _, r := range rep.Baselines {
		if r.Available && r.Bytes > 0 {
			rep.Ratios[r.Name] = rep.BitsPerState / r.BitsPerState
		}
	}
	if rep.Entropy != nil {
		rep.Ratios["generator entropy"] = rep.BitsPerState / *rep.Entropy
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tbits/state\twmzip ÷ this\t\n")
	fmt.Fprintf(tw, "wmzip lossless\t%.1f\t1.000\t\n", rep.BitsPerState)
	fmt.Fprintf(tw, "wmzip ideal\t%.1f\t\t\n", rep.IdealBits)
	if rep.Entropy != nil {
		fmt.Fprintf(tw, "generator entropy\t%.1f\t%.3f\t\n", *rep.Entropy, rep.Ratios["generator entropy"])
	}
	for _, r := range rep.Baselines {
		if r.Available && r.Bytes > 0 {
			fmt.Fprintf(tw, "%s\t%.1f\t%.3f\t\n", r.Name, r.BitsPerState, rep.Ratios[r.Name])
		}
	}
	tw.Flush()
	fmt.Printf("\n%d test states; model %s, %d bytes (not counted); train %.1fs, encode %.1fs, decode %.1fs (%.0f ns/coordinate); decoded exactly\n",
		rep.States, rep.ModelID, rep.ModelBytes, rep.TrainSeconds, rep.EncodeSeconds, rep.DecodeSeconds, rep.NsPerCoord)
	return nil
}
