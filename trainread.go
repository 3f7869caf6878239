package wmzip

import (
	"fmt"
	"os"

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
			return nil, inputErrorf("%s: no `codes` array to train on (its `obs` are left out: drop --no-quantizer to train on them)", paths[i])
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
// states when keep > 0 and it holds more.
func readTrainingFile(path string, useObs bool, keep int) (*npz.Trajectory, error) {
	r, err := npz.OpenTrajectory(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h := r.Header()
	var tr *npz.Trajectory
	var step func(int) (int, int)
	if keep <= 0 || h.T <= keep {
		tr, err = npz.ReadTrajectory(path)
		step = stepIn(h.EpisodeStart)
	} else {
		tr, err = readTail(r, path, keep, useObs && h.HasObs)
	}
	if err == nil && useObs && tr.Obs != nil {
		err = checkFinite(tr.Obs, tr.ObsS, tr.ObsD, h.T-tr.T, path, step)
	}
	return tr, err
}

// readTail reads the last keep states of the trajectory r (a file that
// holds more) state by state (their observations with obs, else their
// codes): the states before them are decompressed and dropped a block at
// a time, so memory holds only the states kept.
func readTail(r *npz.TrajectoryReader, path string, keep int, obs bool) (*npz.Trajectory, error) {
	h := r.Header()
	tr := &npz.Trajectory{T: keep, HasActions: h.HasActions}
	n := 0
	switch {
	case obs:
		n = h.ObsS * h.ObsD
		tr.ObsS, tr.ObsD, tr.ObsDtype = h.ObsS, h.ObsD, h.ObsDtype
	case h.HasCodes:
		n = h.S * h.M
		tr.S, tr.M, tr.CodesDtype = h.S, h.M, h.CodesDtype
	default:
		return nil, fmt.Errorf("%s: no `codes` array", path)
	}
	// Blocks of about 1 MiB of values, so that the header's state count
	// sizes nothing the file has not delivered; a state itself must fit
	// the file, deflate expanding at most 1,032 times.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if int64(n) > 1032*fi.Size() {
		return nil, fmt.Errorf("%w: %s: a state of %d values in a file of %d bytes", ErrInput, path, n, fi.Size())
	}
	// Reserved up front as far as the file's size makes plausible (64
	// values per byte), so that a large tail is not grown by doubling.
	reserve := int(min(int64(keep)*int64(n), 64*fi.Size()))
	block := max(1, min(keep, (1<<20)/max(n, 1)))
	acts := make([]int64, block)
	cut := h.T - keep
	for done := 0; done < cut; {
		k, err := r.Read(acts[:min(block, cut-done)], nil, nil)
		if err != nil {
			return nil, err
		}
		done += k
	}
	var codes []uint16
	var fobs []float32
	tr.Actions = make([]int64, 0, keep)
	if obs {
		fobs = make([]float32, block*n)
		tr.Obs = make([]float32, 0, reserve)
	} else {
		codes = make([]uint16, block*n)
		tr.Codes = make([]uint16, 0, reserve)
	}
	for done := 0; done < keep; {
		k, err := r.Read(acts[:min(block, keep-done)], codes, fobs)
		if err != nil {
			return nil, err
		}
		tr.Actions = append(tr.Actions, acts[:k]...)
		if obs {
			tr.Obs = append(tr.Obs, fobs[:k*n]...)
		} else {
			tr.Codes = append(tr.Codes, codes[:k*n]...)
		}
		done += k
	}
	// The episodes that begin after the cut, and the one it cuts.
	tr.EpisodeStart = []int64{0}
	for _, s := range h.EpisodeStart {
		if s > int64(cut) {
			tr.EpisodeStart = append(tr.EpisodeStart, s-int64(cut))
		}
	}
	if err := tr.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tr, nil
}
