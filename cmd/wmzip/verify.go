package main

import (
	"errors"
	"fmt"
	"slices"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/traj"
)

func init() {
	register("verify", "decode a .wmz fully with every check, optionally against its source", runVerify)
}

func runVerify(args []string) error {
	fs := newFlags("verify", "[-m model.wmm] [--against in.npz] [--key name.pub] [--json] in.wmz")
	modelPath := fs.String("m", "", "model file (default: the embedded one)")
	against := fs.String("against", "", "source trajectory (.npz): lossless codes must equal its own; report the distortion against its float obs")
	quiet := fs.Bool("q", false, "no progress or summary output")
	asJSON := fs.Bool("json", false, "print one JSON object")
	threads := threadsFlag(fs, "verifying")
	var signed signedRead
	signed.flags(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	*quiet = *quiet || *asJSON
	if len(pos) != 1 {
		return errors.New("want exactly one .wmz file")
	}
	if err := checkFiles([]*string{&pos[0], modelPath, against, signed.key, signed.sig}); err != nil {
		return err
	}
	sigOpts, err := signed.options()
	if err != nil {
		return err
	}
	f, fh, err := openWMZ(pos[0], *modelPath, append(sigOpts, wmzlib.WithDecoderThreads(threads()))...)
	if err != nil {
		return err
	}
	defer fh.Close()
	if err := f.Verify(); err != nil {
		return wmzError(pos[0], err, *modelPath)
	}
	sigMsg, err := signed.detached(pos[0], f)
	if err != nil {
		return err
	}
	got, eps, err := traj.Decode(f, progress(*quiet, "decoding"))
	if err != nil {
		return wmzError(pos[0], err, *modelPath)
	}
	// Random access must agree with sequential decoding.
	n := got.S * got.M
	for i, st := range got.EpisodeStart {
		e := eps[i]
		last := f.Episodes()[e] - 1
		_, c, err := f.State(e, last, nil)
		if err != nil {
			return fmt.Errorf("%s: episode %d state %d: %w", pos[0], e, last, err)
		}
		off := (int(st) + last) * n
		if !slices.Equal(c, got.Codes[off:off+n]) {
			return fmt.Errorf("%s: episode %d state %d: random access differs from sequential decoding", pos[0], e, last)
		}
	}
	h := f.Header()
	// A gate-free file coded by rate and distortion reports what its
	// choices changed (SPEC.md 6.2): its codes are not the quantizer's.
	lossless := h.Lossless() && f.Info().Report.Retention == 0
	res := verifyResult{File: pos[0], States: got.T, Episodes: len(f.Episodes()), Checks: "passed", Lossless: lossless, Signature: sigMsg}
	if *against != "" {
		want, err := traj.ReadCodes(*against, f.Codec())
		if err != nil {
			return err
		}
		if want.T != got.T {
			return fmt.Errorf("%d states decoded, %s has %d", got.T, *against, want.T)
		}
		if !slices.Equal(want.EpisodeStart, got.EpisodeStart) {
			return fmt.Errorf("episode starts differ from %s", *against)
		}
		for t := range want.T {
			if want.HasActions && t > 0 && !slices.Contains(want.EpisodeStart, int64(t)) && want.Actions[t] != got.Actions[t] {
				return fmt.Errorf("state %d: action %d decoded, %s has %d", t, got.Actions[t], *against, want.Actions[t])
			}
			if lossless && !slices.Equal(want.Codes[t*n:(t+1)*n], got.Codes[t*n:(t+1)*n]) {
				return fmt.Errorf("state %d: decoded codes differ from those of %s", t, *against)
			}
		}
		same := slices.Equal(want.Codes, got.Codes)
		res.CodesIdentical = &same
		d, wrong := codesDistortion(f.Codec(), got.Codes, want.Codes)
		res.Distortion, res.WrongCodes = &d, &wrong
		if want.Obs != nil && f.Codec().Quantizer() != nil {
			// The decoded observations against the source's floats: what a
			// user gets back, the quantizer's error included.
			c := f.Codec()
			rec, err := c.Reconstruct(nil, got.Codes)
			if err != nil {
				return err
			}
			src, err := opq.Compare(want.Obs, rec, c.Quantizer().Dim())
			if err != nil {
				return err
			}
			if rec, err = c.Reconstruct(rec[:0], want.Codes); err != nil {
				return err
			}
			qu, err := opq.Compare(want.Obs, rec, c.Quantizer().Dim())
			if err != nil {
				return err
			}
			sd, sc, qd := src.Distortion(), src.Cosine(), qu.Distortion()
			res.SourceDistortion, res.SourceCosine, res.QuantizerDistortion = &sd, &sc, &qd
		}
	}
	if *asJSON {
		return printJSON(res)
	}
	if !*quiet {
		msg := "all checks passed"
		if !lossless {
			msg += " (every chunk's reconstruction hash equals the writer's)"
		}
		if h.Lossless() && !lossless {
			msg += "; coded by rate and distortion"
		}
		if *against != "" {
			switch {
			case *res.CodesIdentical && res.SourceDistortion == nil:
				msg += ", identical to " + *against
			case *res.CodesIdentical:
				msg += ", codes identical to the quantization of " + *against
			default:
				msg += fmt.Sprintf(", distortion %.6g against the quantizer's reconstruction of %s (%d codes differ)", *res.Distortion, *against, *res.WrongCodes)
			}
		}
		if sigMsg != "" {
			msg += "; " + sigMsg
		}
		fmt.Printf("%s: %d states in %d episodes: %s\n", pos[0], got.T, len(f.Episodes()), msg)
		if res.SourceDistortion != nil {
			fmt.Printf("  decoded observations against the floats of %s: distortion %.6g, mean cosine %.6f (the quantizer's own codes alone: %.6g)\n",
				*against, *res.SourceDistortion, *res.SourceCosine, *res.QuantizerDistortion)
		}
	}
	return nil
}

// verifyResult is what verify --json prints. Distortions are means over
// slot vectors of the squared error over the squared norm of the vector
// compared with (SPEC.md, informative: "Rates and distortion").
type verifyResult struct {
	File     string `json:"file"`
	States   int    `json:"states"`
	Episodes int    `json:"episodes"`
	Checks   string `json:"checks"`
	Lossless bool   `json:"lossless"`
	// With --key: what was verified of the file's signature.
	Signature string `json:"signature,omitempty"`
	// With --against: whether the decoded codes are the source's (or its
	// quantization), and their distortion against them.
	CodesIdentical *bool    `json:"codes_identical,omitempty"`
	Distortion     *float64 `json:"distortion_vs_lossless,omitempty"`
	WrongCodes     *int64   `json:"wrong_codes,omitempty"`
	// With --against a source of float obs: the decoded observations
	// against them, and the quantizer's own share.
	SourceDistortion    *float64 `json:"distortion_vs_source,omitempty"`
	SourceCosine        *float64 `json:"cosine_vs_source,omitempty"`
	QuantizerDistortion *float64 `json:"quantizer_distortion_vs_source,omitempty"`
}
