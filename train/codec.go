package train

import (
	"context"
	"fmt"
	"runtime"
	"slices"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/check"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/wm"
)

// Codec builds a codec from episodes. When they carry float observations
// it first trains a quantizer on them (WithQuantizer), measures it on
// observations held out, and codes them with it; the world model then
// learns the codes, and the last episodes (WithGate) calibrate the
// retention gate. ctx is checked between these stages. The result
// depends only on the episodes and the options.
func Codec(ctx context.Context, eps []wmzip.Episode, opts ...Option) (*wmzip.Codec, error) {
	c := defaultConfig()
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	if len(eps) == 0 {
		return nil, fmt.Errorf("%w: no training episodes", wmzip.ErrInput)
	}
	eps, copied, err := recentStates(eps, c.maxStates)
	if err != nil {
		return nil, err
	}
	if copied {
		// A bound that binds is meant for inputs of gigabytes, which the
		// caller may have dropped: collect them now, before the heap grows
		// to twice their size as the garbage collector's pacing allows.
		runtime.GC()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !c.single && !c.codesOnly && allObs(eps) {
		return trainFamily(ctx, eps, c)
	}
	var q *opq.Quantizer
	codes := make([][]uint16, len(eps))
	var withObs []int
	for i := range eps {
		e := &eps[i]
		switch {
		case e.Obs != nil && !c.codesOnly:
			withObs = append(withObs, i)
		case e.Codes != nil:
			codes[i] = e.Codes
		default:
			return nil, fmt.Errorf("%w: episode %d has no codes", wmzip.ErrInput, i)
		}
	}
	var quality opq.Quality
	if len(withObs) > 0 {
		hold := c.hold
		if hold < 0 {
			hold = gate.HoldoutEpisodes(len(eps))
		}
		if q, quality, err = trainQuantizer(eps, withObs, hold, c); err != nil {
			return nil, err
		}
		for _, i := range withObs {
			e := &eps[i]
			codes[i] = make([]uint16, len(e.Actions)*slotsOf(e)*q.M())
			if err := q.Encode(e.Obs, codes[i]); err != nil {
				return nil, fmt.Errorf("%w: episode %d: %v", wmzip.ErrInput, i, err)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Codes from a quantizer range over its K, whether or not the
	// training states use every value.
	alphabet := c.alphabet
	if q != nil {
		if alphabet != 0 && alphabet != q.K() {
			return nil, fmt.Errorf("%w: alphabet %d differs from the quantizer's %d centroids per subspace (leave the alphabet unset)", wmzip.ErrInput, alphabet, q.K())
		}
		alphabet = q.K()
	}
	g, weps, err := trainGeometry(eps, codes, alphabet)
	if err != nil {
		return nil, err
	}
	// The gate first: the model it is calibrated with is garbage before
	// the final one is trained. Its distances are those of the quantizer
	// as the model file holds it.
	var qb []byte
	var gq *opq.Quantizer
	if q != nil {
		qb, _ = q.MarshalBinary()
		if gq, err = opq.UnmarshalQuantizer(qb); err != nil {
			return nil, err
		}
	}
	gopt := c.wm
	gopt.Progress = nil
	if c.progress != nil {
		gopt.Progress = func(done, total int) { c.progress("calibrating the gate", done, total) }
	}
	gp, err := gateParams(g, gq, weps, c.hold, c.gate, gopt)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	wopt := c.wm
	wopt.Progress = nil
	if c.progress != nil {
		wopt.Progress = func(done, total int) { c.progress("calibrating", done, total) }
	}
	m, err := wm.Train(g, weps, wopt)
	if err != nil {
		return nil, err
	}
	if q != nil {
		if m, err = m.WithSection(gate.QuantizerTag, qb); err != nil {
			return nil, err
		}
		if quality.Vectors > 0 {
			if m, err = m.WithSection(qualitySection, marshalQuality(quality)); err != nil {
				return nil, err
			}
		}
	}
	if gp != nil {
		if m, err = gate.Apply(m, gp); err != nil {
			return nil, err
		}
	}
	codec, err := wmzip.NewCodec(m)
	if err != nil {
		return nil, err
	}
	return codec, nil
}

// recentStates returns the last limit states of eps (WithMaxStates): eps
// itself when they hold no more, else a copy of what is kept, cut at an
// episode's start if need be (copied).
func recentStates(eps []wmzip.Episode, limit int) (kept []wmzip.Episode, copied bool, err error) {
	first, cut, total := len(eps), 0, 0
	for first > 0 && total < limit {
		first--
		n := len(eps[first].Actions)
		if total+n > limit {
			cut = n - (limit - total)
			n -= cut
		}
		total += n
	}
	if first == 0 && cut == 0 {
		return eps, false, nil
	}
	out := make([]wmzip.Episode, 0, len(eps)-first)
	for i := first; i < len(eps); i++ {
		e := eps[i]
		from := 0
		if i == first {
			from = cut
		}
		t, s := len(e.Actions), slotsOf(&e)
		if t == 0 {
			out = append(out, wmzip.Episode{Slots: e.Slots})
			continue
		}
		if e.Codes != nil && len(e.Codes)%(t*s) != 0 || e.Obs != nil && len(e.Obs)%(t*s) != 0 {
			return nil, false, fmt.Errorf("%w: episode %d: its arrays do not hold %d states of %d slots", wmzip.ErrInput, i, t, s)
		}
		k := wmzip.Episode{Slots: e.Slots, Actions: slices.Clone(e.Actions[from:])}
		if e.Codes != nil {
			k.Codes = slices.Clone(e.Codes[len(e.Codes)/t*from:])
		}
		if e.Obs != nil {
			k.Obs = slices.Clone(e.Obs[len(e.Obs)/t*from:])
		}
		out = append(out, k)
	}
	return out, true, nil
}

// trainQuantizer fits a quantizer to the slot vectors of the episodes
// listed in idx, but for those it holds out to measure it on: the
// episodes the gate holds out (hold), or, when there are none, the last
// eighth of the states. It returns the quantizer and its quality on the
// states held out (none measured when there are too few states).
func trainQuantizer(eps []wmzip.Episode, idx []int, hold int, c config) (*opq.Quantizer, opq.Quality, error) {
	dim := 0
	var parts, held [][]float32
	total := 0
	for _, i := range idx {
		e := &eps[i]
		n := len(e.Actions) * slotsOf(e)
		if n == 0 {
			continue
		}
		if len(e.Obs)%n != 0 {
			return nil, opq.Quality{}, fmt.Errorf("%w: episode %d: %d observation values for %d states of %d slots", wmzip.ErrInput, i, len(e.Obs), len(e.Actions), slotsOf(e))
		}
		d := len(e.Obs) / n
		if err := check.Finite(e.Obs, slotsOf(e), d, 0, fmt.Sprintf("episode %d", i), nil); err != nil {
			return nil, opq.Quality{}, err
		}
		if dim == 0 {
			dim = d
		} else if d != dim {
			return nil, opq.Quality{}, fmt.Errorf("%w: observation dimension %d differs from %d", wmzip.ErrInput, d, dim)
		}
		if i >= len(eps)-hold {
			held = append(held, e.Obs)
		} else {
			parts = append(parts, e.Obs)
		}
		total += len(e.Actions)
	}
	if len(parts) == 0 || len(held) == 0 {
		// No episode held out: the last eighth of the states, cut by state.
		all := append(parts, held...)
		parts, held = nil, nil
		if total >= minHeldStates*8 {
			keep := total - total/8 // states trained on
			for _, p := range all {
				states := len(p) / dim / max(slotsOf(&eps[idx[0]]), 1)
				per := len(p) / max(states, 1)
				switch {
				case keep >= states:
					parts = append(parts, p)
				case keep > 0:
					parts, held = append(parts, p[:keep*per]), append(held, p[keep*per:])
				default:
					held = append(held, p)
				}
				keep -= states
			}
		} else {
			parts = all
		}
	}
	vecs := joinFloats(parts)
	cfg := c.quant
	cfg.Dim = dim
	if c.progress != nil {
		cfg.Progress = func(stage string, done, total int) { c.progress("quantizer "+stage, done, total) }
	}
	q, err := Quantizer(vecs, cfg)
	if err != nil {
		return nil, opq.Quality{}, err
	}
	var qu opq.Quality
	for _, h := range held {
		codes := make([]uint16, len(h)/dim*q.M())
		rot := make([]float32, len(h))
		if err := q.EncodeRotated(h, codes, rot); err != nil {
			return nil, opq.Quality{}, err
		}
		a, err := q.CompareRotated(rot, codes)
		if err != nil {
			return nil, opq.Quality{}, err
		}
		qu = qu.Add(a)
	}
	return q, qu, nil
}

// minHeldStates is the fewest states the quantizer is measured on when no
// episode is held out (a file of fewer than eight times that is not cut).
const minHeldStates = 4

// trainGeometry checks that every episode has one state shape and returns
// it (K from the codes unless alphabet is set) with the episodes as the
// world model trains on them.
func trainGeometry(eps []wmzip.Episode, codes [][]uint16, alphabet int) (wm.Geometry, []wm.Episode, error) {
	var g wm.Geometry
	out := make([]wm.Episode, len(eps))
	for i := range eps {
		e := &eps[i]
		s := slotsOf(e)
		n := len(e.Actions) * s
		if n == 0 {
			out[i] = wm.Episode{Actions: e.Actions}
			continue
		}
		if len(codes[i])%n != 0 {
			return g, nil, fmt.Errorf("%w: episode %d: %d codes for %d states of %d slots", wmzip.ErrInput, i, len(codes[i]), len(e.Actions), s)
		}
		gi := wm.Geometry{S: s, M: len(codes[i]) / n, K: Alphabet(codes[i])}
		if g.S == 0 {
			g = gi
		} else {
			if gi.S != g.S || gi.M != g.M {
				return g, nil, fmt.Errorf("%w: episode %d: codes shape %dx%d differs from %dx%d", wmzip.ErrInput, i, gi.S, gi.M, g.S, g.M)
			}
			g.K = max(g.K, gi.K)
		}
		if alphabet != 0 {
			if gi.K > alphabet {
				return g, nil, fmt.Errorf("%w: episode %d: codes reach %d, above the alphabet %d", wmzip.ErrInput, i, gi.K-1, alphabet)
			}
			g.K = alphabet
		}
		out[i] = wm.Episode{Codes: codes[i], Actions: e.Actions}
	}
	return g, out, nil
}

// Alphabet is the K Codec picks for codes when WithAlphabet is not given:
// the smallest power of two above the largest code, at least 2.
func Alphabet(c []uint16) int {
	m := 0
	for _, v := range c {
		m = max(m, int(v))
	}
	k := 2
	for k <= m {
		k *= 2
	}
	return k
}

// gateParams calibrates the retention gate of the model Train builds
// from eps: a model trained without the last hold episodes (to be run
// only: no file) is run on them, with the distances of quantizer q if any
// (hold < 0: gate.HoldoutEpisodes; 0: no gate, nil params).
func gateParams(g wm.Geometry, q *opq.Quantizer, eps []wm.Episode, hold int, gopt gate.CalibOptions, opt wm.TrainOptions) (*gate.Params, error) {
	if hold < 0 {
		hold = gate.HoldoutEpisodes(len(eps))
	}
	if hold == 0 {
		return nil, nil
	}
	if hold >= len(eps) {
		return nil, fmt.Errorf("%w: gate holdout %d leaves no training episode of %d", wmzip.ErrInput, hold, len(eps))
	}
	if gopt.Weights != nil && len(gopt.Weights) != g.N() {
		return nil, fmt.Errorf("%w: %d gate weights, the model has %d coordinates", wmzip.ErrInput, len(gopt.Weights), g.N())
	}
	opt.NoFile = true
	opt.Level = calibrationLevel(opt.Level)
	calib, err := wm.Train(g, eps[:len(eps)-hold], opt)
	if err != nil {
		return nil, err
	}
	return calibrateGate(calib, q, eps[len(eps)-hold:], gopt)
}

// calibrationLevel is the level whose predictions the gate of a model of
// level l is calibrated on: l itself (a fast model's file codes no
// coordinate of a copied slot), except that a copy-level gate is
// calibrated at the default level, on every coordinate. The copy level
// predicts the coordinates it codes as the default level does, and among
// them, in a lossy file, are those of copies the reconstruction has lost;
// calibrated on new content alone the gate would keep them far too often
// (docs/results-speed.md).
func calibrationLevel(l int) int {
	if l == wm.LevelCopy {
		return wm.LevelFull
	}
	return l
}

// CalibrateGate calibrates the gate of model final on held-out episodes.
// Predictions come from calib, a model of the same geometry trained
// without those episodes (final itself if it never saw them); distances
// come from final's quantizer, if any, else they are uniform. opt sets the
// weights and the binning; its distances are set here. It returns final
// with its gate section set, and the gate.
func CalibrateGate(calib, final *wm.Model, held []wm.Episode, opt gate.CalibOptions) (*wm.Model, *gate.Params, error) {
	if calib.Geom != final.Geom || calib.Precision != final.Precision {
		return nil, nil, fmt.Errorf("gate calibration: calibration model geometry or precision differs")
	}
	if level := calibrationLevel(final.Level()); calib.Level() != level {
		var err error
		if calib, err = calib.WithLevel(level); err != nil {
			return nil, nil, err
		}
	}
	var q *opq.Quantizer
	if raw := final.Section(gate.QuantizerTag); raw != nil {
		var err error
		if q, err = opq.UnmarshalQuantizer(raw); err != nil {
			return nil, nil, fmt.Errorf("gate calibration: model quantizer: %w", err)
		}
	}
	p, err := calibrateGate(calib, q, held, opt)
	if err != nil {
		return nil, nil, err
	}
	m, err := gate.Apply(final, p)
	return m, p, err
}

// calibrateGate is gate.Calibrate with the distances of quantizer q, if
// any, else uniform ones.
func calibrateGate(calib *wm.Model, q *opq.Quantizer, held []wm.Episode, opt gate.CalibOptions) (*gate.Params, error) {
	opt.Dist, opt.SlotNorm = nil, 0
	if q != nil {
		var err error
		if opt.Dist, opt.SlotNorm, err = quantizerDistances(q, calib.Geom, held); err != nil {
			return nil, err
		}
	}
	return gate.Calibrate(calib, held, opt)
}

// quantizerDistances returns the quantizer's 16-bit distance tables and the
// mean squared slot norm in their units, measured on the given episodes.
func quantizerDistances(q *opq.Quantizer, g wm.Geometry, eps []wm.Episode) ([][]uint32, float64, error) {
	if q.M() != g.M || q.K() != g.K {
		return nil, 0, fmt.Errorf("gate calibration: quantizer M=%d K=%d differs from the model's M=%d K=%d", q.M(), q.K(), g.M, g.K)
	}
	dist := q.DistanceTables(16)
	if dist == nil {
		return nil, 0, fmt.Errorf("gate calibration: quantizer distance tables too large")
	}
	var states []uint16
	for _, e := range eps {
		states = append(states, e.Codes...)
	}
	_, norm, err := gate.EmbeddingScale(dist, g, states, q.Dim(), func(s []uint16, out []float32) error {
		return q.Decode(s, out)
	})
	return dist, norm, err
}

// joinFloats returns the concatenation of parts: the slice they already
// form when each follows the previous in one array (episodes cut from one
// trajectory: training then reads the input in place instead of a copy as
// large), else one copy of exactly their total length.
func joinFloats(parts [][]float32) []float32 {
	if len(parts) == 0 {
		return nil
	}
	all, n := parts[0], len(parts[0])
	for _, p := range parts[1:] {
		n += len(p)
		if all == nil || len(p) == 0 || cap(all) < len(all)+len(p) || &all[:len(all)+1][len(all)] != &p[0] {
			all = nil
			continue
		}
		all = all[:len(all)+len(p)]
	}
	if all != nil {
		return all
	}
	out := make([]float32, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// slotsOf returns an episode's slot vectors per state.
func slotsOf(e *wmzip.Episode) int { return max(e.Slots, 1) }

// allObs reports whether every episode with states carries float
// observations.
func allObs(eps []wmzip.Episode) bool {
	any := false
	for i := range eps {
		if len(eps[i].Actions) > 0 {
			if eps[i].Obs == nil {
				return false
			}
			any = true
		}
	}
	return any
}
