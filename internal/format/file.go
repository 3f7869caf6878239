package format

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/wmzip/wmzip/internal/fixed"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

// A File gives random access to the episodes and states of a .wmz file
// through its index. Its methods are safe for concurrent use (each call
// decodes with its own coder, drawn from a pool or held by the chunk
// cache, see WithCacheBytes) if the io.ReaderAt is.
type File struct {
	r         io.ReaderAt
	size      int64
	h         Header
	model     *wm.Model
	cfg       *config
	idx       *index
	bodyStart int64
	rules     *retention
	pool      sync.Pool     // *chunkCoder
	rec       *Recovery     // set when opened WithRecovery
	fixed     *HeaderRepair // set when recovery rebuilt the header
	cache     *chunkCache   // nil when disabled
	coderCost int64         // estimated bytes of a live coder (coderBytes)
	sig       *sigBlock     // the signature record after the trailer, if any
}

// Info summarizes a file. Sizes are in bytes; ideal code lengths are in
// units of 2^-16 bit, as recorded by the writer (IdealBits converts).
type Info struct {
	Episodes int
	States   int64
	Chunks   int64

	FileBytes    int64
	HeaderBytes  int64 // fixed header
	ModelBytes   int64 // embedded model, 0 if none
	PayloadBytes int64 // episode and chunk records
	IndexBytes   int64 // index and trailer

	Lambda    float64   // the header's λ; +Inf for a lossless file
	Levels    []float64 // the λ of the level table, if any (Header.Levels; +Inf: lossless)
	Embedded  bool
	ModelID   wm.ModelID
	IdealCode uint64 // Σ −log2 p of the coded coordinates, 2^-16 bit
	IdealAct  uint64 // Σ −log2 p of the action symbols and raw bits, 2^-16 bit

	// Retained is the number of coded coordinates (States·N when lossless).
	Retained uint64
	// Report is the writer's report of the file's distortion (version 4;
	// zero otherwise).
	Report Report
}

// IdealBits returns the ideal code length of states and actions in bits,
// for reporting.
func (i Info) IdealBits() float64 { return float64(i.IdealCode+i.IdealAct) / (1 << fixed.CostFrac) }

// Open reads the header, embedded model, trailer and index of a .wmz file
// of the given size. model may be nil if the file embeds its model.
func Open(r io.ReaderAt, size int64, model *wm.Model, opts ...Option) (*File, error) {
	size, sig, err := splitOpts(r, size, opts)
	if err != nil {
		return nil, err
	}
	f, err := openHeader(r, size, opts, true)
	if err != nil {
		if f, err = repairHeader(r, size, model, opts, err); err != nil {
			return nil, err
		}
	}
	cfg := f.cfg
	var raw []byte
	if f.h.ModelEmbedded {
		if raw, err = f.readAt(HeaderSize, f.h.ModelSize, "embedded model"); err != nil {
			return nil, err
		}
	}
	if f.model, err = resolveModel(&f.h, raw, model, f.cfg.maxMemory); err != nil {
		if f.model, err = f.replaceModel(model, err); err != nil {
			return nil, err
		}
	}
	if err := f.readLevels(); err != nil {
		return nil, err
	}
	if _, f.rules, err = useGate(&f.h, f.model, cfg); err != nil {
		return nil, err
	}
	f.coderCost = coderBytes(f.model, f.h.KeyframeInterval)
	if cfg.cacheBytes > 0 {
		f.cache = newChunkCache(cfg.cacheBytes)
	}
	if cfg.recover {
		if err := f.scanRecords(); err != nil {
			return nil, err
		}
	} else if err := f.readIndex(f.h.memory()); err != nil {
		return nil, err
	}
	if err := f.attach(sig); err != nil {
		return nil, err
	}
	return f, nil
}

