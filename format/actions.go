package format

import "math/bits"

// Actions are coded in the chunk's rANS stream on lane 0, before the
// coordinates of their state, with an adaptive order-0 model that restarts
// at every chunk (SPEC.md, "Action coding"):
//
//	symbol 0        the action equals the previous action of the chunk
//	                (-1 before the first)
//	symbol 1..16    zigzag(action) = symbol-1
//	symbol 17..76   zigzag(action) has bit length c = symbol-12 (5..64); its
//	                c-1 bits below the leading one follow as raw bits,
//	                most significant first, in pieces of at most 8 bits
//
// The symbol's table is derived from adaptive counts w (all 1 at the start
// of a chunk, W their sum): cum[i] = i + ⌊(Σ_{k<i} w_k)·(2^P − 77) / W⌋.
// After coding symbol s, w_s += 32; when W exceeds 2^16 every count is
// halved rounding up.
const (
	actionSymbols   = 77
	actionDirect    = 16
	actionIncrement = 32
	actionLimit     = 1 << 16
	rawPiece        = 8
)

type actionModel struct {
	precision uint
	prev      int64
	total     uint64
	w         [actionSymbols]uint32
	cum       [actionSymbols]uint16
	uniform   [rawPiece + 1][]uint16 // uniform[b]: table of 2^b equiprobable symbols
}

func newActionModel(precision uint) *actionModel {
	m := &actionModel{precision: precision}
	for b := 1; b <= rawPiece; b++ {
		t := make([]uint16, 1<<b)
		for i := range t {
			t[i] = uint16(i << (precision - uint(b)))
		}
		m.uniform[b] = t
	}
	m.reset()
	return m
}

func (m *actionModel) reset() {
	m.prev = -1
	for i := range m.w {
		m.w[i] = 1
	}
	m.total = actionSymbols
}

// table fills and returns the cumulative table of the next action symbol.
func (m *actionModel) table() []uint16 {
	span := uint64(1)<<m.precision - actionSymbols
	var acc uint64
	for i, w := range m.w {
		m.cum[i] = uint16(uint64(i) + acc*span/m.total)
		acc += uint64(w)
	}
	return m.cum[:]
}

func (m *actionModel) update(sym int, a int64) {
	m.w[sym] += actionIncrement
	m.total += actionIncrement
	if m.total > actionLimit {
		m.total = 0
		for i, w := range m.w {
			m.w[i] = (w + 1) >> 1
			m.total += uint64(m.w[i])
		}
	}
	m.prev = a
}

func zigzag(a int64) uint64   { return uint64(a<<1) ^ uint64(a>>63) }
func unzigzag(z uint64) int64 { return int64(z>>1) ^ -int64(z&1) }

// symbolOf returns the symbol of action a and, for escape symbols, the
// number of raw bits that follow.
func (m *actionModel) symbolOf(a int64) (sym int, z uint64, raw int) {
	if a == m.prev {
		return 0, 0, 0
	}
	z = zigzag(a)
	if z < actionDirect {
		return 1 + int(z), z, 0
	}
	c := bits.Len64(z)
	return c + 12, z, c - 1
}

// escapeBits is the number of raw bits after escape symbol sym.
func escapeBits(sym int) int { return sym - 13 }
