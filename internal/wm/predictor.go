package wm

import (
	"math"
	"math/bits"

	"github.com/wmzip/wmzip/internal/fixed"
	"github.com/wmzip/wmzip/internal/rans"
)

// Predictor runs the model over one stream of states. The writer and the
// reader each drive their own Predictor through the same calls with the same
// reconstructed values, so both see the same predictions.
//
// Call sequence for every state:
//
//	p.Begin(action)
//	for j := 0; j < N; j++ {
//		top, hit := p.Predict(j)
//		// hit > 0: code "v == top" with frequency hit, then, on a miss,
//		// v with p.Table() (the table of the other values).
//		// hit == 0: code v with p.Table().
//		p.Commit(j, v)
//	}
//
// Reset forgets the history (keyframe or episode start); the next state is
// then predicted without history ("intra"), and its action is ignored.
// A Predictor is not safe for concurrent use.
type Predictor struct {
	level // the predictor of the model's level, chosen once by NewPredictor
}

// level is the predictor of one model level: fullPredictor (LevelFull),
// copyPredictor (LevelCopy) or fastPredictor (LevelFast). The methods are
// Predictor's; the level is chosen once per predictor, so no call on the
// path of a coordinate asks which level it runs.
type level interface {
	Reset()
	Begin(action int64)
	Predict(j int) (top uint16, hit uint32)
	Table() []uint16
	Prediction() (top uint16, hit uint32)
	ModalFreq() (uint16, uint32)
	Row() (key uint64, f1 []uint16)
	Precision() uint
	Model() *Model
	Commit(j int, v uint16)
	CommitOmitted(j int, v uint16)
	SlotEvents() bool
	SlotTable(j int) []uint16
	SlotSymbol(tile []uint16) int
	SlotCandidate(i int) []uint16
	CommitSlot(sym int) []uint16
	DecodeSlot(d *rans.Decoder, lane int) ([]uint16, uint64)

	atSlotStart(j int) bool // j is the next coordinate and a slot's first
	bestTile() []uint16
}

// core is what the predictors of every level hold: the model, the
// coordinate about to be predicted, its prediction and fallback row, and
// the history of the chunk.
type core struct {
	m       *Model
	n, S, M int
	K       int
	prec    uint
	unif    uint64 // 2^16 / K, the uniform frequency at precision 16

	// The coordinate about to be predicted (or committed): j = s·M + mm
	// of state t, the current state.
	j, s, mm int
	t        int
	base     int // t·n
	bucket   int // the action bucket of state t

	pred prediction // the current coordinate's prediction
	fall fallRow    // and its fallback row

	hist history
}

// fullPredictor is the predictor of the full level (SPEC.md 4.1–4.14):
// every coordinate is predicted by a mixture of hypotheses.
type fullPredictor struct {
	core

	// The hypotheses of the slot (SPEC.md 4.2): the groups, the new-content
	// hypothesis, and the virtual ones of classes ep, dict and succany.
	grp  groupList
	lNew int32        // lwNew
	maxC int32        // the largest of lNew and the groups' log-weights
	ep   episodeTiles // EP, and the virtual hypothesis of class ep
	dict dictHyp
	any  succAny // the succany layout, and its virtual hypothesis
	inc  commitIncs

	stats chunkStats    // the class statistics, rates and priors
	succ  successors    // ANCH and SUCC
	cont  continuations // CP

	best []uint16 // tile of the best group at the end of the last slot, or nil
}

// prediction is what Predict and Table compute for the current
// coordinate (SPEC.md 4.11).
type prediction struct {
	maxL    int32    // maxLW
	virt    bool     // a virtual hypothesis predicts this coordinate
	alpha   uint64   // α, the weight of f[v] in w[v]
	beta    uint64   // γ, the weight of every value in w[v]
	spikes  uint64   // SP, Σ_v acc[v]
	acc     []uint64 // per value: Σ over the groups predicting it of gw·(65536 − ec)
	touched []uint16 // the values whose acc is set
	mark    []uint32 // per value: stamp when touched
	stamp   uint32
	top     uint16
	hit     uint32
	tab     []uint16 // Table's result, or nil
	modal   uint16
	modalF  uint32
	modalOK bool // modal and modalF hold for the coordinate

	w   []uint64 // Table's weights
	wq  []uint32 // the weights Table quantizes
	cum []uint16 // Table's table
}

