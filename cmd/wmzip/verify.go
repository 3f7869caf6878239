package main

import (
	"errors"
	"fmt"
	"slices"

	wmzlib "github.com/wmzip/wmzip"
)

func init() {
	register("verify", "decode a .wmz fully with every check, optionally against its source", runVerify)
}

func runVerify(args []string) error {
	fs := newFlags("verify", "[-m model.wmm] [--against in.npz] in.wmz")
	modelPath := fs.String("m", "", "model file (default: the embedded one)")
	against := fs.String("against", "", "source trajectory the decode must equal")
	quiet := fs.Bool("q", false, "no progress or summary output")
	threads := threadsFlag(fs, "verifying")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("want exactly one .wmz file")
	}
	if err := checkFiles([]*string{&pos[0], modelPath, against}); err != nil {
		return err
	}
	f, fh, err := openWMZ(pos[0], *modelPath, wmzlib.WithThreads(threads()))
	if err != nil {
		return err
	}
	defer fh.Close()
	if err := f.Verify(); err != nil {
		return wmzError(pos[0], err, *modelPath)
	}
	got, eps, err := f.Trajectory(progress(*quiet, "decoding"))
	if err != nil {
		return wmzError(pos[0], err, *modelPath)
	}
	// Random access must agree with sequential decoding.
	n := got.S * got.M
	for i, st := range got.EpisodeStart {
		e := eps[i]
		last := f.EpisodeLen(e) - 1
		c, err := f.Format().State(e, last)
		if err != nil {
			return fmt.Errorf("%s: episode %d state %d: %w", pos[0], e, last, err)
		}
		off := (int(st) + last) * n
		if !slices.Equal(c, got.Codes[off:off+n]) {
			return fmt.Errorf("%s: episode %d state %d: random access differs from sequential decoding", pos[0], e, last)
		}
	}
	h := f.Format().Header()
	lossless := h.Lossless()
	against2 := ""
	if *against != "" {
		want, err := wmzlib.ReadTrajectory(*against, f.Codec())
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
				return fmt.Errorf("state %d: decoded codes differ from %s", t, *against)
			}
		}
		if !lossless {
			d, wrong := f.Codec().Distortion(got.Codes, want.Codes)
			against2 = fmt.Sprintf(", distortion %.6g against %s (%d wrong codes)", d, *against, wrong)
		}
	}
	if !*quiet {
		msg := "all checks passed"
		if !lossless {
			msg += " (every chunk's reconstruction hash equals the writer's)"
		}
		if *against != "" && lossless {
			msg += ", identical to " + *against
		}
		msg += against2
		fmt.Printf("%s: %d states in %d episodes: %s\n", pos[0], got.T, f.Episodes(), msg)
	}
	return nil
}
