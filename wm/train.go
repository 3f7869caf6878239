package wm

import (
	"errors"
	"fmt"
	"github.com/wmzip/wmzip/rans"
	"math"
	"slices"
)

// Episode is one trajectory of states for training: Codes holds T states of
// N coordinates, time-major; Actions[t] is the action leading into state t.
type Episode struct {
	Codes   []uint16
	Actions []int64
}

// TrainOptions configure Train. The zero value gives the defaults.
type TrainOptions struct {
	// Precision is the rANS precision of the model's tables (default 15).
	Precision uint
	// MaxRefStates caps the reference store; the most recent states of the
	// training input are kept (default 65536).
	MaxRefStates int
	// NoDenoise keeps the reference store exactly as the training input;
	// by default rare tiles within a few codes of a more frequent tile are
	// replaced by it, so that references carry less observation noise.
	NoDenoise bool
	// Progress, when set, is called as calibration advances.
	Progress func(done, total int)
}

// DefaultPrecision is the rANS precision of a model trained with defaults.
const DefaultPrecision = 16

// Train fits a model to training episodes. It is deterministic: the same
// episodes and options give the same model bytes.
func Train(g Geometry, eps []Episode, opt TrainOptions) (*Model, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if opt.Precision == 0 {
		opt.Precision = DefaultPrecision
	}
	if opt.Precision < 10 || opt.Precision > 16 || uint64(g.K) > 1<<opt.Precision {
		return nil, fmt.Errorf("wm: precision %d invalid for K=%d", opt.Precision, g.K)
	}
	if opt.MaxRefStates == 0 {
		opt.MaxRefStates = 65536
	}
	if opt.MaxRefStates < 0 || opt.MaxRefStates > MaxRefStates {
		return nil, fmt.Errorf("wm: MaxRefStates %d out of range", opt.MaxRefStates)
	}
	n := g.N()
	var total int
	for i, e := range eps {
		if len(e.Codes)%n != 0 || len(e.Codes)/n != len(e.Actions) {
			return nil, fmt.Errorf("wm: episode %d: %d codes and %d actions do not make states of %d", i, len(e.Codes), len(e.Actions), n)
		}
		for _, v := range e.Codes {
			if int(v) >= g.K {
				return nil, fmt.Errorf("wm: episode %d: code %d >= K=%d", i, v, g.K)
			}
		}
		total += len(e.Actions)
	}
	if total == 0 {
		return nil, errors.New("wm: no training states")
	}
	// Hold out the last fifth of the episodes to calibrate the class
	// statistics against a reference store that has not seen them.
	nCal := 0
	if len(eps) >= 2 {
		nCal = max(1, len(eps)/5)
	}
	fit := eps[:len(eps)-nCal]
	m0 := build(g, opt, fit, defaultStats(g))
	st := defaultStats(g)
	if nCal > 0 {
		st = calibrate(m0, eps[len(eps)-nCal:], opt.Progress)
		if g.K <= 256 {
			st.fallExp = chooseExponents(g, fit, eps[len(eps)-nCal:])
		}
	}
	return build(g, opt, eps, st), nil
}

type classStats struct {
	hits    [nBuckets][nClasses]uint32
	slot    []uint32
	mis     [nClasses]uint32
	cn      [nClasses]uint32
	fallExp [2]uint16
}

func defaultStats(g Geometry) classStats {
	var s classStats
	s.slot = make([]uint32, g.S*nClasses)
	for b := range nBuckets {
		for c := range nClasses {
			s.hits[b][c] = 1
		}
	}
	for c := range nClasses {
		s.mis[c] = 1
		s.cn[c] = 64
	}
	return s
}

