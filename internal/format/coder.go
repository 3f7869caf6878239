package format

import (
	"fmt"
	"hash/crc32"
	"math/bits"
	"slices"

	"github.com/wmzip/wmzip/internal/fixed"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/rans"
	"github.com/wmzip/wmzip/internal/wm"
)

// retainFunc decides whether coordinate j of the current state is coded,
// given the prediction pr holds for it. It may use only what the decoder
// also has: the prediction, the coordinate index and state it keeps
// itself. A coordinate that is not retained costs nothing and is
// reconstructed as the prediction's modal value. A nil retainFunc retains
// every coordinate (lossless, lambda = infinity).
type retainFunc func(j int, pr *wm.Predictor) bool

// decideFunc decides coordinate j of the current state (after Predict):
// whether its value is coded and, if not, the value it takes.
type decideFunc func(j int, pr *wm.Predictor) (keep bool, fill uint16)

// retention is the retention of every level of a file: the model's rule at
// each level's lambda (nil for a lossless level), or one custom rule.
type retention struct {
	rules  []*gate.Rule
	custom decideFunc
	// omit is the container version 4 treatment of an omitted coordinate:
	// it takes the rule's fill and is committed as omitted (SPEC.md 5.2,
	// 6.9); version 3 takes the modal value as evidence.
	omit bool
	// exact: the writer copies a slot only where a candidate equals it
	// (tests: vectors whose reconstruction follows from their input).
	exact bool
}

// gateRules returns the gate's rule of every level, which the writer's
// copy choices weigh distortion with: nil for a lossless level, and for
// every level of a custom rule or under exact copies.
func (r *retention) gateRules() []*gate.Rule {
	if r.custom != nil || r.exact {
		return make([]*gate.Rule, len(r.rules))
	}
	return r.rules
}

// levels returns the number of levels (1 without a level table).
func (r *retention) levels() int { return len(r.rules) }

// deciders returns the decision of every level for one coder (a gate
// decider keeps a cache of its own); nil for a lossless level.
func (r *retention) deciders() []decideFunc {
	out := make([]decideFunc, len(r.rules))
	for i, rule := range r.rules {
		switch {
		case r.custom != nil:
			out[i] = r.custom
		case rule == nil:
		case r.omit:
			out[i] = rule.NewDecider().Decide
		default:
			retain := rule.Retain
			out[i] = func(j int, pr *wm.Predictor) (bool, uint16) {
				if retain(j, pr) {
					return true, 0
				}
				return false, pr.Modal()
			}
		}
	}
	return out
}

// useGate returns the retention of every level of a file of header h coded
// with model m (one level when the file has no level table): lossless for
// a lossless level, the rule of the model's GATE section at the level's
// lambda otherwise, or the custom rule of cfg. It also returns the gate's
// parameters when the model has them (the writer uses their distances to
// account distortion).
func useGate(h *Header, m *wm.Model, cfg *config) (*gate.Params, *retention, error) {
	var gp *gate.Params
	if m.Section(gate.Tag) != nil {
		p, err := gate.FromModel(m)
		if err != nil && (!h.Lossless() && !cfg.custom) {
			return nil, nil, &FormatError{Offset: 32, Msg: err.Error(), Err: ErrModelMismatch}
		}
		gp = p
	}
	lambdas := h.lambdas()
	ret := &retention{rules: make([]*gate.Rule, len(lambdas)), omit: h.Version >= 4, exact: cfg.exactCopies}
	if cfg.custom {
		if len(lambdas) > 1 {
			return nil, nil, fmt.Errorf("%w: a custom retention rule cannot serve several levels", ErrInput)
		}
		ret.custom = cfg.decide
		return gp, ret, nil
	}
	for i, l := range lambdas {
		switch {
		case l == LambdaLossless:
		case gp == nil:
			return nil, nil, &UnsupportedError{Offset: 28, Msg: "finite lambda needs a model with a retention gate (GATE section)", Err: ErrUnsupported}
		default:
			ret.rules[i] = gp.Rule(l)
		}
	}
	return gp, ret, nil
}

