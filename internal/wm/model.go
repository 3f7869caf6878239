package wm

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/wmzip/wmzip/internal/fixed"
	"github.com/wmzip/wmzip/internal/rans"
)

// ModelIDSize is the size in bytes of a model's content ID.
const ModelIDSize = 16

// ModelID identifies a model by content: the first 16 bytes of the SHA-256
// of its canonical serialization.
type ModelID [ModelIDSize]byte

func (id ModelID) String() string { return fmt.Sprintf("%x", id[:]) }

// Format prints id as 32 hex digits for %v, %s and %x (%X: upper case), so
// that %x does not hex-encode String's hex again.
func (id ModelID) Format(f fmt.State, verb rune) {
	if verb == 'X' {
		fmt.Fprintf(f, "%X", id[:])
		return
	}
	fmt.Fprintf(f, "%x", id[:])
}

// ErrModelFormat reports a model file that is not valid.
var ErrModelFormat = errors.New("wm: invalid model file")

// ErrModelTooLarge reports a model file whose declared reference store
// would take more memory than the caller allows (UnmarshalModelLimit).
var ErrModelTooLarge = errors.New("wm: model exceeds the memory limit")

// ErrModelVersion reports a model file of a version this package does not read.
var ErrModelVersion = errors.New("wm: unsupported model file version")

// Flags of a version-4 model file.
const (
	flagLevel = 0x1 // the level: 1, fast
	flagCoded = 0x2 // the fields of version 3 (else of version 2)
	flagCopy  = 0x4 // the level: 2, copy
)

// Model file constants.
const (
	modelMagic   = "WMZM"
	ModelVersion = 4
	// MaxRefStates bounds the reference store a model may hold.
	MaxRefStates = 1 << 20
	// dictCap bounds how many dictionary tiles one two-code prefix expands to.
	dictCap = 1024
	// occCap bounds the occurrences kept per dictionary tile, and
	// anchorCap the reference states a state's successors come from (model
	// version 2; version 1 has 16 of each: occCapV1).
	occCap    = 32
	anchorCap = 32
	occCapV1  = 16
	// succCap bounds the successor states, those after the anchors and then
	// those before them (version 2; version 1 has no predecessors).
	succCap = 64
	// histCap bounds how many episode tiles one first code expands to.
	histCap = 256
	// maxContNext bounds the continuations listed for one slot.
	maxContNext = 8
)

// Classes of hypotheses the predictor mixes (SPEC.md, "World model").
const (
	clsPrev    = iota // same slot, previous state
	clsPrev2          // same slot, two states back
	clsCont           // continuation of the previous slot's match
	clsSucc           // successor of the previous state's match at this slot
	clsSuccAny        // any slot of a successor state
	clsEp             // any distinct tile seen earlier in the episode
	clsDict           // any tile of the shared dictionary
	clsNew            // new content: the fallback model
	nClasses
)

// The predictor masks class numbers with nClasses−1 to index its per-class
// arrays without bounds checks: nClasses must stay a power of two.
var _ [0]struct{} = [nClasses & (nClasses - 1)]struct{}{}

// nBuckets is the number of action buckets: bucket = clamp(action+1, 0, 15).
const nBuckets = 16

func bucketOf(action int64) int {
	if action < 0 {
		return 0
	}
	if action >= nBuckets-1 {
		return nBuckets - 1
	}
	return int(action) + 1
}

// Model holds the shared, integer parameters of the world model.
// A Model is immutable once built and safe for concurrent use; each stream
// gets its own Predictor.
type Model struct {
	Geom      Geometry
	Precision uint // rANS probability precision in bits (10..16)

	refStore    // the reference store, and its tiles
	dictIndex   // the distinct tiles by content and by first codes
	fallTables  // the fallback tables
	classPriors // the class statistics and the model version's bounds
	slotLaws    // where matches continue and where tiles move

	// level is the model's level: LevelFull, LevelFast or LevelCopy.
	level int

	sections []Section

	raw []byte
	id  ModelID
}

// refStore is the reference store of a model (serialized) and what is
// derived from it at load time.
type refStore struct {
	refCodes []uint16 // reference store [T][N]
	refStart []int64  // episode starts in the reference store
	refBkt   []uint8  // action bucket of each reference state

	// Derived at load time.
	refT      int
	refNext   []int32   // successor state index or -1
	tileRep   []int32   // per distinct tile: representative state*S+slot
	tileCount []uint32  // occurrences per distinct tile
	tileOcc   [][]int32 // per distinct tile: its first occurrences (state*S+slot), capped
	tileOf    []int32   // per slot of the reference store (state*S+slot): its tile id
	refFirst  []uint16  // per slot of the reference store (state*S+slot): its first code
	tileOff   []int     // per distinct tile: offset of its codes in refCodes
}

// dictIndex is the dictionary of a model, derived at load time.
type dictIndex struct {
	// The dictionary's distinct tiles by first code (from dictStart[v] for
	// first code v), then second code, then count (descending), then id,
	// with the reference of each one's first occurrence and the lg of its
	// count: the tiles an expansion forms groups for are read in sequence.
	dictStart []int
	dictTiles []uint16
	dictRef   []ref
	dictLg    []int32
	// refPos is, per slot of the reference store, the position of its tile
	// in dictTiles: inference reads the store's tiles there, a third of the
	// store's size, rather than in refCodes.
	refPos    []int32
	dictPairs [][]pairEntry // per first code: one entry per second code, ascending
	dictCnt   []uint64      // per first code: total occurrences of tiles starting with it
	dictTotal uint64
	dict      tileIndex // distinct tiles by content
}

