package wm

import (
	"slices"

	"github.com/wmzip/wmzip/internal/fixed"
)

// succAny is the succany hypothesis (SPEC.md 4.9): its layout over the
// successors' slots, made at Begin, and its virtual hypothesis, live at a
// slot's first code. Drawing successor i and a slot offset δ has
// probability c_i(δ)/65536: the floor c[i], plus e[i·maxSpikes+k] at the
// spike offsets of the successor's offset law.
//
// The layout keeps, per first code v, VF(v) and the items that start with
// v; the entries of the specification (the distinct tiles of the items,
// ENT_v in order of first occurrence) are formed for the one first code a
// slot expands on, from its items in order.
//
// Its 27 fields stay in one struct, in the groups below, because every
// slot of the hot path reuses all of them without allocating: split, the
// groups would be passed together on every call anyway.
type succAny struct {
	// Per successor.
	c    []uint32  // c_i of an offset that is no spike (sF_i)
	e    []uint32  // per successor and spike: c_i(d_k) − c[i] (sX_ik)
	rows []*offRow // the offset law, or nil
	spk  []saSpike // the spikes with sX_ik > 0

	// Per item i·S + x, slot x of successor i.
	itemV  []uint16 // the first code of its tile
	itemID []int32  // the content id of its tile

	// Per first code v.
	vals   []uint16 // the first codes of the items
	fl     []uint64 // VF(v), Σ c_i over the items of first code v
	cnt    []int32  // the number of items of first code v
	vStart []int32  // where they start in byV, once sorted
	mark   []uint32 // stamp when v has items
	stamp  uint32
	sorted bool     // byV is made
	byV    []int32  // the items by first code, each code's in order (sort)
	byC    []uint32 // and their c_i
	fill   []int32  // per first code: its next position in byV, while sorted

	// Content id → a value (an entry or a group) of the current use:
	// idVal[id] holds when idMark[id] = idStamp.
	idVal   []int32
	idMark  []uint32
	idStamp uint32

	// The entries of the current slot's expansion, of first code v0: its
	// items' distinct tiles in order of first occurrence.
	v0      uint16
	entID   []int32    // the content id
	entTile [][]uint16 // the tile
	entX    []uint64   // EX_e

	// The virtual hypothesis at the current slot.
	slotSpk []spike // the items the spikes point at from the slot
	l       int32   // lwSA
	b       int32   // lwSA − 4096 once expanded
	live    bool
}

func newSuccAny(m *Model) succAny {
	K, ns := m.Geom.K, max(m.succCap, m.anchorCap)
	return succAny{
		e:      make([]uint32, ns*maxSpikes),
		fl:     make([]uint64, K),
		cnt:    make([]int32, K),
		vStart: make([]int32, K),
		mark:   make([]uint32, K),
	}
}

// saSpike is a spike of a successor's offset law with sX_ik > 0: the
// successor's first item i·S, the offset d_k and sX_ik.
type saSpike struct {
	item, d int32
	c       uint64
}

// spike is an item a spike of the offset law points at.
type spike struct {
	v  uint16 // first code of its tile
	id int32  // content id of its tile
	c  uint64 // sX_ik
}

// begin starts the layout of ns successors of S slots, whose content ids
// are below ids.
func (a *succAny) begin(ns, S int, ids int32) {
	nextStamp(&a.stamp, a.mark)
	a.vals = a.vals[:0]
	a.c = slices.Grow(a.c[:0], ns)[:ns]
	a.rows = slices.Grow(a.rows[:0], ns)[:ns]
	a.itemV = slices.Grow(a.itemV[:0], ns*S)[:ns*S]
	a.itemID = slices.Grow(a.itemID[:0], ns*S)[:ns*S]
	a.spk = a.spk[:0]
	a.sorted = false
	if n := int(ids); len(a.idVal) < n {
		n += n / 2
		a.idVal = append(a.idVal, make([]int32, n-len(a.idVal))...)
		a.idMark = append(a.idMark, make([]uint32, n-len(a.idMark))...)
	}
}