// Chunk modes (byte 1 of a version-4 chunk record, SPEC.md 6.5): how the
// chunk's states are retained.
const (
	modeFile     = 0 // at the file's lambda, or each state at its level
	modeLossless = 1 // every coordinate coded, no level symbols
	modeLevel    = 2 // every state at the level in byte 2, no level symbols
)

// chunkMode is the retention of one chunk: its mode and, in modeLevel,
// the level.
type chunkMode struct {
	mode, level uint8
}

// modeOf returns the mode of a chunk record b checked by parseChunkMode.
func modeOf(b []byte) chunkMode { return chunkMode{b[1], b[2]} }

// parseChunkMode checks bytes 1..3 of a chunk record of a file of header h
// and returns its mode. off is the record's offset, for errors.
func parseChunkMode(h *Header, b []byte, off int64) (chunkMode, error) {
	m := chunkMode{b[1], b[2]}
	switch {
	case h.Version < 4 && (b[1] != 0 || b[2] != 0 || b[3] != 0):
		return m, corrupt(off+1, "reserved bytes of chunk record not zero")
	case b[3] != 0:
		return m, corrupt(off+3, "reserved byte 3 of chunk record not zero")
	case m.mode == modeFile && m.level == 0,
		m.mode == modeLossless && m.level == 0 && !h.Lossless(),
		m.mode == modeLevel && int(m.level) < len(h.Levels):
		return m, nil
	}
	return m, corrupt(off+1, "chunk mode %d, level %d not allowed in this file", m.mode, m.level)
}

// chunkCoder codes the states of one chunk: the action model and the world
// model's predictor feed the tables, the rANS coder turns symbols into the
// chunk's stream. The same type drives encoding and decoding so that both
// sides make the same calls in the same order.
type chunkCoder struct {
	geom  wm.Geometry
	prec  uint
	lanes int
	pred  *wm.Predictor
	act   *actionModel
	lev   *levelModel // nil without a level table
	mode  chunkMode   // the current chunk's

	enc     *rans.Encoder
	dec     *rans.Decoder
	scratch []byte // one state's bytes for the reconstruction checksum

	levelRules  // what each retention level keeps
	coderWriter // the writer's own state
	chunkTally  // what the chunk has coded so far
}

// levelRules are a chunk coder's retention rules, one per level, and the
// current state's.
type levelRules struct {
	decide []decideFunc // per level
	cur    decideFunc   // the current state's; nil: lossless
	rules  []*gate.Rule // writer: the gate's rule per level (nil: lossless or custom)
	rule   *gate.Rule   // writer: the current state's
	omit   bool         // version 4: omitted values committed as omitted
}

// coderWriter is what only a writer's chunk coder holds: the costs and
// measures of its choices, and its buffers.
type coderWriter struct {
	esc     escapeCost   // what escaped slots cost, for copy choices
	rd      *rdCoder     // coding by rate and distortion (its state's rdIn set), or nil
	gp      *gate.Params // distances for the distortion account, or nil
	measure Measure      // the distortion measure, or nil
	ep      int          // episode of the current state (for measure)
	step    int          // its step in the episode
	keep    bool         // keep the chunk's reconstruction in recons
	recons  []uint16     // the reconstruction of the chunk's states
	recon   []uint16     // one slot's reconstruction
	saved   []byte       // scratch kept while a chunk is coded again
	out     []byte       // the chunk's rANS stream
}

// chunkTally is what a chunk coder has coded of the current chunk: its
// states, their checksum, levels and costs.
type chunkTally struct {
	level        int    // decoder: level of the state decoded last
	levels       []int8 // decoder: level of every state of the chunk, if wanted
	states       int    // states coded in the current chunk
	sum          uint32 // running reconstruction checksum (CRC-32C)
	idealCodes   uint64 // 2^-16 bits, current chunk
	idealActions uint64
	retained     uint64  // coded coordinates, current chunk
	wrong        uint64  // writer only: omitted coordinates whose value differs from the code
	distSum      uint64  // writer only: Σ gate distance(reconstruction, truth)
	dist         float64 // writer only: Σ over slots of the measure's distortion
	last         StateAccount
}

