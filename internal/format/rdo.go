package format

import (
	"fmt"
	"math/bits"

	"github.com/wmzip/wmzip/internal/fixed"
	"github.com/wmzip/wmzip/internal/rans"
)

// Coding by rate and distortion (an encoder's choice: the decoder is the
// lossless one, SPEC.md 6.2 flag bit 1). With a state's codes the writer is
// told what reconstructing each of its slots as each value of each
// coordinate would cost in distortion, and it codes the values that
// minimize distortion + λ·bits under the model's real probabilities: a
// slot is copied whole where one of the slot event's candidates is worth
// it; otherwise each coordinate takes, among its nearest values, the
// prediction's top or modal value and the value of the tile of the chunk
// nearest to the slot, the one of least cost.

// DistUnit is the distortion of a slot vector reconstructed with an error
// as large as its norm: distortions are relative, in units of 2^-24.
const DistUnit = 1 << 24

// SlotCosts tells the writer what reconstructing the slots of one state
// costs: Slot fills dst (M·K values) with the distortion, in DistUnit, of
// reconstructing coordinate m of slot s as value v, at m·K+v. Distortions
// of one slot add up over its coordinates. A writer with several threads
// calls Slot from its own goroutines, for different states at once.
type SlotCosts interface {
	Slot(s int, dst []uint32)
}

// rdNear is the number of a coordinate's nearest values weighed.
const rdNear = 4

// rdIn is what a state is coded by rate and distortion with.
type rdIn struct {
	costs SlotCosts // nil: the state is coded as given
	lam   uint64    // distortion units per bit
}

// rdCoder is a writer's rate–distortion state within a chunk.
type rdCoder struct {
	in   rdIn
	dist []uint32 // the current slot's M·K distortions

	escBits, escSlots uint64 // Σ bits (1/256) and number of the chunk's escaped slots
	distSum           uint64 // Σ distortion of the chunk's slots coded by cost, DistUnit

	tiles  []uint16            // the chunk's distinct reconstructed tiles, M codes each
	seen   map[uint64][]uint32 // tile hash → offsets in tiles
	target []uint16            // the current slot's nearest earlier tile, or nil
}

func (r *rdCoder) reset() {
	r.escBits, r.escSlots, r.distSum = 0, 0, 0
	r.tiles = r.tiles[:0]
	clear(r.seen)
}

// bitsQ8 converts a cost (2^-CostFrac bits) to 1/256 bit.
func bitsQ8(c uint64) uint64 { return c >> (fixed.CostFrac - 8) }

// j returns distortion d plus λ times b (1/256 bit), saturating.
func (r *rdCoder) j(d, b uint64) uint64 {
	hi, lo := bits.Mul64(r.in.lam, b)
	lo >>= 8
	if hi != 0 || lo > ^uint64(0)-d {
		return ^uint64(0)
	}
	return d + lo
}

// tileDist returns the distortion of reconstructing the current slot as
// tile t, stopping once it reaches limit.
func (r *rdCoder) tileDist(t []uint16, K int, limit uint64) uint64 {
	var d uint64
	for m, v := range t {
		if d += uint64(r.dist[m*K+int(v)]); d >= limit {
			break
		}
	}
	return d
}

// addTile records a reconstructed tile of the chunk.
func (r *rdCoder) addTile(t []uint16) {
	if r.seen == nil {
		r.seen = map[uint64][]uint32{}
	}
	h := tileHash(t)
	M := len(t)
	for _, off := range r.seen[h] {
		if equalCodes(r.tiles[off:int(off)+M], t) {
			return
		}
	}
	r.seen[h] = append(r.seen[h], uint32(len(r.tiles)))
	r.tiles = append(r.tiles, t...)
}

func tileHash(t []uint16) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range t {
		h = (h ^ uint64(v)) * 1099511628211
	}
	return h
}

func equalCodes(a, b []uint16) bool {
	for i, v := range a {
		if b[i] != v {
			return false
		}
	}
	return true
}

// nearestTile returns the chunk's earlier tile of least distortion for the
// current slot when it is below limit, else nil.
func (r *rdCoder) nearestTile(M, K int, limit uint64) []uint16 {
	var best []uint16
	for i := 0; i+M <= len(r.tiles); i += M {
		t := r.tiles[i : i+M]
		if d := r.tileDist(t, K, limit); d < limit {
			best, limit = t, d
		}
	}
	return best
}

// nearest writes to dst the indexes of the len(dst) least values of d,
// least first (the lowest index among equal ones), and returns how many.
func nearest(d []uint32, dst []uint16) int {
	n := 0
	for v, x := range d {
		if n < len(dst) {
			n++
		} else if x >= d[dst[n-1]] {
			continue
		}
		i := n - 1
		for ; i > 0 && d[dst[i-1]] > x; i-- {
			dst[i] = dst[i-1]
		}
		dst[i] = uint16(v)
	}
	return n
}

