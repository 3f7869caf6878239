package graphworld

import "github.com/wmzip/wmzip/npz"

// Trajectory lays the generated walk out as a trajectory .npz: codes,
// actions, episode starts, observations when generated, and the entropy
// rate and its standard error as extra arrays.
func (r *Result) Trajectory() *npz.Trajectory {
	tr := &npz.Trajectory{
		T: len(r.Actions), Codes: r.Codes, S: r.S, M: r.M, CodesDtype: "uint16",
		Actions: r.Actions, HasActions: true, EpisodeStart: r.EpisodeStart,
		Extra: []npz.Array{{Name: "entropy_bits_per_state", Dtype: "float64", Shape: []int{}, Data: []float64{r.EntropyBitsPerState}},
			{Name: "entropy_stderr", Dtype: "float64", Shape: []int{}, Data: []float64{r.EntropyStdErr}}},
	}
	if r.K <= 256 {
		tr.CodesDtype = "uint8"
	}
	if r.Obs != nil {
		tr.Obs, tr.ObsS, tr.ObsD = r.Obs, r.S, r.ObsDim
	}
	return tr
}

// Span returns the states [start, end) of episode i of the walk.
func (r *Result) Span(i int) (start, end int64) {
	start, end = r.EpisodeStart[i], int64(len(r.Actions))
	if i+1 < len(r.EpisodeStart) {
		end = r.EpisodeStart[i+1]
	}
	return start, end
}
