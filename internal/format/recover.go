package format

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/wmzip/wmzip/internal/wm"
)

// Crash recovery. A Writer emits records in file order and the index only
// at Close, so a file cut short by a crash is a valid header, embedded
// model and a run of complete records, followed by at most one torn record.
// Recovery scans the records from the body forward, checking each one
// completely (tag, reserved bytes, limits, CRC, and for a chunk its rANS
// stream and reconstruction checksum). At a damaged record it goes on at
// the next record boundary, if one can be trusted: every chunk decodes on
// its own from its keyframe, so a damaged record loses only its own
// states. The index is then rebuilt from the records kept: exactly what a
// Writer closed after them would have written.

// WithRecovery makes Open tolerate a file cut short or damaged, as a crash
// mid-write or a bad disk leaves it: instead of reading the index from the
// trailer, it scans the records from the start of the body and keeps the
// complete, valid ones.
//
// At a damaged record the scan resynchronizes at the next record boundary
// that the file's index gives (when its trailer and checksum are intact)
// or, failing that, the damaged record's own length fields (when its
// header is plausible and the record complete). A damaged chunk loses its
// own states only: the chunks after it in its episode are kept, as a new
// episode after the file's last one (each chunk starts with a keyframe),
// whose metadata is {"recovered":{"episode":E,"step":T}}: episode E of the
// damaged file from its step T. A damaged episode record whose kind the
// index or framing tells is replaced by one whose metadata is
// {"recovered":{"episode":E,"step":0,"metadata_lost":true}}, its chunks
// kept: episode numbers stay those of the damaged file. Recovery.Gaps say
// which steps of which episode each damaged record held, and
// Recovery.Moved where the states after them went. Where no boundary can
// be trusted the scan stops (Recovery.Stop).
//
// A header that fails its checks is rebuilt from the trailer, index,
// level table and model when they are intact, the model given or
// embedded; an embedded model that fails its check is replaced by the
// model given, if its ID is the header's (HeaderRepair).
//
// Errors in the level table, and ErrTooLarge, still fail. A Reader with
// recovery reads from the record framing alone, in one pass: it keeps an
// episode up to its first damaged record, skips the rest of it, ends with
// io.EOF where the scan stops, and rebuilds neither header nor model. Append with recovery
// continues a file that was not closed, if nothing before its last valid
// record had to be skipped. Default false.
func WithRecovery(on bool) Option {
	return func(c *config) error {
		c.recover = on
		return nil
	}
}

// Recovery describes how a file opened with WithRecovery was read.
type Recovery struct {
	// End is the offset just past the last record kept in the file.
	// Without Gaps, the file Recover writes is the first End bytes (the
	// header rebuilt, if Header says so) followed by a rebuilt index and
	// trailer.
	End int64
	// Complete reports that the scan reached an index and trailer equal to
	// the rebuilt ones at the end of the file, the header intact: nothing
	// was lost or changed.
	Complete bool
	// Stop is why the scan ended before the file's index (nil if it
	// reached it): the first damage it could not step over, typically
	// io.ErrUnexpectedEOF for a cut inside a record.
	Stop error
	// Gaps are the damaged records the scan stepped over, in file order;
	// Recover leaves them out.
	Gaps []Gap
	// Moved lists where the states of the damaged file's episodes went
	// when they did not keep their episode and step: after a damaged chunk,
	// or under a damaged episode record.
	Moved []Move
	// Header is set when the header was damaged and rebuilt.
	Header *HeaderRepair
}

// A Gap is a damaged record that recovery stepped over.
type Gap struct {
	Offset, Length int64
	Err            error // the damage found
	// Indexed reports that the scan crossed it with the file's index
	// where the damaged record's own framing would not have: a Reader,
	// which has only the framing, stops there.
	Indexed bool
	// Episode is the damaged file's episode the record belonged to, -1 if
	// neither the index nor the framing tells. From and To are the steps
	// it held, [From, To): To is -1 when only the record's damaged header
	// gave no count, and From = To for an episode record (its metadata was
	// lost, not its states).
	Episode  int
	From, To int64
}

// A Move says that the states of episode Episode of the damaged file from
// step Step on (up to the next gap) are episode To of the recovered one.
type Move struct {
	Episode int
	Step    int64
	To      int
}