func newChunkCoder(h *Header, m *wm.Model, ret *retention) *chunkCoder {
	fixed.InitCost()
	c := &chunkCoder{
		geom:    h.Geom,
		prec:    h.Precision,
		lanes:   h.Lanes,
		pred:    m.NewPredictor(),
		act:     newActionModel(h.Precision),
		scratch: make([]byte, 8+2*h.Geom.N()),
		levelRules: levelRules{
			decide: ret.deciders(),
			rules:  ret.gateRules(),
			omit:   ret.omit,
		},
	}
	c.use(len(c.decide) - 1)
	if len(c.decide) > 1 {
		c.lev = newLevelModel(h.Precision, len(c.decide))
	}
	return c
}

// begin starts a chunk of mode md: the predictor and the action model
// forget all history, so the chunk decodes on its own.
func (c *chunkCoder) begin(md chunkMode) {
	c.pred.Reset()
	c.act.reset()
	if c.lev != nil {
		c.lev.reset()
	}
	c.mode = md
	switch md.mode {
	case modeLossless:
		c.cur, c.rule, c.level = nil, nil, -1
	case modeLevel:
		c.use(int(md.level))
		c.level = int(md.level)
	default:
		c.use(len(c.decide) - 1)
		c.level = 0
	}
	c.states, c.sum, c.idealCodes, c.idealActions = 0, 0, 0, 0
	c.retained, c.wrong, c.distSum, c.dist = 0, 0, 0, 0
	c.recons = c.recons[:0]
	c.esc.reset()
}

// setRetention makes the coder code under ret (a coder of the distortion
// search moves from λ to λ).
func (c *chunkCoder) setRetention(ret *retention) {
	c.decide = ret.deciders()
	c.rules = ret.gateRules()
	c.omit = ret.omit
	c.use(len(c.decide) - 1)
}

// use makes level i's retention the current state's.
func (c *chunkCoder) use(i int) {
	c.cur, c.rule = c.decide[i], c.rules[i]
}

// levelSymbols reports whether the states of the current chunk name their
// level in the stream.
func (c *chunkCoder) levelSymbols() bool { return c.lev != nil && c.mode.mode == modeFile }

// cost returns what the chunk coded so far adds to the index totals and
// the writer's account.
func (c *chunkCoder) cost() chunkCost {
	return chunkCost{idealCodes: c.idealCodes, idealActions: c.idealActions, retained: c.retained,
		wrong: c.wrong, distSum: c.distSum, dist: c.dist, slots: uint64(c.states * c.geom.S * slotVectors(c.measure))}
}

// appendRecord ends the chunk's rANS stream and appends the chunk record
// (header, stream, CRC) to dst; on error dst is returned unchanged.
func (c *chunkCoder) appendRecord(dst []byte) ([]byte, error) {
	var err error
	if c.out, err = c.enc.Finish(c.out[:0]); err != nil {
		return dst, err
	}
	if len(c.out) > MaxStreamBytes {
		return dst, fmt.Errorf("%w: chunk stream of %d bytes exceeds %d", ErrInput, len(c.out), MaxStreamBytes)
	}
	start := len(dst)
	dst = append(dst, tagChunk, c.mode.mode, c.mode.level, 0)
	dst = le.AppendUint32(dst, uint32(c.states))
	dst = le.AppendUint32(dst, uint32(len(c.out)))
	dst = le.AppendUint32(dst, c.sum)
	dst = append(dst, c.out...)
	return le.AppendUint32(dst, crc(dst[start:])), nil
}

// newEncodeCoder returns a coder that encodes chunks of a file of header h.
func newEncodeCoder(h *Header, m *wm.Model, ret *retention, gp *gate.Params, ms Measure) (*chunkCoder, error) {
	c := newChunkCoder(h, m, ret)
	c.gp, c.measure = gp, ms
	var err error
	if c.enc, err = rans.NewEncoder(h.Lanes, h.Precision); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return c, nil
}

// putCode codes value v of the current coordinate under the predictor's
// prediction and returns its cost: a two-step prediction codes whether v
// is its top value, then, on a miss, v among the others.
func (c *chunkCoder) putCode(lane int, v uint16) uint64 {
	top, hit := c.pred.Prediction()
	if hit == 0 {
		return c.put(lane, c.pred.Table(), int(v))
	}
	if v == top {
		c.enc.Put(lane, 0, hit)
		return fixed.Cost(hit, c.prec)
	}
	c.enc.Put(lane, hit, 1<<c.prec-hit)
	return fixed.Cost(1<<c.prec-hit, c.prec) + c.put(lane, c.pred.Table(), int(v))
}

