package alloc

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/check"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/rdcode"
	"github.com/wmzip/wmzip/internal/wm"
)

// Storage by access for a codec coded by rate and distortion: a codec
// with a quantizer and no retention gate, by default a family (bundle) of
// members, each a product quantizer and a world model. The method is the
// gated one (package doc); what differs:
//
//   - One member writes the file (its header names it, and the bundle
//     decodes it with that member). Which one is chosen by measuring, not
//     by the calibration alone (chooseMember); the tail guard then holds
//     the least-read half to the better of the measured members'
//     access-blind files.
//   - A level is a λ of the coder (format.Writer.WriteStateRD's lam,
//     distortion units a bit): the ladder's 15 finite levels are placed
//     geometrically in lam where the file's rate moves, and the top level
//     is lam = 0, the member's own codes (its "lossless" level, which
//     still loses what the quantizer loses). In lambda space a level's λ
//     is DistUnit/lam, the bits a unit of a slot vector's relative
//     distortion is worth, the price the coder itself trades at: the
//     Lagrangian argument for λ_i ∝ c_i holds as for the gate. A level
//     whose file costs no fewer bits and loses no less than another's is
//     dropped (Ladder.pareto), so a ladder may have fewer than 16 levels.
//   - The states of a group crossing a ladder λ together are raised by
//     access-weighted distortion saved per bit (fitScale), not by
//     distortion saved per bit alone.
//   - A state's distortion is measured, not taken from the writer's
//     account: Writer.LastAccount's Cost is right for these states (its
//     sum over a file plus a constant framing is the file's size), but its
//     DistSum is 0 (there is no gate) and its Distortion is against the
//     member's own codes, through the writer's Measure (or, without one,
//     the fraction of values changed), never against the source floats.
//     So each state's distortion is Σ over its slot vectors of
//     ‖x − x̂‖²/‖x‖², x̂ the reconstruction Writer.LastState returns and x
//     the state's reference: its source floats when the episode has
//     observations, else the finest quantizer's reconstruction of its
//     codes. It is what the coder minimizes (rdcode.Costs against the same
//     reference), and what Stored reports and the allocation weighs.
//   - The file records no levels: each state's λ is the encoder's choice,
//     and the decoder is the lossless one.

// coarseLams is the first pass of a ladder coded by rate and distortion:
// the coder's λ from 2^24 (a bit is worth a whole slot vector's squared
// norm: about everything is copied from the predictions) down to 2^3
// (about nothing moves), three octaves apart, and 0, the member's own
// codes. Rate moves between about 2^8 and 2^22 on the walks of
// internal/walks, over every member.
var coarseLams = []uint64{1 << 24, 1 << 21, 1 << 18, 1 << 15, 1 << 12, 1 << 9, 1 << 6, 1 << 3, 0}

// RDLambdaString prints the public λ of the coder's λ lam: DistUnit/lam,
// the bits a unit of a slot vector's relative distortion is worth (the λ
// of wmzip.WithLambda), or "inf" for lam = 0, the quantizer's own codes.
func RDLambdaString(lam uint64) string {
	if lam == 0 {
		return "inf"
	}
	return fmt.Sprintf("%.4g", format.DistUnit/float64(lam))
}

// rdSet is a file's states as one member codes them.
type rdSet struct {
	mem    *wmzip.Codec
	q      *opq.Quantizer
	m      *wm.Model
	lens   []int       // states per episode
	acts   []int64     // per state
	own    [][]uint16  // per state: the member's codes of its reference
	rot    [][]float32 // per state: its reference, rotated as q sees it
	source []bool      // per state: the reference is its source floats
	slots  int         // slot vectors a state
}

// rdRefs returns the reference vectors of the states of eps (not
// rotated), an episode's states together, and whether each state's (in
// file order) is its source floats: its observations when it has them,
// else the reconstruction of its codes by c's (finest) quantizer — as the
// codec's own Writer takes them for a λ.
func rdRefs(c *wmzip.Codec, eps []wmzip.Episode) (refs [][]float32, source []bool, lens []int, acts []int64, err error) {
	q := c.Quantizer()
	per := c.Slots() * q.Dim()
	n := c.Model().Geom.N()
	for i := range eps {
		e := &eps[i]
		T := len(e.Actions)
		var all []float32
		src := e.Obs != nil
		if src {
			if len(e.Obs) != T*per {
				return nil, nil, nil, nil, fmt.Errorf("%w: episode %d: %d observation values for %d states of %d slot vectors of %d", wmzip.ErrInput, i, len(e.Obs), T, c.Slots(), q.Dim())
			}
			if err := check.Finite(e.Obs, c.Slots(), q.Dim(), 0, fmt.Sprintf("episode %d", i), nil); err != nil {
				return nil, nil, nil, nil, err
			}
			all = e.Obs
		} else {
			if len(e.Codes) != T*n {
				return nil, nil, nil, nil, fmt.Errorf("%w: episode %d: %d actions (one per state) but %d codes, %d a state", wmzip.ErrInput, i, T, len(e.Codes), n)
			}
			if all, err = c.Reconstruct(nil, e.Codes); err != nil {
				return nil, nil, nil, nil, fmt.Errorf("episode %d: %w", i, err)
			}
		}
		refs = append(refs, all[:T*per:T*per])
		for range T {
			source = append(source, src)
		}
		lens = append(lens, T)
		acts = append(acts, e.Actions...)
	}
	return refs, source, lens, acts, nil
}