// recoverable reports whether err ends a recovery scan (true) or must be
// returned (false): every damage to the bytes does, a memory limit does not.
func recoverable(err error) bool {
	var fe *FormatError
	return errors.As(err, &fe) && !errors.Is(err, ErrTooLarge)
}

// indexed is what the file's index says of the record at an offset.
type indexed struct {
	off     int64
	episode int   // -1: the index itself
	chunk   bool  // a chunk record, else the episode's record
	first   int64 // a chunk's first step in its episode
	n       int64 // a chunk's states
}

// scan is the state of a recovery scan.
type scan struct {
	f       *File
	recs    []indexed // from the file's index, nil if it is damaged
	kept    []*episodeRef
	conts   []*episodeRef // episodes continued after a gap, placed last
	rec     Recovery
	cur     *episodeRef // the episode whose chunks follow; nil if none
	orig    int         // its episode in the damaged file
	step    int64       // the step of its next state there
	broken  bool        // a chunk of it was lost: the next one starts a continuation
	closed  bool        // an episode or index tag follows it: if empty, it is complete
	next    int         // the damaged file's number of the next episode record
	states  int64
	nchunks int64
	report  *Report // the writer's report in the file's intact index (version 4)
}

// scanRecords rebuilds the index of the complete, valid records that
// follow the header and embedded model, as WithRecovery describes.
func (f *File) scanRecords() error {
	h := &f.h
	g := int64(h.KeyframeInterval)
	cc := newChunkCoder(h, f.model, f.rules)
	actions := make([]int64, g)
	codes := make([]uint16, g*int64(h.Geom.N()))
	s := &scan{f: f}
	s.recs, s.report = f.indexRecords()
	s.rec.Header = f.fixed
	x := &index{}
	pos := f.bodyStart
	grow := func(k int64) error {
		size := indexHdrSize + indexEpisodeLen*int64(len(s.kept)+len(s.conts)) + indexChunkLen*s.nchunks + k
		if need := h.memory() + 3*size; need > f.cfg.maxMemory {
			return tooLarge(pos, need, f.cfg.maxMemory)
		}
		return nil
	}
	for {
		if pos >= f.size {
			return s.finish(x, false, truncated(pos, "record tag"))
		}
		tag, err := f.readAt(pos, 1, "record tag")
		if err != nil {
			return s.finish(x, false, err)
		}
		if len(s.kept)+len(s.conts) >= MaxEpisodes {
			return s.finish(x, false, corrupt(pos, "more than %d episodes", MaxEpisodes))
		}
		switch tag[0] {
		case tagEpisode:
			s.closed = true // the episode before, if empty, is complete
			if err := grow(indexEpisodeLen); err != nil {
				return err
			}
			ml, err := f.checkEpisodeRecord(pos)
			if err != nil {
				if !recoverable(err) {
					return err
				}
				if pos, err = s.damage(pos, err); err != nil {
					return s.finish(x, false, err)
				}
				continue
			}
			e := s.next
			if r := s.lookup(pos); r != nil {
				e = r.episode
			}
			s.startEpisode(e, &episodeRef{offset: pos, metaLen: ml})
			pos += episodeHdrSize + ml + crcSize
		case tagChunk:
			if err := grow(indexChunkLen + indexEpisodeLen); err != nil {
				return err
			}
			var n, length int64
			err := corrupt(pos, "chunk record outside an episode")
			if s.cur != nil {
				n, length, err = f.checkChunkRecord(cc, pos, s.states, actions, codes)
			}
			if err != nil {
				if !recoverable(err) {
					return err
				}
				if pos, err = s.damage(pos, err); err != nil {
					return s.finish(x, false, err)
				}
				continue
			}
			if r := s.lookup(pos); r != nil {
				s.step = r.first
			}
			if s.broken {
				s.continueEpisode()
			}
			s.cur.chunks = append(s.cur.chunks, chunkRef{offset: pos, length: length, states: n, first: s.cur.states})
			s.cur.states += n
			s.step += n
			s.states += n
			s.nchunks++
			x.idealCodes += cc.idealCodes
			x.idealAction += cc.idealActions
			x.retained += cc.retained
			pos += length
		case tagIndex:
			s.closed = true
			switch matches := f.indexMatches(s.index(x), pos); {
			case matches && len(s.rec.Gaps) == 0 && f.fixed == nil:
				return s.finish(x, true, nil)
			case matches || len(s.rec.Gaps) > 0: // what differs, Gaps and Header say
				return s.finish(x, false, nil)
			default:
				return s.finish(x, false, corrupt(pos, "index and trailer do not match the records"))
			}
		default:
			var err error
			if pos, err = s.damage(pos, corrupt(pos, "unexpected record tag %#x", tag[0])); err != nil {
				return s.finish(x, false, err)
			}
		}
	}
}

