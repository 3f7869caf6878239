package format

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"strconv"

	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/rans"
	"github.com/wmzip/wmzip/internal/wm"
)

// Version is the container version this package writes. It reads
// MinVersion to Version.
const Version = 4

// MinVersion is the oldest container version this package reads.
const MinVersion = 3

// Limits of container versions 3 and 4. A decoder rejects files beyond
// them.
const (
	MaxKeyframeInterval = 1 << 16 // states per chunk (G)
	MaxChunkCoords      = 1 << 24 // G × N, coordinates in one chunk
	MaxStreamBytes      = 1 << 28 // rANS stream of one chunk
	MaxMetaBytes        = 1 << 20 // metadata of one episode
	MaxEpisodes         = 1 << 24
	MaxStates           = 1 << 48 // in one file
	MaxModelBytes       = 1 << 30 // embedded model
	MaxLevels           = 16      // retention levels (per-state lambdas)
)

// Defaults.
const (
	// DefaultKeyframeInterval bounds a cold random read to 127 states
	// decoded before the one read, for 0–0.4% of rate against 256
	// (docs/results-random-access.md).
	DefaultKeyframeInterval = 128
	// DefaultLanes is the rANS lane count a Writer uses by default. The
	// world model decodes one coordinate at a time, so more lanes buy no
	// speed in the container while each costs a 4-byte flush per chunk.
	DefaultLanes     = 2
	DefaultMaxMemory = 1 << 30
	// DefaultCacheBytes is the default cap of a File's chunk cache
	// (WithCacheBytes): about twenty live chunks of 1,024 coordinates per
	// state at G = 128, or two hundred wholly decoded ones.
	DefaultCacheBytes = 64 << 20
)

// LambdaLossless is the lambda field of a file in which every coordinate is
// coded (lambda = infinity).
const LambdaLossless = lambda.Lossless

// Sizes of the fixed structures.
const (
	HeaderSize      = 64
	TrailerSize     = 28
	episodeHdrSize  = 8  // tag..metadata length
	chunkHdrSize    = 16 // tag..reconstruction checksum
	crcSize         = 4
	indexHdrSize    = 48
	indexEpisodeLen = 24
	indexChunkLen   = 16
	reportLen       = 40 // the writer's report closing a version-4 index
)

// Record tags.
const (
	tagEpisode = 'E'
	tagChunk   = 'C'
	tagIndex   = 'X'
)

// magic opens every .wmz file: a non-ASCII byte, the name, and line-ending
// bytes that reveal text-mode transfer damage (as in PNG).
var magic = [8]byte{0x89, 'W', 'M', 'Z', '\r', '\n', 0x1A, '\n'}

// trailerMagic closes every .wmz file.
var trailerMagic = [4]byte{'W', 'M', 'Z', 0x1A}

const flagEmbeddedModel = 1 << 0

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

var le = binary.LittleEndian

// Header is the fixed-size header of a .wmz file.
type Header struct {
	Version          int
	Geom             wm.Geometry
	Precision        uint          // rANS precision in bits
	Lanes            int           // interleaved rANS lanes
	KeyframeInterval int           // G, maximum states per chunk
	Lambda           lambda.Lambda // retention trade-off; LambdaLossless = lossless
	ModelID          wm.ModelID
	ModelEmbedded    bool
	ModelSize        int64 // bytes of the embedded model, 0 if none

	// Levels, if not empty, are the file's retention levels: 2..MaxLevels
	// strictly increasing lambdas, the last equal to Lambda. Every state
	// then names its level in the stream, and is coded under that level's
	// lambda. Empty: every state is coded under Lambda.
	Levels []lambda.Lambda
}

// Lossless reports whether every coordinate of every state is coded.
func (h *Header) Lossless() bool { return h.Lambda == LambdaLossless && len(h.Levels) == 0 }

// levelBytes is the size of the level table that follows the embedded
// model: the lambdas and a CRC, or nothing.
func (h *Header) levelBytes() int64 {
	if len(h.Levels) == 0 {
		return 0
	}
	return 4*int64(len(h.Levels)) + crcSize
}