// newRDSet returns the states whose references are refs (an episode's
// together) as member mem codes them. A member's quantizer without a
// rotation (a family's) sees the references as they are: they are not
// copied.
func newRDSet(mem *wmzip.Codec, refs [][]float32, source []bool, lens []int, acts []int64) (*rdSet, error) {
	s := &rdSet{mem: mem, q: mem.Quantizer(), m: mem.Model(), lens: lens, acts: acts, source: source, slots: mem.Slots()}
	n := s.m.Geom.N()
	per := s.slots * s.q.Dim()
	s.own, s.rot = make([][]uint16, 0, len(acts)), make([][]float32, 0, len(acts))
	for k, ref := range refs {
		T := lens[k]
		own := make([]uint16, T*n)
		rot, out := ref, []float32(nil)
		if s.q.Rotated() {
			rot = make([]float32, len(ref))
			out = rot
		}
		if err := s.q.EncodeRotated(ref, own, out); err != nil {
			return nil, fmt.Errorf("%w: %v", wmzip.ErrInput, err)
		}
		for t := range T {
			s.own = append(s.own, own[t*n:(t+1)*n:(t+1)*n])
			s.rot = append(s.rot, rot[t*per:(t+1)*per:(t+1)*per])
		}
	}
	return s, nil
}

// states returns the number of states of s.
func (s *rdSet) states() int { return len(s.acts) }

// slotMeasure is the writer's measure of what coding by rate and
// distortion changes in a slot of the world model, against the member's
// own codes: the mean over the slot vectors the slot holds (a slot may
// hold several, their codes side by side) of the squared distance of the
// two reconstructions over the squared norm of the codes' own. For a slot
// of one slot vector it is the codec's own Writer's measure.
type slotMeasure struct{ q *opq.Quantizer }

func (m slotMeasure) Slot(_, _, s int, truth, recon []uint16) float64 {
	qm := m.q.M()
	per := max(len(truth)/qm, 1)
	var d float64
	for i := range per {
		d += m.q.SlotDistortion(s*per+i, truth[i*qm:(i+1)*qm], recon[i*qm:(i+1)*qm])
	}
	return d / float64(per)
}

// encode writes the states of s to w, state i coded by rate and
// distortion at the coder's λ lam(i). after, if not nil, is told of each
// state's account, reconstruction and distortion (Σ over its slot vectors
// of ‖x − x̂‖²/‖x‖² against its reference). The file's report holds the
// distortion against the source floats of the states that have them, and
// what the coding changed against the member's own codes.
func (s *rdSet) encode(w io.Writer, lam func(i int) uint64, after func(i int, a format.StateAccount, recon []uint16, d float64), opts ...format.Option) (format.Account, format.Header, error) {
	n := s.m.Geom.N()
	head := 0
	place := func(recon []uint16) format.Report {
		var add opq.Quality
		for k := 0; k+n <= len(recon) && head < len(s.rot); k += n {
			if s.source[head] {
				a, _ := s.q.CompareRotated(s.rot[head], recon[k:k+n])
				add = add.Add(a)
			}
			head++
		}
		return format.Report{SourceSlots: uint64(add.Vectors), Source: add.SumErr, Cosine: add.SumCos}
	}
	o := append([]format.Option{format.WithMeasure(slotMeasure{s.q}), format.WithSource(place)}, opts...)
	fw, err := format.NewWriter(w, s.m, o...)
	if err != nil {
		return format.Account{}, format.Header{}, err
	}
	var recon []uint16
	i := 0
	for _, T := range s.lens {
		if err := fw.WriteEpisode(nil); err != nil {
			return format.Account{}, format.Header{}, err
		}
		for range T {
			if err := fw.WriteStateRD(s.acts[i], s.own[i], rdcode.Costs{Q: s.q, Ref: s.rot[i]}, lam(i)); err != nil {
				return format.Account{}, format.Header{}, err
			}
			if after != nil {
				recon = fw.LastState(recon)
				qu, err := s.q.CompareRotated(s.rot[i], recon)
				if err != nil {
					return format.Account{}, format.Header{}, err
				}
				after(i, fw.LastAccount(), recon, qu.SumErr)
			}
			i++
		}
	}
	if err := fw.Close(); err != nil {
		return format.Account{}, format.Header{}, err
	}
	return fw.Account(), fw.Header(), nil
}

