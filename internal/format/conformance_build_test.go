package format

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/rans"
	"github.com/wmzip/wmzip/internal/wm"
)

// Models built directly for the conformance vectors: every field chosen
// by integer arithmetic so that each decode path of SPEC.md has a vector
// (a trained model reaches only the paths its data calls for). The bytes
// are written here by the layout of SPEC.md ("Model file") and parsed by
// package wm; TestConformanceModelBytes checks that wm's own serializer
// writes the same bytes for the parsed model.

// wmmBuild is the content of a model file.
type wmmBuild struct {
	version int // 1 or 2
	g       wm.Geometry
	prec    uint
	hits    [16][8]uint32
	mis, cn [8]uint32
	hitsS   []uint32 // [S][8]
	ctx     int      // C: 1 or K+1
	fall    []uint16 // [M][C][K] frequencies (each ≥ 1, rows sum to 65536)
	ctx2    int      // C2: 0 or K+1
	e1, e2  uint16
	fall2   []uint16      // [M][C2][K]
	subMix  uint16        // A (version 2)
	cont    [][][2]uint16 // per slot: pairs (y, p) (version 2)
	off     []uint16      // nil or [16][16][S] frequencies (version 2)
	hitsP   []uint32      // nil or [S][9][8] (version 2)
	starts  []uint32      // reference episode starts
	codes   []uint16      // reference states, [T][N]
	buckets []uint8       // [T]
	secs    []wm.Section
	at      map[string]int // offsets of the fields, set by bytes
}

// bytes serializes b by SPEC.md's model file table.
func (b *wmmBuild) bytes() []byte {
	le := binary.LittleEndian
	g := b.g
	var o []byte
	b.at = map[string]int{}
	mark := func(field string) { b.at[field] = len(o) }
	o = append(o, "WMZM"...)
	mark("version")
	o = le.AppendUint16(o, uint16(b.version))
	mark("flags")
	o = le.AppendUint16(o, 0)
	mark("S")
	o = le.AppendUint32(o, uint32(g.S))
	mark("M")
	o = le.AppendUint32(o, uint32(g.M))
	mark("K")
	o = le.AppendUint32(o, uint32(g.K))
	mark("P")
	o = append(o, byte(b.prec), 0, 0, 0)
	mark("hits")
	for bk := range 16 {
		for c := range 8 {
			o = le.AppendUint32(o, b.hits[bk][c])
		}
	}
	for c := range 8 {
		o = le.AppendUint32(o, b.mis[c])
		o = le.AppendUint32(o, b.cn[c])
	}
	mark("hitsS")
	for _, h := range b.hitsS {
		o = le.AppendUint32(o, h)
	}
	mark("C")
	o = le.AppendUint32(o, uint32(b.ctx))
	mark("fall")
	for _, f := range b.fall {
		o = le.AppendUint16(o, f-1)
	}
	mark("C2")
	o = le.AppendUint32(o, uint32(b.ctx2))
	mark("e1")
	o = le.AppendUint16(o, b.e1)
	mark("e2")
	o = le.AppendUint16(o, b.e2)
	mark("fall2")
	for _, f := range b.fall2 {
		o = le.AppendUint16(o, f-1)
	}
	if b.version >= 2 {
		mark("A")
		o = le.AppendUint16(o, b.subMix)
		mark("cont")
		for _, l := range b.cont {
			o = append(o, byte(len(l)))
			for _, e := range l {
				o = le.AppendUint16(o, e[0])
				o = le.AppendUint16(o, e[1])
			}
		}
		mark("R")
		if b.off == nil {
			o = le.AppendUint32(o, 0)
		} else {
			o = le.AppendUint32(o, 256)
			mark("off")
			for _, f := range b.off {
				o = le.AppendUint16(o, f-1)
			}
		}
		mark("Pctx")
		if b.hitsP == nil {
			o = le.AppendUint32(o, 0)
		} else {
			o = le.AppendUint32(o, 9)
			for _, h := range b.hitsP {
				o = le.AppendUint32(o, h)
			}
		}
	}
	mark("E")
	o = le.AppendUint32(o, uint32(len(b.starts)))
	mark("starts")
	for _, s := range b.starts {
		o = le.AppendUint32(o, s)
	}
	mark("T")
	o = le.AppendUint32(o, uint32(len(b.buckets)))
	mark("codes")
	for _, c := range b.codes {
		if g.K <= 256 {
			o = append(o, byte(c))
		} else {
			o = le.AppendUint16(o, c)
		}
	}
	mark("buckets")
	o = append(o, b.buckets...)
	mark("sections")
	o = le.AppendUint32(o, uint32(len(b.secs)))
	for _, s := range b.secs {
		mark("section " + string(s.Tag[:]))
		o = append(o, s.Tag[:]...)
		o = le.AppendUint32(o, uint32(len(s.Data)))
		o = append(o, s.Data...)
	}
	return o
}

