package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	wmtrain "github.com/wmzip/wmzip/train"

	"github.com/wmzip/wmzip/internal/alloc"
	"github.com/wmzip/wmzip/internal/baseline"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
)

// LosslessReport is the outcome of Lossless.
type LosslessReport struct {
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

// LosslessConfig sets the lossless benchmark.
type LosslessConfig struct {
	TrainNames []string          // for the report and messages
	Train      []*npz.Trajectory // with codes
	TestName   string
	Test       *npz.Trajectory // with codes
	Keyframe   int
	External   bool // also run xz, brotli and the zstd CLI when installed
	// Progress returns a progress callback for a stage ("training",
	// "encoding"); nil gives none.
	Progress func(stage string) func(done, total int)
}

// Lossless trains a world model on the training codes, codes the test set
// losslessly, checks the decode, and measures it beside the baselines
// (package baseline) on the same codes.
func Lossless(c LosslessConfig) (*LosslessReport, error) {
	if c.Progress == nil {
		c.Progress = func(string) func(int, int) { return nil }
	}
	var eps []wm.Episode
	var trainCodes []uint16
	var g wm.Geometry
	for i, tr := range c.Train {
		p := c.TrainNames[i]
		gi := wm.Geometry{S: tr.S, M: tr.M, K: wmtrain.Alphabet(tr.Codes)}
		if i > 0 && gi.N() != g.N() {
			return nil, fmt.Errorf("%s: %d coordinates per state, %s has %d", p, gi.N(), c.TrainNames[0], g.N())
		}
		g.S, g.M, g.K = gi.S, gi.M, max(g.K, gi.K)
		eps = append(eps, episodes(tr)...)
		trainCodes = append(trainCodes, tr.Codes...)
	}
	test := c.Test
	if test.S*test.M != g.N() {
		return nil, fmt.Errorf("%s: %d coordinates per state, the training set has %d", c.TestName, test.S*test.M, g.N())
	}
	g.K = max(g.K, wmtrain.Alphabet(test.Codes))
	rep := &LosslessReport{Test: c.TestName, Train: c.TrainNames, States: test.T, Coordinates: g.N(), Alphabet: g.K}

	t0 := time.Now()
	m, err := wm.Train(g, eps, wm.TrainOptions{Progress: c.Progress("training")})
	if err != nil {
		return nil, err
	}
	rep.TrainSeconds = time.Since(t0).Seconds()
	mb, _ := m.MarshalBinary()
	rep.ModelID, rep.ModelBytes = m.ID().String(), len(mb)

	var buf bytes.Buffer
	t1 := time.Now()
	if _, _, err := alloc.EncodeWith(&buf, m, episodes(test), c.Progress("encoding"), nil, nil, format.WithKeyframeInterval(c.Keyframe)); err != nil {
		return nil, err
	}
	rep.EncodeSeconds = time.Since(t1).Seconds()
	t2 := time.Now()
	f, err := format.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), m)
	if err != nil {
		return nil, err
	}
	var got npz.Trajectory
	for e := range f.Episodes() {
		_, codes, err := f.DecodeEpisode(e)
		if err != nil {
			return nil, err
		}
		got.Codes = append(got.Codes, codes...)
	}
	rep.DecodeSeconds = time.Since(t2).Seconds()
	rep.NsPerCoord = rep.DecodeSeconds * 1e9 / float64(max(1, test.T*g.N()))
	rep.Exact = slices.Equal(got.Codes, test.Codes)
	if !rep.Exact {
		return nil, errors.New("decoded codes differ from the input")
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
	if rep.Baselines, err = baseline.Run(baseline.Input{Codes: test.Codes, N: g.N(), K: g.K, Train: trainCodes, EpisodeStart: starts}, baseline.Options{SkipExternal: !c.External}); err != nil {
		return nil, err
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
	return rep, nil
}

// PrintLossless prints the report as a table.
func PrintLossless(w io.Writer, rep *LosslessReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
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
	fmt.Fprintf(w, "\n%d test states; model %s, %d bytes (not counted); train %.1fs, encode %.1fs, decode %.1fs (%.0f ns/coordinate); decoded exactly\n",
		rep.States, rep.ModelID, rep.ModelBytes, rep.TrainSeconds, rep.EncodeSeconds, rep.DecodeSeconds, rep.NsPerCoord)
}
