package wm

import (
	"github.com/wmzip/wmzip/internal/rans"
)

// The copy level (model setting LevelCopy) predicts as the default level
// and adds a slot event: at a slot's start, once its groups are formed,
// the slot is a copy of the tile of one of the leading groups, coded by
// rank, or an escape, after which its coordinates are coded one by one as
// at the default level. A copied slot is committed whole: each group
// loses copyMisBits per code its tile does not share with the copy, and
// the slot ends as the default level's does.

const (
	copyCands   = 2 // candidate tiles of a copy event
	copySyms    = copyCands + 1
	copyMargins = 8 // margin buckets
	copyOutcms  = 3 // previous slot: copy of rank 0, other copy, escape
	copyCtxs    = nClasses * copyMargins * copyOutcms
	// The event is coded where its context's counts give a copy at least
	// copyCodeNum/copyCodeDen.
	copyCodeNum = 4
	copyCodeDen = 5
)

// copyPredictor is the predictor of the copy level: the full level's,
// with the slot event.
type copyPredictor struct {
	fullPredictor
	cp *copyState
}

// Reset forgets all history.
func (p *copyPredictor) Reset() {
	p.fullPredictor.Reset()
	p.cp.reset()
}

// Predict is the full level's Predict, the slot started by SlotTable
// where it was called.
func (p *copyPredictor) Predict(j int) (top uint16, hit uint32) {
	if j != p.j {
		panic("wm: Predict out of order")
	}
	if p.mm == 0 {
		if p.cp.started {
			p.cp.started = false // SlotTable started the slot
			if p.any.live {
				p.any.slotSpikes(p.s, p.S)
			}
		} else {
			// The succany spikes wait for the slot's first Predict: a
			// copied slot never needs them.
			p.startSlot(false)
		}
	}
	return p.predict()
}

// Commit is the full level's, a slot's event counted at its end when it
// was not coded.
func (p *copyPredictor) Commit(j int, v uint16) {
	if p.commit(j, v) {
		p.copyCountSlot()
		p.nextSlot()
	}
}

// CommitOmitted is the full level's, as Commit.
func (p *copyPredictor) CommitOmitted(j int, v uint16) {
	if j != p.j {
		panic("wm: Commit out of order")
	}
	if p.commitOmitted(v) {
		p.copyCountSlot()
		p.nextSlot()
	}
}

// SlotEvents reports that the copy level codes slot events.
func (p *copyPredictor) SlotEvents() bool { return true }

// SlotTable is the fast level's SlotTable at the copy level: the
// candidates are the tiles of the leading groups.
func (p *copyPredictor) SlotTable(j int) []uint16 {
	if j != p.j || p.mm != 0 {
		panic("wm: SlotTable out of order")
	}
	return p.copySlotTable()
}

// SlotSymbol is the fast level's SlotSymbol at the copy level.
func (p *copyPredictor) SlotSymbol(tile []uint16) int { return p.copySlotSymbol(tile) }

// SlotCandidate is the fast level's SlotCandidate at the copy level.
func (p *copyPredictor) SlotCandidate(i int) []uint16 {
	if i < p.cp.nc {
		return p.cp.ct[i]
	}
	return nil
}

// CommitSlot is the fast level's CommitSlot at the copy level.
func (p *copyPredictor) CommitSlot(sym int) []uint16 { return p.copyCommitSlot(sym) }

// DecodeSlot decodes nothing at the copy level: an escaped slot's
// coordinates are decoded one by one.
func (p *copyPredictor) DecodeSlot(*rans.Decoder, int) ([]uint16, uint64) { return nil, 0 }

// copyCountInit is the count of each rank (and of the escape, last) when a
// chunk starts.
var copyCountInit = [copySyms]uint32{4 * cntStep, cntStep, 4 * cntStep}

// copyState is the slot event's state at the copy level.
type copyState struct {
	started bool // SlotTable started the current slot
	nc      int
	cg      [copyCands]int32    // the candidates' groups
	ct      [copyCands][]uint16 // and their tiles
	pending bool                // the event was not coded: it is counted at the slot's end
	ctx     int
	prevOut int
	counts  [copyCtxs][copySyms]uint32
	w       [copySyms]uint32
	cum     [copySyms]uint16
}

func (c *copyState) reset() {
	c.started = false
	c.pending = false
	c.prevOut = 0
	for i := range c.counts {
		c.counts[i] = copyCountInit
	}
}