// commitIncs are Commit's per-class increments of a group's log-weight on
// a match and on a mismatch, each made when first needed.
type commitIncs struct {
	mat, mis [nClasses]int32
}

// pruneBits is how far (in bits) below the best hypothesis a group may
// fall before it is dropped.
const pruneBits = 20

// slotBackoff is the weight, in observations, of the bucket's class
// frequencies against the slot's own.
const slotBackoff = 64

// ctxBackoff is the weight, in observations, of the slot's class
// frequencies against those after the previous slot's class.
const ctxBackoff = 4

// succActBoost multiplies the weight of a successor state led into by an
// action of the current state's bucket.
const succActBoost = 8

// contBits and contCap select the matches a slot's continuations follow.
const (
	contBits = 8
	contCap  = 8
)

// rowCacheBytes bounds the memory of a predictor's cache of combined
// fallback rows. Small on purpose: with the vector kernels a combined row
// costs about as much to recompute as to fetch from a cache beyond the
// first cache levels (a 2 MiB cache decoded web-pgdocs 12% slower than
// none), and the rows recur mostly in quick succession.
const rowCacheBytes = 32 << 10

// NewPredictor returns a Predictor with empty history, of the model's
// level.
func (m *Model) NewPredictor() *Predictor {
	g := m.Geom
	K := g.K
	c := core{
		m: m, n: g.N(), S: g.S, M: g.M, K: K, prec: m.Precision,
		unif: 1 << 16 / uint64(K),
		pred: prediction{
			acc:     make([]uint64, K),
			mark:    make([]uint32, K),
			touched: make([]uint16, 0, K+1), // room for one write past the values listed
			w:       make([]uint64, K),
			wq:      make([]uint32, K),
			cum:     make([]uint16, K),
		},
		fall: fallRow{w: make([]uint32, K)},
	}
	if m.fall2Ctx > 0 {
		c.fall.cache = newRowCache(K, rowCacheBytes)
	}
	var lv level
	switch m.level {
	case LevelFast:
		lv = &fastPredictor{core: c, fast: newFastState(m)}
	case LevelCopy:
		lv = &copyPredictor{fullPredictor: newFullPredictor(c), cp: &copyState{}}
	default:
		f := newFullPredictor(c)
		lv = &f
	}
	lv.Reset()
	return &Predictor{lv}
}

// newFullPredictor returns the predictor of the full level over c.
func newFullPredictor(c core) fullPredictor {
	m := c.m
	p := fullPredictor{
		core: c,
		ep:   newEpisodeTiles(c.K),
		any:  newSuccAny(m),
	}
	p.grp.batch = newKeyIndex(contCap) // only the continuations join by content id
	p.succ.idx = newKeyIndex(m.Geom.S * max(m.occCap, 1))
	return p
}

// PredictorBytes bounds the memory a Predictor of m holds once it has run
// chunks of up to states states (growth slack included), for callers that
// keep predictors alive (a cache of partly decoded chunks).
func (m *Model) PredictorBytes(states int) int64 {
	g := m.Geom
	K, N, S := int64(g.K), int64(g.N()), int64(g.S)
	b := int64(64<<10) + 96*K // the per-value arrays
	if m.fall2Ctx > 0 {
		c := newRowCacheSize(g.K, rowCacheBytes)
		b += int64(c) * (2*K + 8)
	}
	batch := int64(maxBatch(m))
	b += 2 * 2 * batch * 16         // the entries' and the batch's indexes, doubled to powers of two
	b += 2 * 2 * S * 32 * 16        // the anchor index
	b += 2 * batch * (64 + 16 + 48) // groups, members, entries and items
	b += int64(states) * 2 * (2*N + 1 + 48*S)
	b += 2 * 8 * (int64(len(m.tileRep)) + int64(states)*S) // succany's map per content id, growth slack included
	return b
}

