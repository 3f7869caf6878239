package wm

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"github.com/wmzip/wmzip/internal/rans"
)

// The reference store of a version-3 model file is one rANS stream (one
// lane, P = 16) of binary decisions under adaptive probabilities, in the
// manner of LZMA: per state its action bucket, then per tile (slot) an
// operation — repeat the last copy distance, copy the same slot of the
// previous state, copy a tile at a coded distance, or a literal tile whose
// codes are coded under the code of the same subspace one slot to the left.
// Successive states share most tiles and revisits repeat whole states, so
// copies carry most of the store. SPEC.md 3.4 is the normative text.

// Tile operations of the store coder.
const (
	opRep   = iota // copy from the tile lastDist tiles back
	opSame         // copy from the same slot of the previous state (distance S)
	opMatch        // copy from a coded distance
	opLit          // literal codes
)

const (
	probInit   = 1 << 15
	probShift  = 4
	litCtxBits = 20 // the literal probabilities are indexed modulo 2^20
	// maxStoreCodesPerByte bounds the codes a store stream of n bytes may
	// decode to, so that a small file cannot claim a large store: 4,096
	// codes a byte is 0.008 bits a code, far below what real stores cost
	// (web-pgdocs: 0.18). A writer whose store would exceed it writes
	// version 2.
	maxStoreCodesPerByte = 1 << 10
)

// prob is an adaptive probability of a 0 bit, in units of 2^-16; it stays
// within [15, 65521].
type prob uint16

func (p *prob) update(bit int) {
	if bit == 0 {
		*p += prob((1<<16 - uint32(*p)) >> probShift)
	} else {
		*p -= *p >> probShift
	}
}

// storeModel is the adaptive state shared by the store's encoder and
// decoder.
type storeModel struct {
	g       Geometry
	nbK     int // bits of a code: bitlen(K-1)
	nbS     int // bits of a slot: bitlen(S-1)
	opP     [16][3]prob
	bktP    [nBuckets][nBuckets]prob
	deltaP  []prob // slot delta tree, 2^nbS
	lenP    [32]prob
	valP    [2][64]prob // bit lengths of the table values
	litP    []prob      // 2^litCtxBits
	lastOp  []uint8
	prevOp  int
	dist    int64
	prevBkt int
}

func newStoreModel(g Geometry) *storeModel {
	sm := &storeModel{g: g, nbK: bits.Len(uint(g.K - 1)), nbS: bits.Len(uint(g.S - 1)), prevOp: opLit, dist: int64(g.S)}
	fill := func(p []prob) {
		for i := range p {
			p[i] = probInit
		}
	}
	for i := range sm.opP {
		fill(sm.opP[i][:])
	}
	for i := range sm.bktP {
		fill(sm.bktP[i][:])
	}
	fill(sm.lenP[:])
	fill(sm.valP[0][:])
	fill(sm.valP[1][:])
	sm.deltaP = make([]prob, 1<<sm.nbS)
	fill(sm.deltaP)
	// Every index litIdx forms is below M·(K+1)·2^nbK; a table of the
	// next power of two at or above that (at most 2^litCtxBits) gives the
	// same index modulo its size, so small models do not pay for 2^20.
	n := 1
	for n < 1<<litCtxBits && n < g.M*(g.K+1)<<sm.nbK {
		n *= 2
	}
	sm.litP = make([]prob, n)
	fill(sm.litP)
	sm.lastOp = make([]uint8, g.S)
	for i := range sm.lastOp {
		sm.lastOp[i] = opLit
	}
	return sm
}

// opCtx is the context of a tile's operation at slot x: the operation of
// the previous tile and that of the same slot one state earlier.
func (sm *storeModel) opCtx(x int) int { return sm.prevOp*4 + int(sm.lastOp[x]) }

// litIdx is the index of node of the literal tree of subspace m under
// context ctx (the left code, or K).
func (sm *storeModel) litIdx(m, ctx, node int) int {
	return ((m*(sm.g.K+1)+ctx)<<sm.nbK + node) & (len(sm.litP) - 1)
}

// leftCtx is the context of code m of a literal tile at offset off and
// slot x: the code of subspace m one slot to the left, or K in slot 0.
func (sm *storeModel) leftCtx(codes []uint16, off, x, m int) int {
	if x == 0 {
		return sm.g.K
	}
	return int(codes[off-sm.g.M+m])
}

// storeEncoder codes a store.
type storeEncoder struct {
	*storeModel
	e *rans.Encoder
}

