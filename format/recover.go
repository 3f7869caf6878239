package format

import (
	"encoding/json"
	"errors"
	"io"
	"slices"

	"github.com/wmzip/wmzip/wm"
)

// Crash recovery. A Writer emits records in file order and the index only
// at Close, so a file cut short by a crash is a valid header, embedded
// model and a run of complete records, followed by at most one torn record.
// Recovery scans the records from the body forward, checking each one
// completely (tag, reserved bytes, limits, CRC, and for a chunk its rANS
// stream and reconstruction checksum). At a damaged record it skips to the
// next record boundary, if one can be trusted, and on to the next valid
// episode record. The index is then rebuilt from the records kept: exactly
// what a Writer closed after them would have written.

// WithRecovery makes Open tolerate a file cut short or damaged after its
// header and embedded model, as a crash mid-write leaves it: instead of
// reading the index from the trailer, it scans the records from the start
// of the body and keeps the complete, valid ones.
//
// At a damaged record the scan resynchronizes at the next record boundary
// that the file's index gives (when its trailer and checksum are intact)
// or, failing that, the damaged record's own length fields (when its
// header is plausible and the record complete), and skips the rest of the
// damaged episode: an episode keeps its chunks before the first damaged
// one, so no episode has a hole. An episode record followed by damage or
// by the end of the file, before any chunk of it was kept, is dropped: its
// states were lost, and an empty episode would misstate them. Where no
// boundary can be trusted the scan stops (File.Recovered tells where).
//
// A Reader with recovery does the same from the record framing alone (it
// cannot see the index first), and ends with io.EOF where the scan stops.
// Errors in the header or model, and ErrTooLarge, still fail. Append with
// recovery continues a file that was not closed, if nothing before its
// last valid record had to be skipped. Default false.
func WithRecovery(on bool) Option {
	return func(c *config) error {
		c.recover = on
		return nil
	}
}

// Recovery describes how a file opened with WithRecovery was read.
type Recovery struct {
	// End is the offset just past the last record kept. Without Gaps, the
	// file Recover writes is the first End bytes followed by a rebuilt
	// index and trailer.
	End int64
	// Complete reports that the scan reached an index and trailer equal to
	// the rebuilt ones at the end of the file: nothing was lost.
	Complete bool
	// Stop is why nothing after End was kept (nil if Complete): the first
	// damage after End, typically io.ErrUnexpectedEOF for a cut inside a
	// record.
	Stop error
	// Gaps are the damaged spans before End that the scan skipped, in file
	// order; Recover leaves them out.
	Gaps []Gap
}

// A Gap is a span of a file that recovery skipped: from a damaged record
// (or the record of an episode that lost its first chunk to it) to the
// next episode record kept.
type Gap struct {
	Offset, Length int64
	Err            error // the damage found at its start
	// Indexed reports that the scan crossed it with the file's index
	// where the damaged records' own framing would not have: a Reader,
	// which has only the framing, stops there.
	Indexed bool
}

// recoverable reports whether err ends a recovery scan (true) or must be
// returned (false): every damage to the bytes does, a memory limit does not.
func recoverable(err error) bool {
	var fe *FormatError
	return errors.As(err, &fe) && !errors.Is(err, ErrTooLarge)
}