// maxBatch bounds the candidates of one class formed at once.
func maxBatch(m *Model) int {
	return max(m.succCap, m.anchorCap)*m.Geom.S + dictCap + histCap + contCap + 2
}

// Model returns the model the predictor runs.
func (p *core) Model() *Model { return p.m }

// atSlotStart reports whether j is the next coordinate and the first of
// its slot.
func (p *core) atSlotStart(j int) bool { return j == p.j && p.mm == 0 }

// Modal returns the value of highest probability at the current
// coordinate (after Predict): top for a two-step coordinate, else the
// value of highest frequency in Table, the lowest among equals. It is the
// value an omitted coordinate takes.
func (p *Predictor) Modal() uint16 {
	v, _ := p.ModalFreq()
	return v
}

// CopySlot is the slot event for a caller that knows the slot's tile and
// codes nothing (calibration, reference reconstructions): at the first
// coordinate j of a slot of a model with slot events it commits the event
// of tile and reports whether the event copied the tile whole, the next
// coordinate then being the next slot's first. Anywhere else, or when the
// slot has no candidate, it reports false and the slot's coordinates
// follow (after an escape, too).
func (p *Predictor) CopySlot(j int, tile []uint16) bool {
	if !p.SlotEvents() || !p.atSlotStart(j) || p.SlotTable(j) == nil {
		return false
	}
	return p.CommitSlot(p.SlotSymbol(tile)) != nil
}

// Reset forgets all history.
func (p *fullPredictor) Reset() {
	p.hist.reset(int32(len(p.m.tileRep)))
	p.t = -1
	p.ep.reset()
	p.stats.reset(p.m)
	p.succ.reset()
	p.best = nil
}

// Begin starts the next state, led into by action (ignored after Reset).
func (p *fullPredictor) Begin(action int64) {
	if p.t >= 0 {
		p.succ.next(p.m, p.t)
	}
	p.t++
	if p.t == 0 {
		action = NoAction
	}
	p.bucket = bucketOf(action)
	p.hist.bucket = append(p.hist.bucket, uint8(p.bucket))
	p.succ.weigh(p.bucket, &p.hist, p.m)
	if len(p.succ.list) > 0 {
		p.prepareSuccAny()
	}
	p.hist.grow(p.n, p.S)
	p.succ.beginState()
	p.cont.reset()
	p.stats.rates()
	p.j, p.s, p.mm, p.base = 0, 0, 0, p.t*p.n
}

// nextStamp advances the stamp *st of marks, which hold the stamps of the
// entries marked, and returns it; marks are cleared when the stamp wraps.
func nextStamp(st *uint32, marks []uint32) uint32 {
	*st++
	if *st == 0 {
		clear(marks)
		*st = 1
	}
	return *st
}

// startSlot forms the slot's groups and starts its virtual hypotheses
// (SPEC.md 4.10); the succany spikes wait for the slot's first Predict
// unless eager.
func (p *fullPredictor) startSlot(eager bool) {
	s := p.s
	p.stats.priors(p.bucket, s)
	prior := &p.stats.prior
	gl := &p.grp
	gl.reset()
	if p.t >= 1 {
		r := ref{storeHist, int32(p.t - 1), int32(s)}
		gl.list[gl.add(clsPrev, r, p.tileOf(r), prior[clsPrev])].id = p.idOf(r)
	}
	if p.t >= 2 {
		r := ref{storeHist, int32(p.t - 2), int32(s)}
		gl.list[gl.add(clsPrev2, r, p.tileOf(r), prior[clsPrev2])].id = p.idOf(r)
	}
	if s > 0 && len(p.cont.refs) > 0 {
		// The class's prior is shared in proportion to the posterior weight
		// of the matches continued.
		gl.beginBatch(prior[clsCont] - fixed.Lg(p.cont.tot))
		for i, r := range p.cont.refs {
			if g := gl.join(clsCont, r, p.idOf(r), p.cont.w[i]); g >= 0 {
				gl.list[g].tile = p.tileOf(r)
			}
		}
		gl.endBatch()
	}
	if len(p.succ.list) > 0 {
		// The class's prior is shared among the successor states in
		// proportion to their weights.
		p.succ.base = prior[clsSucc] - fixed.Lg(p.succ.su)
		gl.beginBatch(p.succ.base)
		p.joinSucc()
		gl.endBatch()
	}
	p.any.start(len(p.succ.list) > 0, prior[clsSuccAny], s, p.S, eager)
	p.ep.start(prior[clsEp])
	p.dict.start(p.m, prior[clsDict])
	p.lNew = prior[clsNew]
	p.maxC = gl.liveMax(p.lNew)
}