// model parses b's bytes.
func (b *wmmBuild) model() *wm.Model {
	m, err := wm.UnmarshalModel(b.bytes())
	if err != nil {
		panic(err)
	}
	return m
}

// freqRow returns a row of K frequencies (each ≥ 1, sum 65536) in
// proportion to the weights w: Quantize at precision 16.
func freqRow(w []uint32) []uint16 {
	cum := make([]uint16, len(w))
	rans.QuantizeTrusted(w, 16, cum)
	f := make([]uint16, len(w))
	for v := range cum {
		if v+1 < len(cum) {
			f[v] = cum[v+1] - cum[v]
		} else {
			f[v] = uint16(1<<16 - uint32(cum[v]))
		}
	}
	return f
}

// rowKinds are the shapes of the fallback rows randRows draws.
const (
	rowSkewed   = iota // weights (1+u)^2 for uniform u < 64
	rowPeaked          // one value holds almost all mass
	rowFlat            // all weights equal
	rowTwoPeaks        // two values hold almost all mass
	rowPeakLast        // the last value holds almost all mass
)

// randRow draws one row of K frequencies of the given kind.
func randRow(rng *rand.Rand, k, kind int) []uint16 {
	w := make([]uint32, k)
	for v := range w {
		switch kind {
		case rowSkewed:
			u := uint32(rng.IntN(64))
			w[v] = (1 + u) * (1 + u)
		case rowFlat:
			w[v] = 1
		}
	}
	switch kind {
	case rowPeaked:
		w[rng.IntN(k)] = 1 << 20
	case rowTwoPeaks:
		w[rng.IntN(k)] = 1 << 19
		w[rng.IntN(k)] += 1 << 18
	case rowPeakLast:
		w[k-1] = 1 << 20
	}
	return freqRow(w)
}

// randRows draws n rows of K frequencies, of kind kinds[i mod len(kinds)].
func randRows(rng *rand.Rand, n, k int, kinds ...int) []uint16 {
	out := make([]uint16, 0, n*k)
	for i := range n {
		out = append(out, randRow(rng, k, kinds[i%len(kinds)])...)
	}
	return out
}

// classStats fills b's class statistics with a pattern: counts by bucket
// and class from base (scaled per bucket), substitution counts, and by-slot
// (and by-context) counts.
func (b *wmmBuild) classStats(rng *rand.Rand, base [8]uint32, ctx bool) {
	for bk := range 16 {
		for c := range 8 {
			b.hits[bk][c] = base[c] * uint32(1+bk%3) / 2
		}
	}
	for c := range 8 {
		b.mis[c] = uint32(1 + c)
		b.cn[c] = uint32(16 + 8*c)
	}
	S := b.g.S
	b.hitsS = make([]uint32, S*8)
	for i := range b.hitsS {
		b.hitsS[i] = uint32(rng.IntN(6)) * base[i%8] / 8
	}
	if ctx {
		b.hitsP = make([]uint32, S*9*8)
		for i := range b.hitsP {
			b.hitsP[i] = uint32(rng.IntN(8))
		}
	}
}

// offsetLaw draws the 256 rows of an offset law for S slots: a floor plus
// a few spikes, and some rows with more than four raised entries or with
// ties, so that the spikes a decoder derives are not the row's whole shape.
func offsetLaw(rng *rand.Rand, S int) []uint16 {
	out := make([]uint16, 0, 256*S)
	for r := range 256 {
		w := make([]uint32, S)
		for d := range w {
			w[d] = 4
		}
		switch r % 4 {
		case 0: // the stay offset dominates
			w[0] = 400
		case 1: // spikes and a tie
			w[rng.IntN(S)] += 100
			w[rng.IntN(S)] += 100
			w[S-1] = 60
			if S > 2 {
				w[1] = 60
			}
		case 2: // random around the floor
			for d := range w {
				w[d] += uint32(rng.IntN(9))
			}
		case 3: // two spikes over a floor of 1 or 2: a successor's share of
			// the floor rounds to 0
			for d := range w {
				w[d] = 1
			}
			w[r%S] = 30000
			w[(r/4)%S] += 30000
		}
		out = append(out, freqRow(w)...)
	}
	return out
}

// contLists returns CONT lists of n entries per slot: x+1 first, then the
// slots after it, then those before, with falling probabilities.
func contLists(S, n int) [][][2]uint16 {
	out := make([][][2]uint16, S)
	for x := range S {
		k := min(n, S)
		for i := range k {
			y := (x + 1 + i) % S
			out[x] = append(out[x], [2]uint16{uint16(y), uint16(max(1, 32768>>(i+1)))})
		}
	}
	return out
}