// getCode decodes the value of the current coordinate and returns it with
// its cost (see putCode).
func (c *chunkCoder) getCode(lane int) (uint16, uint64) {
	top, hit := c.pred.Prediction()
	if hit == 0 {
		v, cost := c.get(lane, c.pred.Table())
		return uint16(v), cost
	}
	if c.dec.DecodeBinary(lane, hit) == 0 {
		return top, fixed.Cost(hit, c.prec)
	}
	v, cost := c.get(lane, c.pred.Table())
	return uint16(v), cost + fixed.Cost(1<<c.prec-hit, c.prec)
}

// put codes one symbol and returns its cost.
func (c *chunkCoder) put(lane int, cum []uint16, v int) uint64 {
	start, f := rans.Symbol(cum, v, c.prec)
	c.enc.Put(lane, start, f)
	return fixed.Cost(f, c.prec)
}

// get decodes one symbol of table cum and returns it with its cost.
func (c *chunkCoder) get(lane int, cum []uint16) (int, uint64) {
	v := c.dec.Decode(lane, cum)
	if v < 0 || v >= len(cum) {
		return 0, 0 // only on a failed stream, which Err reports
	}
	return v, fixed.Cost(rans.Freq(cum, v, c.prec), c.prec)
}

// encodeState codes one state at the given level into the chunk's encoder:
// inputs were validated by the caller.
func (c *chunkCoder) encodeState(level int, a int64, codes []uint16) {
	if c.rd != nil && c.rd.in.costs != nil {
		c.encodeStateRD(level, a, codes)
		return
	}
	before := c.totals(level)
	if c.levelSymbols() {
		c.idealActions += c.put(0, c.lev.table(), level)
		c.lev.update(level)
		c.use(level)
	}
	c.codeAction(a)
	c.pred.Begin(a)
	le.PutUint64(c.scratch, uint64(a))
	lane := 0 // j mod lanes
	wrongSlots := false
	M, slotEv := c.geom.M, c.pred.SlotEvents()
	slot := 0 // the next slot's first coordinate
	for j := 0; j < len(codes); j++ {
		v := codes[j]
		if slotEv && j == slot {
			c.closeEscape(codes)
			slot += M
			if tile := c.copySlot(lane, j, codes[j:j+M]); tile != nil {
				for k, x := range tile {
					le.PutUint16(c.scratch[8+2*(j+k):], x)
					if y := codes[j+k]; x != y {
						c.wrong++
						c.distSum += uint64(c.gp.Distance(j+k, x, y))
						wrongSlots = true
					}
				}
				c.retained += uint64(M)
				j += M - 1
				lane = (lane + M) % c.lanes
				continue
			}
		}
		c.pred.Predict(j)
		keep, fill := true, uint16(0)
		if c.cur != nil {
			keep, fill = c.cur(j, c.pred)
		}
		if keep {
			c.idealCodes += c.putCode(lane, v)
			c.retained++
			c.pred.Commit(j, v)
		} else {
			if fill != v {
				c.wrong++
				wrongSlots = true
				if c.gp != nil {
					c.distSum += uint64(c.gp.Distance(j, fill, v))
				} else {
					c.distSum += gate.UnitDistance
				}
				v = fill
			}
			c.commitOmitted(j, v)
		}
		le.PutUint16(c.scratch[8+2*j:], v)
		if lane++; lane == c.lanes {
			lane = 0
		}
	}
	if slotEv {
		c.closeEscape(codes)
	}
	c.endState(before, codes, wrongSlots)
	if c.mode.mode == modeLossless {
		c.last.Level = -1
	}
}

// totals returns the chunk's running sums, as a state's account at the
// given level starts from them.
func (c *chunkCoder) totals(level int) StateAccount {
	return StateAccount{Level: level, Cost: c.idealCodes + c.idealActions, Retained: c.retained, Wrong: c.wrong, DistSum: c.distSum, Distortion: c.dist}
}

