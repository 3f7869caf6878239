package wmzip

import (
	"fmt"
	"slices"

	"github.com/wmzip/wmzip/npz"
)

// ReadTrainingEpisodes reads the episodes of trajectory .npz files for
// Train: as float observations when useObs is set and a file has them,
// else as codes. With maxStates > 0 (0: all) it keeps what Train learns
// from under WithMaxStates(maxStates): the last maxStates states of the
// files in their order. Files wholly before them are not read, and of a
// file of codes that holds more, only the states kept are widened to
// uint16: a file of a million states then costs its codes as stored, not
// three times that.
func ReadTrainingEpisodes(paths []string, useObs bool, maxStates int) ([]Episode, error) {
	if maxStates < 0 {
		return nil, fmt.Errorf("%w: max states %d is negative", ErrInput, maxStates)
	}
	var parts [][]Episode
	left := maxStates
	for i := len(paths) - 1; i >= 0 && (maxStates <= 0 || left > 0); i-- {
		tr, err := readTrainingFile(paths[i], useObs, left)
		if err != nil {
			return nil, err
		}
		if tr.Codes == nil && (tr.Obs == nil || !useObs) {
			return nil, fmt.Errorf("%s: no `codes` array", paths[i])
		}
		parts = append(parts, TrajectoryEpisodes(tr, useObs))
		left -= tr.T
	}
	var eps []Episode
	for i := len(parts) - 1; i >= 0; i-- {
		eps = append(eps, parts[i]...)
	}
	return eps, nil
}

// readTrainingFile reads one trajectory file, or only its last keep
// states when keep > 0 and it is a file of codes that holds more.
func readTrainingFile(path string, useObs bool, keep int) (*npz.Trajectory, error) {
	heads, err := npz.ReadNPZHeaders(path)
	if err != nil {
		return nil, err
	}
	var codes *npz.Array
	for i := range heads {
		if heads[i].Name == npz.NameObs && useObs {
			return npz.ReadTrajectory(path)
		}
		if heads[i].Name == npz.NameCodes {
			codes = &heads[i]
		}
	}
	if keep <= 0 || codes == nil || len(codes.Shape) < 2 || codes.Shape[0] <= keep {
		return npz.ReadTrajectory(path)
	}
	arrays, err := npz.ReadNPZ(path)
	if err != nil {
		return nil, err
	}
	T := codes.Shape[0]
	cut := T - keep
	tr := &npz.Trajectory{T: keep, S: 1, M: codes.Shape[1], CodesDtype: codes.Dtype, Actions: make([]int64, keep)}
	if len(codes.Shape) == 3 {
		tr.S, tr.M = codes.Shape[1], codes.Shape[2]
	}
	for i := range tr.Actions {
		tr.Actions[i] = npz.NoAction
	}
	n := tr.S * tr.M
	for _, a := range arrays {
		l := a.Len()
		switch a.Name {
		case npz.NameCodes:
			if !slices.Equal(a.Shape, codes.Shape) {
				return nil, fmt.Errorf("%w: %s changed while it was read", ErrInput, path)
			}
			tr.Codes = widenTail(a.Data, cut*n, l)
		case npz.NameActions:
			acts := int64Tail(a.Data, 0)
			if len(acts) != T || l != T {
				return nil, fmt.Errorf("%w: %s: want %d actions of dtype int32 or int64, have %d of %s", ErrInput, path, T, l, a.Dtype)
			}
			tr.HasActions = true
			copy(tr.Actions, acts[cut:])
		case npz.NameEpisodeStart:
			// The episodes that begin after the cut, and the one it cuts.
			starts := int64Tail(a.Data, 0)
			if len(starts) != l {
				return nil, fmt.Errorf("%w: %s: episode starts of dtype %s, want int32 or int64", ErrInput, path, a.Dtype)
			}
			tr.EpisodeStart = []int64{0}
			for _, s := range starts {
				if s > int64(cut) {
					tr.EpisodeStart = append(tr.EpisodeStart, s-int64(cut))
				}
			}
		}
	}
	if tr.Codes == nil {
		return nil, fmt.Errorf("%w: %s: codes of dtype %s", ErrInput, path, codes.Dtype)
	}
	if err := tr.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tr, nil
}

// widenTail returns data[from:] of a uint8 or uint16 array of n elements
// as uint16, or nil for another type or length.
func widenTail(data any, from, n int) []uint16 {
	switch v := data.(type) {
	case []uint8:
		if len(v) != n {
			return nil
		}
		out := make([]uint16, n-from)
		for i, c := range v[from:] {
			out[i] = uint16(c)
		}
		return out
	case []uint16:
		if len(v) != n {
			return nil
		}
		return slices.Clone(v[from:])
	}
	return nil
}

// int64Tail returns data[from:] of an int32 or int64 array as int64, or
// nil for another type.
func int64Tail(data any, from int) []int64 {
	switch v := data.(type) {
	case []int32:
		out := make([]int64, len(v)-from)
		for i, x := range v[from:] {
			out[i] = int64(x)
		}
		return out
	case []int64:
		return v[from:]
	}
	return nil
}
