package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/wm"
)

// parse parses flags that may stand before, between or after positional
// arguments, and returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// parseNone parses the flags of a command that takes no positional
// arguments.
func parseNone(fs *flag.FlagSet, args []string) error {
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q", pos[0])
	}
	return nil
}

// parseList parses a comma-separated flag value item by item, dropping
// repeats and keeping the first order.
func parseList[T comparable](v string, parseItem func(string) (T, error)) ([]T, error) {
	var out []T
	for _, s := range strings.Split(v, ",") {
		x, err := parseItem(s)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out, nil
}

// progress returns a progress reporter for a long step, or a no-op one when
// stderr is not a terminal or quiet is set.
func progress(quiet bool, desc string) func(done, total int) {
	if quiet || !term.IsTerminal(int(os.Stderr.Fd())) {
		return func(int, int) {}
	}
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total,
				progressbar.OptionSetWriter(os.Stderr),
				progressbar.OptionSetDescription(desc),
				progressbar.OptionShowCount(),
				progressbar.OptionClearOnFinish(),
				progressbar.OptionThrottle(100_000_000))
		}
		bar.Set(done)
		if done >= total {
			bar.Finish()
		}
	}
}

func loadModel(path string) (*wm.Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := wm.UnmarshalModel(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// loadCodes reads a trajectory that must carry codes; when g is non-nil the
// codes must fit that geometry.
func loadCodes(path string, g *wm.Geometry) (*npz.Trajectory, error) {
	tr, err := npz.ReadTrajectory(path)
	if err != nil {
		return nil, err
	}
	if tr.Codes == nil {
		return nil, fmt.Errorf("%s: no `codes` array (float `obs` needs a model with a quantizer)", path)
	}
	return checkCodes(path, tr, g)
}

// checkCodes checks that a trajectory's codes fit geometry g (when set).
func checkCodes(path string, tr *npz.Trajectory, g *wm.Geometry) (*npz.Trajectory, error) {
	if g != nil {
		// [T,S,M] as the model's, or [T,N] (read as S=1, M=N); the same N
		// in another shape would silently mean other slots and subspaces.
		if (tr.S != g.S || tr.M != g.M) && (tr.S != 1 || tr.M != g.N()) {
			return nil, fmt.Errorf("%s: codes have shape [T,%d,%d], the model expects [T,%d,%d] or [T,%d]", path, tr.S, tr.M, g.S, g.M, g.N())
		}
		tr.S, tr.M = g.S, g.M
		for i, v := range tr.Codes {
			if int(v) >= g.K {
				return nil, fmt.Errorf("%s: code %d at state %d, coordinate %d is >= K=%d", path, v, i/g.N(), i%g.N(), g.K)
			}
		}
	}
	return tr, nil
}

// episodes splits a trajectory into training episodes.
func episodes(tr *npz.Trajectory) []wm.Episode {
	n := tr.S * tr.M
	var out []wm.Episode
	for _, e := range tr.Episodes() {
		out = append(out, wm.Episode{Codes: tr.Codes[e[0]*n : e[1]*n], Actions: tr.Actions[e[0]:e[1]]})
	}
	return out
}

func closeOr(c io.Closer, err *error) {
	if e := c.Close(); e != nil && *err == nil {
		*err = e
	}
}

// trajectoryEpisodes splits a trajectory into the library's episodes: as
// float observations when useObs is set and it has them, else as codes.
func trajectoryEpisodes(tr *npz.Trajectory, useObs bool) []wmzlib.Episode {
	var out []wmzlib.Episode
	for _, e := range tr.Episodes() {
		ep := wmzlib.Episode{Actions: tr.Actions[e[0]:e[1]]}
		if useObs && tr.Obs != nil {
			d := tr.ObsS * tr.ObsD
			ep.Obs, ep.Slots = tr.Obs[e[0]*d:e[1]*d], tr.ObsS
		} else {
			n := tr.S * tr.M
			ep.Codes, ep.Slots = tr.Codes[e[0]*n:e[1]*n], tr.S
		}
		out = append(out, ep)
	}
	return out
}

// readWeights reads a .npy of per-coordinate weights.
func readWeights(path string) ([]float64, error) {
	a, err := npz.ReadNPY(path)
	if err != nil {
		return nil, err
	}
	switch d := a.Data.(type) {
	case []float64:
		return d, nil
	case []float32:
		w := make([]float64, len(d))
		for i, v := range d {
			w[i] = float64(v)
		}
		return w, nil
	}
	return nil, fmt.Errorf("%s: weights must be float32 or float64, not %s", path, a.Dtype)
}

// gateBinsFlag parses --gate-bins: what the gate's error-rate bins are taken
// on.
func gateBinsFlag(v string) (gate.CalibOptions, error) {
	switch v {
	case "modal":
		return gate.CalibOptions{}, nil
	case "entropy":
		return gate.CalibOptions{EntropyBins: true}, nil
	}
	return gate.CalibOptions{}, fmt.Errorf("--gate-bins %q: want modal or entropy", v)
}

const gateBinsUsage = "what the gate's error-rate bins are taken on: modal (the table's own modal error probability) or entropy (GATE version 1, MemoWM's binning)"
