package wm

import (
	"github.com/wmzip/wmzip/rans"
	"hash/maphash"
	"slices"
)

// Predictor runs the model over one stream of states. The writer and the
// reader each drive their own Predictor through the same calls with the same
// reconstructed values, so both see the same tables.
//
// Call sequence for every state:
//
//	p.Begin(action)
//	for j := 0; j < N; j++ { tab := p.Table(j); ...; p.Commit(j, v) }
//
// Reset forgets the history (keyframe or episode start); the next state is
// then predicted without history ("intra"), and its action is ignored.
// A Predictor is not safe for concurrent use.
type Predictor struct {
	m *Model
	g Geometry
	n int

	hist   []uint16 // reconstructed states since Reset, the current one last
	histB  []uint8  // action bucket of each history state
	t      int      // index of the current state in hist
	bucket int

	// distinct tiles of the episode
	epSeed  maphash.Seed
	epIndex map[uint64]int32 // hash -> first entry of its chain in epRefs
	epRefs  []int32          // refs (state*S+slot) of distinct tiles
	epNext  []int32          // next entry with the same hash, or -1
	epFirst [][]int32        // per first code: refs, in order of appearance
	epTotal uint64

	// adaptive class statistics
	hits  [nBuckets][nClasses]uint32
	hitsS []uint32 // [S][nClasses]
	// hitsP counts classes by slot and by the class of the slot before in
	// the same state (nClasses for slot 0): [S][nClasses+1][nClasses]; nil
	// when the model has no such statistics.
	hitsP   []uint32
	prevCls int // class counted for the previous slot of the state
	slot    int // slot being predicted
	prior   [nClasses]int32
	mis     [nClasses]uint32
	cn      [nClasses]uint32

	// per-slot hypotheses
	cands   []cand
	lNew    int32
	lEp     int32 // virtual "episode tile" hypothesis, live at m <= 1
	lDict   int32 // virtual "dictionary tile" hypothesis, live at m <= 1
	dictV0  uint16
	epV0    uint16
	epLive  bool
	dicLive bool
	eps     [nClasses]uint32 // per-class substitution rate, Q16
	conts   []ref            // continuations proposed for the next slot
	contW   []uint64         // their weights: W(maxL - L) of the match they continue
	contTot uint64
	// anchors are the states (of the history or the reference store) the
	// current state's slots matched, with how many slots matched each;
	// succ holds the successors of the previous state's anchors.
	anchors   []anchor
	anchorIdx map[ref]int32
	succ      []ref // state-level refs (slot unused)
	succN     []uint32
	succTot   uint64
	succW     uint64 // Σ succWeight
	saLive    bool   // virtual "any slot of a successor state" hypothesis
	lSA       int32

	fmix   []uint16 // combined fallback row
	fw     []uint32
	fcum   []uint16
	mixIdx map[uint32]int32 // (m, ctx1, ctx2) -> row of mixSlab
	mixSlb []uint16

	w   []uint64
	wq  []uint32
	cum []uint16
	f   []uint16 // fallback row of the current coordinate
}

// ref points at one tile occurrence: a slot of a state of the episode
// history or of the model's reference store.
type ref struct {
	store int8 // 0 none, 1 history, 2 reference store
	state int32
	slot  int32
}

