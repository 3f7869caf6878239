package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

// readStep bounds how much a Reader allocates ahead of the bytes it has
// actually received, so a lying length costs at most this much.
const readStep = 1 << 20

// A Reader decodes a .wmz stream sequentially and checks all of it: record
// checksums, reconstruction checksums, the rANS end-of-stream conditions,
// and, at the end, that the index and trailer are exactly those the
// records imply. Errors are sticky. A Reader is not safe for concurrent use.
// (21 fields: the stream's position, the chunk being decoded and the
// index being rebuilt, each read once per record.)
type Reader struct {
	br    *bufio.Reader
	off   int64 // file offset of the next unread byte
	h     Header
	model *wm.Model
	cfg   *config
	coder *chunkCoder
	err   error

	idx     index       // rebuilt from the records
	cur     *episodeRef // episode being read
	actions []int64     // decoded chunk
	codes   []uint16
	levels  []int8     // of the decoded chunk's states; nil for a version-3 file without a level table
	ahead   *readAhead // chunks decoded ahead; nil with one thread
	n, pos  int        // states in the decoded chunk, next to return
	more    bool
	rec     []byte
	done    bool
	end     Info // filled when the trailer has been checked

	// framed is set while the record being read has been read whole but
	// not yet checked: in recovery, damage found then can be stepped over.
	framed bool

	sig *signedStream // with WithPublicKey: the verified signature (signature.go)
}

// NewReader reads the header (and embedded model) of a .wmz stream from r.
// model may be nil if the file embeds its model.
func NewReader(r io.Reader, model *wm.Model, opts ...Option) (*Reader, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	size := 4096
	if cfg.threads > 1 {
		size = readAheadBytes
		// A source that knows its size (bytes.Reader, io.SectionReader)
		// needs no buffer larger than itself: small files stay cheap.
		if s, ok := r.(interface{ Size() int64 }); ok && s.Size() < int64(size) {
			size = int(max(s.Size(), 4096))
		}
	}
	rd := &Reader{br: bufio.NewReaderSize(r, size), cfg: cfg}
	if cfg.sig.pub != nil {
		if rd.sig, err = newSignedStream(r, opts); err != nil {
			return nil, err
		}
	}
	b, err := rd.read(HeaderSize, "header")
	if err != nil {
		return nil, err
	}
	rd.sig.prefix(b)
	if rd.h, err = parseHeader(b); err != nil {
		return nil, err
	}
	if mem := rd.h.memory(); mem > cfg.maxMemory {
		return nil, tooLarge(0, mem, cfg.maxMemory)
	}
	var raw []byte
	if rd.h.ModelEmbedded {
		if raw, err = rd.read(int(rd.h.ModelSize), "embedded model"); err != nil {
			return nil, err
		}
		raw = bytes.Clone(raw)
		rd.sig.prefix(raw)
	}
	if rd.model, err = resolveModel(&rd.h, raw, model, cfg.maxMemory); err != nil {
		return nil, err
	}
	if n := rd.h.levelBytes(); n > 0 {
		b, err := rd.read(int(n), "level table")
		if err != nil {
			return nil, err
		}
		rd.sig.prefix(b)
		if err := parseLevels(b, &rd.h, rd.off-n); err != nil {
			return nil, err
		}
	}
	if err := rd.sig.checkPrefix(); err != nil {
		return nil, err
	}
	_, rules, err := useGate(&rd.h, rd.model, cfg)
	if err != nil {
		return nil, err
	}
	rd.coder = newChunkCoder(&rd.h, rd.model, rules)
	rd.sig.useCoder(func() *chunkCoder { return newChunkCoder(&rd.h, rd.model, rules) })
	g, n := rd.h.KeyframeInterval, rd.h.Geom.N()
	rd.actions = make([]int64, g)
	rd.codes = make([]uint16, g*n)
	if len(rd.h.Levels) > 0 || rd.h.Version >= 4 {
		rd.levels = make([]int8, g)
	}
	rd.ahead = newReadAhead(&rd.h, cfg, rd.coder, func() (*chunkCoder, error) { return newChunkCoder(&rd.h, rd.model, rules), nil })
	return rd, nil
}

// Level returns the retention level of the state ReadState returned last:
// an index into Header().Levels, 0 for a file without levels, and −1 for a
// state whose chunk codes every coordinate though the file is not lossless
// (version 4: a chunk the retention rule would not have made smaller).
func (r *Reader) Level() int {
	if r.levels == nil || r.pos == 0 {
		return 0
	}
	return int(r.levels[r.pos-1])
}

// Header returns the file's header.
func (r *Reader) Header() Header { return r.h }

// Model returns the model the Reader decodes with.
func (r *Reader) Model() *wm.Model { return r.model }

