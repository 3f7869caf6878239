package train

import (
	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/npz"
)

// ReadEpisodes reads a trajectory .npz file (package npz) as the episodes
// a wmzip.Writer writes and Codec learns from: float observations when
// the file has `obs`, else its codes.
func ReadEpisodes(path string) ([]wmzip.Episode, error) {
	tr, err := npz.ReadTrajectory(path)
	if err != nil {
		return nil, err
	}
	return SplitTrajectory(tr, true), nil
}

// SplitTrajectory returns a trajectory's episodes: as float observations
// when useObs is set and it has them, else as codes. They share the
// trajectory's arrays.
func SplitTrajectory(t *npz.Trajectory, useObs bool) []wmzip.Episode {
	var out []wmzip.Episode
	for _, e := range t.Episodes() {
		ep := wmzip.Episode{Actions: t.Actions[e[0]:e[1]]}
		if useObs && t.Obs != nil {
			d := t.ObsS * t.ObsD
			ep.Obs, ep.Slots = t.Obs[e[0]*d:e[1]*d], t.ObsS
		} else {
			n := t.S * t.M
			ep.Codes, ep.Slots = t.Codes[e[0]*n:e[1]*n], t.S
		}
		out = append(out, ep)
	}
	return out
}
