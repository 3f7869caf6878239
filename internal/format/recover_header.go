package format

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

// Rebuilding a damaged header. The 64 header bytes are mostly redundant
// with the rest of a complete file: the trailer and index give where the
// body starts, which with the level table's own checksum gives the size
// of the embedded model and the number of levels; the model (embedded, or
// given) gives the geometry, precision and model ID; the levels give λ.
// What nothing else records, the rANS lanes and (without levels) λ, is
// taken from the damaged header if a chunk then decodes to its
// reconstruction checksum, else searched for the same way; the keyframe
// interval is taken from the damaged header if the chunks fit it, else as
// the largest chunk. Finally the header's own checksum, when intact,
// confirms the result or finds, by one changed byte, the value of a field
// nothing else fixes.

// HeaderRepair describes what recovery rebuilt before the body
// (Recovery.Header): the header, or the embedded model.
type HeaderRepair struct {
	// Err is the damage that made the header unreadable; nil if the header
	// was intact (and the embedded model replaced).
	Err error
	// Exact reports that the rebuilt header has the checksum the damaged
	// one carries: it is the header the file was written with, byte for
	// byte. Otherwise the damage hit the checksum itself or more than one
	// field that only the header records (see Guessed).
	Exact bool
	// Guessed names the fields that only the header records and that had
	// to be taken as they read in the damaged header or, for the keyframe
	// interval, as the largest chunk, when Exact is false.
	Guessed []string
	// ModelErr is the damage of an embedded model that the model given,
	// of the file's model ID, replaced; nil if none.
	ModelErr error
	bytes    []byte // the header rebuilt, nil if intact
}

// repairHeader, for Open with recovery, rebuilds the header of a file
// whose header failed with err (see HeaderRepair). It returns err itself
// when the file is not a .wmz file at all or has no intact index and
// trailer to rebuild from.
func repairHeader(r io.ReaderAt, size int64, model *wm.Model, opts []Option, herr error) (*File, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	var fe *FormatError
	var ue *UnsupportedError
	if !cfg.recover || !errors.As(herr, &fe) && !(errors.As(herr, &ue) && ue.Offset == 8) ||
		errors.Is(herr, io.ErrUnexpectedEOF) || errors.Is(herr, ErrTooLarge) || size < HeaderSize+indexHdrSize+TrailerSize {
		return nil, herr
	}
	f := &File{r: r, size: size, cfg: cfg, h: Header{Version: Version}}
	d, err := f.readAt(0, HeaderSize, "header")
	if err != nil {
		return nil, herr
	}
	// The trailer and index, read with no header: the body starts at the
	// first record the index lists (or at the index, without episodes);
	// the index's layout gives the version.
	x, ioff, version, ok := f.rawIndex()
	if !ok {
		return nil, herr // a file cut short: nothing to rebuild from
	}
	f.h.Version = version
	body := ioff
	if len(x.episodes) > 0 {
		body = x.episodes[0].offset
	}
	h, m, err := f.headerAround(body, model, version)
	if err != nil {
		return nil, err
	}
	// A few chunks to try headers on: one intact among them proves one.
	maxN := int64(1)
	var probe []*chunkRef
	for i := range x.episodes {
		for j := range x.episodes[i].chunks {
			c := &x.episodes[i].chunks[j]
			maxN = max(maxN, c.states)
			if len(probe) < 3 {
				probe = append(probe, c)
			}
		}
	}
	rep := &HeaderRepair{Err: herr}
	// Lanes and λ: as the damaged header says if the first chunk decodes
	// so, else the first pair that decodes it.
	h.Lanes, h.KeyframeInterval = int(d[21]), int(le.Uint32(d[24:]))
	if len(h.Levels) == 0 {
		h.Lambda = lambda.Lambda(le.Uint32(d[28:]))
	}
	found := f.decodes(&h, m, probe)
	if !found {
		lambdas := []lambda.Lambda{h.Lambda, LambdaLossless}
		if len(h.Levels) > 0 {
			lambdas = lambdas[:1]
		}
		for _, l := range lambdas {
			for lanes := 1; lanes <= 32 && !found; lanes++ {
				h.Lambda, h.Lanes = l, lanes
				found = f.decodes(&h, m, probe)
			}
			if found {
				break
			}
		}
		if !found { // λ damaged: the checksum may find it
			h.Lanes, h.Lambda = int(d[21]), lambda.Lambda(le.Uint32(d[28:]))
		}
	}
	g := int64(h.KeyframeInterval)
	if g < maxN || g > MaxKeyframeInterval || g*int64(h.Geom.N()) > MaxChunkCoords {
		h.KeyframeInterval = int(maxN)
	}
	b := h.marshal()
	want := le.Uint32(d[60:])
	// The damage rebuilt; else one byte of a field only the header records;
	// else the checksum alone damaged, every field as read.
	rep.Exact = found && le.Uint32(b[60:]) == want
	if !rep.Exact {
		c, fixed, ok := f.oneByteFix(&h, b, want, maxN, m, probe)
		switch {
		case ok:
			b, h, rep.Exact = c, fixed, true
		case found && bytes.Equal(b[:60], d[:60]):
			rep.Exact = true
		case !found && !h.ModelEmbedded:
			return nil, &FormatError{Offset: 32, Msg: fmt.Sprintf("the header is damaged (%v), and no chunk decodes with the model given: it is not the one the file was written with", herr), Err: ErrModelMismatch}
		case !found:
			return nil, corrupt(0, "the header is damaged (%v), and none of the first chunks decodes under any header the rest of the file allows", herr)
		default:
			rep.Guessed = append(rep.Guessed, "keyframe interval", "lanes")
			if len(h.Levels) == 0 {
				rep.Guessed = append(rep.Guessed, "lambda")
			}
		}
	}
	if mem := h.memory(); mem > cfg.maxMemory {
		return nil, tooLarge(0, mem, cfg.maxMemory)
	}
	f.h, f.bodyStart = h, h.BodyStart()
	rep.bytes = b
	f.fixed = rep
	return f, nil
}