// ReadInfo reads what a .wmz file of the given size says about itself,
// without a model and without decoding a state: its header, level table,
// trailer and index, checked as Open checks them. The embedded model, if
// any, is neither read nor checked, nor are the records (File.Verify
// does that). It is to Open what image/png's DecodeConfig is to Decode.
func ReadInfo(r io.ReaderAt, size int64, opts ...Option) (Header, Info, error) {
	size, sig, err := splitOpts(r, size, opts)
	if err != nil {
		return Header{}, Info{}, err
	}
	f, err := openIndex(r, size, opts)
	if err == nil {
		err = f.attach(sig)
	}
	if err != nil {
		return Header{}, Info{}, err
	}
	return f.h, f.Info(), nil
}

// openIndex reads and checks the header, level table, trailer and index of
// an unsigned file (or of the unsigned part of a signed one).
func openIndex(r io.ReaderAt, size int64, opts []Option) (*File, error) {
	f, err := openHeader(r, size, opts, false)
	if err != nil {
		return nil, err
	}
	if err := f.readLevels(); err != nil {
		return nil, err
	}
	if err := f.readIndex(0); err != nil {
		return nil, err
	}
	return f, nil
}

// openHeader reads and checks the header of a File being opened, and with
// decoding set, that the decoder's working set fits the memory limit.
func openHeader(r io.ReaderAt, size int64, opts []Option, decoding bool) (*File, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	f := &File{r: r, size: size, cfg: cfg}
	if size < HeaderSize+indexHdrSize+TrailerSize && !cfg.recover {
		return nil, truncated(max(size, 0), "file")
	}
	b, err := f.readAt(0, HeaderSize, "header")
	if err != nil {
		return nil, err
	}
	if f.h, err = parseHeader(b); err != nil {
		return nil, err
	}
	if mem := f.h.memory(); decoding && mem > cfg.maxMemory {
		return nil, tooLarge(0, mem, cfg.maxMemory)
	}
	f.bodyStart = f.h.BodyStart()
	if f.bodyStart+indexHdrSize+TrailerSize > size && !cfg.recover {
		return nil, truncated(HeaderSize, "embedded model")
	}
	return f, nil
}

// readLevels reads the level table, if the header announces one.
func (f *File) readLevels() error {
	n := f.h.levelBytes()
	if n == 0 {
		return nil
	}
	off := HeaderSize + f.h.ModelSize
	b, err := f.readAt(off, n, "level table")
	if err != nil {
		return err
	}
	return parseLevels(b, &f.h, off)
}

// readIndex reads the trailer and the index it points to; mem is the
// memory the caller holds besides the index.
func (f *File) readIndex(mem int64) error {
	toff := f.size - TrailerSize
	tb, err := f.readAt(toff, TrailerSize, "trailer")
	if err != nil {
		return err
	}
	t, err := parseTrailer(tb, toff)
	if err != nil {
		return err
	}
	if t.indexOffset < f.bodyStart {
		return corrupt(toff, "index offset %d inside the header", t.indexOffset)
	}
	if need := mem + t.indexLength*3; need > f.cfg.maxMemory {
		return tooLarge(toff+8, need, f.cfg.maxMemory)
	}
	ib, err := f.readAt(t.indexOffset, t.indexLength, "index")
	if err != nil {
		return err
	}
	if crc(ib) != t.indexCRC {
		return badSum(toff+16, "index checksum")
	}
	f.idx, err = parseIndex(ib, t.indexOffset, f.bodyStart, &f.h)
	return err
}

// readAt reads n bytes at off; the caller has checked n against the size
// and the memory limit.
func (f *File) readAt(off, n int64, what string) ([]byte, error) {
	if off < 0 || n < 0 || off > f.size || n > f.size-off {
		return nil, truncated(off, what)
	}
	b := make([]byte, n)
	k, err := f.r.ReadAt(b, off)
	if k == len(b) {
		return b, nil
	}
	if err == io.EOF || err == nil {
		return nil, truncated(off+int64(k), what)
	}
	return nil, err
}

// Header returns the file's header.
func (f *File) Header() Header { return f.h }

// Model returns the model the File decodes with.
func (f *File) Model() *wm.Model { return f.model }

// Episodes returns the number of episodes.
func (f *File) Episodes() int { return len(f.idx.episodes) }