// startEpisode keeps episode e of the damaged file, whose record is ep.
func (s *scan) startEpisode(e int, ep *episodeRef) {
	s.kept = append(s.kept, ep)
	s.cur, s.orig, s.step, s.broken, s.closed, s.next = ep, e, 0, false, false, e+1
}

// continueEpisode starts the episode that holds the chunks of the current
// one after a gap, with metadata saying where they come from.
func (s *scan) continueEpisode() {
	meta := fmt.Appendf(nil, `{"recovered":{"episode":%d,"step":%d}}`, s.orig, s.step)
	ep := &episodeRef{offset: -1, metaLen: int64(len(meta)), synth: meta}
	s.conts = append(s.conts, ep)
	s.rec.Moved = append(s.rec.Moved, Move{Episode: s.orig, Step: s.step, To: -len(s.conts)}) // numbered in finish
	s.cur, s.broken = ep, false
}

// damage handles the damaged record at pos, found with err: it records
// the gap and the states lost, replaces a lost episode record, and returns
// where the scan goes on (err when nowhere).
func (s *scan) damage(pos int64, err error) (int64, error) {
	f := s.f
	gap := Gap{Offset: pos, Err: err, Episode: -1, From: -1, To: -1}
	kind, n := byte(0), int64(-1)
	if r := s.lookup(pos); r != nil {
		kind, n = tagEpisode, 0
		if r.chunk {
			kind, n = tagChunk, r.n
			s.orig, s.step = r.episode, r.first
		}
	} else if b, ok := f.frame(pos); ok {
		kind, n = b.tag, b.n
	}
	next, idx, ok := f.nextBoundary(pos, s.recs)
	if !ok {
		return pos, err
	}
	gap.Length, gap.Indexed = next-pos, idx
	switch {
	case kind == tagEpisode:
		e := s.next
		if r := s.lookup(pos); r != nil {
			e = r.episode
		}
		meta := fmt.Appendf(nil, `{"recovered":{"episode":%d,"step":0,"metadata_lost":true}}`, e)
		s.startEpisode(e, &episodeRef{offset: -1, metaLen: int64(len(meta)), synth: meta})
		s.rec.Moved = append(s.rec.Moved, Move{Episode: e, Step: 0, To: len(s.kept) - 1})
		gap.Episode, gap.From, gap.To = e, 0, 0
	case kind == tagChunk && s.cur != nil:
		gap.Episode, gap.From = s.orig, s.step
		if n > 0 {
			gap.To = s.step + n
			s.step += n
		}
		s.broken = true
	default:
		s.cur = nil // chunks of an unknown episode are not kept
	}
	s.rec.Gaps = append(s.rec.Gaps, gap)
	return next, nil
}

// lookup returns what the index says of the record at pos, if it lists one
// there.
func (s *scan) lookup(pos int64) *indexed {
	i, found := slices.BinarySearchFunc(s.recs, pos, func(r indexed, p int64) int { return cmp.Compare(r.off, p) })
	if !found || s.recs[i].episode < 0 {
		return nil
	}
	return &s.recs[i]
}

// index returns the index of the records kept so far, in their order in
// the recovered file, with the totals sums holds.
func (s *scan) index(sums *index) *index {
	x := *sums
	x.episodes = make([]episodeRef, 0, len(s.kept)+len(s.conts))
	for _, e := range slices.Concat(s.kept, s.conts) {
		x.episodes = append(x.episodes, *e)
	}
	x.states, x.chunks = s.states, s.nchunks
	return &x
}

