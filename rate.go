package wmzip

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/rdcode"
)

// Coding by rate and distortion. A codec without a retention gate codes
// its lossy files by choosing, state by state, the values that cost the
// least distortion + bits/λ under the world model (format.SlotCosts): the
// decoder is the lossless one. A codec of several members (a bundle, one
// quantizer and world model each, coarse to fine) writes each file with
// one of them: the member, and λ, that give the fewest bits at the
// distortion asked for.

// rdSearch returns the smallest file coded by rate and distortion whose
// mean distortion against the references is at most target, aiming at
// [0.9·target, target]: over the members whose quantizer alone is within
// target, it searches λ for the two the calibration predicts cheapest.
// A file of many states is searched on a sample of its chunks, then coded
// whole at the λ found, which is corrected once or twice if the whole
// lands outside. It fails only when even the finest member's quantizer
// loses more than target.
func (c *Codec) rdSearch(eps [][]rdcode.State, target float64, opts []format.Option, progress func(int)) (*rdcode.Pass, error) {
	passes := 0
	pass := func() {
		passes++
		if progress != nil {
			progress(passes)
		}
	}
	sample := sampleStates(eps, rdSampleStates, rdSampleRun)
	var best *rdcode.Pass
	var bestMem *Codec
	tried := 0
	for _, mem := range rankMembers(c.Members(), target) {
		if tried == 2 {
			break
		}
		if !c.writes(mem) {
			continue
		}
		p, err := rdcode.Encode(mem.q, mem.m, sample, 0, opts)
		if err != nil {
			return nil, err
		}
		pass()
		if p.Dist > target {
			continue // this member's quantizer alone loses too much
		}
		tried++
		if p, _, err = rdcode.Search(mem.q, mem.m, mem.curve, sample, target, p, opts, pass); err != nil {
			return nil, err
		}
		if best == nil || len(p.File)*best.States < len(best.File)*p.States {
			best, bestMem = p, mem
		}
	}
	// No file is larger than the lossless one (the finest member's own
	// codes), which meets any target it can.
	lossless, err := rdcode.Encode(c.q, c.m, sample, 0, opts)
	if err != nil {
		return nil, err
	}
	pass()
	if best == nil && lossless.Dist > target {
		return nil, fmt.Errorf("%w: target distortion %.4g is below %.4g, what the finest quantizer alone loses on these observations", ErrInput, target, lossless.Dist)
	}
	if best == nil || len(lossless.File)*best.States <= len(best.File)*lossless.States {
		best, bestMem = lossless, c
	}
	if len(sample) == len(eps) && &sample[0] == &eps[0] {
		return best, nil
	}
	if best.Lam == 0 {
		return rdcode.Encode(bestMem.q, bestMem.m, eps, 0, opts)
	}
	// The whole file at the sample's λ, corrected toward the target.
	lam := best.Lam
	var whole *rdcode.Pass
	for range 4 {
		p, err := rdcode.Encode(bestMem.q, bestMem.m, eps, lam, opts)
		if err != nil {
			return nil, err
		}
		pass()
		if p.Dist <= target && (whole == nil || len(p.File) < len(whole.File)) {
			whole = p
		}
		switch {
		case p.Dist > target && lam > 0:
			lam = lam * 4 / 5
		case p.Dist < 0.9*target && lam > 0:
			lam = lam * 6 / 5
		default:
			if whole != nil {
				return whole, nil
			}
			lam = 0
		}
	}
	if whole == nil {
		return rdcode.Encode(bestMem.q, bestMem.m, eps, 0, opts)
	}
	return whole, nil
}

// A file of more than twice rdSampleStates states is searched on about
// rdSampleStates of them: runs of rdSampleRun states (a chunk at the
// default keyframe interval) spread evenly over its episodes.
var (
	rdSampleStates = 4096
	rdSampleRun    = 128
)