// Predict prepares coordinate j, the next one of the state. It returns
// hit > 0 when the coordinate is coded in two steps: first whether its
// value is top, with frequency hit at the model's precision (2^(P−1) <=
// hit < 2^P), and on a miss the value among the others with Table. With
// hit = 0 the value is coded with Table alone; top is then undefined.
func (p *fullPredictor) Predict(j int) (top uint16, hit uint32) {
	if j != p.j {
		panic("wm: Predict out of order")
	}
	if p.mm == 0 {
		p.startSlot(true)
	}
	return p.predict()
}

// predict is Predict once the slot is started.
func (p *fullPredictor) predict() (top uint16, hit uint32) {
	p.fallRows()
	m := p.mm
	maxL := p.maxC
	p.pred.virt = false
	if m <= 1 && p.ep.live {
		maxL = max(maxL, p.ep.l)
		p.pred.virt = true
	}
	if m == 0 && p.any.live {
		maxL = max(maxL, p.any.l)
		p.pred.virt = true
	}
	if m <= 1 && p.dict.live {
		maxL = max(maxL, p.dict.l)
		p.pred.virt = true
	}
	p.pred.maxL = maxL
	if len(p.grp.list) == 0 && !p.pred.virt {
		// Only new content: the combined fallback row is the table.
		p.pred.top, p.pred.hit = 0, 0
		p.pred.tab = nil
		p.pred.modalOK = false
		p.mix()
		return 0, 0
	}
	nextStamp(&p.pred.stamp, p.pred.mark)
	// Locals, so that the loop keeps them in registers. A value is touched
	// once at most: touched has room for all and one more, for a value
	// listed without a branch (whether it is new follows no pattern) and
	// kept only if new.
	acc, mark, st := p.pred.acc, p.pred.mark, p.pred.stamp
	touched, nt := p.pred.touched[:cap(p.pred.touched)], 0
	groups, eps := p.grp.list, &p.stats.eps
	var wS, spikes uint64
	for i := range groups {
		g := &groups[i]
		wg := fixed.W(maxL - g.l)
		e := uint64(eps[g.cls&(nClasses-1)])
		wS += wg * e >> 16
		sp := wg * (1<<16 - e)
		spikes += sp
		v := g.tile[m]
		a, n := acc[v], 0
		if mark[v] != st {
			a, n = 0, 1
		}
		mark[v] = st
		acc[v] = a + sp
		touched[nt] = v
		nt += n
	}
	p.pred.touched = touched[:nt]
	p.pred.spikes = spikes
	a := uint64(p.m.subMix)
	alpha, beta := fixed.W(maxL-p.lNew)<<8+wS*a, wS*(256-a)*p.unif
	p.pred.alpha, p.pred.beta = alpha, beta
	p.pred.top, p.pred.hit = 0, 0
	p.pred.tab = nil
	p.pred.modalOK = false
	if p.pred.virt || len(groups) == 0 {
		p.mix()
		return 0, 0
	}
	// The value most groups' weight is on, with its share of the mass.
	var bm uint64
	bv := p.pred.touched[0]
	f := p.fall.f
	for _, v := range p.pred.touched {
		x := alpha*uint64(rans.Freq(f, int(v), 16)) + acc[v]<<8
		if x > bm || x == bm && v < bv {
			bm, bv = x, v
		}
	}
	bm += beta
	total := alpha<<16 + beta*uint64(p.K) + spikes<<8
	if 2*bm < total {
		p.mix()
		return 0, 0
	}
	hi, lo := bits.Mul64(bm, 1<<p.prec)
	q, _ := bits.Div64(hi, lo, total)
	p.pred.top, p.pred.hit = bv, uint32(min(max(q, 1), 1<<p.prec-1))
	return p.pred.top, p.pred.hit
}