// finish ends the scan: the File's index becomes the records kept. An
// episode record the scan stopped after, before any chunk of it and with
// no damaged chunk stepped over, is dropped: its states, if any, were
// lost, and it is the last episode.
func (s *scan) finish(sums *index, complete bool, stop error) error {
	f := s.f
	if n := len(s.kept); stop != nil && n > 0 && s.cur == s.kept[n-1] && len(s.cur.chunks) == 0 && s.cur.synth == nil && !s.closed && !s.broken {
		s.kept = s.kept[:n-1]
	}
	x := s.index(sums)
	if r := s.report; r != nil {
		// The writer's means, over the slot vectors kept.
		x.report = r.scaled(uint64(x.states) * uint64(f.h.Geom.N()))
	}
	for i := range s.rec.Moved {
		if m := &s.rec.Moved[i]; m.To < 0 {
			m.To = len(s.kept) - 1 - m.To
		}
	}
	f.idx, f.rec = x, &s.rec
	s.rec.Complete = complete
	s.rec.End = f.bodyStart
	for _, e := range x.episodes {
		if e.synth == nil {
			s.rec.End = max(s.rec.End, e.offset+episodeHdrSize+e.metaLen+crcSize)
		}
		for _, c := range e.chunks {
			s.rec.End = max(s.rec.End, c.offset+c.length)
		}
	}
	if !complete {
		s.rec.Stop = stop
	}
	return nil
}

// indexRecords returns every record the file's index lists, and the index
// itself last (episode -1), in file order, with the writer's report, if its
// trailer and index are intact; else nil.
func (f *File) indexRecords() ([]indexed, *Report) {
	if err := f.readIndex(f.h.memory()); err != nil {
		return nil, nil
	}
	x := f.idx
	f.idx = nil
	recs := make([]indexed, 0, len(x.episodes)+int(x.chunks)+1)
	for e, ep := range x.episodes {
		recs = append(recs, indexed{off: ep.offset, episode: e})
		for _, c := range ep.chunks {
			recs = append(recs, indexed{off: c.offset, episode: e, chunk: true, first: c.first, n: c.states})
		}
	}
	return append(recs, indexed{off: payloadEnd(x, f.bodyStart), episode: -1}), &x.report // the records tile the body
}

// nextBoundary returns where a scan goes on after a damaged record at
// pos: the next record boundary of the index if any, else the end of the
// record its header frames. byIndex reports that the index gave a
// boundary the framing would not have.
func (f *File) nextBoundary(pos int64, recs []indexed) (next int64, byIndex, ok bool) {
	b, fok := f.frame(pos)
	if i, _ := slices.BinarySearchFunc(recs, pos+1, func(r indexed, p int64) int { return cmp.Compare(r.off, p) }); i < len(recs) {
		return recs[i].off, !fok || b.end != recs[i].off, true
	}
	return b.end, false, fok
}

// framed is a record as its own header frames it.
type framed struct {
	tag byte
	end int64 // offset just past it
	n   int64 // a chunk's states
}

// frame returns the record at pos as its header declares it, if the
// header is plausible (tag, reserved bytes, counts within limits) and the
// record lies within the file.
func (f *File) frame(pos int64) (framed, bool) {
	b, err := f.readAt(pos, min(chunkHdrSize, f.size-pos), "record header")
	if err != nil || len(b) < episodeHdrSize {
		return framed{}, false
	}
	var length, n int64
	switch b[0] {
	case tagEpisode:
		if b[1] != 0 || b[2] != 0 || b[3] != 0 {
			return framed{}, false
		}
		ml := int64(le.Uint32(b[4:]))
		if ml > MaxMetaBytes {
			return framed{}, false
		}
		length = episodeHdrSize + ml + crcSize
	case tagChunk:
		if len(b) < chunkHdrSize {
			return framed{}, false
		}
		if _, err := parseChunkMode(&f.h, b, pos); err != nil {
			return framed{}, false
		}
		var sl int64
		n, sl = int64(le.Uint32(b[4:])), int64(le.Uint32(b[8:]))
		if n < 1 || n > int64(f.h.KeyframeInterval) || sl > MaxStreamBytes {
			return framed{}, false
		}
		length = chunkHdrSize + sl + crcSize
	default:
		return framed{}, false
	}
	if length > f.size-pos {
		return framed{}, false
	}
	return framed{tag: b[0], end: pos + length, n: n}, true
}