// marginBucket maps the lead of the first candidate over the next
// hypothesis, in 1/256 bits, to a bucket. (At a slot's start log-weights
// are priors, of −16 to 0 bits: the lead is at most 16 bits, and negative
// when new content leads.)
func marginBucket(d int32) int {
	for i, b := range marginBounds {
		if d < b {
			return i
		}
	}
	return len(marginBounds)
}

// marginBounds are the bounds of the margin buckets but the last.
var marginBounds = [copyMargins - 1]int32{-1536, 0, 768, 1280, 1536, 1792, 2048}

// copySlotTable is SlotTable at the copy level.
func (p *copyPredictor) copySlotTable() []uint16 {
	c := p.cp
	p.startSlot(false)
	c.started = true
	c.nc = 0
	groups := p.grp.list
	// The leading groups of distinct tiles, best first (the first formed
	// among equals). Every group formed at a slot's start has the content
	// id of its tile: equal ids, equal tiles.
	for c.nc < copyCands {
		best := int32(-1)
		for i := range groups {
			g := &groups[i]
			if best >= 0 && g.l <= groups[best].l {
				continue
			}
			taken := false
			for k := range c.nc {
				if int32(i) == c.cg[k] || groups[c.cg[k]].id == g.id {
					taken = true
					break
				}
			}
			if !taken {
				best = int32(i)
			}
		}
		if best < 0 {
			break
		}
		c.cg[c.nc] = best
		c.ct[c.nc] = groups[best].tile
		c.nc++
	}
	if c.nc == 0 {
		return nil
	}
	lead := groups[c.cg[0]].l
	next := p.lNew
	if c.nc > 1 {
		next = max(next, groups[c.cg[1]].l)
	}
	c.ctx = (int(groups[c.cg[0]].cls)*copyMargins+marginBucket(lead-next))*copyOutcms + c.prevOut
	cnt := &c.counts[c.ctx]
	n := c.nc
	var cp, tot uint32
	for i, x := range cnt {
		if i < n {
			cp += x
		}
		tot += x
	}
	if uint64(cp)*copyCodeDen < uint64(tot)*copyCodeNum {
		// A copy is not likely enough here to be worth its event.
		c.pending = true
		return nil
	}
	copy(c.w[:n], cnt[:n])
	c.w[n] = cnt[copyCands]
	rans.QuantizeTrusted(c.w[:n+1], p.prec, c.cum[:n+1])
	return c.cum[:n+1]
}

func (p *copyPredictor) copySlotSymbol(tile []uint16) int {
	c := p.cp
	for i := range c.nc {
		if equalTile(c.ct[i], tile) {
			return i
		}
	}
	return c.nc
}

// count counts the outcome sym of the slot's event in its context.
func (c *copyState) count(sym int) {
	k := copyCands // the escape
	c.prevOut = 2
	if sym < c.nc {
		k, c.prevOut = sym, min(sym, 1)
	}
	countEvent(c.counts[c.ctx][:], k)
}

// copyCountSlot counts, at the end of a slot whose event was not coded,
// the event its tile would have been.
func (p *copyPredictor) copyCountSlot() {
	c := p.cp
	if !c.pending {
		return
	}
	c.pending = false
	off := p.base + p.s*p.M
	c.count(p.copySlotSymbol(p.hist.codes[off : off+p.M]))
}

// copyCommitSlot is CommitSlot at the copy level.
func (p *copyPredictor) copyCommitSlot(sym int) []uint16 {
	c := p.cp
	c.count(sym)
	if sym >= c.nc {
		return nil
	}
	c.started = false
	groups := p.grp.list
	off := p.base + p.s*p.M
	tl := p.hist.codes[off : off+p.M]
	copy(tl, groups[c.cg[sym]].tile)
	// The batched commit: the groups of other tiles (other content ids)
	// are dropped.
	maxL := groups[c.cg[sym]].l
	n := 0
	id := groups[c.cg[sym]].id
	for i := range groups {
		if i == int(c.cg[sym]) || groups[i].id == id {
			groups[n] = groups[i]
			n++
		}
	}
	p.grp.list = groups[:n]
	p.lNew = maxL - 1<<20
	p.maxC = maxL
	p.j += p.M
	p.endSlot(maxL)
	p.mm = 0
	p.s++
	return tl
}
