package bench

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"time"

	wmtrain "github.com/wmzip/wmzip/train"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/policy"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
)

// RDSetup is what a rate–distortion sweep runs on.
type RDSetup struct {
	m      *wm.Model // with its GATE section
	p      *gate.Params
	q      *opq.Quantizer // nil: code space (uniform distances)
	test   []wm.Episode
	states int
	key    int
	info   RDInfo

	only     map[string]bool // policies to run, nil: all
	truth    []uint16        // test codes, state-major
	truthVec []float32       // their decoded slot vectors (q != nil)
	dim      int
}

// RDInfo describes a sweep's setup.
type RDInfo struct {
	Input         string  `json:"input"`
	TrainStates   int     `json:"train_states"`
	CalStates     int     `json:"calibration_states"`
	TestStates    int     `json:"test_states"`
	Slots         int     `json:"slots"`
	Subspaces     int     `json:"subspaces"`
	Alphabet      int     `json:"alphabet"`
	Space         string  `json:"distortion_space"`
	QuantizerRMSE float64 `json:"quantizer_rel_mse,omitempty"`
	ModelBytes    int     `json:"model_bytes"`
}

// RDPoint is one closed-loop encoding at one policy and knob.
type RDPoint struct {
	Policy         string  `json:"policy"`
	Knob           float64 `json:"knob"`
	BitsPerState   float64 `json:"bits_per_state"`
	IdealBits      float64 `json:"ideal_bits_per_state"`
	Distortion     float64 `json:"distortion"`
	GateDistortion float64 `json:"gate_distortion"`
	Cosine         float64 `json:"cosine"`
	CosineFilled   float64 `json:"cosine_filled_slots"`
	Retained       float64 `json:"retained_fraction"`
	ExactFill      float64 `json:"exact_fill"`
	DecodeEqual    int     `json:"decode_equal_states"`
	States         int     `json:"states"`

	recon []uint16
	mask  []bool
}

// RDReport is the outcome of a sweep.
type RDReport struct {
	Info         RDInfo             `json:"setup"`
	LosslessBits float64            `json:"lossless_bits_per_state"`
	RawBits      float64            `json:"raw_bits_per_state"`
	Points       []*RDPoint         `json:"points"`
	Matched      []RDMatched        `json:"matched"`
	MeanOverhead map[string]float64 `json:"mean_overhead_vs_rule"`
	UsefulMax    float64            `json:"useful_distortion_max"`
	UsefulOver   map[string]float64 `json:"mean_overhead_vs_rule_useful"`
	Cos99        *RDPoint           `json:"rule_at_cosine_0_99,omitempty"`
	Cos99Ratio   float64            `json:"cosine_0_99_rate_vs_lossless,omitempty"`
	// Cos99Interp is the rule's rate at mean slot cosine 0.99 interpolated
	// between the points of neighbouring λ (rate99).
	Cos99Interp      float64              `json:"cosine_0_99_interpolated_bits_per_state,omitempty"`
	Cos99InterpRatio float64              `json:"cosine_0_99_interpolated_vs_lossless,omitempty"`
	FillVsCopy       map[string]RDMetrics `json:"fill_vs_copy,omitempty"`
	AllDecodesOK     bool                 `json:"decoder_equals_writer_all_states"`
	SecondsPerRun    float64              `json:"seconds_per_run"`
}

// RDMatched compares the policies' rates at one distortion.
type RDMatched struct {
	Distortion float64            `json:"distortion"`
	Bits       map[string]float64 `json:"bits_per_state"`
	Overhead   map[string]float64 `json:"overhead_vs_rule"`
}

// RDMetrics are the distortion measures of one reconstruction.
type RDMetrics struct {
	Distortion   float64 `json:"distortion"`
	Cosine       float64 `json:"cosine"`
	CosineFilled float64 `json:"cosine_filled_slots"`
	ExactFill    float64 `json:"exact_fill"`
}

// RDConfig sets up a rate–distortion sweep.
type RDConfig struct {
	Input     string          // the input's name, for messages and the report
	Traj      *npz.Trajectory // the input
	Model     *wm.Model       // a model with a gate: the whole input is then the test set; nil: train here
	TrainName string          // the training trajectory's name, for messages
	Train     *npz.Trajectory // training trajectories; nil: split the input
	CodesOnly bool            // the input's codes even when it has float obs
	OPQM      int             // quantizer subspaces, when trained here on obs
	OPQK      int             // quantizer centroids
	MaxStates int             // test states at most (0: all)
	Gate      gate.CalibOptions
	Keyframe  int             // keyframe interval of the encodings
	Only      map[string]bool // policies to run, nil: all
}