// payloadEnd is the offset just past the last record of x, or bodyStart.
func payloadEnd(x *index, bodyStart int64) int64 {
	end := bodyStart
	if n := len(x.episodes); n > 0 {
		e := &x.episodes[n-1]
		end = e.offset + episodeHdrSize + e.metaLen + crcSize
		if k := len(e.chunks); k > 0 {
			end = e.chunks[k-1].offset + e.chunks[k-1].length
		}
	}
	return end
}

// checkEpisodeRecord checks the episode record at off and returns its
// metadata length.
func (f *File) checkEpisodeRecord(off int64) (int64, error) {
	b, err := f.readAt(off, episodeHdrSize, "episode record")
	if err != nil {
		return 0, err
	}
	if b[1] != 0 || b[2] != 0 || b[3] != 0 {
		return 0, corrupt(off+1, "reserved bytes of episode record not zero")
	}
	ml := int64(le.Uint32(b[4:]))
	if ml > MaxMetaBytes {
		return 0, corrupt(off+4, "metadata of %d bytes exceeds %d", ml, MaxMetaBytes)
	}
	b, err = f.readAt(off, episodeHdrSize+ml+crcSize, "episode record")
	if err != nil {
		return 0, err
	}
	end := episodeHdrSize + ml
	if crc(b[:end]) != le.Uint32(b[end:]) {
		return 0, badSum(off+end, "episode record checksum")
	}
	if ml > 0 && !json.Valid(b[episodeHdrSize:end]) {
		return 0, corrupt(off+episodeHdrSize, "episode metadata is not JSON")
	}
	return ml, nil
}

// checkChunkRecord checks and decodes the chunk record at off, the file
// holding states before it, and returns its states and its length.
func (f *File) checkChunkRecord(cc *chunkCoder, off, states int64, actions []int64, codes []uint16) (n, length int64, err error) {
	b, err := f.readAt(off, chunkHdrSize, "chunk record")
	if err != nil {
		return 0, 0, err
	}
	md, err := parseChunkMode(&f.h, b, off)
	if err != nil {
		return 0, 0, err
	}
	n = int64(le.Uint32(b[4:]))
	sl := int64(le.Uint32(b[8:]))
	switch {
	case n < 1 || n > int64(f.h.KeyframeInterval):
		return 0, 0, corrupt(off+4, "chunk of %d states (keyframe interval %d)", n, f.h.KeyframeInterval)
	case states+n > MaxStates:
		return 0, 0, corrupt(off+4, "more than %d states", int64(MaxStates))
	case sl > MaxStreamBytes:
		return 0, 0, corrupt(off+8, "stream of %d bytes exceeds %d", sl, MaxStreamBytes)
	}
	if need := f.h.memory() + sl; need > f.cfg.maxMemory {
		return 0, 0, tooLarge(off+8, need, f.cfg.maxMemory)
	}
	length = chunkHdrSize + sl + crcSize
	if b, err = f.readAt(off, length, "chunk record"); err != nil {
		return 0, 0, err
	}
	end := chunkHdrSize + sl
	if crc(b[:end]) != le.Uint32(b[end:]) {
		return 0, 0, badSum(off+end, "chunk record checksum")
	}
	if err := cc.decodeChunk(b[chunkHdrSize:end], md, int(n), le.Uint32(b[12:]), actions, codes, off); err != nil {
		return 0, 0, err
	}
	return n, length, nil
}

// indexMatches reports whether the file ends, at off, with exactly the
// index x and its trailer.
func (f *File) indexMatches(x *index, off int64) bool {
	want := x.marshal(f.h.Version)
	if f.size-off != int64(len(want))+TrailerSize {
		return false
	}
	b, err := f.readAt(off, f.size-off, "index")
	if err != nil {
		return false
	}
	// The records give every byte but the writer's report (version 4).
	n := len(want) - indexReport(&f.h)
	if n < len(want) {
		if x.report, err = parseReport(b[n:len(want)], off+int64(n), x.states, f.h.Geom.N()); err != nil {
			return false
		}
		want = x.marshal(f.h.Version)
	}
	t, err := parseTrailer(b[len(want):], f.size-TrailerSize)
	return err == nil && t.indexOffset == off && t.indexCRC == crc(want) && string(b[:len(want)]) == string(want)
}

