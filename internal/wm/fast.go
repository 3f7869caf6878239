package wm

import (
	"fmt"
	"slices"

	"github.com/wmzip/wmzip/internal/fixed"
	"github.com/wmzip/wmzip/internal/rans"
)

// The fast level (model setting LevelFast) keeps only the hypotheses that
// pay for themselves at high speed. A slot starts with a *slot event*: its
// tile is a copy of one of a few candidate tiles (the continuation of the
// previous slot's match, the same slot of the state after the one the
// previous state resembled, of the previous states, ...), coded by rank,
// or an *escape*. An escaped slot is coded coordinate by coordinate: the
// value is "the match's value" (a binary event under an adaptive
// probability) or, on a miss or without a match, a value of the first
// fallback row. The match is the first candidate, replaced when it fails
// by the most recent tile of the chunk (or the most frequent tile of the
// dictionary) that agrees with every code of the slot so far. Everything
// is integer and adaptive within a chunk.

// Candidate sources, in the order the candidates are listed.
const (
	srcCont   = iota // continuation of the previous slot's match
	srcSucc          // same slot of the successor of the anchor state
	srcPrev          // same slot of state t−1
	srcCont2         // second continuation
	srcAnchor        // same slot of the anchor state
	srcPrev2         // same slot of state t−2
	srcEp            // a tile of the chunk found by its first codes
	srcDict          // a tile of the dictionary found by its first codes
	nSrc
)

const (
	maxCands   = srcPrev2 + 1 // candidate tiles of a slot event
	slotSyms   = maxCands + 1 // ranks, then escape (counts index)
	escIdx     = maxCands     // the escape's count
	slotOutcms = 3            // previous slot: copy of rank 0, other copy, escape
	runBuckets = 6
	misBuckets = mcOneStep
	bitCtxs    = nSrc * misBuckets * runBuckets
	cntStep    = 32      // a slot event's count increment
	cntLimit   = 1 << 16 // counts of a context are halved past this total
	bitRate    = 5       // adaptation shift of a hit probability
	bitInit    = 3 << 14 // initial hit probability, Q16
	lookupCap  = 64      // tiles a lookup compares, in the chunk and in the dictionary
	// mcOneStep is the mismatches after which a match predicts nothing:
	// its value is then right about one time in ten, and the binary event
	// would cost more than it saves.
	mcOneStep = 3
	pairHeads = 1 << 16 // pairs of codes the chunk lookup indexes in an array
)

// slotCountInit is the count of each rank (and of the escape, last) when a
// chunk starts.
var slotCountInit = [slotSyms]uint32{16 * cntStep, 2 * cntStep, 2 * cntStep, cntStep, cntStep, cntStep, 8 * cntStep}

// fastPredictor is the predictor of the fast level.
type fastPredictor struct {
	core
	fast *fastState
}

// fastState is the predictor state of a model of the fast level. Its
// fields, grouped below by the event they serve, are one state that every
// coordinate of the hot path reads and updates; they stay in one struct so
// that state lives in one allocation and one pointer.
type fastState struct {
	slotRef []ref            // per history slot (state·S + slot): the tile it copied or matched, or none
	anchor  ref              // the state the previous state resembled most (store none if none)
	heads   []int32          // chunk lookup: per pair of first two codes, the latest slot +1, or 0 (K² ≤ pairHeads)
	headMap map[uint32]int32 // the same for a larger K
	next    []int32          // per history slot: the previous slot of its bucket +1, or 0
	touched []int32          // entries of heads set since Reset

	// The slot event.
	cands   [maxCands]ref
	ctile   [maxCands][]uint16
	csrc    [maxCands]uint8
	nc      int
	started bool // SlotTable started the current slot
	sctx    int  // context of the slot event
	prevOut int  // the previous slot's outcome
	counts  [nSrc * slotOutcms][slotSyms]uint32
	w       [slotSyms]uint32
	cum     [slotSyms]uint16

	// The escaped slot's match.
	mt   []uint16
	mref ref
	msrc int
	mc   int // mismatches of the match in this slot
	run  int // hits of the match since its last miss (or its start)
	// noLook is set once a lookup of the slot found nothing: a later one
	// compares the same tiles with more codes, and finds nothing either.
	noLook bool
	two    bool // the current coordinate's prediction is two-step
	bctx   int
	bitP   [bitCtxs]uint32
	cumP   []uint16 // the fallback rows at the model's precision, when below 16
}