// sampleStates returns about n states of eps in runs of run states from
// episode starts, spread evenly, as episodes of their own; eps itself
// when it holds at most 2n.
func sampleStates(eps [][]rdcode.State, n, run int) [][]rdcode.State {
	total := 0
	for _, e := range eps {
		total += len(e)
	}
	if total <= 2*n {
		return eps
	}
	var runs [][]rdcode.State
	for _, e := range eps {
		for i := 0; i < len(e); i += run {
			runs = append(runs, e[i:min(i+run, len(e))])
		}
	}
	want := max(1, n/run)
	var out [][]rdcode.State
	for k := range want {
		out = append(out, runs[k*len(runs)/want])
	}
	return out
}

// rankMembers orders members by the bits their calibration predicts at
// distortion d, fewest first; members whose calibration does not reach d
// come last, finest first.
func rankMembers(mems []*Codec, d float64) []*Codec {
	type ranked struct {
		c    *Codec
		bits float64
		i    int
	}
	rs := make([]ranked, len(mems))
	for i, m := range mems {
		rs[i] = ranked{m, m.curve.BitsAt(d), i}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		switch {
		case a.bits < b.bits:
			return -1
		case a.bits > b.bits:
			return 1
		}
		return b.i - a.i // unknown: finer first
	})
	out := make([]*Codec, len(rs))
	for i, r := range rs {
		out[i] = r.c
	}
	return out
}

// writeRD writes pass p's file to w.
func writeRD(w io.Writer, p *rdcode.Pass) error {
	_, err := w.Write(p.File)
	return err
}

// rdMode is a Writer's coding by rate and distortion.
type rdMode struct {
	mem    *Codec   // the member written with (streaming)
	lams   []uint64 // streaming: the coder's λ of each level (one without levels)
	level  int
	fw     *format.Writer
	src    *source // streaming: the member's source account
	target float64 // a distortion target, < 0: none
	source bool    // the target is against the source floats
	held   [][]rdcode.State
	res    *rdcode.Pass
	passes int // encodes of the file the search made
}

// useRD makes w code by rate and distortion: its codec has a quantizer
// and no gate, and a lossy mode was asked for.
func (w *Writer) useRD() error {
	cfg := &w.cfg
	r := &rdMode{target: -1}
	switch {
	case cfg.distortion >= 0:
		r.target = cfg.distortion
	case cfg.sourceDistortion >= 0:
		r.target, r.source = cfg.sourceDistortion, true
	case cfg.levels != nil:
		for _, l := range cfg.levels {
			r.lams = append(r.lams, rdcode.Lambda(l.Float()))
		}
	default:
		r.lams = []uint64{rdcode.Lambda(cfg.lambda.Float())}
	}
	if r.lams != nil {
		r.mem = w.c.memberFor(slices.Max(r.lams))
	}
	w.rd = r
	return nil
}

// memberFor returns the member whose calibration gives the least bits +
// distortion/λ at the coder's λ lam (0: the finest).
func (c *Codec) memberFor(lam uint64) *Codec {
	ms := c.Members()
	best, bestJ := ms[len(ms)-1], math.Inf(1)
	if lam == 0 {
		return best
	}
	for _, m := range ms {
		d, b, ok := m.curve.At(lam)
		if !ok || !c.writes(m) {
			continue
		}
		if j := b + d*float64(m.Slots())*format.DistUnit/float64(lam); j < bestJ {
			best, bestJ = m, j
		}
	}
	return best
}

func (r *rdMode) start(w *Writer, out io.Writer) error {
	r.res, r.fw = nil, nil
	if r.target >= 0 {
		r.held = [][]rdcode.State{}
		return nil
	}
	r.src = newSource(r.mem.q, r.mem.m.Geom)
	opts := append(slices.Clip(w.cfg.format), format.WithMeasure(rdcode.Measure(r.mem.q, r.mem.m)), format.WithSource(r.src.place))
	var err error
	r.fw, err = format.NewWriter(out, r.mem.m, opts...)
	w.fw = r.fw
	return err
}

func (r *rdMode) setLevel(level int) error {
	if r.target >= 0 {
		return fmt.Errorf("%w: levels with a distortion target", ErrInput)
	}
	if level < 0 || level >= len(r.lams) {
		return fmt.Errorf("%w: level %d outside 0..%d", ErrInput, level, len(r.lams)-1)
	}
	r.level = level
	return nil
}

