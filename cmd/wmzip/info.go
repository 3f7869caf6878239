package main

import (
	"errors"
	"fmt"
	"os"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/bench"
	"github.com/wmzip/wmzip/format"
)

func init() {
	register("info", "describe a .wmz file: sizes, rates, model", runInfo)
}

// infoJSON is the object `wmzip info --json` prints.
type infoJSON struct {
	File                string  `json:"file"`
	Version             int     `json:"version"`
	States              int64   `json:"states"`
	Episodes            int     `json:"episodes"`
	Chunks              int64   `json:"chunks"`
	Slots               int     `json:"slots"`
	Subspaces           int     `json:"subspaces"`
	Alphabet            int     `json:"alphabet"`
	Precision           uint    `json:"precision"`
	Lanes               int     `json:"lanes"`
	Keyframe            int     `json:"keyframe_interval"`
	FileBytes           int64   `json:"file_bytes"`
	BitsPerState        float64 `json:"bits_per_state"`
	PayloadBitsPerState float64 `json:"payload_bits_per_state"`
	IdealBitsPerState   float64 `json:"ideal_bits_per_state"`
	RawBitsPerState     float64 `json:"raw_bits_per_state"`
	RetainedFraction    float64 `json:"retained_fraction"`
	Lossless            bool    `json:"lossless"`
	Lambda              any     `json:"lambda"`
	Levels              []any   `json:"levels,omitempty"`
	Distortion          any     `json:"distortion"`
	ModelID             string  `json:"model_id"`
	ModelEmbedded       bool    `json:"model_embedded"`
	ModelBytes          int64   `json:"model_bytes"`
	HeaderBytes         int64   `json:"header_bytes"`
	IndexBytes          int64   `json:"index_bytes"`
	FramingBitsPerState float64 `json:"framing_bits_per_state"`
	SharedModelBytes    int64   `json:"shared_model_bytes,omitempty"`
	TotalBitsPerState   float64 `json:"total_bits_per_state,omitempty"`

	BreakEvens []bench.BreakEven `json:"break_evens,omitempty"`
}

func runInfo(args []string) error {
	fs := newFlags("info", "[--json] [-m model.wmm] [--ref in.npz] in.wmz")
	asJSON := fs.Bool("json", false, "print one JSON object")
	modelPath := fs.String("m", "", "model file, checked against the file (not needed: header and index tell the rest)")
	baselines := fs.Bool("baselines", false, "decode and measure zstd best and xz -9e on the states: the break-even horizons of this model against them (needs the model)")
	ref := fs.String("ref", "", "source trajectory (.npz codes): decode and report the distortion against it (needs the model: -m or the embedded one)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("want exactly one .wmz file")
	}
	// Header, level table, index and trailer need no model; the model is
	// opened only to check it or to decode.
	var f *wmzlib.File
	var h format.Header
	var in format.Info
	if *modelPath != "" || *ref != "" {
		var fh *os.File
		if f, fh, err = openWMZ(pos[0], *modelPath); err != nil {
			return err
		}
		defer fh.Close()
		h, in = f.Format().Header(), f.Info()
	} else if h, in, err = readInfo(pos[0]); err != nil {
		return err
	}
	st := float64(max(in.States, 1))
	noModel := in.FileBytes - in.ModelBytes
	j := infoJSON{
		File: pos[0], Version: h.Version, States: in.States, Episodes: in.Episodes, Chunks: in.Chunks,
		Slots: h.Geom.S, Subspaces: h.Geom.M, Alphabet: h.Geom.K, Precision: h.Precision, Lanes: h.Lanes,
		Keyframe: h.KeyframeInterval, FileBytes: in.FileBytes,
		BitsPerState:        float64(noModel) * 8 / st,
		PayloadBitsPerState: float64(in.PayloadBytes) * 8 / st,
		IdealBitsPerState:   in.IdealBits() / st,
		RawBitsPerState:     wmzlib.RawBits(h.Geom),
		RetainedFraction:    float64(in.Retained) / float64(max(in.States, 1)*int64(h.Geom.N())),
		Lossless:            h.Lossless(),
		ModelID:             in.ModelID.String(), ModelEmbedded: in.Embedded, ModelBytes: in.ModelBytes,
		HeaderBytes: in.HeaderBytes, IndexBytes: in.IndexBytes,
	}
	j.FramingBitsPerState = j.BitsPerState - j.IdealBitsPerState
	if h.Lossless() {
		j.Lambda = "inf"
		j.Distortion = 0.0
	} else if h.Lambda == format.LambdaLossless {
		j.Lambda = "inf" // the last level of a level table
	} else {
		j.Lambda = float64(h.Lambda) / 65536
	}
	for _, l := range in.Levels {
		if l == format.LambdaLossless {
			j.Levels = append(j.Levels, "inf")
		} else {
			j.Levels = append(j.Levels, float64(l)/65536)
		}
	}
	if *ref != "" && !h.Lossless() {
		want, err := wmzlib.ReadTrajectory(*ref, f.Codec())
		if err != nil {
			return err
		}
		got, _, err := f.Trajectory(nil)
		if err != nil {
			return wmzError(pos[0], err)
		}
		if got.T != want.T {
			return fmt.Errorf("%d states decoded, %s has %d", got.T, *ref, want.T)
		}
		j.Distortion, _ = f.Codec().Distortion(got.Codes, want.Codes)
	}
	if in.States == 0 {
		j.BitsPerState, j.PayloadBitsPerState, j.IdealBitsPerState, j.FramingBitsPerState = 0, 0, 0, 0
	}
	j.storage(*modelPath)
	if *baselines {
		if err := j.measureBaselines(pos[0], *modelPath); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(j)
	}
	fmt.Printf("%s: wmz v%d, %d states in %d episodes, %d chunks\n", j.File, j.Version, j.States, j.Episodes, j.Chunks)
	fmt.Printf("geometry     %d slots x %d subspaces, K=%d; precision %d, %d lanes, keyframe %d\n", j.Slots, j.Subspaces, j.Alphabet, j.Precision, j.Lanes, j.Keyframe)
	fmt.Printf("size         %d bytes (header %d, model %d, index %d)\n", j.FileBytes, j.HeaderBytes, j.ModelBytes, j.IndexBytes)
	fmt.Printf("rate         %.1f bits/state (payload %.1f, ideal %.1f, raw %.0f)\n", j.BitsPerState, j.PayloadBitsPerState, j.IdealBitsPerState, j.RawBitsPerState)
	fmt.Printf("mode         lossless=%v lambda=%v retained=%.4f", j.Lossless, j.Lambda, j.RetainedFraction)
	if len(j.Levels) > 0 {
		fmt.Printf(" levels=%v", j.Levels)
	}
	if j.Distortion != nil {
		fmt.Printf(" distortion=%.6g", j.Distortion)
	}
	fmt.Println()
	fmt.Printf("model        %s embedded=%v\n", j.ModelID, j.ModelEmbedded)
	fmt.Println(j.storageLine())
	return nil
}

// readInfo reads the header and index of the .wmz at path, without a model.
func readInfo(path string) (format.Header, format.Info, error) {
	fh, err := os.Open(path)
	if err != nil {
		return format.Header{}, format.Info{}, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return format.Header{}, format.Info{}, err
	}
	h, in, err := format.ReadInfo(fh, st.Size())
	if err != nil {
		return h, in, wmzError(path, err)
	}
	return h, in, nil
}