// rdCode chooses the value of coordinate m of the current slot (after
// Predict), given its distortions d (K entries), codes it and returns it
// with its distortion.
func (c *chunkCoder) rdCode(lane, m int, d []uint32) (uint16, uint64) {
	r := c.rd
	top, hit := c.pred.Prediction()
	P := c.prec
	var cand [rdNear + 2]uint16
	nc := nearest(d, cand[:rdNear])
	if hit != 0 {
		cand[nc] = top
	} else {
		cand[nc] = c.pred.Modal()
	}
	nc++
	if r.target != nil {
		cand[nc] = r.target[m]
		nc++
	}
	best, bestJ := cand[0], ^uint64(0)
	var tab []uint16
	for i, v := range cand[:nc] {
		if i > 0 && (v == cand[0] || (i > rdNear && v == cand[i-1])) {
			continue
		}
		var cost uint64
		if hit != 0 && v == top {
			cost = fixed.Cost(hit, P)
		} else {
			if tab == nil {
				tab = c.pred.Table()
			}
			cost = fixed.Cost(rans.Freq(tab, int(v), P), P)
			if hit != 0 {
				cost += fixed.Cost(1<<P-hit, P)
			}
		}
		if jv := r.j(uint64(d[v]), bitsQ8(cost)); jv < bestJ {
			best, bestJ = v, jv
		}
	}
	c.idealCodes += c.putCode(lane, best)
	return best, uint64(d[best])
}

// rdSlot codes the slot event of the slot starting at coordinate j by
// cost and returns the copied tile, or nil when the slot's coordinates
// follow. dq is the distortion of the slot's own codes.
func (c *chunkCoder) rdSlot(lane, j int, dq uint64) []uint16 {
	tab := c.pred.SlotTable(j)
	if tab == nil {
		return nil
	}
	r, M, K := c.rd, c.geom.M, c.geom.K
	esc := len(tab) - 1
	evBits := func(k int) uint64 { return bitsQ8(fixed.Cost(rans.Freq(tab, k, c.prec), c.prec)) }
	// An escape is guessed to cost the chunk's mean bits of an escaped
	// slot (4 bits a coordinate before the first) at the slot's own
	// distortion.
	b := uint64(M) * 4 << 8
	if r.escSlots > 0 {
		b = r.escBits / r.escSlots
	}
	sym, bestJ := esc, r.j(dq, b+evBits(esc))
	for k := range esc {
		if jv := r.j(r.tileDist(c.pred.SlotCandidate(k), K, ^uint64(0)), evBits(k)); jv <= bestJ {
			sym, bestJ = k, jv
		}
	}
	c.idealCodes += c.put(lane, tab, sym)
	return c.pred.CommitSlot(sym)
}

// encodeStateRD is encodeState for a state coded by rate and distortion:
// codes are its own values (the quantizer's), the reference its
// distortion against the lossless reconstruction is measured from.
func (c *chunkCoder) encodeStateRD(level int, a int64, codes []uint16) {
	r := c.rd
	before := c.totals(level)
	c.codeAction(a)
	c.pred.Begin(a)
	le.PutUint64(c.scratch, uint64(a))
	lane := 0 // j mod lanes
	M, K, slotEv := c.geom.M, c.geom.K, c.pred.SlotEvents()
	if len(r.dist) != M*K {
		r.dist = make([]uint32, M*K)
	}
	wrongSlots := false
	for s := range c.geom.S {
		j0 := s * M
		r.in.costs.Slot(s, r.dist)
		dq := r.tileDist(codes[j0:j0+M], K, ^uint64(0))
		var d uint64
		tile := []uint16(nil)
		if slotEv {
			tile = c.rdSlot(lane, j0, dq)
		}
		if tile != nil {
			for m, x := range tile {
				le.PutUint16(c.scratch[8+2*(j0+m):], x)
			}
			d = r.tileDist(tile, K, ^uint64(0))
			c.retained += uint64(M)
			lane = (lane + M) % c.lanes
		} else {
			start := c.idealCodes
			r.target = r.nearestTile(M, K, ^uint64(0))
			for m := range M {
				j := j0 + m
				c.pred.Predict(j)
				v, dv := c.rdCode(lane, m, r.dist[m*K:(m+1)*K])
				d += dv
				c.retained++
				c.pred.Commit(j, v)
				le.PutUint16(c.scratch[8+2*j:], v)
				if lane++; lane == c.lanes {
					lane = 0
				}
			}
			r.escBits += bitsQ8(c.idealCodes - start)
			r.escSlots++
		}
		r.distSum += d
		rec := c.slotRecon(j0)
		for m, x := range rec {
			if y := codes[j0+m]; x != y {
				c.wrong++
				wrongSlots = true
				if c.gp != nil {
					c.distSum += uint64(c.gp.Distance(j0+m, x, y))
				}
			}
		}
		r.addTile(rec)
	}
	c.endState(before, codes, wrongSlots)
}

// rdUse makes the coder code the next state by rate and distortion with
// in, or as given when in has no costs.
func (c *chunkCoder) rdUse(in rdIn) {
	if c.rd == nil {
		if in.costs == nil {
			return
		}
		c.rd = &rdCoder{}
	}
	if c.states == 0 {
		c.rd.reset() // a chunk's first state: its tiles and escapes anew
	}
	c.rd.in = in
}

// WriteStateRD is WriteState for a state coded by rate and distortion
// (see SlotCosts): codes are the state's own values, costs says what each
// value of each coordinate costs in distortion, and lam weighs a bit in
// distortion units (DistUnit a slot vector's squared norm): the writer
// codes the values of least distortion + lam·bits it finds. The file
// decodes to the values coded, which StateAccount and LastState report.
// costs is kept until the state is coded.
func (w *Writer) WriteStateRD(action int64, codes []uint16, costs SlotCosts, lam uint64) error {
	if costs == nil {
		return fmt.Errorf("%w: no slot costs", ErrInput)
	}
	if !w.h.Lossless() {
		return fmt.Errorf("%w: a state coded by rate and distortion in a file with a retention gate", ErrInput)
	}
	return w.writeState(action, codes, rdIn{costs, lam})
}
