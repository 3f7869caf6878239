package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	wmzlib "github.com/wmzip/wmzip"
	progressBar "github.com/wmzip/wmzip/cmd/wmzip/internal/progress"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/objstore"
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
			if err := runFlagChecks(); err != nil {
				flagsFailed = true
				return nil, err
			}
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

// progress is progress.Bar: a bar on a terminal, lines now and then on
// stderr otherwise, nothing with -q.
var progress = progressBar.Bar

// stages returns a progress reporter for a step of named stages: one
// progress per stage.
func stages(quiet bool) func(stage string, done, total int) {
	var cur string
	var bar func(done, total int)
	return func(stage string, done, total int) {
		if bar == nil || stage != cur {
			cur, bar = stage, progress(quiet, stage)
		}
		bar(done, total)
	}
}

// loadCodes reads a trajectory that must carry codes.
func loadCodes(path string) (*npz.Trajectory, error) {
	tr, err := npz.ReadTrajectory(path)
	if err != nil {
		return nil, err
	}
	if tr.Codes == nil {
		return nil, fmt.Errorf("%s: no `codes` array (float `obs` needs a model with a quantizer)", path)
	}
	return tr, nil
}

// loadCodec reads the codec at path, or returns nil for an empty path
// (a file's embedded model is then used).
func loadCodec(path string) (*wmzlib.Codec, error) {
	if path == "" {
		return nil, nil
	}
	if objstore.IsURL(path) {
		return loadCodecS3(path)
	}
	return wmzlib.LoadCodec(path)
}

func closeOr(c io.Closer, err *error) {
	if e := c.Close(); e != nil && *err == nil {
		*err = e
	}
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

const gateBinsUsage = "what the gate's error-rate bins are taken on: modal (the modal probability) or entropy"

// logger prints a line to stderr unless quiet.
func logger(quiet bool) func(format string, args ...any) {
	return func(format string, args ...any) {
		if !quiet {
			fmt.Fprintf(os.Stderr, format+"\n", args...)
		}
	}
}

// printJSON prints v as one indented JSON object.
func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// hasGate reports whether the codec has a calibrated retention gate, which
// the lossy modes need.
func hasGate(c *wmzlib.Codec) bool {
	_, err := gate.FromModel(c.Model())
	return err == nil
}
