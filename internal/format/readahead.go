package format

// The Reader's read-ahead. Its input is an io.Reader, read in order; the
// records its buffer already holds beyond the one being read are framed
// without being consumed (bufio.Reader.Peek within Buffered, so no read
// waits for data the caller did not ask for) and their chunks decoded on
// the crew. The Reader then reads and checks each record as it would
// alone and takes the decoded chunk when it is that record, byte for byte:
// errors and results are those of a serial read, read-ahead only guesses.

// readAheadBytes is the Reader's buffer with several threads: how far
// ahead of the record being read chunks can be framed.
const readAheadBytes = 1 << 20

// aheadChunk is a chunk record framed ahead and decoded on the crew.
type aheadChunk struct {
	off     int64 // record offset
	md      chunkMode
	n       int
	sum     uint32
	stream  []byte
	actions []int64 // G states, as the Reader's own buffers
	codes   []uint16
	levels  []int8
	cost    chunkCost
	err     error
	done    chan struct{}
}

type readAhead struct {
	h      *Header
	crew   *crew
	g, nc  int
	levels bool
	window int   // chunks decoded ahead at most
	scan   int64 // offset of the next record to frame
	queue  []*aheadChunk
	free   []*aheadChunk
}

// newReadAhead returns the read-ahead of a Reader of header h, nil when it
// has one thread or the memory limit leaves no room for a chunk ahead. The
// Reader's coder own joins the crew's: with read-ahead every chunk decodes
// on the crew.
func newReadAhead(h *Header, cfg *config, own *chunkCoder, mk func() (*chunkCoder, error)) *readAhead {
	threads := min(cfg.threads, maxThreads)
	if threads <= 1 {
		return nil
	}
	g, nc := h.KeyframeInterval, h.Geom.N()
	per := int64(g)*(2*int64(nc)+9) + readAheadBytes/int64(2*threads)
	window := int(min(int64(2*threads), (cfg.maxMemory-h.memory()-readAheadBytes)/per))
	if window < 1 {
		return nil
	}
	l := newCoderList(threads, mk)
	l.put(own)
	return &readAhead{h: h, crew: newCrew(threads, l.get, l.put), g: g, nc: nc, levels: len(h.Levels) > 0 || h.Version >= 4, window: window}
}

// prefetch frames the chunk records the buffer holds past those already
// framed and starts decoding them, up to the window. Anything it cannot
// frame stops it: the Reader reports it when it gets there.
func (r *Reader) prefetch() {
	a := r.ahead
	if a == nil {
		return
	}
	a.scan = max(a.scan, r.off)
	for len(a.queue) < a.window {
		avail := int64(r.br.Buffered())
		rel := a.scan - r.off
		if rel+chunkHdrSize > avail {
			return
		}
		b, _ := r.br.Peek(int(avail))
		b = b[rel:]
		switch b[0] {
		case tagEpisode:
			a.scan += episodeHdrSize + int64(le.Uint32(b[4:])) + crcSize
		case tagChunk:
			n, sl := int64(le.Uint32(b[4:])), int64(le.Uint32(b[8:]))
			if n < 1 || n > int64(a.g) || chunkHdrSize+sl+crcSize > int64(len(b)) {
				return
			}
			if _, err := parseChunkMode(a.h, b, a.scan); err != nil {
				return
			}
			a.start(a.scan, modeOf(b), int(n), b[chunkHdrSize:chunkHdrSize+sl], le.Uint32(b[12:]))
			a.scan += chunkHdrSize + sl + crcSize
		default:
			return
		}
	}
}

// start decodes a copy of stream, the chunk record at off, on the crew.
func (a *readAhead) start(off int64, md chunkMode, n int, stream []byte, sum uint32) {
	var q *aheadChunk
	if k := len(a.free); k > 0 {
		q, a.free = a.free[k-1], a.free[:k-1]
	} else {
		q = &aheadChunk{actions: make([]int64, a.g), codes: make([]uint16, a.g*a.nc)}
		if a.levels {
			q.levels = make([]int8, a.g)
		}
	}
	q.off, q.md, q.n, q.sum = off, md, n, sum
	q.stream = append(q.stream[:0], stream...)
	q.done = make(chan struct{})
	a.crew.do(q.done, func(c *chunkCoder, err error) {
		c.levels = q.levels
		q.err = c.decodeChunk(q.stream, q.md, q.n, q.sum, q.actions, q.codes, q.off)
		q.cost = c.cost()
		c.levels = nil
	})
	a.queue = append(a.queue, q)
}

// take returns the chunk decoded, or being decoded, for the record at off,
// of n states, stream and checksum sum; nil without read-ahead. A record
// not framed ahead (the first, or after framing went astray on damage the
// Reader has yet to find) drops what was framed: it is decoded now and
// framing starts again after it.
func (a *readAhead) take(off int64, md chunkMode, n int, stream []byte, sum uint32) *aheadChunk {
	if a == nil {
		return nil
	}
	for len(a.queue) > 0 && a.queue[0].off < off {
		a.pop()
	}
	if len(a.queue) > 0 {
		q := a.queue[0]
		if q.off == off && q.md == md && q.n == n && q.sum == sum && string(q.stream) == string(stream) {
			a.queue = a.queue[1:]
			return q
		}
	}
	a.drop()
	a.scan = off + chunkHdrSize + int64(len(stream)) + crcSize
	a.start(off, md, n, stream, sum)
	q := a.queue[0]
	a.queue = a.queue[1:]
	return q
}

// pop drops the head of the queue once its decode has ended.
func (a *readAhead) pop() {
	q := a.queue[0]
	<-q.done
	a.queue = a.queue[1:]
	a.recycle(q)
}

// drop waits for every chunk being decoded ahead and forgets them all.
func (a *readAhead) drop() {
	if a == nil {
		return
	}
	for len(a.queue) > 0 {
		a.pop()
	}
}

func (a *readAhead) recycle(q *aheadChunk) {
	q.err = nil
	a.free = append(a.free, q)
}
