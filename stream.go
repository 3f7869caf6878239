package wmzip

import (
	"context"
	"fmt"
	"io"

	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/npz"
)

// Trajectory .npz files state by state: encoding from an
// npz.TrajectoryReader and decoding into an npz.TrajectoryWriter hold a
// block of states at a time, so memory does not grow with the file.

// blockBytes bounds the states held at once between a trajectory .npz and
// a codec: codes, and observations when they are quantized or
// reconstructed.
const blockBytes = 4 << 20

// blockStates returns how many states of perState bytes make a block.
func blockStates(perState int) int { return max(1, min(256, blockBytes/max(perState, 1))) }

// checkSource checks a trajectory's shape against c, as ReadTrajectory
// does, and reports whether its float obs are to be quantized (when c has
// a quantizer or the file has no codes) rather than its codes taken.
func (c *Codec) checkSource(h *npz.TrajectoryHeader, path string) (useObs bool, err error) {
	s, m := h.S, h.M
	if useObs = h.HasObs && c.q != nil || !h.HasCodes; useObs {
		if c.q == nil {
			return false, inputErrorf("%s: no `codes` array, and the model has no quantizer for its `obs` (it was trained on codes): use a model trained on such observations", path)
		}
		if err := c.checkObsShape(path, h.ObsS, h.ObsD); err != nil {
			return false, err
		}
		s, m = h.ObsS, c.q.M()
	}
	return useObs, checkShape(path, s, m, &c.m.Geom)
}

// WriteTrajectory writes every episode of src, a block of states at a
// time: its float obs quantized with the codec's quantizer when it has one
// (or when src has no codes), else its codes as they are; either way they
// must fit the codec's geometry, as for ReadTrajectory. Progress, if set,
// hears of each episode written ("encoding"). With a distortion target
// the Writer still holds every state until Close.
func (w *Writer) WriteTrajectory(src *npz.TrajectoryReader) error {
	h := src.Header()
	useObs, err := w.c.checkSource(&h, src.Path())
	if err != nil {
		return err
	}
	g := w.c.m.Geom
	n := g.N()
	per := 2 * n
	if useObs {
		per += 4 * h.ObsS * h.ObsD
	}
	b := blockStates(per)
	acts := make([]int64, b)
	codes := make([]uint16, b*n)
	var obs, rot []float32
	if useObs {
		obs = make([]float32, b*h.ObsS*h.ObsD)
		rot = make([]float32, len(obs))
	}
	po := h.ObsS * h.ObsD // floats a state
	eps := h.Episodes()
	for i, e := range eps {
		if err := w.WriteEpisode(nil); err != nil {
			return err
		}
		for t := e[0]; t < e[1]; {
			k := min(b, e[1]-t)
			if useObs {
				_, err = src.Read(acts[:k], nil, obs[:k*h.ObsS*h.ObsD])
				if err == nil {
					err = checkFinite(obs[:k*h.ObsS*h.ObsD], h.ObsS, h.ObsD, t, src.Path(), func(s int) (int, int) { return i, s - e[0] })
				}
				if err == nil {
					err = w.c.q.EncodeRotated(obs[:k*po], codes[:k*n], rot[:k*po])
				}
			} else if _, err = src.Read(acts[:k], codes[:k*n], nil); err == nil {
				err = checkCodes(src.Path(), codes[:k*n], t, &g)
			}
			if err != nil {
				return err
			}
			for s := range k {
				var r []float32
				if useObs {
					r = rot[s*po : (s+1)*po]
				}
				if err := w.writeState(acts[s], codes[s*n:(s+1)*n], r); err != nil {
					return err
				}
			}
			t += k
		}
		if p := w.cfg.progress; p != nil && w.fw != nil {
			p("encoding", i+1, len(eps))
		}
	}
	return nil
}

// EncodeTrajectory writes the trajectory src reads to w in one call, state
// by state (see Writer.WriteTrajectory), and returns the account.
func EncodeTrajectory(ctx context.Context, w io.Writer, c *Codec, src *npz.TrajectoryReader, opts ...WriterOption) (format.Account, error) {
	wr, err := NewWriter(w, c, append(opts[:len(opts):len(opts)], WithContext(ctx))...)
	if err != nil {
		return format.Account{}, err
	}
	if err := wr.WriteTrajectory(src); err != nil {
		return format.Account{}, err
	}
	if err := wr.Close(); err != nil {
		return format.Account{}, err
	}
	return wr.Account(), nil
}

// NPZOptions choose what File.WriteNPZ decodes and writes. Episode ≥ 0
// decodes that episode only and Step ≥ 0 that state of it only, or with
// To > Step its steps Step to To−1; -1 for each decodes every state (the
// zero value is state 0 of episode 0).
type NPZOptions struct {
	Episode, Step int
	To            int                   // with Step ≥ 0: the end of a range of steps (≤ Step: Step alone)
	CodesOnly     bool                  // leave out obs, the quantizer's reconstruction
	Progress      func(done, total int) // states decoded so far
	NPZ           []npz.Option          // WithDeflate
}

