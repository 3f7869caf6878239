// Package check holds the checks of a user's observations and codes that
// the codec, the trainer and the .npz bridge share, with messages that
// speak of states, slots and arrays as a trajectory has them.
//
// Observations must be finite: the quantizer gives a vector holding NaN
// or an infinity some code without complaint, so the state would come
// back as something else. Every path that quantizes checks first, and
// says where the value is.
package check

import (
	"fmt"
	"slices"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/wm"
)

// inputError is a format.ErrInput whose message is the user's part alone.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }
func (e *inputError) Unwrap() error { return format.ErrInput }

// Errorf returns an error wrapping format.ErrInput whose message is the
// formatted text alone.
func Errorf(f string, args ...any) error {
	return &inputError{fmt.Sprintf(f, args...)}
}

// nonFinite returns the index of the first value of obs that is NaN or
// infinite, or -1.
func nonFinite(obs []float32) int {
	for i, v := range obs {
		if v-v != 0 { // NaN and ±Inf alone give NaN
			return i
		}
	}
	return -1
}

// Finite checks observations, whole states of slots vectors of dim
// values, the first being state first; where tells what they belong to
// ("" or a file, an episode), and step, if not nil, gives the episode and
// step of a state for the message.
func Finite(obs []float32, slots, dim, first int, where string, step func(state int) (e, t int)) error {
	i := nonFinite(obs)
	if i < 0 {
		return nil
	}
	per := max(slots*dim, 1)
	state, slot := first+i/per, i%per/max(dim, 1)
	at := fmt.Sprintf("state %d", state)
	if step != nil {
		e, t := step(state)
		at += fmt.Sprintf(" (episode %d, step %d)", e, t)
	}
	if where != "" {
		where += ": "
	}
	return Errorf("%sobs at %s, slot %d holds %v: observations must be finite numbers (replace or drop that state)", where, at, slot, obs[i])
}

// StepIn returns where a state lies among episodes starting at starts:
// its episode and step (one episode when starts is empty).
func StepIn(starts []int64) func(state int) (e, t int) {
	return func(state int) (int, int) {
		e, _ := slices.BinarySearch(starts, int64(state)+1)
		if e == 0 {
			return 0, state
		}
		return e - 1, state - int(starts[e-1])
	}
}

// ObsShape checks float observations of s slot vectors of d values per
// state against a quantizer of S slots of dim values; path names them.
func ObsShape(path string, s, d, S, dim int) error {
	if s == S && d == dim {
		return nil
	}
	if path != "" {
		path += ": "
	}
	return Errorf("%sobs has shape [T,%d,%d], the model's quantizer takes [T,%d,%d] (%d slot vectors of %d values per state): use a model trained on observations of this shape", path, s, d, S, dim, S, dim)
}

// Shape checks that codes of shape [T,s,m] fit geometry g.
func Shape(path string, s, m int, g *wm.Geometry) error {
	// The same N in another shape would silently mean other slots and
	// subspaces.
	if (s != g.S || m != g.M) && (s != 1 || m != g.N()) {
		return Errorf("%s: codes have shape [T,%d,%d], the model expects [T,%d,%d] or [T,%d]: use a model trained on codes of this shape", path, s, m, g.S, g.M, g.N())
	}
	return nil
}

// Codes checks that codes, whole states from state first on, are below K.
func Codes(path string, codes []uint16, first int, g *wm.Geometry) error {
	for i, v := range codes {
		if int(v) >= g.K {
			return Errorf("%s: code %d at state %d, slot %d, subspace %d is >= K=%d, the model's alphabet: use a model trained on codes of this range", path, v, first+i/g.N(), i%g.N()/g.M, i%g.M, g.K)
		}
	}
	return nil
}
