package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/ctmc"
	"github.com/wmzip/wmzip/npz"
)

func init() {
	register("decode", "decompress a .wmz file into a trajectory (.npz)", runDecode)
}

func runDecode(args []string) (err error) {
	fs := newFlags("decode", "[-m model.wmm] [--episode E [--step T]] [--access-log trace.tsv] -o out.npz in.wmz")
	modelPath := fs.String("m", "", "model file (default: the model embedded in the file)")
	out := fs.String("o", "", "output .npz (required)")
	codesOnly := fs.Bool("codes-only", false, "write only the codes, not obs, the quantizer's reconstruction")
	episode := fs.Int("episode", -1, "random access: decode only episode E (0-based) through the index")
	step := fs.Int("step", -1, "random access: with --episode, decode only state T of the episode")
	accessLog := fs.String("access-log", "", "append one \"episode<TAB>step\" line per state decoded to this access trace (created with its header if missing; see package ctmc)")
	quiet := fs.Bool("q", false, "no progress or summary output")
	threads := threadsFlag(fs, "decoding a whole file or episode")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return errors.New("missing -o out.npz")
	}
	if len(pos) != 1 {
		return errors.New("want exactly one input .wmz")
	}
	if *step >= 0 && *episode < 0 {
		return errors.New("--step needs --episode")
	}
	if *episode < -1 || *step < -1 {
		return errors.New("--episode and --step must be ≥ 0")
	}
	var tw *ctmc.TraceWriter
	var opts []wmzlib.ReaderOption
	if *accessLog != "" {
		var lf *os.File
		if tw, lf, err = ctmc.OpenTraceLog(*accessLog); err != nil {
			return err
		}
		defer func() {
			if e := tw.Close(); e != nil && err == nil {
				err = fmt.Errorf("%s: %w", *accessLog, e)
			}
			closeOr(lf, &err)
		}()
		opts = append(opts, wmzlib.WithAccessLog(tw.Access))
	}
	opts = append(opts, wmzlib.WithThreads(threads()))
	f, fh, err := openWMZ(pos[0], *modelPath, opts...)
	if err != nil {
		return err
	}
	defer fh.Close()
	var tr *npz.Trajectory
	var levels []uint8
	what := ""
	switch {
	case *episode >= 0:
		if *episode >= f.Episodes() {
			return fmt.Errorf("%s: episode %d of %d", pos[0], *episode, f.Episodes())
		}
		what = fmt.Sprintf(" (episode %d)", *episode)
		if *step >= 0 {
			if *step >= f.EpisodeLen(*episode) {
				return fmt.Errorf("%s: step %d of %d in episode %d", pos[0], *step, f.EpisodeLen(*episode), *episode)
			}
			what = fmt.Sprintf(" (episode %d, step %d)", *episode, *step)
		}
		if tr, err = f.EpisodeTrajectory(*episode, *step); err != nil {
			return wmzError(pos[0], err)
		}
	case len(f.Format().Header().Levels) > 0:
		// The sequential reader also gives every state's level.
		var access func(e, t int64)
		if tw != nil {
			access = tw.Access
		}
		r, err := wmzlib.NewReader(io.NewSectionReader(fh, 0, math.MaxInt64), f.Codec(), wmzlib.WithThreads(threads()))
		if err == nil {
			tr, levels, err = r.Trajectory(access)
		}
		if err != nil {
			return wmzError(pos[0], err)
		}
	default:
		if tr, _, err = f.Trajectory(progress(*quiet, "decoding")); err != nil {
			return wmzError(pos[0], err)
		}
	}
	switch {
	case tr.T == 0 && *episode >= 0:
		return fmt.Errorf("%s: episode %d has no states", pos[0], *episode)
	case tr.T == 0:
		return fmt.Errorf("%s: no states to decode (%d episodes, none with a state)", pos[0], f.Episodes())
	}
	if empty := f.Episodes() - len(tr.EpisodeStart); *episode < 0 && empty > 0 {
		what = fmt.Sprintf(" (left out %d of %d episodes: without states, which an .npz cannot hold)", empty, f.Episodes())
	}
	// With a quantizer in the model, also give back the slot vectors.
	if f.Codec().Quantizer() != nil && !*codesOnly {
		if err := f.Codec().ReconstructTrajectory(tr); err != nil {
			return err
		}
	}
	if levels != nil {
		tr.Extra = append(tr.Extra, npz.Array{Name: "levels", Dtype: "uint8", Shape: []int{len(levels)}, Data: levels})
	}
	if err := npz.WriteTrajectory(*out, tr); err != nil {
		return err
	}
	if !*quiet {
		fmt.Printf("wrote %s: %d states, %d episodes%s\n", *out, tr.T, len(tr.EpisodeStart), what)
	}
	return nil
}