// BodyStart is the offset of the first record: past the header, the
// embedded model and the level table. Damage from there on is what
// recovery (WithRecovery) can work around.
func (h *Header) BodyStart() int64 { return HeaderSize + h.ModelSize + h.levelBytes() }

// lambdas returns the lambda of every level: Levels, or the header's
// lambda alone.
func (h *Header) lambdas() []lambda.Lambda {
	if len(h.Levels) > 0 {
		return h.Levels
	}
	return []lambda.Lambda{h.Lambda}
}

func (h *Header) marshalLevels() []byte {
	if len(h.Levels) == 0 {
		return nil
	}
	b := make([]byte, 0, h.levelBytes())
	for _, l := range h.Levels {
		b = le.AppendUint32(b, uint32(l))
	}
	return le.AppendUint32(b, crc(b))
}

// checkLevels validates a level table for header h.
func checkLevels(levels []lambda.Lambda, lam lambda.Lambda) error {
	if len(levels) == 0 {
		return nil
	}
	if len(levels) < 2 || len(levels) > MaxLevels {
		return fmt.Errorf("%d levels, want 2..%d", len(levels), MaxLevels)
	}
	for i := 1; i < len(levels); i++ {
		if levels[i] <= levels[i-1] {
			return fmt.Errorf("level lambdas not strictly increasing at level %d", i)
		}
	}
	if levels[len(levels)-1] != lam {
		return fmt.Errorf("last level's lambda %d differs from the header's %d", levels[len(levels)-1], lam)
	}
	return nil
}

// parseLevels decodes the level table b (h.levelBytes() bytes at off) into
// h.Levels, whose length parseHeader set.
func parseLevels(b []byte, h *Header, off int64) error {
	q := len(h.Levels)
	if crc(b[:4*q]) != le.Uint32(b[4*q:]) {
		return badSum(off+4*int64(q), "level table checksum")
	}
	for i := range h.Levels {
		h.Levels[i] = lambda.Lambda(le.Uint32(b[4*i:]))
	}
	if err := checkLevels(h.Levels, h.Lambda); err != nil {
		return corrupt(off, "level table: %v", err)
	}
	return nil
}

func (h *Header) marshal() []byte {
	b := make([]byte, HeaderSize)
	copy(b, magic[:])
	le.PutUint16(b[8:], uint16(h.Version))
	var flags uint16
	if h.ModelEmbedded {
		flags |= flagEmbeddedModel
	}
	le.PutUint16(b[10:], flags)
	le.PutUint16(b[12:], uint16(h.Geom.S-1))
	le.PutUint16(b[14:], uint16(h.Geom.M-1))
	le.PutUint32(b[16:], uint32(h.Geom.K))
	b[20] = byte(h.Precision)
	b[21] = byte(h.Lanes)
	b[22] = byte(len(h.Levels))
	le.PutUint32(b[24:], uint32(h.KeyframeInterval))
	le.PutUint32(b[28:], uint32(h.Lambda))
	copy(b[32:48], h.ModelID[:])
	le.PutUint32(b[48:], uint32(h.ModelSize))
	le.PutUint32(b[60:], crc(b[:60]))
	return b
}

