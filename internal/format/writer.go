package format

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/wm"
)

// flushThreshold is how many completed bytes the Writer gathers before
// passing them to the underlying writer.
const flushThreshold = 1 << 16

// A Writer encodes episodes of states into a .wmz stream.
//
// Memory is bounded by one chunk (the rANS encoder's pending symbols), the
// completed bytes not yet written, and the index, which grows by a few tens
// of bytes per episode and per chunk; with several threads (WithThreads),
// by up to 2·threads chunks of states and records queued for the threads
// and one world-model predictor per thread. Output bytes depend only on the
// model, the options other than WithThreads and the sequence of
// WriteEpisode, SetLevel, WriteState and Flush calls: not on write sizes,
// the thread count or GOMAXPROCS.
//
// With several threads a chunk is encoded after it ends, while the caller
// goes on writing: an error found then (the underlying writer failing, a
// stream over its limit) is returned by the next call that places records
// (WriteState ending a chunk, WriteEpisode, Flush, Close). Errors from the
// underlying writer are sticky. A Writer is not safe for
// concurrent use: its methods must not run at the same time (a caller
// sharing one serializes the calls, which then define the bytes). Readers
// of the output see no index until Close; what Flush wrote is recoverable
// before that (WithRecovery, Recover), and Append continues a closed file.
type Writer struct {
	w      io.Writer
	h      Header
	model  *wm.Model
	coder  *chunkCoder
	err    error
	closed bool

	buf    []byte // completed bytes not yet written to w
	off    int64  // file offset of buf[0]
	idx    index
	cur    *episodeRef // episode being written, nil outside one
	acct   Account
	dist   float64 // Σ of the slots' distortion, placed chunks
	slots  uint64  // slot vectors of the placed chunks
	chunkG int
	level  int         // level of the next state
	pipe   *encodePipe // chunks encoded by a crew; nil with one thread
	// held keeps the states of the chunk being coded on the caller's
	// goroutine when the file is not lossless, for its lossless alternative.
	held   *queued
	modes  func(chunk int) chunkMode // tests: the mode of each chunk
	source func(recon []uint16) Report
	resign func(size int64) error // Append with WithSigningKey: signs at Close
}

