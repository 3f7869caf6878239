package traj

import (
	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/npz"
)

// FromWalk lays a generated walk out as a trajectory .npz: codes,
// actions, episode starts, observations when generated, and the entropy
// rate and its standard error as extra arrays.
func FromWalk(r *graphworld.Result) *npz.Trajectory {
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