// parseHeader decodes and validates the 64 header bytes. Versions are
// checked before the checksum so that a future version with another header
// layout is reported as such.
func parseHeader(b []byte) (Header, error) {
	var h Header
	if [8]byte(b[:8]) != magic {
		return h, corrupt(0, "not a .wmz file (bad magic)")
	}
	h.Version = int(le.Uint16(b[8:]))
	if h.Version < MinVersion || h.Version > Version {
		return h, &UnsupportedError{Offset: 8, Msg: "version " + strconv.Itoa(h.Version), Err: ErrVersion}
	}
	if crc(b[:60]) != le.Uint32(b[60:]) {
		return h, badSum(60, "header checksum")
	}
	flags := le.Uint16(b[10:])
	if flags&^flagEmbeddedModel != 0 {
		return h, corrupt(10, "reserved flag bits set")
	}
	if b[23] != 0 {
		return h, corrupt(23, "reserved header byte 23 not zero")
	}
	if le.Uint64(b[52:]) != 0 {
		return h, corrupt(52, "reserved header bytes 52..59 not zero")
	}
	if q := int(b[22]); q == 1 || q > MaxLevels {
		return h, corrupt(22, "%d retention levels (0 or 2..%d)", q, MaxLevels)
	} else if q > 0 {
		h.Levels = make([]lambda.Lambda, q) // filled by parseLevels
	}
	h.ModelEmbedded = flags&flagEmbeddedModel != 0
	h.Geom = wm.Geometry{S: int(le.Uint16(b[12:])) + 1, M: int(le.Uint16(b[14:])) + 1, K: int(le.Uint32(b[16:]))}
	h.Precision = uint(b[20])
	h.Lanes = int(b[21])
	h.KeyframeInterval = int(le.Uint32(b[24:]))
	h.Lambda = lambda.Lambda(le.Uint32(b[28:]))
	copy(h.ModelID[:], b[32:48])
	h.ModelSize = int64(le.Uint32(b[48:]))
	switch {
	case h.Geom.S > wm.MaxSlots || h.Geom.M > wm.MaxSubspaces || h.Geom.N() > wm.MaxCoords:
		return h, corrupt(12, "geometry %dx%d out of range", h.Geom.S, h.Geom.M)
	case h.Precision < rans.MinPrecision || h.Precision > rans.MaxPrecision:
		return h, corrupt(20, "precision %d out of range", h.Precision)
	case h.Geom.K < 2 || h.Geom.K > wm.MaxAlphabet || uint64(h.Geom.K) > 1<<h.Precision:
		return h, corrupt(16, "alphabet %d out of range", h.Geom.K)
	case h.Lanes < 1 || h.Lanes > rans.MaxLanes:
		return h, corrupt(21, "lanes %d out of range", h.Lanes)
	case h.KeyframeInterval < 1 || h.KeyframeInterval > MaxKeyframeInterval:
		return h, corrupt(24, "keyframe interval %d out of range", h.KeyframeInterval)
	case int64(h.KeyframeInterval)*int64(h.Geom.N()) > MaxChunkCoords:
		return h, corrupt(24, "keyframe interval %d times %d coordinates exceeds 2^24", h.KeyframeInterval, h.Geom.N())
	case h.ModelSize > MaxModelBytes:
		return h, corrupt(48, "model size %d exceeds 2^30", h.ModelSize)
	case h.ModelEmbedded != (h.ModelSize > 0):
		return h, corrupt(48, "model size %d inconsistent with flags", h.ModelSize)
	}
	return h, nil
}

// memory is the decoder's working set implied by the header: the embedded
// model, twice (bytes and parsed form), and one decoded chunk.
func (h *Header) memory() int64 {
	g, n := int64(h.KeyframeInterval), int64(h.Geom.N())
	return 2*h.ModelSize + g*(2*n+8)
}

// trailer is the fixed-size structure closing the file.
type trailer struct {
	indexOffset, indexLength int64
	indexCRC                 uint32
}

func (t *trailer) marshal() []byte {
	b := make([]byte, TrailerSize)
	le.PutUint64(b[0:], uint64(t.indexOffset))
	le.PutUint64(b[8:], uint64(t.indexLength))
	le.PutUint32(b[16:], t.indexCRC)
	le.PutUint32(b[20:], crc(b[:20]))
	copy(b[24:], trailerMagic[:])
	return b
}

// parseTrailer validates a trailer found at offset off of a file of the
// given size.
func parseTrailer(b []byte, off int64) (trailer, error) {
	var t trailer
	if [4]byte(b[24:28]) != trailerMagic {
		return t, corrupt(off+24, "bad trailer magic")
	}
	if crc(b[:20]) != le.Uint32(b[20:]) {
		return t, badSum(off+20, "trailer checksum")
	}
	ioff, il := le.Uint64(b[0:]), le.Uint64(b[8:])
	if ioff > uint64(off) || il != uint64(off)-ioff {
		return t, corrupt(off, "index offset %d and length %d do not end at the trailer", ioff, il)
	}
	if il < indexHdrSize {
		return t, corrupt(off+8, "index length %d below %d", il, indexHdrSize)
	}
	t.indexOffset, t.indexLength, t.indexCRC = int64(ioff), int64(il), le.Uint32(b[16:])
	return t, nil
}

