package wm

import (
	"math"
	"math/bits"
	"slices"

	"github.com/wmzip/wmzip/internal/fixed"
	"github.com/wmzip/wmzip/rans"
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
	m       *Model
	g       Geometry
	n, S, M int
	K       int
	prec    uint
	unif    uint64 // 2^16 / K, the uniform frequency at precision 16

	hist   []uint16 // reconstructed states since Reset, the current one last
	histB  []uint8  // action bucket of each history state
	histF  []uint16 // first code of each slot of the history (state*S+slot), once committed
	histID []int32  // content id of each finished slot of the history
	t      int      // index of the current state in hist
	bucket int

	// coordinate about to be predicted (or committed)
	j, s, mm int
	base     int // t*n

	// Distinct tiles of the chunk, in order of first appearance: the
	// history offset of each, its content id, and the lists by first code.
	ep      tileIndex
	epOff   []int
	epID    []int32
	epFirst [][]int32     // per first code: refs (state*S+slot), in order
	epCnt   []uint64      // per first code: len(epFirst[v])
	epVals  []uint16      // first codes whose list is not empty
	epNext  [][]codeCount // per first code: its tiles' second codes, with their counts
	epTotal uint64
	nextID  int32 // content id of the next tile found in neither the chunk nor the dictionary

	// adaptive class statistics, with their running sums
	hits    [nBuckets][nClasses]uint32
	hitsB   [nBuckets]uint64 // Σ_c hits[b][c]
	hitsC   [nClasses]uint64 // Σ_b hits[b][c]
	hitsT   uint64           // Σ_b Σ_c hits[b][c]
	hitsS   []uint32         // [S][nClasses]
	hitsP   []uint32         // [S][nClasses+1][nClasses], or nil
	prevCls int
	prior   [nClasses]int32
	mis     [nClasses]uint32
	cn      [nClasses]uint32
	eps     [nClasses]uint32 // per-class substitution rate, Q16

	// Groups: the candidates of the slot, those of one class with equal
	// tiles merged (they gain and lose alike). A group's log-weight is
	// that of the sum of its members' weights.
	groups    []group
	batchB    int32 // base of the batch being formed
	batchFrom int   // its first group
	mRef      []ref
	mL        []int32 // L of the member when it joined
	mNext     []int32
	batch     keyIndex // content id -> group, within one batch of one class

	lNew    int32
	lEp     int32 // virtual "episode tile" hypothesis, live at m <= 1
	lDict   int32 // virtual "dictionary tile" hypothesis, live at m <= 1
	lSA     int32 // virtual "any slot of a successor state", live at m = 0
	epV0    uint16
	dictV0  uint16
	epLive  bool
	dicLive bool
	saLive  bool

	conts   []ref    // continuations proposed for the next slot
	contW   []uint64 // their weights
	contTot uint64

	// anchors are the states the current state's slots matched, with how
	// many slots matched each; succ holds the successors of the previous
	// state's anchors.
	anchors    []anchor
	anchorKeys []uint64 // sortAnchors' scratch
	anchorIdx  keyIndex
	succ       []ref // state-level refs (slot unused)
	succN      []uint32
	succTot    uint64
	succW      uint64   // Σ succWeight
	succX      []uint64 // per successor: succWeight, for the current state
	succL      []int32  // per successor: lg(succWeight)
	succB      int32    // the successors' batch base at the current slot

	// The succany hypothesis of the current state (prepareSuccAny).
	saC     []uint32  // per successor: c_i of an offset that is no spike
	saE     []uint32  // per successor and spike: c_i(d) − saC[i]
	saRows  []*offRow // per successor: its offset law, or nil
	saVals  []uint16  // first codes of the successors' slots
	saFL    []uint64  // per first code: Σ saC over the slots that start with it
	saHead  []int32   // per first code: its first entry
	saTail  []int32   // per first code: its last entry
	saMark  []uint32  // per first code: saStamp when it has entries
	saStamp uint32
	saB     int32   // Lsa − 4096 when the hypothesis expanded
	slotSpk []spike // the items the spikes point at from the current slot
	// Entries: the distinct tiles of the successors' slots.
	itemEnt  []int32    // per item i·S + x: its entry
	itemV    []uint16   // per item: the first code of its tile
	saSpk    []saSpike  // the spikes of the successors' offset laws, but those of 0
	entTile  [][]uint16 // per entry: the tile
	entFL    []uint64   // per entry: Σ saC over its items
	entX     []uint64   // per entry: its weight at the current slot (scratch)
	entCnt   []int32    // per entry: number of items
	entStart []int32    // per entry: start of its items in entItems
	entNext  []int32    // next entry with the same first code, or −1
	entItems []int32    // items by entry
	entMark  []uint32   // per entry: entStamp when entGrp holds its group
	entGrp   []int32    // per entry: its group in the batch being formed
	entStamp uint32

	incMat, incMis [nClasses]int32 // per class: Commit's L increments on a match, a mismatch

	// The prediction of the current coordinate.
	f       []uint16 // fallback row, cumulative, precision 16
	f1      []uint16 // the first table's row
	r1      int      // its row number
	mixed   bool     // f is the combined row (or there is no second table)
	rows    rowCache
	maxL    int32
	maxC    int32    // the largest of Lnew and the groups' L
	virt    bool     // a virtual hypothesis predicts this coordinate
	alpha   uint64   // weight of f[v] in w[v]
	spikes  uint64   // Σ_v acc[v]
	beta    uint64   // weight of every value in w[v]
	acc     []uint64 // per value: Σ over groups predicting it of w_g·(65536 − eps)
	touched []uint16 // values with acc > 0 (or marked)
	mark    []uint32 // per value: coordinate stamp of touched
	stamp   uint32
	top     uint16
	hit     uint32
	tab     []uint16 // Table's result for the current coordinate, or nil
	modal   uint16
	modalF  uint32
	modalOK bool      // modal and modalF hold for the current coordinate
	pureRow *rowModal // the modal value of the fallback row f, when known
	rowKey  uint64    // identifies the row f (RowKey)

	best    []uint16 // tile of the best group at the end of the last slot, or nil
	w       []uint64
	wq      []uint32
	cum     []uint16
	scratch []uint32
}

// group is a group of candidates (see SPEC.md, "World model").
type group struct {
	l    int32 // log-weight
	base int32 // l when the group was formed; a member's L is its L0 + l − base
	tile []uint16
	head int32 // first member; −e−1 for the succany or successor group of entry e
	tail int32
	sum  uint64 // Σ of the members' weights while a batch is formed
	mis  uint16
	cls  uint8
}

// ref points at one tile occurrence: a slot of a state of the chunk
// history or of the model's reference store.
type ref struct {
	store int8 // 0 none, 1 history, 2 reference store
	state int32
	slot  int32
}