// scanRecords rebuilds the index of the complete, valid records that
// follow the header and embedded model, skipping damaged ones as
// WithRecovery describes.
func (f *File) scanRecords() error {
	h := &f.h
	g := int64(h.KeyframeInterval)
	cc := newChunkCoder(h, f.model, f.rules)
	actions := make([]int64, g)
	codes := make([]uint16, g*int64(h.Geom.N()))
	x := &index{}
	rec := &Recovery{}
	bounds := f.indexBounds()
	pos := f.bodyStart
	var cur *episodeRef // episode whose chunks follow; nil between episodes or while skipping
	gap := Gap{Offset: -1}
	finish := func(complete bool, stop error) error {
		if cur != nil && len(cur.chunks) == 0 {
			x.episodes = x.episodes[:len(x.episodes)-1]
		}
		if gap.Offset >= 0 {
			stop = gap.Err
		}
		f.idx = x
		f.rec = rec
		rec.Complete = complete
		rec.End = payloadEnd(x, f.bodyStart)
		if !complete {
			rec.Stop = stop
		}
		return nil
	}
	// damage handles a bad record at pos: it drops an episode that has no
	// chunk yet, opens a gap, and finds where to go on (false: nowhere).
	damage := func(err error) bool {
		if gap.Offset < 0 {
			gap = Gap{Offset: pos, Err: err}
			if cur != nil && len(cur.chunks) == 0 {
				gap.Offset = cur.offset
				x.episodes = x.episodes[:len(x.episodes)-1]
			}
		}
		cur = nil
		next, indexed, ok := f.nextBoundary(pos, bounds)
		if ok {
			gap.Indexed = gap.Indexed || indexed
			pos = next // always past pos
		}
		return ok
	}
	grow := func(k int64) error {
		size := indexHdrSize + indexEpisodeLen*int64(len(x.episodes)) + indexChunkLen*x.chunks + k
		if need := h.memory() + 3*size; need > f.cfg.maxMemory {
			return tooLarge(pos, need, f.cfg.maxMemory)
		}
		return nil
	}
	for {
		if pos >= f.size {
			return finish(false, truncated(pos, "record tag"))
		}
		tag, err := f.readAt(pos, 1, "record tag")
		if err != nil {
			return finish(false, err)
		}
		switch {
		case tag[0] == tagEpisode:
			cur = nil // the episode before, if empty, is complete
			if len(x.episodes) >= MaxEpisodes {
				return finish(false, corrupt(pos, "more than %d episodes", MaxEpisodes))
			}
			if err := grow(indexEpisodeLen); err != nil {
				return err
			}
			ml, err := f.checkEpisodeRecord(pos)
			if err != nil {
				if !recoverable(err) {
					return err
				}
				if !damage(err) {
					return finish(false, err)
				}
				continue
			}
			if gap.Offset >= 0 {
				gap.Length = pos - gap.Offset
				rec.Gaps = append(rec.Gaps, gap)
				gap = Gap{Offset: -1}
			}
			x.episodes = append(x.episodes, episodeRef{offset: pos, metaLen: ml})
			cur = &x.episodes[len(x.episodes)-1]
			pos += episodeHdrSize + ml + crcSize
		case tag[0] == tagChunk && cur != nil:
			if err := grow(indexChunkLen); err != nil {
				return err
			}
			n, length, err := f.checkChunkRecord(cc, pos, x.states, actions, codes)
			if err != nil {
				if !recoverable(err) {
					return err
				}
				if !damage(err) {
					return finish(false, err)
				}
				continue
			}
			cur.chunks = append(cur.chunks, chunkRef{offset: pos, length: length, states: n, first: cur.states})
			cur.states += n
			x.states += n
			x.chunks++
			x.idealCodes += cc.idealCodes
			x.idealAction += cc.idealActions
			x.retained += cc.retained
			pos += length
		case tag[0] == tagChunk:
			// A chunk of an episode being skipped, or outside any episode.
			err := corrupt(pos, "chunk record outside an episode")
			if !damage(err) {
				return finish(false, err)
			}
		case tag[0] == tagIndex:
			cur = nil
			if gap.Offset < 0 && f.indexMatches(x, pos) {
				return finish(true, nil)
			}
			if len(rec.Gaps) > 0 {
				return finish(false, corrupt(pos, "index reached after skipping damaged records"))
			}
			return finish(false, corrupt(pos, "index and trailer do not match the records"))
		default:
			err := corrupt(pos, "unexpected record tag %#x", tag[0])
			if !damage(err) {
				return finish(false, err)
			}
		}
	}
}

// indexBounds returns the offsets of every record and of the index, in
// file order, from the file's index if its trailer and index are intact;
// else nil.
func (f *File) indexBounds() []int64 {
	if err := f.readIndex(f.h.memory()); err != nil {
		return nil
	}
	x := f.idx
	f.idx = nil
	b := make([]int64, 0, len(x.episodes)+int(x.chunks)+1)
	for _, e := range x.episodes {
		b = append(b, e.offset)
		for _, c := range e.chunks {
			b = append(b, c.offset)
		}
	}
	return append(b, payloadEnd(x, f.bodyStart)) // the index: the records tile the body
}