// defaultCont is version 1's continuation list, CONT[x] = [(x+1 mod S, 1)].
func defaultCont(S int) [][][2]uint16 { return contLists(S, 1) }

// bucketOf is the world model's action bucket.
func bucketOf(a int64) uint8 { return uint8(min(max(a+1, 0), 15)) }

// refFrom fills b's reference store with episodes.
func (b *wmmBuild) refFrom(eps []episode) {
	n := b.g.N()
	b.starts, b.codes, b.buckets = nil, nil, nil
	for _, e := range eps {
		if len(e.Actions) == 0 {
			continue
		}
		b.starts = append(b.starts, uint32(len(b.buckets)))
		for t, a := range e.Actions {
			bk := bucketOf(a)
			if t == 0 {
				bk = 0
			}
			b.buckets = append(b.buckets, bk)
		}
		b.codes = append(b.codes, e.Codes[:len(e.Actions)*n]...)
	}
}

// walk draws episodes of the given lengths over a set of pages (states an
// agent returns to): each step stays with some codes changed, revisits a
// page, scrolls (slots move by one), or shows new content, with actions
// naming the step's kind and now and then an extreme action.
func walk(rng *rand.Rand, g wm.Geometry, pages [][]uint16, lens []int, noise int) []episode {
	n, M := g.N(), g.M
	var eps []episode
	for i, T := range lens {
		e := episode{Actions: make([]int64, T), Codes: make([]uint16, T*n)}
		if i%2 == 0 {
			e.Meta = []byte(`{"episode":` + string(rune('0'+i%10)) + `}`)
		}
		cur := append([]uint16(nil), pages[rng.IntN(len(pages))]...)
		for t := range T {
			r := rng.IntN(16)
			switch {
			case t == 0:
				e.Actions[t] = wm.NoAction
			case r < 7: // stay
				e.Actions[t] = 0
			case r < 10: // revisit
				e.Actions[t] = 1
				copy(cur, pages[rng.IntN(len(pages))])
			case r < 13: // scroll: slot x shows what slot x+1 showed
				e.Actions[t] = 2
				copy(cur, append(cur[M:], cur[:M]...))
			case r < 15: // new content in a few slots
				e.Actions[t] = 3
				for k := range g.S {
					if rng.IntN(3) == 0 {
						for m := range M {
							cur[k*M+m] = uint16(rng.IntN(g.K))
						}
					}
				}
			default:
				e.Actions[t] = []int64{-1 << 63, 1<<63 - 1, 1 << 40, -300, 15, 16}[rng.IntN(6)]
			}
			for j := range cur {
				if rng.IntN(noise) == 0 {
					cur[j] = uint16(rng.IntN(g.K))
				}
			}
			copy(e.Codes[t*n:], cur)
		}
		eps = append(eps, e)
	}
	return eps
}

// randPages draws k random states.
func randPages(rng *rand.Rand, g wm.Geometry, k int) [][]uint16 {
	pages := make([][]uint16, k)
	for i := range pages {
		pages[i] = make([]uint16, g.N())
		for j := range pages[i] {
			pages[i][j] = uint16(rng.IntN(g.K))
		}
	}
	return pages
}

// builtVector is a vector whose model and input are built here.
type builtVector struct {
	input string
	model string
	build func() (conformanceInput, *wm.Model)
}

// inputOf turns episodes into the JSON form of an input.
func inputOf(g wm.Geometry, prec uint, eps []episode) conformanceInput {
	in := conformanceInput{Geometry: g, Precision: prec}
	for _, e := range eps {
		in.Episodes = append(in.Episodes, conformanceStep{Meta: string(e.Meta), Actions: e.Actions, Codes: e.Codes})
	}
	return in
}

// buildMix: the second fallback table and its combination (C2 = K+1),
// first-table rows by previous-slot code (C = K+1), rows peaked enough
// that a power's weight W(d) is 0 (d ≥ 7,680), no offset law (succany by
// ST), no class context statistics. The first table's peaked rows give
// powers of weight 0; the second's rows are mild, so that no product is 0
// for every value.
func buildMix() (conformanceInput, *wm.Model) {
	return mixVector(mixParams{g: wm.Geometry{S: 3, M: 3, K: 20}, seed: 1, prec: 12, e1: 700, e2: 200, subMix: 200,
		rows2: []int{rowSkewed, rowFlat, rowSkewed}})
}

// buildMix64 is buildMix at K = 64, the table size of the amd64 kernels
// (rans: products, quantization steps, the remainder's move), with P = 16
// so that combined rows are coded as they are.
func buildMix64() (conformanceInput, *wm.Model) {
	return mixVector(mixParams{g: wm.Geometry{S: 3, M: 4, K: 64}, seed: 7, prec: 16, e1: 300, e2: 150, subMix: 180,
		rows2: []int{rowSkewed, rowFlat, rowTwoPeaks}})
}