// anchor counts the slots of the current state matched in one state.
type anchor struct {
	r ref // slot unused
	n uint32
}

const (
	storeNone = iota
	storeHist
	storeRef
)

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

// NewPredictor returns a Predictor with empty history.
func (m *Model) NewPredictor() *Predictor {
	g := m.Geom
	p := &Predictor{
		m: m, g: g, n: g.N(), S: g.S, M: g.M, K: g.K, prec: m.Precision,
		unif:    1 << 16 / uint64(g.K),
		w:       make([]uint64, g.K),
		wq:      make([]uint32, g.K),
		cum:     make([]uint16, g.K),
		acc:     make([]uint64, g.K),
		mark:    make([]uint32, g.K),
		scratch: make([]uint32, g.K),
		epFirst: make([][]int32, g.K),
		epCnt:   make([]uint64, g.K),
		epNext:  make([][]codeCount, g.K),
		saFL:    make([]uint64, g.K),
		saHead:  make([]int32, g.K),
		saTail:  make([]int32, g.K),
		saMark:  make([]uint32, g.K),
		saE:     make([]uint32, max(m.succCap, m.anchorCap)*maxSpikes),
		batch:   newKeyIndex(maxBatch(m)),
	}
	p.anchorIdx = newKeyIndex(g.S * max(m.occCap, 1))
	if m.fall2Ctx > 0 {
		p.rows = newRowCache(g.K, rowCacheBytes)
	}
	p.Reset()
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
	b += 2 * 2 * batch * 16         // the batch index, doubled to a power of two
	b += 2 * 2 * S * 32 * 16        // the anchor index
	b += 2 * batch * (64 + 16 + 48) // groups, members, entries and items
	b += int64(states) * 2 * (2*N + 1 + 48*S)
	return b
}

// maxBatch bounds the candidates of one class formed at once.
func maxBatch(m *Model) int {
	return max(m.succCap, m.anchorCap)*m.Geom.S + dictCap + histCap + contCap + 2
}

// Model returns the model the predictor runs.
func (p *Predictor) Model() *Model { return p.m }

// Reset forgets all history.
func (p *Predictor) Reset() {
	p.hist = p.hist[:0]
	p.histB = p.histB[:0]
	p.histF = p.histF[:0]
	p.histID = p.histID[:0]
	p.t = -1
	p.ep.reset()
	p.epOff, p.epID = p.epOff[:0], p.epID[:0]
	for _, v := range p.epVals {
		p.epFirst[v] = p.epFirst[v][:0]
		p.epNext[v] = p.epNext[v][:0]
		p.epCnt[v] = 0
	}
	p.epVals = p.epVals[:0]
	p.epTotal = 0
	p.nextID = int32(len(p.m.tileRep))
	p.hits = p.m.clsHits
	p.sumHits()
	p.hitsS = append(p.hitsS[:0], p.m.clsSlot...)
	if p.m.clsCtx != nil {
		p.hitsP = append(p.hitsP[:0], p.m.clsCtx...)
	}
	p.mis = p.m.clsMis
	p.cn = p.m.clsN
	p.anchors = p.anchors[:0]
	p.succ = p.succ[:0]
	p.succN = p.succN[:0]
	p.succTot = 0
	p.best = nil
}

// sumHits sets the running sums of the class statistics hits.
func (p *Predictor) sumHits() {
	p.hitsB, p.hitsC, p.hitsT = [nBuckets]uint64{}, [nClasses]uint64{}, 0
	for b := range nBuckets {
		for c := range nClasses {
			h := uint64(p.hits[b][c])
			p.hitsB[b] += h
			p.hitsC[c] += h
			p.hitsT += h
		}
	}
}

// Begin starts the next state, led into by action (ignored after Reset).
func (p *Predictor) Begin(action int64) {
	if p.t >= 0 {
		p.nextSuccessors()
	}
	p.t++
	if p.t == 0 {
		action = NoAction
	}
	p.bucket = bucketOf(action)
	p.histB = append(p.histB, uint8(p.bucket))
	p.succW = 0
	p.succX = slices.Grow(p.succX[:0], len(p.succ))[:len(p.succ)]
	p.succL = slices.Grow(p.succL[:0], len(p.succ))[:len(p.succ)]
	for i := range p.succ {
		x := p.succWeight(i)
		p.succX[i], p.succL[i] = x, fixed.Lg(x)
		p.succW += x
	}
	if len(p.succ) > 0 {
		p.prepareSuccAny()
	}
	p.hist = slices.Grow(p.hist, p.n)[:len(p.hist)+p.n]
	p.histID = slices.Grow(p.histID, p.S)[:len(p.histID)+p.S]
	p.histF = slices.Grow(p.histF, p.S)[:len(p.histF)+p.S]
	p.anchors = p.anchors[:0]
	p.anchorIdx.next()
	p.conts = p.conts[:0]
	for c := range nClasses {
		e := (uint64(p.mis[c]) + 1) << 16 / (uint64(p.cn[c]) + 2)
		p.eps[c] = uint32(min(max(e, 1), 1<<15))
	}
	p.j, p.s, p.mm, p.base = 0, 0, 0, p.t*p.n
}

// tileOf returns the codes of the tile r points at.
func (p *Predictor) tileOf(r ref) []uint16 {
	if r.store == storeHist {
		off := int(r.state)*p.n + int(r.slot)*p.M
		return p.hist[off : off+p.M]
	}
	off := int(p.m.refPos[int(r.state)*p.S+int(r.slot)]) * p.M
	return p.m.dictTiles[off : off+p.M]
}

// slotIDs returns the content ids of the S (finished) slots of state r.
func (p *Predictor) slotIDs(r ref) []int32 {
	off := int(r.state) * p.S
	if r.store == storeHist {
		return p.histID[off : off+p.S]
	}
	return p.m.tileOf[off : off+p.S]
}

// idOf returns the content id of the (finished) tile r points at: equal
// tiles, wherever they are, have equal ids.
func (p *Predictor) idOf(r ref) int32 {
	if r.store == storeHist {
		return p.histID[int(r.state)*p.S+int(r.slot)]
	}
	return p.m.tileOf[int(r.state)*p.S+int(r.slot)]
}