// chunkRef locates one chunk record.
type chunkRef struct {
	offset int64
	length int64 // whole record, checksum included
	states int64 // states in the chunk
	first  int64 // step of the chunk's first state in its episode
}

// episodeRef is one episode of the index.
type episodeRef struct {
	offset  int64 // of the episode record
	states  int64
	metaLen int64
	chunks  []chunkRef
	synth   []byte // metadata of a record recovery writes anew (offset then -1)
}

// index is the decoded index plus the totals it records.
type index struct {
	episodes    []episodeRef
	states      int64
	chunks      int64
	idealCodes  uint64 // 2^-16 bits
	idealAction uint64 // 2^-16 bits
	retained    uint64 // coded (retained) coordinates
	report      Report // version 4
}

// Report is what the writer of a file measured of its distortion, kept at
// the end of its index (container version 4) for readers: informative,
// as no decoder can check it. Distortions are relative squared errors,
// per slot vector (squared error over the squared norm of the vector it
// stands for), summed; a count of 0 means not measured.
type Report struct {
	// Slots is the number of slot vectors measured against the lossless
	// reconstruction (the codes written), Retention the sum of the
	// distortion retention gave them (Measure).
	Slots     uint64
	Retention float64
	// SourceSlots is the number of slot vectors measured against the
	// floats they were quantized from, Source the sum of their relative
	// squared error and Cosine the sum of their cosine similarity.
	SourceSlots uint64
	Source      float64
	Cosine      float64
}

// RetentionDistortion is the mean distortion retention gave the measured
// slot vectors, 0 when none was measured.
func (r Report) RetentionDistortion() float64 { return mean(r.Retention, r.Slots) }

// SourceDistortion is the mean relative squared error against the source
// floats, 0 when none was measured.
func (r Report) SourceDistortion() float64 { return mean(r.Source, r.SourceSlots) }

// SourceCosine is the mean cosine similarity to the source floats, 1 when
// none was measured.
func (r Report) SourceCosine() float64 {
	if r.SourceSlots == 0 {
		return 1
	}
	return r.Cosine / float64(r.SourceSlots)
}

func mean(sum float64, n uint64) float64 {
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// add returns the report of both.
func (r Report) add(o Report) Report {
	return Report{Slots: r.Slots + o.Slots, Retention: r.Retention + o.Retention,
		SourceSlots: r.SourceSlots + o.SourceSlots, Source: r.Source + o.Source, Cosine: r.Cosine + o.Cosine}
}

// scaled returns r over at most slots slot vectors, its means kept: the
// report of a file recovered with fewer states than were measured.
func (r Report) scaled(slots uint64) Report {
	if r.Slots > slots {
		k := float64(slots) / float64(r.Slots)
		r.Slots, r.Retention = slots, r.Retention*k
	}
	if r.SourceSlots > slots {
		k := float64(slots) / float64(r.SourceSlots)
		r.SourceSlots, r.Source, r.Cosine = slots, r.Source*k, r.Cosine*k
	}
	return r
}

func (r Report) marshal(b []byte) []byte {
	b = le.AppendUint64(b, r.Slots)
	b = le.AppendUint64(b, math.Float64bits(r.Retention))
	b = le.AppendUint64(b, r.SourceSlots)
	b = le.AppendUint64(b, math.Float64bits(r.Source))
	return le.AppendUint64(b, math.Float64bits(r.Cosine))
}

// parseReport reads the writer's report b (reportLen bytes at offset off)
// of an index of the given states and coordinates per state (a slot
// vector has at least one).
func parseReport(b []byte, off int64, states int64, slots int) (Report, error) {
	r := Report{Slots: le.Uint64(b), Retention: math.Float64frombits(le.Uint64(b[8:])),
		SourceSlots: le.Uint64(b[16:]), Source: math.Float64frombits(le.Uint64(b[24:])),
		Cosine: math.Float64frombits(le.Uint64(b[32:]))}
	most := uint64(states) * uint64(slots)
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case r.Slots > most || r.SourceSlots > most:
		return r, corrupt(off, "report of %d and %d slot vectors, the file has %d", r.Slots, r.SourceSlots, most)
	case !finite(r.Retention) || !finite(r.Source) || !finite(r.Cosine) || r.Retention < 0 || r.Source < 0:
		return r, corrupt(off+8, "report holds a negative or non-finite distortion")
	case math.Abs(r.Cosine) > float64(r.SourceSlots):
		return r, corrupt(off+32, "report's cosine sum exceeds its %d slot vectors", r.SourceSlots)
	}
	return r, nil
}