// read returns the next n bytes, valid until the next read. A short stream
// is reported as io.ErrUnexpectedEOF; the buffer grows with the bytes
// actually read, not with n.
func (r *Reader) read(n int, what string) ([]byte, error) {
	r.rec = r.rec[:0]
	for len(r.rec) < n {
		k := min(n-len(r.rec), readStep)
		at := len(r.rec)
		r.rec = append(r.rec, make([]byte, k)...)
		if _, err := io.ReadFull(r.br, r.rec[at:]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, truncated(r.off, what)
			}
			return nil, err
		}
	}
	r.off += int64(n)
	return r.rec, nil
}

func (r *Reader) fail(err error) error {
	r.ahead.drop()
	if r.cfg.recover && r.err == nil && recoverable(err) {
		// Recovery: step over a damaged record that was read whole, on to
		// the next episode record; else the valid records before it are
		// the file.
		r.cur, r.more = nil, false
		r.done = !r.framed
		r.framed = false
		return io.EOF
	}
	if r.err == nil {
		r.err = err
	}
	return r.err
}

// NextEpisode skips the rest of the current episode, checking it, and
// starts the next one, returning its metadata (nil if none). After the last
// episode it checks the index and trailer and returns io.EOF.
func (r *Reader) NextEpisode() (meta []byte, err error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.done {
		return nil, io.EOF
	}
	for r.cur != nil {
		r.pos = r.n // skip the decoded states; the next chunk is still checked
		if _, err := r.next(); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
	}
	for {
		if r.err != nil {
			return nil, r.err
		}
		if r.done { // recovery ended the file
			return nil, io.EOF
		}
		tag, err := r.peekTag()
		if err != nil {
			return nil, r.fail(err)
		}
		switch {
		case tag == tagEpisode:
			meta, err := r.readEpisode()
			if err != nil {
				if err := r.fail(err); err != io.EOF {
					return nil, err
				}
				continue
			}
			if !r.cfg.recover || r.firstChunk() {
				return meta, nil
			}
		case tag == tagChunk && r.cfg.recover:
			// A chunk of an episode being skipped, or outside any episode.
			if err := r.skipChunk(); err != nil {
				if err := r.fail(err); err != io.EOF {
					return nil, err
				}
			}
		case tag == tagIndex:
			if err := r.readEnd(); err != nil {
				return nil, r.fail(err)
			}
			r.done = true
			r.ahead.drop()
			return nil, io.EOF
		default:
			return nil, r.fail(corrupt(r.off, "expected an episode record, found tag %#x", tag))
		}
	}
}

// firstChunk, in recovery, reads the first chunk of the episode just
// begun. It reports whether the episode is kept: with that chunk, or empty
// when another episode record or the index follows. An episode followed
// by damage or the end of the file is dropped, as its states were lost.
func (r *Reader) firstChunk() bool {
	tag, err := r.peekTag()
	switch {
	case err != nil:
	case tag == tagEpisode || tag == tagIndex:
		return true
	case tag == tagChunk:
		if err = r.readChunk(); err == nil {
			return true
		}
	default:
		err = corrupt(r.off, "unknown record tag %#x", tag)
	}
	r.idx.episodes = r.idx.episodes[:len(r.idx.episodes)-1]
	r.fail(err)
	return false
}

// skipChunk steps over a chunk record by its framing, unchecked: the
// record follows damage in its episode.
func (r *Reader) skipChunk() error {
	start := r.off
	r.framed = false
	b, err := r.read(chunkHdrSize, "chunk record")
	if err != nil {
		return err
	}
	n, sl := int64(le.Uint32(b[4:])), int64(le.Uint32(b[8:]))
	if _, err := parseChunkMode(&r.h, b, start); err != nil || n < 1 || n > int64(r.h.KeyframeInterval) || sl > MaxStreamBytes {
		return corrupt(start, "implausible chunk record header")
	}
	k, err := r.br.Discard(int(sl) + crcSize)
	r.off += int64(k)
	if err != nil {
		if err == io.EOF {
			return truncated(r.off, "chunk record")
		}
		return err
	}
	r.framed = true
	return corrupt(start, "chunk record outside an episode")
}

func (r *Reader) peekTag() (byte, error) {
	b, err := r.br.Peek(1)
	if err != nil {
		if err == io.EOF {
			return 0, truncated(r.off, "record tag")
		}
		return 0, err
	}
	return b[0], nil
}