// Table returns the cumulative frequency table of the current coordinate
// (after Predict): K entries, cum[0] = 0, strictly increasing, the
// frequency of the last symbol being 2^P − cum[K−1]. When Predict reported
// a two-step coordinate, it is the table of the value given that it is not
// top. The slice is owned by the Predictor and valid until the next call.
func (p *fullPredictor) Table() []uint16 {
	pr := &p.pred
	if pr.tab != nil {
		return pr.tab
	}
	if pr.hit == 0 && !pr.virt && len(p.grp.list) == 0 {
		// Only new content: the fallback row itself.
		if p.prec == 16 {
			pr.tab = p.fall.f
			return pr.tab
		}
		for v := range pr.wq {
			pr.wq[v] = rans.Freq(p.fall.f, v, 16)
		}
		rans.QuantizeTrusted(pr.wq, p.prec, pr.cum)
		pr.tab = pr.cum
		return pr.tab
	}
	if pr.hit > 0 {
		// The table of a miss uses the combined row; the commit keeps the
		// first, as for a hit.
		p.mix()
	}
	if !pr.virt && pr.hit == 0 {
		return p.weakTable()
	}
	w := pr.w[:p.K]
	alpha, beta := pr.alpha, pr.beta
	rans.RowWeights(p.fall.f[:len(w)], alpha, beta, w)
	for _, v := range pr.touched {
		w[v] += pr.acc[v] << 8
	}
	if pr.virt {
		p.virtualWeights()
	}
	if pr.hit > 0 {
		w[pr.top] = 0
		p.fall.f = p.fall.f1
		p.fall.pure = nil
	}
	// Σ w without virtual weights is known; with them, it is summed.
	tot := alpha<<16 + beta*uint64(len(w)) + pr.spikes<<8
	if pr.virt || pr.hit > 0 {
		tot = 0
		for _, x := range w {
			tot += x
		}
	}
	sh := uint(0)
	if n := bits.Len64(tot); n > 31 {
		sh = uint(n - 31)
	}
	wq := pr.wq[:len(w)]
	total, top := rans.Narrow(w, sh, wq)
	rans.QuantizeMax(wq, total, top, p.prec, pr.cum)
	pr.tab = pr.cum
	return pr.tab
}

// weakTable is Table for a one-step coordinate with groups and no virtual
// hypothesis: Σ w is known beforehand, so the weights are shifted as they
// are made, and the groups' values corrected after.
func (p *fullPredictor) weakTable() []uint16 {
	pr := &p.pred
	K := p.K
	alpha, beta := pr.alpha, pr.beta
	tot := alpha<<16 + beta*uint64(K) + pr.spikes<<8
	sh := uint(0)
	if n := bits.Len64(tot); n > 31 {
		sh = uint(n - 31)
	}
	f := p.fall.f[:K]
	wq := pr.wq[:K]
	rans.RowWeights(f, alpha, beta, pr.w[:K])
	total, top := rans.Narrow(pr.w[:K], sh, wq)
	// The groups only add weight (no sum here reaches 2^64), so the first
	// value of the largest weight is found after them, as QuantizeMax does.
	for _, v := range pr.touched {
		y := uint32((alpha*uint64(rans.Freq(f, int(v), 16)) + beta + pr.acc[v]<<8) >> sh)
		total += uint64(y - wq[v])
		wq[v] = y
		top = max(top, y)
	}
	rans.QuantizeMax(wq, total, top, p.prec, pr.cum)
	pr.tab = pr.cum
	return pr.tab
}