func newFastState(m *Model) *fastState {
	f := &fastState{}
	K := m.Geom.K
	if K*K <= pairHeads {
		f.heads = make([]int32, K*K)
	} else {
		f.headMap = make(map[uint32]int32)
	}
	if m.Precision < 16 {
		f.cumP = make([]uint16, len(m.fallCum))
		w := make([]uint32, K)
		for r := 0; r < len(m.fallCum); r += K {
			row := m.fallCum[r : r+K]
			for v := range K {
				w[v] = rans.Freq(row, v, 16)
			}
			rans.QuantizeTrusted(w, m.Precision, f.cumP[r:r+K])
		}
	}
	return f
}

// head returns the latest slot +1 of the chunk whose tile starts with a,
// b, or 0.
func (f *fastState) head(a, b uint16, K int) int32 {
	if f.heads != nil {
		return f.heads[int(a)*K+int(b)]
	}
	return f.headMap[uint32(a)<<16|uint32(b)]
}

// push makes slot r (state·S + slot) of the chunk, whose tile starts with
// a, b, the latest of its pair.
func (f *fastState) push(a, b uint16, K int, r int32) {
	if f.heads != nil {
		i := int(a)*K + int(b)
		if f.heads[i] == 0 {
			f.touched = append(f.touched, int32(i))
		}
		f.next[r] = f.heads[i]
		f.heads[i] = r + 1
		return
	}
	k := uint32(a)<<16 | uint32(b)
	f.next[r] = f.headMap[k]
	f.headMap[k] = r + 1
}

// Reset forgets all history.
func (p *fastPredictor) Reset() {
	f := p.fast
	p.hist.reset(0)
	p.t = -1
	f.slotRef = f.slotRef[:0]
	f.next = f.next[:0]
	for _, b := range f.touched {
		f.heads[b] = 0
	}
	f.touched = f.touched[:0]
	clear(f.headMap)
	f.anchor = ref{}
	f.prevOut = 0
	for i := range f.counts {
		f.counts[i] = slotCountInit
	}
	for i := range f.bitP {
		f.bitP[i] = bitInit
	}
}

// Begin starts the next state, led into by action (ignored after Reset).
func (p *fastPredictor) Begin(action int64) {
	f := p.fast
	p.t++
	if p.t == 0 {
		action = NoAction
	}
	p.bucket = bucketOf(action)
	p.hist.bucket = append(p.hist.bucket, uint8(p.bucket))
	// The anchor: the state most slots of the previous state matched,
	// the first of the most frequent.
	f.anchor = ref{}
	if p.t >= 1 {
		refs := f.slotRef[(p.t-1)*p.S : p.t*p.S]
		best := 0
		for i, r := range refs {
			if r.store == storeNone {
				continue
			}
			n := 0
			for _, q := range refs[i:] {
				if q.store == r.store && q.state == r.state {
					n++
				}
			}
			if n > best {
				best, f.anchor = n, ref{r.store, r.state, 0}
			}
		}
	}
	p.hist.codes = slices.Grow(p.hist.codes, p.n)[:len(p.hist.codes)+p.n]
	f.slotRef = slices.Grow(f.slotRef, p.S)[:len(f.slotRef)+p.S]
	f.next = slices.Grow(f.next, p.S)[:len(f.next)+p.S]
	p.j, p.s, p.mm, p.base = 0, 0, 0, p.t*p.n
}

// nextState returns the state after state r (store none if none).
func (p *fastPredictor) nextState(r ref) ref {
	switch r.store {
	case storeHist:
		if int(r.state)+1 < p.t {
			return ref{storeHist, r.state + 1, 0}
		}
	case storeRef:
		if n := p.m.refNext[r.state]; n >= 0 {
			return ref{storeRef, n, 0}
		}
	}
	return ref{}
}

