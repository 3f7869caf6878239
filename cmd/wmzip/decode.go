package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/ctmc"
	"github.com/wmzip/wmzip/internal/traj"
)

func init() {
	register("decode", "decompress a .wmz file into a trajectory (.npz)", runDecode)
}

func runDecode(args []string) (err error) {
	fs := newFlags("decode", "[-m model.wmm] [--episode E [--step T | --steps A:B]] [--access-log trace.tsv] -o out.npz in.wmz")
	modelPath := fs.String("m", "", "model file (default: the model embedded in the file)")
	out := fs.String("o", "", "output .npz (required)")
	codesOnly := fs.Bool("codes-only", false, "write only the codes, not obs, the quantizer's reconstruction")
	episode := fs.Int("episode", -1, "random access: decode only episode E (0-based) through the index")
	step := fs.Int("step", -1, "random access: with --episode, decode only state T of the episode")
	steps := fs.String("steps", "", "random access: with --episode, decode only its steps A to B-1 (A: from A to the end, :B from 0)")
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
	to := 0
	if *steps != "" {
		if *step >= 0 || *episode < 0 {
			return errors.New("--steps needs --episode and excludes --step")
		}
		if *step, to, err = stepRange(*steps); err != nil {
			return err
		}
	}
	if err := checkFiles([]*string{&pos[0], modelPath}, output{flag: "-o", path: out}, output{flag: "--access-log", path: accessLog, inPlace: true}); err != nil {
		return err
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
	opts = append(opts, wmzlib.WithDecoderThreads(threads()))
	streamingGC()
	f, fh, err := openWMZ(pos[0], *modelPath, opts...)
	if err != nil {
		return err
	}
	defer fh.Close()
	if to < 0 { // A: runs to the end of the episode
		to = 0 // an episode the file has not: DecodeHeader says so
		if lens := f.Episodes(); *episode < len(lens) {
			to = lens[*episode]
			if *step >= to {
				return fmt.Errorf("--steps %q: episode %d has steps 0 to %d", *steps, *episode, to-1)
			}
		}
	}
	o := traj.DecodeOptions{Episode: *episode, Step: *step, To: to, CodesOnly: *codesOnly, Progress: progress(*quiet, "decoding")}
	h, err := traj.DecodeHeader(f, o)
	what := ""
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", pos[0], err)
	case h.T == 0 && *episode >= 0:
		return fmt.Errorf("%s: episode %d has no states", pos[0], *episode)
	case h.T == 0:
		return fmt.Errorf("%s: no states to decode (%d episodes, none with a state)", pos[0], len(f.Episodes()))
	case *step >= 0 && h.T > 1:
		what = fmt.Sprintf(" (episode %d, steps %d to %d)", *episode, *step, *step+h.T-1)
	case *step >= 0:
		what = fmt.Sprintf(" (episode %d, step %d)", *episode, *step)
	case *episode >= 0:
		what = fmt.Sprintf(" (episode %d)", *episode)
	case len(f.Episodes()) > len(h.EpisodeStart):
		n := len(f.Episodes())
		what = fmt.Sprintf(" (left out %d of %d episodes: without states, which an .npz cannot hold)", n-len(h.EpisodeStart), n)
	}
	// States stream from the file into the .npz: memory does not grow with
	// either.
	if err := traj.WriteDecoded(*out, f, o); err != nil {
		return wmzError(pos[0], err, *modelPath)
	}
	if !*quiet {
		fmt.Printf("wrote %s: %d states, %d episodes%s\n", *out, h.T, len(h.EpisodeStart), what)
	}
	return nil
}

// stepRange parses --steps A:B, A: or :B into [from, to); to is -1 for
// A: (the end of the episode).
func stepRange(v string) (from, to int, err error) {
	a, b, ok := strings.Cut(v, ":")
	bad := fmt.Errorf("--steps %q: want A:B, the steps A to B-1 of the episode (A: to its end, :B from its start)", v)
	if !ok {
		return 0, 0, bad
	}
	to = -1
	if a != "" {
		if from, err = strconv.Atoi(a); err != nil || from < 0 {
			return 0, 0, bad
		}
	}
	if b != "" {
		if to, err = strconv.Atoi(b); err != nil || to <= from {
			return 0, 0, bad
		}
	}
	return from, to, nil
}