// Prediction returns what Predict returned for the current coordinate.
func (p *core) Prediction() (top uint16, hit uint32) { return p.pred.top, p.pred.hit }

// ModalFreq returns Modal and its frequency at the model's precision (hit
// for a two-step coordinate).
func (p *fullPredictor) ModalFreq() (uint16, uint32) {
	if v, f, ok := p.modalKnown(); ok {
		return v, f
	}
	return p.modalOf(p.Table())
}

// modalKnown returns ModalFreq when it is known without the table.
func (p *core) modalKnown() (uint16, uint32, bool) {
	pr := &p.pred
	if pr.hit > 0 {
		return pr.top, pr.hit, true
	}
	if pr.modalOK {
		return pr.modal, pr.modalF, true
	}
	return 0, 0, false
}

// modalOf returns ModalFreq of the current coordinate's table tab.
func (p *core) modalOf(tab []uint16) (uint16, uint32) {
	pr := &p.pred
	if pure := p.fall.pure; p.prec == 16 && pure != nil && &tab[0] == &p.fall.f[0] {
		// A fallback row keeps its modal value once found.
		if pure.v < 0 {
			v, f := rans.Mode(tab, 16)
			pure.v, pure.f = int32(v), f
		}
		pr.modal, pr.modalF = uint16(pure.v), pure.f
	} else {
		v, f := rans.Mode(tab, p.prec)
		pr.modal, pr.modalF = uint16(v), f
	}
	pr.modalOK = true
	return pr.modal, pr.modalF
}

// Row returns the first fallback row f1 of the current coordinate (after
// Predict, SPEC.md 4.11) as a cumulative table at precision 16, and its
// key: equal keys of one model give equal rows, so what is derived from a
// row can be kept by key. The slice belongs to the model.
func (p *fullPredictor) Row() (key uint64, f1 []uint16) {
	return uint64(p.fall.r1), p.fall.f1
}

// Precision returns P, the precision of the predictor's frequencies.
func (p *core) Precision() uint { return p.prec }

// virtualWeights adds to the table's weights those of the virtual
// hypotheses live at the current coordinate, on the scale of the others.
func (p *fullPredictor) virtualWeights() {
	pr := &p.pred
	w, m, maxL := pr.w, p.mm, pr.maxL
	if m == 0 && p.any.live {
		p.any.weights(w, fixed.W(maxL-p.any.l))
	}
	if m == 0 {
		// The first codes of the chunk's distinct tiles and of the
		// dictionary's, in one pass over the values (a hypothesis not live
		// weighs 0).
		var e0, d0 uint64
		if p.ep.live {
			e0 = (fixed.W(maxL-p.ep.l) << 32) / p.ep.total
		}
		if p.dict.live {
			d0 = (fixed.W(maxL-p.dict.l) << 32) / p.m.dictTotal
		}
		K := p.K
		w, ec, dc := w[:K], p.ep.cnt[:K], p.m.dictCnt[:K]
		for v := range w {
			w[v] += (e0*ec[v]>>16 + d0*dc[v]>>16) << 8
		}
		return
	}
	// m = 1: a virtual coordinate is a slot's first or second.
	if p.ep.live {
		p.ep.weights1(w, fixed.W(maxL-p.ep.l))
	}
	if p.dict.live {
		p.dict.weights1(w, p.m, fixed.W(maxL-p.dict.l))
	}
}

// Commit records the reconstructed value of coordinate j (after Predict).
func (p *fullPredictor) Commit(j int, v uint16) {
	if p.commit(j, v) {
		p.nextSlot()
	}
}