func (se *storeEncoder) bit(p *prob, b int) {
	if b == 0 {
		se.e.Put(0, 0, uint32(*p))
	} else {
		se.e.Put(0, uint32(*p), 1<<16-uint32(*p))
	}
	p.update(b)
}

func (se *storeEncoder) raw(b int) {
	se.e.Put(0, uint32(b)<<15, 1<<15)
}

// tree codes the nb-bit value v most significant bit first, the node
// probabilities at p(node) for node = 1 .. 2^nb - 1.
func (se *storeEncoder) tree(nb, v int, p func(node int) *prob) {
	node := 1
	for i := nb - 1; i >= 0; i-- {
		b := v >> i & 1
		se.bit(p(node), b)
		node = node<<1 | b
	}
}

// encodeStore codes the reference store (codes and buckets) of a model,
// then the values of its offset law (off) and class context statistics
// (ctx).
func encodeStore(g Geometry, codes []uint16, bkt []uint8, off, ctx []uint32) []byte {
	S, M, n := g.S, g.M, g.N()
	T := len(bkt)
	// Tile identities, to find copies.
	ids := make([]int32, T*S)
	byKey := map[string]int32{}
	occ := [][]int64{}
	for p := range ids {
		off := p * M
		key := string(u16bytes(codes[off : off+M]))
		id, ok := byKey[key]
		if !ok {
			id = int32(len(occ))
			byKey[key] = id
			occ = append(occ, nil)
		}
		ids[p] = id
	}
	_ = n
	e, _ := rans.NewEncoder(1, 16)
	se := &storeEncoder{newStoreModel(g), e}
	const maxCand, maxRun = 16, 256
	for r := range T {
		se.tree(4, int(bkt[r]), func(node int) *prob { return &se.bktP[se.prevBkt][node] })
		se.prevBkt = int(bkt[r])
		for x := range S {
			p := int64(r*S + x)
			id := ids[p]
			op, q := opLit, int64(-1)
			switch {
			case p-se.dist >= 0 && ids[p-se.dist] == id:
				op = opRep
			case p >= int64(S) && ids[p-int64(S)] == id:
				op = opSame
			case len(occ[id]) > 0:
				// The occurrence that the following tiles continue longest,
				// the most recent among equals.
				op = opMatch
				best := -1
				l := occ[id]
				for i := len(l) - 1; i >= 0 && i >= len(l)-maxCand; i-- {
					c := l[i]
					run := 1
					for run < maxRun && p+int64(run) < int64(len(ids)) && ids[c+int64(run)] == ids[p+int64(run)] {
						run++
					}
					if run > best {
						best, q = run, c
					}
				}
			}
			ctx := se.opCtx(x)
			se.bit(&se.opP[ctx][0], b2i(op != opRep))
			if op != opRep {
				se.bit(&se.opP[ctx][1], b2i(op != opSame))
				if op != opSame {
					se.bit(&se.opP[ctx][2], b2i(op != opMatch))
				}
			}
			switch op {
			case opSame:
				se.dist = int64(S)
			case opMatch:
				rq, xq := int(q)/S, int(q)%S
				se.tree(se.nbS, (xq-x+S)%S, func(node int) *prob { return &se.deltaP[node] })
				dr := r - rq
				bl := bits.Len(uint(dr))
				se.tree(5, bl, func(node int) *prob { return &se.lenP[node] })
				for i := bl - 2; i >= 0; i-- {
					se.raw(dr >> i & 1)
				}
				se.dist = p - q
			case opLit:
				off := int(p) * M
				for m := range M {
					ctx := se.leftCtx(codes, off, x, m)
					se.tree(se.nbK, int(codes[off+m]), func(node int) *prob { return &se.litP[se.litIdx(m, ctx, node)] })
				}
			}
			se.prevOp = op
			se.lastOp[x] = uint8(op)
			occ[id] = append(occ[id], p)
		}
	}
	se.values(0, off, g.S)
	se.values(1, ctx, nClasses)
	out, err := e.Finish(nil)
	if err != nil {
		panic("wm: store encoder: " + err.Error())
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// values codes the integers of table tab in rows of k: each as the
// zigzag of its difference to the previous value of its row (0 before the
// first), by its bit length under TREE(6) and the bits below its leading
// one raw. The offset law's floors repeat along a row and cost nearly
// nothing.
func (se *storeEncoder) values(tab int, vals []uint32, k int) {
	for i, v := range vals {
		prev := int64(0)
		if i%k > 0 {
			prev = int64(vals[i-1])
		}
		z := zigzag(int64(v) - prev)
		bl := bits.Len64(z)
		se.tree(6, bl, func(node int) *prob { return &se.valP[tab][node] })
		for j := bl - 2; j >= 0; j-- {
			se.raw(int(z >> j & 1))
		}
	}
}

func zigzag(d int64) uint64 {
	if d >= 0 {
		return uint64(d) << 1
	}
	return uint64(-d)<<1 - 1
}

// storeDecoder decodes a store.
type storeDecoder struct {
	*storeModel
	// The store's stream: one lane at precision 16 (SPEC.md 2.5), decoded
	// here bit by bit rather than through rans.Decoder, whose checks of
	// lane and table cost more than the step itself at a few million
	// decisions per model.
	x   uint32
	src []byte
	pos int
	err error
}

// storeLow is the lower bound of a lane state (rans, 2^24).
const storeLow = 1 << 24

// storePreallocCodesPerByte is how many codes per byte of its stream a
// store is given room for before it decodes: the stores we measured code 5
// to 45 codes a byte, so they decode without regrowing their codes, while
// the memory of a stream that claims up to maxStoreCodesPerByte still
// grows only as it decodes.
const storePreallocCodesPerByte = 128

// init reads the lane state at the head of stream.
func (sd *storeDecoder) init(stream []byte) error {
	if len(stream) < 4 {
		return fmt.Errorf("%w: %d bytes, need 4 for 1 lane states", rans.ErrCorrupt, len(stream))
	}
	sd.x = binary.LittleEndian.Uint32(stream)
	if sd.x < storeLow {
		return fmt.Errorf("%w: lane 0 state %#x below 2^24", rans.ErrCorrupt, sd.x)
	}
	sd.src, sd.pos = stream[4:], 0
	return nil
}

// underflow records that the lane needed a byte past the end of the
// stream.
func (sd *storeDecoder) underflow() {
	if sd.err == nil {
		sd.err = fmt.Errorf("%w: lane 0 needs a byte past the end of the stream", rans.ErrCorrupt)
	}
}

// step decodes one binary decision from lane state x with the stream read
// up to pos, symbol 0 having frequency f0 (1 <= f0 < 2^16), and returns
// the decision and the new state and position. When the lane needs a byte
// past the end of the stream it records the error and returns 0 with x
// unchanged (pos keeps the bytes it did read), as every later step that
// runs out does too.
func (sd *storeDecoder) step(x uint32, pos int, f0 uint32) (uint32, uint32, int) {
	slot := x & 0xFFFF
	// Branch-free: the decisions of literal codes are close to even odds.
	b := (f0 - 1 - slot) >> 31 // slot >= f0
	mask := -b
	y := (f0+(1<<16-2*f0)&mask)*(x>>16) + slot - f0&mask
	for y < storeLow && pos < len(sd.src) {
		y = y<<8 | uint32(sd.src[pos])
		pos++
	}
	if y < storeLow {
		sd.underflow()
		return 0, x, pos
	}
	return b, y, pos
}

// decode returns the next binary decision, symbol 0 having frequency f0
// (1 <= f0 < 2^16); after an error it returns 0.
func (sd *storeDecoder) decode(f0 uint32) int {
	b, x, pos := sd.step(sd.x, sd.pos, f0)
	sd.x, sd.pos = x, pos
	return int(b)
}

// close checks the stream's end: every byte read and the state back at 2^24.
func (sd *storeDecoder) close() error {
	if sd.err != nil {
		return sd.err
	}
	if left := len(sd.src) - sd.pos; left != 0 {
		return fmt.Errorf("%w: %d bytes left at end of stream", rans.ErrCorrupt, left)
	}
	if sd.x != storeLow {
		return fmt.Errorf("%w: lane 0 ends in state %#x, not 0x1000000", rans.ErrCorrupt, sd.x)
	}
	return nil
}

// adapt returns probability q after decision b: prob.update without a
// branch, toward 2^16 after a 0 and toward 0 after a 1.
func adapt(q, b uint32) prob {
	mask := -b
	return prob(q + ((1<<16-q)>>probShift)&^mask - (q>>probShift)&mask)
}

func (sd *storeDecoder) bit(p *prob) int {
	q := uint32(*p)
	b := sd.decode(q)
	*p = adapt(q, uint32(b))
	return b
}

// tree decodes an nb-bit value most significant bit first, the probability
// of node i (1 <= i < 2^nb) at p[i].
func (sd *storeDecoder) tree(nb int, p []prob) int {
	p = p[:1<<nb]
	x, pos := sd.x, sd.pos
	node := uint(1)
	for node < uint(len(p)) {
		q := uint32(p[node])
		var b uint32
		b, x, pos = sd.step(x, pos, q)
		p[node] = adapt(q, b)
		node = node<<1 | uint(b)
	}
	sd.x, sd.pos = x, pos
	return int(node) - len(p)
}

// literalTile decodes the codes of a literal tile into dst (M codes), code
// m under the tree of subspace m and context left[m], the code of the same
// subspace one slot to the left, or K when left is nil (slot 0). It stops
// at a code of K or more and returns it with its subspace; else it returns
// m = -1.
func (sd *storeDecoder) literalTile(dst, left []uint16) (m, v int) {
	// A decision reads at most two bytes (a state of 2^24 or more decodes
	// to one of 2^8 or more): with that many left for each of the tile's
	// decisions, the lane cannot run out within it.
	if len(sd.src)-sd.pos >= 2*len(dst)*sd.nbK {
		return sd.literalFast(dst, left)
	}
	for m := range dst {
		ctx := sd.g.K
		if left != nil {
			ctx = int(left[m])
		}
		base := sd.litIdx(m, ctx, 0)
		v := sd.tree(sd.nbK, sd.litP[base:base+1<<sd.nbK])
		if v >= sd.g.K {
			return m, v
		}
		dst[m] = uint16(v)
	}
	return -1, 0
}

// literalFast is literalTile for a tile whose decisions cannot run out of
// stream. The lane state stays in locals across the tile's M·nbK
// decisions, with no check of the stream's end: this loop decodes nearly
// all of a store's bits.
func (sd *storeDecoder) literalFast(dst, left []uint16) (m, v int) {
	K, nbK := sd.g.K, sd.nbK
	size := uint(1) << nbK
	lit := sd.litP
	// Every tree starts at a multiple of size in a table of a power of two
	// at least size entries (newStoreModel), so litIdx's wrap never splits
	// a tree and each is one contiguous run.
	mask := len(lit) - 1
	x, pos, src := sd.x, sd.pos, sd.src
	for m := range dst {
		ctx := K
		if left != nil {
			ctx = int(left[m])
		}
		base := ((m*(K+1) + ctx) << nbK) & mask
		p := lit[base : base+int(size) : base+int(size)]
		var node uint
		node, x, pos = litTree(p, x, pos, src)
		v := int(node - size)
		if v >= K {
			sd.x, sd.pos = x, pos
			return m, v
		}
		dst[m] = uint16(v)
	}
	sd.x, sd.pos = x, pos
	return -1, 0
}

// litTree decodes one literal code from lane state x and the stream src
// read up to pos, which holds at least two bytes for each of the tree's
// decisions: the tree's probabilities are p[1:], and it returns the leaf
// (the code plus len(p)) and the new state and position. It is a function
// of its own so that its loop keeps every value in a register.
func litTree(p []prob, x uint32, pos int, src []byte) (uint, uint32, int) {
	node := uint(1)
	for node < uint(len(p)) {
		q := uint32(p[node])
		slot, xh := x&0xFFFF, x>>16
		y0 := q*xh + slot
		y1 := (1<<16-q)*xh + slot - q
		b := uint(0)
		if slot >= q {
			y0, b = y1, 1
		}
		x = y0
		for x < storeLow {
			x = x<<8 | uint32(src[pos])
			pos++
		}
		p[node] = adapt(q, uint32(b))
		node = node<<1 | b
	}
	return node, x, pos
}

// decodeStore decodes the reference store of T states from stream: its
// codes (T·N) and buckets, then no values of the offset law and nc of the
// class context statistics. Counts are checked against the stream's length
// before anything is sized by them. It also returns, per tile
// (state·S+slot), the earlier tile it copies or -1 for a literal tile:
// Model.derive then indexes a copy without looking it up.
func decodeStore(g Geometry, T, no, nc int, stream []byte) ([]uint16, []uint8, []int32, []uint32, []uint32, error) {
	S, M, n := g.S, g.M, g.N()
	if all := int64(T)*int64(n) + int64(no) + int64(nc); all > maxStoreCodesPerByte*int64(len(stream)) {
		return nil, nil, nil, nil, nil, fmt.Errorf("%w: %d reference codes and table values in a store of %d bytes", ErrModelFormat, all, len(stream))
	}
	sd := &storeDecoder{storeModel: newStoreModel(g)}
	if err := sd.init(stream); err != nil {
		return nil, nil, nil, nil, nil, fmt.Errorf("%w: reference store: %v", ErrModelFormat, err)
	}
	// Sized for the whole store when the stream's length makes that
	// plausible (storePreallocCodesPerByte), else grown as decoded, so that
	// a store's memory follows its bytes or the work done.
	room := storePreallocCodesPerByte * int64(len(stream))
	codes := make([]uint16, 0, min(int64(T)*int64(n), room))
	srcs := make([]int32, 0, min(int64(T)*int64(S), room/int64(M)))
	bkt := make([]uint8, 0, min(int64(T), room))
	fail := func(msg string, a ...any) error {
		return fmt.Errorf("%w: reference store: %s", ErrModelFormat, fmt.Sprintf(msg, a...))
	}
	for r := range T {
		b := sd.tree(4, sd.bktP[sd.prevBkt][:])
		bkt = append(bkt, uint8(b))
		sd.prevBkt = b
		for x := range S {
			if sd.err != nil {
				return nil, nil, nil, nil, nil, fail("%v", sd.err)
			}
			p := int64(r*S + x)
			ctx := sd.opCtx(x)
			op := opRep
			if sd.bit(&sd.opP[ctx][0]) == 1 {
				op = opSame
				if sd.bit(&sd.opP[ctx][1]) == 1 {
					op = opMatch
					if sd.bit(&sd.opP[ctx][2]) == 1 {
						op = opLit
					}
				}
			}
			src := int64(-1)
			switch op {
			case opRep:
				src = p - sd.dist
			case opSame:
				sd.dist = int64(S)
				src = p - sd.dist
			case opMatch:
				delta := sd.tree(sd.nbS, sd.deltaP)
				bl := sd.tree(5, sd.lenP[:])
				dr := int64(0)
				if bl > 0 {
					dr = 1
					for range bl - 1 {
						dr = dr<<1 | int64(sd.decode(1<<15))
					}
				}
				if delta >= S {
					return nil, nil, nil, nil, nil, fail("slot delta %d at state %d slot %d", delta, r, x)
				}
				q := (int64(r)-dr)*int64(S) + int64((x+delta)%S)
				if dr > int64(r) || q >= p {
					return nil, nil, nil, nil, nil, fail("copy from tile %d at tile %d", q, p)
				}
				sd.dist = p - q
				src = q
			}
			off := len(codes)
			codes = slices.Grow(codes, M)[:off+M]
			srcs = append(srcs, int32(src))
			if op == opLit {
				var left []uint16
				if x > 0 {
					left = codes[off-M : off]
				}
				if m, v := sd.literalTile(codes[off:off+M], left); m >= 0 {
					return nil, nil, nil, nil, nil, fail("literal code %d >= K", v)
				}
			} else {
				if src < 0 {
					return nil, nil, nil, nil, nil, fail("copy from before the store at tile %d", p)
				}
				copy(codes[off:off+M], codes[src*int64(M):(src+1)*int64(M)])
			}
			sd.prevOp = op
			sd.lastOp[x] = uint8(op)
		}
	}
	off, err := sd.values(0, no, S)
	if err != nil {
		return nil, nil, nil, nil, nil, fail("offset law: %v", err)
	}
	ctx, err := sd.values(1, nc, nClasses)
	if err != nil {
		return nil, nil, nil, nil, nil, fail("class contexts: %v", err)
	}
	if err := sd.close(); err != nil {
		return nil, nil, nil, nil, nil, fail("%v", err)
	}
	// Clipped: the predictor must never append into the store.
	return slices.Clip(codes), slices.Clip(bkt), srcs, off, ctx, nil
}

// values decodes n integers of table tab in rows of k (storeEncoder.values).
func (sd *storeDecoder) values(tab, n, k int) ([]uint32, error) {
	if n == 0 {
		return nil, nil
	}
	out := make([]uint32, 0, min(n, 1<<16))
	for i := range n {
		if sd.err != nil {
			return nil, sd.err
		}
		bl := sd.tree(6, sd.valP[tab][:])
		if bl > 33 {
			return nil, fmt.Errorf("value of %d bits", bl)
		}
		z := uint64(0)
		if bl > 0 {
			z = 1
			for range bl - 1 {
				z = z<<1 | uint64(sd.decode(1<<15))
			}
		}
		v := int64(z >> 1)
		if z&1 == 1 {
			v = -v - 1
		}
		if i%k > 0 {
			v += int64(out[i-1])
		}
		if v < 0 || v >= 1<<32 {
			return nil, fmt.Errorf("value %d outside [0, 2^32)", v)
		}
		out = append(out, uint32(v))
	}
	return out, nil
}