func (r *Reader) readEpisode() ([]byte, error) {
	start := r.off
	r.framed = false
	b, err := r.read(episodeHdrSize, "episode record")
	if err != nil {
		return nil, err
	}
	if b[1] != 0 || b[2] != 0 || b[3] != 0 {
		return nil, corrupt(start+1, "reserved bytes of episode record not zero")
	}
	ml := int64(le.Uint32(b[4:]))
	if ml > MaxMetaBytes {
		return nil, corrupt(start+4, "metadata of %d bytes exceeds %d", ml, MaxMetaBytes)
	}
	if len(r.idx.episodes) >= MaxEpisodes {
		return nil, corrupt(start, "more than %d episodes", MaxEpisodes)
	}
	head := [episodeHdrSize]byte(b)
	rest, err := r.read(int(ml)+crcSize, "episode metadata")
	if err != nil {
		return nil, err
	}
	r.framed = true
	if err := r.sig.check(start, head[:], rest, func() bool { return r.sig.wholeRecord(false, chunkMode{}, 0, head[:], rest) }); err != nil {
		return nil, err
	}
	sum := crc32Update(crc(head[:]), rest[:ml])
	if sum != le.Uint32(rest[ml:]) {
		return nil, badSum(start+episodeHdrSize+ml, "episode record checksum")
	}
	var meta []byte
	if ml > 0 {
		if !json.Valid(rest[:ml]) {
			return nil, corrupt(start+episodeHdrSize, "episode metadata is not JSON")
		}
		meta = bytes.Clone(rest[:ml])
	}
	r.framed = false
	if err := r.growIndex(indexEpisodeLen); err != nil {
		return nil, err
	}
	r.idx.episodes = append(r.idx.episodes, episodeRef{offset: start, metaLen: ml})
	r.cur = &r.idx.episodes[len(r.idx.episodes)-1]
	r.n, r.pos, r.more = 0, 0, true
	return meta, nil
}

// growIndex accounts for k more bytes of the rebuilt index.
func (r *Reader) growIndex(k int64) error {
	size := indexHdrSize + indexEpisodeLen*int64(len(r.idx.episodes)) + indexChunkLen*r.idx.chunks + k
	if need := r.h.memory() + size; need > r.cfg.maxMemory {
		return tooLarge(r.off, need, r.cfg.maxMemory)
	}
	return nil
}

// ReadState returns the next state of the current episode: its action and
// its codes, appended to dst[:0]. At the end of the episode, and before the
// first NextEpisode, it returns io.EOF; call NextEpisode to go on.
func (r *Reader) ReadState(dst []uint16) (action int64, codes []uint16, err error) {
	t, err := r.next()
	if err != nil {
		return 0, nil, err
	}
	nc := r.h.Geom.N()
	return r.actions[t], append(dst[:0], r.codes[t*nc:(t+1)*nc]...), nil
}

// next advances to the next state of the current episode, decoding the
// next chunk if needed, and returns its index in the decoded chunk.
func (r *Reader) next() (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.cur == nil {
		return 0, io.EOF
	}
	if r.pos == r.n {
		if !r.more {
			r.cur = nil
			return 0, io.EOF
		}
		tag, err := r.peekTag()
		if err != nil {
			return 0, r.fail(err)
		}
		if tag != tagChunk {
			if tag != tagEpisode && tag != tagIndex {
				return 0, r.fail(corrupt(r.off, "unknown record tag %#x", tag))
			}
			r.cur, r.more = nil, false
			return 0, io.EOF
		}
		if err := r.readChunk(); err != nil {
			return 0, r.fail(err)
		}
	}
	r.pos++
	return r.pos - 1, nil
}

func (r *Reader) readChunk() error {
	start := r.off
	r.framed = false
	b, err := r.read(chunkHdrSize, "chunk record")
	if err != nil {
		return err
	}
	head := [chunkHdrSize]byte(b)
	md, err := parseChunkMode(&r.h, head[:], start)
	if err != nil {
		return err
	}
	n := int64(le.Uint32(head[4:]))
	sl := int64(le.Uint32(head[8:]))
	if n < 1 || n > int64(r.h.KeyframeInterval) {
		return corrupt(start+4, "chunk of %d states (keyframe interval %d)", n, r.h.KeyframeInterval)
	}
	if r.idx.states+n > MaxStates {
		return corrupt(start+4, "more than %d states", int64(MaxStates))
	}
	if sl > MaxStreamBytes {
		return corrupt(start+8, "stream of %d bytes exceeds %d", sl, MaxStreamBytes)
	}
	if need := r.h.memory() + sl; need > r.cfg.maxMemory {
		return tooLarge(start+8, need, r.cfg.maxMemory)
	}
	if err := r.growIndex(indexChunkLen); err != nil {
		return err
	}
	rest, err := r.read(int(sl)+crcSize, "chunk stream")
	if err != nil {
		return err
	}
	r.framed = true
	if err := r.sig.check(start, head[:], rest, func() bool { return r.sig.wholeRecord(true, md, int(n), head[:], rest) }); err != nil {
		return err
	}
	if crc32Update(crc(head[:]), rest[:sl]) != le.Uint32(rest[sl:]) {
		return badSum(start+chunkHdrSize+sl, "chunk record checksum")
	}
	if err := r.decode(start, md, int(n), rest[:sl], le.Uint32(head[12:])); err != nil {
		return err
	}
	r.framed = false
	r.cur.chunks = append(r.cur.chunks, chunkRef{offset: start, length: r.off - start, states: n, first: r.cur.states})
	r.cur.states += n
	r.idx.states += n
	r.idx.chunks++
	r.n, r.pos = int(n), 0
	return nil
}

