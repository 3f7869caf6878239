package wm

import "math/bits"

// The structures here only speed up lookups: every hit is confirmed by
// comparing the keys themselves, so no hash ever decides a bit.

// hashTile hashes the codes of a tile, four at a time.
func hashTile(tl []uint16) uint64 {
	h := uint64(len(tl)) * 0x9E3779B97F4A7C15
	for len(tl) >= 4 {
		x := uint64(tl[0]) | uint64(tl[1])<<16 | uint64(tl[2])<<32 | uint64(tl[3])<<48
		h = (h ^ x) * 0xff51afd7ed558ccd
		h ^= h >> 32
		tl = tl[4:]
	}
	for _, v := range tl {
		h = (h ^ uint64(v)) * 0xc4ceb9fe1a85ec53
	}
	return h ^ h>>29
}

// tileIndex maps tiles to entry numbers by open addressing. The tile of
// entry e is codes[offs[e] : offs[e]+len(tile)] of the slab the caller
// passes, so the index itself holds no codes. A slot keeps the upper half
// of its tile's hash beside the entry, so that a probe reads the codes of
// a tile only when the two halves agree.
type tileIndex struct {
	slots []uint64 // hash>>32 << 32 | entry+1, or 0 when empty
	n     int
}

func (x *tileIndex) reset() {
	clear(x.slots)
	x.n = 0
}

// find returns the entry holding tl, or -1.
func (x *tileIndex) find(tl []uint16, codes []uint16, offs []int) int32 {
	if x.n == 0 {
		return -1
	}
	mask := uint64(len(x.slots) - 1)
	M := len(tl)
	h := hashTile(tl)
	tag := h >> 32 << 32
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return -1
		}
		if s&^(1<<32-1) != tag {
			continue
		}
		e := int32(uint32(s)) - 1
		o := int(offs[e])
		if equalCodes(codes[o:o+M], tl) {
			return e
		}
	}
}

// insert adds entry e, whose tile is tl and is not in the index yet.
func (x *tileIndex) insert(tl []uint16, e int32, codes []uint16, offs []int) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow(codes, offs, len(tl))
	}
	x.place(hashTile(tl), uint64(e+1))
	x.n++
}

// place puts entry+1 x1 of hash h in the first empty slot of its probe.
func (x *tileIndex) place(h, x1 uint64) {
	mask := uint64(len(x.slots) - 1)
	i := h & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = h>>32<<32 | x1
}

func (x *tileIndex) grow(codes []uint16, offs []int, M int) {
	old := x.slots
	x.slots = make([]uint64, max(64, 2*len(old)))
	for _, s := range old {
		if s == 0 {
			continue
		}
		e1 := uint64(uint32(s))
		o := int(offs[e1-1])
		x.place(hashTile(codes[o:o+M]), e1)
	}
}

func equalCodes(a, b []uint16) bool {
	return len(a) == len(b) && equalTile(a, b)
}

// keyIndex maps uint64 keys to int32 values within one generation: next
// forgets every key in O(1). It holds at most half its capacity.
type keyIndex struct {
	keys  []uint64
	vals  []int32
	stamp []uint32
	gen   uint32
	n     int
}

func newKeyIndex(capacity int) keyIndex {
	size := 1 << bits.Len(uint(2*capacity-1))
	return keyIndex{keys: make([]uint64, size), vals: make([]int32, size), stamp: make([]uint32, size), gen: 1}
}

func (x *keyIndex) next() {
	x.n = 0
	x.gen++
	if x.gen == 0 {
		clear(x.stamp)
		x.gen = 1
	}
}

// slot returns the position of key: its value is x.vals[i] if found.
func (x *keyIndex) slot(key uint64) (i uint64, found bool) {
	mask := uint64(len(x.keys) - 1)
	for i = (key * 0x9E3779B97F4A7C15 >> 17) & mask; x.stamp[i] == x.gen; i = (i + 1) & mask {
		if x.keys[i] == key {
			return i, true
		}
	}
	return i, false
}

// set stores val for key at position i returned by slot (not found).
func (x *keyIndex) set(i uint64, key uint64, val int32) {
	x.keys[i], x.vals[i], x.stamp[i] = key, val, x.gen
	x.n++
}

// rowCache keeps fallback rows computed from two tables by their key,
// direct-mapped: a row is a pure function of the model and its key, so
// what the cache holds never changes a prediction.
type rowCache struct {
	keys  []uint64 // key+1, 0 when empty
	rows  []uint16
	modal []rowModal
	k     int
}

func newRowCache(k, maxBytes int) rowCache {
	n := newRowCacheSize(k, maxBytes)
	return rowCache{keys: make([]uint64, n), rows: make([]uint16, n*k), modal: make([]rowModal, n), k: k}
}

// newRowCacheSize is the number of rows of newRowCache: a power of two, at
// most 2^16, whose rows take at most maxBytes (at least one row).
func newRowCacheSize(k, maxBytes int) int {
	n := 1
	for n < 1<<16 && 2*n*2*k <= maxBytes {
		n *= 2
	}
	return n
}

// get returns the row of key and whether it is valid; if not, the caller
// fills the returned slice and it becomes valid.
func (c *rowCache) get(key uint64) ([]uint16, *rowModal, bool) {
	i := int((key * 0x9E3779B97F4A7C15) >> 40 & uint64(len(c.keys)-1))
	row := c.rows[i*c.k : (i+1)*c.k]
	if c.keys[i] == key+1 {
		return row, &c.modal[i], true
	}
	c.keys[i] = key + 1
	c.modal[i] = rowModal{v: -1}
	return row, &c.modal[i], false
}

// rowModal is the modal value of a fallback row and its frequency, v < 0
// until found.
type rowModal struct {
	v int32
	f uint32
}
