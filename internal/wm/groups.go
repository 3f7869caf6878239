package wm

import (
	"slices"

	"github.com/wmzip/wmzip/internal/fixed"
)

// group is a group of candidates (SPEC.md 4.2): those of one class with
// equal tiles, which gain and lose alike. Its log-weight is that of the
// sum of its members' weights.
type group struct {
	l    int32 // log-weight
	base int32 // l when the group was formed; a member's L is its L0 + l − base
	tile []uint16
	head int32 // first member; −e−1 for the succany or successor group of entry e
	tail int32
	sum  uint64 // Σ of the members' weights while a batch is formed
	// id is the content id of the tile for a group formed at a slot's
	// start (equal ids, equal tiles), else −1.
	id  int32
	mis uint16
	cls uint8
}

// ref points at one tile occurrence: a slot of a state of the chunk
// history or of the model's reference store.
type ref struct {
	store int8 // 0 none, 1 history, 2 reference store
	state int32
	slot  int32
}

const (
	storeNone = iota
	storeHist
	storeRef
)

// groupList is the slot's group list (SPEC.md 4.2), in order of formation,
// with the members of the groups that list them and the batch being
// formed. The succany and successor groups find their members through
// their entry instead (Predictor.forMembers).
type groupList struct {
	list  []group
	mRef  []ref   // per member: its reference
	mL    []int32 // per member: its log-weight when it joined
	mNext []int32 // per member: the next member of its group, or −1

	batch     keyIndex // content id → group, within the batch being formed
	batchB    int32    // the batch's base
	batchFrom int      // its first group
}

// reset empties the list at a slot's start.
func (gl *groupList) reset() {
	gl.list = gl.list[:0]
	gl.mRef, gl.mL, gl.mNext = gl.mRef[:0], gl.mL[:0], gl.mNext[:0]
}

// add appends a group of one member of log-weight l and returns its index.
func (gl *groupList) add(cls int, r ref, tile []uint16, l int32) int32 {
	g := int32(len(gl.list))
	k := int32(len(gl.mRef))
	gl.list = append(gl.list, group{l: l, base: l, tile: tile, head: k, tail: k, id: -1, cls: uint8(cls)})
	gl.mRef = append(gl.mRef, r)
	gl.mL = append(gl.mL, l)
	gl.mNext = append(gl.mNext, -1)
	return g
}

// beginBatch starts forming the groups of candidates of one class whose
// log-weights are b + fixed.Lg(x) for integer weights x: the candidates with
// equal tiles form one group of log-weight b + lg(Σ x).
func (gl *groupList) beginBatch(b int32) {
	gl.batch.next()
	gl.batchB = b
	gl.batchFrom = len(gl.list)
}

// join adds to the batch the candidate r, of content id id and weight x.
// It returns the group r forms, whose tile the caller sets, or −1 when r
// joins a group of its tile.
func (gl *groupList) join(cls int, r ref, id int32, x uint64) int32 {
	l := gl.batchB + fixed.Lg(x)
	i, found := gl.batch.slot(uint64(uint32(id)))
	if !found {
		g := gl.add(cls, r, nil, l)
		gl.list[g].sum, gl.list[g].id = x, id
		gl.batch.set(i, uint64(uint32(id)), g)
		return g
	}
	gl.addMember(gl.batch.vals[i], r, l, x)
	return -1
}

// addMember adds candidate r of log-weight l and weight x to group g of
// the batch being formed.
func (gl *groupList) addMember(g int32, r ref, l int32, x uint64) {
	gr := &gl.list[g]
	gr.sum += x
	k := int32(len(gl.mRef))
	gl.mRef = append(gl.mRef, r)
	gl.mL = append(gl.mL, l)
	gl.mNext = append(gl.mNext, -1)
	gl.mNext[gr.tail] = k
	gr.tail = k
}

// endBatch sets the log-weights of the batch's groups.
func (gl *groupList) endBatch() {
	for g := gl.batchFrom; g < len(gl.list); g++ {
		l := gl.batchB + fixed.Lg(gl.list[g].sum)
		gl.list[g].l, gl.list[g].base = l, l
	}
}

// liveMax returns the largest of lNew and the groups' log-weights: a
// group formed below it by more than pruneBits is pruned at the end of the
// commit.
func (gl *groupList) liveMax(lNew int32) int32 {
	mx := lNew
	for i := range gl.list {
		mx = max(mx, gl.list[i].l)
	}
	return mx
}

// prune removes the groups more than pruneBits below maxL, keeping the
// order of the others.
func (gl *groupList) prune(maxL int32) {
	k := 0
	for i := range gl.list {
		if maxL-gl.list[i].l <= pruneBits*256 {
			if k != i {
				gl.list[k] = gl.list[i]
			}
			k++
		}
	}
	gl.list = gl.list[:k]
}

// members calls fn with the reference and current log-weight of every
// member of group g, a group that lists them, in order, until fn returns
// false.
func (gl *groupList) members(g int, fn func(r ref, l int32) bool) {
	d := gl.list[g].l - gl.list[g].base
	for k := gl.list[g].head; k >= 0; k = gl.mNext[k] {
		if !fn(gl.mRef[k], gl.mL[k]+d) {
			return
		}
	}
}

// continuations are CP, the continuation proposals for the next slot
// (SPEC.md 4.13, step 3), with their weights.
type continuations struct {
	refs []ref
	w    []uint64
	tot  uint64 // CT, Σ w
}

func (c *continuations) reset() {
	c.refs, c.w, c.tot = c.refs[:0], c.w[:0], 0
}

// add appends the proposal r of weight w unless r is listed already, and
// reports whether the list is then full.
func (c *continuations) add(r ref, w uint64) (full bool) {
	if slices.Contains(c.refs, r) {
		return false
	}
	c.refs = append(c.refs, r)
	c.w = append(c.w, w)
	c.tot += w
	return len(c.refs) == contCap
}