// decode decodes the chunk record at start, of n states, into the Reader's
// buffers and adds it to the rebuilt index totals: with one thread here,
// else on the crew, while the records after it decode ahead.
func (r *Reader) decode(start int64, md chunkMode, n int, stream []byte, sum uint32) error {
	var cost chunkCost
	if q := r.ahead.take(start, md, n, stream, sum); q != nil {
		r.prefetch()
		<-q.done
		if err := q.err; err != nil {
			r.ahead.recycle(q) // which clears q.err
			return err
		}
		cost = q.cost
		r.actions, q.actions = q.actions, r.actions
		r.codes, q.codes = q.codes, r.codes
		r.levels, q.levels = q.levels, r.levels
		r.ahead.recycle(q)
	} else {
		r.coder.levels = r.levels
		if err := r.coder.decodeChunk(stream, md, n, sum, r.actions, r.codes, start); err != nil {
			return err
		}
		cost = r.coder.cost()
	}
	r.idx.idealCodes += cost.idealCodes
	r.idx.idealAction += cost.idealActions
	r.idx.retained += cost.retained
	return nil
}

// readEnd checks that the index and trailer are exactly those the records
// imply, and that nothing follows.
func (r *Reader) readEnd() error {
	r.framed = false
	want := r.idx.marshal(r.h.Version)
	at := r.off
	got, err := r.read(len(want), "index")
	if err != nil {
		return err
	}
	got = bytes.Clone(got)
	tb, err := r.read(TrailerSize, "trailer")
	if err != nil {
		return err
	}
	t, err := parseTrailer(tb, r.off-TrailerSize)
	if err != nil {
		return err
	}
	if t.indexOffset != at {
		return corrupt(r.off-TrailerSize, "trailer points to index at %d, found at %d", t.indexOffset, at)
	}
	if crc(got) != t.indexCRC {
		return badSum(r.off-TrailerSize+16, "index checksum")
	}
	// The records give every byte of the index but the writer's report
	// (version 4), which is checked on its own.
	n := len(want) - indexReport(&r.h)
	if !bytes.Equal(got[:n], want[:n]) {
		return corrupt(at, "index disagrees with the records")
	}
	if n < len(got) {
		if r.idx.report, err = parseReport(got[n:], at+int64(n), r.idx.states, r.h.Geom.N()); err != nil {
			return err
		}
	}
	if err := r.sig.checkIndex(got, tb); err != nil {
		return err
	}
	sigBytes, err := r.readSignature()
	if err != nil {
		return err
	}
	if _, err := r.br.Peek(1); err == nil {
		return corrupt(r.off, "bytes after the trailer")
	} else if !errors.Is(err, io.EOF) {
		return err
	}
	r.end = Info{
		Episodes:     len(r.idx.episodes),
		States:       r.idx.states,
		Chunks:       r.idx.chunks,
		FileBytes:    r.off,
		HeaderBytes:  HeaderSize,
		ModelBytes:   r.h.ModelSize,
		PayloadBytes: at - r.h.BodyStart(),
		IndexBytes:   r.off - sigBytes - at,
		Lambda:       r.h.Lambda.Float(),
		Levels:       lambda.Floats(r.h.Levels),
		Embedded:     r.h.ModelEmbedded,
		ModelID:      r.h.ModelID,
		IdealCode:    r.idx.idealCodes,
		IdealAct:     r.idx.idealAction,
		Retained:     r.idx.retained,
		Report:       r.idx.report,
	}
	return nil
}

// Info returns the file's summary once NextEpisode has returned io.EOF,
// that is once the whole file has been decoded and checked; ok is false
// before, and for a file that recovery (WithRecovery) ended early.
func (r *Reader) Info() (info Info, ok bool) { return r.end, r.done && r.end.FileBytes > 0 }

// ReadHeader reads and validates only the fixed-size header of a .wmz
// stream, without the model or any episode.
func ReadHeader(r io.Reader) (Header, error) {
	b := make([]byte, HeaderSize)
	if _, err := io.ReadFull(r, b); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return Header{}, truncated(0, "header")
		}
		return Header{}, err
	}
	return parseHeader(b)
}