// NewWriter returns a Writer that writes a .wmz stream with the given model
// to w. Nothing is written to w before the first Flush or Close or until
// enough bytes have been gathered.
func NewWriter(w io.Writer, model *wm.Model, opts ...Option) (*Writer, error) {
	if model == nil {
		return nil, fmt.Errorf("%w: nil model", ErrInput)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if cfg.precision != 0 && cfg.precision != model.Precision {
		return nil, fmt.Errorf("%w: precision %d differs from the model's %d", ErrUnsupported, cfg.precision, model.Precision)
	}
	g := model.Geom
	if int64(cfg.keyframe)*int64(g.N()) > MaxChunkCoords {
		return nil, fmt.Errorf("%w: keyframe interval %d × %d coordinates exceeds %d", ErrInput, cfg.keyframe, g.N(), MaxChunkCoords)
	}
	wr := &Writer{w: w, model: model, chunkG: cfg.keyframe, modes: cfg.modes, source: cfg.source}
	wr.h = Header{
		Version:          cmp.Or(cfg.version, Version),
		Geom:             g,
		Precision:        model.Precision,
		Lanes:            cfg.lanes,
		KeyframeInterval: cfg.keyframe,
		Lambda:           cfg.lambda,
		ModelID:          model.ID(),
	}
	if len(cfg.levels) > 0 {
		if cfg.lambdaSet {
			return nil, fmt.Errorf("%w: WithLambda and WithLevels both given", ErrInput)
		}
		wr.h.Levels = cfg.levels
		wr.h.Lambda = cfg.levels[len(cfg.levels)-1]
		wr.level = len(cfg.levels) - 1
	}
	var raw []byte
	if cfg.embed {
		if raw, err = model.MarshalBinary(); err != nil {
			return nil, err
		}
		if len(raw) == 0 || len(raw) > MaxModelBytes {
			return nil, fmt.Errorf("%w: model of %d bytes cannot be embedded (limit %d)", ErrInput, len(raw), MaxModelBytes)
		}
		wr.h.ModelEmbedded, wr.h.ModelSize = true, int64(len(raw))
	}
	gp, rules, err := useGate(&wr.h, model, cfg)
	if err != nil {
		return nil, argError(err)
	}
	if err := wr.startCoders(rules, gp, cfg.measure, cfg.threads); err != nil {
		return nil, err
	}
	wr.buf = append(wr.h.marshal(), raw...)
	wr.buf = append(wr.buf, wr.h.marshalLevels()...)
	return wr, nil
}

// startCoders makes the Writer's coder and, with several threads, the
// pipe whose crew shares it.
func (w *Writer) startCoders(rules *retention, gp *gate.Params, ms Measure, threads int) error {
	mk := func() (*chunkCoder, error) {
		c, err := newEncodeCoder(&w.h, w.model, rules, gp, ms)
		if c != nil {
			c.keep = w.source != nil
		}
		return c, err
	}
	var err error
	if w.coder, err = mk(); err != nil {
		return err
	}
	if threads > 1 {
		w.pipe = newEncodePipe(min(threads, maxThreads), &w.h, w.coder, mk)
	}
	return nil
}

// argError restates an error about a header being written, which checks
// share with decoders, without the file offset it would carry when
// reading: the fault is in the arguments.
func argError(err error) error {
	var fe *FormatError
	var ue *UnsupportedError
	switch {
	case errors.As(err, &fe):
		return fmt.Errorf("%w: %s", fe.Err, fe.Msg)
	case errors.As(err, &ue):
		return fmt.Errorf("%w: %s", ue.Err, ue.Msg)
	}
	return err
}

// SetLevel sets the retention level of the states written next: an index
// into the header's Levels (see WithLevels), so that the states are coded
// under lambda Levels[level]. A file without levels has only level 0. The
// default is the highest level (the one that retains most).
func (w *Writer) SetLevel(level int) error {
	if err := w.check(); err != nil {
		return err
	}
	if q := max(len(w.h.Levels), 1); level < 0 || level >= q {
		return fmt.Errorf("%w: level %d of %d", ErrInput, level, q)
	}
	w.level = level
	return nil
}

// fallback reports whether the Writer codes a chunk losslessly when that
// is no longer than the retention rule's coding (version 4, a file that is
// not lossless).
func (w *Writer) fallback() bool { return w.h.Version >= 4 && !w.h.Lossless() && w.modes == nil }

// Header returns the header the Writer writes.
func (w *Writer) Header() Header { return w.h }

func (w *Writer) check() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	return nil
}

// WriteEpisode ends the current episode, if any, and begins a new one.
// meta, if not empty, is stored with the episode and must be valid JSON of
// at most MaxMetaBytes.
func (w *Writer) WriteEpisode(meta []byte) error {
	if err := w.check(); err != nil {
		return err
	}
	if len(meta) > MaxMetaBytes {
		return fmt.Errorf("%w: metadata of %d bytes exceeds %d", ErrInput, len(meta), MaxMetaBytes)
	}
	if len(meta) > 0 && !json.Valid(meta) {
		return fmt.Errorf("%w: metadata is not valid JSON", ErrInput)
	}
	if len(w.idx.episodes) >= MaxEpisodes {
		return fmt.Errorf("%w: more than %d episodes", ErrInput, MaxEpisodes)
	}
	if err := w.endChunk(); err != nil {
		return err
	}
	w.idx.episodes = append(w.idx.episodes, episodeRef{metaLen: int64(len(meta))})
	ep := len(w.idx.episodes) - 1
	w.cur = &w.idx.episodes[ep]
	if p := w.pipe; p != nil && len(p.queue) > 0 {
		// Its offset is known once the chunks before it are placed.
		q := p.newItem()
		q.episode, q.ep, q.done = true, ep, closedDone
		q.rec = appendEpisodeRecord(q.rec[:0], meta)
		return w.enqueue(q)
	}
	w.cur.offset = w.off + int64(len(w.buf))
	w.buf = appendEpisodeRecord(w.buf, meta)
	return w.spill()
}