// endState ends the state just coded (its reconstruction in c.scratch,
// its codes the writer's): its distortion when a slot lost any, its
// reconstruction kept, the checksum, and its account against before.
func (c *chunkCoder) endState(before StateAccount, codes []uint16, wrongSlots bool) {
	if wrongSlots {
		c.dist += c.slotDistortion(codes)
	}
	if c.keep {
		for j := range codes {
			c.recons = append(c.recons, le.Uint16(c.scratch[8+2*j:]))
		}
	}
	c.step++
	c.sum = crc32.Update(c.sum, castagnoli, c.scratch)
	c.states++
	c.last = StateAccount{Level: before.Level, Cost: c.idealCodes + c.idealActions - before.Cost,
		Retained: c.retained - before.Retained, Wrong: c.wrong - before.Wrong, DistSum: c.distSum - before.DistSum,
		Distortion: c.dist - before.Distortion}
}

// codeAction codes the action a that leads into the next state.
func (c *chunkCoder) codeAction(a int64) {
	sym, z, raw := c.act.symbolOf(a)
	c.idealActions += c.put(0, c.act.table(), sym)
	for raw > 0 {
		b := min(raw, rawPiece)
		piece := int(z>>uint(raw-b)) & (1<<b - 1)
		c.idealActions += c.put(0, c.act.uniform[b], piece)
		raw -= b
	}
	c.act.update(sym, a)
}

// copySlot codes the slot event of the slot whose codes are tile (a model
// with slot events, before the slot's first coordinate) in the given lane
// (coordinate j) and returns the slot's reconstruction if the event copied
// a candidate whole, or nil when the slot's coordinates follow.
//
// Under a gate the writer may copy a candidate that differs from tile
// (the decoder cannot tell): where the candidate's event and distortion
// cost less, at the rule's λ, than the escape and an estimate of what the
// slot's coordinates would cost. The estimate is the first candidate's
// differences at λ, each at most escapeCoordBits, scaled by what escaped
// slots have cost in the chunk against that same guess (escapeCost).
func (c *chunkCoder) copySlot(lane, j int, tile []uint16) []uint16 {
	tab := c.pred.SlotTable(j)
	if tab == nil {
		return nil
	}
	sym := c.pred.SlotSymbol(tile)
	esc, guess := len(tab)-1, uint64(0)
	weigh := sym == esc && c.rule != nil && c.gp != nil
	if weigh {
		// Costs in 1/256 bit.
		evBits := func(k int) uint64 { return fixed.Cost(rans.Freq(tab, k, c.prec), c.prec) >> (fixed.CostFrac - 8) }
		guess = c.rule.DistortionCost(j, c.pred.SlotCandidate(0), tile, escapeCoordBits<<8)
		best := evBits(esc) + c.esc.estimate(guess)
		for k := range esc {
			if d := evBits(k) + c.rule.DistortionCost(j, c.pred.SlotCandidate(k), tile, best); d < best {
				best, sym = d, k
			}
		}
	}
	c.idealCodes += c.put(lane, tab, sym)
	if weigh && sym == esc {
		c.esc.open(j, c.idealCodes, guess)
	}
	return c.pred.CommitSlot(sym)
}

// escapeCost is the writer's running account, in a chunk, of what the
// slots it escaped while weighing a copy cost (the bits of their
// coordinates and their distortion at λ) against what copySlot guessed.
type escapeCost struct {
	real, guess uint64 // Σ cost and Σ guess, 1/256 bit
	isOpen      bool   // the current slot is such a slot
	j           int    // its first coordinate
	codes       uint64 // idealCodes after its event
	g           uint64 // its guess
}

// A difference is guessed to cost at most escapeCoordBits; the account
// starts even at escapePrior (a slot of 32 such differences) and halves
// past escapeLimit (1/256 bit).
const (
	escapeCoordBits = 6
	escapePrior     = escapeCoordBits << 8 * 32
	escapeLimit     = 1 << 30
)

func (e *escapeCost) reset() { *e = escapeCost{real: escapePrior, guess: escapePrior} }

// estimate returns the cost the account gives an escaped slot guessed at
// g: g·Σ cost / Σ guess.
func (e *escapeCost) estimate(g uint64) uint64 {
	hi, lo := bits.Mul64(g, e.real)
	if hi >= e.guess {
		return ^uint64(0)
	}
	q, _ := bits.Div64(hi, lo, e.guess)
	return q
}

