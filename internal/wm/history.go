package wm

import "slices"

// history is the chunk's states since Reset (SPEC.md 4.1), with what the
// predictor derives from each finished slot.
type history struct {
	codes  []uint16 // the states' codes, the current one last
	bucket []uint8  // per state: its action bucket
	first  []uint16 // per finished slot (state·S+slot): its first code
	id     []int32  // per finished slot: its content id
	nextID int32    // content id of the next tile found in neither the chunk nor the dictionary
}

// reset empties the history; the ids below nextID are the dictionary's.
func (h *history) reset(nextID int32) {
	h.codes = h.codes[:0]
	h.bucket = h.bucket[:0]
	h.first = h.first[:0]
	h.id = h.id[:0]
	h.nextID = nextID
}

// grow makes room for a state of n codes and S slots.
func (h *history) grow(n, S int) {
	h.codes = slices.Grow(h.codes, n)[:len(h.codes)+n]
	h.id = slices.Grow(h.id, S)[:len(h.id)+S]
	h.first = slices.Grow(h.first, S)[:len(h.first)+S]
}

// tileOf returns the codes of the tile r points at.
func (p *core) tileOf(r ref) []uint16 {
	if r.store == storeHist {
		off := int(r.state)*p.n + int(r.slot)*p.M
		return p.hist.codes[off : off+p.M]
	}
	off := int(p.m.refPos[int(r.state)*p.S+int(r.slot)]) * p.M
	return p.m.dictTiles[off : off+p.M]
}

// slotIDs returns the content ids of the S (finished) slots of state r.
func (p *core) slotIDs(r ref) []int32 {
	off := int(r.state) * p.S
	if r.store == storeHist {
		return p.hist.id[off : off+p.S]
	}
	return p.m.tileOf[off : off+p.S]
}

// idOf returns the content id of the (finished) tile r points at: equal
// tiles, wherever they are, have equal ids.
func (p *core) idOf(r ref) int32 {
	if r.store == storeHist {
		return p.hist.id[int(r.state)*p.S+int(r.slot)]
	}
	return p.m.tileOf[int(r.state)*p.S+int(r.slot)]
}

// slotFirsts returns the first code of every slot of state r, a finished
// state: S codes kept apart from the tiles, so that a state's layout reads
// one cache line, not one per slot.
func (p *core) slotFirsts(r ref) []uint16 {
	off := int(r.state) * p.S
	if r.store == storeHist {
		return p.hist.first[off : off+p.S]
	}
	return p.m.refFirst[off : off+p.S]
}

// bucketOf returns the action bucket of state r of the history or of
// m's reference store.
func (h *history) bucketOf(r ref, m *Model) int {
	if r.store == storeHist {
		return int(h.bucket[r.state])
	}
	return int(m.refBkt[r.state])
}

// addTile gives the slot just finished its content id and adds its tile
// to the chunk's distinct tiles unless it is there already (SPEC.md 4.13,
// step 4).
func (p *fullPredictor) addTile() {
	h := &p.hist
	off := p.base + p.s*p.M
	tl := h.codes[off : off+p.M]
	r := int32(p.t*p.S + p.s)
	h.first[r] = tl[0]
	if e := p.ep.find(tl, h.codes); e >= 0 {
		h.id[r] = p.ep.id[e]
		return
	}
	id := p.m.dict.find(tl, p.m.refCodes, p.m.tileOff)
	if id < 0 {
		id = h.nextID
		h.nextID++
	}
	h.id[r] = id
	p.ep.add(tl, off, id, r, h.codes)
}
