package npz

import "math"

// TrajectoryHeader is a trajectory without its states: what
// OpenTrajectory learns before reading a state, and what CreateTrajectory
// needs to write the array headers before the first. Its fields mean what
// Trajectory's do.
type TrajectoryHeader struct {
	T int // steps

	HasCodes   bool
	S, M       int    // codes shape [T,S,M], or [T,N] as S=1, M=N
	CodesDtype string // "uint8" or "uint16"

	HasObs     bool
	ObsS, ObsD int    // obs shape [T,S,d], or [T,D] as ObsS=1, ObsD=D
	ObsDtype   string // "float32", "float16" or "float64" (read as float32); on write "float32" or "float16", "" meaning float32

	HasActions bool // false: every action is NoAction, and none is written

	EpisodeStart []int64 // ascending, first 0, all < T; nil means one episode

	// Extra names the file's other arrays, which OpenTrajectory does not
	// read; for CreateTrajectory, further uint8 arrays of shape [T], one
	// value per step, written after episode_start in this order.
	Extra []string
}

// Episodes returns the [start, end) step range of each episode.
func (h *TrajectoryHeader) Episodes() [][2]int { return episodes(h.EpisodeStart, h.T) }

func episodes(starts []int64, t int) [][2]int {
	if starts == nil {
		if t == 0 {
			return nil
		}
		starts = []int64{0}
	}
	eps := make([][2]int, len(starts))
	for i, s := range starts {
		end := t
		if i+1 < len(starts) {
			end = int(starts[i+1])
		}
		eps[i] = [2]int{int(s), end}
	}
	return eps
}

// checkStarts checks episode starts against T steps: nil, or strictly
// ascending from 0 with every start < T (and none when T is 0).
func checkStarts(starts []int64, t int, path string) error {
	le := loc{path, NameEpisodeStart}
	if t == 0 && len(starts) > 0 {
		return le.errf(ErrContract, nil, "has %d entries but the trajectory has no steps", len(starts))
	}
	if t > 0 && starts != nil {
		if len(starts) == 0 || starts[0] != 0 {
			return le.errf(ErrContract, nil, "does not start with 0")
		}
		for i, s := range starts {
			if i > 0 && s <= starts[i-1] {
				return le.errf(ErrContract, nil, "is not strictly ascending at index %d (%d after %d)", i, s, starts[i-1])
			}
			if s >= int64(t) {
				return le.errf(ErrContract, nil, "has start %d at index %d, want < T=%d", s, i, t)
			}
		}
	}
	return nil
}

// check checks a header given to CreateTrajectory: what Validate
// checks of a Trajectory, with the sizes in place of the data.
func (h *TrajectoryHeader) check(path string) error {
	fl := loc{path: path}
	if h.T < 0 {
		return fl.errf(ErrContract, nil, "has T=%d steps", h.T)
	}
	if !h.HasCodes && !h.HasObs {
		return fl.errf(ErrContract, nil, "has no %q or %q array", NameCodes, NameObs)
	}
	if h.HasCodes {
		l := loc{path, NameCodes}
		if err := checkSizes(h.T, h.S, h.M, l); err != nil {
			return err
		}
		if h.CodesDtype != "uint8" && h.CodesDtype != "uint16" {
			return l.errf(ErrContract, nil, "has CodesDtype %q, want uint8 or uint16", h.CodesDtype)
		}
	}
	if h.HasObs {
		l := loc{path, NameObs}
		if err := checkSizes(h.T, h.ObsS, h.ObsD, l); err != nil {
			return err
		}
		switch h.ObsDtype {
		case "", "float32", "float16":
		default:
			return l.errf(ErrContract, nil, "has ObsDtype %q, want float32 or float16", h.ObsDtype)
		}
	}
	if err := checkStarts(h.EpisodeStart, h.T, path); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, name := range h.Extra {
		if err := checkExtraName(name, seen, path); err != nil {
			return err
		}
	}
	return nil
}

// checkExtraName checks the name of an extra array: not one of the
// contract's, not in seen, valid for a .npz member; it adds it to seen.
func checkExtraName(name string, seen map[string]bool, path string) error {
	l := loc{path, name}
	switch {
	case name == NameCodes || name == NameObs || name == NameActions || name == NameEpisodeStart:
		return l.errf(ErrContract, nil, "is in Extra but is a trajectory array")
	case seen[name]:
		return l.errf(ErrContract, nil, "appears twice in Extra")
	case !validName(name):
		return l.errf(ErrContract, nil, "has an invalid name for a .npz member")
	}
	seen[name] = true
	return nil
}

// checkSizes checks that a [T,S,W] array has positive state sizes and a
// size that 8-byte elements can count in an int64.
func checkSizes(t, s, w int, l loc) error {
	if s <= 0 || w <= 0 {
		return l.errf(ErrContract, nil, "has state shape %d×%d, want positive sizes", s, w)
	}
	if int64(w) > math.MaxInt64/8/int64(s) || t > 0 && int64(s*w) > math.MaxInt64/8/int64(t) {
		return l.errf(ErrContract, nil, "has shape %d×%d×%d, too large", t, s, w)
	}
	return nil
}