// computePriors sets, for the current action bucket and slot, log2 of the
// prior probability of every class in 1/256-bit units (<= 0). The
// statistics change only at a slot's end, so once per slot start suffices.
func (p *Predictor) computePriors() {
	h := &p.hits[p.bucket]
	tot, gtot := p.hitsB[p.bucket], p.hitsT
	hs := p.hitsS[p.s*nClasses : (p.s+1)*nClasses]
	var ts uint64
	for _, x := range hs {
		ts += uint64(x)
	}
	var hp []uint32
	var tp uint64
	if p.hitsP != nil {
		pc := nClasses
		if p.s > 0 {
			pc = p.prevCls
		}
		o := (p.s*(nClasses+1) + pc) * nClasses
		hp = p.hitsP[o : o+nClasses]
		for _, x := range hp {
			tp += uint64(x)
		}
	}
	for c := range nClasses {
		g16 := (p.hitsC[c] + 1) << 16 / (gtot + nClasses)
		qb := (uint64(h[c])<<16 + 2*g16) / (tot + 2)
		q := (uint64(hs[c])<<16 + slotBackoff*qb) / (ts + slotBackoff)
		if hp != nil {
			q = (uint64(hp[c])<<16 + ctxBackoff*q) / (tp + ctxBackoff)
		}
		p.prior[c] = fixed.Lg(max(q, 1)) - 16*256
	}
}

// newGroup appends a group of one member of log-weight l and returns its
// index.
func (p *Predictor) newGroup(cls int, r ref, tile []uint16, l int32) int32 {
	g := int32(len(p.groups))
	k := int32(len(p.mRef))
	p.groups = append(p.groups, group{l: l, base: l, tile: tile, head: k, tail: k, cls: uint8(cls)})
	p.mRef = append(p.mRef, r)
	p.mL = append(p.mL, l)
	p.mNext = append(p.mNext, -1)
	return g
}

// beginBatch starts forming the groups of candidates of one class whose
// log-weights are b + lg(x) for integer weights x: the candidates with
// equal tiles form one group of log-weight b + lg(Σ x).
func (p *Predictor) beginBatch(b int32) {
	p.batch.next()
	p.batchB = b
	p.batchFrom = len(p.groups)
}

// join adds the candidate r of weight x to the batch.
func (p *Predictor) join(cls int, r ref, x uint64) {
	id := p.idOf(r)
	l := p.batchB + fixed.Lg(x)
	i, found := p.batch.slot(uint64(uint32(id)))
	if !found {
		g := p.newGroup(cls, r, p.tileOf(r), l)
		p.groups[g].sum = x
		p.batch.set(i, uint64(uint32(id)), g)
		return
	}
	p.addMember(p.batch.vals[i], r, l, x)
}

