// Package traj moves trajectory .npz files (package npz) in and out of wmzip: their episodes for training or
// writing, a file's states decoded back into one. Writing from a
// npz.TrajectoryReader and decoding into a npz.TrajectoryWriter hold a
// block of states at a time, so memory does not grow with the file.
package traj

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/check"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/train"
)

// blockBytes bounds the states held at once between a trajectory .npz and
// a codec: codes, and observations when they are quantized or
// reconstructed.
const blockBytes = 4 << 20

// blockStates returns how many states of perState bytes make a block.
func blockStates(perState int) int { return max(1, min(256, blockBytes/max(perState, 1))) }

// codesDtype is the dtype of codes below k.
func codesDtype(k int) string {
	if k <= 256 {
		return "uint8"
	}
	return "uint16"
}

// dim returns the dimension of c's slot vectors, 0 without a quantizer.
func dim(c *wmzip.Codec) int {
	if q := c.Quantizer(); q != nil {
		return q.Dim()
	}
	return 0
}

// ReadCodes reads a trajectory .npz for codec c: float obs are quantized
// with c's quantizer when it has one (or when the file has no codes),
// else the file's codes are taken as they are; either way they must fit
// c's geometry.
func ReadCodes(path string, c *wmzip.Codec) (*npz.Trajectory, error) {
	tr, err := npz.ReadTrajectory(path)
	if err != nil {
		return nil, err
	}
	q := c.Quantizer()
	if tr.Obs != nil && q != nil || tr.Codes == nil {
		if q == nil {
			return nil, check.Errorf("%s: no `codes` array, and the model has no quantizer for its `obs` (it was trained on codes): use a model trained on such observations", path)
		}
		if err := check.ObsShape(path, tr.ObsS, tr.ObsD, c.Slots(), q.Dim()); err != nil {
			return nil, err
		}
		if err := Quantize(tr, c); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	g := c.Geometry()
	return tr, CheckCodes(path, tr, &g)
}

// CheckCodes checks that a trajectory's codes fit geometry g, read as
// [T,S,M] or as [T,N]; it sets tr.S and tr.M to g's. path names the
// trajectory in errors.
func CheckCodes(path string, tr *npz.Trajectory, g *wm.Geometry) error {
	if err := check.Shape(path, tr.S, tr.M, g); err != nil {
		return err
	}
	tr.S, tr.M = g.S, g.M
	return check.Codes(path, tr.Codes, 0, g)
}

// Quantize sets tr.Codes from tr.Obs with c's quantizer: each slot vector
// becomes M codes, so a [T,S,d] trajectory gets codes [T,S,M].
func Quantize(tr *npz.Trajectory, c *wmzip.Codec) error {
	q := c.Quantizer()
	if q == nil {
		return check.Errorf("the codec has no quantizer for float observations (it was trained on codes)")
	}
	if tr.Obs == nil {
		return errors.New("no `obs` array to quantize")
	}
	if tr.ObsD != q.Dim() {
		return check.Errorf("obs has %d values per slot vector, the model's quantizer takes %d: use a model trained on observations of this shape", tr.ObsD, q.Dim())
	}
	if err := check.Finite(tr.Obs, tr.ObsS, tr.ObsD, 0, "", check.StepIn(tr.EpisodeStart)); err != nil {
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

// checkSource checks a trajectory's shape against c, as ReadCodes does,
// and reports whether its float obs are to be quantized (when c has a
// quantizer or the file has no codes) rather than its codes taken.
func checkSource(c *wmzip.Codec, h *npz.TrajectoryHeader, path string) (useObs bool, err error) {
	s, m := h.S, h.M
	q, g := c.Quantizer(), c.Geometry()
	if useObs = h.HasObs && q != nil || !h.HasCodes; useObs {
		if q == nil {
			return false, check.Errorf("%s: no `codes` array, and the model has no quantizer for its `obs` (it was trained on codes): use a model trained on such observations", path)
		}
		if err := check.ObsShape(path, h.ObsS, h.ObsD, g.S, q.Dim()); err != nil {
			return false, err
		}
		s, m = h.ObsS, q.M()
	}
	return useObs, check.Shape(path, s, m, &g)
}

// Write writes every episode of src to w, a writer of codec c, a block of
// states at a time: its float obs quantized when c has a quantizer (or
// when src has no codes), else its codes as they are; either way they must
// fit c's geometry, as for ReadCodes. progress, if not nil, is told of
// each episode written. With a distortion target the Writer still holds
// every state until Close.
func Write(w *wmzip.Writer, c *wmzip.Codec, src *npz.TrajectoryReader, progress func(done, total int)) error {
	h := src.Header()
	useObs, err := checkSource(c, &h, src.Path())
	if err != nil {
		return err
	}
	g := c.Model().Geom
	n := g.N()
	per := 2 * n
	if useObs {
		per += 4 * h.ObsS * h.ObsD
	}
	b := blockStates(per)
	acts := make([]int64, b)
	codes := make([]uint16, b*n)
	po := h.ObsS * h.ObsD // floats a state
	var obs []float32
	if useObs {
		obs = make([]float32, b*po)
	}
	eps := h.Episodes()
	for i, e := range eps {
		if err := w.WriteEpisode(nil); err != nil {
			return err
		}
		for t := e[0]; t < e[1]; {
			k := min(b, e[1]-t)
			if useObs {
				_, err = src.Read(acts[:k], nil, obs[:k*po])
				if err == nil {
					err = check.Finite(obs[:k*po], h.ObsS, h.ObsD, t, src.Path(), func(s int) (int, int) { return i, s - e[0] })
				}
			} else if _, err = src.Read(acts[:k], codes[:k*n], nil); err == nil {
				err = check.Codes(src.Path(), codes[:k*n], t, &g)
			}
			if err != nil {
				return err
			}
			for s := range k {
				if useObs {
					err = w.WriteObs(acts[s], obs[s*po:(s+1)*po])
				} else {
					err = w.WriteCodes(acts[s], codes[s*n:(s+1)*n])
				}
				if err != nil {
					return err
				}
			}
			t += k
		}
		if progress != nil {
			progress(i+1, len(eps))
		}
	}
	return nil
}

// ReadTraining reads the episodes of trajectory .npz files to train a
// codec on: as float observations when useObs is set and a file has them,
// else as codes. With maxStates > 0 (0: all) it keeps what train.Codec
// learns from under train.WithMaxStates(maxStates): the last maxStates
// states of the files in their order. Files wholly before them are not
// read, and of a file of codes that holds more, only the states kept are
// widened to uint16: a file of a million states then costs its codes as
// stored, not three times that.
func ReadTraining(paths []string, useObs bool, maxStates int) ([]wmzip.Episode, error) {
	if maxStates < 0 {
		return nil, fmt.Errorf("%w: max states %d is negative", wmzip.ErrInput, maxStates)
	}
	var parts [][]wmzip.Episode
	left := maxStates
	for i := len(paths) - 1; i >= 0 && (maxStates <= 0 || left > 0); i-- {
		tr, err := readTrainingFile(paths[i], useObs, left)
		if err != nil {
			return nil, err
		}
		if tr.Codes == nil && (tr.Obs == nil || !useObs) {
			return nil, check.Errorf("%s: no `codes` array to train on (its `obs` are left out: drop --no-quantizer to train on them)", paths[i])
		}
		parts = append(parts, train.SplitTrajectory(tr, useObs))
		left -= tr.T
	}
	var eps []wmzip.Episode
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
		step = check.StepIn(h.EpisodeStart)
	} else {
		tr, err = readTail(r, path, keep, useObs && h.HasObs)
	}
	if err == nil && useObs && tr.Obs != nil {
		err = check.Finite(tr.Obs, tr.ObsS, tr.ObsD, h.T-tr.T, path, step)
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
		return nil, fmt.Errorf("%w: %s: a state of %d values in a file of %d bytes", wmzip.ErrInput, path, n, fi.Size())
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

// Decode decodes every episode of f into a trajectory of codes. Episodes
// without states are left out, as a trajectory .npz cannot hold them: eps
// gives the file's episode of each episode of tr. progress, if not nil,
// is told of each episode done.
func Decode(f *wmzip.File, progress func(done, total int)) (tr *npz.Trajectory, eps []int, err error) {
	h := f.Header()
	ug := f.Codec().Geometry()
	tr = &npz.Trajectory{S: ug.S, M: ug.M, HasActions: true, CodesDtype: codesDtype(h.Geom.K)}
	n := len(f.Episodes())
	for e := range n {
		start := int64(len(tr.Actions))
		err := f.EpisodeChunks(e, func(acts []int64, codes []uint16) error {
			tr.Actions = append(tr.Actions, acts...)
			tr.Codes = append(tr.Codes, codes...)
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		if int64(len(tr.Actions)) > start {
			tr.EpisodeStart = append(tr.EpisodeStart, start)
			eps = append(eps, e)
		}
		if progress != nil {
			progress(e+1, n)
		}
	}
	tr.T = len(tr.Actions)
	return tr, eps, nil
}

// DecodeOptions choose what WriteDecoded decodes and writes.
type DecodeOptions struct {
	// Episode ≥ 0 decodes that episode only, -1 every state of the file.
	Episode int
	// Step ≥ 0 decodes that state of the episode only, or with To > Step
	// its steps Step to To−1; -1 every state of the episode.
	Step, To  int
	CodesOnly bool                  // leave out obs, the quantizer's reconstruction
	Progress  func(done, total int) // states decoded so far
	Options   []npz.Option          // WithDeflate
}

// steps names the step or steps o selects, for messages.
func (o DecodeOptions) steps() string {
	if o.To > o.Step+1 {
		return fmt.Sprintf("steps %d to %d", o.Step, o.To-1)
	}
	return fmt.Sprintf("step %d", o.Step)
}

// DecodeHeader returns the header of the trajectory .npz that WriteDecoded
// writes of f with o, from the index, without decoding: codes [T,S,M] as
// uint8 or uint16, obs [T,S,d] float32 when the codec has a quantizer
// (unless CodesOnly), actions, the starts of the episodes that have
// states (an .npz cannot hold an empty one), and for every state of a
// whole file with retention levels its level ("levels", uint8).
func DecodeHeader(f *wmzip.File, o DecodeOptions) (npz.TrajectoryHeader, error) {
	c := f.Codec()
	g := c.Geometry()
	lens := f.Episodes()
	h := npz.TrajectoryHeader{HasCodes: true, S: g.S, M: g.M, CodesDtype: codesDtype(g.K), HasActions: true}
	switch e := o.Episode; {
	case e < 0:
		for _, n := range lens {
			if n > 0 {
				h.EpisodeStart = append(h.EpisodeStart, int64(h.T))
				h.T += n
			}
		}
		if len(f.Info().Levels) > 0 {
			h.Extra = []string{"levels"}
		}
	case e >= len(lens):
		return h, check.Errorf("the file has %d episodes (0 to %d), not episode %d", len(lens), len(lens)-1, e)
	case o.Step >= lens[e] || o.To > lens[e]:
		return h, check.Errorf("episode %d has steps 0 to %d, not %s", e, lens[e]-1, o.steps())
	case o.Step >= 0:
		h.T = max(o.To-o.Step, 1)
	default:
		h.T = lens[e]
	}
	if o.Episode >= 0 && h.T > 0 {
		h.EpisodeStart = []int64{0}
	}
	if c.Quantizer() != nil && !o.CodesOnly {
		h.HasObs, h.ObsS, h.ObsD, h.ObsDtype = true, g.S, dim(c), "float32"
	}
	return h, nil
}

// WriteDecoded decodes the states of f that o selects into a trajectory
// .npz at path (see DecodeHeader), a block at a time, and writes it
// atomically: on error nothing is left at path. A whole file is read in
// order, with its levels; an episode through the index. Both decode ahead
// on the threads and tell the access log of every state, as f's options
// say.
func WriteDecoded(path string, f *wmzip.File, o DecodeOptions) error {
	h, err := DecodeHeader(f, o)
	if err != nil {
		return err
	}
	tw, err := npz.CreateTrajectory(path, &h, o.Options...)
	if err != nil {
		return err
	}
	defer tw.Abort()
	b := &decodeBlock{tw: tw, c: f.Codec(), obs: h.HasObs, levels: len(h.Extra) > 0, total: h.T, prog: o.Progress}
	switch {
	case o.Episode < 0:
		err = decodeAll(f, b)
	case o.Step >= 0:
		err = decodeSteps(f, b, o.Episode, o.Step, o.Step+h.T)
	default:
		err = f.EpisodeChunks(o.Episode, func(a []int64, codes []uint16) error { return b.write(a, codes, nil) })
	}
	if err != nil {
		return err
	}
	return tw.Close()
}

// decodeSteps decodes steps [from, to) of episode e, a block at a time:
// each from its chunk's keyframe the first time, the chunk cache then
// going on where the last read stopped.
func decodeSteps(f *wmzip.File, b *decodeBlock, e, from, to int) error {
	g := b.c.Geometry()
	n := g.N()
	k := blockStates(2*n + 4*dim(b.c)*g.S)
	acts, codes := make([]int64, 0, k), make([]uint16, 0, k*n)
	var buf []uint16
	for t := from; t < to; t++ {
		a, c, err := f.State(e, t, buf)
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
func decodeAll(f *wmzip.File, b *decodeBlock) error {
	r, err := f.Reader()
	if err != nil {
		return err
	}
	g := b.c.Geometry()
	n := g.N()
	k := blockStates(2*n + 4*dim(b.c)*g.S)
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
	if b.done+len(acts) != b.total {
		return fmt.Errorf("%w: the file holds %d states, its index %d", format.ErrCorrupt, b.done+len(acts), b.total)
	}
	return b.write(acts, codes, levels)
}

// decodeBlock writes decoded states to a trajectory .npz, with their
// reconstruction when it has obs.
type decodeBlock struct {
	tw          *npz.TrajectoryWriter
	c           *wmzip.Codec
	obs, levels bool
	recon       []float32
	done, total int
	prog        func(done, total int)
}

func (b *decodeBlock) write(acts []int64, codes []uint16, levels []uint8) error {
	if len(acts) == 0 {
		return nil
	}
	if b.done+len(acts) > b.total {
		return fmt.Errorf("%w: the file holds more states than its index", format.ErrCorrupt)
	}
	var obs []float32
	if b.obs {
		var err error
		if b.recon, err = b.c.Reconstruct(b.recon, codes); err != nil {
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
