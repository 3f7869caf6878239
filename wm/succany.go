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
type succAny struct {
	// Per successor.
	c    []uint32  // c_i of an offset that is no spike (sF_i)
	e    []uint32  // per successor and spike: c_i(d_k) − c[i] (sX_ik)
	rows []*offRow // the offset law, or nil
	spk  []saSpike // the spikes with sX_ik > 0

	// Per item i·S + x, slot x of successor i.
	itemEnt []int32  // its entry
	itemV   []uint16 // the first code of its tile

	// Per entry, a distinct tile of the items, in order of first occurrence.
	entTile  [][]uint16 // the tile
	entID    []int32    // its content id
	entFL    []uint64   // EF_e, Σ c_i over its items
	entCnt   []int32    // number of items, once ordered
	entStart []int32    // start of its items in entItems
	entNext  []int32    // next entry with the same first code, or −1
	entItems []int32    // items by entry, once ordered
	ordered  bool       // entStart and entItems are made (order)
	entX     []uint64   // EX_e at the current slot (expand)
	ne       int32      // entries made
	idEnt    []uint64   // per content id: idGen<<32 | its entry, in the layout of generation idGen
	idGen    uint32
	fill     []int32  // per entry: its next position in entItems, while ordered
	grpMark  []uint32 // per entry: grpStamp when grp holds its successor group
	grp      []int32  // per entry: its group in the successor batch (joinSucc)
	grpStamp uint32

	// Per first code v.
	vals  []uint16 // the first codes with entries
	fl    []uint64 // VF(v), Σ EF_e over ENT_v
	head  []int32  // first entry of ENT_v
	tail  []int32  // last entry of ENT_v
	mark  []uint32 // stamp when v has entries
	stamp uint32

	// The virtual hypothesis at the current slot.
	slotSpk []spike // the items the spikes point at from the slot
	l       int32   // lwSA
	b       int32   // lwSA − 4096 once expanded
	live    bool
}