// commit is Commit up to the end of the slot: it reports whether the
// coordinate was the slot's last.
func (p *fullPredictor) commit(j int, v uint16) bool {
	if j != p.j {
		panic("wm: Commit out of order")
	}
	m := p.mm
	p.hist.codes[p.base+j] = v
	fv := uint64(rans.Freq(p.fall.f, int(v), 16))
	p.lNew += fixed.Lg(fv) - 16*256
	// The largest log-weight, the new-content hypothesis's included, and
	// the least of a group, for pruning: of the groups updated here, then
	// of those the expansions below add. Only a group can be pruned, so
	// the pass below runs only when one falls behind (the new-content
	// hypothesis trails far behind a run of hits).
	maxL, minL := p.lNew, int32(math.MaxInt32)
	n0 := len(p.grp.list)
	if n0 > 0 {
		a := uint64(p.m.subMix)
		qv := (fv*a + p.unif*(256-a)) >> 8
		// Per class: the increments of L on a match and a mismatch, made
		// when first needed (bit c of incM, incX).
		incMat, incMis := &p.inc.mat, &p.inc.mis
		var incM, incX uint32
		eps := &p.stats.eps
		groups := p.grp.list
		for i := range groups {
			g := &groups[i]
			c := g.cls & (nClasses - 1) // nClasses is a power of two
			if g.tile[m] == v {
				if incM&(1<<c) == 0 {
					e := uint64(eps[c])
					incMat[c] = fixed.Lg(1<<16-e+(e*qv>>16)) - 16*256
					incM |= 1 << c
				}
				g.l += incMat[c]
			} else {
				if incX&(1<<c) == 0 {
					incMis[c] = fixed.Lg(max(1, uint64(eps[c])*qv>>16)) - 16*256
					incX |= 1 << c
				}
				g.l += incMis[c]
				g.mis++
			}
			maxL, minL = max(maxL, g.l), min(minL, g.l)
		}
	}
	if m == 0 && p.any.live || p.ep.live || p.dict.live {
		// Out of line: the calls' arguments would cost the loop above
		// registers (callgrind counted 3% more instructions in Commit).
		p.commitVirtual(v)
	}
	groups := p.grp.list
	for i := n0; i < len(groups); i++ {
		l := groups[i].l
		maxL, minL = max(maxL, l), min(minL, l)
	}
	if minL < maxL-pruneBits*256 {
		p.grp.prune(maxL)
	}
	p.maxC = maxL
	p.j++
	p.mm++
	return p.mm == p.M
}

// nextSlot ends the slot after its last coordinate's commit and moves to
// the next slot.
func (p *fullPredictor) nextSlot() {
	p.endSlot(p.maxC)
	p.mm = 0
	p.s++
}

// commitVirtual advances the live virtual hypotheses after value v: each
// forms its groups and ends, or goes on to the next code.
func (p *fullPredictor) commitVirtual(v uint16) {
	if p.mm == 0 && p.any.live {
		p.expandSuccAny(v)
		p.any.live = false
	}
	if p.ep.live {
		p.ep.commit(v, p.mm, p.S, p.M, p.hist.codes, &p.grp, p.lNew)
	}
	if p.dict.live {
		p.dict.commit(v, p.mm, p.m, &p.grp, p.lNew)
	}
}

// CommitOmitted records the value v of coordinate j (after Predict) that
// the retention rule left out and the decoder fills in (container version
// 4). The reconstruction holds v, so later states see it as history, but
// the value is no evidence: no hypothesis is weighed by it, and the virtual
// hypotheses, which would expand on it, close for the slot. A guess that
// matched a wrong tile would otherwise carry the whole slot with it.
func (p *fullPredictor) CommitOmitted(j int, v uint16) {
	if j != p.j {
		panic("wm: Commit out of order")
	}
	if p.commitOmitted(v) {
		p.nextSlot()
	}
}

// commitOmitted is CommitOmitted up to the end of the slot: it reports
// whether the coordinate was the slot's last.
func (p *fullPredictor) commitOmitted(v uint16) bool {
	p.hist.codes[p.base+p.j] = v
	p.ep.live, p.dict.live, p.any.live = false, false, false
	maxL := p.grp.liveMax(p.lNew)
	p.maxC = maxL
	p.j++
	p.mm++
	return p.mm == p.M
}