// rawIndex reads the trailer and the index it points to, checked against
// each other, before the header is known: it returns the index, parsed with
// the body starting at its first record, its offset, and the container
// version whose layout it has (the newest that parses).
func (f *File) rawIndex() (*index, int64, int, bool) {
	toff := f.size - TrailerSize
	tb, err := f.readAt(toff, TrailerSize, "trailer")
	if err != nil {
		return nil, 0, 0, false
	}
	t, err := parseTrailer(tb, toff)
	if err != nil || t.indexOffset < HeaderSize || 3*t.indexLength > f.cfg.maxMemory {
		return nil, 0, 0, false
	}
	ib, err := f.readAt(t.indexOffset, t.indexLength, "index")
	if err != nil || crc(ib) != t.indexCRC || len(ib) < indexHdrSize {
		return nil, 0, 0, false
	}
	body := t.indexOffset
	if le.Uint32(ib[4:]) > 0 && len(ib) >= indexHdrSize+8 {
		body = int64(le.Uint64(ib[indexHdrSize:]))
	}
	if body < HeaderSize || body > t.indexOffset {
		return nil, 0, 0, false
	}
	for v := Version; v >= MinVersion; v-- {
		// The largest geometry: its report may count up to States·N (6.7).
		h := Header{Version: v, KeyframeInterval: MaxKeyframeInterval, Geom: wm.Geometry{S: wm.MaxSlots, M: wm.MaxCoords / wm.MaxSlots}}
		if x, err := parseIndex(ib, t.indexOffset, body, &h); err == nil {
			return x, t.indexOffset, v, true
		}
	}
	return nil, 0, 0, false
}