// calibrate runs m over held-out episodes and returns its class statistics,
// scaled down so that a stream adapts to its own content quickly.
func calibrate(m *Model, eps []Episode, progress func(int, int)) classStats {
	p := m.NewPredictor()
	n, S := m.Geom.N(), m.Geom.S
	// Accumulate what each episode adds to the statistics it starts from.
	var hits [nBuckets][nClasses]uint64
	slot := make([]uint64, S*nClasses)
	var mis, cn [nClasses]uint64
	for i, e := range eps {
		p.Reset()
		for t := range e.Actions {
			p.Begin(e.Actions[t])
			for j := range n {
				p.Table(j)
				p.Commit(j, e.Codes[t*n+j])
			}
		}
		for b := range nBuckets {
			for c := range nClasses {
				hits[b][c] += uint64(p.hits[b][c] - m.clsHits[b][c])
			}
		}
		for k := range slot {
			slot[k] += uint64(p.hitsS[k] - m.clsSlot[k])
		}
		for c := range nClasses {
			mis[c] += uint64(p.mis[c] - m.clsMis[c])
			cn[c] += uint64(p.cn[c] - m.clsN[c])
		}
		if progress != nil {
			progress(i+1, len(eps))
		}
	}
	st := classStats{slot: make([]uint32, S*nClasses)}
	// Rescale so that a chunk adapts to its own content quickly.
	scale := func(h []uint64, out []uint32) {
		var tot uint64
		for _, x := range h {
			tot += x
		}
		for c, x := range h {
			if tot > 64 {
				x = x * 64 / tot
			}
			out[c] = uint32(x) + 1
		}
	}
	for b := range nBuckets {
		scale(hits[b][:], st.hits[b][:])
	}
	for s := range S {
		scale(slot[s*nClasses:(s+1)*nClasses], st.slot[s*nClasses:(s+1)*nClasses])
	}
	for c := range nClasses {
		st.mis[c], st.cn[c] = uint32(min(mis[c]+1, 1<<31)), uint32(min(cn[c]+64, 1<<31))
	}
	for c := range nClasses {
		mis, cn := uint64(st.mis[c]), uint64(st.cn[c])
		for cn > 4096 {
			mis, cn = mis/2, cn/2
		}
		st.mis[c], st.cn[c] = uint32(mis), uint32(max(cn, 64))
	}
	return st
}

func build(g Geometry, opt TrainOptions, eps []Episode, st classStats) *Model {
	n := g.N()
	m := &Model{Geom: g, Precision: opt.Precision}
	m.clsHits, m.clsMis, m.clsN, m.clsSlot = st.hits, st.mis, st.cn, st.slot
	// Reference store: the most recent MaxRefStates states, whole episodes
	// where possible.
	var states int
	first := len(eps)
	for first > 0 && states+len(eps[first-1].Actions) <= opt.MaxRefStates {
		first--
		states += len(eps[first].Actions)
	}
	for _, e := range eps[first:] {
		if len(e.Actions) == 0 {
			continue
		}
		m.refStart = append(m.refStart, int64(m.refT))
		m.refCodes = append(m.refCodes, e.Codes...)
		for i, a := range e.Actions {
			if i == 0 {
				a = NoAction
			}
			m.refBkt = append(m.refBkt, uint8(bucketOf(a)))
		}
		m.refT += len(e.Actions)
	}
	if !opt.NoDenoise {
		denoise(g, m.refCodes)
	}
	_ = n
	m.fallback, m.fallCtx = fitFallback(g, eps, ctxLeft)
	m.fallExp = [2]uint16{256, 0}
	if st.fallExp != [2]uint16{} {
		m.fallExp = st.fallExp
	}
	if g.K <= 256 && m.fallExp[1] > 0 {
		m.fall2, m.fall2Ctx = fitFallback(g, eps, ctxPrev)
	}
	m.encode()
	mm, err := UnmarshalModel(m.raw)
	if err != nil {
		panic("wm: model does not round-trip: " + err.Error())
	}
	return mm
}

// Contexts of the fallback tables.
const (
	ctxLeft = iota // the same subspace of the previous slot
	ctxPrev        // the previous subspace of the same slot
)