// addMember adds candidate r of log-weight l and weight x to group g of
// the batch being formed.
func (p *Predictor) addMember(g int32, r ref, l int32, x uint64) {
	gr := &p.groups[g]
	gr.sum += x
	k := int32(len(p.mRef))
	p.mRef = append(p.mRef, r)
	p.mL = append(p.mL, l)
	p.mNext = append(p.mNext, -1)
	p.mNext[gr.tail] = k
	gr.tail = k
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

// joinSucc adds the successors' tiles at the current slot to the batch,
// as join would, with the equal tiles found through their succany entries
// (prepareSuccAny), which number the successors' distinct tiles. The
// groups list no members: forMembers finds them again from the entry.
func (p *Predictor) joinSucc() {
	S, s := p.S, p.s
	mark, st := p.entMark, nextStamp(&p.entStamp, p.entMark)
	grp := p.entGrp
	for i, r := range p.succ {
		e := p.itemEnt[i*S+s]
		x := p.succX[i]
		if mark[e] != st {
			mark[e] = st
			grp[e] = int32(len(p.groups))
			tl := p.tileOf(ref{r.store, r.state, int32(s)})
			p.groups = append(p.groups, group{tile: tl, head: -e - 1, tail: -e - 1, sum: x, cls: clsSucc})
			continue
		}
		p.groups[grp[e]].sum += x
	}
}

// endBatch sets the log-weights of the batch's groups.
func (p *Predictor) endBatch() {
	for g := p.batchFrom; g < len(p.groups); g++ {
		l := p.batchB + fixed.Lg(p.groups[g].sum)
		p.groups[g].l, p.groups[g].base = l, l
	}
}

func (p *Predictor) startSlot() {
	s := p.s
	p.computePriors()
	p.groups = p.groups[:0]
	p.mRef, p.mL, p.mNext = p.mRef[:0], p.mL[:0], p.mNext[:0]
	if p.t >= 1 {
		r := ref{storeHist, int32(p.t - 1), int32(s)}
		p.newGroup(clsPrev, r, p.tileOf(r), p.prior[clsPrev])
	}
	if p.t >= 2 {
		r := ref{storeHist, int32(p.t - 2), int32(s)}
		p.newGroup(clsPrev2, r, p.tileOf(r), p.prior[clsPrev2])
	}
	if s > 0 && len(p.conts) > 0 {
		// The class's prior is shared in proportion to the posterior weight
		// of the matches continued.
		p.beginBatch(p.prior[clsCont] - fixed.Lg(p.contTot))
		for i, r := range p.conts {
			p.join(clsCont, r, p.contW[i])
		}
		p.endBatch()
	}
	if len(p.succ) > 0 {
		// The class's prior is shared among the successor states in
		// proportion to their weights.
		p.succB = p.prior[clsSucc] - fixed.Lg(p.succW)
		p.beginBatch(p.succB)
		p.joinSucc()
		p.endBatch()
	}
	p.saLive = len(p.succ) > 0
	if p.saLive {
		p.slotSpikes()
	}
	p.lSA = p.prior[clsSuccAny]
	p.epLive = p.epTotal > 0
	p.lEp = p.prior[clsEp]
	p.dicLive = p.m.dictTotal > 0
	p.lDict = p.prior[clsDict]
	p.lNew = p.prior[clsNew]
	p.maxC = p.liveMax()
}

// fallRows sets the first fallback row of the current coordinate and the
// key of its combination with the second, both cumulative at precision 16.
func (p *Predictor) fallRows() {
	m, K := p.m, p.K
	ctx := 0
	if m.fallCtx > 1 {
		ctx = K
		if p.s > 0 {
			ctx = int(p.hist[p.base+p.j-p.M])
		}
	}
	p.r1 = p.mm*m.fallCtx + ctx
	p.f1 = m.fallCum[p.r1*K : (p.r1+1)*K]
	p.f = p.f1
	p.pureRow = &m.fallModal[p.r1]
	p.rowKey = uint64(p.r1)
	p.mixed = m.fall2Ctx == 0
}

// mix sets p.f to the combined fallback row of the current coordinate.
func (p *Predictor) mix() {
	if p.mixed {
		return
	}
	p.mixed = true
	m := p.m
	ctx2 := p.K
	if p.mm > 0 {
		ctx2 = int(p.hist[p.base+p.j-1])
	}
	key := uint64(p.r1)*uint64(m.fall2Ctx) + uint64(ctx2)
	row, mod, ok := p.rows.get(key)
	p.pureRow = mod
	p.rowKey = 1<<63 | key
	if !ok {
		m.mixRow(p.r1, p.mm*m.fall2Ctx+ctx2, row, p.scratch)
	}
	p.f = row
}

// mixRow combines fallback rows r1 of the first table and r2 of the second
// geometrically into cum (precision 16): w[v] = (G1[v]·G2[v]) >> 8, where
// G1 and G2 are the rows' powers (mixPowers), then Quantize. The shift
// keeps Σ w below 2^32 for K ≤ 256 without costing precision: Quantize
// gives every weight below Σ w / 2^16 the least frequency anyway.
func (m *Model) mixRow(r1, r2 int, cum []uint16, w []uint32) {
	K := m.Geom.K
	// Powers peaking apart can leave every product below 2^8: a total of 0
	// is the uniform table.
	rans.QuantizeProducts(m.pow1[r1*K:(r1+1)*K], m.pow2[r2*K:(r2+1)*K], 16, cum, w[:K])
}

// mixPowers returns, for each row of K frequencies f, its power with
// exponent e (Q8) relative to its largest value: G[v] = W(max − l[v]),
// l[v] = (e·lg(f[v])) >> 8, capped at 65535 (the mode's), so that the
// product of two fits 32 bits.
func mixPowers(rows []uint16, k int, e uint16) []uint16 {
	out := make([]uint16, len(rows))
	l := make([]int32, k)
	for r := 0; r < len(rows); r += k {
		mx := int32(-1 << 30)
		for v, f := range rows[r : r+k] {
			l[v] = int32(e) * fixed.Lg(uint64(f)) >> 8
			mx = max(mx, l[v])
		}
		for v := range k {
			out[r+v] = uint16(min(fixed.W(mx-l[v]), 65535))
		}
	}
	return out
}

// Predict prepares coordinate j, the next one of the state. It returns
// hit > 0 when the coordinate is coded in two steps: first whether its
// value is top, with frequency hit at the model's precision (2^(P−1) <=
// hit < 2^P), and on a miss the value among the others with Table. With
// hit = 0 the value is coded with Table alone; top is then undefined.
func (p *Predictor) Predict(j int) (top uint16, hit uint32) {
	if j != p.j {
		panic("wm: Predict out of order")
	}
	if p.mm == 0 {
		p.startSlot()
	}
	p.fallRows()
	m := p.mm
	maxL := p.maxC
	p.virt = false
	if m <= 1 && p.epLive {
		maxL = max(maxL, p.lEp)
		p.virt = true
	}
	if m == 0 && p.saLive {
		maxL = max(maxL, p.lSA)
		p.virt = true
	}
	if m <= 1 && p.dicLive {
		maxL = max(maxL, p.lDict)
		p.virt = true
	}
	p.maxL = maxL
	nextStamp(&p.stamp, p.mark)
	p.touched = p.touched[:0]
	var wS, spikes uint64
	acc, mark, st := p.acc, p.mark, p.stamp
	groups, eps := p.groups, &p.eps
	for i := range groups {
		g := &groups[i]
		wg := fixed.W(maxL - g.l)
		e := uint64(eps[g.cls&(nClasses-1)])
		wS += wg * e >> 16
		sp := wg * (1<<16 - e)
		spikes += sp
		v := g.tile[m]
		if mark[v] != st {
			mark[v] = st
			acc[v] = 0
			p.touched = append(p.touched, v)
		}
		acc[v] += sp
	}
	p.spikes = spikes
	a := uint64(p.m.subMix)
	p.alpha = fixed.W(maxL-p.lNew)<<8 + wS*a
	p.beta = wS * (256 - a) * p.unif
	p.top, p.hit = 0, 0
	p.tab = nil
	p.modalOK = false
	if p.virt || len(p.groups) == 0 {
		p.mix()
		return 0, 0
	}
	// The value most groups' weight is on, with its share of the mass.
	var bm uint64
	bv := p.touched[0]
	for _, v := range p.touched {
		x := p.alpha*uint64(rans.Freq(p.f, int(v), 16)) + acc[v]<<8
		if x > bm || x == bm && v < bv {
			bm, bv = x, v
		}
	}
	bm += p.beta
	total := p.alpha<<16 + p.beta*uint64(p.K) + spikes<<8
	if 2*bm < total {
		p.mix()
		return 0, 0
	}
	hi, lo := bits.Mul64(bm, 1<<p.prec)
	q, _ := bits.Div64(hi, lo, total)
	p.top, p.hit = bv, uint32(min(max(q, 1), 1<<p.prec-1))
	return p.top, p.hit
}

// Table returns the cumulative frequency table of the current coordinate
// (after Predict): K entries, cum[0] = 0, strictly increasing, the
// frequency of the last symbol being 2^P − cum[K−1]. When Predict reported
// a two-step coordinate, it is the table of the value given that it is not
// top. The slice is owned by the Predictor and valid until the next call.
func (p *Predictor) Table() []uint16 {
	if p.tab != nil {
		return p.tab
	}
	if p.hit == 0 && !p.virt && len(p.groups) == 0 {
		// Only new content: the fallback row itself.
		if p.prec == 16 {
			p.tab = p.f
			return p.tab
		}
		for v := range p.wq {
			p.wq[v] = rans.Freq(p.f, v, 16)
		}
		rans.QuantizeTrusted(p.wq, p.prec, p.cum)
		p.tab = p.cum
		return p.tab
	}
	if p.hit > 0 {
		// The table of a miss uses the combined row; the commit keeps the
		// first, as for a hit.
		p.mix()
	}
	if !p.virt && p.hit == 0 {
		return p.weakTable()
	}
	w := p.w[:p.K]
	alpha, beta := p.alpha, p.beta
	rans.RowWeights(p.f[:len(w)], alpha, beta, w)
	for _, v := range p.touched {
		w[v] += p.acc[v] << 8
	}
	if p.virt {
		p.virtualWeights()
	}
	if p.hit > 0 {
		w[p.top] = 0
		p.f = p.f1
		p.pureRow = nil
	}
	// Σ w without virtual weights is known; with them, it is summed.
	tot := alpha<<16 + beta*uint64(len(w)) + p.spikes<<8
	if p.virt || p.hit > 0 {
		tot = 0
		for _, x := range w {
			tot += x
		}
	}
	sh := uint(0)
	if n := bits.Len64(tot); n > 31 {
		sh = uint(n - 31)
	}
	wq := p.wq[:len(w)]
	total, top := rans.Narrow(w, sh, wq)
	rans.QuantizeMax(wq, total, top, p.prec, p.cum)
	p.tab = p.cum
	return p.tab
}

// weakTable is Table for a one-step coordinate with groups and no virtual
// hypothesis: Σ w is known beforehand, so the weights are shifted as they
// are made, and the groups' values corrected after.
func (p *Predictor) weakTable() []uint16 {
	K := p.K
	alpha, beta := p.alpha, p.beta
	tot := alpha<<16 + beta*uint64(K) + p.spikes<<8
	sh := uint(0)
	if n := bits.Len64(tot); n > 31 {
		sh = uint(n - 31)
	}
	f := p.f[:K]
	wq := p.wq[:K]
	rans.RowWeights(f, alpha, beta, p.w[:K])
	total, top := rans.Narrow(p.w[:K], sh, wq)
	// The groups only add weight (no sum here reaches 2^64), so the first
	// value of the largest weight is found after them, as QuantizeMax does.
	for _, v := range p.touched {
		y := uint32((alpha*uint64(rans.Freq(f, int(v), 16)) + beta + p.acc[v]<<8) >> sh)
		total += uint64(y - wq[v])
		wq[v] = y
		top = max(top, y)
	}
	rans.QuantizeMax(wq, total, top, p.prec, p.cum)
	p.tab = p.cum
	return p.tab
}

// Prediction returns what Predict returned for the current coordinate.
func (p *Predictor) Prediction() (top uint16, hit uint32) { return p.top, p.hit }

// Modal returns the value of highest probability at the current
// coordinate (after Predict): top for a two-step coordinate, else the
// value of highest frequency in Table, the lowest among equals. It is the
// value an omitted coordinate takes.
func (p *Predictor) Modal() uint16 {
	v, _ := p.ModalFreq()
	return v
}

// ModalFreq returns Modal and its frequency at the model's precision (hit
// for a two-step coordinate).
func (p *Predictor) ModalFreq() (uint16, uint32) {
	if p.hit > 0 {
		return p.top, p.hit
	}
	if p.modalOK {
		return p.modal, p.modalF
	}
	tab := p.Table()
	if p.prec == 16 && p.pureRow != nil && &tab[0] == &p.f[0] {
		// A fallback row keeps its modal value once found.
		if p.pureRow.v < 0 {
			v, f := rans.Mode(tab, 16)
			p.pureRow.v, p.pureRow.f = int32(v), f
		}
		p.modal, p.modalF = uint16(p.pureRow.v), p.pureRow.f
	} else {
		v, f := rans.Mode(tab, p.prec)
		p.modal, p.modalF = uint16(v), f
	}
	p.modalOK = true
	return p.modal, p.modalF
}

// Row returns the first fallback row f1 of the current coordinate (after
// Predict, SPEC.md 4.11) as a cumulative table at precision 16, and its
// key: equal keys of one model give equal rows, so what is derived from a
// row can be kept by key. The slice belongs to the model.
func (p *Predictor) Row() (key uint64, f1 []uint16) { return uint64(p.r1), p.f1 }

// Precision returns P, the precision of the predictor's frequencies.
func (p *Predictor) Precision() uint { return p.prec }

// virtualWeights adds to p.w the weights of the virtual hypotheses live at
// the current coordinate, on the scale of the table's other weights.
func (p *Predictor) virtualWeights() {
	w, m, maxL := p.w, p.mm, p.maxL
	if m == 0 && p.saLive {
		p.anyWeights(fixed.W(maxL - p.lSA))
	}
	if m == 0 {
		// The first codes of the chunk's distinct tiles and of the
		// dictionary's, in one pass over the values (a hypothesis not live
		// weighs 0).
		var e0, d0 uint64
		if p.epLive {
			e0 = (fixed.W(maxL-p.lEp) << 32) / p.epTotal
		}
		if p.dicLive {
			d0 = (fixed.W(maxL-p.lDict) << 32) / p.m.dictTotal
		}
		K := p.K
		w, ec, dc := w[:K], p.epCnt[:K], p.m.dictCnt[:K]
		for v := range w {
			w[v] += (e0*ec[v]>>16 + d0*dc[v]>>16) << 8
		}
		return
	}
	// m = 1: a virtual coordinate is a slot's first or second.
	if p.epLive {
		x := (fixed.W(maxL-p.lEp) << 16) / p.epCnt[p.epV0] << 8
		// x for each tile starting with epV0, at its second code.
		for _, c := range p.epNext[p.epV0] {
			w[c.v] += x * uint64(c.n)
		}
	}
	if p.dicLive {
		d1 := (fixed.W(maxL-p.lDict) << 32) / p.m.dictCnt[p.dictV0]
		for _, pe := range p.m.dictPairs[p.dictV0] {
			w[pe.v1] += d1 * pe.cnt >> 16 << 8
		}
	}
}

// Commit records the reconstructed value of coordinate j (after Predict).
func (p *Predictor) Commit(j int, v uint16) {
	if j != p.j {
		panic("wm: Commit out of order")
	}
	m := p.mm
	p.hist[p.base+j] = v
	fv := uint64(rans.Freq(p.f, int(v), 16))
	p.lNew += fixed.Lg(fv) - 16*256
	// The largest log-weight, the new-content hypothesis's included, and
	// the least of a group, for pruning: of the groups updated here, then
	// of those the expansions below add. Only a group can be pruned, so
	// the pass below runs only when one falls behind (the new-content
	// hypothesis trails far behind a run of hits).
	maxL, minL := p.lNew, int32(math.MaxInt32)
	n0 := len(p.groups)
	if n0 > 0 {
		a := uint64(p.m.subMix)
		qv := (fv*a + p.unif*(256-a)) >> 8
		// Per class: the increments of L on a match and a mismatch, made
		// when first needed (bit c of incM, incX).
		incMat, incMis := &p.incMat, &p.incMis
		var incM, incX uint32
		eps := &p.eps
		groups := p.groups
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
	if m == 0 && p.saLive {
		p.anyExpand(v)
		p.saLive = false
	}
	if p.epLive {
		p.epCommit(v)
	}
	if p.dicLive {
		p.dictCommit(v)
	}
	// prune
	for i := n0; i < len(p.groups); i++ {
		l := p.groups[i].l
		maxL, minL = max(maxL, l), min(minL, l)
	}
	k := len(p.groups)
	if minL < maxL-pruneBits*256 {
		k = 0
		for i := range p.groups {
			if maxL-p.groups[i].l <= pruneBits*256 {
				if k != i {
					p.groups[k] = p.groups[i]
				}
				k++
			}
		}
	}
	p.maxC = maxL
	p.groups = p.groups[:k]
	p.j++
	if p.mm++; p.mm == p.M {
		p.endSlot(maxL)
		p.mm = 0
		p.s++
	}
}

// CommitOmitted records the value v of coordinate j (after Predict) that
// the retention rule left out and the decoder fills in (container version
// 4). The reconstruction holds v, so later states see it as history, but
// the value is no evidence: no hypothesis is weighed by it, and the virtual
// hypotheses, which would expand on it, close for the slot. A guess that
// matched a wrong tile would otherwise carry the whole slot with it.
func (p *Predictor) CommitOmitted(j int, v uint16) {
	if j != p.j {
		panic("wm: Commit out of order")
	}
	p.commitOmitted(v)
}

func (p *Predictor) commitOmitted(v uint16) {
	p.hist[p.base+p.j] = v
	p.epLive, p.dicLive, p.saLive = false, false, false
	maxL := p.lNew
	for i := range p.groups {
		maxL = max(maxL, p.groups[i].l)
	}
	p.maxC = maxL
	p.j++
	if p.mm++; p.mm == p.M {
		p.endSlot(maxL)
		p.mm = 0
		p.s++
	}
}

// epCommit advances the virtual "episode tile" hypothesis after value v.
func (p *Predictor) epCommit(v uint16) {
	switch {
	case p.mm == 0 && p.epCnt[v] > 0 && p.M > 1:
		p.lEp += fixed.Lg(p.epCnt[v]) - fixed.Lg(p.epTotal)
		p.epV0 = v
	case p.mm == 1:
		// Each tile starting with epV0 had probability 1/n; expand the
		// ones whose second code is v, most recent first.
		l := p.epFirst[p.epV0]
		base := p.lEp - fixed.Lg(uint64(len(l)))
		if base < p.liveMax()-pruneBits*256 {
			// All would be pruned at this commit.
			p.epLive = false
			return
		}
		added := 0
		for k := len(l) - 1; k >= 0 && added < histCap; k-- {
			off := int(l[k]) * p.M // slot x of state t starts at t·N + x·M = (t·S + x)·M
			if p.hist[off+1] != v {
				continue
			}
			r := ref{storeHist, l[k] / int32(p.S), l[k] % int32(p.S)}
			p.newGroup(clsEp, r, p.hist[off:off+p.M], base)
			added++
		}
		p.epLive = false
	default:
		p.epLive = false
	}
}

// codeCount is a code with how many times it occurs.
type codeCount struct {
	v uint16
	n uint32
}

// countCode counts one more v in l.
func countCode(l []codeCount, v uint16) []codeCount {
	for i := range l {
		if l[i].v == v {
			l[i].n++
			return l
		}
	}
	return append(l, codeCount{v, 1})
}

// liveMax returns the largest log-weight of the new-content hypothesis
// and the groups: a group formed below it by more than pruneBits is pruned
// at the end of the commit.
func (p *Predictor) liveMax() int32 {
	mx := p.lNew
	for i := range p.groups {
		mx = max(mx, p.groups[i].l)
	}
	return mx
}

// dictCommit advances the virtual "dictionary tile" hypothesis after value v.
func (p *Predictor) dictCommit(v uint16) {
	m := p.m
	switch {
	case p.mm == 0 && m.dictCnt[v] > 0 && p.M > 1:
		p.lDict += fixed.Lg(m.dictCnt[v]) - fixed.Lg(m.dictTotal)
		p.dictV0 = v
	case p.mm == 1:
		pairs := m.dictPairs[p.dictV0]
		k, found := slices.BinarySearchFunc(pairs, v, func(pe pairEntry, v uint16) int { return int(pe.v1) - int(v) })
		if found {
			pe := pairs[k]
			base := p.lDict - fixed.Lg(m.dictCnt[p.dictV0])
			floor := p.liveMax() - pruneBits*256
			M := p.M
			from := m.dictStart[p.dictV0] + int(pe.lo)
			to := m.dictStart[p.dictV0] + int(min(pe.hi, pe.lo+dictCap))
			for pos := from; pos < to; pos++ {
				l := base + m.dictLg[pos]
				if l < floor {
					// The rest of the run has lower counts: all would be
					// pruned at this commit.
					break
				}
				p.newGroup(clsDict, m.dictRef[pos], m.dictTiles[pos*M:pos*M+M], l)
			}
		}
		p.dicLive = false
	default:
		p.dicLive = false
	}
}

// forMembers calls fn with the reference and current log-weight of every
// member of group g, in order, until fn returns false.
func (p *Predictor) forMembers(g int, fn func(r ref, l int32) bool) {
	d := p.groups[g].l - p.groups[g].base
	if h := p.groups[g].head; h < 0 && p.groups[g].cls == clsSucc {
		// A successor group: the successors whose slot holds its entry,
		// each of log-weight b + lg(its weight), b the batch's base.
		e := -h - 1
		S, s := p.S, p.s
		b := d + p.succB
		for i, r := range p.succ {
			if p.itemEnt[i*S+s] != e {
				continue
			}
			if !fn(ref{r.store, r.state, int32(s)}, b+p.succL[i]) {
				return
			}
		}
		return
	} else if h < 0 {
		// A succany group: the slots of the successors with its tile.
		e := -h - 1
		S := p.S
		b := d + p.saB
		for _, it := range p.entItems[p.entStart[e] : p.entStart[e]+p.entCnt[e]] {
			i, x := int(it)/S, int(it)%S
			c := p.saWeight(i, (x-p.s+S)%S)
			if c == 0 {
				continue
			}
			r := p.succ[i]
			if !fn(ref{r.store, r.state, int32(x)}, b+fixed.Lg(uint64(c))) {
				return
			}
		}
		return
	}
	for k := p.groups[g].head; k >= 0; k = p.mNext[k] {
		if !fn(p.mRef[k], p.mL[k]+d) {
			return
		}
	}
}

func (p *Predictor) endSlot(maxL int32) {
	s, M := p.s, p.M
	best := int32(-1)
	for g := range p.groups {
		if p.groups[g].l == maxL {
			best = int32(g)
			break
		}
	}
	b := &p.hits[p.bucket]
	counted := clsNew
	p.best = nil
	if best >= 0 && int(p.groups[best].mis)*4 <= M && p.lNew < maxL {
		c := int(p.groups[best].cls)
		counted = c
		p.mis[c] += uint32(p.groups[best].mis)
		p.cn[c] += uint32(M)
		p.best = p.groups[best].tile
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
				p.addAnchor(ref{storeRef, o / int32(p.S), 0})
			}
		} else {
			p.addAnchor(ref{r.store, r.state, 0})
		}
	}
	b[counted]++
	p.hitsB[p.bucket]++
	p.hitsC[counted]++
	p.hitsT++
	p.hitsS[s*nClasses+counted]++
	if p.hitsP != nil {
		pc := nClasses
		if s > 0 {
			pc = p.prevCls
		}
		p.hitsP[(s*(nClasses+1)+pc)*nClasses+counted]++
	}
	p.prevCls = counted
	p.proposeConts(maxL)
	p.addTile()
}

