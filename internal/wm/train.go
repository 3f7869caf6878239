package wm

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/wmzip/wmzip/internal/fixed"
	"github.com/wmzip/wmzip/internal/rans"
)

// Episode is one trajectory of states for training: Codes holds T states of
// N coordinates, time-major; Actions[t] is the action leading into state t.
type Episode struct {
	Codes   []uint16
	Actions []int64
}

// TrainOptions configure Train. The zero value gives the defaults.
type TrainOptions struct {
	// Precision is the rANS precision of the model's tables (default DefaultPrecision).
	Precision uint
	// MaxRefStates caps the reference store; the most recent states of the
	// training input are kept (default 65536).
	MaxRefStates int
	// Capacity, in (0, 1], is the fraction of the training states the
	// reference store keeps (whole episodes, the most recent; at most
	// MaxRefStates): one knob for the model's size, since the dictionary
	// and the fallback tables derive from the store. 0 means 1. A smaller
	// model costs fewer bytes and more bits per state; see
	// docs/results-capacity.md for which pays at which horizon.
	Capacity float64
	// NoDenoise keeps the reference store exactly as the training input;
	// by default rare tiles within a few codes of a more frequent tile are
	// replaced by it, so that references carry less observation noise.
	NoDenoise bool
	// NoFile builds a model to be run in this process only (one that
	// calibrates a gate on held-out episodes): it predicts exactly as the
	// model of a file would, but is never coded into one, which saves the
	// time and memory of coding and reading back its store. It has no ID,
	// and MarshalBinary and WithSection fail.
	NoFile bool
	// Progress, when set, is called as calibration advances.
	Progress func(done, total int)
	// Level is the model's level: LevelFull (every slot predicted
	// coordinate by coordinate), LevelCopy (the same, with whole slots
	// copied where copies have paid: about 1.5 times faster for a tenth of
	// a percent more bits; SPEC.md 4.16), or LevelFast (fewer hypotheses,
	// several times faster, a few percent more bits; SPEC.md 4.15).
	Level int
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
	if !validLevel(opt.Level) {
		return nil, fmt.Errorf("wm: level %d unknown", opt.Level)
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
	if opt.Capacity < 0 || opt.Capacity > 1 || opt.Capacity != opt.Capacity {
		return nil, fmt.Errorf("wm: capacity %v outside (0, 1]", opt.Capacity)
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
	if opt.Capacity > 0 && opt.Capacity < 1 {
		// One rounding of one product: the same on every machine.
		opt.MaxRefStates = min(opt.MaxRefStates, int(opt.Capacity*float64(total)))
		if opt.MaxRefStates == 0 {
			opt.MaxRefStates = -1 // no store
		}
	}
	// Hold out the last fifth of the episodes to calibrate the class
	// statistics against a reference store that has not seen them.
	nCal := 0
	if len(eps) >= 2 {
		nCal = max(1, len(eps)/5)
	}
	st := defaultStats(g)
	if nCal > 0 {
		st = calibrateOn(g, opt, eps[:len(eps)-nCal], eps[len(eps)-nCal:])
	}
	return build(g, opt, eps, st, !opt.NoFile), nil
}

// calibrateOn measures the statistics of a model on held-out episodes: a
// model is built from fit (no file: it is only run) and coded over held.
// What is built here is garbage when it returns, before the final model is
// built.
func calibrateOn(g Geometry, opt TrainOptions, fit, held []Episode) classStats {
	// The statistics are the default level's, whatever the model's level.
	opt.Level = LevelFull
	m0 := build(g, opt, fit, defaultStats(g), false)
	// The continuations and the offset law are measured against the
	// reference store of m0 and used by the calibration run.
	cont, offs := learnContNext(m0, held), learnOffsets(m0, held)
	m0.contNext, m0.offPrior = cont, offs
	st, newTiles, subs := calibrate(m0, held, opt.Progress)
	m0 = nil
	st.contNext, st.offPrior = cont, offs
	if g.K <= 256 {
		src := newFallSource(g, fit)
		st.fallBeta, st.fallExp = chooseFallback(g, src, newTiles)
		st.subMix = chooseSubMix(g, src, st.fallBeta, st.fallExp, subs)
	}
	return st
}

// learnContNext estimates, for every slot x, which slots y continue a match
// at x: for consecutive slots (s-1, s) of the held-out states whose tiles
// both occur in m's reference store, every reference state holding the first
// at slot x and the second at slot y counts (x, y). The counts are smoothed
// toward y = x+1; the most probable slot and the next of probability at
// least 1/32 are kept, at most 4.
func learnContNext(m *Model, held []Episode) [][]contEntry {
	g := m.Geom
	S, M, n := g.S, g.M, g.N()
	idx := make(map[string]int32, len(m.tileRep))
	for id, rep := range m.tileRep {
		st, sl := int(rep)/S, int(rep)%S
		idx[string(u16bytes(m.refCodes[st*n+sl*M:st*n+sl*M+M]))] = int32(id)
	}
	cnt := make([]float64, S*S)
	for _, e := range held {
		for t := range e.Actions {
			st := e.Codes[t*n : (t+1)*n]
			prev := int32(-1)
			for s := range S {
				id, ok := idx[string(u16bytes(st[s*M:(s+1)*M]))]
				if !ok {
					id = -1
				}
				if prev >= 0 && id >= 0 && prev != id {
					occ := m.tileOcc[prev]
					for _, o := range occ {
						r, x := int(o)/S, int(o)%S
						y, ny, nx := 0, 0, 0
						for z := range S {
							switch m.tileOf[r*S+z] {
							case id:
								y, ny = z, ny+1
							case prev:
								nx++
							}
						}
						// Only pairs each tile of which is alone in its state
						// say where one continues the other.
						if ny == 1 && nx == 1 {
							cnt[x*S+y] += 1 / float64(len(occ))
						}
					}
				}
				prev = id
			}
		}
	}
	const alpha = 4.0
	out := make([][]contEntry, S)
	for x := range S {
		row := cnt[x*S : (x+1)*S]
		var tot float64
		for _, c := range row {
			tot += c
		}
		type yp struct {
			y int
			p float64
		}
		var l []yp
		for y := range S {
			c := row[y]
			if y == (x+1)%S {
				c += alpha
			}
			if c > 0 {
				l = append(l, yp{y, c / (tot + alpha)})
			}
		}
		slices.SortStableFunc(l, func(a, b yp) int {
			if a.p != b.p {
				if a.p > b.p {
					return -1
				}
				return 1
			}
			return a.y - b.y
		})
		// The most probable slot, and the next ones of probability at
		// least 1/32, at most 4 in all.
		k := 1
		for k < len(l) && k < 4 && l[k].p >= 1.0/32 {
			k++
		}
		l = l[:k]
		for _, e := range l {
			out[x] = append(out[x], contEntry{uint16(e.y), uint16(min(max(1, math.Round(e.p*(1<<15))), 1<<15))})
		}
	}
	return out
}

type classStats struct {
	hits    [nBuckets][nClasses]uint32
	slot    []uint32
	mis     [nClasses]uint32
	cn      [nClasses]uint32
	fallExp [2]uint16
	// fallBeta is the smoothing of the two fallback tables toward the
	// subspace marginal, in observations (0: the default).
	fallBeta [2]float64
	subMix   uint16
	contNext [][]contEntry // nil: the default
	offPrior []uint16
	ctx      []uint32 // class counts after the previous slot's class, or nil
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
	s.subMix = defaultSubMix
	return s
}

// defaultSubMix is the substitution mix of a model without calibration: a
// substituted code follows the fallback and the uniform law half and half.
const defaultSubMix = 128

// calibrate runs m over held-out episodes and returns its class statistics,
// scaled down so that a stream adapts to its own content quickly, the codes
// of the held-out tiles it coded as new content, and the codes its best
// matches got wrong (substitutions).
func calibrate(m *Model, eps []Episode, progress func(int, int)) (classStats, fallSamples, fallSamples) {
	p := m.NewPredictor().level.(*fullPredictor) // m is of the full level (calibrateOn)
	g := m.Geom
	n, S, M := g.N(), g.S, g.M
	var newTiles, subs fallSamples
	// Accumulate what each episode adds to the statistics it starts from.
	var hits [nBuckets][nClasses]uint64
	slot := make([]uint64, S*nClasses)
	var mis, cn [nClasses]uint64
	events := make([][]slotEvent, len(eps))
	for i, e := range eps {
		p.Reset()
		for t := range e.Actions {
			p.Begin(e.Actions[t])
			st := e.Codes[t*n : (t+1)*n]
			var before [nClasses]uint32
			for j := range n {
				s := j / M
				if j%M == 0 {
					copy(before[:], p.stats.hitsS[s*nClasses:])
				}
				p.Predict(j)
				p.Commit(j, st[j])
				if j%M != M-1 {
					continue
				}
				for c := range nClasses {
					if p.stats.hitsS[s*nClasses+c] != before[c] {
						events[i] = append(events[i], slotEvent{uint8(p.bucket), uint8(c), uint16(s)})
					}
				}
				if p.stats.hitsS[s*nClasses+clsNew] != before[clsNew] {
					newTiles.add(g, st, s, -1)
					continue
				}
				// The slot's best match, as the predictor chose it.
				if tl := p.bestTile(); tl != nil {
					for mm := range M {
						if tl[mm] != st[s*M+mm] {
							subs.add(g, st, s, mm)
						}
					}
				}
			}
		}
		for b := range nBuckets {
			for c := range nClasses {
				hits[b][c] += uint64(p.stats.hits[b][c] - m.clsHits[b][c])
			}
		}
		for k := range slot {
			slot[k] += uint64(p.stats.hitsS[k] - m.clsSlot[k])
		}
		for c := range nClasses {
			mis[c] += uint64(p.stats.mis[c] - m.clsMis[c])
			cn[c] += uint64(p.stats.cn[c] - m.clsN[c])
		}
		if progress != nil {
			progress(i+1, len(eps))
		}
	}
	st := classStats{slot: make([]uint32, S*nClasses)}
	// Rescale so that a chunk adapts to its own content quickly.
	scale := func(h []uint64, out []uint32, to uint64) { scaleCounts(h, out, to, 1) }
	bs, ss := chooseScales(S, events, scale)
	for b := range nBuckets {
		scale(hits[b][:], st.hits[b][:], bs)
	}
	// Class counts by slot and previous slot's class, scaled to at most
	// ctxScale per row (no smoothing: an empty row defers to the rest).
	ctx := make([]uint64, S*(nClasses+1)*nClasses)
	for _, ev := range events {
		pc := nClasses
		for _, e := range ev {
			if e.s == 0 {
				pc = nClasses
			}
			ctx[(int(e.s)*(nClasses+1)+pc)*nClasses+int(e.c)]++
			pc = int(e.c)
		}
	}
	st.ctx = make([]uint32, len(ctx))
	for k := 0; k < len(ctx); k += nClasses {
		scaleCounts(ctx[k:k+nClasses], st.ctx[k:k+nClasses], ctxScale, 0)
	}
	for s := range S {
		scale(slot[s*nClasses:(s+1)*nClasses], st.slot[s*nClasses:(s+1)*nClasses], ss)
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
	return st, newTiles, subs
}

// slotEvent is the class that explained one slot of a calibration run.
type slotEvent struct {
	b, c uint8
	s    uint16
}

// Grids of the totals the class statistics are scaled to (chooseScales).
var (
	bucketScales = []uint64{16, 64, 256}
	slotScales   = []uint64{32, 64, 128, 256, 512, 1024, 4096}
)

// ctxScale is the total the class counts after each previous slot's class
// are scaled to.
const ctxScale = 64

// defaultScale is the total both kinds of class statistics are scaled to
// without a choice.
const defaultScale = 64

// scaleCounts writes h to out, scaled down to a total of at most to when
// it is larger (integer division per count), plus add for each count.
func scaleCounts(h []uint64, out []uint32, to uint64, add uint32) {
	var tot uint64
	for _, x := range h {
		tot += x
	}
	for c, x := range h {
		if tot > to {
			x = x * to / tot
		}
		out[c] = uint32(x) + add
	}
}

// chooseScales picks the totals the bucket and the slot class statistics
// are scaled to: how much a chunk starts out trusting them against its own
// counts. Each held-out episode's classes are replayed through the
// predictor's class prior from the statistics of the other episodes, scaled
// (leave one out); the pair of totals giving the classes the shortest code
// wins. With fewer than two episodes the default is kept.
func chooseScales(S int, events [][]slotEvent, scale func([]uint64, []uint32, uint64)) (uint64, uint64) {
	if len(events) < 2 {
		return defaultScale, defaultScale
	}
	var hits [][nBuckets][nClasses]uint64
	var slot [][]uint64
	for _, ev := range events {
		var h [nBuckets][nClasses]uint64
		sl := make([]uint64, S*nClasses)
		for _, e := range ev {
			h[e.b][e.c]++
			sl[int(e.s)*nClasses+int(e.c)]++
		}
		hits = append(hits, h)
		slot = append(slot, sl)
	}
	var cs chunkStats
	oh := make([]uint64, nClasses)
	sl0 := make([]uint64, S*nClasses)
	best, bestCost := [2]uint64{defaultScale, defaultScale}, int64(-1)
	for _, bs := range bucketScales {
		for _, ss := range slotScales {
			var cost int64
			for i, ev := range events {
				for b := range nBuckets {
					clear(oh)
					for j := range events {
						if j != i {
							for c := range nClasses {
								oh[c] += hits[j][b][c]
							}
						}
					}
					scale(oh, cs.hits[b][:], bs)
				}
				clear(sl0)
				for j := range events {
					if j != i {
						for k, x := range slot[j] {
							sl0[k] += x
						}
					}
				}
				cs.hitsS = slices.Grow(cs.hitsS[:0], S*nClasses)[:S*nClasses]
				for s := range S {
					scale(sl0[s*nClasses:(s+1)*nClasses], cs.hitsS[s*nClasses:(s+1)*nClasses], ss)
				}
				cs.sum()
				for _, e := range ev {
					cs.priors(int(e.b), int(e.s))
					cost -= int64(cs.prior[e.c])
					cs.count(int(e.b), int(e.s), int(e.c))
				}
			}
			if bestCost < 0 || cost < bestCost {
				best, bestCost = [2]uint64{bs, ss}, cost
			}
		}
	}
	return best[0], best[1]
}

// build makes the model of the reference store drawn from eps and the
// statistics st. With file, the model is coded into its file and read
// back from it, so that it is exactly what a reader of the file loads;
// without, it is only derived, for a run inside training: it predicts as
// the loaded model would, and has no file.
func build(g Geometry, opt TrainOptions, eps []Episode, st classStats, file bool) *Model {
	m := &Model{Geom: g, Precision: opt.Precision}
	m.clsHits, m.clsMis, m.clsN, m.clsSlot = st.hits, st.mis, st.cn, st.slot
	m.subMix, m.contNext, m.offPrior, m.clsCtx = st.subMix, st.contNext, st.offPrior, st.ctx
	if m.contNext == nil {
		m.contNext = defaultContNext(g.S)
	}
	// Reference store: the most recent MaxRefStates states, whole episodes
	// where possible.
	var states int
	first := len(eps)
	for first > 0 && states+len(eps[first-1].Actions) <= opt.MaxRefStates {
		first--
		states += len(eps[first].Actions)
	}
	m.refCodes = make([]uint16, 0, states*g.N())
	m.refBkt = make([]uint8, 0, states)
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
	beta := st.fallBeta
	for i := range beta {
		if beta[i] == 0 {
			beta[i] = defaultBeta
		}
	}
	// The fallback tables derive from the reference store (its novel
	// tiles), so the file stores only their smoothing.
	m.fallDerived = true
	m.fallBeta = [2]uint32{betaQ(beta[0]), betaQ(beta[1])}
	m.fallCtx = fallContexts(g)
	m.fallExp = [2]uint16{256, 0}
	if st.fallExp != [2]uint16{} {
		m.fallExp = st.fallExp
	}
	if g.K <= 256 && m.fallExp[1] > 0 {
		m.fall2Ctx = m.fallCtx
	} else {
		m.fallBeta[1] = 0
	}
	// The bounds of the current model version, as UnmarshalModel sets them.
	m.occCap, m.anchorCap, m.succCap = occCap, anchorCap, succCap
	m.derive(nil)
	m.level = opt.Level
	if !file {
		return m
	}
	m.encode()
	// Only the file and its ID outlive the built form: the store is read
	// back from the file, and the built one is garbage meanwhile.
	raw, id, fbeta := m.raw, m.id, m.fallBeta
	m = nil
	mm, err := UnmarshalModel(raw)
	if err != nil {
		panic("wm: model does not round-trip: " + err.Error())
	}
	if mm.ID() != id {
		panic("wm: model ID does not round-trip")
	}
	// A file too small for version 3 (a small store under large tables)
	// is the canonical one; its tables are still those of the store, so
	// the sections a caller adds may make version 3 fit (encode).
	mm.fallDerived, mm.fallBeta = true, fbeta
	return mm
}

// betaQ is a smoothing in observations as stored: Q8, within maxBetaQ.
func betaQ(b float64) uint32 { return uint32(min(max(math.Round(b*256), 0), maxBetaQ)) }

// fallContexts is the number of contexts per subspace of the fallback
// tables: one per left code and one for none, or a single one for large K.
func fallContexts(g Geometry) int {
	if g.K > 256 {
		return 1
	}
	return g.K + 1
}

// Contexts of the fallback tables.
const (
	ctxLeft = iota // the same subspace of the previous slot
	ctxPrev        // the previous subspace of the same slot
)

// defaultBeta is the smoothing of a fallback row toward its subspace's
// marginal, in observations, when it is not chosen on held-out data.
const defaultBeta = 8.0

// fallSource is what the fallback tables learn from: the training codes with
// near-duplicate tiles replaced by their centre (as denoise does for the
// reference store), and the slots (state·S+slot over the concatenated
// episodes) whose tile appears there for the first time in the whole
// training input. New content at coding time is content the model has not
// stored, so a tile repeated, exactly or up to a few codes of noise, is
// counted once: repetitions would teach the context tables chance
// co-occurrences of the same few tiles.
type fallSource struct {
	tiles *tileSet // the distinct tiles of the training codes
	ids   []int32  // per slot: its tile, denoised
	novel []int32
}

func newFallSource(g Geometry, eps []Episode) *fallSource {
	M := g.M
	var slots int
	for _, e := range eps {
		slots += len(e.Codes) / M
	}
	src := &fallSource{tiles: newTileSet(M), ids: make([]int32, 0, slots)}
	for _, e := range eps {
		for o := 0; o+M <= len(e.Codes); o += M {
			src.ids = append(src.ids, src.tiles.add(e.Codes[o:o+M]))
		}
	}
	// Centers are distinct tiles, so a denoised tile is new exactly when
	// its center is.
	center := denoiseCenters(src.tiles)
	seen := make([]bool, src.tiles.len())
	for p, id := range src.ids {
		if center != nil {
			id = center[id]
			src.ids[p] = id
		}
		if !seen[id] {
			seen[id] = true
			src.novel = append(src.novel, int32(p))
		}
	}
	return src
}

// tile returns the denoised tile of slot p.
func (src *fallSource) tile(p int32) []uint16 { return src.tiles.tile(src.ids[p]) }

// fitFallback estimates the new-content model: per subspace m and context
// (kind ctxLeft: the code of the same subspace in the previous slot; ctxPrev:
// the previous code of the same tile), the distribution of a code in the
// novel tiles of src, smoothed toward the subspace's marginal with beta
// observations.
func fitFallback(g Geometry, src *fallSource, kind int, beta float64) ([]uint16, int) {
	nctx := fallContexts(g)
	return fallbackRows(g, fallCounts(g, src.tile, src.novel, kind, nctx), nctx, betaQ(beta)), nctx
}

// fallSamples counts held-out codes by fallback contexts: subspace, code of
// the same subspace in the previous slot (K for slot 0) and previous code of
// the same tile (K for subspace 0), then value.
type fallSamples struct {
	idx  map[[3]int]int
	keys [][3]int
	vals []map[uint16]float64
}

// add counts the codes of slot s of state st, or only that of subspace
// only when only >= 0.
func (fs *fallSamples) add(g Geometry, st []uint16, s, only int) {
	if fs.idx == nil {
		fs.idx = map[[3]int]int{}
	}
	M, K := g.M, g.K
	tl := st[s*M : (s+1)*M]
	for mm, v := range tl {
		if only >= 0 && mm != only {
			continue
		}
		k := [3]int{mm, K, K}
		if s > 0 {
			k[1] = int(st[(s-1)*M+mm])
		}
		if mm > 0 {
			k[2] = int(tl[mm-1])
		}
		i, ok := fs.idx[k]
		if !ok {
			i = len(fs.keys)
			fs.idx[k] = i
			fs.keys = append(fs.keys, k)
			fs.vals = append(fs.vals, map[uint16]float64{})
		}
		fs.vals[i][v]++
	}
}

// Grids searched by chooseFallback.
var (
	betaGrid = []float64{2, 8, 32, 128, 512, 2048, 8192}
	expGrid  = []uint16{0, 51, 102, 154, 205, 256}
)

// chooseFallback picks the smoothing of the two fallback tables fitted on
// src and the exponents that combine them, to give the held-out tiles the
// model coded as new content (samples) the shortest code. The code length is
// that of the geometric combination before the predictor's quantization,
// computed in floating point; the search is coordinate-wise (exponents,
// first smoothing, second smoothing, exponents again) from the defaults.
func chooseFallback(g Geometry, src *fallSource, samples fallSamples) ([2]float64, [2]uint16) {
	beta, exps := [2]float64{defaultBeta, defaultBeta}, [2]uint16{256, 0}
	if len(samples.keys) == 0 {
		return beta, exps
	}
	K := g.K
	// Fixed summation order: keys in order of first sample, values ascending.
	type vc struct {
		v int
		c float64
	}
	sorted := make([][]vc, len(samples.keys))
	for i := range samples.keys {
		for v, c := range samples.vals[i] {
			sorted[i] = append(sorted[i], vc{int(v), c})
		}
		slices.SortFunc(sorted[i], func(a, b vc) int { return a.v - b.v })
	}
	// lg of the rows the samples use, per table and smoothing.
	logRows := func(kind int, b float64) [][]int32 {
		f, nctx := fitFallback(g, src, kind, b)
		out := make([][]int32, len(samples.keys))
		for i, k := range samples.keys {
			ctx := 0
			if nctx > 1 {
				ctx = k[1+kind]
			}
			row := f[(k[0]*nctx+ctx)*K : (k[0]*nctx+ctx+1)*K]
			l := make([]int32, K)
			for v, x := range row {
				l[v] = fixed.Lg(uint64(x))
			}
			out[i] = l
		}
		return out
	}
	cache := [2]map[float64][][]int32{{}, {}}
	rows := func(kind int, b float64) [][]int32 {
		if r, ok := cache[kind][b]; ok {
			return r
		}
		r := logRows(kind, b)
		cache[kind][b] = r
		return r
	}
	// The cost follows the predictor's combination (mixFallback) up to its
	// final quantization.
	lw := make([]int32, K)
	cost := func(b [2]float64, e [2]uint16) float64 {
		r1, r2 := rows(ctxLeft, b[0]), rows(ctxPrev, b[1])
		e1, e2 := int64(e[0]), int64(e[1])
		var bits float64
		for i := range sorted {
			a1, a2 := r1[i], r2[i]
			var mx int32 = -1 << 30
			for v := range K {
				l := int32((e1*int64(a1[v]) + e2*int64(a2[v])) >> 8)
				lw[v] = l
				mx = max(mx, l)
			}
			var z uint64
			for v := range K {
				z += fixed.W(mx - lw[v])
			}
			lz := math.Log2(float64(z))
			for _, x := range sorted[i] {
				bits += x.c * (lz - math.Log2(float64(max(fixed.W(mx-lw[x.v]), 1))))
			}
		}
		return bits
	}
	best := cost(beta, exps)
	// The code length is convex in the exponents (a log-sum-exp of linear
	// functions, minus a linear one), so coordinate descent on the grid
	// finds its minimum there, nearly.
	pickExps := func() {
		for range 4 {
			moved := false
			for i := range 2 {
				for _, x := range expGrid {
					e := exps
					e[i] = x
					if e == exps || e == [2]uint16{} {
						continue
					}
					if c := cost(beta, e); c < best {
						best, exps, moved = c, e, true
					}
				}
			}
			if !moved {
				return
			}
		}
	}
	pickBeta := func(i int) {
		for _, b := range betaGrid {
			bb := beta
			bb[i] = b
			if c := cost(bb, exps); c < best {
				best, beta = c, bb
			}
		}
	}
	pickExps()
	pickBeta(0)
	if exps[1] > 0 {
		pickBeta(1)
	}
	pickExps()
	return beta, exps
}

// denoise replaces, in place, every tile of codes that lies within
// max(1, M/16) differing codes of a strictly more frequent tile by the most
// frequent such tile (denoiseCenters).
func denoise(g Geometry, codes []uint16) {
	M := g.M
	ts := newTileSet(M)
	occ := make([]int32, len(codes)/M) // tile id per slot occurrence
	for i := range occ {
		occ[i] = ts.add(codes[i*M : (i+1)*M])
	}
	center := denoiseCenters(ts)
	if center == nil {
		return
	}
	for i, id := range occ {
		if c := center[id]; c != id {
			copy(codes[i*M:(i+1)*M], ts.tile(c))
		}
	}
}

// denoiseCenters returns, for every tile of ts, the tile that replaces it:
// the most frequent tile within max(1, M/16) differing codes, if strictly
// more frequent than it, else itself (nil when M is too small for the
// rule). Tiles are visited from the most frequent down, so a center is
// never itself replaced. Candidate centers are found through an index on
// the blocks of a pigeonhole split: two tiles within h differences share
// at least one of h+1 blocks exactly.
func denoiseCenters(ts *tileSet) []int32 {
	M := ts.m
	h := max(1, M/16)
	if M < h+1 {
		return nil
	}
	order := make([]int32, ts.len())
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		if ts.count[a] != ts.count[b] {
			return int(ts.count[b]) - int(ts.count[a])
		}
		return int(a) - int(b)
	})
	nb := h + 1
	bounds := make([]int, nb+1)
	for b := range bounds {
		bounds[b] = b * M / nb
	}
	blockIdx := make([]map[string][]int32, nb)
	for b := range blockIdx {
		blockIdx[b] = map[string][]int32{}
	}
	center := make([]int32, ts.len())
	for _, id := range order {
		t := ts.tile(id)
		best := int32(-1)
		for b := range nb {
			for _, c := range blockIdx[b][string(u16bytes(t[bounds[b]:bounds[b+1]]))] {
				if ts.count[c] <= ts.count[id] {
					continue
				}
				ct := ts.tile(c)
				d := 0
				for i := range t {
					if t[i] != ct[i] {
						d++
					}
				}
				if d <= h && (best < 0 || ts.count[c] > ts.count[best] || (ts.count[c] == ts.count[best] && c < best)) {
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
	return center
}

// maxOffsetSlots bounds the slots of a model given an offset law (its size
// is 512·S bytes).
const maxOffsetSlots = 256

// learnOffsets estimates the law of the slot offset between a state and a
// reference state of the same content, by the action buckets of both: every
// tile of a held-out state (bucket b) at slot s that occurs once in a
// reference state (bucket b') at slot x counts (b, b', x − s mod S), with
// weight 1/(occurrences considered).
func learnOffsets(m *Model, held []Episode) []uint16 {
	g := m.Geom
	S, M, n := g.S, g.M, g.N()
	if S < 2 || S > maxOffsetSlots {
		return nil
	}
	idx := make(map[string]int32, len(m.tileRep))
	for id, rep := range m.tileRep {
		st, sl := int(rep)/S, int(rep)%S
		idx[string(u16bytes(m.refCodes[st*n+sl*M:st*n+sl*M+M]))] = int32(id)
	}
	cnt := make([]float64, nBuckets*nBuckets*S)
	for _, e := range held {
		for t := range e.Actions {
			a := e.Actions[t]
			if t == 0 {
				a = NoAction
			}
			b := bucketOf(a)
			st := e.Codes[t*n : (t+1)*n]
			for s := range S {
				id, ok := idx[string(u16bytes(st[s*M:(s+1)*M]))]
				if !ok {
					continue
				}
				occ := m.tileOcc[id]
				for _, o := range occ {
					r, x := int(o)/S, int(o)%S
					nx := 0
					for z := range S {
						if m.tileOf[r*S+z] == id {
							nx++
						}
					}
					if nx == 1 {
						cnt[(b*nBuckets+int(m.refBkt[r]))*S+(x-s+S)%S] += 1 / float64(len(occ))
					}
				}
			}
		}
	}
	const beta = 4.0
	out := make([]uint16, nBuckets*nBuckets*S)
	w := make([]uint32, S)
	cum := make([]uint16, S)
	for k := range nBuckets * nBuckets {
		row := cnt[k*S : (k+1)*S]
		var tot float64
		for _, c := range row {
			tot += c
		}
		for d := range S {
			w[d] = uint32(math.Round((row[d] + beta/float64(S)) / (tot + beta) * (1 << 24)))
		}
		if err := rans.Quantize(w, 16, cum); err != nil {
			panic(err)
		}
		sr := out[k*S : (k+1)*S]
		for d := range S {
			next := uint32(1 << 16)
			if d+1 < S {
				next = uint32(cum[d+1])
			}
			sr[d] = uint16(next - uint32(cum[d]))
		}
		// Store the row as inference reads it: a floor and spikes, the
		// rounding left to the largest spike.
		o := spikes(sr)
		var sum uint32
		for d := range sr {
			sr[d] = uint16(o.floor)
		}
		for i := range o.n {
			sr[o.d[i]] = uint16(o.floor + o.e[i])
		}
		for _, f := range sr {
			sum += uint32(f)
		}
		sr[o.d[0]] += uint16(1<<16 - sum)
	}
	return out
}

// chooseSubMix picks the substitution mix (Q8) that gives the held-out codes
// the calibration run's best matches got wrong (subs) the shortest code,
// with the fallback rows the chosen tables combine to.
func chooseSubMix(g Geometry, src *fallSource, beta [2]float64, exps [2]uint16, subs fallSamples) uint16 {
	if len(subs.keys) == 0 {
		return defaultSubMix
	}
	K := g.K
	f1, c1 := fitFallback(g, src, ctxLeft, beta[0])
	m := &Model{Geom: g, fallTables: fallTables{fallback: f1, fallCtx: c1, fallExp: exps}}
	if exps[1] > 0 {
		m.fall2, m.fall2Ctx = fitFallback(g, src, ctxPrev, beta[1])
	}
	row := make([]uint16, K)
	w := make([]uint32, K)
	cum := make([]uint16, K)
	// Fixed summation order: keys in order of first sample, values ascending.
	grid := []uint16{0, 32, 64, 96, 128, 160, 192, 224, 256}
	cost := make([]float64, len(grid))
	vals := make([]uint16, 0, K)
	for i, k := range subs.keys {
		ctx := 0
		if c1 > 1 {
			ctx = k[1]
		}
		f := f1[(k[0]*c1+ctx)*K : (k[0]*c1+ctx+1)*K]
		if m.fall2Ctx > 0 {
			r2 := (k[0]*m.fall2Ctx + k[2]) * K
			m.mixFallback(f, m.fall2[r2:r2+K], row, w, cum)
			f = row
		}
		vals = vals[:0]
		for v := range subs.vals[i] {
			vals = append(vals, v)
		}
		slices.Sort(vals)
		u := uint64(1<<16) / uint64(K)
		for _, v := range vals {
			c := subs.vals[i][v]
			for gi, a := range grid {
				q := (uint64(f[v])*uint64(a) + u*(256-uint64(a))) >> 8
				cost[gi] += c * -math.Log2(float64(max(q, 1))/65536)
			}
		}
	}
	best := 0
	for gi := range grid {
		if cost[gi] < cost[best] {
			best = gi
		}
	}
	return grid[best]
}

// mixFallback is Predictor.mix for rows not in a loaded model (training): it
// combines f1 and f2 geometrically into out as frequencies summing to
// 65536.
func (m *Model) mixFallback(f1, f2, out []uint16, w []uint32, cum []uint16) {
	K := len(f1)
	rans.QuantizeProducts(mixPowers(f1, K, m.fallExp[0]), mixPowers(f2, K, m.fallExp[1]), 16, cum[:K], w[:K])
	for v := range out {
		out[v] = uint16(rans.Freq(cum, v, 16))
	}
}