func newSuccAny(m *Model) succAny {
	K, ns := m.Geom.K, max(m.succCap, m.anchorCap)
	return succAny{
		e:    make([]uint32, ns*maxSpikes),
		fl:   make([]uint64, K),
		head: make([]int32, K),
		tail: make([]int32, K),
		mark: make([]uint32, K),
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
	v uint16 // first code of its tile
	e int32  // its entry
	c uint64 // sX_ik
}

// begin starts the layout of ns successors of S slots.
func (a *succAny) begin(ns, S int) {
	nextStamp(&a.stamp, a.mark)
	a.vals = a.vals[:0]
	a.c = slices.Grow(a.c[:0], ns)[:ns]
	a.rows = slices.Grow(a.rows[:0], ns)[:ns]
	a.itemEnt = slices.Grow(a.itemEnt[:0], ns*S)[:ns*S]
	a.itemV = slices.Grow(a.itemV[:0], ns*S)[:ns*S]
	a.spk = a.spk[:0]
	// At most one entry per item: the entries' arrays are sized once and
	// cut to the entries made (end).
	n := ns * S
	a.entTile = slices.Grow(a.entTile[:0], n)[:n]
	a.entID = slices.Grow(a.entID[:0], n)[:n]
	a.entFL = slices.Grow(a.entFL[:0], n)[:n]
	a.entCnt = slices.Grow(a.entCnt[:0], n)[:n]
	a.entNext = slices.Grow(a.entNext[:0], n)[:n]
	a.ne = 0
	a.ordered = false
	if a.idGen++; a.idGen == 0 {
		clear(a.idEnt)
		a.idGen = 1
	}
}

// end cuts the entries' arrays to the entries made and sizes what the
// state's slots use per entry.
func (a *succAny) end() {
	ne := int(a.ne)
	a.entTile, a.entID, a.entFL, a.entCnt, a.entNext = a.entTile[:ne], a.entID[:ne], a.entFL[:ne], a.entCnt[:ne], a.entNext[:ne]
	if len(a.grpMark) < ne {
		a.grpMark = append(a.grpMark, make([]uint32, ne-len(a.grpMark))...)
		a.grp = append(a.grp, make([]int32, ne-len(a.grp))...)
	}
	a.entX = slices.Grow(a.entX[:0], ne)[:ne]
}

// newEntry adds the entry of tile tl, of content id id and first code v,
// and returns it.
func (a *succAny) newEntry(tl []uint16, id int32, v uint16) int32 {
	e := a.ne
	a.ne++
	a.entTile[e], a.entID[e] = tl, id
	a.entFL[e], a.entNext[e] = 0, -1
	if a.mark[v] != a.stamp {
		a.mark[v] = a.stamp
		a.fl[v] = 0
		a.head[v], a.tail[v] = e, e
		a.vals = append(a.vals, v)
	} else {
		a.entNext[a.tail[v]] = e
		a.tail[v] = e
	}
	return e
}

// order lists the items by entry, in order of successor and slot, once
// every item has its entry: members reads them, at the first call of the
// state.
func (a *succAny) order() {
	a.ordered = true
	ne := len(a.entFL)
	cnt := a.entCnt[:ne]
	clear(cnt)
	for _, e := range a.itemEnt {
		cnt[e]++
	}
	a.entStart = slices.Grow(a.entStart[:0], ne)[:ne]
	pos := int32(0)
	for e, n := range a.entCnt {
		a.entStart[e] = pos
		pos += n
	}
	a.entItems = slices.Grow(a.entItems[:0], int(pos))[:pos]
	fill := slices.Grow(a.fill[:0], ne)[:ne]
	copy(fill, a.entStart)
	for it, e := range a.itemEnt {
		a.entItems[fill[e]] = int32(it)
		fill[e]++
	}
	a.fill = fill
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
// sX_ik > 0, with their first code, entry and sX_ik.
func (a *succAny) slotSpikes(s, S int) {
	spk := slices.Grow(a.slotSpk[:0], len(a.spk))[:len(a.spk)]
	for n, sp := range a.spk {
		// An offset is below S.
		x := s + int(sp.d)
		if x >= S {
			x -= S
		}
		it := int(sp.item) + x
		spk[n] = spike{a.itemV[it], a.itemEnt[it], sp.c}
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
// Σ c_i((x − s) mod S) over its slots x (SPEC.md 4.12, step 3).
func (a *succAny) expand(v uint16, gl *groupList) {
	if a.mark[v] != a.stamp {
		return
	}
	for e := a.head[v]; e >= 0; e = a.entNext[e] {
		a.entX[e] = a.entFL[e]
	}
	for _, sp := range a.slotSpk {
		if sp.v == v {
			a.entX[sp.e] += sp.c
		}
	}
	a.b = a.l - 16*256
	for e := a.head[v]; e >= 0; e = a.entNext[e] {
		if x := a.entX[e]; x > 0 {
			l := a.b + fixed.Lg(x)
			gl.list = append(gl.list, group{l: l, base: l, tile: a.entTile[e], head: -e - 1, tail: -e - 1, sum: x, id: a.entID[e], cls: clsSuccAny})
		}
	}
}

// members calls fn, as groupList.members does, for the members of the
// succany group of entry e at slot s: the entry's items (i, x) of weight
// c_i((x − s) mod S) > 0, of log-weight b + lg(c_i), b moved by d.
func (a *succAny) members(e int32, s, S int, succ []ref, d int32, fn func(r ref, l int32) bool) {
	if !a.ordered {
		a.order()
	}
	b := d + a.b
	for _, it := range a.entItems[a.entStart[e] : a.entStart[e]+a.entCnt[e]] {
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
// offset law, c_i(δ) = (u_i << 16) / (SU·S) for every δ. It gathers the
// successors' slots into entries of equal tiles, listed by first code, and
// sums the floors per entry and per first code.
func (p *Predictor) prepareSuccAny() {
	S := p.S
	a, sc := &p.any, &p.succ
	a.begin(len(sc.list), S)
	// Content ids are below the history's next one.
	if n := int(p.hist.nextID); len(a.idEnt) < n {
		a.idEnt = append(a.idEnt, make([]uint64, n-len(a.idEnt)+len(a.idEnt)/2)...)
	}
	gen := a.idGen
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
		ids := p.slotIDs(r)
		ie, iv := a.itemEnt[i*S:(i+1)*S], a.itemV[i*S:(i+1)*S]
		for x, id := range ids {
			v := first[x]
			k := a.idEnt[id]
			e := int32(uint32(k))
			if uint32(k>>32) != gen {
				e = a.newEntry(p.tileOf(ref{r.store, r.state, int32(x)}), id, v)
				a.idEnt[id] = uint64(gen)<<32 | uint64(uint32(e))
			}
			ie[x], iv[x] = e, v
			a.entFL[e] += uint64(c)
			a.fl[v] += uint64(c)
		}
	}
	a.end()
}