// proposeConts lists the matches the next slot continues: the members of
// groups within contBits of the best, in order, each at the slots the
// model lists for its slot, at most contCap, distinct, never a slot of the
// current state not finished yet.
func (p *Predictor) proposeConts(maxL int32) {
	p.conts = p.conts[:0]
	p.contW = p.contW[:0]
	p.contTot = 0
	for g := range p.groups {
		if maxL-p.groups[g].l > contBits*256 || int(p.groups[g].mis)*4 > p.M {
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
				if slices.Contains(p.conts, nr) {
					continue
				}
				cw := max(wc*uint64(ce.p)>>15, 1)
				p.conts = append(p.conts, nr)
				p.contW = append(p.contW, cw)
				p.contTot += cw
				if len(p.conts) == contCap {
					return false
				}
			}
			return true
		})
		if len(p.conts) == contCap {
			return
		}
	}
}

// addTile gives the slot just finished its content id and adds its tile
// to the chunk's distinct tiles unless it is there already.
func (p *Predictor) addTile() {
	off := p.base + p.s*p.M
	tl := p.hist[off : off+p.M]
	r := int32(p.t*p.S + p.s)
	p.histF[r] = tl[0]
	if e := p.ep.find(tl, p.hist, p.epOff); e >= 0 {
		p.histID[r] = p.epID[e]
		return
	}
	id := p.m.dict.find(tl, p.m.refCodes, p.m.tileOff)
	if id < 0 {
		id = p.nextID
		p.nextID++
	}
	p.histID[r] = id
	e := int32(len(p.epOff))
	p.epOff = append(p.epOff, off)
	p.epID = append(p.epID, id)
	p.ep.insert(tl, e, p.hist, p.epOff)
	if len(p.epFirst[tl[0]]) == 0 {
		p.epVals = append(p.epVals, tl[0])
	}
	if p.M > 1 {
		p.epNext[tl[0]] = countCode(p.epNext[tl[0]], tl[1])
	}
	p.epFirst[tl[0]] = append(p.epFirst[tl[0]], r)
	p.epCnt[tl[0]]++
	p.epTotal++
}