// EpisodeLen returns the number of states of episode e, or 0 if there is no
// such episode.
func (f *File) EpisodeLen(e int) int {
	if e < 0 || e >= len(f.idx.episodes) {
		return 0
	}
	return int(f.idx.episodes[e].states)
}

// Info returns the file's summary.
func (f *File) Info() Info {
	x := f.idx
	return Info{
		Episodes:     len(x.episodes),
		States:       x.states,
		Chunks:       x.chunks,
		FileBytes:    f.size + f.sig.bytes(),
		HeaderBytes:  HeaderSize,
		ModelBytes:   f.h.ModelSize,
		PayloadBytes: f.payloadEnd() - f.bodyStart,
		IndexBytes:   f.size - f.payloadEnd(),
		Lambda:       f.h.Lambda.Float(),
		Levels:       lambda.Floats(f.h.Levels),
		Embedded:     f.h.ModelEmbedded,
		ModelID:      f.h.ModelID,
		IdealCode:    x.idealCodes,
		IdealAct:     x.idealAction,
		Retained:     x.retained,
		Report:       x.report,
	}
}

func (f *File) payloadEnd() int64 { return payloadEnd(f.idx, f.bodyStart) }

func (f *File) episode(e int) (*episodeRef, error) {
	if e < 0 || e >= len(f.idx.episodes) {
		return nil, fmt.Errorf("%w: episode %d of %d", ErrInput, e, len(f.idx.episodes))
	}
	return &f.idx.episodes[e], nil
}

// Metadata returns the metadata of episode e (nil if none), checked.
func (f *File) Metadata(e int) ([]byte, error) {
	ep, err := f.episode(e)
	if err != nil {
		return nil, err
	}
	if ep.synth != nil {
		return ep.synth, nil
	}
	b, err := f.episodeRecord(ep)
	if err != nil {
		return nil, err
	}
	if ep.metaLen == 0 {
		return nil, nil
	}
	end := episodeHdrSize + ep.metaLen
	if !json.Valid(b[episodeHdrSize:end]) {
		return nil, corrupt(ep.offset+episodeHdrSize, "episode metadata is not JSON")
	}
	return b[episodeHdrSize:end], nil
}

// episodeRecord reads the episode record of ep and checks it: its signed
// hash (when opened with a public key), its header against the index, and
// its CRC.
func (f *File) episodeRecord(ep *episodeRef) ([]byte, error) {
	b, err := f.readAt(ep.offset, episodeHdrSize+ep.metaLen+crcSize, "episode record")
	if err != nil {
		return nil, err
	}
	if err := f.sig.checkRecord(ep.offset, b, func() bool { return checkEpisodeRecord(ep, b) == nil }); err != nil {
		return nil, err
	}
	if err := checkEpisodeRecord(ep, b); err != nil {
		return nil, err
	}
	return b, nil
}

// checkEpisodeRecord checks the episode record b of ep: its header against
// the index, and its CRC.
func checkEpisodeRecord(ep *episodeRef, b []byte) error {
	switch {
	case b[0] != tagEpisode:
		return corrupt(ep.offset, "episode record disagrees with the index: tag %#x", b[0])
	case b[1] != 0 || b[2] != 0 || b[3] != 0:
		return corrupt(ep.offset+1, "reserved bytes of episode record not zero")
	case int64(le.Uint32(b[4:])) != ep.metaLen:
		return corrupt(ep.offset+4, "episode record disagrees with the index: MetaLen %d, index %d", le.Uint32(b[4:]), ep.metaLen)
	}
	end := episodeHdrSize + ep.metaLen
	if crc(b[:end]) != le.Uint32(b[end:]) {
		return badSum(ep.offset+end, "episode record checksum")
	}
	return nil
}

// chunkCost is what a coded chunk adds to the index totals and, when
// written, to the writer's account.
type chunkCost struct {
	idealCodes, idealActions, retained uint64
	wrong, distSum                     uint64  // writer only
	dist                               float64 // writer only: Σ of the slots' distortion
	slots                              uint64  // slot vectors coded
	fallbacks                          int64   // writer only: chunks coded losslessly, as no longer than by the rule
}