// mixParams are what the vectors with a second fallback table vary.
type mixParams struct {
	g      wm.Geometry
	seed   uint64
	prec   uint
	e1, e2 uint16
	subMix uint16
	rows2  []int // kinds of the second table's rows
}

// mixVector builds a model with two fallback tables of K+1 contexts each,
// and its input.
func mixVector(mp mixParams) (conformanceInput, *wm.Model) {
	g := mp.g
	rng := rand.New(rand.NewPCG(14, mp.seed))
	b := &wmmBuild{version: 2, g: g, prec: mp.prec}
	b.classStats(rng, [8]uint32{30, 6, 8, 10, 8, 8, 8, 12}, false)
	b.ctx = g.K + 1
	b.fall = randRows(rng, g.M*b.ctx, g.K, rowSkewed, rowPeaked, rowTwoPeaks, rowSkewed, rowFlat, rowPeakLast)
	b.ctx2 = g.K + 1
	b.e1, b.e2 = mp.e1, mp.e2
	b.fall2 = randRows(rng, g.M*b.ctx2, g.K, mp.rows2...)
	b.subMix = mp.subMix
	b.cont = contLists(g.S, 3)
	pages := randPages(rng, g, 4)
	b.refFrom(walk(rng, g, pages, []int{8, 6, 7}, 9))
	eps := walk(rng, g, pages, []int{12, 5, 0, 9}, 7)
	return inputOf(g, b.prec, eps), b.model()
}

// conformanceGates are GATE sections for the trained model: entropy bins
// (axis 0, version 1) with per-subspace distance tables, weights, a bin
// and coordinates whose ê is 0, and bins without estimate; and modal bins
// with per-coordinate distance tables, few bins and no weights.
func conformanceGates(m *wm.Model) map[string]*gate.Params {
	g := m.Geom
	n, K := g.N(), g.K
	rng := rand.New(rand.NewPCG(14, 2))
	dist := func(tables int) [][]uint16 {
		d := make([][]uint16, tables)
		for t := range d {
			d[t] = make([]uint16, K*K)
			for a := range K {
				for c := range a {
					x := uint16(1 + rng.IntN(0xFFFF))
					d[t][a*K+c], d[t][c*K+a] = x, x
				}
			}
		}
		return d
	}
	a := &gate.Params{Geom: g, Precision: m.Precision, Axis: gate.AxisEntropy, BinShift: 6,
		BinErr: make([]uint32, 24), CoordErr: make([]uint32, n), Weights: make([]uint16, n),
		Dist: dist(g.M), SlotNorm: 123456, MeanV: 40000, Samples: 999}
	for i := range a.BinErr {
		switch i % 4 {
		case 0:
			a.BinErr[i] = gate.NoEstimate
		case 1:
			a.BinErr[i] = 0
		default:
			a.BinErr[i] = uint32(2000 + rng.IntN(40000))
		}
	}
	a.BinErr[len(a.BinErr)-1] = 1 << 24
	for j := range a.CoordErr {
		if j%3 != 0 {
			a.CoordErr[j] = uint32(rng.IntN(1 << 17))
		}
		a.Weights[j] = uint16(rng.IntN(512))
	}
	d := &gate.Params{Geom: g, Precision: m.Precision, Axis: gate.AxisModal, BinShift: 0,
		BinErr: make([]uint32, 5), CoordErr: make([]uint32, n), Dist: dist(n)}
	for i := range d.BinErr {
		d.BinErr[i] = uint32(3000 + 9000*i)
	}
	for j := range d.CoordErr {
		d.CoordErr[j] = 20000
	}
	for _, p := range []*gate.Params{a, d} {
		p.Prepare()
	}
	return map[string]*gate.Params{"model-gate-axis0.wmm": a, "model-gate-distn.wmm": d}
}

// buildGate64 is the mix64 model with a gate of per-subspace distance
// tables at K = 64 (the vector width of the fill's kernels), modal bins.
func buildGate64() (conformanceInput, *wm.Model) {
	in, m := buildMix64()
	g := m.Geom
	n, K := g.N(), g.K
	rng := rand.New(rand.NewPCG(14, 64))
	p := &gate.Params{Geom: g, Precision: m.Precision, Axis: gate.AxisModal, BinShift: 7,
		BinErr: make([]uint32, 33), CoordErr: make([]uint32, n), Dist: make([][]uint16, g.M), SlotNorm: 400000}
	for t := range p.Dist {
		p.Dist[t] = make([]uint16, K*K)
		for a := range K {
			for c := range a {
				x := uint16(1 + rng.IntN(0xFFFF))
				p.Dist[t][a*K+c], p.Dist[t][c*K+a] = x, x
			}
		}
	}
	for i := range p.BinErr {
		p.BinErr[i] = uint32(1000 + 1500*i)
	}
	for j := range p.CoordErr {
		p.CoordErr[j] = 30000
	}
	p.Prepare()
	gm, err := gate.Apply(m, p)
	if err != nil {
		panic(err)
	}
	return in, gm
}

