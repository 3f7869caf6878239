package format

import (
	"encoding/json"
	"errors"
	"io"

	"github.com/wmzip/wmzip/wm"
)

// Crash recovery. A Writer emits records in file order and the index only
// at Close, so a file cut short by a crash is a valid header, embedded
// model and a run of complete records, followed by at most one torn record.
// Recovery scans the records from the body forward, checking each one
// completely (tag, reserved bytes, limits, CRC, and for a chunk its rANS
// stream and reconstruction checksum), and stops at the first record that
// is incomplete or fails a check. The index is then rebuilt from the
// records kept: exactly what a Writer closed after them would have written.

// WithRecovery makes Open tolerate a file cut short or damaged after its
// header and embedded model, as a crash mid-write leaves it: instead of
// reading the index from the trailer, it scans the records from the start
// of the body and keeps the complete, valid episodes and chunks before the
// first incomplete or invalid one (File.Recovered tells where that is).
// A Reader with recovery ends (io.EOF) at the first invalid record instead
// of failing. Errors in the header or model, and ErrTooLarge, still fail.
// Append with recovery continues a file that was not closed. Default false.
func WithRecovery(on bool) Option {
	return func(c *config) error {
		c.recover = on
		return nil
	}
}

// Recovery describes how a file opened with WithRecovery was read.
type Recovery struct {
	// End is the offset just past the last complete record kept: the file
	// Recover writes is the first End bytes followed by a rebuilt index and
	// trailer.
	End int64
	// Complete reports that the scan reached an index and trailer equal to
	// the rebuilt ones at the end of the file: nothing was lost.
	Complete bool
	// Stop is the error that ended the scan (nil if Complete): typically
	// io.ErrUnexpectedEOF for a cut inside a record.
	Stop error
}

// recoverable reports whether err ends a recovery scan (true) or must be
// returned (false): every damage to the bytes does, a memory limit does not.
func recoverable(err error) bool {
	var fe *FormatError
	return errors.As(err, &fe) && !errors.Is(err, ErrTooLarge)
}

// scanRecords rebuilds the index of the complete, valid records that
// follow the header and embedded model, stopping at the first incomplete
// or invalid one.
func (f *File) scanRecords() error {
	h := &f.h
	g := int64(h.KeyframeInterval)
	cc := newChunkCoder(h, f.model, f.rules)
	actions := make([]int64, g)
	codes := make([]uint16, g*int64(h.Geom.N()))
	x := &index{}
	pos := f.bodyStart
	var cur *episodeRef
	stop := func(err error) error {
		f.idx = x
		f.rec = &Recovery{End: pos, Stop: err}
		return nil
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
			return stop(truncated(pos, "record tag"))
		}
		tag, err := f.readAt(pos, 1, "record tag")
		if err != nil {
			return stop(err)
		}
		switch {
		case tag[0] == tagEpisode:
			if len(x.episodes) >= MaxEpisodes {
				return stop(corrupt(pos, "more than %d episodes", MaxEpisodes))
			}
			if err := grow(indexEpisodeLen); err != nil {
				return err
			}
			ml, err := f.checkEpisodeRecord(pos)
			if err != nil {
				if recoverable(err) {
					return stop(err)
				}
				return err
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
				if recoverable(err) {
					return stop(err)
				}
				return err
			}
			cur.chunks = append(cur.chunks, chunkRef{offset: pos, length: length, states: n, first: cur.states})
			cur.states += n
			x.states += n
			x.chunks++
			x.idealCodes += cc.idealCodes
			x.idealAction += cc.idealActions
			x.retained += cc.retained
			pos += length
		case tag[0] == tagIndex:
			if f.indexMatches(x, pos) {
				f.idx = x
				f.rec = &Recovery{End: pos, Complete: true}
				return nil
			}
			return stop(corrupt(pos, "index and trailer do not match the records"))
		default:
			return stop(corrupt(pos, "unexpected record tag %#x", tag[0]))
		}
	}
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
// WithRecovery) and writes to w a complete file holding exactly its valid
// episodes and chunks before the first incomplete or invalid record: the
// bytes up to there, unchanged, followed by the index and trailer a Writer
// would have written after them. model may be nil if the file embeds its
// model. It returns what was recovered.
func Recover(w io.Writer, r io.ReaderAt, size int64, model *wm.Model, opts ...Option) (Recovery, Info, error) {
	f, err := Open(r, size, model, append(opts[:len(opts):len(opts)], WithRecovery(true))...)
	if err != nil {
		return Recovery{}, Info{}, err
	}
	rec, _ := f.Recovered()
	if _, err := io.Copy(w, io.NewSectionReader(r, 0, rec.End)); err != nil {
		return rec, Info{}, err
	}
	ix := f.idx.marshal()
	t := trailer{indexOffset: rec.End, indexLength: int64(len(ix)), indexCRC: crc(ix)}
	if _, err := w.Write(append(ix, t.marshal()...)); err != nil {
		return rec, Info{}, err
	}
	info := f.Info()
	info.FileBytes = rec.End + int64(len(ix)) + TrailerSize
	info.IndexBytes = info.FileBytes - rec.End
	return rec, info, nil
}