// fitFallback estimates the new-content model: per subspace m and code of
// the same subspace in the previous slot, the distribution of a code in
// tiles at their first appearance in an episode, smoothed toward the
// subspace's marginal.
func fitFallback(g Geometry, eps []Episode, kind int) ([]uint16, int) {
	K, M, S := g.K, g.M, g.S
	nctx := K + 1
	if K > 256 {
		nctx = 1
	}
	cnt := make([]float64, M*nctx*K)
	o0 := make([]float64, M*K)
	n := g.N()
	for _, e := range eps {
		seen := make(map[string]bool)
		for t := range e.Actions {
			st := e.Codes[t*n : (t+1)*n]
			for s := range S {
				tl := st[s*M : (s+1)*M]
				key := string(u16bytes(tl))
				if seen[key] {
					continue
				}
				seen[key] = true
				for mm, v := range tl {
					ctx := 0
					if nctx > 1 {
						ctx = K
						if kind == ctxLeft && s > 0 {
							ctx = int(st[(s-1)*M+mm])
						} else if kind == ctxPrev && mm > 0 {
							ctx = int(tl[mm-1])
						}
					}
					cnt[(mm*nctx+ctx)*K+int(v)]++
					o0[mm*K+int(v)]++
				}
			}
		}
	}
	const beta = 8.0
	out := make([]uint16, M*nctx*K)
	w := make([]uint32, K)
	cum := make([]uint16, K)
	pm := make([]float64, K)
	for mm := range M {
		var t0 float64
		for v := range K {
			t0 += o0[mm*K+v] + 0.5
		}
		for v := range K {
			pm[v] = (o0[mm*K+v] + 0.5) / t0
		}
		for ctx := range nctx {
			row := cnt[(mm*nctx+ctx)*K : (mm*nctx+ctx+1)*K]
			var tot float64
			for _, c := range row {
				tot += c
			}
			for v := range K {
				p := (row[v] + beta*pm[v]) / (tot + beta)
				w[v] = uint32(math.Round(p * (1 << 24)))
			}
			if err := rans.Quantize(w, 16, cum); err != nil {
				panic(err)
			}
			o := out[(mm*nctx+ctx)*K:]
			for v := range K {
				next := uint32(1 << 16)
				if v+1 < K {
					next = uint32(cum[v+1])
				}
				o[v] = uint16(next - uint32(cum[v]))
			}
		}
	}
	return out, nctx
}

// denoise replaces, in place, every tile of codes that lies within
// max(1, M/16) differing codes of a strictly more frequent tile by the most
// frequent such tile. Tiles are visited from the most frequent down, so a
// center is never itself replaced. Candidate centers are found through an
// index on the blocks of a pigeonhole split: two tiles within h differences
// share at least one of h+1 blocks exactly.
func denoise(g Geometry, codes []uint16) {
	M, S := g.M, g.S
	h := max(1, M/16)
	if M < h+1 {
		return
	}
	type tileInfo struct {
		first int // offset of the first occurrence
		count int
	}
	index := map[string]int{}
	var tiles []tileInfo
	occ := make([]int, len(codes)/M) // tile id per slot occurrence
	for o := 0; o+M <= len(codes); o += M {
		k := string(u16bytes(codes[o : o+M]))
		id, ok := index[k]
		if !ok {
			id = len(tiles)
			index[k] = id
			tiles = append(tiles, tileInfo{first: o})
		}
		tiles[id].count++
		occ[o/M] = id
	}
	_ = S
	order := make([]int, len(tiles))
	for i := range order {
		order[i] = i
	}
	sortStable(order, func(a, b int) bool {
		if tiles[a].count != tiles[b].count {
			return tiles[a].count > tiles[b].count
		}
		return a < b
	})
	nb := h + 1
	bounds := make([]int, nb+1)
	for b := range bounds {
		bounds[b] = b * M / nb
	}
	blockIdx := make([]map[string][]int, nb)
	for b := range blockIdx {
		blockIdx[b] = map[string][]int{}
	}
	center := make([]int, len(tiles))
	for _, id := range order {
		t := codes[tiles[id].first : tiles[id].first+M]
		best := -1
		for b := range nb {
			for _, c := range blockIdx[b][string(u16bytes(t[bounds[b]:bounds[b+1]]))] {
				if tiles[c].count <= tiles[id].count {
					continue
				}
				ct := codes[tiles[c].first : tiles[c].first+M]
				d := 0
				for i := range t {
					if t[i] != ct[i] {
						d++
					}
				}
				if d <= h && (best < 0 || tiles[c].count > tiles[best].count || (tiles[c].count == tiles[best].count && c < best)) {
					best = c
				}
			}
		}
		if best >= 0 {
			center[id] = best
			continue
		}
		center[id] = id
		for b := range nb {
			k := string(u16bytes(t[bounds[b]:bounds[b+1]]))
			blockIdx[b][k] = append(blockIdx[b][k], id)
		}
	}
	out := make([]uint16, M)
	for i, id := range occ {
		if c := center[id]; c != id {
			copy(out, codes[tiles[c].first:tiles[c].first+M])
			copy(codes[i*M:(i+1)*M], out)
		}
	}
}