func (e *escapeCost) open(j int, codes, g uint64) {
	e.isOpen, e.j, e.codes, e.g = true, j, codes, g
}

// closeEscape adds the slot that escaped last, now coded, to the account.
func (c *chunkCoder) closeEscape(codes []uint16) {
	e := &c.esc
	if !e.isOpen {
		return
	}
	e.isOpen = false
	cost := (c.idealCodes-e.codes)>>(fixed.CostFrac-8) + c.rule.DistortionCost(e.j, c.slotRecon(e.j), codes[e.j:e.j+c.geom.M], ^uint64(0))
	e.real += min(cost, escapeLimit)
	e.guess += min(e.g, escapeLimit)
	for e.real > escapeLimit || e.guess > escapeLimit {
		e.real, e.guess = e.real/2+1, e.guess/2+1
	}
}

// getSlot decodes the slot event of the slot starting at coordinate j in
// the given lane and returns the slot's codes if the event copied it, or
// nil when its coordinates follow.
func (c *chunkCoder) getSlot(lane, j int) []uint16 {
	tab := c.pred.SlotTable(j)
	if tab == nil {
		return nil
	}
	sym, cost := c.get(lane, tab)
	c.idealCodes += cost
	return c.pred.CommitSlot(sym)
}

// commitOmitted commits the value v of an omitted coordinate j.
func (c *chunkCoder) commitOmitted(j int, v uint16) {
	if c.omit {
		c.pred.CommitOmitted(j, v)
	} else {
		c.pred.Commit(j, v)
	}
}

// slotRecon returns, in c.recon, the reconstruction of the slot of the
// state being coded whose first coordinate is j (from c.scratch).
func (c *chunkCoder) slotRecon(j int) []uint16 {
	M := c.geom.M
	if len(c.recon) != M {
		c.recon = make([]uint16, M)
	}
	for m := range c.recon {
		c.recon[m] = le.Uint16(c.scratch[8+2*(j+m):])
	}
	return c.recon
}

// slotDistortion returns the summed distortion of the slots of the state
// just coded (its reconstruction in c.scratch) against its codes.
func (c *chunkCoder) slotDistortion(codes []uint16) float64 {
	M := c.geom.M
	var d float64
	for s := range c.geom.S {
		truth := codes[s*M : (s+1)*M]
		recon := c.slotRecon(s * M)
		if slices.Equal(recon, truth) {
			continue
		}
		if c.measure != nil {
			d += c.measure.Slot(c.ep, c.step, s, truth, recon)
			continue
		}
		var sum uint64
		for m, v := range truth {
			switch {
			case recon[m] == v:
			case c.gp != nil:
				sum += uint64(c.gp.Distance(s*M+m, recon[m], v))
			default:
				sum += gate.UnitDistance
			}
		}
		if c.gp != nil && c.gp.SlotNorm > 0 {
			d += float64(sum) / float64(c.gp.SlotNorm)
		} else {
			d += float64(sum) / float64(uint64(M)*gate.UnitDistance)
		}
	}
	return d
}