// PrepareRD loads or trains the model, quantizer and gate and picks the
// test episodes.
func PrepareRD(c RDConfig, logf func(string, ...any)) (*RDSetup, error) {
	input, tr, trainPath, trainTr, codesOnly, om, ok, maxStates, gopt := c.Input, c.Traj, c.TrainName, c.Train, c.CodesOnly, c.OPQM, c.OPQK, c.MaxStates, c.Gate
	var err error
	s := &RDSetup{info: RDInfo{Input: input}, key: c.Keyframe, only: c.Only}
	useObs := tr.Obs != nil && !codesOnly
	if !useObs && tr.Codes == nil {
		return nil, fmt.Errorf("%s: no codes and no obs", input)
	}
	if c.Model != nil {
		s.m = c.Model
		if raw := s.m.Section(gate.QuantizerTag); raw != nil && useObs {
			if s.q, err = opq.UnmarshalQuantizer(raw); err != nil {
				return nil, err
			}
			if err := quantize(s.q, tr); err != nil {
				return nil, err
			}
		}
		if tr.Codes == nil {
			return nil, fmt.Errorf("%s: obs need a model with a quantizer (section %q)", input, gate.QuantizerTag)
		}
		if s.p, err = gate.FromModel(s.m); err != nil {
			return nil, err
		}
		s.test = episodes(tr)
	} else {
		var fit, cal []wm.Episode
		split := trainTr == nil
		if split {
			trainTr = tr
		}
		if useObs {
			if trainTr.Obs == nil {
				return nil, fmt.Errorf("%s: no obs to train a quantizer on", trainPath)
			}
			t0 := time.Now()
			s.q, err = wmtrain.Quantizer(trainTr.Obs, opq.Config{Dim: trainTr.ObsD, M: om, K: ok, Seed: 1, Sample: 16384, OPQIters: 5, Iters: 15})
			if err != nil {
				return nil, err
			}
			logf("quantizer: %d×%d trained in %v", om, ok, time.Since(t0).Round(time.Second))
			if err := quantize(s.q, trainTr); err != nil {
				return nil, err
			}
			if trainTr != tr {
				if err := quantize(s.q, tr); err != nil {
					return nil, err
				}
			}
		}
		all := episodes(trainTr)
		if !split {
			hold := gate.HoldoutEpisodes(len(all))
			fit, cal = all[:len(all)-hold], all[len(all)-hold:]
			s.test = episodes(tr)
		} else {
			if len(all) < 3 {
				return nil, fmt.Errorf("%s: %d episodes; splitting needs at least 3 (or give --train)", input, len(all))
			}
			nt := max(1, len(all)/4)
			nc := max(1, len(all)/8)
			fit, cal, s.test = all[:len(all)-nt-nc], all[len(all)-nt-nc:len(all)-nt], all[len(all)-nt:]
		}
		g := wm.Geometry{S: trainTr.S, M: trainTr.M, K: wmtrain.Alphabet(trainTr.Codes)}
		if s.q != nil {
			g.K = s.q.K()
		} else {
			g.K = max(g.K, wmtrain.Alphabet(tr.Codes))
		}
		t0 := time.Now()
		m, err := wm.Train(g, fit, wm.TrainOptions{})
		if err != nil {
			return nil, err
		}
		logf("world model: trained on %d states in %v", countStates(fit), time.Since(t0).Round(time.Second))
		if s.q != nil {
			qb, _ := s.q.MarshalBinary()
			if m, err = m.WithSection(gate.QuantizerTag, qb); err != nil {
				return nil, err
			}
		}
		if s.m, s.p, err = wmtrain.CalibrateGate(m, m, cal, gopt); err != nil {
			return nil, err
		}
		s.info.TrainStates, s.info.CalStates = countStates(fit), countStates(cal)
	}
	g := s.m.Geom
	n := g.N()
	if maxStates > 0 {
		var cut []wm.Episode
		left := maxStates
		for _, e := range s.test {
			if left == 0 {
				break
			}
			k := min(left, len(e.Actions))
			cut = append(cut, wm.Episode{Codes: e.Codes[:k*n], Actions: e.Actions[:k]})
			left -= k
		}
		s.test = cut
	}
	for _, e := range s.test {
		if len(e.Codes) != len(e.Actions)*n {
			return nil, fmt.Errorf("test codes do not fit the model's %d coordinates", n)
		}
		s.truth = append(s.truth, e.Codes...)
	}
	s.states = len(s.truth) / n
	raw, _ := s.m.MarshalBinary()
	s.info.TestStates, s.info.Slots, s.info.Subspaces, s.info.Alphabet = s.states, g.S, g.M, g.K
	s.info.ModelBytes = len(raw)
	s.info.Space = "code space: distortion = fraction of wrong codes, cosine = fraction of a slot's codes right"
	if s.q != nil {
		s.dim = s.q.Dim()
		s.truthVec = make([]float32, s.states*g.S*s.dim)
		if err := s.q.Decode(s.truth, s.truthVec); err != nil {
			return nil, err
		}
		s.info.Space = "embedding space of the quantizer: distortion relative to the mean squared norm of the lossless reconstruction"
		if tr.Obs != nil && tr.ObsD == s.dim && c.Model == nil && trainTr != nil && trainTr != tr {
			s.info.QuantizerRMSE = relMSE(tr.Obs[:min(len(tr.Obs), len(s.truthVec))], s.truthVec)
		}
	}
	logf("test: %d states of %d coordinates; %s", s.states, n, s.info.Space)
	return s, nil
}