// fallTables are the fallback tables of a model: serialized (or derived
// from the reference store), and their cumulative forms made at load time.
type fallTables struct {
	fallCtx  int      // contexts per subspace of the fallback table: K+1 or 1
	fallback []uint16 // [M][fallCtx][K] frequencies, each row summing to 65536
	// The second fallback table, by the previous code of the same tile,
	// combined geometrically: f ∝ f1^(exp1/256) · f2^(exp2/256).
	fall2Ctx int // K+1, or 0 when absent
	fall2    []uint16
	fallExp  [2]uint16
	// fallDerived marks a model whose fallback tables are derived from its
	// reference store with the smoothing fallBeta (Q8): a version-3 file
	// stores fallBeta, not the tables.
	fallDerived bool
	fallBeta    [2]uint32
	// subMix is the weight (Q8) of the fallback row against the uniform law
	// in the law of a substituted code.
	subMix uint16

	// Derived at load time.
	fallCum   []uint16   // fallback rows, cumulative
	fallModal []rowModal // the modal value of each fallback row
	pow1      []uint16   // powers of the fallback rows (with a second table)
	pow2      []uint16   // powers of the second table's rows
}

// classPriors are the serialized class statistics of a model, the
// priors of its hypotheses, and the bounds of its version.
type classPriors struct {
	clsHits [nBuckets][nClasses]uint32
	clsSlot []uint32 // [S][nClasses] hits by slot
	// clsCtx, when not nil, counts hits by slot and by the class of the
	// previous slot: [S][nClasses+1][nClasses].
	clsCtx []uint32
	clsMis [nClasses]uint32
	clsN   [nClasses]uint32
	// occCap, anchorCap and succCap are the model version's bounds.
	occCap, anchorCap, succCap int
}

// slotLaws are the serialized laws of where a match goes on: the slots
// that continue it, and the offsets at which a tile shows in a successor.
type slotLaws struct {
	// contNext[x] lists the slots y that continue a match at slot x, each
	// with a probability (Q15).
	contNext [][]contEntry
	// offPrior[b][b'][δ], when not nil, is the law (frequencies summing to
	// 65536) of the offset δ = x − s mod S at which the tile of slot s of a
	// state of bucket b shows in a successor state of bucket b'.
	offPrior []uint16
	// offVals holds the offset law's stored values while a file is read.
	offVals []uint32
	offLaw  []offRow // the offset law as a floor and spikes, per bucket pair (derived)
}

// ID returns the model's content ID.
func (m *Model) ID() ModelID { return m.id }

// MarshalBinary returns the model's canonical serialization (.wmm bytes).
func (m *Model) MarshalBinary() ([]byte, error) {
	if m.raw == nil {
		return nil, errNoFile
	}
	return slices.Clone(m.raw), nil
}

// errNoFile reports a model trained with TrainOptions.NoFile.
var errNoFile = errors.New("wm: model trained without a file")

// WithDerivedFallback returns a copy of m whose fallback tables are derived
// from its reference store with the smoothings beta1 and beta2 (Q8, in
// observations; SPEC.md 3.3), as a trained model's are: a model that writes
// as version 3, the compact file. Its tables change, and so does its ID.
func (m *Model) WithDerivedFallback(beta1, beta2 uint32) (*Model, error) {
	if beta1 > maxBetaQ || beta2 > maxBetaQ {
		return nil, fmt.Errorf("wm: fallback smoothing %d, %d above 2^24", beta1, beta2)
	}
	c, err := UnmarshalModel(m.appendFile(nil, 2, nil))
	if err != nil {
		return nil, err
	}
	c.fallDerived = true
	c.fallBeta = [2]uint32{beta1, 0}
	if c.fall2Ctx > 0 {
		c.fallBeta[1] = beta2
	}
	c.derive(nil)
	c.encode()
	return UnmarshalModel(c.raw)
}

// CanonicalBinary returns the model's canonical serialization (SPEC.md
// 3.5): the version-2 file of its content, whose hash is its ID. It is
// what MarshalBinary returns for a model that is not version 3.
func (m *Model) CanonicalBinary() ([]byte, error) { return m.appendFile(nil, 2, nil), nil }

// FileVersion returns the model file version MarshalBinary writes.
// A model trained without a file (TrainOptions.NoFile) has version 0.
func (m *Model) FileVersion() int {
	if m.raw == nil {
		return 0
	}
	return int(binary.LittleEndian.Uint16(m.raw[4:]))
}

// RefStates returns the number of states in the model's reference store.
func (m *Model) RefStates() int { return m.refT }

// codeBytes is 1 when codes are stored as bytes, else 2.
func codeBytes(k int) int {
	if k <= 256 {
		return 1
	}
	return 2
}

// encode serializes m's parameters into m.raw and sets its ID: the ID is
// that of the canonical, version-2 layout (every table explicit), so that
// it names the content whatever the file's coding; the file is version 3
// when the fallback tables derive from the reference store.
func (m *Model) encode() {
	m.id = m.canonicalID()
	if !m.fallDerived {
		m.raw = m.appendFile(nil, 2, nil)
	} else {
		// Version 3 unless its limits refuse this content (a tiny store
		// under large tables, or a store coded below 0.008 bits a code):
		// then the canonical file, which has the same ID.
		off := make([]uint32, len(m.offPrior))
		for i, f := range m.offPrior {
			off[i] = uint32(f) - 1
		}
		st := encodeStore(m.Geom, m.refCodes, m.refBkt, off, m.clsCtx)
		b := m.appendFile(nil, 3, st)
		nc := int64(len(m.refCodes) + len(off) + len(m.clsCtx))
		if fallEntriesFit(m.fallEntries(), int64(len(b))) && nc <= maxStoreCodesPerByte*int64(len(st)) {
			m.raw = b
		} else {
			// The tables stay derivable: sections added later (WithSection
			// encodes again) may make the version-3 file fit.
			m.raw = m.appendFile(nil, 2, nil)
		}
	}
}

// modelMemory estimates the memory of a parsed model of geometry g with T
// reference states, fall fallback-table entries and a file of size bytes:
// the codes (2 bytes each) and at most as many again in the dictionary's
// distinct tiles, per reference slot the tile index, occurrence, first
// code and dictionary entries (at most 80 bytes), per table entry its
// cumulative form, powers and modal values (16 bytes), and the file.
func modelMemory(g Geometry, T, fall, size int64) int64 {
	return T*int64(g.N())*4 + T*int64(g.S)*80 + fall*16 + 2*size
}

// fallEntries is the number of entries of the fallback tables.
func (m *Model) fallEntries() int64 {
	return int64(m.Geom.M) * int64(m.fallCtx+m.fall2Ctx) * int64(m.Geom.K)
}