// buildGate64Search is buildGate64's model and gate with flag bit 2, the
// search fill.
func buildGate64Search() (conformanceInput, *wm.Model) {
	in, m := buildGate64()
	p, err := gate.FromModel(m)
	if err != nil {
		panic(err)
	}
	p.SearchFill = true
	gm, err := gate.Apply(m, p)
	if err != nil {
		panic(err)
	}
	return in, gm
}

// buildK257: an alphabet above 256 (two-byte reference codes), one slot
// subspace (M = 1) over two slots, precision 16 (fallback rows used as
// they are), one first-table context (C = 1), and a second table whose
// combined row has weights summing to 2^32 or more (Quantize's scaling
// step); an offset law with as many spikes as slots (floor 0).
// buildMix3 is the mix model with its fallback tables derived from its
// reference store: a version-3 file with a second table (C2 = K+1).
func buildMix3() (conformanceInput, *wm.Model) {
	in, m := buildMix()
	m3, err := m.WithDerivedFallback(2048, 512)
	if err != nil {
		panic(err)
	}
	return in, m3
}

func buildK257() (conformanceInput, *wm.Model) {
	g := wm.Geometry{S: 2, M: 1, K: 257}
	rng := rand.New(rand.NewPCG(14, 3))
	b := &wmmBuild{version: 2, g: g, prec: 16}
	b.classStats(rng, [8]uint32{20, 4, 6, 8, 8, 6, 6, 10}, true)
	b.ctx = 1
	b.fall = randRows(rng, g.M*b.ctx, g.K, rowFlat)
	b.ctx2 = g.K + 1
	b.e1, b.e2 = 256, 0
	b.fall2 = randRows(rng, g.M*b.ctx2, g.K, rowFlat)
	b.subMix = 64
	b.cont = contLists(g.S, 2)
	b.off = offsetLaw(rng, g.S)
	pages := randPages(rng, g, 5)
	for _, p := range pages {
		p[0] = uint16(250 + rng.IntN(7)) // codes of two bytes
	}
	b.refFrom(walk(rng, g, pages, []int{10, 10}, 6))
	eps := walk(rng, g, pages, []int{20, 7}, 5)
	return inputOf(g, b.prec, eps), b.model()
}

// buildK2: a binary alphabet, one coordinate per state (S = M = 1), the
// least precision (10), no offset law (S = 1); one chunk of 2,100 states
// whose actions and levels repeat, so that the action and level models
// halve their counts; two levels with a gate of modal bins.
func buildK2() (conformanceInput, *wm.Model) {
	g := wm.Geometry{S: 1, M: 1, K: 2}
	rng := rand.New(rand.NewPCG(14, 4))
	b := &wmmBuild{version: 2, g: g, prec: 10}
	b.classStats(rng, [8]uint32{40, 10, 1, 10, 4, 6, 6, 20}, true)
	b.ctx = g.K + 1
	b.fall = randRows(rng, g.M*b.ctx, g.K, rowSkewed)
	b.subMix = 256
	b.cont = contLists(g.S, 1)
	var eps []episode
	for i, T := range []int{2100, 0, 6} {
		e := episode{Actions: make([]int64, T), Codes: make([]uint16, T)}
		if i == 1 {
			e.Meta = []byte(`{"empty":true}`)
		}
		v := uint16(0)
		for t := range T {
			e.Actions[t] = 0
			switch {
			case t == 0:
				e.Actions[t] = wm.NoAction
			case t%500 == 7:
				e.Actions[t] = int64(rng.IntN(40)) - 20
			}
			if rng.IntN(12) == 0 {
				v ^= 1
			}
			e.Codes[t] = v
		}
		eps = append(eps, e)
	}
	b.refFrom(eps[2:])
	in := inputOf(g, b.prec, eps)
	for i := range in.Episodes {
		e := &in.Episodes[i]
		e.Levels = make([]int, len(e.Actions))
		for t := range e.Levels {
			if t < 3 || t%400 == 5 || t >= 2095 {
				continue // level 0
			}
			e.Levels[t] = 1
		}
	}
	m := b.model()
	p := &gate.Params{Geom: g, Precision: b.prec, Axis: gate.AxisModal, BinShift: 4,
		BinErr:   []uint32{40000, gate.NoEstimate, 30000, 20000, 9000, 3000, 1000, 500, 100},
		CoordErr: []uint32{12345}, Weights: []uint16{300}}
	p.Prepare()
	gm, err := gate.Apply(m, p)
	if err != nil {
		panic(err)
	}
	return in, gm
}