// appendEpisodeRecord appends the episode record of meta to dst.
func appendEpisodeRecord(dst, meta []byte) []byte {
	start := len(dst)
	dst = append(dst, tagEpisode, 0, 0, 0)
	dst = le.AppendUint32(dst, uint32(len(meta)))
	dst = append(dst, meta...)
	return le.AppendUint32(dst, crc(dst[start:]))
}

// WriteState appends a state to the current episode: the action that led
// into it and its N = S×M codes, each below K. codes is not retained.
func (w *Writer) WriteState(action int64, codes []uint16) error {
	return w.writeState(action, codes, rdIn{})
}

func (w *Writer) writeState(action int64, codes []uint16, rd rdIn) error {
	if err := w.check(); err != nil {
		return err
	}
	if w.cur == nil {
		return fmt.Errorf("%w: a state written before any episode was begun (WriteEpisode)", ErrInput)
	}
	if len(codes) != w.h.Geom.N() {
		return fmt.Errorf("%w: state has %d codes, want %d", ErrInput, len(codes), w.h.Geom.N())
	}
	for j, v := range codes {
		if int(v) >= w.h.Geom.K {
			return fmt.Errorf("%w: code %d at coordinate %d is not below K=%d", ErrInput, v, j, w.h.Geom.K)
		}
	}
	if w.idx.states >= MaxStates {
		return fmt.Errorf("%w: more than %d states", ErrInput, int64(MaxStates))
	}
	var n int
	if q := w.pipe.gathering(); q != nil {
		q.add(w.level, action, codes, rd)
		n = q.n
	} else {
		c := w.coder
		if c.states == 0 {
			var md chunkMode
			if w.modes != nil {
				md = w.modes(int(w.idx.chunks))
			}
			c.begin(md)
			c.enc.Reset()
			c.ep, c.step = len(w.idx.episodes)-1, int(w.cur.states)
			if w.fallback() || w.source != nil {
				if w.held == nil {
					w.held = &queued{}
				}
				w.held.n, w.held.levels, w.held.actions, w.held.codes = 0, w.held.levels[:0], w.held.actions[:0], w.held.codes[:0]
				w.held.ep, w.held.first = c.ep, c.step
			}
		}
		c.rdUse(rd)
		c.encodeState(w.level, action, codes)
		c.rdUse(rdIn{})
		if w.held != nil {
			w.held.add(w.level, action, codes, rdIn{})
		}
		n = c.states
	}
	w.cur.states++
	w.idx.states++
	if n == w.chunkG {
		return w.endChunk()
	}
	return nil
}

// endChunk closes the pending chunk, if any, into a chunk record: at once,
// or, with several threads, by queueing it for the crew.
func (w *Writer) endChunk() error {
	ep := len(w.idx.episodes) - 1
	if p := w.pipe; p != nil && !p.eager {
		if p.job == nil {
			return nil
		}
		return w.startChunk(ep)
	}
	c := w.coder
	if c.states == 0 {
		return nil
	}
	if err := w.place(0); err != nil { // records queued before a switch to eager coding
		return err
	}
	start := len(w.buf)
	var err error
	if w.buf, err = c.appendRecord(w.buf); err != nil {
		w.err = err
		return err
	}
	n, cost := c.states, c.cost()
	recons := c.recons
	if q := w.held; q != nil && q.n == n && w.fallback() {
		// The lossless alternative (SPEC.md 6.5): kept when no longer.
		var alt []byte
		var altCost chunkCost
		if alt, altCost, err = c.codeLossless(q, w.h.Geom.N(), q.alt[:0]); err == nil && len(alt) <= len(w.buf)-start {
			w.buf = append(w.buf[:start], alt...)
			cost = altCost
			cost.fallbacks = 1
			recons = q.codes
		}
		q.alt = alt
	}
	w.addChunk(ep, w.off+int64(start), int64(len(w.buf)-start), n, cost)
	w.addSource(recons)
	c.states = 0
	return w.spill()
}