// NPZHeader returns the header of the trajectory .npz that WriteNPZ writes
// with o, from the index, without decoding: codes [T,S,M] as uint8 or
// uint16, obs [T,S,d] float32 when the codec has a quantizer (unless
// CodesOnly), actions, the starts of the episodes that have states (an
// .npz cannot hold an empty one), and for every state of a file with
// retention levels its level ("levels", uint8).
func (f *File) NPZHeader(o NPZOptions) (npz.TrajectoryHeader, error) {
	g := f.c.m.Geom
	h := npz.TrajectoryHeader{HasCodes: true, S: g.S, M: g.M, CodesDtype: codesDtype(g.K), HasActions: true}
	switch e := o.Episode; {
	case e < 0:
		for e := range f.Episodes() {
			if n := f.EpisodeLen(e); n > 0 {
				h.EpisodeStart = append(h.EpisodeStart, int64(h.T))
				h.T += n
			}
		}
		if len(f.f.Header().Levels) > 0 {
			h.Extra = []string{"levels"}
		}
	case e >= f.Episodes():
		return h, inputErrorf("the file has %d episodes (0 to %d), not episode %d", f.Episodes(), f.Episodes()-1, e)
	case o.Step >= f.EpisodeLen(e) || o.To > f.EpisodeLen(e):
		return h, inputErrorf("episode %d has steps 0 to %d, not %s", e, f.EpisodeLen(e)-1, o.steps())
	case o.Step >= 0:
		h.T = max(o.To-o.Step, 1)
	default:
		h.T = f.EpisodeLen(e)
	}
	if o.Episode >= 0 && h.T > 0 {
		h.EpisodeStart = []int64{0}
	}
	if f.c.q != nil && !o.CodesOnly {
		h.HasObs, h.ObsS, h.ObsD, h.ObsDtype = true, g.S, f.c.q.Dim(), "float32"
	}
	return h, nil
}

// WriteNPZ decodes the states o selects into a trajectory .npz at path
// (see NPZHeader), a block at a time, and writes it atomically: on error
// nothing is left at path. Whole files are read in order, with their
// levels; an episode through the index. Both decode ahead on the threads
// and tell the access log of every state, as the File's options say.
func (f *File) WriteNPZ(path string, o NPZOptions) error {
	h, err := f.NPZHeader(o)
	if err != nil {
		return err
	}
	tw, err := npz.CreateTrajectory(path, &h, o.NPZ...)
	if err != nil {
		return err
	}
	defer tw.Abort()
	b := &npzBlock{tw: tw, c: f.c, obs: h.HasObs, levels: len(h.Extra) > 0, total: h.T, prog: o.Progress}
	switch {
	case o.Episode < 0:
		err = f.decodeAll(b)
	case o.Step >= 0:
		err = f.writeSteps(b, o.Episode, o.Step, o.Step+h.T)
	default:
		err = f.f.DecodeEpisodeChunks(o.Episode, func(a []int64, codes []uint16) error { return b.write(a, codes, nil) })
	}
	if err != nil {
		return err
	}
	return tw.Close()
}

// steps names the step or steps o selects, for messages.
func (o NPZOptions) steps() string {
	if o.To > o.Step+1 {
		return fmt.Sprintf("steps %d to %d", o.Step, o.To-1)
	}
	return fmt.Sprintf("step %d", o.Step)
}

// writeSteps decodes steps [from, to) of episode e, a block at a time:
// each from its chunk's keyframe the first time, the chunk cache then
// going on where the last read stopped.
func (f *File) writeSteps(b *npzBlock, e, from, to int) error {
	n := f.c.m.Geom.N()
	k := blockStates(2*n + 4*f.c.Dim()*f.c.m.Geom.S)
	acts, codes := make([]int64, 0, k), make([]uint16, 0, k*n)
	var buf []uint16
	for t := from; t < to; t++ {
		a, c, err := f.f.ReadState(e, t, buf)
		if err != nil {
			return err
		}
		buf = c
		acts, codes = append(acts, a), append(codes, c...)
		if len(acts) == k || t == to-1 {
			if err := b.write(acts, codes, nil); err != nil {
				return err
			}
			acts, codes = acts[:0], codes[:0]
		}
	}
	return nil
}

// decodeAll decodes the whole file in order, with each state's level.
func (f *File) decodeAll(b *npzBlock) error {
	r, err := NewReader(io.NewSectionReader(f.r, 0, f.size), f.c, f.opts...)
	if err != nil {
		return err
	}
	n := f.c.m.Geom.N()
	k := blockStates(2*n + 4*f.c.Dim()*f.c.m.Geom.S)
	acts, codes, levels := make([]int64, 0, k), make([]uint16, 0, k*n), make([]uint8, 0, k)
	var buf []uint16
	for {
		if _, err := r.NextEpisode(); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		for {
			a, c, err := r.ReadState(buf)
			if err == io.EOF {
				break
			} else if err != nil {
				return err
			}
			buf = c
			acts, codes, levels = append(acts, a), append(codes, c...), append(levels, uint8(r.Level()))
			if len(acts) == k {
				if err := b.write(acts, codes, levels); err != nil {
					return err
				}
				acts, codes, levels = acts[:0], codes[:0], levels[:0]
			}
		}
	}
	if _, ok := r.r.Info(); !ok {
		return fmt.Errorf("%w: stream ended before its index", ErrCorrupt)
	}
	return b.write(acts, codes, levels)
}

// npzBlock writes decoded states to a trajectory .npz, with their
// reconstruction when it has obs.
type npzBlock struct {
	tw          *npz.TrajectoryWriter
	c           *Codec
	obs, levels bool
	recon       []float32
	done, total int
	prog        func(done, total int)
}

func (b *npzBlock) write(acts []int64, codes []uint16, levels []uint8) error {
	if len(acts) == 0 {
		return nil
	}
	if b.done+len(acts) > b.total {
		return fmt.Errorf("%w: the file holds more states than its index", ErrCorrupt)
	}
	var obs []float32
	if b.obs {
		var err error
		if b.recon, err = b.c.Reconstruct(b.recon[:0], codes); err != nil {
			return err
		}
		obs = b.recon
	}
	var extra [][]uint8
	if b.levels {
		extra = [][]uint8{levels}
	}
	if err := b.tw.Write(acts, codes, obs, extra...); err != nil {
		return err
	}
	b.done += len(acts)
	if b.prog != nil {
		b.prog(b.done, b.total)
	}
	return nil
}