// appendFile appends the model file of the given version to b: 2, or 3
// with the coded store st.
func (m *Model) appendFile(b []byte, version uint16, st []byte) []byte {
	// Reserve what the tables, the store and the sections take: a model
	// of megabytes is then written in one allocation, not by repeated
	// doubling.
	n := m.headCap() + len(st)
	if version != 3 {
		n += codeBytes(m.Geom.K)*len(m.refCodes) + len(m.refBkt)
	}
	for _, sec := range m.sections {
		n += 8 + len(sec.Data)
	}
	b = m.appendHead(slices.Grow(b, n), version)
	if version == 3 {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(st)))
		b = append(b, st...)
	} else {
		b = appendCodes(b, m.refCodes, codeBytes(m.Geom.K))
		b = append(b, m.refBkt...)
	}
	return m.appendSections(b)
}

// headCap bounds the bytes appendHead appends: the fixed fields are in the
// 1,024.
func (m *Model) headCap() int {
	n := 1024 + 4*len(m.clsSlot) + 2*len(m.fallback) + 2*len(m.fall2) + len(m.contNext) +
		2*len(m.offPrior) + 4*len(m.clsCtx) + 4*len(m.refStart)
	for _, l := range m.contNext {
		n += 4 * len(l)
	}
	return n
}

// appendHead appends what a model file holds before its reference store's
// codes.
func (m *Model) appendHead(b []byte, version uint16) []byte {
	g := m.Geom
	b = append(b, modelMagic...)
	// A model of another level than the default is a version-4 file,
	// its level and layout (2 or 3) in the flags.
	if m.level == 0 {
		b = binary.LittleEndian.AppendUint16(b, version)
		b = binary.LittleEndian.AppendUint16(b, 0) // flags
	} else {
		fl := uint16(flagLevel)
		if m.level == LevelCopy {
			fl = flagCopy
		}
		if version == 3 {
			fl |= flagCoded
		}
		b = binary.LittleEndian.AppendUint16(b, 4)
		b = binary.LittleEndian.AppendUint16(b, fl)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(g.S))
	b = binary.LittleEndian.AppendUint32(b, uint32(g.M))
	b = binary.LittleEndian.AppendUint32(b, uint32(g.K))
	b = append(b, byte(m.Precision), 0, 0, 0)
	// class statistics
	for i := range nBuckets {
		for c := range nClasses {
			b = binary.LittleEndian.AppendUint32(b, m.clsHits[i][c])
		}
	}
	for c := range nClasses {
		b = binary.LittleEndian.AppendUint32(b, m.clsMis[c])
		b = binary.LittleEndian.AppendUint32(b, m.clsN[c])
	}
	for _, h := range m.clsSlot {
		b = binary.LittleEndian.AppendUint32(b, h)
	}
	// fallback
	if version == 3 {
		b = binary.LittleEndian.AppendUint32(b, uint32(m.fallCtx))
		b = binary.LittleEndian.AppendUint32(b, uint32(m.fall2Ctx))
		b = binary.LittleEndian.AppendUint16(b, m.fallExp[0])
		b = binary.LittleEndian.AppendUint16(b, m.fallExp[1])
		b = binary.LittleEndian.AppendUint32(b, m.fallBeta[0])
		b = binary.LittleEndian.AppendUint32(b, m.fallBeta[1])
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(m.fallCtx))
		for _, f := range m.fallback {
			b = binary.LittleEndian.AppendUint16(b, f-1)
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(m.fall2Ctx))
		b = binary.LittleEndian.AppendUint16(b, m.fallExp[0])
		b = binary.LittleEndian.AppendUint16(b, m.fallExp[1])
		for _, f := range m.fall2 {
			b = binary.LittleEndian.AppendUint16(b, f-1)
		}
	}
	// substitution law, continuations, offset law
	b = binary.LittleEndian.AppendUint16(b, m.subMix)
	for _, l := range m.contNext {
		b = append(b, byte(len(l)))
		for _, e := range l {
			b = binary.LittleEndian.AppendUint16(b, e.y)
			b = binary.LittleEndian.AppendUint16(b, e.p)
		}
	}
	// Version 3 codes the values of these two tables in the store stream.
	if m.offPrior == nil {
		b = binary.LittleEndian.AppendUint32(b, 0)
	} else {
		b = binary.LittleEndian.AppendUint32(b, nBuckets*nBuckets)
		for _, f := range m.offPrior {
			if version == 2 {
				b = binary.LittleEndian.AppendUint16(b, f-1)
			}
		}
	}
	if m.clsCtx == nil {
		b = binary.LittleEndian.AppendUint32(b, 0)
	} else {
		b = binary.LittleEndian.AppendUint32(b, nClasses+1)
		for _, h := range m.clsCtx {
			if version == 2 {
				b = binary.LittleEndian.AppendUint32(b, h)
			}
		}
	}
	// reference store
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.refStart)))
	for _, s := range m.refStart {
		b = binary.LittleEndian.AppendUint32(b, uint32(s))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(m.refT))
	return b
}

// appendCodes appends codes as bytes (cb = 1) or little-endian pairs.
func appendCodes(b []byte, codes []uint16, cb int) []byte {
	n := len(b)
	b = slices.Grow(b, cb*len(codes))[:n+cb*len(codes)]
	if cb == 1 {
		dst := b[n : n+len(codes)]
		for i, c := range codes {
			dst[i] = byte(c)
		}
	} else {
		for i, c := range codes {
			binary.LittleEndian.PutUint16(b[n+2*i:], c)
		}
	}
	return b
}

// appendSections appends the section count and the sections.
func (m *Model) appendSections(b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.sections)))
	for _, sec := range m.sections {
		b = append(b, sec.Tag[:]...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(sec.Data)))
		b = append(b, sec.Data...)
	}
	return b
}