// buildV1: a model file of version 1 (no substitution mix, continuation
// lists, offset law or class context statistics: their defaults apply;
// 16 occurrences per dictionary tile, 16 successor states and no
// predecessors), with a tile in every reference state so that the caps
// are reached; a second table absent but exponents present.
func buildV1() (conformanceInput, *wm.Model) {
	g := wm.Geometry{S: 4, M: 2, K: 16}
	rng := rand.New(rand.NewPCG(14, 5))
	b := &wmmBuild{version: 1, g: g, prec: 12}
	b.classStats(rng, [8]uint32{30, 6, 8, 10, 8, 8, 8, 12}, false)
	b.ctx = g.K + 1
	b.fall = randRows(rng, g.M*b.ctx, g.K, rowSkewed, rowTwoPeaks)
	b.e1, b.e2 = 77, 1024 // unused without a second table
	pages := randPages(rng, g, 6)
	for _, p := range pages {
		p[0], p[1] = 3, 9 // a frame tile in slot 0 of every page
	}
	b.refFrom(walk(rng, g, pages, []int{12, 12, 6}, 20))
	eps := walk(rng, g, pages, []int{14, 9}, 10)
	return inputOf(g, b.prec, eps), b.model()
}

// buildCaps reaches every cap of the world model: a frame tile in every
// reference state (32 occurrences kept, 32 anchors, 32 successors and 64
// with the predecessors), more than 1,024 dictionary tiles with the same
// first two codes, more than 256 distinct tiles of a chunk with the same
// first two codes, and eight continuations per slot. K = 64 (the size of
// rans' vector search).
func buildCaps() (conformanceInput, *wm.Model) {
	g := wm.Geometry{S: 8, M: 4, K: 64}
	rng := rand.New(rand.NewPCG(14, 6))
	n := g.N()
	b := &wmmBuild{version: 2, g: g, prec: 12}
	b.classStats(rng, [8]uint32{20, 4, 8, 10, 8, 10, 10, 14}, true)
	b.ctx = 1
	b.fall = randRows(rng, g.M*b.ctx, g.K, rowSkewed, rowPeakLast, rowSkewed, rowTwoPeaks)
	b.subMix = 128
	b.cont = contLists(g.S, 8)
	b.off = offsetLaw(rng, g.S)
	frame := []uint16{5, 6, 7, 8}
	// 160 reference states in four episodes: the frame in slot 0, then
	// 1,050 distinct tiles (1, 1, x, y), then random tiles.
	const refT = 160
	ref := make([]episode, 4)
	k := 0
	for e := range ref {
		ref[e].Actions = make([]int64, refT/4)
		for t := range ref[e].Actions {
			ref[e].Actions[t] = int64(t % 3)
			st := make([]uint16, n)
			copy(st, frame)
			for s := 1; s < g.S; s++ {
				tl := st[s*g.M : (s+1)*g.M]
				if k < 1050 {
					tl[0], tl[1], tl[2], tl[3] = 1, 1, uint16(k/64), uint16(k%64)
					k++
				} else {
					for m := range tl {
						tl[m] = uint16(rng.IntN(g.K))
					}
				}
			}
			ref[e].Codes = append(ref[e].Codes, st...)
		}
	}
	b.refFrom(ref)
	refState := func(r int) []uint16 { return b.codes[r*n : (r+1)*n] }
	var a episode
	add := func(act int64, st []uint16) {
		a.Actions = append(a.Actions, act)
		a.Codes = append(a.Codes, st...)
	}
	// The first state: the frame, then tiles of seven reference states
	// beyond the frame's first 32 occurrences (39 anchors in all).
	st0 := make([]uint16, n)
	copy(st0, frame)
	for s := 1; s < g.S; s++ {
		copy(st0[s*g.M:(s+1)*g.M], refState(99 + s)[s*g.M:(s+1)*g.M])
	}
	add(wm.NoAction, st0)
	add(1, refState(4))
	add(1, refState(5))
	fresh := 0
	for t := 0; t < 36; t++ {
		st := make([]uint16, n)
		copy(st, frame)
		for s := 1; s < g.S; s++ {
			tl := st[s*g.M : (s+1)*g.M]
			tl[0], tl[1], tl[2], tl[3] = 0, 0, uint16(fresh/64), uint16(fresh%64)
			fresh++
		}
		add(2, st)
	}
	st := make([]uint16, n)
	copy(st, refState(7))
	for s := 1; s < g.S; s++ {
		st[s*g.M], st[s*g.M+1], st[s*g.M+2] = 0, 0, 63
	}
	add(2, st)
	add(1, refState(40))
	add(1, refState(41))
	add(0, refState(41))
	var bEp episode
	bEp.Meta = []byte(`{"part":"b"}`)
	bEp.Actions = []int64{wm.NoAction, 1, 2}
	bEp.Codes = append(append(append([]uint16(nil), refState(100)...), refState(101)...), refState(90)...)
	return inputOf(g, b.prec, []episode{a, bEp}), b.model()
}

