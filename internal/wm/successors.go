package wm

import (
	"slices"

	"github.com/wmzip/wmzip/internal/fixed"
)

// successors are ANCH, the anchors of the current state, and SUCC, the
// successor states of the previous state's anchors (SPEC.md 4.8), with
// their weights for the current state.
type successors struct {
	anchors []anchor
	keys    []uint64 // sortAnchors' scratch
	idx     keyIndex // per anchor's store and state: its index in anchors

	list []ref    // SUCC: state references (slot unused)
	n    []uint32 // per successor: cnt_i
	tot  uint64   // SC, Σ cnt_i
	u    []uint64 // per successor: u_i, for the current state
	lu   []int32  // per successor: lg(u_i)
	su   uint64   // SU, Σ u_i
	base int32    // the successors' batch base at the current slot
}

// anchor counts the slots of the current state matched in one state.
type anchor struct {
	r ref // slot unused
	n uint32
}

// reset forgets the anchors and successors.
func (sc *successors) reset() {
	sc.anchors = sc.anchors[:0]
	sc.list = sc.list[:0]
	sc.n = sc.n[:0]
	sc.tot = 0
}

// weigh sets u_i, lg(u_i) and SU for a state of action bucket b.
func (sc *successors) weigh(b int, h *history, m *Model) {
	ns := len(sc.list)
	sc.su = 0
	sc.u = slices.Grow(sc.u[:0], ns)[:ns]
	sc.lu = slices.Grow(sc.lu[:0], ns)[:ns]
	for i, r := range sc.list {
		x := uint64(sc.n[i])
		if h.bucketOf(r, m) == b {
			x *= succActBoost
		}
		sc.u[i], sc.lu[i] = x, fixed.Lg(x)
		sc.su += x
	}
}

// beginState empties the anchors for the state about to begin.
func (sc *successors) beginState() {
	sc.anchors = sc.anchors[:0]
	sc.idx.next()
}

// addAnchor counts one more slot matched in state r.
func (sc *successors) addAnchor(r ref) {
	key := uint64(uint8(r.store))<<32 | uint64(uint32(r.state))
	i, found := sc.idx.slot(key)
	if found {
		sc.anchors[sc.idx.vals[i]].n++
		return
	}
	sc.idx.set(i, key, int32(len(sc.anchors)))
	sc.anchors = append(sc.anchors, anchor{r, 1})
}

// next turns the anchors of state t, just completed, into the successor
// states of the next one: the anchors most slots matched first (ties:
// history before reference store, then lower state), at most the model's
// anchorCap of them, each replaced by the state that followed it; then,
// up to the model's succCap states in all, the states that preceded the
// anchors, in the same order.
func (sc *successors) next(m *Model, t int) {
	sc.sortAnchors()
	sc.list = sc.list[:0]
	sc.n = sc.n[:0]
	sc.tot = 0
	add := func(r ref, n uint32) {
		sc.list = append(sc.list, r)
		sc.n = append(sc.n, n)
		sc.tot += uint64(n)
	}
	for _, a := range sc.anchors {
		if len(sc.list) == m.anchorCap {
			break
		}
		switch a.r.store {
		case storeHist:
			// The state after a history state is in the history too,
			// unless the anchor is the state just completed.
			if int(a.r.state)+1 <= t {
				add(ref{storeHist, a.r.state + 1, 0}, a.n)
			}
		case storeRef:
			if nx := m.refNext[a.r.state]; nx >= 0 {
				add(ref{storeRef, nx, 0}, a.n)
			}
		}
	}
	// Then the states before them: on a walk that can go back, they are
	// where it may go next too.
	for _, a := range sc.anchors {
		if len(sc.list) >= m.succCap {
			break
		}
		switch a.r.store {
		case storeHist:
			if a.r.state >= 1 {
				add(ref{storeHist, a.r.state - 1, 0}, a.n)
			}
		case storeRef:
			if pv := a.r.state - 1; pv >= 0 && m.refNext[pv] == a.r.state {
				add(ref{storeRef, pv, 0}, a.n)
			}
		}
	}
}

// sortAnchors orders the anchors by count, the largest first, then store
// and state, through keys sorted as integers: the count's complement in
// the top 24 bits (a slot adds at most occCap anchors, so a count is below
// MaxSlots·occCap = 2^17), the store, the state.
func (sc *successors) sortAnchors() {
	const nMax = 1<<24 - 1
	keys := sc.keys[:0]
	for _, a := range sc.anchors {
		keys = append(keys, uint64(nMax-a.n)<<40|uint64(uint8(a.r.store))<<32|uint64(uint32(a.r.state)))
	}
	slices.Sort(keys)
	for i, k := range keys {
		sc.anchors[i] = anchor{ref{int8(k >> 32 & 0xFF), int32(uint32(k)), 0}, uint32(nMax - k>>40)}
	}
	sc.keys = keys
}

// members calls fn, as groupList.members does, for the members of the
// successor group of the tiles of content id id at slot s: the successors
// whose slot s holds the tile, each of log-weight base + lg(u_i), base
// moved by d. itemID are the content ids of the successors' slots.
func (sc *successors) members(id int32, s, S int, itemID []int32, d int32, fn func(r ref, l int32) bool) {
	b := d + sc.base
	for i, r := range sc.list {
		if itemID[i*S+s] != id {
			continue
		}
		if !fn(ref{r.store, r.state, int32(s)}, b+sc.lu[i]) {
			return
		}
	}
}

// joinSucc forms the batch of class succ at the current slot (SPEC.md
// 4.10, step 4), as groupList.join would, with the equal tiles found by
// their content ids. The groups list no members: forMembers finds them
// again from the content id, which the group's head holds (−id−1).
func (p *fullPredictor) joinSucc() {
	S, s := p.S, p.s
	a := &p.any
	st := a.use()
	// Locals, so that the loop keeps them in registers.
	mark, val, itemID := a.idMark, a.idVal, a.itemID
	u := p.succ.u[:len(p.succ.list)]
	list := slices.Grow(p.grp.list, len(u))
	for i, x := range u {
		id := itemID[i*S+s]
		if mark[id] != st {
			mark[id] = st
			n := len(list)
			val[id] = int32(n)
			list = list[:n+1]
			// Field by field: the element may hold an earlier group.
			r := p.succ.list[i]
			g := &list[n]
			g.l, g.base, g.tile, g.head, g.tail = 0, 0, p.tileOf(ref{r.store, r.state, int32(s)}), -id-1, -id-1
			g.sum, g.id, g.mis, g.cls = x, id, 0, clsSucc
			continue
		}
		list[val[id]].sum += x
	}
	p.grp.list = list
}