// canonicalID hashes the canonical (version-2) file of m piece by piece:
// the file of a large store is never held whole just to be hashed.
func (m *Model) canonicalID() ModelID {
	h := sha256.New()
	// One buffer for the head, sized for it, then for the codes.
	buf := m.appendHead(make([]byte, 0, max(m.headCap(), 1<<16)), 2)
	h.Write(buf)
	cb := codeBytes(m.Geom.K)
	for i := 0; i < len(m.refCodes); i += len(buf) / cb {
		buf = appendCodes(buf[:0], m.refCodes[i:min(len(m.refCodes), i+cap(buf)/2)], cb)
		h.Write(buf)
	}
	h.Write(m.refBkt)
	h.Write(m.appendSections(nil))
	var id ModelID
	copy(id[:], h.Sum(nil))
	return id
}

// Section is an opaque, tagged part of a model file that another package
// owns (the quantizer, the retention gate's calibration). The world model
// stores and hashes it but does not interpret it.
type Section struct {
	Tag  [4]byte
	Data []byte
}

// MaxSections bounds the sections of one model file.
const MaxSections = 64

// Section returns the data of the section with the given tag, or nil.
func (m *Model) Section(tag string) []byte {
	for _, s := range m.sections {
		if string(s.Tag[:]) == tag {
			return s.Data
		}
	}
	return nil
}

// WithSection returns a copy of m in which the section tag holds data
// (replacing an existing one; sections are kept sorted by tag). The copy
// has a new ID.
func (m *Model) WithSection(tag string, data []byte) (*Model, error) {
	if m.raw == nil {
		return nil, errNoFile
	}
	if len(tag) != 4 {
		return nil, fmt.Errorf("wm: section tag %q is not 4 bytes", tag)
	}
	if uint64(len(data)) > 1<<31 {
		return nil, fmt.Errorf("wm: section %q too large", tag)
	}
	c := *m
	c.sections = nil
	for _, s := range m.sections {
		if string(s.Tag[:]) != tag {
			c.sections = append(c.sections, s)
		}
	}
	var t [4]byte
	copy(t[:], tag)
	c.sections = append(c.sections, Section{t, slices.Clone(data)})
	if len(c.sections) > MaxSections {
		return nil, fmt.Errorf("wm: more than %d sections", MaxSections)
	}
	slices.SortFunc(c.sections, func(a, b Section) int { return bytes.Compare(a.Tag[:], b.Tag[:]) })
	c.encode()
	return &c, nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) need(n int64) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || int64(len(r.b)) < n {
		r.err = fmt.Errorf("%w: truncated", ErrModelFormat)
		return false
	}
	return true
}
func (r *reader) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	v := binary.LittleEndian.Uint16(r.b)
	r.b = r.b[2:]
	return v
}
func (r *reader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

// UnmarshalModel parses and validates a .wmm file.
func UnmarshalModel(b []byte) (*Model, error) { return UnmarshalModelLimit(b, 0) }

// UnmarshalModelLimit is UnmarshalModel for untrusted input under a memory
// cap: a version-3 file codes its reference store, so a small file may
// declare a store many times its size (up to 1,024 codes a byte, SPEC.md
// 3.1); its parse fails with ErrModelTooLarge, before decoding the store,
// when ModelMemory of what it declares exceeds maxBytes (0: no cap).
func UnmarshalModelLimit(b []byte, maxBytes int64) (*Model, error) {
	if len(b) < 24 {
		return nil, fmt.Errorf("%w: truncated: %d bytes, shorter than the 24 of the header", ErrModelFormat, len(b))
	}
	if string(b[:4]) != modelMagic {
		return nil, fmt.Errorf("%w: bad magic", ErrModelFormat)
	}
	r := &reader{b: b[4:]}
	version := r.u16()
	if version < 1 || version > ModelVersion {
		return nil, fmt.Errorf("%w %d", ErrModelVersion, version)
	}
	// layout is the version whose fields the file has: version 4 has
	// those of version 2 or 3, as its flags say, and a level.
	layout, level := version, 0
	f := r.u16()
	switch {
	case version < 4 && f != 0:
		return nil, fmt.Errorf("%w: reserved flags %#x set", ErrModelFormat, f)
	case version == 4 && (f&^(flagLevel|flagCoded|flagCopy) != 0 || f&(flagLevel|flagCopy) != flagLevel && f&(flagLevel|flagCopy) != flagCopy):
		return nil, fmt.Errorf("%w: flags %#x invalid in version 4", ErrModelFormat, f)
	case version == 4:
		layout, level = 2, LevelFast
		if f&flagCopy != 0 {
			level = LevelCopy
		}
		if f&flagCoded != 0 {
			layout = 3
		}
	}
	g := Geometry{S: int(r.u32()), M: int(r.u32()), K: int(r.u32())}
	if !r.need(4) {
		return nil, r.err
	}
	p := uint(r.b[0])
	if r.b[1]|r.b[2]|r.b[3] != 0 {
		return nil, fmt.Errorf("%w: reserved bytes set", ErrModelFormat)
	}
	r.b = r.b[4:]
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrModelFormat, err)
	}
	if p < 10 || p > 16 || uint64(g.K) > 1<<p {
		return nil, fmt.Errorf("%w: precision %d invalid for K=%d", ErrModelFormat, p, g.K)
	}
	m := &Model{Geom: g, Precision: p, level: level}
	var err error
	for i := range nBuckets {
		for c := range nClasses {
			m.clsHits[i][c] = r.u32()
		}
	}
	for c := range nClasses {
		m.clsMis[c] = r.u32()
		m.clsN[c] = r.u32()
	}
	if !r.need(4 * int64(g.S) * nClasses) {
		return nil, r.err
	}
	m.clsSlot = make([]uint32, g.S*nClasses)
	for i := range m.clsSlot {
		m.clsSlot[i] = r.u32()
	}
	m.fallCtx = int(r.u32())
	if r.err != nil {
		return nil, r.err
	}
	if m.fallCtx != 1 && m.fallCtx != g.K+1 {
		return nil, fmt.Errorf("%w: fallback contexts %d", ErrModelFormat, m.fallCtx)
	}
	if layout == 3 {
		if err := m.readFallV3(r, int64(len(b))); err != nil {
			return nil, err
		}
	} else {
		if m.fallback, err = readRows(r, g, m.fallCtx, "first"); err != nil {
			return nil, err
		}
		m.fall2Ctx = int(r.u32())
		m.fallExp[0], m.fallExp[1] = r.u16(), r.u16()
		if err := m.checkFall(); err != nil {
			return nil, err
		}
		if m.fall2, err = readRows(r, g, m.fall2Ctx, "second"); err != nil {
			return nil, err
		}
	}
	m.occCap, m.anchorCap, m.succCap = occCap, anchorCap, succCap
	if layout == 1 {
		// Version 1 has none of these fields; its predictions are those of
		// their defaults.
		m.subMix = 128
		m.contNext = defaultContNext(g.S)
		m.occCap, m.anchorCap, m.succCap = occCapV1, occCapV1, 0
	} else if err := m.readV2(r, layout == 3); err != nil {
		return nil, err
	}
	ne := int64(r.u32())
	if !r.need(4 * ne) {
		return nil, r.err
	}
	m.refStart = make([]int64, ne)
	for i := range m.refStart {
		m.refStart[i] = int64(r.u32())
	}
	m.refT = int(r.u32())
	if r.err != nil {
		return nil, r.err
	}
	if m.refT > MaxRefStates {
		return nil, fmt.Errorf("%w: %d reference states exceed the limit %d", ErrModelFormat, m.refT, MaxRefStates)
	}
	var src []int32 // per tile of a decoded store, the earlier tile it copies, or -1
	if layout == 3 {
		if need := modelMemory(g, int64(m.refT), m.fallEntries(), int64(len(b))); maxBytes > 0 && need > maxBytes {
			return nil, fmt.Errorf("%w: %d reference states need about %d bytes, limit %d", ErrModelTooLarge, m.refT, need, maxBytes)
		}
		n := int64(r.u32())
		if !r.need(n) {
			return nil, r.err
		}
		no, nc := m.tableLens()
		if m.refCodes, m.refBkt, src, m.offVals, m.clsCtx, err = decodeStore(g, m.refT, no, nc, r.b[:n]); err != nil {
			return nil, err
		}
		r.b = r.b[n:]
	} else if err := m.readStoreRaw(r); err != nil {
		return nil, err
	}
	if err := m.setOffPrior(); err != nil {
		return nil, err
	}
	ns := r.u32()
	if r.err != nil {
		return nil, r.err
	}
	if ns > MaxSections {
		return nil, fmt.Errorf("%w: %d sections exceed the limit %d", ErrModelFormat, ns, MaxSections)
	}
	for range ns {
		if !r.need(8) {
			return nil, r.err
		}
		var sec Section
		copy(sec.Tag[:], r.b[:4])
		r.b = r.b[4:]
		n := int64(r.u32())
		if !r.need(n) {
			return nil, r.err
		}
		sec.Data = slices.Clone(r.b[:n])
		r.b = r.b[n:]
		if k := len(m.sections); k > 0 && bytes.Compare(m.sections[k-1].Tag[:], sec.Tag[:]) >= 0 {
			return nil, fmt.Errorf("%w: sections not in ascending tag order", ErrModelFormat)
		}
		m.sections = append(m.sections, sec)
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrModelFormat, len(r.b))
	}
	if err := m.checkCounts(); err != nil {
		return nil, err
	}
	if err := m.checkStarts(); err != nil {
		return nil, err
	}
	m.raw = slices.Clone(b)
	m.fallDerived = layout == 3
	m.derive(src)
	if layout == 3 || version == 4 {
		m.id = m.canonicalID()
	} else {
		h := sha256.Sum256(m.raw)
		copy(m.id[:], h[:])
	}
	return m, nil
}