// buildP16: precision 16 with a second fallback table and an empty
// reference store (no dictionary): the first coordinate of a chunk has
// neither groups nor virtual hypotheses and takes the combined row as its
// table; lossy, so the rule reads that row's modal value.
func buildP16() (conformanceInput, *wm.Model) {
	g := wm.Geometry{S: 2, M: 2, K: 6}
	rng := rand.New(rand.NewPCG(14, 7))
	b := &wmmBuild{version: 2, g: g, prec: 16}
	b.classStats(rng, [8]uint32{30, 6, 8, 10, 8, 8, 8, 12}, true)
	b.ctx = g.K + 1
	b.fall = randRows(rng, g.M*b.ctx, g.K, rowSkewed, rowTwoPeaks)
	b.ctx2 = g.K + 1
	b.e1, b.e2 = 256, 128
	b.fall2 = randRows(rng, g.M*b.ctx2, g.K, rowSkewed)
	b.subMix = 100
	b.cont = contLists(g.S, 2)
	b.off = offsetLaw(rng, g.S)
	eps := walk(rng, g, randPages(rng, g, 3), []int{9, 6}, 6)
	m := b.model()
	p := &gate.Params{Geom: g, Precision: b.prec, Axis: gate.AxisModal, BinShift: 8,
		BinErr:   []uint32{60000, 50000, 40000, 30000, 20000, 10000, 5000, 2000, 1000, 500, 200, 100, 50, 20, 10, 5, 1},
		CoordErr: []uint32{1, 2, 3, 4}}
	p.Prepare()
	gm, err := gate.Apply(m, p)
	if err != nil {
		panic(err)
	}
	return inputOf(g, b.prec, eps), gm
}

// buildWeak: a model whose statistics give the episode-tile and
// dictionary classes the least prior (no hits), a large dictionary and a
// chunk of more than 256 distinct tiles, so that the groups those classes
// would form fall below the pruning line as they form (the shortcuts of
// SPEC.md's commit steps 4 and 5).
func buildWeak() (conformanceInput, *wm.Model) {
	g := wm.Geometry{S: 4, M: 2, K: 32}
	rng := rand.New(rand.NewPCG(14, 10))
	n := g.N()
	b := &wmmBuild{version: 2, g: g, prec: 12}
	b.classStats(rng, [8]uint32{4000, 10, 10, 10, 10, 0, 0, 40}, false)
	for i := range b.hitsS {
		if c := i % 8; c == 5 || c == 6 {
			b.hitsS[i] = 0
		}
	}
	b.mis[0], b.cn[0] = 0, 1<<20 // prev: no substitutions, so it stays near 0
	b.ctx = 1
	b.fall = randRows(rng, g.M*b.ctx, g.K, rowSkewed)
	b.subMix = 128
	b.cont = contLists(g.S, 1)
	// 300 reference states of random tiles.
	ref := episode{Actions: make([]int64, 300)}
	for range ref.Actions {
		for range n {
			ref.Codes = append(ref.Codes, uint16(rng.IntN(g.K)))
		}
	}
	b.refFrom([]episode{ref})
	// A chunk: 100 states of new distinct tiles, then states repeated.
	var e episode
	k := 0
	for t := range 100 {
		st := make([]uint16, n)
		for s := range g.S {
			st[s*2], st[s*2+1] = uint16(k/g.K), uint16(k%g.K)
			k++
		}
		e.Actions = append(e.Actions, int64(t%2))
		e.Codes = append(e.Codes, st...)
	}
	e.Actions[0] = wm.NoAction
	last := e.Codes[len(e.Codes)-n:]
	for range 4 {
		e.Actions = append(e.Actions, 0)
		e.Codes = append(e.Codes, last...)
	}
	return inputOf(g, b.prec, []episode{e}), b.model()
}