// reference returns the state's reference vectors (not rotated) and its
// source floats: obs when given, else the reconstruction of codes by the
// codec's (finest) quantizer.
func (r *rdMode) reference(c *Codec, codes []uint16, obs []float32) (ref, src []float32, err error) {
	if obs != nil {
		if err := checkObs(c, obs); err != nil {
			return nil, nil, err
		}
		src = slices.Clone(obs)
		if r.source || r.target < 0 {
			return src, src, nil
		}
		if codes, err = c.Quantize(nil, obs); err != nil {
			return nil, nil, err
		}
	}
	ref, err = c.Reconstruct(nil, codes)
	return ref, src, err
}

func checkObs(c *Codec, obs []float32) error {
	if len(obs) != c.Slots()*c.q.Dim() {
		return fmt.Errorf("%w: %d observation values, want %d", ErrInput, len(obs), c.Slots()*c.q.Dim())
	}
	return nil
}

// write writes one state given as codes (of the codec's finest member) or
// as float observations.
func (r *rdMode) write(w *Writer, action int64, codes []uint16, obs []float32) error {
	if w.done {
		return ErrClosed
	}
	if codes != nil {
		g := w.c.m.Geom
		if len(codes) != g.N() {
			return fmt.Errorf("%w: %d codes, want %d", ErrInput, len(codes), g.N())
		}
		for _, v := range codes {
			if int(v) >= g.K {
				return fmt.Errorf("%w: code %d ≥ K=%d", ErrInput, v, g.K)
			}
		}
	}
	if r.held != nil && len(r.held) == 0 {
		return fmt.Errorf("%w: a state written before its episode began (WriteEpisode)", ErrInput)
	}
	ref, src, err := r.reference(w.c, codes, obs)
	if err != nil {
		return err
	}
	if r.held != nil {
		e := &r.held[len(r.held)-1]
		*e = append(*e, rdcode.State{Action: action, Ref: ref, Obs: src})
		return nil
	}
	q := r.mem.q
	own := make([]uint16, r.mem.m.Geom.N())
	rot := make([]float32, len(ref))
	if err := q.EncodeRotated(ref, own, rot); err != nil {
		return fmt.Errorf("%w: %v", ErrInput, err)
	}
	var srcRot []float32
	if src != nil {
		srcRot = rot
		if &src[0] != &ref[0] {
			if srcRot, err = q.Rotate(src); err != nil {
				return fmt.Errorf("%w: %v", ErrInput, err)
			}
		}
	}
	r.src.push(srcRot, own)
	if err := r.fw.WriteStateRD(action, own, rdcode.Costs{Q: q, Ref: rot}, r.lams[r.level]); err != nil {
		r.src.unpush()
		return err
	}
	return nil
}

// close searches the members and λ for the held episodes and writes the
// file.
func (r *rdMode) close(w *Writer) error {
	if r.source {
		any := false
		for _, e := range r.held {
			for _, st := range e {
				any = any || st.Obs != nil
			}
		}
		if !any {
			return fmt.Errorf("%w: a distortion target against the source, but no state was written as float observations", ErrInput)
		}
	}
	n := 0
	p, err := w.c.rdSearch(r.held, r.target, w.cfg.format, func(k int) { n = k })
	if err != nil {
		return err
	}
	r.res, r.held, r.passes = p, nil, n
	return writeRD(w.w, p)
}

func (r *rdMode) writeEpisode(w *Writer, e *Episode) error {
	if err := w.WriteEpisode(e.Meta); err != nil {
		return err
	}
	for t, a := range e.Actions {
		var err error
		if e.Obs != nil {
			per := len(e.Obs) / max(len(e.Actions), 1)
			err = r.write(w, a, nil, e.Obs[t*per:(t+1)*per])
		} else {
			n := w.c.m.Geom.N()
			if len(e.Codes) != len(e.Actions)*n {
				return inputError(fmt.Sprintf("%d actions (one per state) but %d codes", len(e.Actions), len(e.Codes)))
			}
			err = r.write(w, a, e.Codes[t*n:(t+1)*n], nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