// checkStarts checks the reference episodes' starts against RefStates.
func (m *Model) checkStarts() error {
	switch {
	case m.refT == 0 && len(m.refStart) > 0:
		return fmt.Errorf("%w: %d reference episodes without reference states", ErrModelFormat, len(m.refStart))
	case m.refT > 0 && len(m.refStart) == 0:
		return fmt.Errorf("%w: %d reference states without reference episodes", ErrModelFormat, m.refT)
	case m.refT > 0 && m.refStart[0] != 0:
		return fmt.Errorf("%w: the first reference episode starts at %d, not 0", ErrModelFormat, m.refStart[0])
	}
	for i := 1; i < len(m.refStart); i++ {
		if m.refStart[i] <= m.refStart[i-1] {
			return fmt.Errorf("%w: reference episode starts not ascending", ErrModelFormat)
		}
		if m.refStart[i] >= int64(m.refT) {
			return fmt.Errorf("%w: reference episode start %d not below the %d reference states", ErrModelFormat, m.refStart[i], m.refT)
		}
	}
	return nil
}

// readStoreRaw reads the reference store of a version-1 or -2 file: codes
// and buckets as plain bytes.
func (m *Model) readStoreRaw(r *reader) error {
	g := m.Geom
	cb := int64(codeBytes(g.K))
	nc := int64(m.refT) * int64(g.N())
	if int64(len(r.b)) < cb*nc {
		return fmt.Errorf("%w: truncated: reference store is %d bytes, want %d", ErrModelFormat, len(r.b), cb*nc)
	}
	m.refCodes = make([]uint16, nc)
	for i := range m.refCodes {
		var v uint16
		if cb == 1 {
			v = uint16(r.b[i])
		} else {
			v = binary.LittleEndian.Uint16(r.b[2*i:])
		}
		if int(v) >= g.K {
			return fmt.Errorf("%w: reference code %d >= K", ErrModelFormat, v)
		}
		m.refCodes[i] = v
	}
	r.b = r.b[cb*nc:]
	if !r.need(int64(m.refT)) {
		return r.err
	}
	m.refBkt = slices.Clone(r.b[:m.refT])
	for _, bk := range m.refBkt {
		if bk >= nBuckets {
			return fmt.Errorf("%w: action bucket %d >= %d", ErrModelFormat, bk, nBuckets)
		}
	}
	r.b = r.b[m.refT:]
	return nil
}

// checkFall checks the fallback contexts and exponents.
func (m *Model) checkFall() error {
	if m.fall2Ctx != 0 && m.fall2Ctx != m.Geom.K+1 {
		return fmt.Errorf("%w: second fallback contexts %d", ErrModelFormat, m.fall2Ctx)
	}
	if m.fallExp[0] > 1024 || m.fallExp[1] > 1024 {
		return fmt.Errorf("%w: fallback exponents %d, %d above 1024", ErrModelFormat, m.fallExp[0], m.fallExp[1])
	}
	return nil
}

