package wmzip

import (
	"errors"
	"fmt"
	"io"

	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/wm"
)

// The trajectory .npz (DESIGN.md, "Contracts") in and out of a codec.

// ReadTrajectory reads a trajectory .npz for codec c: float obs are
// quantized with c's quantizer when it has one (or when the file has no
// codes), else the file's codes are taken as they are; either way they
// must fit c's geometry.
func ReadTrajectory(path string, c *Codec) (*npz.Trajectory, error) {
	tr, err := npz.ReadTrajectory(path)
	if err != nil {
		return nil, err
	}
	if tr.Obs != nil && c.q != nil || tr.Codes == nil {
		if c.q == nil {
			return nil, inputErrorf("%s: no `codes` array, and the model has no quantizer for its `obs` (it was trained on codes): use a model trained on such observations", path)
		}
		if err := c.checkObsShape(path, tr.ObsS, tr.ObsD); err != nil {
			return nil, err
		}
		if err := c.QuantizeTrajectory(tr); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return tr, CheckCodes(path, tr, &c.m.Geom)
}

// CheckCodes checks that a trajectory's codes fit geometry g, read as
// [T,S,M] or as [T,N]; it sets tr.S and tr.M to g's. path names the
// trajectory in errors.
func CheckCodes(path string, tr *npz.Trajectory, g *wm.Geometry) error {
	if err := checkShape(path, tr.S, tr.M, g); err != nil {
		return err
	}
	tr.S, tr.M = g.S, g.M
	return checkCodes(path, tr.Codes, 0, g)
}

// checkShape checks that codes of shape [T,s,m] fit geometry g.
func checkShape(path string, s, m int, g *wm.Geometry) error {
	// The same N in another shape would silently mean other slots and
	// subspaces.
	if (s != g.S || m != g.M) && (s != 1 || m != g.N()) {
		return inputErrorf("%s: codes have shape [T,%d,%d], the model expects [T,%d,%d] or [T,%d]: use a model trained on codes of this shape", path, s, m, g.S, g.M, g.N())
	}
	return nil
}

// checkCodes checks that codes, whole states from state first on, are
// below K.
func checkCodes(path string, codes []uint16, first int, g *wm.Geometry) error {
	for i, v := range codes {
		if int(v) >= g.K {
			return inputErrorf("%s: code %d at state %d, slot %d, subspace %d is >= K=%d, the model's alphabet: use a model trained on codes of this range", path, v, first+i/g.N(), i%g.N()/g.M, i%g.M, g.K)
		}
	}
	return nil
}

// QuantizeTrajectory sets tr.Codes from tr.Obs: each slot vector becomes
// M codes, so a [T,S,d] trajectory gets codes [T,S,M].
func (c *Codec) QuantizeTrajectory(tr *npz.Trajectory) error {
	q := c.q
	if q == nil {
		return ErrNoQuantizer
	}
	if tr.Obs == nil {
		return errors.New("no `obs` array to quantize")
	}
	if tr.ObsD != q.Dim() {
		return inputErrorf("obs has %d values per slot vector, the model's quantizer takes %d: use a model trained on observations of this shape", tr.ObsD, q.Dim())
	}
	if err := checkFinite(tr.Obs, tr.ObsS, tr.ObsD, 0, "", stepIn(tr.EpisodeStart)); err != nil {
		return err
	}
	codes := make([]uint16, tr.T*tr.ObsS*q.M())
	if err := q.Encode(tr.Obs, codes); err != nil {
		return err
	}
	tr.Codes, tr.S, tr.M = codes, tr.ObsS, q.M()
	tr.CodesDtype = codesDtype(q.K())
	return nil
}

// ReconstructTrajectory sets tr.Obs to the quantizer's reconstruction of
// tr.Codes.
func (c *Codec) ReconstructTrajectory(tr *npz.Trajectory) error {
	q := c.q
	if q == nil {
		return ErrNoQuantizer
	}
	if tr.M != q.M() {
		return fmt.Errorf("codes have %d subspaces, the quantizer %d", tr.M, q.M())
	}
	obs := make([]float32, tr.T*tr.S*q.Dim())
	if err := q.Decode(tr.Codes, obs); err != nil {
		return err
	}
	tr.Obs, tr.ObsS, tr.ObsD, tr.ObsDtype = obs, tr.S, q.Dim(), "float32"
	return nil
}

// TrajectoryEpisodes splits a trajectory into episodes: as float
// observations when useObs is set and it has them, else as codes.
func TrajectoryEpisodes(tr *npz.Trajectory, useObs bool) []Episode {
	var out []Episode
	for _, e := range tr.Episodes() {
		ep := Episode{Actions: tr.Actions[e[0]:e[1]]}
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

func codesDtype(k int) string {
	if k <= 256 {
		return "uint8"
	}
	return "uint16"
}

// Trajectory decodes every episode of f into a trajectory. Episodes
// without states are left out, as a trajectory .npz cannot hold them: eps
// gives the file's episode of each episode of tr. prog, if not nil, is
// told of each episode done.
func (f *File) Trajectory(prog func(done, total int)) (tr *npz.Trajectory, eps []int, err error) {
	h := f.f.Header()
	tr = &npz.Trajectory{S: h.Geom.S, M: h.Geom.M, HasActions: true, CodesDtype: codesDtype(h.Geom.K)}
	for e := range f.f.Episodes() {
		acts, codes, err := f.f.DecodeEpisode(e)
		if err != nil {
			return nil, nil, err
		}
		if len(acts) > 0 {
			tr.EpisodeStart = append(tr.EpisodeStart, int64(len(tr.Actions)))
			tr.Actions = append(tr.Actions, acts...)
			tr.Codes = append(tr.Codes, codes...)
			eps = append(eps, e)
		}
		if prog != nil {
			prog(e+1, f.f.Episodes())
		}
	}
	tr.T = len(tr.Actions)
	return tr, eps, nil
}

// Trajectory decodes every state of the stream in order into a
// trajectory, with each state's retention level. access, if not nil, is
// told of every state returned. The stream must end with its index.
func (r *Reader) Trajectory(access func(e, t int64)) (*npz.Trajectory, []uint8, error) {
	h := r.r.Header()
	tr := &npz.Trajectory{S: h.Geom.S, M: h.Geom.M, HasActions: true, CodesDtype: codesDtype(h.Geom.K)}
	var levels []uint8
	var buf []uint16
	for e := int64(0); ; e++ {
		if _, err := r.r.NextEpisode(); err == io.EOF {
			break
		} else if err != nil {
			return nil, nil, err
		}
		start := int64(len(tr.Actions))
		for t := int64(0); ; t++ {
			a, c, err := r.r.ReadState(buf)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, nil, err
			}
			buf = c
			tr.Actions = append(tr.Actions, a)
			tr.Codes = append(tr.Codes, c...)
			levels = append(levels, uint8(r.r.Level()))
			if access != nil {
				access(e, t)
			}
		}
		if int64(len(tr.Actions)) > start { // an .npz cannot hold an empty episode
			tr.EpisodeStart = append(tr.EpisodeStart, start)
		}
	}
	if _, ok := r.r.Info(); !ok {
		return nil, nil, fmt.Errorf("%w: stream ended before its index", ErrCorrupt)
	}
	tr.T = len(tr.Actions)
	return tr, levels, nil
}

// EpisodeTrajectory decodes episode e through the index, or only its
// state step when step ≥ 0, as a trajectory of one episode.
func (f *File) EpisodeTrajectory(e, step int) (*npz.Trajectory, error) {
	h := f.f.Header()
	tr := &npz.Trajectory{S: h.Geom.S, M: h.Geom.M, HasActions: true, CodesDtype: codesDtype(h.Geom.K), EpisodeStart: []int64{0}}
	var err error
	if step >= 0 {
		var a int64
		a, tr.Codes, err = f.f.StateAction(e, step)
		tr.Actions = []int64{a}
	} else {
		tr.Actions, tr.Codes, err = f.f.DecodeEpisode(e)
	}
	if err != nil {
		return nil, err
	}
	tr.T = len(tr.Actions)
	return tr, nil
}
