package main

import (
	"errors"
	"fmt"
	"io"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/cmd/wmzip/internal/bench"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/traj"
)

func init() {
	register("info", "describe a .wmz file (sizes, rates, model) or a model file (.wmm)", runInfo)
}

// infoJSON is the object `wmzip info --json` prints.
type infoJSON struct {
	Description
	bench.Storage                // the model amortized over the file, and break-evens
	Signature     *signatureJSON `json:"signature,omitempty"` // nil: unsigned
}

func runInfo(args []string) error {
	fs := newFlags("info", "[--json] [-m model.wmm] [--ref in.npz] in.wmz | [--json] model.wmm")
	asJSON := fs.Bool("json", false, "print one JSON object")
	modelPath := fs.String("m", "", "model file, checked against the file (not needed: header and index tell the rest)")
	baselines := fs.Bool("baselines", false, "decode and measure zstd best and xz -9e on the states: the break-even horizons of this model against them (needs the model)")
	ref := fs.String("ref", "", "source trajectory (.npz): report the distortion against it (needs the model)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("want exactly one .wmz file")
	}
	if err := checkFiles([]*string{&pos[0], modelPath, ref}); err != nil {
		return err
	}
	if isModelFile(pos[0]) {
		if *modelPath != "" || *ref != "" || *baselines {
			return fmt.Errorf("%s is a model file: -m, --ref and --baselines describe a .wmz file", pos[0])
		}
		return infoModel(pos[0], *asJSON)
	}
	// Header, level table, index and trailer need no model; the model is
	// opened only to check it or to decode.
	var f *wmzlib.File
	var h format.Header
	var in format.Info
	if *modelPath != "" || *ref != "" {
		var fh io.Closer
		if f, fh, err = openWMZ(pos[0], *modelPath); err != nil {
			return err
		}
		defer fh.Close()
		h, in = f.Header(), f.Info()
	} else if h, in, err = readInfo(pos[0]); err != nil {
		return err
	}
	j := infoJSON{Description: Describe(pos[0], h, in)}
	if j.Signature, err = readSignatureInfo(pos[0]); err != nil {
		return wmzError(pos[0], err, *modelPath)
	}
	if *ref != "" && !h.Lossless() {
		want, err := traj.ReadCodes(*ref, f.Codec())
		if err != nil {
			return err
		}
		got, _, err := traj.Decode(f, nil)
		if err != nil {
			return wmzError(pos[0], err, *modelPath)
		}
		if got.T != want.T {
			return fmt.Errorf("%d states decoded, %s has %d", got.T, *ref, want.T)
		}
		j.Distortion, _ = codesDistortion(f.Codec(), got.Codes, want.Codes)
	}
	j.Storage = bench.NewStorage(j.States, sharedModelBytes(j.ModelEmbedded, j.ModelBytes, *modelPath), j.BitsPerState)
	if *baselines {
		if err := measureBaselines(&j.Storage, pos[0], *modelPath, j.Alphabet); err != nil {
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
	fmt.Printf("mode         %s lambda=%v retained=%.4f", j.Mode, j.Lambda, j.RetainedFraction)
	if len(j.Levels) > 0 {
		fmt.Printf(" levels=%v", j.Levels)
	}
	fmt.Println()
	if j.Distortion != nil || j.DistortionVsSource != nil {
		fmt.Printf("distortion  ")
		if j.DistortionVsSource != nil {
			fmt.Printf(" %.6g against the source observations, quantizer and coding together (mean cosine %.6f);", *j.DistortionVsSource, *j.CosineVsSource)
		} else {
			fmt.Printf(" against the source: not recorded (written from codes);")
		}
		switch {
		case j.Mode == "lossless":
			fmt.Printf(" the quantizer's own codes, losslessly")
		case j.Distortion != nil:
			fmt.Printf(" %.6g against the quantizer's reconstruction (what %s changed)", j.Distortion, map[bool]string{true: "coding by rate and distortion", false: "retention"}[j.Mode == "rate-distortion"])
		}
		fmt.Println()
	}
	fmt.Printf("model        %s embedded=%v\n", j.ModelID, j.ModelEmbedded)
	fmt.Println(j.Signature.text())
	if j.AboveRaw {
		fmt.Printf("warning      %.1f bits/state is above the raw %.0f: the model predicts these states worse than no model (trained on other data?)\n", j.BitsPerState, j.RawBitsPerState)
	}
	fmt.Println(j.Storage.Text())
	return nil
}

// readInfo reads the header and index of the .wmz at path, without a model.
func readInfo(path string) (format.Header, format.Info, error) {
	fh, err := openInput(path)
	if err != nil {
		return format.Header{}, format.Info{}, err
	}
	defer fh.Close()
	h, in, err := format.ReadInfo(fh, fh.Size())
	if err != nil {
		return h, in, wmzError(path, err, "")
	}
	return h, in, nil
}