// readFallV3 reads the fallback fields of a version-3 file: contexts,
// exponents and smoothings; the tables derive from the reference store.
func (m *Model) readFallV3(r *reader, fileLen int64) error {
	m.fall2Ctx = int(r.u32())
	m.fallExp[0], m.fallExp[1] = r.u16(), r.u16()
	m.fallBeta[0], m.fallBeta[1] = r.u32(), r.u32()
	if r.err != nil {
		return r.err
	}
	if err := m.checkFall(); err != nil {
		return err
	}
	if m.fall2Ctx == 0 && m.fallBeta[1] != 0 {
		return fmt.Errorf("%w: smoothing %d of an absent second fallback table", ErrModelFormat, m.fallBeta[1])
	}
	if m.fallBeta[0] > maxBetaQ || m.fallBeta[1] > maxBetaQ {
		return fmt.Errorf("%w: fallback smoothing %d, %d above 2^24", ErrModelFormat, m.fallBeta[0], m.fallBeta[1])
	}
	if n := m.fallEntries(); !fallEntriesFit(n, fileLen) {
		return fmt.Errorf("%w: fallback tables of %d entries in a file of %d bytes", ErrModelFormat, n, fileLen)
	}
	return nil
}

// readV2 reads the fields version 2 adds after the fallback tables: the
// substitution mix, the continuation lists, the offset law and the class
// context statistics.
func (m *Model) readV2(r *reader, coded bool) error {
	S := m.Geom.S
	if m.subMix = r.u16(); m.subMix > 256 {
		return fmt.Errorf("%w: substitution mix %d above 256", ErrModelFormat, m.subMix)
	}
	if !r.need(int64(S)) {
		return r.err
	}
	m.contNext = make([][]contEntry, S)
	for x := range S {
		if !r.need(1) {
			return r.err
		}
		k := int(r.b[0])
		r.b = r.b[1:]
		if k < 1 || k > maxContNext {
			return fmt.Errorf("%w: %d continuations of slot %d", ErrModelFormat, k, x)
		}
		if !r.need(4 * int64(k)) {
			return r.err
		}
		l := make([]contEntry, k)
		for i := range l {
			l[i] = contEntry{r.u16(), r.u16()}
			if int(l[i].y) >= S || l[i].p < 1 || l[i].p > 1<<15 {
				return fmt.Errorf("%w: continuation (%d, %d) of slot %d", ErrModelFormat, l[i].y, l[i].p, x)
			}
			for _, e := range l[:i] {
				if e.y == l[i].y {
					return fmt.Errorf("%w: slot %d continues to %d twice", ErrModelFormat, x, e.y)
				}
			}
		}
		m.contNext[x] = l
	}
	switch rows := r.u32(); {
	case r.err != nil:
		return r.err
	case rows == nBuckets*nBuckets:
		if S < 2 {
			return fmt.Errorf("%w: offset law with one slot", ErrModelFormat)
		}
		m.offPrior = []uint16{} // present: filled by setTables
		if !coded {
			n := int64(rows) * int64(S)
			if !r.need(2 * n) {
				return r.err
			}
			m.offVals = make([]uint32, n)
			for i := range m.offVals {
				m.offVals[i] = uint32(r.u16())
			}
		}
	case rows != 0:
		return fmt.Errorf("%w: %d offset rows", ErrModelFormat, rows)
	}
	switch ctx := r.u32(); {
	case r.err != nil:
		return r.err
	case ctx == nClasses+1:
		m.clsCtx = []uint32{}
		if !coded {
			n := int64(S) * (nClasses + 1) * nClasses
			if !r.need(4 * n) {
				return r.err
			}
			m.clsCtx = make([]uint32, n)
			for i := range m.clsCtx {
				m.clsCtx[i] = r.u32()
			}
		}
	case ctx != 0:
		return fmt.Errorf("%w: %d class contexts", ErrModelFormat, ctx)
	}
	return nil
}

// tableLens returns the entries of the offset law and of the class context
// statistics a model has (0 for an absent one).
func (m *Model) tableLens() (off, ctx int) {
	S := m.Geom.S
	if m.offPrior != nil {
		off = nBuckets * nBuckets * S
	}
	if m.clsCtx != nil {
		ctx = S * (nClasses + 1) * nClasses
	}
	return off, ctx
}

// setOffPrior checks the offset law's stored values (frequency minus 1)
// and sets it.
func (m *Model) setOffPrior() error {
	if m.offPrior == nil {
		return nil
	}
	S := int64(m.Geom.S)
	n := int64(len(m.offVals))
	m.offPrior = make([]uint16, n)
	for i, v := range m.offVals {
		if v >= 1<<16-1 {
			return fmt.Errorf("%w: offset frequency %d", ErrModelFormat, v+1)
		}
		m.offPrior[i] = uint16(v + 1)
	}
	m.offVals = nil
	for row := int64(0); row < n; row += S {
		var t uint32
		for _, f := range m.offPrior[row : row+S] {
			t += uint32(f)
		}
		if t != 1<<16 {
			return fmt.Errorf("%w: offset row does not sum to 65536", ErrModelFormat)
		}
	}
	return nil
}

// MaxClassCount bounds every class count of a model file: a chunk adds at
// most 2^24 to a count (one per slot), so counts and their sums stay below
// 2^32 and the 32-bit counts of a predictor never wrap.
const MaxClassCount = 1 << 30

// checkCounts reports class counts above MaxClassCount.
func (m *Model) checkCounts() error {
	for b := range nBuckets {
		for _, x := range m.clsHits[b] {
			if x > MaxClassCount {
				return fmt.Errorf("%w: class count %d of hits above 2^30", ErrModelFormat, x)
			}
		}
	}
	for i, l := range [][]uint32{m.clsMis[:], m.clsN[:], m.clsSlot, m.clsCtx} {
		for _, x := range l {
			if x > MaxClassCount {
				return fmt.Errorf("%w: class count %d of %s above 2^30", ErrModelFormat, x, [...]string{"mis", "cn", "hitsS", "hitsP"}[i])
			}
		}
	}
	return nil
}