// addSource adds to the report what the WithSource function says of the
// reconstruction of the chunk just placed.
func (w *Writer) addSource(recons []uint16) {
	if w.source != nil {
		w.idx.report = w.idx.report.add(w.source(recons))
	}
}

// putChunk places a chunk record coded elsewhere (the distortion search,
// in mode 0) as the next chunk of the current episode, of mode md, with n
// states and cost k. The Writer codes on the caller's goroutine and has
// no chunk pending.
func (w *Writer) putChunk(rec []byte, md chunkMode, n int, k chunkCost) error {
	if err := w.check(); err != nil {
		return err
	}
	if w.cur == nil || w.pipe != nil || w.coder.states != 0 || len(rec) < chunkHdrSize+crcSize {
		return fmt.Errorf("%w: chunk record out of place", ErrInput)
	}
	start := len(w.buf)
	w.buf = append(w.buf, rec...)
	b := w.buf[start:]
	b[1], b[2] = md.mode, md.level
	le.PutUint32(b[len(b)-crcSize:], crc(b[:len(b)-crcSize]))
	w.cur.states += int64(n)
	w.idx.states += int64(n)
	w.addChunk(len(w.idx.episodes)-1, w.off+int64(start), int64(len(b)), n, k)
	return w.spill()
}

// addChunk enters a placed chunk record of n states into the index and
// the account.
func (w *Writer) addChunk(ep int, off, length int64, n int, k chunkCost) {
	e := &w.idx.episodes[ep]
	var first int64
	if m := len(e.chunks); m > 0 {
		first = e.chunks[m-1].first + e.chunks[m-1].states
	}
	e.chunks = append(e.chunks, chunkRef{offset: off, length: length, states: int64(n), first: first})
	w.idx.chunks++
	w.idx.idealCodes += k.idealCodes
	w.idx.idealAction += k.idealActions
	w.idx.retained += k.retained
	w.acct.Wrong += k.wrong
	w.acct.DistSum += k.distSum
	w.dist += k.dist
	w.slots += k.slots
	w.idx.report.Slots += k.slots
	w.idx.report.Retention += k.dist
	w.acct.LosslessChunks += k.fallbacks
}

// spill writes the gathered bytes once there are enough of them.
func (w *Writer) spill() error {
	if len(w.buf) < flushThreshold {
		return nil
	}
	return w.flushBuf()
}

func (w *Writer) flushBuf() error {
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.w.Write(w.buf)
	if err == nil && n < len(w.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = err
		return err
	}
	w.off += int64(n)
	w.buf = w.buf[:0]
	return nil
}

// Flush ends the chunk being filled, waits for the chunks being encoded,
// writes every record to the
// underlying writer and, if that writer has a Sync method (as *os.File
// does), calls it. Everything written before a Flush survives a crash: a
// file cut anywhere after it recovers (WithRecovery, Recover) with every
// state written before the Flush and the episodes that hold them. An
// episode without states is recovered once the next record has begun: cut
// right after its record, it cannot be told from one whose states were
// lost. Ending a chunk early makes
// the next state of the episode a keyframe, which costs bits (the world
// model's history restarts): the output depends on where Flush was called,
// so flush at the pace durability needs, not after every state.
func (w *Writer) Flush() error {
	if err := w.check(); err != nil {
		return err
	}
	if err := w.endChunk(); err != nil {
		return err
	}
	if err := w.place(0); err != nil {
		return err
	}
	if err := w.flushBuf(); err != nil {
		return err
	}
	if s, ok := w.w.(interface{ Sync() error }); ok {
		if err := s.Sync(); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

// Close ends the current episode and writes the index and the trailer. It
// does not close the underlying writer. Closing twice returns nil.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	if w.err != nil {
		return w.err
	}
	if err := w.endChunk(); err != nil {
		return err
	}
	if err := w.place(0); err != nil {
		return err
	}
	ix := w.idx.marshal(w.h.Version)
	t := trailer{indexOffset: w.off + int64(len(w.buf)), indexLength: int64(len(ix)), indexCRC: crc(ix)}
	w.buf = append(w.buf, ix...)
	w.buf = append(w.buf, t.marshal()...)
	err := w.flushBuf()
	if err == nil && w.resign != nil {
		err = w.resign(w.off)
	}
	w.closed = true
	w.cur = nil
	return err
}