// marshal returns the index bytes of container version v.
func (x *index) marshal(v int) []byte {
	n := indexHdrSize + indexEpisodeLen*len(x.episodes) + indexChunkLen*int(x.chunks)
	if v >= 4 {
		n += reportLen
	}
	b := make([]byte, indexHdrSize, n)
	b[0] = tagIndex
	le.PutUint32(b[4:], uint32(len(x.episodes)))
	le.PutUint64(b[8:], uint64(x.states))
	le.PutUint64(b[16:], uint64(x.chunks))
	le.PutUint64(b[24:], x.idealCodes)
	le.PutUint64(b[32:], x.idealAction)
	le.PutUint64(b[40:], x.retained)
	for _, e := range x.episodes {
		b = le.AppendUint64(b, uint64(e.offset))
		b = le.AppendUint64(b, uint64(e.states))
		b = le.AppendUint32(b, uint32(len(e.chunks)))
		b = le.AppendUint32(b, uint32(e.metaLen))
		for _, c := range e.chunks {
			b = le.AppendUint64(b, uint64(c.offset))
			b = le.AppendUint32(b, uint32(c.length))
			b = le.AppendUint32(b, uint32(c.states))
		}
	}
	if v >= 4 {
		b = x.report.marshal(b)
	}
	return b
}

