package wm

import "github.com/wmzip/wmzip/internal/fixed"

// episodeTiles is EP, the chunk's distinct tiles in order of first
// occurrence (SPEC.md 4.3), listed by first code, and the virtual
// hypothesis of class ep, "a distinct tile seen earlier in the chunk",
// live at a slot's first two codes.
type episodeTiles struct {
	index tileIndex
	off   []int         // per tile: the history offset of its first occurrence
	id    []int32       // per tile: its content id
	first [][]int32     // per first code v: EP_v, as slots state·S+slot, in order
	cnt   []uint64      // per first code v: |EP_v|
	vals  []uint16      // the first codes v with |EP_v| > 0
	next  [][]codeCount // per first code: its tiles' second codes, with their counts
	total uint64        // |EP|

	l    int32  // lwEp
	v0   uint16 // the slot's first code, once committed
	live bool
}

func newEpisodeTiles(K int) episodeTiles {
	return episodeTiles{first: make([][]int32, K), cnt: make([]uint64, K), next: make([][]codeCount, K)}
}

// reset empties EP.
func (e *episodeTiles) reset() {
	e.index.reset()
	e.off, e.id = e.off[:0], e.id[:0]
	for _, v := range e.vals {
		e.first[v] = e.first[v][:0]
		e.next[v] = e.next[v][:0]
		e.cnt[v] = 0
	}
	e.vals = e.vals[:0]
	e.total = 0
}

// find returns the tile of EP equal to tl, or −1; codes are the history's.
func (e *episodeTiles) find(tl, codes []uint16) int32 {
	return e.index.find(tl, codes, e.off)
}

// add appends tile tl of content id id, at history offset off and slot r
// (state·S+slot), to EP.
func (e *episodeTiles) add(tl []uint16, off int, id, r int32, codes []uint16) {
	k := int32(len(e.off))
	e.off = append(e.off, off)
	e.id = append(e.id, id)
	e.index.insert(tl, k, codes, e.off)
	if len(e.first[tl[0]]) == 0 {
		e.vals = append(e.vals, tl[0])
	}
	if len(tl) > 1 {
		e.next[tl[0]] = countCode(e.next[tl[0]], tl[1])
	}
	e.first[tl[0]] = append(e.first[tl[0]], r)
	e.cnt[tl[0]]++
	e.total++
}

// start begins the virtual hypothesis at a slot's start, of log-weight
// prior.
func (e *episodeTiles) start(prior int32) {
	e.live = e.total > 0
	e.l = prior
}

// weights1 adds to w the hypothesis's weights at a slot's second code, w1
// being its W: (w1 << 16) / |EP_v0| for each tile of EP_v0, at its second
// code.
func (e *episodeTiles) weights1(w []uint64, w1 uint64) {
	x := (w1 << 16) / e.cnt[e.v0] << 8
	for _, c := range e.next[e.v0] {
		w[c.v] += x * uint64(c.n)
	}
}

// commit advances the hypothesis after value v at subspace mm (SPEC.md
// 4.12, step 4): at the second code it forms a group of class ep for each
// tile of EP_v0 whose second code is v, most recent first, and ends.
// codes are the history's, S and M the geometry's; lNew and the groups
// give the pruning floor.
func (e *episodeTiles) commit(v uint16, mm, S, M int, codes []uint16, gl *groupList, lNew int32) {
	switch {
	case mm == 0 && e.cnt[v] > 0 && M > 1:
		e.l += fixed.Lg(e.cnt[v]) - fixed.Lg(e.total)
		e.v0 = v
	case mm == 1:
		// Each tile starting with v0 had probability 1/n.
		l := e.first[e.v0]
		base := e.l - fixed.Lg(uint64(len(l)))
		if base < gl.liveMax(lNew)-pruneBits*256 {
			// All would be pruned at this commit.
			e.live = false
			return
		}
		added := 0
		for k := len(l) - 1; k >= 0 && added < histCap; k-- {
			off := int(l[k]) * M // slot x of state t starts at t·N + x·M = (t·S + x)·M
			if codes[off+1] != v {
				continue
			}
			r := ref{storeHist, l[k] / int32(S), l[k] % int32(S)}
			gl.add(clsEp, r, codes[off:off+M], base)
			added++
		}
		e.live = false
	default:
		e.live = false
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
