package format

// The Writer's parallel path. With several threads, WriteState gathers a
// chunk's states (levels, actions, codes) and, when the chunk ends, hands
// them to the crew; the finished records join a queue in file order, with
// the episode records between them, and are placed as the queue's head
// completes. The queue holds at most 2·threads records, so memory is
// bounded by that many chunks of states and streams.

// queued is a record waiting for its place in the file: an episode record,
// ready when queued, or a chunk being encoded.
type queued struct {
	episode bool
	ep      int // episode the record belongs to, in the index
	first   int // a chunk's first step in its episode
	done    chan struct{}

	// A chunk's states, gathered by the caller.
	n       int
	levels  []uint8
	actions []int64
	codes   []uint16
	rd      []rdIn // per state, when any is coded by rate and distortion

	// Written by the crew before done closes.
	rec      []byte   // the record's bytes
	alt      []byte   // the lossless alternative's, when tried
	lossless bool     // rec is the lossless alternative
	recons   []uint16 // the reconstruction of the states (WithSource)
	cost     chunkCost
	last     StateAccount // of the chunk's last state
	scratch  []byte       // the last state's reconstruction (chunkCoder.scratch)
	err      error
}

// encodePipe is a Writer's crew and queue. All but the crew's goroutines
// use it from the Writer's caller only.
type encodePipe struct {
	crew  *crew
	nc    int // coordinates per state
	limit int // queue length at which the caller waits
	queue []*queued
	free  []*queued
	job   *queued // chunk being gathered, nil between chunks
	eager bool    // LastAccount or LastState was used: code on the caller's goroutine from now on

	// The last state placed: its account and reconstruction, for the
	// Writer's coder once eager.
	last    StateAccount
	scratch []byte
}

// newEncodePipe returns the pipe of a Writer whose own coder is own: it
// joins the crew's, as the Writer codes on its goroutine only once eager,
// when the crew is idle for good.
func newEncodePipe(threads int, h *Header, own *chunkCoder, mk func() (*chunkCoder, error)) *encodePipe {
	l := newCoderList(threads, mk)
	l.put(own)
	return &encodePipe{crew: newCrew(threads, l.get, l.put), nc: h.Geom.N(), limit: 2 * threads}
}

// newItem returns a recycled or new queue item.
func (p *encodePipe) newItem() *queued {
	if k := len(p.free); k > 0 {
		q := p.free[k-1]
		p.free = p.free[:k-1]
		return q
	}
	return &queued{}
}

func (p *encodePipe) recycle(q *queued) {
	q.n, q.levels, q.actions, q.codes = 0, q.levels[:0], q.actions[:0], q.codes[:0]
	clear(q.rd)
	q.rd = q.rd[:0]
	q.rec, q.err, q.episode = q.rec[:0], nil, false
	p.free = append(p.free, q)
}

// gathering returns the chunk being gathered, starting one if needed, or
// nil when states are coded on the caller's goroutine.
func (p *encodePipe) gathering() *queued {
	if p == nil || p.eager {
		return nil
	}
	if p.job == nil {
		p.job = p.newItem()
	}
	return p.job
}

func (q *queued) add(level int, action int64, codes []uint16, rd rdIn) {
	if rd.costs != nil && len(q.rd) < q.n {
		q.rd = append(q.rd, make([]rdIn, q.n-len(q.rd))...)
	}
	if rd.costs != nil || len(q.rd) > 0 {
		q.rd = append(q.rd, rd)
	}
	q.levels = append(q.levels, uint8(level))
	q.actions = append(q.actions, action)
	q.codes = append(q.codes, codes...)
	q.n++
}

// replay codes the gathered states into c, as WriteState would have, in
// a chunk of mode md.
func (q *queued) replay(c *chunkCoder, nc int, md chunkMode) {
	c.begin(md)
	c.enc.Reset()
	c.ep, c.step = q.ep, q.first
	for i := range q.n {
		if i < len(q.rd) {
			c.rdUse(q.rd[i])
		}
		c.encodeState(int(q.levels[i]), q.actions[i], q.codes[i*nc:(i+1)*nc])
	}
	c.rdUse(rdIn{})
}

// encode codes the gathered chunk into its record; it runs on the crew.
// With fallback (a file that is not lossless) it also codes the chunk
// losslessly and keeps that record when it is no longer.
func (q *queued) encode(c *chunkCoder, nc int, fallback bool) {
	q.replay(c, nc, chunkMode{})
	q.rec, q.err = c.appendRecord(q.rec[:0])
	q.cost, q.last = c.cost(), c.last
	q.scratch = append(q.scratch[:0], c.scratch...)
	q.recons = append(q.recons[:0], c.recons...)
	q.lossless = false
	if fallback && q.err == nil {
		var cost chunkCost
		var err error
		if q.alt, cost, err = c.codeLossless(q, nc, q.alt[:0]); err == nil && len(q.alt) <= len(q.rec) {
			q.rec, q.alt = q.alt, q.rec
			q.cost, q.lossless = cost, true
			q.cost.fallbacks = 1
		}
	}
	c.states = 0
}