// addCand lists the tile of r as a candidate of source src unless a
// candidate with the same tile is listed.
func (f *fastState) addCand(p *fastPredictor, r ref, src int) {
	if r.store == storeNone || f.nc == maxCands {
		return
	}
	tl := p.tileOf(r)
	for i := range f.nc {
		// The same slot is the same tile (the commonest duplicate: the
		// continuation, the successor and the previous state often name
		// one slot), else the codes decide.
		if f.cands[i] == r || equalTile(f.ctile[i], tl) {
			return
		}
	}
	f.cands[f.nc], f.ctile[f.nc], f.csrc[f.nc] = r, tl, uint8(src)
	f.nc++
}

// equalTile reports whether a and b, of one length, hold the same codes:
// slices.Equal four codes a step (tiles are compared whole more often
// than not).
func equalTile(a, b []uint16) bool {
	b = b[:len(a)]
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		if (x[0]^y[0])|(x[1]^y[1])|(x[2]^y[2])|(x[3]^y[3]) != 0 {
			return false
		}
	}
	for ; i < len(a); i++ {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// SlotEvents reports whether the model codes a slot event before the
// first coordinate of every slot (the fast level).
func (p *fastPredictor) SlotEvents() bool { return true }

// SlotTable starts the slot whose first coordinate is j and returns the
// table of its event: symbols 0..n−1 copy the n candidate tiles, symbol n
// escapes. It returns nil when the slot has no candidate: the slot is
// then escaped without an event. Only for a model with slot events.
func (p *fastPredictor) SlotTable(j int) []uint16 {
	if j != p.j || p.mm != 0 {
		panic("wm: SlotTable out of order")
	}
	f := p.fast
	s := p.s
	f.nc = 0
	if s > 0 {
		if r := f.slotRef[p.t*p.S+s-1]; r.store != storeNone {
			cn := p.m.contNext[r.slot]
			f.addCand(p, p.contRef(r, int(cn[0].y)), srcCont)
			if len(cn) > 1 {
				f.addCand(p, p.contRef(r, int(cn[1].y)), srcCont2)
			}
		}
	}
	if a := f.anchor; a.store != storeNone {
		if n := p.nextState(a); n.store != storeNone {
			f.addCand(p, ref{n.store, n.state, int32(s)}, srcSucc)
		}
	}
	if p.t >= 1 {
		f.addCand(p, ref{storeHist, int32(p.t - 1), int32(s)}, srcPrev)
	}
	if a := f.anchor; a.store != storeNone {
		f.addCand(p, ref{a.store, a.state, int32(s)}, srcAnchor)
	}
	if p.t >= 2 {
		f.addCand(p, ref{storeHist, int32(p.t - 2), int32(s)}, srcPrev2)
	}
	f.started = true
	if f.nc == 0 {
		f.startEscape()
		return nil
	}
	f.sctx = int(f.csrc[0])*slotOutcms + f.prevOut
	c := &f.counts[f.sctx]
	n := f.nc
	copy(f.w[:n], c[:n])
	f.w[n] = c[escIdx]
	rans.QuantizeTrusted(f.w[:n+1], p.prec, f.cum[:n+1])
	return f.cum[:n+1]
}

// contRef returns the reference that continues the match r at slot y, or
// none when it names an unfinished slot of the current state.
func (p *fastPredictor) contRef(r ref, y int) ref {
	if r.store == storeHist && int(r.state) == p.t && y >= p.s {
		return ref{}
	}
	return ref{r.store, r.state, int32(y)}
}

// SlotSymbol returns the symbol of the slot event that codes tile, the
// codes of the slot SlotTable started (encoder side).
func (p *fastPredictor) SlotSymbol(tile []uint16) int {
	f := p.fast
	for i := range f.nc {
		if slices.Equal(f.ctile[i], tile) {
			return i
		}
	}
	return f.nc
}

// SlotCandidate returns the tile of candidate i of the slot SlotTable
// started (the tile symbol i copies), or nil when the slot has fewer
// candidates. An encoder may copy a candidate that differs from the
// slot's codes where the distortion is worth the bits saved. The tile is
// the predictor's: it must not be modified.
func (p *fastPredictor) SlotCandidate(i int) []uint16 {
	if i < p.fast.nc {
		return p.fast.ctile[i]
	}
	return nil
}

// countEvent counts outcome k of a slot event in its context's counts c,
// halving them all once their total passes cntLimit.
func countEvent(c []uint32, k int) {
	c[k] += cntStep
	var tot uint32
	for _, x := range c {
		tot += x
	}
	if tot > cntLimit {
		for i := range c {
			c[i] = (c[i] + 1) >> 1
		}
	}
}

// CommitSlot records the symbol of the slot event after SlotTable. For a
// copy it returns the slot's tile, committed whole: the next coordinate is
// the next slot's first. For the escape it returns nil and the slot's
// coordinates follow with Predict and Commit.
func (p *fastPredictor) CommitSlot(sym int) []uint16 {
	f := p.fast
	k := escIdx
	if sym < f.nc {
		k = sym
	}
	countEvent(f.counts[f.sctx][:], k)
	if sym >= f.nc {
		f.prevOut = 2
		f.startEscape()
		return nil
	}
	f.prevOut = min(sym, 1)
	tl := f.ctile[sym]
	off := p.base + p.s*p.M
	copy(p.hist.codes[off:off+p.M], tl)
	f.slotRef[p.t*p.S+p.s] = f.cands[sym]
	p.endSlotFast()
	return p.hist.codes[off : off+p.M]
}

// startEscape starts the coordinates of an escaped slot: the first
// candidate is the match.
func (f *fastState) startEscape() {
	f.mt, f.mref, f.msrc = nil, ref{}, 0
	if f.nc > 0 {
		f.mt, f.mref, f.msrc = f.ctile[0], f.cands[0], int(f.csrc[0])
	}
	f.mc, f.run = 0, 0
	f.noLook = false
}

// endSlotFast ends the current slot: it indexes the slot's tile for
// lookups and moves to the next slot.
func (p *fastPredictor) endSlotFast() {
	f := p.fast
	off := p.base + p.s*p.M
	r := int32(p.t*p.S + p.s)
	if p.M >= 2 {
		f.push(p.hist.codes[off], p.hist.codes[off+1], p.K, r)
	}
	p.s++
	p.mm = 0
	p.j = p.s * p.M
}

// runBucketOf maps a run of hits, up to 9, to a context bucket: the run
// below 3, then 3 below 5, 4 below 9, 5 from 9.
var runBucketOf = [10]uint8{0, 1, 2, 3, 3, 4, 4, 4, 4, 5}

// runBucket maps a run of hits to a context bucket.
func runBucket(run int) int { return int(runBucketOf[min(run, 9)]) }

func (p *fastPredictor) fallRowFast() []uint16 {
	ctx := 0
	if p.m.fallCtx > 1 {
		ctx = p.K
		if p.s > 0 {
			ctx = int(p.hist.codes[p.base+p.j-p.M])
		}
	}
	row := p.mm*p.m.fallCtx + ctx
	r := row * p.K
	p.fall.r1 = row // Row finds f1 from it
	if p.fast.cumP != nil {
		return p.fast.cumP[r : r+p.K]
	}
	return p.m.fallCum[r : r+p.K]
}

// Table returns the table of the current coordinate (after Predict): its
// fallback row.
func (p *fastPredictor) Table() []uint16 {
	pr := &p.pred
	if pr.tab != nil {
		return pr.tab
	}
	pr.tab = p.fallRowFast()
	return pr.tab
}

// ModalFreq returns Modal and its frequency at the model's precision (hit
// for a two-step coordinate).
func (p *fastPredictor) ModalFreq() (uint16, uint32) {
	if v, f, ok := p.modalKnown(); ok {
		return v, f
	}
	return p.modalOf(p.Table())
}

// Row returns the first fallback row of the current coordinate and its
// key, as the full level's Row.
func (p *fastPredictor) Row() (key uint64, f1 []uint16) {
	p.Table() // finds the row if no table was asked for yet
	r := p.fall.r1 * p.K
	return uint64(p.fall.r1), p.m.fallCum[r : r+p.K]
}

// bestTile returns nil: the fast level has no groups.
func (p *fastPredictor) bestTile() []uint16 { return nil }

// Predict prepares coordinate j, as the full level's Predict.
func (p *fastPredictor) Predict(j int) (uint16, uint32) {
	if j != p.j {
		panic("wm: Predict out of order")
	}
	f := p.fast
	if p.mm == 0 && !f.started {
		// A caller that codes no slot event escapes every slot.
		f.nc = 0
		f.startEscape()
	}
	f.started = false
	// The fallback row is found when asked for (Table, Row): a hit of
	// the match needs none.
	pr := &p.pred
	pr.tab = nil
	pr.modalOK = false
	f.two = f.mt != nil && f.mc < mcOneStep
	if !f.two {
		pr.top, pr.hit = 0, 0
		return 0, 0
	}
	f.bctx = (f.msrc*misBuckets+f.mc)*runBuckets + runBucket(f.run)
	h := f.bitP[f.bctx] >> (16 - p.prec)
	pr.top, pr.hit = f.mt[p.mm], uint32(min(max(h, 1), 1<<p.prec-1))
	return pr.top, pr.hit
}

// Commit records the reconstructed value of coordinate j (after Predict).
func (p *fastPredictor) Commit(j int, v uint16) { p.commitFast(j, v, true) }

// CommitOmitted records the value v of coordinate j that the retention
// rule left out, as the full level's CommitOmitted.
func (p *fastPredictor) CommitOmitted(j int, v uint16) {
	if j != p.j {
		panic("wm: Commit out of order")
	}
	p.commitFast(j, v, false)
}

func (p *fastPredictor) commitFast(j int, v uint16, evidence bool) {
	if j != p.j {
		panic("wm: Commit out of order")
	}
	f := p.fast
	m := p.mm
	p.hist.codes[p.base+j] = v
	if f.mt != nil {
		// The hit probability learns from the coordinates it coded.
		evidence = evidence && f.two
		if f.mt[m] == v {
			if evidence {
				f.bitP[f.bctx] += (1<<16 - f.bitP[f.bctx]) >> bitRate
			}
			f.run++
		} else {
			if evidence {
				f.bitP[f.bctx] -= f.bitP[f.bctx] >> bitRate
			}
			f.mc++
			f.run = 0
		}
	}
	if m >= 1 && !f.noLook && (f.mt == nil || f.mt[m] != v) {
		p.lookupFast()
	}
	p.j++
	if p.mm++; p.mm < p.M {
		return
	}
	r := ref{}
	if f.mt != nil && f.mc == 0 {
		r = f.mref
	}
	f.slotRef[p.t*p.S+p.s] = r
	p.endSlotFast()
}

// DecodeSlot decodes from d the coordinates of the escaped slot that
// SlotTable and CommitSlot started (SlotTable returned nil or CommitSlot
// did), every one retained: the first in lane lane, each next one in the
// next lane. It returns the slot's codes, valid until the next call of the
// predictor, and their ideal code length in units of 2^-16 bit
// (fixed.Cost, after fixed.InitCost). It is, for every coordinate of the
// slot, Predict, the decoding of the value as the container codes it (a
// two-step prediction's binary event, then on a miss or without one a
// symbol of Table) and Commit, in one call. After an error of d the codes
// mean nothing; d.Err reports it.
func (p *fastPredictor) DecodeSlot(d *rans.Decoder, lane int) ([]uint16, uint64) {
	f := p.fast
	if p.mm != 0 || !f.started {
		panic("wm: DecodeSlot out of order")
	}
	f.started = false
	p.pred.tab, p.pred.modalOK, p.pred.top, p.pred.hit = nil, false, 0, 0
	lanes := d.Lanes()
	prec := p.prec
	one := uint32(1) << prec
	off := p.base + p.s*p.M
	codes := p.hist.codes[off : off+p.M]
	// The fallback rows (fallRowFast): per coordinate, by the code of the
	// previous slot there when the rows have that context.
	K, fc := p.K, p.m.fallCtx
	rows := p.m.fallCum
	if f.cumP != nil {
		rows = f.cumP
	}
	var prev []uint16
	ctx := 0
	if fc > 1 {
		ctx = K
		if p.s > 0 {
			prev = p.hist.codes[off-p.M : off]
		}
	}
	var cost uint64
	for m := range codes {
		var v uint16
		two := f.mt != nil && f.mc < mcOneStep
		bctx := 0
		hit := false
		if two {
			bctx = (f.msrc*misBuckets+f.mc)*runBuckets + runBucket(f.run)
			h := min(max(f.bitP[bctx]>>(16-prec), 1), one-1)
			if d.DecodeBinary(lane, h) == 0 {
				v, hit = f.mt[m], true
				cost += fixed.Cost(h, prec)
			} else {
				cost += fixed.Cost(one-h, prec)
			}
		}
		if !hit {
			c := ctx
			if prev != nil {
				c = int(prev[m])
			}
			r := (m*fc + c) * K
			row := rows[r : r+K : r+K]
			s := d.Decode(lane, row)
			v = uint16(s)
			cost += fixed.Cost(rans.Freq(row, s, prec), prec)
		}
		if lane++; lane == lanes {
			lane = 0
		}
		// Commit (commitFast).
		codes[m] = v
		if f.mt != nil {
			if f.mt[m] == v {
				if two {
					f.bitP[bctx] += (1<<16 - f.bitP[bctx]) >> bitRate
				}
				f.run++
			} else {
				if two {
					f.bitP[bctx] -= f.bitP[bctx] >> bitRate
				}
				f.mc++
				f.run = 0
			}
		}
		if m >= 1 && !f.noLook && (f.mt == nil || f.mt[m] != v) {
			p.lookupFast()
		}
		p.j++
		p.mm++
	}
	r := ref{}
	if f.mt != nil && f.mc == 0 {
		r = f.mref
	}
	f.slotRef[p.t*p.S+p.s] = r
	p.endSlotFast()
	return codes, cost
}

// lookupFast replaces the match by the latest tile of the chunk, or else
// the most frequent tile of the dictionary, that agrees with the codes of
// the slot so far (at least two), if there is one.
func (p *fastPredictor) lookupFast() {
	f := p.fast
	off := p.base + p.s*p.M
	have := p.hist.codes[off : off+p.mm+1]
	M := p.M
	steps := 0
	for e := f.head(have[0], have[1], p.K); e != 0 && steps < lookupCap; e = f.next[e-1] {
		steps++
		o := int(e-1)/p.S*p.n + int(e-1)%p.S*M
		tl := p.hist.codes[o : o+M]
		if equalTile(tl[:len(have)], have) {
			f.mt, f.mref, f.msrc = tl, ref{storeHist, (e - 1) / int32(p.S), (e - 1) % int32(p.S)}, srcEp
			f.mc, f.run = 0, 0
			return
		}
	}
	f.noLook = true
	m := p.m
	if m.dictTotal == 0 {
		return
	}
	pairs := m.dictPairs[have[0]]
	k, found := slices.BinarySearchFunc(pairs, have[1], func(pe pairEntry, v uint16) int { return int(pe.v1) - int(v) })
	if !found {
		return
	}
	pe := pairs[k]
	from := m.dictStart[have[0]] + int(pe.lo)
	to := m.dictStart[have[0]] + int(min(pe.hi, pe.lo+lookupCap))
	for pos := from; pos < to; pos++ {
		tl := m.dictTiles[pos*M : pos*M+M]
		if equalTile(tl[:len(have)], have) {
			f.mt, f.mref, f.msrc = tl, m.dictRef[pos], srcDict
			f.mc, f.run = 0, 0
			f.noLook = false
			return
		}
	}
}

// Level returns the model's level: LevelFull, LevelFast or LevelCopy.
func (m *Model) Level() int { return m.level }

// WithLevel returns a copy of m at level l: LevelFull, LevelFast or
// LevelCopy.
// The copy has a new ID: the level changes every prediction.
func (m *Model) WithLevel(l int) (*Model, error) {
	if !validLevel(l) {
		return nil, fmt.Errorf("wm: level %d unknown", l)
	}
	c := *m
	c.level = l
	if m.raw != nil {
		c.encode()
	}
	return &c, nil
}
