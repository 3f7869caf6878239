package wmzip

import (
	"fmt"
	"slices"
)

// Checks of a user's observations before they are quantized, whose
// messages speak of states, slots and arrays as a trajectory has them.
//
// Observations must be finite: the quantizer gives a vector holding NaN
// or an infinity some code without complaint, so the state would come
// back as something else. Every path that quantizes checks first, and
// says where the value is.

// inputError is an ErrInput whose message is the user's part alone.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }
func (e *inputError) Unwrap() error { return ErrInput }

func inputErrorf(format string, args ...any) error {
	return &inputError{fmt.Sprintf(format, args...)}
}

// checkObsShape checks float observations of s slot vectors of d values
// per state against the codec's quantizer; path names them.
func (c *Codec) checkObsShape(path string, s, d int) error {
	g, dim := c.m.Geom, c.q.Dim()
	if s == g.S && d == dim {
		return nil
	}
	if path != "" {
		path += ": "
	}
	return inputErrorf("%sobs has shape [T,%d,%d], the model's quantizer takes [T,%d,%d] (%d slot vectors of %d values per state): use a model trained on observations of this shape", path, s, d, g.S, dim, g.S, dim)
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

// checkFinite checks observations, whole states of slots vectors of dim
// values, the first being state first; where tells what they belong to
// ("" or a file, an episode), and step, if not nil, gives the episode
// and step of a state for the message.
func checkFinite(obs []float32, slots, dim, first int, where string, step func(state int) (e, t int)) error {
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
	return inputErrorf("%sobs at %s, slot %d holds %v: observations must be finite numbers (replace or drop that state)", where, at, slot, obs[i])
}

// stepIn returns where a state lies among episodes starting at starts:
// its episode and step (one episode when starts is empty).
func stepIn(starts []int64) func(state int) (e, t int) {
	return func(state int) (int, int) {
		e, _ := slices.BinarySearch(starts, int64(state)+1)
		if e == 0 {
			return 0, state
		}
		return e - 1, state - int(starts[e-1])
	}
}