// codeLossless codes the states of q into a chunk record of mode lossless,
// appended to dst, and returns it with its cost. The coder's account of
// the last state coded before (LastAccount, LastState) is kept.
func (c *chunkCoder) codeLossless(q *queued, nc int, dst []byte) ([]byte, chunkCost, error) {
	last := c.last
	c.saved = append(c.saved[:0], c.scratch...)
	keep := c.keep
	c.keep = false // the reconstruction of a lossless chunk is its codes
	q.replay(c, nc, chunkMode{mode: modeLossless})
	c.keep = keep
	dst, err := c.appendRecord(dst)
	cost := c.cost()
	c.last = last
	copy(c.scratch, c.saved)
	return dst, cost, err
}

// startChunk hands the gathered chunk of episode ep to the crew and queues
// it.
func (w *Writer) startChunk(ep int) error {
	p := w.pipe
	q := p.job
	p.job, q.ep, q.first = nil, ep, int(w.cur.states)-q.n
	q.done = make(chan struct{})
	p.crew.do(q.done, func(c *chunkCoder, err error) {
		if err != nil {
			q.err = err
			return
		}
		q.encode(c, p.nc, w.fallback())
	})
	return w.enqueue(q)
}

// enqueue adds q to the queue and places what is ready, waiting while the
// queue is over its limit.
func (w *Writer) enqueue(q *queued) error {
	p := w.pipe
	p.queue = append(p.queue, q)
	return w.place(p.limit)
}

// place puts the records at the head of the queue into the file as they
// complete, waiting for them while more than keep are queued. The first
// error is sticky; the work still queued is then waited for and dropped,
// so no goroutine outlives the call.
func (w *Writer) place(keep int) error {
	p := w.pipe
	if p == nil {
		return nil
	}
	for len(p.queue) > 0 {
		q := p.queue[0]
		if len(p.queue) <= keep && !isDone(q.done) {
			break
		}
		<-q.done
		n := copy(p.queue, p.queue[1:])
		p.queue[n] = nil
		p.queue = p.queue[:n]
		if err := w.put(q); err != nil {
			w.err = err
			for _, q := range p.queue {
				<-q.done
			}
			clear(p.queue)
			p.queue = p.queue[:0]
			return err
		}
	}
	return nil
}

// put places one completed record.
func (w *Writer) put(q *queued) error {
	if q.err != nil {
		return q.err
	}
	off := w.off + int64(len(w.buf))
	w.buf = append(w.buf, q.rec...)
	if q.episode {
		w.idx.episodes[q.ep].offset = off
	} else {
		w.addChunk(q.ep, off, int64(len(q.rec)), q.n, q.cost)
		if q.lossless {
			w.addSource(q.codes)
		} else {
			w.addSource(q.recons)
		}
		p := w.pipe
		p.last = q.last
		p.scratch, q.scratch = q.scratch, p.scratch
	}
	w.pipe.recycle(q)
	return w.spill()
}

// toEager makes the Writer code states on the caller's goroutine from now
// on, as LastAccount and LastState need each state coded when written:
// the queue is placed and the chunk being gathered is coded in place.
func (w *Writer) toEager() {
	p := w.pipe
	if p == nil || p.eager {
		return
	}
	p.eager = true
	if w.err == nil && w.place(0) != nil {
		return
	}
	for _, q := range p.queue { // none unless placing failed before
		<-q.done
	}
	if len(p.scratch) > 0 {
		w.coder.last = p.last
		copy(w.coder.scratch, p.scratch)
	}
	if q := p.job; q != nil {
		p.job = nil
		q.ep, q.first = len(w.idx.episodes)-1, int(w.cur.states)-q.n
		q.replay(w.coder, p.nc, chunkMode{})
		if w.fallback() || w.source != nil {
			// The chunk's states, for its lossless alternative and its
			// reconstruction.
			w.held, q = q, w.held
		}
		if q != nil {
			p.recycle(q)
		}
	}
}

// pending returns the states written into the chunk not yet ended and the
// account of the chunks queued (waiting for them to be coded).
func (w *Writer) pending() (states int64, queued chunkCost) {
	p := w.pipe
	if p == nil || p.eager {
		states = int64(w.coder.states)
	}
	if p == nil {
		return states, queued
	}
	if p.job != nil {
		states += int64(p.job.n)
	}
	for _, q := range p.queue {
		<-q.done
		if !q.episode && q.err == nil {
			queued.retained += q.cost.retained
			queued.wrong += q.cost.wrong
			queued.distSum += q.cost.distSum
			queued.dist += q.cost.dist
			queued.slots += q.cost.slots
			queued.fallbacks += q.cost.fallbacks
		}
	}
	return states, queued
}