type cand struct {
	r     ref
	tile  []uint16
	class uint8
	mis   uint16
	l     int32
	id    int32 // dictionary tile id, or -1
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

// pruneBits is how far (in bits) below the best hypothesis a candidate may
// fall before it is dropped.
const pruneBits = 24

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

// NewPredictor returns a Predictor with empty history.
func (m *Model) NewPredictor() *Predictor {
	g := m.Geom
	p := &Predictor{
		m: m, g: g, n: g.N(),
		epSeed: maphash.MakeSeed(),
		w:      make([]uint64, g.K),
		wq:     make([]uint32, g.K),
		cum:    make([]uint16, g.K),
		fmix:   make([]uint16, g.K),
		fw:     make([]uint32, g.K),
		fcum:   make([]uint16, g.K),

		anchorIdx: make(map[ref]int32),
	}
	p.Reset()
	return p
}

// Model returns the model the predictor runs.
func (p *Predictor) Model() *Model { return p.m }

// Reset forgets all history.
func (p *Predictor) Reset() {
	p.hist = p.hist[:0]
	p.histB = p.histB[:0]
	p.t = -1
	if p.epIndex == nil {
		p.epIndex = make(map[uint64]int32)
	}
	clear(p.epIndex)
	p.epRefs, p.epNext = p.epRefs[:0], p.epNext[:0]
	if p.epFirst == nil {
		p.epFirst = make([][]int32, p.g.K)
	}
	for i := range p.epFirst {
		p.epFirst[i] = p.epFirst[i][:0]
	}
	p.epTotal = 0
	p.hits = p.m.clsHits
	p.hitsS = append(p.hitsS[:0], p.m.clsSlot...)
	if p.m.clsCtx != nil {
		p.hitsP = append(p.hitsP[:0], p.m.clsCtx...)
	}
	p.mis = p.m.clsMis
	p.cn = p.m.clsN
	p.anchors = p.anchors[:0]
	clear(p.anchorIdx)
	p.succ = p.succ[:0]
	p.succN = p.succN[:0]
	p.succTot = 0
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
	for i := range p.succ {
		p.succW += p.succWeight(i)
	}
	p.hist = slices.Grow(p.hist, p.n)[:len(p.hist)+p.n]
	p.anchors = p.anchors[:0]
	clear(p.anchorIdx)
	p.conts = p.conts[:0]
	for c := range nClasses {
		e := (uint64(p.mis[c]) + 1) << 16 / (uint64(p.cn[c]) + 2)
		if e < 1 {
			e = 1
		}
		if e > 1<<15 {
			e = 1 << 15
		}
		p.eps[c] = uint32(e)
	}
}

func (p *Predictor) tileOf(r ref) []uint16 {
	g := p.g
	off := int(r.state)*p.n + int(r.slot)*g.M
	if r.store == storeHist {
		return p.hist[off : off+g.M]
	}
	return p.m.refCodes[off : off+g.M]
}

// computePriors sets, for the current action bucket and slot, log2 of the
// prior probability of every class in 1/256-bit units (<= 0). The
// statistics change only at a slot's end, so once per slot start suffices.
func (p *Predictor) computePriors() {
	var gsum [nClasses]uint64
	var gtot, tot uint64
	h := &p.hits[p.bucket]
	for i := range nClasses {
		tot += uint64(h[i])
		for b := range nBuckets {
			gsum[i] += uint64(p.hits[b][i])
		}
		gtot += gsum[i]
	}
	// The slot's own statistics, backed off to the bucket's.
	hs := p.hitsS[p.slot*nClasses : (p.slot+1)*nClasses]
	var ts uint64
	for _, x := range hs {
		ts += uint64(x)
	}
	// And, when the model has them, the statistics of the slot after a slot
	// of the class the previous slot had, backed off to those.
	var hp []uint32
	var tp uint64
	if p.hitsP != nil {
		pc := nClasses
		if p.slot > 0 {
			pc = p.prevCls
		}
		o := (p.slot*(nClasses+1) + pc) * nClasses
		hp = p.hitsP[o : o+nClasses]
		for _, x := range hp {
			tp += uint64(x)
		}
	}
	for c := range nClasses {
		g16 := (gsum[c] + 1) << 16 / (gtot + nClasses)
		qb := (uint64(h[c])<<16 + 2*g16) / (tot + 2)
		q := (uint64(hs[c])<<16 + slotBackoff*qb) / (ts + slotBackoff)
		if hp != nil {
			q = (uint64(hp[c])<<16 + ctxBackoff*q) / (tp + ctxBackoff)
		}
		p.prior[c] = lg(max(q, 1)) - 16*256
	}
}

// classPrior returns the prior of class c computed at the slot's start.
func (p *Predictor) classPrior(c int) int32 { return p.prior[c] }

func (p *Predictor) startSlot(s int) {
	p.slot = s
	p.computePriors()
	p.cands = p.cands[:0]
	add := func(r ref, class int) {
		p.cands = append(p.cands, cand{r: r, tile: p.tileOf(r), class: uint8(class), l: p.classPrior(class), id: -1})
	}
	if p.t >= 1 {
		add(ref{storeHist, int32(p.t - 1), int32(s)}, clsPrev)
	}
	if p.t >= 2 {
		add(ref{storeHist, int32(p.t - 2), int32(s)}, clsPrev2)
	}
	if s > 0 && len(p.conts) > 0 {
		// The class's prior is shared in proportion to the posterior weight
		// of the matches continued.
		pr := p.classPrior(clsCont) - lg(p.contTot)
		for i, r := range p.conts {
			p.cands = append(p.cands, cand{r: r, tile: p.tileOf(r), class: clsCont, l: pr + lg(p.contW[i]), id: -1})
		}
	}
	if len(p.succ) > 0 {
		// The class's prior is shared among the successor states in
		// proportion to their weights.
		pr := p.classPrior(clsSucc) - lg(p.succW)
		for i, r := range p.succ {
			rr := ref{r.store, r.state, int32(s)}
			p.cands = append(p.cands, cand{r: rr, tile: p.tileOf(rr), class: clsSucc, l: pr + lg(p.succWeight(i)), id: -1})
		}
	}
	p.saLive = len(p.succ) > 0
	if p.saLive {
		p.lSA = p.classPrior(clsSuccAny)
	}

	p.epLive = p.epTotal > 0
	if p.epLive {
		p.lEp = p.classPrior(clsEp)
	}
	p.dicLive = p.m.dictTotal > 0
	if p.dicLive {
		p.lDict = p.classPrior(clsDict)
	}
	p.lNew = p.classPrior(clsNew)
}

// Table returns the cumulative frequency table of coordinate j of the
// current state: K entries, cum[0] = 0, strictly increasing, the frequency
// of the last symbol being 2^Precision - cum[K-1]. The slice is owned by the
// Predictor and valid until the next call.
func (p *Predictor) Table(j int) []uint16 {
	g := p.g
	s, m := j/g.M, j%g.M
	if m == 0 {
		p.startSlot(s)
	}
	ctx := 0
	if p.m.fallCtx > 1 {
		ctx = g.K
		if s > 0 {
			ctx = int(p.hist[p.t*p.n+j-g.M])
		}
	}
	row := (m*p.m.fallCtx + ctx) * g.K
	p.f = p.m.fallback[row : row+g.K]
	if p.m.fall2Ctx > 0 {
		ctx2 := g.K
		if m > 0 {
			ctx2 = int(p.hist[p.t*p.n+j-1])
		}
		p.f = p.mixedRow(m, ctx, ctx2, p.f)
	}

	maxL := p.lNew
	for i := range p.cands {
		maxL = max(maxL, p.cands[i].l)
	}
	if m <= 1 && p.epLive {
		maxL = max(maxL, p.lEp)
	}
	if m == 0 && p.saLive {
		maxL = max(maxL, p.lSA)
	}

	if m <= 1 && p.dicLive {
		maxL = max(maxL, p.lDict)
	}
	w := p.w
	wNew := expWeight(maxL - p.lNew)
	var wSub uint64
	for i := range p.cands {
		c := &p.cands[i]
		wc := expWeight(maxL - c.l)
		e := uint64(p.eps[c.class])
		wSub += wc * e >> 16
	}
	// A substituted code follows the fallback mixed with the uniform law:
	// q(v) = (A·f(v) + (256−A)·65536/K) / 256.
	a := uint64(p.m.subMix)
	u := uint64(1<<16) / uint64(g.K) * (256 - a)
	for v := range w {
		f := uint64(p.f[v])
		w[v] = wNew*f + wSub*((f*a+u)>>8)
	}
	for i := range p.cands {
		c := &p.cands[i]
		wc := expWeight(maxL - c.l)
		w[c.tile[m]] += wc * (1<<16 - uint64(p.eps[c.class]))
	}
	if m == 0 && p.saLive {
		p.anyWeights(expWeight(maxL - p.lSA))
	}

	if p.epLive {
		we := expWeight(maxL - p.lEp)
		if m == 0 {
			for v, l := range p.epFirst {
				if len(l) > 0 {
					w[v] += (we << 16) * uint64(len(l)) / p.epTotal
				}
			}
		} else if m == 1 {
			l := p.epFirst[p.epV0]
			for _, r := range l {
				v1 := p.hist[int(r/int32(g.S))*p.n+int(r%int32(g.S))*g.M+1]
				w[v1] += (we << 16) / uint64(len(l))
			}
		}
	}
	if p.dicLive {
		wd := expWeight(maxL - p.lDict)
		if m == 0 {
			for v, c := range p.m.dictCnt {
				if c > 0 {
					w[v] += (wd << 16) * c / p.m.dictTotal
				}
			}
		} else if m == 1 {
			tot := p.m.dictCnt[p.dictV0]
			for _, pe := range p.m.dictPairs[p.dictV0] {
				w[pe.v1] += (wd << 16) * pe.cnt / tot
			}
		}
	}
	var tot uint64
	for _, x := range w {
		tot += x
	}
	sh := 0
	for tot>>sh >= 1<<31 {
		sh++
	}
	for v, x := range w {
		p.wq[v] = uint32(x >> sh)
	}
	if err := rans.Quantize(p.wq, p.m.Precision, p.cum); err != nil {
		panic("wm: " + err.Error()) // unreachable: K <= 2^Precision is checked at load
	}
	return p.cum
}

// Commit records the reconstructed value of coordinate j.
func (p *Predictor) Commit(j int, v uint16) {
	g := p.g
	s, m := j/g.M, j%g.M
	p.hist[p.t*p.n+j] = v
	fv := uint64(p.f[v])
	p.lNew += lg(fv) - 16*256
	a := uint64(p.m.subMix)
	qv := (fv*a + uint64(1<<16)/uint64(g.K)*(256-a)) >> 8
	for i := range p.cands {
		c := &p.cands[i]
		e := uint64(p.eps[c.class])
		if c.tile[m] == v {
			c.l += lg(1<<16-e+(e*qv>>16)) - 16*256
		} else {
			c.l += lg(max(1, e*qv>>16)) - 16*256
			c.mis++
		}
	}
	if m == 0 && p.saLive {
		p.anyExpand(p.lSA, v)
		p.saLive = false
	}

	if p.epLive {
		switch {
		case m == 0 && len(p.epFirst[v]) > 0 && g.M > 1:
			p.lEp += lg(uint64(len(p.epFirst[v]))) - lg(p.epTotal)
			p.epV0 = v
		case m == 1:
			// Each tile starting with epV0 had probability 1/n; expand the
			// ones whose second code is v, most recent first.
			l := p.epFirst[p.epV0]
			base := p.lEp - lg(uint64(len(l)))
			added := 0
			for k := len(l) - 1; k >= 0 && added < histCap; k-- {
				r := ref{storeHist, l[k] / int32(g.S), l[k] % int32(g.S)}
				tl := p.tileOf(r)
				if tl[1] != v {
					continue
				}
				p.cands = append(p.cands, cand{r: r, tile: tl, class: clsEp, l: base, id: -1})
				added++
			}
			p.epLive = false
		default:
			p.epLive = false
		}
	}
	if p.dicLive {
		switch {
		case m == 0 && p.m.dictCnt[v] > 0 && g.M > 1:
			p.lDict += lg(p.m.dictCnt[v]) - lg(p.m.dictTotal)
			p.dictV0 = v
		case m == 1:
			pairs := p.m.dictPairs[p.dictV0]
			k, found := slices.BinarySearchFunc(pairs, v, func(pe pairEntry, v uint16) int { return int(pe.v1) - int(v) })
			if found {
				pe := pairs[k]
				base := p.lDict - lg(p.m.dictCnt[p.dictV0])
				ids := p.m.dictFirst[p.dictV0][pe.lo:min(pe.hi, pe.lo+dictCap)]
				for _, id := range ids {
					rep := p.m.tileRep[id]
					r := ref{storeRef, rep / int32(g.S), rep % int32(g.S)}
					p.cands = append(p.cands, cand{r: r, tile: p.tileOf(r), class: clsDict, l: base + lg(uint64(p.m.tileCount[id])), id: id})
				}
			}
			p.dicLive = false
		default:
			p.dicLive = false
		}
	}
	// prune
	maxL := p.lNew
	for i := range p.cands {
		maxL = max(maxL, p.cands[i].l)
	}
	k := 0
	for _, c := range p.cands {
		if maxL-c.l <= pruneBits*256 {
			p.cands[k] = c
			k++
		}
	}
	p.cands = p.cands[:k]
	if m == g.M-1 {
		p.endSlot(s, maxL)
	}
}

func (p *Predictor) endSlot(s int, maxL int32) {
	g := p.g
	best := -1
	for i := range p.cands {
		if p.cands[i].l == maxL {
			best = i
			break
		}
	}
	b := &p.hits[p.bucket]
	counted := clsNew
	if best >= 0 && int(p.cands[best].mis)*4 <= g.M && p.lNew < maxL {
		c := &p.cands[best]
		counted = int(c.class)
		b[c.class]++
		p.hitsS[s*nClasses+int(c.class)]++
		p.mis[c.class] += uint32(c.mis)
		p.cn[c.class] += uint32(g.M)
		if c.r.store == storeRef {
			// Every occurrence of the tile in the reference store is a
			// state this one may resemble.
			for _, o := range p.m.tileOcc[p.m.tileOf[c.r.state*int32(g.S)+c.r.slot]] {
				p.addAnchor(ref{storeRef, o / int32(g.S), 0})
			}
		} else {
			p.addAnchor(ref{c.r.store, c.r.state, 0})
		}
	} else {
		b[clsNew]++
		p.hitsS[s*nClasses+clsNew]++
	}
	if p.hitsP != nil {
		pc := nClasses
		if s > 0 {
			pc = p.prevCls
		}
		p.hitsP[(s*(nClasses+1)+pc)*nClasses+counted]++
	}
	p.prevCls = counted
	// The next slot continues every plausible match of this one: the
	// candidates within contBits of the best, in list order, each at the
	// slots the model lists for its slot, at most contCap, distinct.
	p.conts = p.conts[:0]
	p.contW = p.contW[:0]
	p.contTot = 0
	for i := range p.cands {
		c := &p.cands[i]
		if maxL-c.l > contBits*256 || int(c.mis)*4 > g.M || c.l <= p.lNew-contBits*256 {
			continue
		}
		wc := expWeight(maxL - c.l)
		for _, ce := range p.m.contNext[c.r.slot] {
			r := ref{c.r.store, c.r.state, int32(ce.y)}
			if k := slices.Index(p.conts, r); k >= 0 {
				continue
			}
			w := max(wc*uint64(ce.p)>>15, 1)
			p.conts = append(p.conts, r)
			p.contW = append(p.contW, w)
			p.contTot += w
			if len(p.conts) == contCap {
				break
			}
		}
		if len(p.conts) == contCap {
			break
		}
	}
	// Add the tile to the episode's distinct tiles.
	off := p.t*p.n + s*g.M
	tl := p.hist[off : off+g.M]
	h := p.tileHash(tl)
	head, ok := p.epIndex[h]
	if !ok {
		head = -1
	}
	for e := head; e >= 0; e = p.epNext[e] {
		r := p.epRefs[e]
		o := int(r/int32(g.S))*p.n + int(r%int32(g.S))*g.M
		if slices.Equal(p.hist[o:o+g.M], tl) {
			return
		}
	}
	r := int32(p.t*g.S + s)
	p.epIndex[h] = int32(len(p.epRefs))
	p.epRefs = append(p.epRefs, r)
	p.epNext = append(p.epNext, head)
	p.epFirst[tl[0]] = append(p.epFirst[tl[0]], r)
	p.epTotal++
}

func (p *Predictor) addAnchor(r ref) {
	if i, ok := p.anchorIdx[r]; ok {
		p.anchors[i].n++
		return
	}
	p.anchorIdx[r] = int32(len(p.anchors))
	p.anchors = append(p.anchors, anchor{r, 1})
}

// nextSuccessors turns the anchors of the state just completed into the
// successor states of the next one: the anchors most slots matched first
// (ties: history before reference store, then lower state), at most
// the model's anchorCap of them, each replaced by the state that followed
// it; then, up to the model's succCap states in all, the states that
// preceded the anchors, in the same order.
func (p *Predictor) nextSuccessors() {
	slices.SortFunc(p.anchors, func(a, b anchor) int {
		if a.n != b.n {
			if a.n > b.n {
				return -1
			}
			return 1
		}
		if a.r.store != b.r.store {
			return int(a.r.store) - int(b.r.store)
		}
		return int(a.r.state) - int(b.r.state)
	})
	p.succ = p.succ[:0]
	p.succN = p.succN[:0]
	p.succTot = 0
	for _, a := range p.anchors {
		if len(p.succ) == p.m.anchorCap {
			break
		}
		switch a.r.store {
		case storeHist:
			// The state after a history state is in the history too,
			// unless the anchor is the state just completed.
			if int(a.r.state)+1 <= p.t {
				p.succ = append(p.succ, ref{storeHist, a.r.state + 1, 0})
				p.succN = append(p.succN, a.n)
				p.succTot += uint64(a.n)
			}
		case storeRef:
			if nx := p.m.refNext[a.r.state]; nx >= 0 {
				p.succ = append(p.succ, ref{storeRef, nx, 0})
				p.succN = append(p.succN, a.n)
				p.succTot += uint64(a.n)
			}
		}
	}
	// Then the states before them: on a walk that can go back, they are
	// where it may go next too (model version 2).
	for _, a := range p.anchors {
		if len(p.succ) >= p.m.succCap {
			break
		}
		switch a.r.store {
		case storeHist:
			if a.r.state >= 1 {
				p.succ = append(p.succ, ref{storeHist, a.r.state - 1, 0})
				p.succN = append(p.succN, a.n)
				p.succTot += uint64(a.n)
			}
		case storeRef:
			if pv := a.r.state - 1; pv >= 0 && p.m.refNext[pv] == a.r.state {
				p.succ = append(p.succ, ref{storeRef, pv, 0})
				p.succN = append(p.succN, a.n)
				p.succTot += uint64(a.n)
			}
		}
	}
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

// anyWeights adds to p.w the first-code distribution of the succany
// hypothesis: a tile drawn from successor state i with probability
// succWeight(i)/succW, then uniformly among its slots; or, when the model
// has an offset law, from successor state i with probability
// succN[i]/succTot, then at slot x with the probability the law gives the
// offset x − slot for the two states' buckets.
func (p *Predictor) anyWeights(w uint64) {
	g := p.g
	for i, r := range p.succ {
		if op := p.offsetRow(i); op != nil {
			base := (w << 16) * uint64(p.succN[i]) / p.succTot
			for x := range g.S {
				v := p.tileOf(ref{r.store, r.state, int32(x)})[0]
				p.w[v] += base * uint64(op[(x-p.slot+g.S)%g.S]) >> 16
			}
			continue
		}
		share := (w << 16) * p.succWeight(i) / (p.succW * uint64(g.S))
		for x := range g.S {
			v := p.tileOf(ref{r.store, r.state, int32(x)})[0]
			p.w[v] += share
		}
	}
}

// offsetRow returns the model's law of the slot offset from the current
// state to successor state i, by their action buckets, or nil.
func (p *Predictor) offsetRow(i int) []uint16 {
	if p.m.offPrior == nil {
		return nil
	}
	S := p.g.S
	o := (p.bucket*nBuckets + p.succBucket(i)) * S
	return p.m.offPrior[o : o+S]
}

// succBucket is the action bucket of successor state i.
func (p *Predictor) succBucket(i int) int {
	if r := p.succ[i]; r.store == storeHist {
		return int(p.histB[r.state])
	} else {
		return int(p.m.refBkt[r.state])
	}
}

// anyExpand replaces the succany hypothesis, after its first code v, by
// candidates for the tiles starting with v.
func (p *Predictor) anyExpand(l int32, v uint16) {
	g := p.g
	for i, r := range p.succ {
		op := p.offsetRow(i)
		var li int32
		if op != nil {
			li = l - lg(p.succTot) + lg(uint64(p.succN[i]))
		} else {
			li = l - lg(p.succW*uint64(g.S)) + lg(p.succWeight(i))
		}
		for x := range g.S {
			rr := ref{r.store, r.state, int32(x)}
			if tl := p.tileOf(rr); tl[0] == v {
				lx := li
				if op != nil {
					lx += lg(uint64(op[(x-p.slot+g.S)%g.S])) - 16*256
				}
				p.cands = append(p.cands, cand{r: rr, tile: tl, class: clsSuccAny, l: lx, id: -1})
			}
		}
	}
}

// mixCacheRows bounds the combined fallback rows a predictor caches.
const mixCacheRows = 1 << 14

// mixedRow returns the combined fallback row of subspace m under the two
// contexts, from the predictor's cache when it was computed before (the
// row is a pure function of the model and its key).
func (p *Predictor) mixedRow(m, ctx1, ctx2 int, f1 []uint16) []uint16 {
	K := p.g.K
	key := (uint32(m)*uint32(K+1)+uint32(ctx1))*uint32(K+1) + uint32(ctx2)
	if i, ok := p.mixIdx[key]; ok {
		return p.mixSlb[int(i)*K : int(i+1)*K]
	}
	row2 := (m*p.m.fall2Ctx + ctx2) * K
	p.m.mixFallback(f1, p.m.fall2[row2:row2+K], p.fmix, p.fw, p.fcum)
	if p.mixIdx == nil {
		p.mixIdx = make(map[uint32]int32)
	}
	if len(p.mixIdx) < mixCacheRows {
		p.mixIdx[key] = int32(len(p.mixIdx))
		p.mixSlb = append(p.mixSlb, p.fmix...)
	}
	return p.fmix
}

// mixFallback combines two fallback rows geometrically into out (K
// frequencies >= 1 summing to 65536): l[v] = (e1·lg(f1[v]) + e2·lg(f2[v])) >> 8,
// w[v] = W(max l − l[v]), then Quantize at precision 16.
func (m *Model) mixFallback(f1, f2, out []uint16, w []uint32, cum []uint16) {
	e1, e2 := int64(m.fallExp[0]), int64(m.fallExp[1])
	var mx int32 = -1 << 30
	for v := range f1 {
		l := int32((e1*int64(lg(uint64(f1[v]))) + e2*int64(lg(uint64(f2[v])))) >> 8)
		w[v] = uint32(l + 1<<24) // stash
		mx = max(mx, l)
	}
	for v := range w {
		l := int32(w[v]) - 1<<24
		w[v] = uint32(expWeight(mx - l))
	}
	if err := rans.Quantize(w, 16, cum); err != nil {
		panic("wm: " + err.Error())
	}
	for v := range out {
		next := uint32(1 << 16)
		if v+1 < len(cum) {
			next = uint32(cum[v+1])
		}
		out[v] = uint16(next - uint32(cum[v]))
	}
}

// tileHash hashes a tile for the chunk's distinct-tile index (lookups only:
// equal tiles are confirmed by comparison, so the hash never decides bits).
func (p *Predictor) tileHash(tl []uint16) uint64 {
	var h maphash.Hash
	h.SetSeed(p.epSeed)
	var buf [2]byte
	for _, v := range tl {
		buf[0], buf[1] = byte(v), byte(v>>8)
		h.Write(buf[:])
	}
	return h.Sum64()
}