// measureLadder encodes s once per level of lams, every state at that
// level, on up to workers goroutines.
func (s *rdSet) measureLadder(keyframe int, lams []uint64, workers int, logf func(string, ...any)) (*Ladder, error) {
	T := s.states()
	q := len(lams)
	l := &Ladder{Lams: lams, States: T}
	err := l.measure(q, T, workers, func(lv int, cw io.Writer, cost, dist []uint64) error {
		_, _, err := s.encode(cw, func(int) uint64 { return lams[lv] },
			func(i int, a format.StateAccount, _ []uint16, d float64) {
				cost[i], dist[i] = a.Cost, uint64(math.Round(d*format.DistUnit))
			}, format.WithKeyframeInterval(keyframe))
		return err
	})
	if err != nil {
		return nil, err
	}
	for lv := range q {
		var sum, dist uint64
		for i, c := range l.Cost[lv] {
			sum += c
			dist += l.Dist[lv][i]
		}
		l.Framing = max(l.Framing, l.FileBits[lv]-float64(sum)/65536)
		if logf != nil {
			logf("  level %2d  lambda %-9s %8.1f bits/state, distortion %.4g", lv, RDLambdaString(lams[lv]), l.FileBits[lv]/float64(max(T, 1)), float64(dist)/format.DistUnit/float64(max(T*s.slots, 1)))
		}
	}
	return l, nil
}

// fineLadder measures the 15 finite levels of s, placed geometrically in
// the coder's λ where the rate of the first pass coarse moves (rateSpan,
// as FitLadder), and the member's own codes.
func (s *rdSet) fineLadder(coarse *Ladder, keyframe, workers int, logf func(string, ...any)) (*Ladder, error) {
	lo, hi := rateSpan(coarse.FileBits)
	a, b := float64(coarse.Lams[lo]), float64(coarse.Lams[hi]) // a > b > 0
	lams := make([]uint64, 0, ladderFinite+1)
	for k := range ladderFinite {
		v := uint64(math.Round(a * math.Pow(b/a, float64(k)/float64(ladderFinite-1))))
		if len(lams) > 0 && v >= lams[len(lams)-1] {
			v = lams[len(lams)-1] - 1
		}
		lams = append(lams, max(v, 1))
	}
	if logf != nil {
		logf("ladder: 15 levels from λ = %s to %s, and the quantizer's own codes:", RDLambdaString(lams[0]), RDLambdaString(lams[len(lams)-1]))
	}
	l, err := s.measureLadder(keyframe, append(lams, 0), workers, logf)
	if err != nil {
		return nil, err
	}
	return l.pareto(logf), nil
}

// pareto returns the levels of l that no other level beats: a level whose
// file has at least the bits of another's and at least its distortion,
// one of them more, is dropped (the member's own codes are always kept).
// Coding by rate and distortion under a world model need not be monotone
// in λ — a state coded coarsely makes the next ones dearer to predict —
// and a level the plan would take for its λ but that costs more and loses
// more than another is never worth it.
func (l *Ladder) pareto(logf func(string, ...any)) *Ladder {
	q := len(l.Lams)
	d := make([]float64, q)
	for lv := range q {
		for _, x := range l.Dist[lv] {
			d[lv] += float64(x)
		}
	}
	out := &Ladder{States: l.States}
	for k := range q {
		beaten := -1
		for j := range q {
			if j != k && l.FileBits[j] <= l.FileBits[k] && d[j] <= d[k] && (l.FileBits[j] < l.FileBits[k] || d[j] < d[k]) {
				beaten = j
				break
			}
		}
		if beaten >= 0 && l.Lams[k] != 0 {
			if logf != nil {
				logf("  level %d (λ = %s) dropped: level %d (λ = %s) costs no more bits and loses no more", k, RDLambdaString(l.Lams[k]), beaten, RDLambdaString(l.Lams[beaten]))
			}
			continue
		}
		out.Lams = append(out.Lams, l.Lams[k])
		out.Cost = append(out.Cost, l.Cost[k])
		out.Dist = append(out.Dist, l.Dist[k])
		out.FileBits = append(out.FileBits, l.FileBits[k])
		var sum uint64
		for _, c := range l.Cost[k] {
			sum += c
		}
		out.Framing = max(out.Framing, l.FileBits[k]-float64(sum)/65536)
	}
	return out
}