// headerAround returns the header fields that the bytes between the header
// and body, the body's start, fix, and the model: the level table (found
// by its checksum), the embedded model (the rest, which must parse) or
// the given one.
func (f *File) headerAround(body int64, given *wm.Model, version int) (Header, *wm.Model, error) {
	for _, q := range []int{0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16} {
		h := Header{Version: version}
		if q > 0 {
			h.Levels = make([]lambda.Lambda, q)
		}
		n := h.levelBytes()
		ms := body - HeaderSize - n
		if ms < 0 || ms > MaxModelBytes {
			continue
		}
		if q > 0 {
			b, err := f.readAt(HeaderSize+ms, n, "level table")
			if err != nil || crc(b[:4*q]) != le.Uint32(b[4*q:]) {
				continue
			}
			for i := range h.Levels {
				h.Levels[i] = lambda.Lambda(le.Uint32(b[4*i:]))
			}
			h.Lambda = h.Levels[q-1]
			if checkLevels(h.Levels, h.Lambda) != nil {
				continue
			}
		}
		m := given
		if ms > 0 {
			if 2*ms > f.cfg.maxMemory {
				continue
			}
			raw, err := f.readAt(HeaderSize, ms, "embedded model")
			if err != nil {
				continue
			}
			em, err := wm.UnmarshalModelLimit(raw, f.cfg.maxMemory)
			if err != nil {
				continue
			}
			if given != nil && given.ID() != em.ID() {
				return h, nil, &FormatError{Offset: HeaderSize, Msg: "the embedded model is not the one given", Err: ErrModelMismatch}
			}
			m, h.ModelEmbedded, h.ModelSize = em, true, ms
		}
		if m == nil {
			return h, nil, &FormatError{Offset: 10, Msg: "the header is damaged and the file embeds no model: pass the model the file was written with to rebuild it", Err: ErrNoModel}
		}
		h.Geom, h.Precision, h.ModelID = m.Geom, m.Precision, m.ID()
		return h, m, nil
	}
	return Header{}, nil, corrupt(HeaderSize, "the header is damaged, and neither an embedded model nor a level table fits between it and the first record")
}

// decodes reports whether one of the chunks (true if none) decodes under
// header h and model m to its reconstruction checksum.
func (f *File) decodes(h *Header, m *wm.Model, chunks []*chunkRef) bool {
	if len(chunks) == 0 {
		return true
	}
	if h.Lanes < 1 || h.Lanes > 32 {
		return false
	}
	_, rules, err := useGate(h, m, f.cfg)
	if err != nil {
		return false
	}
	cc := newChunkCoder(h, m, rules)
	for _, c := range chunks {
		if c.states*int64(h.Geom.N()) > MaxChunkCoords || c.length > f.cfg.maxMemory {
			continue
		}
		b, err := f.readAt(c.offset, c.length, "chunk record")
		if err != nil || len(b) < chunkHdrSize+crcSize {
			continue
		}
		md, err := parseChunkMode(h, b, c.offset)
		if err != nil {
			continue
		}
		n := int(c.states)
		actions, codes := make([]int64, n), make([]uint16, n*h.Geom.N())
		if cc.decodeChunk(b[chunkHdrSize:len(b)-crcSize], md, n, le.Uint32(b[12:]), actions, codes, c.offset) == nil {
			return true
		}
	}
	return false
}

// oneByteFix looks, in the fields only the header records (lanes, keyframe
// interval, λ), for the one changed byte that gives the bytes b of header
// base the checksum want and still fits the file; it returns the header
// found and its bytes.
func (f *File) oneByteFix(base *Header, b []byte, want uint32, maxN int64, m *wm.Model, probe []*chunkRef) ([]byte, Header, bool) {
	c := append([]byte(nil), b...)
	for _, at := range []int{21, 24, 25, 26, 27, 28, 29, 30, 31} {
		if at >= 28 && c[22] > 0 {
			break // λ is the last level's
		}
		old := c[at]
		for v := range 256 {
			c[at] = byte(v)
			if byte(v) == old || crc(c[:60]) != want {
				continue
			}
			le.PutUint32(c[60:], want)
			h, err := parseHeader(c)
			h.Levels = base.Levels
			if err == nil && int64(h.KeyframeInterval) >= maxN && f.decodes(&h, m, probe) {
				return c, h, true
			}
		}
		c[at] = old
	}
	return nil, Header{}, false
}

// replaceModel, for Open with recovery, returns the model given in place
// of an embedded model that failed with err (its bytes damaged), if its ID
// is the one the header names; else err.
func (f *File) replaceModel(given *wm.Model, err error) (*wm.Model, error) {
	if !f.cfg.recover || !f.h.ModelEmbedded || given == nil || given.ID() != f.h.ModelID ||
		!errors.Is(err, ErrChecksum) && !errors.Is(err, ErrCorrupt) {
		return nil, err
	}
	if _, merr := given.MarshalBinary(); merr != nil || given.Geom != f.h.Geom || given.Precision != f.h.Precision {
		return nil, err
	}
	if f.fixed == nil {
		f.fixed = &HeaderRepair{}
	}
	f.fixed.ModelErr = err
	return given, nil
}