// decodeState decodes the next state of the chunk into codes and returns
// its action. Errors surface through c.dec.Err.
func (c *chunkCoder) decodeState(codes []uint16) int64 {
	if c.levelSymbols() {
		l, cost := c.get(0, c.lev.table())
		c.idealActions += cost
		c.lev.update(l)
		c.use(l)
		c.level = l
	}
	sym, cost := c.get(0, c.act.table())
	c.idealActions += cost
	var a int64
	switch {
	case sym == 0:
		a = c.act.prev
	case sym <= actionDirect:
		a = unzigzag(uint64(sym - 1))
	default:
		z := uint64(1)
		for raw := escapeBits(sym); raw > 0; {
			b := min(raw, rawPiece)
			piece, cost := c.get(0, c.act.uniform[b])
			c.idealActions += cost
			z = z<<uint(b) | uint64(piece)
			raw -= b
		}
		a = unzigzag(z)
	}
	c.act.update(sym, a)
	c.pred.Begin(a)
	le.PutUint64(c.scratch, uint64(a))
	lane := 0 // j mod lanes
	M, slotEv := c.geom.M, c.pred.SlotEvents()
	slot := 0 // the next slot's first coordinate
	for j := 0; j < len(codes); j++ {
		if slotEv && j == slot {
			slot += M
			tile := c.getSlot(lane, j)
			if tile == nil && c.cur == nil {
				// An escaped slot whose every coordinate is retained
				// decodes in one call.
				var cost uint64
				tile, cost = c.pred.DecodeSlot(c.dec, lane)
				c.idealCodes += cost
			}
			if tile != nil {
				copy(codes[j:j+M], tile)
				c.retained += uint64(M)
				j += M - 1
				lane = (lane + M) % c.lanes
				continue
			}
		}
		c.pred.Predict(j)
		keep, v := true, uint16(0)
		if c.cur != nil {
			keep, v = c.cur(j, c.pred)
		}
		if keep {
			var cost uint64
			v, cost = c.getCode(lane)
			c.idealCodes += cost
			c.retained++
			c.pred.Commit(j, v)
		} else {
			c.commitOmitted(j, v)
		}
		codes[j] = v
		if lane++; lane == c.lanes {
			lane = 0
		}
	}
	putCodes(c.scratch[8:], codes)
	c.sum = crc32.Update(c.sum, castagnoli, c.scratch)
	c.states++
	return a
}

// putCodes writes codes to dst, two little-endian bytes each, four at a
// time.
func putCodes(dst []byte, codes []uint16) {
	dst = dst[:2*len(codes)]
	i := 0
	for ; i+4 <= len(codes); i += 4 {
		x := codes[i : i+4 : i+4]
		le.PutUint64(dst[2*i:], uint64(x[0])|uint64(x[1])<<16|uint64(x[2])<<32|uint64(x[3])<<48)
	}
	for ; i < len(codes); i++ {
		le.PutUint16(dst[2*i:], codes[i])
	}
}

// decodeChunk decodes a chunk's stream of n states into actions and codes
// (n·N entries) and checks it whole. off is the record's offset, for errors.
func (c *chunkCoder) decodeChunk(stream []byte, md chunkMode, n int, sum uint32, actions []int64, codes []uint16, off int64) error {
	if err := c.startChunk(stream, md, off); err != nil {
		return err
	}
	if err := c.decodeStates(actions[:n], codes[:n*c.geom.N()], off); err != nil {
		return err
	}
	return c.endChunk(sum, off)
}

// startChunk positions the coder at the keyframe of a chunk's stream of
// mode md, which it keeps until the next startChunk.
func (c *chunkCoder) startChunk(stream []byte, md chunkMode, off int64) error {
	if c.dec == nil {
		d, err := rans.NewDecoder(c.lanes, c.prec)
		if err != nil {
			return &UnsupportedError{Offset: off, Msg: err.Error(), Err: ErrUnsupported}
		}
		c.dec = d
	}
	if err := c.dec.Reset(stream); err != nil {
		return corrupt(off+chunkHdrSize, "rANS stream: %v", err)
	}
	c.begin(md)
	return nil
}

// decodeStates decodes the next len(actions) states of the chunk into
// actions and codes (len(actions)·N entries). A partial decode stops here:
// it has checked only that the stream yields these states.
func (c *chunkCoder) decodeStates(actions []int64, codes []uint16, off int64) error {
	nc := c.geom.N()
	for i := range actions {
		t := c.states
		actions[i] = c.decodeState(codes[i*nc : (i+1)*nc])
		if t < len(c.levels) {
			c.levels[t] = int8(c.level)
		}
		if err := c.dec.Err(); err != nil {
			return corrupt(off+chunkHdrSize, "rANS stream: %v", err)
		}
	}
	return nil
}

// endChunk checks, once every state of the chunk has decoded, the rANS
// end-of-stream conditions and the reconstruction checksum sum.
func (c *chunkCoder) endChunk(sum uint32, off int64) error {
	if err := c.dec.Close(); err != nil {
		return corrupt(off+chunkHdrSize, "rANS stream: %v", err)
	}
	if c.sum != sum {
		return badSum(off+12, "reconstruction checksum")
	}
	return nil
}