// AddSource records in the file's report (File.Report) that slots more
// slot vectors of the states written were compared with the floats they
// were quantized from: err is the sum of their relative squared errors
// and cos of their cosine similarities. The Writer does not see floats; a
// caller that quantized them measures (package wmzip does).
func (w *Writer) AddSource(slots uint64, err, cos float64) {
	w.idx.report = w.idx.report.add(Report{SourceSlots: slots, Source: err, Cosine: cos})
}

// Report returns the report the file's index records (version 4): the
// chunks placed so far, the whole file after Close.
func (w *Writer) Report() Report { return w.idx.report }

// Account is the writer's record of its reconstruction against the codes it
// was given: what a lossy file loses. Only the writer knows it; the file
// does not store it.
type Account struct {
	States   int64  // states written (in completed chunks)
	Retained uint64 // coded coordinates
	Wrong    uint64 // coordinates whose reconstruction differs from the code (omitted, or copied with a differing slot)
	DistSum  uint64 // Σ over them of the gate's distance (gate.UnitDistance each without a GATE section)
	// Distortion is the mean over the slot vectors written of their
	// distortion against the lossless reconstruction (WithMeasure), 0 for
	// a lossless file.
	Distortion float64
	// LosslessChunks counts the chunks of a lossy file coded losslessly
	// because the retention rule's coding of them was no smaller.
	LosslessChunks int64
	// Report is what the index records of the file's distortion (after
	// Close, Writer.Report): its retention part over the same chunks as
	// the rest of the account, its source part (WithSource) over the
	// chunks placed in the file so far.
	Report Report
}

// Account returns the account of the chunks completed so far (all of them
// after Close). With several threads it waits for the chunks being
// encoded.
func (w *Writer) Account() Account {
	open, q := w.pending()
	a := w.acct
	a.States, a.Retained = w.idx.states-open, w.idx.retained+q.retained
	a.Wrong += q.wrong
	a.DistSum += q.distSum
	a.LosslessChunks += q.fallbacks
	if slots := w.slots + q.slots; slots > 0 {
		a.Distortion = (w.dist + q.dist) / float64(slots)
	}
	a.Report = w.idx.report
	a.Report.Slots += q.slots
	a.Report.Retention += q.dist
	return a
}

// StateAccount is the writer's account of one state.
type StateAccount struct {
	Level      int     // retention level it was coded at (−1: its chunk is lossless)
	Cost       uint64  // ideal code length of its level, action and codes, 2^-16 bit (the file's bytes follow it to within the rANS flush)
	Retained   uint64  // coded coordinates
	Wrong      uint64  // coordinates whose reconstruction differs from the code
	DistSum    uint64  // Σ over them of the gate's distance (as Account.DistSum)
	Distortion float64 // Σ over its slots of their distortion (as Account.Distortion)
}

// LastAccount returns the account of the state most recently written: what
// it cost and what its reconstruction lost. It is how a caller allocating
// storage per state (package ctmc) measures each state's rate and
// distortion. Zero before any state.
//
// It needs every state coded as it is written: from the first call of
// LastAccount or LastState on, the Writer codes on the caller's goroutine
// whatever WithThreads says (the bytes are the same).
func (w *Writer) LastAccount() StateAccount {
	w.toEager()
	return w.coder.last
}

// LastState appends to dst[:0] the reconstruction of the state most
// recently written: the codes themselves when lossless, the values every
// decoder will return for it otherwise — unless the writer codes the
// state's chunk losslessly when it ends, as it does when that is no
// larger (Account.LosslessChunks counts such chunks): decoders then
// return the codes. It returns dst[:0] before any state.
func (w *Writer) LastState(dst []uint16) []uint16 {
	dst = dst[:0]
	if w.idx.states == 0 {
		return dst
	}
	w.toEager()
	s := w.coder.scratch[8:]
	for j := 0; j < len(s); j += 2 {
		dst = append(dst, le.Uint16(s[j:]))
	}
	return dst
}