// buildApart: K = 3 and one slot of one subspace, two fallback tables
// whose rows peak on opposite values with exponents 1024, so that every
// product (G1·G2) >> 8 of the combined row is 0 and the row is Quantize's
// uniform table (K does not divide 2^12: the first value gets one more).
func buildApart() (conformanceInput, *wm.Model) {
	g := wm.Geometry{S: 1, M: 1, K: 3}
	rng := rand.New(rand.NewPCG(14, 11))
	b := &wmmBuild{version: 2, g: g, prec: 12}
	b.classStats(rng, [8]uint32{30, 6, 8, 10, 8, 8, 8, 12}, false)
	b.ctx = 1
	b.fall = []uint16{65534, 1, 1}
	b.ctx2 = g.K + 1
	b.e1, b.e2 = 1024, 1024
	b.fall2 = []uint16{1, 65534, 1, 1, 65534, 1, 1, 65534, 1, 1, 65534, 1}
	b.subMix = 128
	b.cont = defaultCont(g.S)
	pages := [][]uint16{{0}, {1}, {2}}
	b.refFrom(walk(rng, g, pages, []int{6}, 3))
	eps := walk(rng, g, pages, []int{10, 4}, 3)
	return inputOf(g, b.prec, eps), b.model()
}

// buildWide: a model of the fast level at K = 300 (the chunk lookup's
// pairs of codes in a map), M = 12 (runs of the match past 8 codes) and
// P = 14, over pages whose slot 1 repeats slot 0: a lookup finds a slot
// of the state being coded, whose continuation to a later slot is none.
func buildWide() (conformanceInput, *wm.Model) {
	g := wm.Geometry{S: 4, M: 12, K: 300}
	rng := rand.New(rand.NewPCG(14, 29))
	b := &wmmBuild{version: 2, g: g, prec: 14}
	b.classStats(rng, [8]uint32{20, 4, 6, 8, 8, 6, 6, 10}, false)
	b.ctx = 1
	b.fall = randRows(rng, g.M*b.ctx, g.K, rowSkewed)
	b.subMix = 128
	b.cont = contLists(g.S, 3)
	pages := randPages(rng, g, 6)
	for _, p := range pages {
		copy(p[g.M:2*g.M], p[:g.M])
	}
	b.refFrom(walk(rng, g, pages, []int{12, 9}, 30))
	eps := walk(rng, g, pages, []int{40, 0, 25}, 25)
	m, err := b.model().WithLevel(wm.LevelFast)
	if err != nil {
		panic(err)
	}
	return inputOf(g, b.prec, eps), m
}

// buildSteady: a model of the fast level at S = 4, M = 1, K = 2 over one
// chunk of 800 states that seldom change: over 2,000 slot events of one
// context, whose counts then halve.
func buildSteady() (conformanceInput, *wm.Model) {
	g := wm.Geometry{S: 4, M: 1, K: 2}
	rng := rand.New(rand.NewPCG(14, 30))
	b := &wmmBuild{version: 2, g: g, prec: 10}
	b.classStats(rng, [8]uint32{20, 4, 6, 8, 8, 6, 6, 10}, false)
	b.ctx = 1
	b.fall = randRows(rng, g.M*b.ctx, g.K, rowSkewed)
	b.subMix = 128
	b.cont = contLists(g.S, 1)
	e := episode{Actions: make([]int64, 800), Codes: make([]uint16, 800*g.N())}
	cur := []uint16{0, 1, 1, 0}
	for t := range e.Actions {
		e.Actions[t] = int64(t % 3)
		if rng.IntN(50) == 0 {
			cur[rng.IntN(g.S)] ^= 1
		}
		copy(e.Codes[t*g.N():], cur)
	}
	e.Actions[0] = wm.NoAction
	m, err := b.model().WithLevel(wm.LevelFast)
	if err != nil {
		panic(err)
	}
	return inputOf(g, b.prec, []episode{e}), m
}

// buildSteadyCopy: a model of the copy level at S = 2, M = 1, K = 2 over
// one chunk of 3,000 states that seldom change: the slot events of one
// context come to be coded, their counts halve, and new content grows so
// rare that the leading group's margin reaches the last bucket.
func buildSteadyCopy() (conformanceInput, *wm.Model) {
	g := wm.Geometry{S: 2, M: 1, K: 2}
	rng := rand.New(rand.NewPCG(14, 31))
	b := &wmmBuild{version: 2, g: g, prec: 10}
	b.classStats(rng, [8]uint32{40, 4, 6, 8, 8, 6, 6, 0}, false)
	b.ctx = 1
	b.fall = randRows(rng, g.M*b.ctx, g.K, rowSkewed)
	b.subMix = 128
	b.cont = contLists(g.S, 1)
	e := episode{Actions: make([]int64, 3000), Codes: make([]uint16, 3000*g.N())}
	cur := []uint16{0, 1}
	for t := range e.Actions {
		e.Actions[t] = int64(t % 2)
		if rng.IntN(200) == 0 {
			cur[rng.IntN(g.S)] ^= 1
		}
		copy(e.Codes[t*g.N():], cur)
	}
	e.Actions[0] = wm.NoAction
	m, err := b.model().WithLevel(wm.LevelCopy)
	if err != nil {
		panic(err)
	}
	return inputOf(g, b.prec, []episode{e}), m
}