// encodeLevels encodes s closed loop with state i at lams[levels[i]].
func (s *rdSet) encodeLevels(keyframe int, lams []uint64, levels []int, opts []format.Option) (*Result, error) {
	T := s.states()
	n := s.m.Geom.N()
	r := &Result{Levels: levels, Accounts: make([]format.StateAccount, T), Recon: make([]uint16, 0, T*n), Dist: make([]float64, T), Counts: make([]int, len(lams))}
	var buf bytes.Buffer
	acct, h, err := s.encode(&buf, func(i int) uint64 { return lams[levels[i]] },
		func(i int, a format.StateAccount, recon []uint16, d float64) {
			a.Level = levels[i] // the writer's is 0: the file has no levels
			r.Accounts[i] = a
			r.Recon = append(r.Recon, recon...)
			r.Dist[i] = d / float64(s.slots)
		}, append([]format.Option{format.WithKeyframeInterval(keyframe)}, opts...)...)
	if err != nil {
		return nil, err
	}
	r.File = buf.Bytes()
	r.Report = acct.Report
	r.Bits = float64(int64(len(r.File))-h.ModelSize) * 8
	for _, lv := range levels {
		r.Counts[lv]++
	}
	return r, nil
}

// calibratedDistortion returns the distortion a member's calibration
// reaches at bits b a state: along the lower envelope of its points by
// bits (linear between neighbours), +Inf when every point costs more.
func calibratedDistortion(cal []wmzip.RatePoint, b float64) float64 {
	ps := slices.Clone(cal)
	slices.SortStableFunc(ps, func(x, y wmzip.RatePoint) int { return cmpFloat(x.BitsPerState, y.BitsPerState) })
	best := math.Inf(1)
	for i, p := range ps {
		if p.BitsPerState <= b {
			best = min(best, p.Distortion)
		}
		if i+1 < len(ps) && p.BitsPerState <= b && b < ps[i+1].BitsPerState {
			o := ps[i+1]
			f := (b - p.BitsPerState) / (o.BitsPerState - p.BitsPerState)
			best = min(best, p.Distortion+f*(o.Distortion-p.Distortion))
		}
	}
	return best
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// rankByCalibration returns the indexes of members ordered by the
// distortion their calibration reaches at budget bits a state, least
// first; members whose calibration does not reach the budget come after,
// cheapest calibrated rate first.
func rankByCalibration(ms []*wmzip.Codec, budget float64) []int {
	type ranked struct {
		i          int
		dist, bits float64
	}
	rs := make([]ranked, len(ms))
	for i, m := range ms {
		cal := m.Calibration()
		rs[i] = ranked{i, calibratedDistortion(cal, budget), math.Inf(1)}
		for _, p := range cal {
			rs[i].bits = min(rs[i].bits, p.BitsPerState)
		}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		if c := cmpFloat(a.dist, b.dist); c != 0 {
			return c
		}
		return cmpFloat(a.bits, b.bits)
	})
	out := make([]int, len(rs))
	for k, r := range rs {
		out[k] = r.i
	}
	return out
}

// candidates returns the members chooseMember measures: the one the
// calibration ranks first at the budget, and its finer neighbour (its
// coarser one when it is the finest).
func candidates(ms []*wmzip.Codec, budget float64) []int {
	best := rankByCalibration(ms, budget)[0]
	switch {
	case best+1 < len(ms):
		return []int{best, best + 1}
	case best > 0:
		return []int{best, best - 1}
	}
	return []int{best}
}

// memberPlan is what chooseMember predicts of one member.
type memberPlan struct {
	s          *rdSet
	coarse     *Ladder
	index      int
	weighted   float64 // the plan's predicted access-weighted (or mean) distortion
	tail       float64 // its least-read half's predicted distortion (Σ, DistUnit)
	blindTail  float64 // the same under one λ for every state
	guardScale float64
}