// decodeRef reads, checks and decodes the chunk of ref with coder cc into
// actions and codes, which hold its states, and returns what the chunk
// adds to the index totals.
func (f *File) decodeRef(cc *chunkCoder, ref *chunkRef, actions []int64, codes []uint16) (chunkCost, error) {
	b, err := f.chunkRecord(ref)
	if err != nil {
		return chunkCost{}, err
	}
	if err := cc.decodeChunk(b[chunkHdrSize:len(b)-crcSize], modeOf(b), int(ref.states), le.Uint32(b[12:]), actions, codes, ref.offset); err != nil {
		return chunkCost{}, err
	}
	return cc.cost(), nil
}

// coder returns a coder from the pool, or a new one.
func (f *File) coder() *chunkCoder {
	if cc, _ := f.pool.Get().(*chunkCoder); cc != nil {
		return cc
	}
	return newChunkCoder(&f.h, f.model, f.rules)
}

// chunkRecord reads the chunk record of ref and checks it: its signed hash
// (when opened with a public key), its header against the index, and its
// CRC.
func (f *File) chunkRecord(ref *chunkRef) ([]byte, error) {
	if need := f.h.memory() + ref.length; need > f.cfg.maxMemory {
		return nil, tooLarge(ref.offset, need, f.cfg.maxMemory)
	}
	b, err := f.readAt(ref.offset, ref.length, "chunk record")
	if err != nil {
		return nil, err
	}
	if err := f.sig.checkRecord(ref.offset, b, func() bool { return f.wholeChunk(ref, b) }); err != nil {
		return nil, err
	}
	if err := f.checkChunk(ref, b); err != nil {
		return nil, err
	}
	return b, nil
}

// checkChunk checks the chunk record b of ref: its header against
// the index, and its CRC.
func (f *File) checkChunk(ref *chunkRef, b []byte) error {
	sl := ref.length - chunkHdrSize - crcSize
	if b[0] != tagChunk {
		return corrupt(ref.offset, "chunk record disagrees with the index: tag %#x", b[0])
	}
	if _, err := parseChunkMode(&f.h, b, ref.offset); err != nil {
		return err
	}
	if int64(le.Uint32(b[4:])) != ref.states || int64(le.Uint32(b[8:])) != sl {
		return corrupt(ref.offset+4, "chunk record disagrees with the index: %d states and %d stream bytes, index %d and %d",
			le.Uint32(b[4:]), le.Uint32(b[8:]), ref.states, sl)
	}
	end := chunkHdrSize + sl
	if crc(b[:end]) != le.Uint32(b[end:]) {
		return badSum(ref.offset+end, "chunk record checksum")
	}
	return nil
}

// Verify decodes and checks every record of the file: episode records,
// chunk streams and reconstruction checksums, and the ideal code lengths
// recorded in the index. Together with the checks Open made, this covers
// every byte, like a full pass of a Reader.
func (f *File) Verify() error {
	var refs []*chunkRef
	var owner []int // episode of each chunk
	for e := range f.idx.episodes {
		ep := &f.idx.episodes[e]
		for c := range ep.chunks {
			refs = append(refs, &ep.chunks[c])
			owner = append(owner, e)
		}
	}
	// Episode e's record is checked before its chunks, as a serial pass
	// would, so that the first damage is the one reported.
	next := 0
	meta := func(upto int) error {
		for ; next <= upto; next++ {
			if _, err := f.Metadata(next); err != nil {
				return err
			}
		}
		return nil
	}
	var sum chunkCost
	err := f.eachChunk(refs, func(i int, d *decodedChunk) error {
		if err := meta(owner[i]); err != nil {
			return err
		}
		if d.err != nil {
			return d.err
		}
		sum.idealCodes += d.cost.idealCodes
		sum.idealActions += d.cost.idealActions
		sum.retained += d.cost.retained
		return nil
	})
	if err == nil {
		err = meta(len(f.idx.episodes) - 1)
	}
	if err != nil {
		return err
	}
	if sum.idealCodes != f.idx.idealCodes || sum.idealActions != f.idx.idealAction {
		return corrupt(f.size-TrailerSize, "ideal code lengths in the index differ from the streams'")
	}
	if sum.retained != f.idx.retained {
		return corrupt(f.size-TrailerSize, "retained coordinates in the index differ from the streams'")
	}
	return nil
}