// Recovered reports how a file opened with WithRecovery was read; ok is
// false for a file opened without it.
func (f *File) Recovered() (r Recovery, ok bool) {
	if f.rec == nil {
		return Recovery{}, false
	}
	return *f.rec, true
}

// Recover reads the file of the given size from r in recovery mode (see
// WithRecovery) and writes to w a complete file holding exactly the
// episodes and chunks recovery kept: the header (rebuilt if it was
// damaged), embedded model and level table, the records kept, unchanged
// and in order (without Recovery.Gaps, the bytes up to Recovery.End),
// then the episode records of the episodes continued after a gap, each
// followed by its chunks, and the index and trailer a Writer would have
// written after them. A complete file is copied unchanged. model may be
// nil if the file embeds its model. It returns what was recovered and the
// Info of the file written.
func Recover(w io.Writer, r io.ReaderAt, size int64, model *wm.Model, opts ...Option) (Recovery, Info, error) {
	f, err := Open(r, size, model, append(opts[:len(opts):len(opts)], WithRecovery(true))...)
	if err != nil {
		return Recovery{}, Info{}, err
	}
	rec, _ := f.Recovered()
	// Copy the kept bytes, joining adjacent spans.
	from, to := int64(0), f.bodyStart // pending span
	bodyStart := f.bodyStart
	if fix := f.fixed; fix != nil {
		head := fix.bytes
		if fix.ModelErr != nil { // the model given in place of the damaged one
			mb, _ := f.model.MarshalBinary()
			h := f.h
			h.ModelSize = int64(len(mb))
			head = slices.Concat(h.marshal(), mb, h.marshalLevels())
			from, to, bodyStart = f.bodyStart, f.bodyStart, h.BodyStart()
		} else {
			from = HeaderSize
		}
		if _, err := w.Write(head); err != nil {
			return rec, Info{}, err
		}
	}
	x := f.idx.relocate(bodyStart)
	flush := func() error {
		_, err := io.Copy(w, io.NewSectionReader(r, from, to-from))
		return err
	}
	span := func(off, n int64) error {
		if off != to {
			if err := flush(); err != nil {
				return err
			}
			from = off
		}
		to = off + n
		return nil
	}
	for _, e := range f.idx.episodes {
		if e.synth != nil {
			if err := flush(); err != nil {
				return rec, Info{}, err
			}
			if _, err := w.Write(appendEpisodeRecord(nil, e.synth)); err != nil {
				return rec, Info{}, err
			}
			from, to = 0, 0
		} else if err := span(e.offset, episodeHdrSize+e.metaLen+crcSize); err != nil {
			return rec, Info{}, err
		}
		for _, c := range e.chunks {
			if err := span(c.offset, c.length); err != nil {
				return rec, Info{}, err
			}
		}
	}
	if err := flush(); err != nil {
		return rec, Info{}, err
	}
	end := payloadEnd(x, bodyStart)
	ix := x.marshal(f.h.Version)
	t := trailer{indexOffset: end, indexLength: int64(len(ix)), indexCRC: crc(ix)}
	if _, err := w.Write(append(ix, t.marshal()...)); err != nil {
		return rec, Info{}, err
	}
	info := f.Info()
	info.FileBytes = end + int64(len(ix)) + TrailerSize
	info.PayloadBytes = end - bodyStart
	info.IndexBytes = info.FileBytes - end
	return rec, info, nil
}

// relocate returns a copy of x whose records are laid end to end from
// bodyStart, in order.
func (x *index) relocate(bodyStart int64) *index {
	y := *x
	y.episodes = make([]episodeRef, len(x.episodes))
	pos := bodyStart
	for i, e := range x.episodes {
		e.offset = pos
		pos += episodeHdrSize + e.metaLen + crcSize
		e.chunks = slices.Clone(e.chunks)
		for j := range e.chunks {
			e.chunks[j].offset = pos
			pos += e.chunks[j].length
		}
		y.episodes[i] = e
	}
	return &y
}