// use starts a use of the map from content ids and returns its stamp.
func (a *succAny) use() uint32 { return nextStamp(&a.idStamp, a.idMark) }

// sort lists the items by first code, each code's in order of successor
// and slot, with their c_i: expand and members walk those of one code.
func (a *succAny) sort(S int) {
	a.sorted = true
	pos := int32(0)
	for _, v := range a.vals {
		a.vStart[v] = pos
		pos += a.cnt[v]
	}
	byV := slices.Grow(a.byV[:0], int(pos))[:pos]
	byC := slices.Grow(a.byC[:0], int(pos))[:pos]
	fill := slices.Grow(a.fill[:0], len(a.cnt))[:len(a.cnt)]
	for _, v := range a.vals {
		fill[v] = a.vStart[v]
	}
	for i, c := range a.c {
		for x, v := range a.itemV[i*S : (i+1)*S] {
			k := fill[v]
			byV[k], byC[k] = int32(i*S+x), c
			fill[v] = k + 1
		}
	}
	a.byV, a.byC, a.fill = byV, byC, fill
}

// items returns the items of first code v, in order, and their c_i.
func (a *succAny) items(v uint16, S int) ([]int32, []uint32) {
	if !a.sorted {
		a.sort(S)
	}
	from, to := a.vStart[v], a.vStart[v]+a.cnt[v]
	return a.byV[from:to], a.byC[from:to]
}

// weight returns c_i(δ).
func (a *succAny) weight(i, d int) uint32 {
	c := a.c[i]
	if row := a.rows[i]; row != nil {
		for k := range row.n {
			if int(row.d[k]) == d {
				return c + a.e[i*maxSpikes+k]
			}
		}
	}
	return c
}

// start begins the virtual hypothesis at slot s, of log-weight prior: it
// is live when there are successors. Its spikes are listed now if spikes
// is set, else by a call of slotSpikes before they are used.
func (a *succAny) start(live bool, prior int32, s, S int, spikes bool) {
	a.live = live
	if live && spikes {
		a.slotSpikes(s, S)
	}
	a.l = prior
}

// slotSpikes lists the items the spikes of the offset laws point at from
// slot s: (i, (s + d_k) mod S) for every successor i and spike k with
// sX_ik > 0, with their first code, content id and sX_ik.
func (a *succAny) slotSpikes(s, S int) {
	spk := slices.Grow(a.slotSpk[:0], len(a.spk))[:len(a.spk)]
	for n, sp := range a.spk {
		// An offset is below S.
		x := s + int(sp.d)
		if x >= S {
			x -= S
		}
		it := int(sp.item) + x
		spk[n] = spike{a.itemV[it], a.itemID[it], sp.c}
	}
	a.slotSpk = spk
}

// weights adds to w the first-code weights of the hypothesis of weight
// w0 at the current slot: w0·Σ c_i((x − s) mod S) over the slots x of
// successor i that start with v.
func (a *succAny) weights(w []uint64, w0 uint64) {
	for _, v := range a.vals {
		w[v] += w0 * a.fl[v] << 8
	}
	for _, sp := range a.slotSpk {
		w[sp.v] += w0 * sp.c << 8
	}
}

