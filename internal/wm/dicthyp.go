package wm

import (
	"slices"

	"github.com/wmzip/wmzip/internal/fixed"
)

// dictHyp is the virtual hypothesis of class dict, "a tile of the
// dictionary", live at a slot's first two codes. The tiles it stands for
// are the model's (dictPairs, dictStart, dictCnt).
type dictHyp struct {
	l    int32  // lwDict
	v0   uint16 // the slot's first code, once committed
	live bool
}

// start begins the hypothesis at a slot's start, of log-weight prior.
func (d *dictHyp) start(m *Model, prior int32) {
	d.live = m.dictTotal > 0
	d.l = prior
}

// weights1 adds to w the hypothesis's weights at a slot's second code, w1
// being its W: (dc1 · pcnt) >> 16 to the second code of every pair entry
// of v0, dc1 = (w1 << 32) / DC_v0.
func (d *dictHyp) weights1(w []uint64, m *Model, w1 uint64) {
	d1 := (w1 << 32) / m.dictCnt[d.v0]
	for _, pe := range m.dictPairs[d.v0] {
		w[pe.v1] += d1 * pe.cnt >> 16 << 8
	}
}

// commit advances the hypothesis after value v at subspace mm (SPEC.md
// 4.12, step 5): at the second code it forms a group of class dict for
// each dictionary tile starting with v0, v, and ends. lNew and the groups
// give the pruning floor.
func (d *dictHyp) commit(v uint16, mm int, m *Model, gl *groupList, lNew int32) {
	M := m.Geom.M
	switch {
	case mm == 0 && m.dictCnt[v] > 0 && M > 1:
		d.l += fixed.Lg(m.dictCnt[v]) - fixed.Lg(m.dictTotal)
		d.v0 = v
	case mm == 1:
		pairs := m.dictPairs[d.v0]
		k, found := slices.BinarySearchFunc(pairs, v, func(pe pairEntry, v uint16) int { return int(pe.v1) - int(v) })
		if found {
			pe := pairs[k]
			base := d.l - fixed.Lg(m.dictCnt[d.v0])
			floor := gl.liveMax(lNew) - pruneBits*256
			from := m.dictStart[d.v0] + int(pe.lo)
			to := m.dictStart[d.v0] + int(min(pe.hi, pe.lo+dictCap))
			for pos := from; pos < to; pos++ {
				l := base + m.dictLg[pos]
				if l < floor {
					// The rest of the run has lower counts: all would be
					// pruned at this commit.
					break
				}
				gl.add(clsDict, m.dictRef[pos], m.dictTiles[pos*M:pos*M+M], l)
			}
		}
		d.live = false
	default:
		d.live = false
	}
}