// DecodeEpisode decodes episode e: its actions and its states' codes, state
// t at codes[t·N : (t+1)·N]. Every chunk is decoded and checked whole; the
// chunk cache is neither used nor filled.
func (f *File) DecodeEpisode(e int) (actions []int64, codes []uint16, err error) {
	ep, err := f.episode(e)
	if err != nil {
		return nil, nil, err
	}
	nc := int64(f.h.Geom.N())
	// A lossy chunk can decode many states from few bytes: the decoded
	// episode is held to the memory limit before anything is decoded.
	if need := f.h.memory() + ep.states*(8+2*nc); ep.states > MaxStates || need > f.cfg.maxMemory {
		return nil, nil, tooLarge(ep.offset, need, f.cfg.maxMemory)
	}
	// Grow chunk by chunk, as each decodes, rather than from the count.
	err = f.episodeChunks(ep, func(a []int64, c []uint16) error {
		actions = append(actions, a...)
		codes = append(codes, c...)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if f.cfg.access != nil {
		for t := range ep.states {
			f.cfg.access(int64(e), t)
		}
	}
	return actions, codes, nil
}

// DecodeEpisodeChunks decodes episode e chunk by chunk and calls visit
// with the actions and codes of each chunk's states, in order; they are
// valid only during the call. Unlike DecodeEpisode, it holds no more than
// the chunks decoding ahead, whatever the episode's length. The access log
// hears of a chunk's states once visit has returned for it.
func (f *File) DecodeEpisodeChunks(e int, visit func(actions []int64, codes []uint16) error) error {
	ep, err := f.episode(e)
	if err != nil {
		return err
	}
	var t int64
	return f.episodeChunks(ep, func(a []int64, c []uint16) error {
		if err := visit(a, c); err != nil {
			return err
		}
		if f.cfg.access != nil {
			for range a {
				f.cfg.access(int64(e), t)
				t++
			}
		}
		return nil
	})
}

// episodeChunks decodes the chunks of ep in order and calls visit with
// each one's states.
func (f *File) episodeChunks(ep *episodeRef, visit func(actions []int64, codes []uint16) error) error {
	nc := int64(f.h.Geom.N())
	refs := make([]*chunkRef, len(ep.chunks))
	for c := range ep.chunks {
		refs[c] = &ep.chunks[c]
	}
	return f.eachChunk(refs, func(_ int, d *decodedChunk) error {
		if d.err != nil {
			return d.err
		}
		return visit(d.actions[:d.n], d.codes[:int64(d.n)*nc])
	})
}

// State returns the codes of state step of episode e. See ReadState.
func (f *File) State(e, step int) (codes []uint16, err error) {
	_, codes, err = f.ReadState(e, step, nil)
	return codes, err
}

// StateAction is State returning also the action that led into the state.
func (f *File) StateAction(e, step int) (action int64, codes []uint16, err error) {
	return f.ReadState(e, step, nil)
}

// ReadState returns state step of episode e: the action that led into it
// and its codes, appended to dst[:0].
//
// It decodes the state's chunk from its keyframe up to the state and
// stops. It checks the chunk record (header against the index, CRC) and
// that the rANS stream yields the states decoded; the end-of-stream
// conditions and the reconstruction checksum cover the whole chunk and are
// checked only by a read that reaches the chunk's last state (and always by
// DecodeEpisode, Verify and Reader). With the record intact and the model
// bound by its ID, the states decoded are the writer's unless writer and
// reader disagree on the retention rule (WithRetainRule) or on the model's
// arithmetic, which only the reconstruction checksum would reveal
// (docs/results-random-access.md).
//
// The chunk cache (WithCacheBytes) serves a later read of the chunk from
// the states already decoded, or continues the decode where it stopped.
func (f *File) ReadState(e, step int, dst []uint16) (action int64, codes []uint16, err error) {
	ep, err := f.episode(e)
	if err != nil {
		return 0, nil, err
	}
	if step < 0 || int64(step) >= ep.states {
		return 0, nil, fmt.Errorf("%w: step %d of %d", ErrInput, step, ep.states)
	}
	ref := &ep.chunks[ep.chunkOf(int64(step))]
	t := step - int(ref.first)
	if f.cache != nil {
		action, codes, err = f.cachedState(ref, t, dst)
	} else {
		action, codes, err = f.decodeTo(ref, t, dst)
	}
	if err != nil {
		return 0, nil, err
	}
	if f.cfg.access != nil {
		f.cfg.access(int64(e), int64(step))
	}
	return action, codes, nil
}

// decodeTo decodes the chunk of ref from its keyframe to its state t,
// keeping only the last state, appended to dst[:0].
func (f *File) decodeTo(ref *chunkRef, t int, dst []uint16) (int64, []uint16, error) {
	b, err := f.chunkRecord(ref)
	if err != nil {
		return 0, nil, err
	}
	cc := f.coder()
	defer f.pool.Put(cc)
	if err := cc.startChunk(b[chunkHdrSize:len(b)-crcSize], modeOf(b), ref.offset); err != nil {
		return 0, nil, err
	}
	nc := f.h.Geom.N()
	codes := slices.Grow(dst[:0], nc)[:nc]
	var a [1]int64
	for range t + 1 {
		if err := cc.decodeStates(a[:], codes, ref.offset); err != nil {
			return 0, nil, err
		}
	}
	if int64(t+1) == ref.states {
		if err := cc.endChunk(le.Uint32(b[12:]), ref.offset); err != nil {
			return 0, nil, err
		}
	}
	return a[0], codes, nil
}

// cachedState is decodeTo through the chunk cache.
func (f *File) cachedState(ref *chunkRef, t int, dst []uint16) (int64, []uint16, error) {
	e := f.cache.get(ref.offset)
	e.mu.Lock()
	var a int64
	err := f.advance(e, ref, t+1)
	if err == nil {
		nc := f.h.Geom.N()
		a = e.actions[t]
		dst = append(dst[:0], e.codes[t*nc:(t+1)*nc]...)
	} else {
		e.release(&f.pool)
	}
	cost := e.bytes(f.coderCost)
	e.mu.Unlock()
	if err != nil {
		f.cache.drop(e)
		return 0, nil, err
	}
	for _, x := range f.cache.settle(e, cost) {
		x.mu.Lock()
		x.release(&f.pool)
		x.mu.Unlock()
	}
	return a, dst, nil
}

// advance decodes the chunk of entry e until e holds its first n states;
// reaching the chunk's last state, it checks the chunk whole and returns
// the coder to the pool. e.mu is held; on error the caller releases e.
func (f *File) advance(e *cachedChunk, ref *chunkRef, n int) error {
	if n <= e.n {
		return nil
	}
	if e.cc == nil { // nothing decoded yet: a done chunk holds all its states
		b, err := f.chunkRecord(ref)
		if err != nil {
			return err
		}
		cc := f.coder()
		if err := cc.startChunk(b[chunkHdrSize:len(b)-crcSize], modeOf(b), ref.offset); err != nil {
			f.pool.Put(cc)
			return err
		}
		e.cc, e.rec = cc, b
	}
	nc, ns := f.h.Geom.N(), int(ref.states)
	if n > len(e.actions) {
		k := min(ns, max(n, 2*len(e.actions)))
		a := make([]int64, k)
		copy(a, e.actions[:e.n])
		c := make([]uint16, k*nc)
		copy(c, e.codes[:e.n*nc])
		e.actions, e.codes = a, c
	}
	if err := e.cc.decodeStates(e.actions[e.n:n], e.codes[e.n*nc:n*nc], ref.offset); err != nil {
		return err
	}
	e.n = n
	if n == ns {
		err := e.cc.endChunk(le.Uint32(e.rec[12:]), ref.offset)
		f.pool.Put(e.cc)
		e.cc, e.rec = nil, nil
		return err
	}
	return nil
}