func (p *Predictor) addAnchor(r ref) {
	key := uint64(uint8(r.store))<<32 | uint64(uint32(r.state))
	i, found := p.anchorIdx.slot(key)
	if found {
		p.anchors[p.anchorIdx.vals[i]].n++
		return
	}
	p.anchorIdx.set(i, key, int32(len(p.anchors)))
	p.anchors = append(p.anchors, anchor{r, 1})
}

// nextSuccessors turns the anchors of the state just completed into the
// successor states of the next one: the anchors most slots matched first
// (ties: history before reference store, then lower state), at most
// the model's anchorCap of them, each replaced by the state that followed
// it; then, up to the model's succCap states in all, the states that
// preceded the anchors, in the same order.
func (p *Predictor) nextSuccessors() {
	p.sortAnchors()
	p.succ = p.succ[:0]
	p.succN = p.succN[:0]
	p.succTot = 0
	add := func(r ref, n uint32) {
		p.succ = append(p.succ, r)
		p.succN = append(p.succN, n)
		p.succTot += uint64(n)
	}
	for _, a := range p.anchors {
		if len(p.succ) == p.m.anchorCap {
			break
		}
		switch a.r.store {
		case storeHist:
			// The state after a history state is in the history too,
			// unless the anchor is the state just completed.
			if int(a.r.state)+1 <= p.t {
				add(ref{storeHist, a.r.state + 1, 0}, a.n)
			}
		case storeRef:
			if nx := p.m.refNext[a.r.state]; nx >= 0 {
				add(ref{storeRef, nx, 0}, a.n)
			}
		}
	}
	// Then the states before them: on a walk that can go back, they are
	// where it may go next too.
	for _, a := range p.anchors {
		if len(p.succ) >= p.m.succCap {
			break
		}
		switch a.r.store {
		case storeHist:
			if a.r.state >= 1 {
				add(ref{storeHist, a.r.state - 1, 0}, a.n)
			}
		case storeRef:
			if pv := a.r.state - 1; pv >= 0 && p.m.refNext[pv] == a.r.state {
				add(ref{storeRef, pv, 0}, a.n)
			}
		}
	}
}