// readRows reads M·ctx rows of K frequencies stored minus one, each row
// summing to 65536, of the fallback table named which.
func readRows(r *reader, g Geometry, ctx int, which string) ([]uint16, error) {
	nf := int64(g.M) * int64(ctx) * int64(g.K)
	if !r.need(2 * nf) {
		return nil, r.err
	}
	rows := make([]uint16, nf)
	for i := range rows {
		f := r.u16()
		if f == 0xFFFF {
			return nil, fmt.Errorf("%w: %s fallback table: frequency 65536 (stored 0xFFFF)", ErrModelFormat, which)
		}
		rows[i] = f + 1
	}
	for row := int64(0); row < nf; row += int64(g.K) {
		var s uint32
		for _, f := range rows[row : row+int64(g.K)] {
			s += uint32(f)
		}
		if s != 1<<16 {
			return nil, fmt.Errorf("%w: %s fallback table: row %d does not sum to 65536", ErrModelFormat, which, row/int64(g.K))
		}
	}
	return rows, nil
}

// Validate checks a geometry against wmzip's limits.
func (g Geometry) Validate() error {
	switch {
	case g.S < 1 || g.S > MaxSlots:
		return fmt.Errorf("slots %d out of range [1,%d]", g.S, MaxSlots)
	case g.M < 1 || g.M > MaxSubspaces:
		return fmt.Errorf("subspaces %d out of range [1,%d]", g.M, MaxSubspaces)
	case g.S*g.M > MaxCoords:
		return fmt.Errorf("%d coordinates exceed the limit %d", g.S*g.M, MaxCoords)
	case g.K < 2 || g.K > MaxAlphabet:
		return fmt.Errorf("alphabet %d out of range [2,%d]", g.K, MaxAlphabet)
	}
	return nil
}

// derive builds the lookup structures implied by the reference store; src,
// when a decoded store gives it, holds per tile the earlier tile it copies
// (or -1).
func (m *Model) derive(src []int32) {
	g := m.Geom
	n, M := g.N(), g.M
	m.refNext = make([]int32, m.refT)
	ep := 0
	for t := range m.refT {
		for ep+1 < len(m.refStart) && int64(t+1) > m.refStart[ep+1] {
			ep++
		}
		end := int64(m.refT)
		if ep+1 < len(m.refStart) {
			end = m.refStart[ep+1]
		}
		if int64(t+1) < end {
			m.refNext[t] = int32(t + 1)
		} else {
			m.refNext[t] = -1
		}
	}
	// Distinct tiles, in order of first occurrence.
	m.tileRep = m.tileRep[:0]
	m.tileCount = m.tileCount[:0]
	m.tileOff = m.tileOff[:0]
	m.dict = tileIndex{}
	// A tile that a decoded store copies holds what its source holds, so
	// its id is its source's: only the literal tiles are looked up. The
	// sources become the ids in place, each source coming before its copy.
	if len(src) == m.refT*g.S {
		m.tileOf = src
	} else {
		src = nil
		m.tileOf = make([]int32, m.refT*g.S)
	}
	m.refFirst = make([]uint16, m.refT*g.S)
	for t := range m.refT {
		for s := range g.S {
			rep := int32(t*g.S + s)
			m.refFirst[rep] = m.refCodes[t*n+s*M]
			if src != nil && src[rep] >= 0 {
				id := m.tileOf[src[rep]]
				m.tileOf[rep] = id
				m.tileCount[id]++
				continue
			}
			off := t*n + s*M
			tl := m.refCodes[off : off+M]
			if id := m.dict.find(tl, m.refCodes, m.tileOff); id >= 0 {
				m.tileOf[rep] = id
				m.tileCount[id]++
				continue
			}
			id := int32(len(m.tileRep))
			m.tileOf[rep] = id
			m.tileRep = append(m.tileRep, rep)
			m.tileOff = append(m.tileOff, off)
			m.tileCount = append(m.tileCount, 1)
			m.dict.insert(tl, id, m.refCodes, m.tileOff)
		}
	}
	// The first occurrences of each tile, up to occCap, in one slab: its
	// counts size each list exactly, and a list is capped at its length so
	// that nothing appends across into the next.
	nt := len(m.tileRep)
	m.tileOcc = make([][]int32, nt)
	total := 0
	for _, c := range m.tileCount {
		total += min(int(c), m.occCap)
	}
	slab := make([]int32, total)
	for id, c := range m.tileCount {
		k := min(int(c), m.occCap)
		m.tileOcc[id] = slab[:0:k]
		slab = slab[k:]
	}
	for rep, id := range m.tileOf {
		if l := m.tileOcc[id]; len(l) < cap(l) {
			m.tileOcc[id] = append(l, int32(rep))
		}
	}
	if m.fallDerived {
		m.deriveFallback()
	}
	m.offLaw = nil
	if m.offPrior != nil {
		m.offLaw = make([]offRow, nBuckets*nBuckets)
		for i := range m.offLaw {
			m.offLaw[i] = spikes(m.offPrior[i*g.S : (i+1)*g.S])
		}
	}
	m.fallCum = make([]uint16, len(m.fallback))
	for r := 0; r < len(m.fallback); r += g.K {
		c := uint32(0)
		for v, f := range m.fallback[r : r+g.K] {
			m.fallCum[r+v] = uint16(c)
			c += uint32(f)
		}
	}
	m.fallModal = make([]rowModal, len(m.fallback)/g.K)
	for r := range m.fallModal {
		row := m.fallCum[r*g.K : (r+1)*g.K]
		v, f := rans.Mode(row, 16)
		m.fallModal[r] = rowModal{int32(v), f}
	}
	if m.fall2Ctx > 0 {
		m.pow1 = mixPowers(m.fallback, g.K, m.fallExp[0])
		m.pow2 = mixPowers(m.fall2, g.K, m.fallExp[1])
	}
	m.deriveDict()
}