// endSlot counts the slot's class, adds the anchors of its best group,
// proposes the next slot's continuations and records the slot's tile
// (SPEC.md 4.13).
func (p *fullPredictor) endSlot(maxL int32) {
	s, M := p.s, p.M
	groups := p.grp.list
	best := int32(-1)
	for g := range groups {
		if groups[g].l == maxL {
			best = int32(g)
			break
		}
	}
	counted := clsNew
	p.best = nil
	if best >= 0 && int(groups[best].mis)*4 <= M && p.lNew < maxL {
		c := int(groups[best].cls)
		counted = c
		p.stats.matched(c, int(groups[best].mis), M)
		p.best = groups[best].tile
		// The group's member of highest weight, the first among equals.
		var br ref
		bl := int32(-1 << 30)
		p.forMembers(int(best), func(r ref, l int32) bool {
			if l > bl {
				br, bl = r, l
			}
			return true
		})
		if r := br; r.store == storeRef {
			// Every occurrence of the tile in the reference store is a
			// state this one may resemble.
			for _, o := range p.m.tileOcc[p.m.tileOf[int(r.state)*p.S+int(r.slot)]] {
				p.succ.addAnchor(ref{storeRef, o / int32(p.S), 0})
			}
		} else {
			p.succ.addAnchor(ref{r.store, r.state, 0})
		}
	}
	p.stats.count(p.bucket, s, counted)
	p.proposeConts(maxL)
	p.addTile()
}

// forMembers calls fn with the reference and current log-weight of every
// member of group g, in order, until fn returns false.
func (p *fullPredictor) forMembers(g int, fn func(r ref, l int32) bool) {
	gr := &p.grp.list[g]
	if gr.head >= 0 {
		p.grp.members(g, fn)
		return
	}
	e, d := -gr.head-1, gr.l-gr.base
	if gr.cls == clsSucc {
		p.succ.members(e, p.s, p.S, p.any.itemID, d, fn)
		return
	}
	p.any.members(e, p.s, p.S, p.succ.list, d, fn)
}

// proposeConts lists the matches the next slot continues: the members of
// groups within contBits of the best, in order, each at the slots the
// model lists for its slot, at most contCap, distinct, never a slot of the
// current state not finished yet.
func (p *fullPredictor) proposeConts(maxL int32) {
	p.cont.reset()
	for g := range p.grp.list {
		gr := &p.grp.list[g]
		if maxL-gr.l > contBits*256 || int(gr.mis)*4 > p.M {
			continue
		}
		p.forMembers(g, func(r ref, l int32) bool {
			if maxL-l > contBits*256 || l <= p.lNew-contBits*256 {
				return true
			}
			wc := fixed.W(maxL - l)
			for _, ce := range p.m.contNext[r.slot] {
				nr := ref{r.store, r.state, int32(ce.y)}
				if nr.store == storeHist && int(nr.state) == p.t && int(nr.slot) > p.s {
					continue
				}
				if p.cont.add(nr, max(wc*uint64(ce.p)>>15, 1)) {
					return false
				}
			}
			return true
		})
		if len(p.cont.refs) == contCap {
			return
		}
	}
}

// bestTile returns the tile of the group that explained the slot finished
// last, or nil when new content did; for training.
func (p *fullPredictor) bestTile() []uint16 { return p.best }

// SlotEvents reports that the full level codes no slot event.
func (p *fullPredictor) SlotEvents() bool { return false }

// SlotTable is for a level with slot events only.
func (p *fullPredictor) SlotTable(int) []uint16 {
	panic("wm: SlotTable at a level without slot events")
}

// SlotSymbol is for a level with slot events only.
func (p *fullPredictor) SlotSymbol([]uint16) int {
	panic("wm: SlotSymbol at a level without slot events")
}

// SlotCandidate returns nil: the full level has no slot event.
func (p *fullPredictor) SlotCandidate(int) []uint16 { return nil }

// CommitSlot is for a level with slot events only.
func (p *fullPredictor) CommitSlot(int) []uint16 {
	panic("wm: CommitSlot at a level without slot events")
}

// DecodeSlot is for the fast level only.
func (p *fullPredictor) DecodeSlot(*rans.Decoder, int) ([]uint16, uint64) {
	panic("wm: DecodeSlot out of order")
}