// sortAnchors orders the anchors by count, the largest first, then store
// and state, through keys sorted as integers: the count's complement in
// the top 24 bits (a slot adds at most occCap anchors, so a count is below
// MaxSlots·occCap = 2^17), the store, the state.
func (p *Predictor) sortAnchors() {
	const nMax = 1<<24 - 1
	keys := p.anchorKeys[:0]
	for _, a := range p.anchors {
		keys = append(keys, uint64(nMax-a.n)<<40|uint64(uint8(a.r.store))<<32|uint64(uint32(a.r.state)))
	}
	slices.Sort(keys)
	for i, k := range keys {
		p.anchors[i] = anchor{ref{int8(k >> 32 & 0xFF), int32(uint32(k)), 0}, uint32(nMax - k>>40)}
	}
	p.anchorKeys = keys
}

// succWeight is the weight of successor state i: the number of slots of
// the previous state that matched its predecessor, times succActBoost when
// it was led into by an action of the current state's bucket.
func (p *Predictor) succWeight(i int) uint64 {
	w := uint64(p.succN[i])
	if p.succBucket(i) == p.bucket {
		w *= succActBoost
	}
	return w
}

// prepareSuccAny lays out the succany hypothesis of the state just
// begun: drawing successor i and a slot offset δ has probability
// c_i(δ)/65536, c_i(δ) = (ρ_i·O(δ)) >> 16 with ρ_i = (n_i << 16) / NT and
// O the offset law of the two states' buckets (a floor plus spikes); or,
// without an offset law, c_i(δ) = (u_i << 16) / (ST·S) for every δ. It
// gathers the successors' slots into entries of equal tiles, listed by
// first code, and sums the floors per entry and per first code.
func (p *Predictor) prepareSuccAny() {
	S := p.S
	nextStamp(&p.saStamp, p.saMark)
	p.saVals = p.saVals[:0]
	ns := len(p.succ)
	p.saC = slices.Grow(p.saC[:0], ns)[:ns]
	p.saRows = slices.Grow(p.saRows[:0], ns)[:ns]
	p.itemEnt = slices.Grow(p.itemEnt[:0], ns*S)[:ns*S]
	p.itemV = slices.Grow(p.itemV[:0], ns*S)[:ns*S]
	p.saSpk = p.saSpk[:0]
	p.entTile, p.entFL, p.entCnt, p.entNext = p.entTile[:0], p.entFL[:0], p.entCnt[:0], p.entNext[:0]
	p.batch.next()
	mark, st := p.saMark, p.saStamp
	for i, r := range p.succ {
		var c uint32
		var row *offRow
		if p.m.offLaw != nil {
			rho := (uint64(p.succN[i]) << 16) / p.succTot
			row = &p.m.offLaw[p.bucket*nBuckets+p.succBucket(i)]
			c = uint32(rho * uint64(row.floor) >> 16)
			for k := range row.n {
				ce := uint32(rho*uint64(row.floor+row.e[k])>>16) - c
				p.saE[i*maxSpikes+k] = ce
				if ce > 0 {
					// A spike of 0 adds nothing where slotSpikes' list is used.
					p.saSpk = append(p.saSpk, saSpike{int32(i * S), int32(row.d[k]), uint64(ce)})
				}
			}
		} else {
			c = uint32((p.succWeight(i) << 16) / (p.succW * uint64(S)))
		}
		p.saC[i], p.saRows[i] = c, row
		first := p.slotFirsts(r)
		ids := p.slotIDs(r)
		ie, iv := p.itemEnt[i*S:(i+1)*S], p.itemV[i*S:(i+1)*S]
		for x, id := range ids {
			k, found := p.batch.slot(uint64(uint32(id)))
			var e int32
			if found {
				e = p.batch.vals[k]
			} else {
				e = int32(len(p.entFL))
				p.batch.set(k, uint64(uint32(id)), e)
				tl := p.tileOf(ref{r.store, r.state, int32(x)})
				p.entTile = append(p.entTile, tl)
				p.entFL = append(p.entFL, 0)
				p.entCnt = append(p.entCnt, 0)
				p.entNext = append(p.entNext, -1)
				v := first[x]
				if mark[v] != st {
					mark[v] = st
					p.saFL[v] = 0
					p.saHead[v], p.saTail[v] = e, e
					p.saVals = append(p.saVals, v)
				} else {
					p.entNext[p.saTail[v]] = e
					p.saTail[v] = e
				}
			}
			v := first[x]
			ie[x], iv[x] = e, v
			p.entFL[e] += uint64(c)
			p.entCnt[e]++
			p.saFL[v] += uint64(c)
		}
	}
	// Items by entry, in order of successor and slot.
	ne := len(p.entFL)
	if len(p.entMark) < ne {
		p.entMark = append(p.entMark, make([]uint32, ne-len(p.entMark))...)
		p.entGrp = append(p.entGrp, make([]int32, ne-len(p.entGrp))...)
	}
	p.entStart = slices.Grow(p.entStart[:0], ne)[:ne]
	pos := int32(0)
	for e, n := range p.entCnt {
		p.entStart[e] = pos
		pos += n
	}
	p.entItems = slices.Grow(p.entItems[:0], int(pos))[:pos]
	fill := p.entX[:0]
	fill = slices.Grow(fill, ne)[:ne]
	for e := range fill {
		fill[e] = uint64(p.entStart[e])
	}
	for it, e := range p.itemEnt {
		p.entItems[fill[e]] = int32(it)
		fill[e]++
	}
	p.entX = fill
}