// expand replaces the hypothesis, after its first code v, by a group for
// each tile of the successors that starts with v, of weight
// Σ c_i((x − s) mod S) over its slots x (SPEC.md 4.12, step 3). succ are
// the successor states, for the tiles.
func (p *fullPredictor) expandSuccAny(v uint16) {
	a, S := &p.any, p.S
	if a.mark[v] != a.stamp {
		return
	}
	// The entries of v: EX_e = EF_e, Σ c_i over their items, ...
	st := a.use()
	a.v0 = v
	a.entID, a.entTile, a.entX = a.entID[:0], a.entTile[:0], a.entX[:0]
	items, cs := a.items(v, S)
	for k, it := range items {
		id, c := a.itemID[it], uint64(cs[k])
		if a.idMark[id] == st {
			a.entX[a.idVal[id]] += c
			continue
		}
		a.idMark[id], a.idVal[id] = st, int32(len(a.entID))
		i := int(it) / S
		r := p.succ.list[i]
		a.entID = append(a.entID, id)
		a.entTile = append(a.entTile, p.tileOf(ref{r.store, r.state, it - int32(i*S)}))
		a.entX = append(a.entX, c)
	}
	// ... plus the spikes that point at their items.
	for _, sp := range a.slotSpk {
		if sp.v == v {
			a.entX[a.idVal[sp.id]] += sp.c
		}
	}
	a.b = a.l - 16*256
	for e, x := range a.entX {
		if x > 0 {
			l := a.b + fixed.Lg(x)
			p.grp.list = append(p.grp.list, group{l: l, base: l, tile: a.entTile[e], head: int32(-e - 1), tail: int32(-e - 1), sum: x, id: a.entID[e], cls: clsSuccAny})
		}
	}
}

// members calls fn, as groupList.members does, for the members of the
// succany group of entry e at slot s: the entry's items (i, x) of weight
// c_i((x − s) mod S) > 0, of log-weight b + lg(c_i), b moved by d.
func (a *succAny) members(e int32, s, S int, succ []ref, d int32, fn func(r ref, l int32) bool) {
	b := d + a.b
	id := a.entID[e]
	items, _ := a.items(a.v0, S)
	for _, it := range items {
		if a.itemID[it] != id {
			continue
		}
		i, x := int(it)/S, int(it)%S
		c := a.weight(i, (x-s+S)%S)
		if c == 0 {
			continue
		}
		r := succ[i]
		if !fn(ref{r.store, r.state, int32(x)}, b+fixed.Lg(uint64(c))) {
			return
		}
	}
}

// prepareSuccAny lays out the succany hypothesis of the state just begun:
// drawing successor i and a slot offset δ has probability c_i(δ)/65536,
// c_i(δ) = (ρ_i·O(δ)) >> 16 with ρ_i = (n_i << 16) / NT and O the offset
// law of the two states' buckets (a floor plus spikes); or, without an
// offset law, c_i(δ) = (u_i << 16) / (SU·S) for every δ. It lists the
// successors' slots with their first codes and content ids, and sums the
// floors per first code.
func (p *fullPredictor) prepareSuccAny() {
	S := p.S
	a, sc := &p.any, &p.succ
	a.begin(len(sc.list), S, p.hist.nextID)
	mark, st := a.mark, a.stamp
	for i, r := range sc.list {
		var c uint32
		var row *offRow
		if p.m.offLaw != nil {
			rho := (uint64(sc.n[i]) << 16) / sc.tot
			row = &p.m.offLaw[p.bucket*nBuckets+p.hist.bucketOf(r, p.m)]
			c = uint32(rho * uint64(row.floor) >> 16)
			for k := range row.n {
				ce := uint32(rho*uint64(row.floor+row.e[k])>>16) - c
				a.e[i*maxSpikes+k] = ce
				if ce > 0 {
					// A spike of 0 adds nothing where slotSpikes' list is used.
					a.spk = append(a.spk, saSpike{int32(i * S), int32(row.d[k]), uint64(ce)})
				}
			}
		} else {
			c = uint32((sc.u[i] << 16) / (sc.su * uint64(S)))
		}
		a.c[i], a.rows[i] = c, row
		first := p.slotFirsts(r)
		copy(a.itemV[i*S:(i+1)*S], first)
		copy(a.itemID[i*S:(i+1)*S], p.slotIDs(r))
		for _, v := range first {
			if mark[v] != st {
				mark[v] = st
				a.fl[v], a.cnt[v] = 0, 0
				a.vals = append(a.vals, v)
			}
			a.fl[v] += uint64(c)
			a.cnt[v]++
		}
	}
}