// deriveDict builds the dictionary's lookup by the first two codes of a
// tile: dictTiles holds, per first code v, its tiles by second code, then
// count (descending), then id, and dictPairs[v] has one entry per second
// code. The pairs share one slab.
func (m *Model) deriveDict() {
	g := m.Geom
	K, M := g.K, g.M
	nt := len(m.tileRep)
	// The sort key of each tile: its second code above its count negated,
	// so that ascending keys, then ids, give the order above.
	type keyed struct {
		key uint64
		id  int32
	}
	first := make([]uint16, nt)
	tiles := make([]keyed, nt)
	m.dictCnt = make([]uint64, K)
	m.dictTotal = 0
	for id, rep := range m.tileRep {
		tl := m.refCodes[int(rep)*M : int(rep)*M+M]
		second := uint64(0)
		if M >= 2 {
			second = uint64(tl[1])
		}
		first[id] = tl[0]
		tiles[id] = keyed{second<<32 | uint64(^m.tileCount[id]), int32(id)}
		m.dictCnt[tl[0]] += uint64(m.tileCount[id])
		m.dictTotal += uint64(m.tileCount[id])
	}
	// Bucket the tiles by first code (a counting sort, ids ascending in
	// each bucket), then sort each bucket.
	start := make([]int, K+1)
	for _, v := range first {
		start[v+1]++
	}
	for v := range K {
		start[v+1] += start[v]
	}
	byFirst := make([]keyed, nt)
	next := slices.Clone(start[:K])
	for id, v := range first {
		byFirst[next[v]] = tiles[id]
		next[v]++
	}
	ids := make([]int32, nt)
	npairs := 0
	for v := range K {
		b := byFirst[start[v]:start[v+1]]
		slices.SortFunc(b, func(x, y keyed) int {
			if x.key != y.key {
				return cmp.Compare(x.key, y.key)
			}
			return cmp.Compare(x.id, y.id)
		})
		for i, t := range b {
			ids[start[v]+i] = t.id
			if i == 0 || t.key>>32 != b[i-1].key>>32 {
				npairs++
			}
		}
	}
	m.dictPairs = make([][]pairEntry, K)
	m.dictStart = start
	m.dictTiles = make([]uint16, nt*M)
	m.dictRef = make([]ref, nt)
	m.dictLg = make([]int32, nt)
	posOf := make([]int32, nt)
	for pos, id := range ids {
		posOf[id] = int32(pos)
		rep := int(m.tileRep[id])
		copy(m.dictTiles[pos*M:(pos+1)*M], m.refCodes[rep*M:rep*M+M])
		m.dictRef[pos] = ref{storeRef, int32(rep / g.S), int32(rep % g.S)}
		m.dictLg[pos] = fixed.Lg(uint64(m.tileCount[id]))
	}
	m.refPos = make([]int32, len(m.tileOf))
	for rep, id := range m.tileOf {
		m.refPos[rep] = posOf[id]
	}
	pairs := make([]pairEntry, 0, npairs)
	for v := range K {
		lo, hi := start[v], start[v+1]
		if lo == hi {
			continue
		}
		b := byFirst[lo:hi]
		p0 := len(pairs)
		for i := 0; i < len(b); {
			j := i
			var c uint64
			for j < len(b) && b[j].key>>32 == b[i].key>>32 {
				c += uint64(m.tileCount[b[j].id])
				j++
			}
			pairs = append(pairs, pairEntry{v1: uint16(b[i].key >> 32), cnt: c, lo: int32(i), hi: int32(j)})
			i = j
		}
		m.dictPairs[v] = pairs[p0:len(pairs):len(pairs)]
	}
}

// maxSpikes is the number of offsets the offset law keeps apart from its
// floor.
const maxSpikes = 4

// offRow is a row of the offset law as inference uses it: the law of
// offset δ is floor + e[k] when δ = d[k] for some k < n, else floor.
type offRow struct {
	floor uint32
	n     int
	d     [maxSpikes]uint16
	e     [maxSpikes]uint32
}

// spikes derives the offRow of a stored row of S frequencies: the
// maxSpikes largest (the lower offset among equals) are spikes, the floor
// is the mean of the others rounded down (0 when there are none).
func spikes(row []uint16) offRow {
	var o offRow
	o.n = min(maxSpikes, len(row))
	var taken [maxSpikes]int
	for k := range o.n {
		best := -1
		for d, f := range row {
			if slices.Contains(taken[:k], d+1) {
				continue
			}
			if best < 0 || f > row[best] {
				best = d
			}
		}
		taken[k] = best + 1
		o.d[k] = uint16(best)
	}
	if rest := len(row) - o.n; rest > 0 {
		var sum uint32
		for d, f := range row {
			if !slices.Contains(taken[:o.n], d+1) {
				sum += uint32(f)
			}
		}
		o.floor = sum / uint32(rest)
	}
	for k := range o.n {
		o.e[k] = uint32(row[o.d[k]]) - o.floor
	}
	// A spike equal to the floor changes nothing: drop it, keeping order.
	n := 0
	for k := range o.n {
		if o.e[k] > 0 {
			o.d[n], o.e[n] = o.d[k], o.e[k]
			n++
		}
	}
	o.n = n
	return o
}

// contEntry is one continuation of a match: slot y with probability p (Q15).
type contEntry struct {
	y uint16
	p uint16
}

// defaultContNext continues a match at slot x with slot x+1 mod S only.
func defaultContNext(S int) [][]contEntry {
	out := make([][]contEntry, S)
	all := make([]contEntry, S)
	for x := range S {
		all[x] = contEntry{uint16((x + 1) % S), 1 << 15}
		out[x] = all[x : x+1 : x+1]
	}
	return out
}

// pairEntry describes the dictionary tiles sharing their first two codes:
// the second code, their total count and their range among the tiles of
// the first code (dictTiles from dictStart[v]).
type pairEntry struct {
	v1     uint16
	cnt    uint64
	lo, hi int32
}

func u16bytes(t []uint16) []byte {
	b := make([]byte, 2*len(t))
	for i, v := range t {
		b[2*i] = byte(v)
		b[2*i+1] = byte(v >> 8)
	}
	return b
}

// DictTiles returns the distinct tiles of the reference store, M codes
// each, in the dictionary's order (SPEC.md 3.2). The slice belongs to the
// model: it must not be modified.
func (m *Model) DictTiles() []uint16 { return m.dictTiles }