// chooseMember returns the member that writes the file, its states and
// first-pass ladder, and the scale of its tail guard.
//
// Two members are measured, not one taken from the calibration: the
// calibration (each member's rate and distortion at a few λ on episodes
// held out of training, one λ for every state) ranks the members for one
// λ for all at the budget, which is the access-blind allocation, and on
// other episodes than these. Storage by access gives the states read
// often a finer λ than that: near a coarse member's own rate, the coarse
// member is best for one λ for all, but the next finer one may give the
// often-read states far less distortion for the bits the rest can spare
// (on the walks of internal/walks with every other state read, at 250
// bits/state without a tail guard, the finer member's access-weighted
// distortion is about half the coarser's). So the member the calibration ranks first at the budget and
// its finer neighbour (candidates) are each measured on the file itself,
// a first ladder pass each (9 encodings), and the allocation is planned
// on both with the file's access weights and tail guard; the member of
// the least predicted access-weighted distortion writes the file (the
// mean distortion when there are no accesses or τ = 0). A member coarser
// than the calibration's first is not measured (unless that one is the
// finest): it is worse at one λ for all at this budget, so worse for the
// access-blind file the tail guard holds the least-read states to, and no
// better for the states read most, which storage by access gives a finer
// λ than that.
//
// The tail guard is held against the better of the two access-blind
// files: a member qualifies only if its guarded plan keeps the least-read
// half within the guard's factor of the least tail distortion one λ for
// every state gives with either member, so that a member is not taken
// for its often-read states when one λ for all with the other would serve
// the rest far better. The chosen member's guard is then scaled to that
// bound (guardScale). The member of the better access-blind file always
// qualifies.
func chooseMember(c *wmzip.Codec, eps []wmzip.Episode, counts []int64, ranks []int, cfg Config, workers int, logf func(string, ...any)) (*memberPlan, error) {
	refs, source, lens, acts, err := rdRefs(c, eps)
	if err != nil {
		return nil, err
	}
	ms := c.Members()
	T := len(acts)
	total := cfg.Budget * float64(T)
	var weighed int64
	if cfg.Tau > 0 {
		for _, n := range counts {
			weighed += n
		}
	}
	lowest, lowestLam := math.Inf(1), uint64(0)
	var plans []*memberPlan
	for _, mi := range candidates(ms, cfg.Budget) {
		if cfg.Context != nil {
			if err := cfg.Context.Err(); err != nil {
				return nil, err
			}
		}
		mem := ms[mi]
		if logf != nil {
			g := mem.Geometry()
			logf("member %d (%d slot vectors x %d codes of K=%d), ladder, first pass:", mi, g.S, g.M, g.K)
		}
		s, err := newRDSet(mem, refs, source, lens, acts)
		if err != nil {
			return nil, err
		}
		l, err := s.measureLadder(cfg.Keyframe, coarseLams, workers, logf)
		if err != nil {
			return nil, err
		}
		if low := l.FileBits[0] / float64(max(T, 1)); low < lowest {
			lowest, lowestLam = low, l.Lams[0]
		}
		// The plan on the levels no other beats; the fine ladder is
		// placed by the first pass whole.
		pl := l.pareto(nil)
		p, err := planFor(pl, ranks, total, cfg)
		if err != nil {
			return nil, err
		}
		levels, _, ok := p.fit(total)
		if !ok {
			if logf != nil {
				logf("member %d: the budget is below its lowest level's rate", mi)
			}
			continue
		}
		mp := &memberPlan{s: s, coarse: l, index: mi}
		var n float64
		for i, lv := range levels {
			x := float64(pl.Dist[lv][i]) / format.DistUnit / float64(s.slots)
			w := 1.0
			if weighed > 0 {
				w = float64(counts[i])
			}
			mp.weighted += w * x
			n += w
		}
		mp.weighted /= n
		if g := p.guard; g != nil {
			blind, _, _ := g.uniform.fitScale(total)
			mp.tail, mp.blindTail = p.tailDist(levels), p.tailDist(blind)
		}
		if logf != nil {
			what := "access-weighted"
			if weighed == 0 {
				what = "mean"
			}
			logf("member %d: predicted %s distortion %.5g at the budget", mi, what, mp.weighted)
		}
		plans = append(plans, mp)
	}
	if len(plans) == 0 {
		return nil, fmt.Errorf("%w: %.1f bits/state at λ = %s > budget %.6g", ErrBudget, lowest, RDLambdaString(lowestLam), cfg.Budget)
	}
	ref := plans[0]
	for _, mp := range plans {
		if mp.blindTail < ref.blindTail {
			ref = mp
		}
	}
	best := ref
	for _, mp := range plans {
		qualifies := mp.tail <= cfg.Guard*ref.blindTail*(1+1e-9) || cfg.Guard == 0 || cfg.Tau == 0
		if qualifies && mp.weighted < best.weighted {
			best = mp
		}
	}
	if best != ref && best.blindTail > 0 {
		best.guardScale = ref.blindTail / best.blindTail
	}
	if logf != nil && len(plans) > 1 {
		logf("member %d writes the file", best.index)
	}
	return best, nil
}
