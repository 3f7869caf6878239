package format

// Retention levels. A file with a level table (Header.Levels) codes every
// state under one of its lambdas, and names the level of each state in the
// chunk's stream on lane 0, before its action, with an adaptive order-1
// model that restarts at every chunk (SPEC.md, "Level coding"): counts
// w[c][i] for the previous level c of the chunk (the highest level before
// the first state) and the level i, all 1 at the start, W[c] their row
// sum; cum[i] = i + ⌊(Σ_{k<i} w[c][k])·(2^P − Q) / W[c]⌋. After coding
// level i in context c, w[c][i] += 32; when W[c] exceeds 2^16 the row is
// halved rounding up.
type levelModel struct {
	precision uint
	q         int // levels
	prev      int
	w         [MaxLevels][MaxLevels]uint32
	total     [MaxLevels]uint64
	cum       [MaxLevels]uint16
}

func newLevelModel(precision uint, q int) *levelModel {
	m := &levelModel{precision: precision, q: q}
	m.reset()
	return m
}

func (m *levelModel) reset() {
	m.prev = m.q - 1
	for c := 0; c < m.q; c++ {
		for i := 0; i < m.q; i++ {
			m.w[c][i] = 1
		}
		m.total[c] = uint64(m.q)
	}
}

// table fills and returns the cumulative table of the next level.
func (m *levelModel) table() []uint16 {
	return countTable(m.cum[:m.q], m.w[m.prev][:m.q], m.total[m.prev], m.precision)
}

func (m *levelModel) update(l int) {
	m.total[m.prev] = countUpdate(m.w[m.prev][:m.q], m.total[m.prev], l)
	m.prev = l
}