func sortStable(a []int, less func(a, b int) bool) {
	slices.SortStableFunc(a, func(x, y int) int {
		if less(x, y) {
			return -1
		}
		if less(y, x) {
			return 1
		}
		return 0
	})
}

// chooseExponents picks the exponents of the two fallback tables that give
// the held-out episodes' new tiles the shortest code under the integer
// combination the predictor uses.
func chooseExponents(g Geometry, fit, held []Episode) [2]uint16 {
	f1, c1 := fitFallback(g, fit, ctxLeft)
	f2, c2 := fitFallback(g, fit, ctxPrev)
	m := &Model{Geom: g, fallback: f1, fallCtx: c1, fall2: f2, fall2Ctx: c2}
	K, M, S, n := g.K, g.M, g.S, g.N()
	// Count the held-out samples by (m, ctx1, ctx2) and value, so that each
	// combined row is computed once per exponent pair.
	type key struct{ m, c1, c2 int }
	samples := map[key]map[uint16]float64{}
	var keys []key
	for _, e := range held {
		seen := make(map[string]bool)
		for t := range e.Actions {
			st := e.Codes[t*n : (t+1)*n]
			for s := range S {
				tl := st[s*M : (s+1)*M]
				k := string(u16bytes(tl))
				if seen[k] {
					continue
				}
				seen[k] = true
				for mm, v := range tl {
					kk := key{mm, K, K}
					if s > 0 {
						kk.c1 = int(st[(s-1)*M+mm])
					}
					if mm > 0 {
						kk.c2 = int(tl[mm-1])
					}
					if samples[kk] == nil {
						samples[kk] = map[uint16]float64{}
						keys = append(keys, kk)
					}
					samples[kk][v]++
				}
			}
		}
	}
	// Fixed summation order: values ascending within each key.
	type vc struct {
		v uint16
		c float64
	}
	sorted := make([][]vc, len(keys))
	for i, kk := range keys {
		for v, c := range samples[kk] {
			sorted[i] = append(sorted[i], vc{v, c})
		}
		slices.SortFunc(sorted[i], func(a, b vc) int { return int(a.v) - int(b.v) })
	}
	out := make([]uint16, K)
	w := make([]uint32, K)
	cum := make([]uint16, K)
	best, bestBits := [2]uint16{256, 0}, math.Inf(1)
	for _, e1 := range []uint16{102, 154, 205, 256} {
		for _, e2 := range []uint16{0, 51, 102, 154, 205, 256} {
			m.fallExp = [2]uint16{e1, e2}
			var bits float64
			for i, kk := range keys {
				r1 := (kk.m*c1 + kk.c1) * K
				r2 := (kk.m*c2 + kk.c2) * K
				m.mixFallback(f1[r1:r1+K], f2[r2:r2+K], out, w, cum)
				for _, x := range sorted[i] {
					bits -= x.c * math.Log2(float64(out[x.v])/65536)
				}
			}
			if bits < bestBits {
				best, bestBits = m.fallExp, bits
			}
		}
	}
	return best
}