// saWeight returns c_i(δ) of prepareSuccAny.
func (p *Predictor) saWeight(i, d int) uint32 {
	c := p.saC[i]
	if row := p.saRows[i]; row != nil {
		for k := range row.n {
			if int(row.d[k]) == d {
				return c + p.saE[i*maxSpikes+k]
			}
		}
	}
	return c
}

// anyWeights adds to p.w the first-code weights of the succany hypothesis
// of weight w at the current slot: w·Σ c_i((x − s) mod S) over the slots x
// of successor i that start with v.
func (p *Predictor) anyWeights(w uint64) {
	for _, v := range p.saVals {
		p.w[v] += w * p.saFL[v] << 8
	}
	for _, sp := range p.slotSpk {
		p.w[sp.v] += w * sp.c << 8
	}
}

// slotSpikes lists the items the spikes of the offset laws point at from
// the current slot: (i, (s + d_k) mod S) for every successor i and spike k
// with cE_ik > 0, with their first code, entry and cE_ik.
func (p *Predictor) slotSpikes() {
	S, s := p.S, p.s
	spk := slices.Grow(p.slotSpk[:0], len(p.saSpk))[:len(p.saSpk)]
	for n, sp := range p.saSpk {
		// An offset is below S.
		x := s + int(sp.d)
		if x >= S {
			x -= S
		}
		it := int(sp.item) + x
		spk[n] = spike{p.itemV[it], p.itemEnt[it], sp.c}
	}
	p.slotSpk = spk
}

// saSpike is a spike of a successor's offset law with cE_ik > 0: the
// successor's first item i·S, the offset d_k and cE_ik.
type saSpike struct {
	item, d int32
	c       uint64
}

// spike is an item a spike of the offset law points at.
type spike struct {
	v uint16 // first code of its tile
	e int32  // its entry
	c uint64 // cE_ik
}

// slotFirsts returns the first code of every slot of state r, a finished
// state: S codes kept apart from the tiles, so that a state's layout reads
// one cache line, not one per slot.
func (p *Predictor) slotFirsts(r ref) []uint16 {
	off := int(r.state) * p.S
	if r.store == storeHist {
		return p.histF[off : off+p.S]
	}
	return p.m.refFirst[off : off+p.S]
}

// succBucket is the action bucket of successor state i.
func (p *Predictor) succBucket(i int) int {
	if r := p.succ[i]; r.store == storeHist {
		return int(p.histB[r.state])
	} else {
		return int(p.m.refBkt[r.state])
	}
}

// anyExpand replaces the succany hypothesis, after its first code v, by a
// group for each tile of the successors that starts with v, of weight
// Σ c_i((x − s) mod S) over its slots x.
func (p *Predictor) anyExpand(v uint16) {
	if p.saMark[v] != p.saStamp {
		return
	}
	for e := p.saHead[v]; e >= 0; e = p.entNext[e] {
		p.entX[e] = p.entFL[e]
	}
	for _, sp := range p.slotSpk {
		if sp.v == v {
			p.entX[sp.e] += sp.c
		}
	}
	p.saB = p.lSA - 16*256
	for e := p.saHead[v]; e >= 0; e = p.entNext[e] {
		if x := p.entX[e]; x > 0 {
			l := p.saB + fixed.Lg(x)
			p.groups = append(p.groups, group{l: l, base: l, tile: p.entTile[e], head: -e - 1, tail: -e - 1, sum: x, cls: clsSuccAny})
		}
	}
}

// bestTile returns the tile of the group that explained the slot finished
// last, or nil when new content did; for training.
func (p *Predictor) bestTile() []uint16 { return p.best }