func countStates(eps []wm.Episode) int {
	n := 0
	for _, e := range eps {
		n += len(e.Actions)
	}
	return n
}

// quantize sets tr's codes from its obs.
func quantize(q *opq.Quantizer, tr *npz.Trajectory) error {
	if tr.ObsD != q.Dim() {
		return fmt.Errorf("obs of dimension %d, quantizer %d", tr.ObsD, q.Dim())
	}
	tr.S, tr.M = tr.ObsS, q.M()
	tr.Codes = make([]uint16, tr.T*tr.S*tr.M)
	return q.Encode(tr.Obs, tr.Codes)
}

func relMSE(a, b []float32) float64 {
	var e, nn float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		e += d * d
		nn += float64(a[i]) * float64(a[i])
	}
	return e / nn
}

// run encodes the test episodes under one policy and knob, decodes the file
// and measures it. pol "" is lossless.
func (s *RDSetup) run(pol policy.Policy, knob uint32) (*RDPoint, error) {
	g := s.m.Geom
	n := g.N()
	pt := &RDPoint{Policy: string(pol), States: s.states, mask: make([]bool, s.states*n)}
	var opts, ropts []format.Option
	base := 0
	if pol == "" {
		pt.Policy = "lossless"
		opts = append(opts, format.WithLambda(format.LambdaLossless))
		for i := range pt.mask {
			pt.mask[i] = true
		}
	} else if pol == policy.Rule {
		// The normative rule, its decisions recorded: one Decider, so the
		// chunks are coded on one goroutine.
		d := s.p.Rule(lambda.Lambda(knob)).NewDecider()
		rec := func(j int, pr *wm.Predictor) (bool, uint16) {
			k, fill := d.Decide(j, pr)
			pt.mask[base+j] = k
			return k, fill
		}
		opts = append(opts, format.WithRetainRule(lambda.Lambda(knob), rec), format.WithThreads(1))
	} else {
		rule := policy.Retain(s.p, pol, knob)
		if rule == nil {
			return nil, fmt.Errorf("unknown policy %q", pol)
		}
		rec := func(j int, pr *wm.Predictor) bool {
			r := rule(j, pr)
			pt.mask[base+j] = r
			return r
		}
		opts = append(opts, format.WithRetainRule(lambda.Lambda(knob), gate.ModalFill(rec)), format.WithThreads(1))
		// The normative rule decodes from the header and the model alone;
		// the baselines need their rule again.
		ropts = append(ropts, format.WithRetainRule(lambda.Lambda(knob), gate.ModalFill(rule)))
	}
	var buf bytes.Buffer
	w, err := format.NewWriter(&buf, s.m, append(opts, format.WithKeyframeInterval(s.key))...)
	if err != nil {
		return nil, err
	}
	pt.recon = make([]uint16, 0, len(s.truth))
	var last []uint16
	t := 0
	for _, e := range s.test {
		if err := w.WriteEpisode(nil); err != nil {
			return nil, err
		}
		for i, a := range e.Actions {
			base = t * n
			if err := w.WriteState(a, e.Codes[i*n:(i+1)*n]); err != nil {
				return nil, err
			}
			last = w.LastState(last)
			pt.recon = append(pt.recon, last...)
			t++
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	acct := w.Account()
	pt.BitsPerState = float64(buf.Len()) * 8 / float64(s.states)
	pt.Retained = float64(acct.Retained) / float64(len(s.truth))
	pt.GateDistortion = s.p.RelDistortion(acct.DistSum, acct.States)
	// Decode the file and compare with the writer's reconstruction.
	r, err := format.NewReader(bytes.NewReader(buf.Bytes()), s.m, ropts...)
	if err != nil {
		return nil, err
	}
	t = 0
	var st []uint16
	for {
		if _, err := r.NextEpisode(); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		for {
			_, c, err := r.ReadState(st)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			st = c
			if t < s.states && r.Level() == -1 {
				// A chunk coded losslessly, as no longer than by the
				// rule: the writer's reconstruction is the input.
				copy(pt.recon[t*n:(t+1)*n], s.truth[t*n:(t+1)*n])
				for j := t * n; j < (t+1)*n; j++ {
					pt.mask[j] = true
				}
			}
			if t < s.states && slices.Equal(c, pt.recon[t*n:(t+1)*n]) {
				pt.DecodeEqual++
			}
			t++
		}
	}
	in, _ := r.Info()
	pt.IdealBits = in.IdealBits() / float64(s.states)
	m := s.metrics(pt.recon, pt.mask)
	pt.Distortion, pt.Cosine, pt.CosineFilled, pt.ExactFill = m.Distortion, m.Cosine, m.CosineFilled, m.ExactFill
	return pt, nil
}

// metrics measures a reconstruction against the lossless one: relative
// distortion, mean cosine per slot vector (all slots, and slots with an
// omitted coordinate) and the fraction of omitted codes that are right.
func (s *RDSetup) metrics(recon []uint16, mask []bool) RDMetrics {
	g := s.m.Geom
	var m RDMetrics
	var omitted, right int
	for i, keep := range mask {
		if !keep {
			omitted++
			if recon[i] == s.truth[i] {
				right++
			}
		}
	}
	if omitted > 0 {
		m.ExactFill = float64(right) / float64(omitted)
	}
	slots := s.states * g.S
	var cosSum, cosF float64
	nf := 0
	filled := func(sl int) bool {
		for _, k := range mask[sl*g.M : (sl+1)*g.M] {
			if !k {
				return true
			}
		}
		return false
	}
	if s.q == nil {
		wrong := 0
		for sl := range slots {
			ok := 0
			for j := sl * g.M; j < (sl+1)*g.M; j++ {
				if recon[j] == s.truth[j] {
					ok++
				}
			}
			wrong += g.M - ok
			c := float64(ok) / float64(g.M)
			cosSum += c
			if filled(sl) {
				cosF += c
				nf++
			}
		}
		m.Distortion = float64(wrong) / float64(len(recon))
	} else {
		vec := make([]float32, g.S*s.dim)
		n := g.N()
		var errSum, normSum float64
		for t := range s.states {
			if err := s.q.Decode(recon[t*n:(t+1)*n], vec); err != nil {
				panic(err) // codes below K by construction
			}
			for sl := range g.S {
				x := vec[sl*s.dim : (sl+1)*s.dim]
				y := s.truthVec[(t*g.S+sl)*s.dim : (t*g.S+sl+1)*s.dim]
				var e, xx, yy, xy float64
				for i := range x {
					a, b := float64(x[i]), float64(y[i])
					e += (a - b) * (a - b)
					xx += a * a
					yy += b * b
					xy += a * b
				}
				errSum += e
				normSum += yy
				c := 1.0
				if xx > 0 && yy > 0 {
					c = xy / math.Sqrt(xx*yy)
				}
				cosSum += c
				if filled(t*g.S + sl) {
					cosF += c
					nf++
				}
			}
		}
		m.Distortion = errSum / normSum
	}
	m.Cosine = cosSum / float64(slots)
	m.CosineFilled = 1
	if nf > 0 {
		m.CosineFilled = cosF / float64(nf)
	}
	return m
}

// copyFill reconstructs the same omission set by copying each omitted
// coordinate from the previous reconstructed state of its episode (the
// world model's fill at an episode's first state, which has no previous).
func (s *RDSetup) copyFill(pt *RDPoint) []uint16 {
	n := s.m.Geom.N()
	out := slices.Clone(pt.recon)
	t := 0
	for _, e := range s.test {
		for i := range e.Actions {
			if i > 0 {
				for j := range n {
					if k := (t)*n + j; !pt.mask[k] {
						out[k] = out[k-n]
					}
				}
			}
			t++
		}
	}
	return out
}

// coarseKnobs lists a policy's first knob values, from keeping most to
// keeping least: λ for the λ rules, the entropy threshold in bits for
// Uncertainty, the omitted fraction for Random.
func coarseKnobs(pol policy.Policy) []float64 {
	switch pol {
	case policy.Random:
		return []float64{0.02, 0.1, 0.3, 0.5, 0.7, 0.9}
	case policy.Uncertainty:
		return []float64{1.0 / 64, 1.0 / 16, 0.25, 0.5, 1, 2, 4}
	}
	var v []float64
	for k := 15; k >= -4; k -= 2 {
		v = append(v, math.Exp2(float64(k)))
	}
	return v
}

// knobValue turns a knob into the policy's integer parameter.
func knobValue(pol policy.Policy, x float64) uint32 {
	switch pol {
	case policy.Random:
		return uint32(math.Min(x*(1<<32), math.MaxUint32))
	case policy.Uncertainty:
		return uint32(math.Round(x * 256))
	}
	l, _ := lambda.FromFloat(x)
	return uint32(l)
}

// midKnob is the knob between two: geometric for λ and entropy, arithmetic
// for a fraction.
func midKnob(pol policy.Policy, a, b float64) float64 {
	if pol == policy.Random {
		return (a + b) / 2
	}
	return math.Sqrt(a * b)
}

// Sweep runs every policy over its knobs, then compares them at matched
// distortion.
func (s *RDSetup) Sweep(quick bool, logf func(string, ...any)) (*RDReport, error) {
	g := s.m.Geom
	rep := &RDReport{Info: s.info, RawBits: g.RawBits(), MeanOverhead: map[string]float64{}, AllDecodesOK: true}
	t0 := time.Now()
	runs := 0
	ll, err := s.run("", 0)
	if err != nil {
		return nil, err
	}
	runs++
	rep.LosslessBits = ll.BitsPerState
	rep.Points = append(rep.Points, ll)
	logf("lossless: %.1f bits/state", ll.BitsPerState)
	curves := map[string][]*RDPoint{}
	for _, pol := range policy.All() {
		if s.only != nil && !s.only[string(pol)] {
			continue
		}
		var pts []*RDPoint
		runAt := func(x float64) error {
			pt, err := s.run(pol, knobValue(pol, x))
			if err != nil {
				return err
			}
			runs++
			pt.Knob = x
			if pt.DecodeEqual != pt.States {
				rep.AllDecodesOK = false
			}
			logf("%-11s knob %-9.4g %8.1f bits/state  distortion %.5f  cosine %.4f  retained %.3f  decoded==written %d/%d",
				pol, pt.Knob, pt.BitsPerState, pt.Distortion, pt.Cosine, pt.Retained, pt.DecodeEqual, pt.States)
			pts = append(pts, pt)
			return nil
		}
		for _, x := range coarseKnobs(pol) {
			if err := runAt(x); err != nil {
				return nil, err
			}
			if pts[len(pts)-1].Retained < 0.002 {
				break // nothing left to omit
			}
		}
		// Refine where the curve jumps: split the knob interval with the
		// largest change of distortion or (relative) rate. Neighbours are
		// taken in knob order: the retained fraction is not monotone in the
		// knob in closed loop, and neighbours by it can straddle a point
		// already run, whose knob the split would then repeat.
		budget := 12
		if quick {
			budget = 5
		}
		for range budget {
			sort.Slice(pts, func(a, b int) bool { return pts[a].Knob < pts[b].Knob })
			best, gap := -1, 0.0
			for i := 0; i+1 < len(pts); i++ {
				a, b := pts[i], pts[i+1]
				g := max(math.Abs(a.Distortion-b.Distortion)/0.02, math.Abs(a.BitsPerState-b.BitsPerState)/(0.05*rep.LosslessBits))
				// Refine only where distortion is still of interest.
				// The split must be a new integer knob, not a repeat.
				ka, kb := knobValue(pol, a.Knob), knobValue(pol, b.Knob)
				if g > gap && min(a.Distortion, b.Distortion) < 0.3 && max(ka, kb)-min(ka, kb) >= 2 {
					best, gap = i, g
				}
			}
			if best < 0 || gap < 1 {
				break
			}
			if err := runAt(midKnob(pol, pts[best].Knob, pts[best+1].Knob)); err != nil {
				return nil, err
			}
		}
		// The rule's rate at mean slot cosine 0.99, the figure the docs
		// quote: bisect the knob interval that straddles it down to an
		// eighth of an octave.
		for range 8 {
			if pol != policy.Rule {
				break
			}
			sort.Slice(pts, func(a, b int) bool { return pts[a].Knob < pts[b].Knob })
			i := straddle99(pts)
			if i < 0 || pts[i+1].Knob <= pts[i].Knob*math.Exp2(1.0/8) {
				break
			}
			if err := runAt(midKnob(pol, pts[i].Knob, pts[i+1].Knob)); err != nil {
				return nil, err
			}
		}
		sort.Slice(pts, func(a, b int) bool { return pts[a].Retained > pts[b].Retained })
		curves[string(pol)] = pts
		rep.Points = append(rep.Points, pts...)
	}
	rep.SecondsPerRun = time.Since(t0).Seconds() / float64(runs)
	if ll.DecodeEqual != ll.States {
		rep.AllDecodesOK = false
	}
	rule := string(policy.Rule)
	// The rule's cheapest point with mean slot cosine ≥ 0.99, and its rate
	// at 0.99 interpolated between the points of neighbouring λ.
	for _, pt := range curves[rule] {
		if pt.Cosine >= 0.99 && (rep.Cos99 == nil || pt.BitsPerState < rep.Cos99.BitsPerState) {
			rep.Cos99 = pt
		}
	}
	if rep.Cos99 != nil {
		rep.Cos99Ratio = rep.Cos99.BitsPerState / rep.LosslessBits
		pt := rep.Cos99
		rep.FillVsCopy = map[string]RDMetrics{
			"world_model_fill": s.metrics(pt.recon, pt.mask),
			"copy_previous":    s.metrics(s.copyFill(pt), pt.mask),
		}
		rep.Cos99Interp = rate99(curves[rule])
		rep.Cos99InterpRatio = rep.Cos99Interp / rep.LosslessBits
	}
	// Matched distortion: each policy's least rate at distortion ≤ D,
	// interpolated along its lower frontier (lossless included).
	fronts := map[string][]*RDPoint{}
	lo, hi := 0.0, math.Inf(1)
	if len(curves) < len(policy.All()) {
		return rep, nil
	}
	for name, c := range curves {
		f := frontier(append([]*RDPoint{ll}, c...))
		fronts[name] = f
		lo = max(lo, f[0].Distortion)
		hi = min(hi, f[len(f)-1].Distortion)
	}
	for _, pt := range fronts[rule] {
		d := pt.Distortion
		if d <= lo || d > hi {
			continue
		}
		mt := RDMatched{Distortion: d, Bits: map[string]float64{}, Overhead: map[string]float64{}}
		for _, pol := range policy.All() {
			mt.Bits[string(pol)] = rateAt(fronts[string(pol)], d)
		}
		for _, pol := range policy.All() {
			mt.Overhead[string(pol)] = mt.Bits[string(pol)]/mt.Bits[rule] - 1
		}
		rep.Matched = append(rep.Matched, mt)
	}
	// Mean overheads over all matched points, and over the useful range
	// (distortion ≤ usefulMax: reconstructions still close to the lossless).
	rep.UsefulMax, rep.UsefulOver = usefulMax, map[string]float64{}
	for _, pol := range policy.All() {
		var sum, su float64
		nu := 0
		for _, mt := range rep.Matched {
			sum += mt.Overhead[string(pol)]
			if mt.Distortion <= usefulMax {
				su += mt.Overhead[string(pol)]
				nu++
			}
		}
		if len(rep.Matched) > 0 {
			rep.MeanOverhead[string(pol)] = sum / float64(len(rep.Matched))
		}
		if nu > 0 {
			rep.UsefulOver[string(pol)] = su / float64(nu)
		}
	}
	return rep, nil
}

// straddle99 returns the i at which points i and i+1 (by knob) have mean
// slot cosines below and at least 0.99, the first such, or −1.
func straddle99(pts []*RDPoint) int {
	for i := 0; i+1 < len(pts); i++ {
		if pts[i].Cosine < 0.99 && pts[i+1].Cosine >= 0.99 {
			return i
		}
	}
	return -1
}

// rate99 returns the least rate at mean slot cosine 0.99: of the points
// at or above it, and interpolated linearly between every two points of
// neighbouring knobs on either side of it (+Inf when none reaches it).
func rate99(pts []*RDPoint) float64 {
	c := slices.Clone(pts)
	sort.Slice(c, func(a, b int) bool { return c[a].Knob < c[b].Knob })
	best := math.Inf(1)
	for i, p := range c {
		if p.Cosine >= 0.99 {
			best = min(best, p.BitsPerState)
		}
		if i+1 < len(c) {
			a, b := p, c[i+1]
			if (a.Cosine < 0.99) != (b.Cosine < 0.99) && a.Cosine != b.Cosine {
				x := a.BitsPerState + (b.BitsPerState-a.BitsPerState)*(0.99-a.Cosine)/(b.Cosine-a.Cosine)
				best = min(best, x)
			}
		}
	}
	return best
}

// usefulMax bounds the distortions over which overheads are also averaged
// separately: beyond about 0.1 a reconstruction has lost a tenth of its
// energy and its slot cosines fall below about 0.95.
const usefulMax = 0.1

// frontier returns the points no other point beats on both rate and
// distortion, by increasing distortion.
func frontier(pts []*RDPoint) []*RDPoint {
	c := slices.Clone(pts)
	sort.SliceStable(c, func(i, j int) bool {
		if c[i].Distortion != c[j].Distortion {
			return c[i].Distortion < c[j].Distortion
		}
		return c[i].BitsPerState < c[j].BitsPerState
	})
	var f []*RDPoint
	for _, p := range c {
		if len(f) == 0 || p.BitsPerState < f[len(f)-1].BitsPerState {
			f = append(f, p)
		}
	}
	return f
}

// rateAt interpolates a frontier's rate at distortion d linearly.
func rateAt(f []*RDPoint, d float64) float64 {
	if d <= f[0].Distortion {
		return f[0].BitsPerState
	}
	for i := 1; i < len(f); i++ {
		if d <= f[i].Distortion {
			a, b := f[i-1], f[i]
			u := (d - a.Distortion) / (b.Distortion - a.Distortion)
			return a.BitsPerState + u*(b.BitsPerState-a.BitsPerState)
		}
	}
	return f[len(f)-1].BitsPerState
}

// PrintRD prints the report as a table.
func PrintRD(w io.Writer, rep *RDReport) {
	fmt.Fprintf(w, "%s: %d test states, %dx%d K=%d; lossless %.1f bits/state (raw %.0f)\n", rep.Info.Input, rep.Info.TestStates,
		rep.Info.Slots, rep.Info.Subspaces, rep.Info.Alphabet, rep.LosslessBits, rep.RawBits)
	fmt.Fprintf(w, "%s\n\nrate at matched distortion (bits/state):\n%-10s", rep.Info.Space, "distortion")
	for _, pol := range policy.All() {
		fmt.Fprintf(w, " %12s", pol)
	}
	fmt.Fprintln(w)
	for _, mt := range rep.Matched {
		fmt.Fprintf(w, "%-10.5f", mt.Distortion)
		for _, pol := range policy.All() {
			fmt.Fprintf(w, " %12.1f", mt.Bits[string(pol)])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%-10s", "mean over")
	for _, pol := range policy.All() {
		fmt.Fprintf(w, " %+11.1f%%", 100*rep.MeanOverhead[string(pol)])
	}
	fmt.Fprintf(w, "\n%-10s", fmt.Sprintf("D<=%.2g", rep.UsefulMax))
	for _, pol := range policy.All() {
		fmt.Fprintf(w, " %+11.1f%%", 100*rep.UsefulOver[string(pol)])
	}
	fmt.Fprintln(w)
	if p := rep.Cos99; p != nil {
		fmt.Fprintf(w, "\nrule at cosine >= 0.99: lambda %.4g, %.1f bits/state = %.1f%% of lossless (distortion %.5f, cosine %.4f, retained %.3f)\n",
			p.Knob, p.BitsPerState, 100*rep.Cos99Ratio, p.Distortion, p.Cosine, p.Retained)
		fmt.Fprintf(w, "rule at cosine 0.99, interpolated between neighbouring lambdas: %.1f bits/state = %.1f%% of lossless\n",
			rep.Cos99Interp, 100*rep.Cos99InterpRatio)
		for name, m := range rep.FillVsCopy {
			fmt.Fprintf(w, "  %-16s distortion %.5f  cosine %.4f  cosine of filled slots %.4f  omitted codes exact %.3f\n", name, m.Distortion, m.Cosine, m.CosineFilled, m.ExactFill)
		}
	}
	fmt.Fprintf(w, "decoder == writer on every state of every file: %v (%.1f s per encode+decode)\n", rep.AllDecodesOK, rep.SecondsPerRun)
}

// plotMax is the largest distortion plotted: beyond it reconstructions are
// of no use and the curves only crowd the interesting part.
const plotMax = 0.3

// PlotRD draws each policy's points, rate against distortion.
func PlotRD(path string, rep *RDReport, title string) error {
	cols := []color.RGBA{{R: 200, A: 255}, {G: 140, A: 255}, {B: 200, A: 255}, {R: 200, G: 140, A: 255}, {R: 140, B: 160, A: 255}}
	panel := func(xlabel string, x func(*RDPoint) float64, keep func(*RDPoint) bool, front func([]*RDPoint) []*RDPoint, legend bool) (*plot.Plot, error) {
		p := plot.New()
		p.X.Label.Text = xlabel
		p.Y.Label.Text = "bits/state"
		for i, pol := range policy.All() {
			var all plotter.XYs
			var pts []*RDPoint
			for _, pt := range rep.Points {
				if pt.Policy == string(pol) && keep(pt) {
					all = append(all, plotter.XY{X: x(pt), Y: pt.BitsPerState})
					pts = append(pts, pt)
				}
			}
			if len(all) == 0 {
				continue
			}
			// The lower frontier as a line, every point marked.
			var line plotter.XYs
			for _, pt := range front(pts) {
				line = append(line, plotter.XY{X: x(pt), Y: pt.BitsPerState})
			}
			sort.Slice(line, func(a, b int) bool { return line[a].X < line[b].X })
			l, err := plotter.NewLine(line)
			if err != nil {
				return nil, err
			}
			sc, err := plotter.NewScatter(all)
			if err != nil {
				return nil, err
			}
			l.Color, sc.Color = cols[i], cols[i]
			l.Width = vg.Points(1.5)
			if i > 0 {
				l.Dashes = []vg.Length{vg.Points(float64(2 + i)), vg.Points(2)}
			}
			p.Add(l, sc)
			if legend {
				p.Legend.Add(string(pol), l, sc)
			}
		}
		p.Legend.Top = true
		return p, nil
	}
	dp, err := panel("distortion against the lossless reconstruction", func(pt *RDPoint) float64 { return pt.Distortion },
		func(pt *RDPoint) bool { return pt.Distortion <= plotMax }, frontier, true)
	if err != nil {
		return err
	}
	dp.Title.Text = "rate–distortion: " + filepath.Base(title)
	cp, err := panel("mean slot cosine to the lossless reconstruction", func(pt *RDPoint) float64 { return pt.Cosine },
		func(pt *RDPoint) bool { return pt.Cosine >= plotCosine }, cosineFrontier, false)
	if err != nil {
		return err
	}
	cp.Title.Text = fmt.Sprintf("lossless %.1f bits/state", rep.LosslessBits)
	if rep.Cos99 != nil {
		// The cosine the docs quote.
		l, err := plotter.NewLine(plotter.XYs{{X: 0.99, Y: 0}, {X: 0.99, Y: rep.LosslessBits}})
		if err == nil {
			l.Color = color.Gray{Y: 160}
			l.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
			cp.Add(l)
		}
	}
	const w, h = 11 * vg.Inch, 4.5 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(12), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	for i, p := range []*plot.Plot{dp, cp} {
		p.Draw(tiles.At(dc, i, 0))
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, buf.Bytes())
}

// cosineFrontier returns the points no other point beats on both rate and
// mean slot cosine, by decreasing cosine.
func cosineFrontier(pts []*RDPoint) []*RDPoint {
	c := slices.Clone(pts)
	sort.SliceStable(c, func(i, j int) bool {
		if c[i].Cosine != c[j].Cosine {
			return c[i].Cosine > c[j].Cosine
		}
		return c[i].BitsPerState < c[j].BitsPerState
	})
	var out []*RDPoint
	for _, p := range c {
		if len(out) == 0 || p.BitsPerState < out[len(out)-1].BitsPerState {
			out = append(out, p)
		}
	}
	return out
}

// plotCosine is the least mean slot cosine the cosine panel shows.
const plotCosine = 0.95
