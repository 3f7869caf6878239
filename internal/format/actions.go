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
func (m *actionModel) table() []uint16 { return countTable(m.cum[:], m.w[:], m.total, m.precision) }

func (m *actionModel) update(sym int, a int64) {
	m.total = countUpdate(m.w[:], m.total, sym)
	m.prev = a
}

// countTable fills cum with the table of adaptive counts w of sum total:
// cum[i] = i + ⌊(Σ_{k<i} w_k)·(2^P − n) / total⌋ for n = len(w) symbols.
// Actions and levels share this law (SPEC.md 6.10, 6.11).
func countTable(cum []uint16, w []uint32, total uint64, precision uint) []uint16 {
	span := uint64(1)<<precision - uint64(len(w))
	var acc uint64
	for i, c := range w {
		cum[i] = uint16(uint64(i) + acc*span/total)
		acc += uint64(c)
	}
	return cum[:len(w)]
}

// countUpdate adds actionIncrement to w[sym] and returns the new sum of w,
// halving every count (rounding up) when the sum exceeds actionLimit.
func countUpdate(w []uint32, total uint64, sym int) uint64 {
	w[sym] += actionIncrement
	total += actionIncrement
	if total > actionLimit {
		total = 0
		for i, c := range w {
			w[i] = (c + 1) >> 1
			total += uint64(w[i])
		}
	}
	return total
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