// parseIndex decodes the index of a file of header h whose checksum was
// verified, and checks that its records tile the body [bodyStart,
// indexOffset) exactly and that its counts agree: every chunk holds 1..G
// states and an episode's chunks hold its states.
func parseIndex(b []byte, off, bodyStart int64, h *Header) (*index, error) {
	g := int64(h.KeyframeInterval)
	if len(b) < indexHdrSize+indexReport(h) {
		return nil, corrupt(off, "index too short")
	}
	var rb []byte // the report of version 4
	if n := indexReport(h); n > 0 {
		b, rb = b[:len(b)-n], b[len(b)-n:]
	}
	if b[0] != tagIndex {
		return nil, corrupt(off, "bad index tag")
	}
	if b[1] != 0 || b[2] != 0 || b[3] != 0 {
		return nil, corrupt(off+1, "reserved bytes of the index not zero")
	}
	ne, nt, nc := uint64(le.Uint32(b[4:])), le.Uint64(b[8:]), le.Uint64(b[16:])
	if ne > MaxEpisodes {
		return nil, corrupt(off+4, "index of %d episodes, above 2^24", ne)
	}
	if nt > MaxStates {
		return nil, corrupt(off+8, "index of %d states, above 2^48", nt)
	}
	x := &index{states: int64(nt), idealCodes: le.Uint64(b[24:]), idealAction: le.Uint64(b[32:]),
		retained: le.Uint64(b[40:])}
	// Exact size in 64 bits before allocating: ne, nc < 2^32 and 2^64/12.
	rest := uint64(len(b) - indexHdrSize)
	if nc > rest/indexChunkLen || ne > rest/indexEpisodeLen || ne*indexEpisodeLen+nc*indexChunkLen != rest {
		return nil, corrupt(off+4, "index length does not match its counts")
	}
	x.chunks = int64(nc)
	x.episodes = make([]episodeRef, ne)
	chunks := make([]chunkRef, nc)
	p := indexHdrSize
	pos := bodyStart
	var states, used uint64
	for i := range x.episodes {
		e := &x.episodes[i]
		eo, es := le.Uint64(b[p:]), le.Uint64(b[p+8:])
		ec, em := uint64(le.Uint32(b[p+16:])), uint64(le.Uint32(b[p+20:]))
		at := off + int64(p)
		p += indexEpisodeLen
		if em > MaxMetaBytes {
			return nil, corrupt(at+20, "episode %d metadata of %d bytes exceeds %d", i, em, MaxMetaBytes)
		}
		if eo != uint64(pos) {
			return nil, corrupt(at, "episode %d record at offset %d, not %d where the record before it ends", i, eo, pos)
		}
		switch {
		case es > MaxStates || ec > nc-used:
			return nil, corrupt(at, "episode %d of %d states and %d chunks exceeds the index's", i, es, ec)
		case ec > es:
			return nil, corrupt(at, "episode %d of %d chunks for %d states: more chunks than states", i, ec, es)
		case ec < ceilDiv(es, uint64(g)):
			return nil, corrupt(at, "episode %d of %d chunks for %d states: fewer than ⌈States/G⌉", i, ec, es)
		}
		e.offset, e.states, e.metaLen = int64(eo), int64(es), int64(em)
		pos += episodeHdrSize + int64(em) + crcSize
		states += es
		e.chunks = chunks[used : used+ec : used+ec]
		used += ec
		var first uint64
		for j := range e.chunks {
			co, cl, cn := le.Uint64(b[p:]), uint64(le.Uint32(b[p+8:])), uint64(le.Uint32(b[p+12:]))
			if cl < chunkHdrSize+crcSize || cl > chunkHdrSize+MaxStreamBytes+crcSize {
				return nil, corrupt(off+int64(p)+8, "episode %d chunk %d record length %d out of range", i, j, cl)
			}
			if co != uint64(pos) {
				return nil, corrupt(off+int64(p), "episode %d chunk %d record at offset %d, not %d where the record before it ends", i, j, co, pos)
			}
			if cn < 1 || cn > uint64(g) {
				return nil, corrupt(off+int64(p)+12, "episode %d chunk %d of %d states, not 1..G", i, j, cn)
			}
			if cn > es-first {
				return nil, corrupt(off+int64(p)+12, "episode %d chunks hold more than its %d states", i, es)
			}
			p += indexChunkLen
			e.chunks[j] = chunkRef{offset: int64(co), length: int64(cl), states: int64(cn), first: int64(first)}
			first += cn
			pos += int64(cl)
			if pos > off {
				return nil, corrupt(off+int64(p), "chunk records overlap the index")
			}
		}
		if pos > off {
			return nil, corrupt(at, "episode records overlap the index")
		}
		if first != es {
			return nil, corrupt(at, "episode %d chunks hold %d states, not %d", i, first, es)
		}
	}
	if used != nc {
		return nil, corrupt(off+16, "index Chunks %d, its episodes' %d", nc, used)
	}
	if states != uint64(x.states) {
		return nil, corrupt(off+8, "index States %d, its episodes' %d", x.states, states)
	}
	if pos != off {
		return nil, corrupt(off, "index records end at %d, before the index at %d", pos, off)
	}
	if rb != nil {
		var err error
		if x.report, err = parseReport(rb, off+int64(len(b)), x.states, h.Geom.N()); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// indexReport is the length of the writer's report that closes the index
// of a file of header h: reportLen from version 4 on, else 0.
func indexReport(h *Header) int {
	if h.Version >= 4 {
		return reportLen
	}
	return 0
}

func ceilDiv(a, b uint64) uint64 { return a/b + min(a%b, 1) }

// chunkOf returns the chunk of ep holding step (0 ≤ step < ep.states).
func (ep *episodeRef) chunkOf(step int64) int {
	c, _ := slices.BinarySearchFunc(ep.chunks, step, func(r chunkRef, s int64) int {
		switch {
		case r.first+r.states <= s:
			return -1
		case r.first > s:
			return 1
		}
		return 0
	})
	return c
}

func crc32Update(sum uint32, b []byte) uint32 { return crc32.Update(sum, castagnoli, b) }