// nextBoundary returns where a scan goes on after a damaged record at
// pos: the next record boundary of the index bounds if any, else the end
// of the record its header frames. indexed reports that the index gave a
// boundary the framing would not have.
func (f *File) nextBoundary(pos int64, bounds []int64) (next int64, indexed, ok bool) {
	framed, fok := f.frame(pos)
	if i, _ := slices.BinarySearch(bounds, pos+1); i < len(bounds) {
		return bounds[i], !fok || framed != bounds[i], true
	}
	return framed, false, fok
}

// frame returns the end of the record at pos as its header declares it,
// if the header is plausible (tag, reserved bytes, counts within limits)
// and the record lies within the file.
func (f *File) frame(pos int64) (int64, bool) {
	b, err := f.readAt(pos, min(chunkHdrSize, f.size-pos), "record header")
	if err != nil || len(b) < episodeHdrSize || b[1] != 0 || b[2] != 0 || b[3] != 0 {
		return 0, false
	}
	var length int64
	switch b[0] {
	case tagEpisode:
		ml := int64(le.Uint32(b[4:]))
		if ml > MaxMetaBytes {
			return 0, false
		}
		length = episodeHdrSize + ml + crcSize
	case tagChunk:
		if len(b) < chunkHdrSize {
			return 0, false
		}
		n, sl := int64(le.Uint32(b[4:])), int64(le.Uint32(b[8:]))
		if n < 1 || n > int64(f.h.KeyframeInterval) || sl > MaxStreamBytes {
			return 0, false
		}
		length = chunkHdrSize + sl + crcSize
	default:
		return 0, false
	}
	if length > f.size-pos {
		return 0, false
	}
	return pos + length, true
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
	if b[1] != 0 || b[2] != 0 || b[3] != 0 {
		return 0, 0, corrupt(off+1, "reserved bytes of chunk record not zero")
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
	if err := cc.decodeChunk(b[chunkHdrSize:end], int(n), le.Uint32(b[12:]), actions, codes, off); err != nil {
		return 0, 0, err
	}
	return n, length, nil
}

// indexMatches reports whether the file ends, at off, with exactly the
// index x and its trailer.
func (f *File) indexMatches(x *index, off int64) bool {
	want := x.marshal()
	if f.size-off != int64(len(want))+TrailerSize {
		return false
	}
	b, err := f.readAt(off, f.size-off, "index")
	if err != nil {
		return false
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
// episodes and chunks recovery kept: the header, embedded model and level
// table, the records kept, unchanged and in order (without Recovery.Gaps,
// the bytes up to Recovery.End), and the index and trailer a Writer would
// have written after them. A complete file is copied unchanged. model may
// be nil if the file embeds its model. It returns what was recovered and
// the Info of the file written.
func Recover(w io.Writer, r io.ReaderAt, size int64, model *wm.Model, opts ...Option) (Recovery, Info, error) {
	f, err := Open(r, size, model, append(opts[:len(opts):len(opts)], WithRecovery(true))...)
	if err != nil {
		return Recovery{}, Info{}, err
	}
	rec, _ := f.Recovered()
	x := f.idx.relocate(f.bodyStart)
	// Copy the kept bytes, joining adjacent spans.
	from, to := int64(0), f.bodyStart // pending span
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
		if err := span(e.offset, episodeHdrSize+e.metaLen+crcSize); err != nil {
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
	end := payloadEnd(x, f.bodyStart)
	ix := x.marshal()
	t := trailer{indexOffset: end, indexLength: int64(len(ix)), indexCRC: crc(ix)}
	if _, err := w.Write(append(ix, t.marshal()...)); err != nil {
		return rec, Info{}, err
	}
	info := f.Info()
	info.FileBytes = end + int64(len(ix)) + TrailerSize
	info.PayloadBytes = end - f.bodyStart
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
