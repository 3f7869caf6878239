package wm

// tileSet numbers the distinct tiles of a sequence of slots in order of
// first occurrence and holds each once: training indexes millions of
// slots through it at 4 bytes a slot plus the distinct tiles, where a map
// keyed by the tiles' bytes took several times the codes themselves.
type tileSet struct {
	m     int      // codes per tile
	codes []uint16 // the codes of tile id at [id·m, (id+1)·m)
	count []int32  // occurrences per tile
	slots []int32  // open addressing on hashTile: id+1, or 0 when empty
}

func newTileSet(m int) *tileSet { return &tileSet{m: m} }

// len returns the number of distinct tiles.
func (ts *tileSet) len() int { return len(ts.count) }

// tile returns the codes of tile id.
func (ts *tileSet) tile(id int32) []uint16 {
	o := int(id) * ts.m
	return ts.codes[o : o+ts.m : o+ts.m]
}

// add counts one occurrence of tl and returns its id.
func (ts *tileSet) add(tl []uint16) int32 {
	if 2*(len(ts.count)+1) > len(ts.slots) {
		ts.grow()
	}
	mask := uint64(len(ts.slots) - 1)
	i := hashTile(tl) & mask
	for ; ts.slots[i] != 0; i = (i + 1) & mask {
		if id := ts.slots[i] - 1; equalCodes(ts.tile(id), tl) {
			ts.count[id]++
			return id
		}
	}
	id := int32(len(ts.count))
	ts.slots[i] = id + 1
	ts.codes = append(ts.codes, tl...)
	ts.count = append(ts.count, 1)
	return id
}

func (ts *tileSet) grow() {
	ts.slots = make([]int32, max(64, 2*len(ts.slots)))
	mask := uint64(len(ts.slots) - 1)
	for id := range int32(len(ts.count)) {
		i := hashTile(ts.tile(id)) & mask
		for ts.slots[i] != 0 {
			i = (i + 1) & mask
		}
		ts.slots[i] = id + 1
	}
}
