package wm

import "github.com/wmzip/wmzip/internal/fixed"

// chunkStats are the class statistics of a chunk (SPEC.md 4.3), copies of
// the model's updated at every slot's end, with their running sums; the
// substitution rates of the current state; and the class priors of the
// current slot (4.7).
type chunkStats struct {
	hits  [nBuckets][nClasses]uint32
	hitsB [nBuckets]uint64 // Σ_c hits[b][c]
	hitsC [nClasses]uint64 // Σ_b hits[b][c]
	hitsT uint64           // Σ_b Σ_c hits[b][c]
	hitsS []uint32         // [S][nClasses]
	hitsP []uint32         // [S][nClasses+1][nClasses], or nil
	mis   [nClasses]uint32
	cn    [nClasses]uint32
	prev  int // pc, the class counted at the end of the previous slot

	eps   [nClasses]uint32 // per class: the substitution rate, Q16, fixed at Begin
	prior [nClasses]int32  // per class: the prior log-weight at the slot's start
}

// reset copies the model's statistics.
func (cs *chunkStats) reset(m *Model) {
	cs.hits = m.clsHits
	cs.sum()
	cs.hitsS = append(cs.hitsS[:0], m.clsSlot...)
	if m.clsCtx != nil {
		cs.hitsP = append(cs.hitsP[:0], m.clsCtx...)
	}
	cs.mis = m.clsMis
	cs.cn = m.clsN
}

// sum sets the running sums of hits.
func (cs *chunkStats) sum() {
	cs.hitsB, cs.hitsC, cs.hitsT = [nBuckets]uint64{}, [nClasses]uint64{}, 0
	for b := range nBuckets {
		for c := range nClasses {
			h := uint64(cs.hits[b][c])
			cs.hitsB[b] += h
			cs.hitsC[c] += h
			cs.hitsT += h
		}
	}
}

// rates sets eps for the state about to begin (SPEC.md 4.6, step 4).
func (cs *chunkStats) rates() {
	for c := range nClasses {
		e := (uint64(cs.mis[c]) + 1) << 16 / (uint64(cs.cn[c]) + 2)
		cs.eps[c] = uint32(min(max(e, 1), 1<<15))
	}
}

// ctxRow is the offset in hitsP of the row of slot s (SPEC.md 4.7, pcs).
func (cs *chunkStats) ctxRow(s int) int {
	pc := nClasses
	if s > 0 {
		pc = cs.prev
	}
	return (s*(nClasses+1) + pc) * nClasses
}

// priors sets, for action bucket b and slot s, log2 of the prior
// probability of every class in 1/256-bit units (<= 0). The statistics
// change only at a slot's end, so once per slot start suffices.
func (cs *chunkStats) priors(b, s int) {
	h := &cs.hits[b]
	tot, gtot := cs.hitsB[b], cs.hitsT
	hs := cs.hitsS[s*nClasses : (s+1)*nClasses]
	var ts uint64
	for _, x := range hs {
		ts += uint64(x)
	}
	var hp []uint32
	var tp uint64
	if cs.hitsP != nil {
		o := cs.ctxRow(s)
		hp = cs.hitsP[o : o+nClasses]
		for _, x := range hp {
			tp += uint64(x)
		}
	}
	for c := range nClasses {
		g16 := (cs.hitsC[c] + 1) << 16 / (gtot + nClasses)
		qb := (uint64(h[c])<<16 + 2*g16) / (tot + 2)
		q := (uint64(hs[c])<<16 + slotBackoff*qb) / (ts + slotBackoff)
		if hp != nil {
			q = (uint64(hp[c])<<16 + ctxBackoff*q) / (tp + ctxBackoff)
		}
		cs.prior[c] = fixed.Lg(max(q, 1)) - 16*256
	}
}

// count counts class c for slot s of a state of bucket b, the slot's
// class (SPEC.md 4.13, step 1).
func (cs *chunkStats) count(b, s, c int) {
	cs.hits[b][c]++
	cs.hitsB[b]++
	cs.hitsC[c]++
	cs.hitsT++
	cs.hitsS[s*nClasses+c]++
	if cs.hitsP != nil {
		cs.hitsP[cs.ctxRow(s)+c]++
	}
	cs.prev = c
}

// matched counts the mc mismatches of a group of class c that explained
// a slot of M codes.
func (cs *chunkStats) matched(c, mc, M int) {
	cs.mis[c] += uint32(mc)
	cs.cn[c] += uint32(M)
}
