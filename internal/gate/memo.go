package gate

import (
	"sync/atomic"

	"github.com/wmzip/wmzip/internal/wm"
)

// A memo holds what the deciders of one Params find, for all of them: the
// row fill of every fallback row met, a function of the parameters and of
// the model whose rows they are, so sharing it changes no decision. Safe
// for concurrent use: every entry is one word, written whole.
type memo struct {
	fills atomic.Pointer[rowFills]
}

// rowFills are the row fills of model m's fallback rows: a set-associative
// cache by row key and distance table, each entry (key+1)<<32 | table<<16
// | fill, 0 when empty, the newest of a set first. The fallback rows of one
// model's contexts number a few thousand: four ways keep rows that hash
// alike from evicting each other.
type rowFills struct {
	m    *wm.Model
	sets [fillSets][fillWays]atomic.Uint64
}

const (
	fillWays    = 4
	fillSetBits = 11
	fillSets    = 1 << fillSetBits
)

// rowFillsOf returns the row fills of model m, shared with the other
// deciders of p (prepared).
func (p *Params) rowFillsOf(m *wm.Model) *rowFills {
	for {
		c := p.memo.fills.Load()
		if c != nil && c.m == m {
			return c
		}
		n := &rowFills{m: m}
		if p.memo.fills.CompareAndSwap(c, n) {
			return n
		}
	}
}

// add returns RowFill of row key, whose first fallback row is f1, under
// distance table t of p, and keeps it (the deciders look the sets up in
// place, and ask add only what they do not hold).
func (c *rowFills) add(p *Params, key uint64, t uint16, f1 []uint16) uint16 {
	r := rowFill(p.Dist[t], f1)
	if key < 1<<32-1 {
		s := c.set(key, t)
		s[3].Store(s[2].Load())
		s[2].Store(s[1].Load())
		s[1].Store(s[0].Load())
		s[0].Store(fillTag(key, t) | uint64(r))
	}
	return r
}

// set returns the set of row key under distance table t.
func (c *rowFills) set(key uint64, t uint16) *[fillWays]atomic.Uint64 {
	return &c.sets[((key^uint64(t)<<40)*0x9E3779B97F4A7C15)>>(64-fillSetBits)]
}

// fillTag is the entry of row key under table t, its fill left 0.
func fillTag(key uint64, t uint16) uint64 { return (key+1)<<32 | uint64(t)<<16 }
