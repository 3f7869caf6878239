package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ReadOptions shape how an Object reads; zero fields take the defaults.
type ReadOptions struct {
	// HeadBytes and TailBytes are read when the object is opened, in two
	// requests sent together: the head holds a .wmz's header, embedded
	// model and level table, the tail its trailer and index (48 bytes
	// plus 24 per episode and 16 per chunk, SPEC.md 6.7). What does not
	// fit costs one more request when it is read. Defaults 64 KiB each.
	HeadBytes, TailBytes int64
	// ReadAhead is the most a read that misses the cache fetches beyond
	// what it asked for, and it never fetches more beyond than it asked:
	// a random read moves at most twice its bytes (default 64 KiB).
	ReadAhead int64
	// MaxWindow bounds the read-ahead of reads that follow one another,
	// which doubles with each window read, from 2·ReadAhead (default
	// 8 MiB). The next window is fetched while the reader is half way
	// through the one before.
	MaxWindow int64
	// CacheBytes bounds the bytes an Object keeps (default 32 MiB; at
	// least 2·MaxWindow, the windows being read and fetched).
	CacheBytes int64
}

func (ro ReadOptions) withDefaults() ReadOptions {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&ro.HeadBytes, 64<<10)
	def(&ro.TailBytes, 64<<10)
	def(&ro.ReadAhead, 64<<10)
	def(&ro.MaxWindow, 8<<20)
	ro.MaxWindow = max(ro.MaxWindow, ro.ReadAhead)
	def(&ro.CacheBytes, 32<<20)
	ro.CacheBytes = max(ro.CacheBytes, 2*ro.MaxWindow)
	return ro
}

// An Object is an io.ReaderAt over one object of a Store, as it was when
// opened (its size and ETag). Its methods are safe for concurrent use;
// concurrent reads of bytes being fetched wait for that one request.
type Object struct {
	s           *Store
	ctx         context.Context
	bucket, key string
	size        int64
	etag        string
	ro          ReadOptions
	c           counters

	mu    sync.Mutex
	spans []*span // fetched or being fetched, in no order
	used  int64   // bytes of spans
	clock uint64
}

// span is a range of the object, fetched or being fetched.
type span struct {
	off, end int64
	ready    chan struct{} // closed when data or err is set
	data     []byte
	err      error
	lastUse  uint64
	window   int64 // read-ahead it was fetched with, for a window; 0 otherwise
	ahead    bool  // the window after it was started
	run      int   // spans before it, each ending where the next begins
}

// Open opens the object bucket/key for reading at random: it reads the
// object's head and tail (ReadOptions) in two requests sent together,
// which give its size and ETag too. ctx bounds every request the Object
// sends, Close aside.
func (s *Store) Open(ctx context.Context, bucket, key string, ro ReadOptions) (*Object, error) {
	ro = ro.withDefaults()
	o := &Object{s: s, ctx: ctx, bucket: bucket, key: key, ro: ro}
	var head, tail rangeResult
	var herr, terr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tail, terr = s.getRange(ctx, &o.c, bucket, key, "", -ro.TailBytes, 0)
	}()
	head, herr = s.getRange(ctx, &o.c, bucket, key, "", 0, ro.HeadBytes)
	wg.Wait()
	if herr != nil {
		return nil, s.storeError("open", bucket, key, herr)
	}
	if terr != nil {
		return nil, s.storeError("open", bucket, key, terr)
	}
	if head.size != tail.size || head.etag != tail.etag {
		return nil, &Error{Op: "open", URL: objURL(bucket, key), Err: ErrChanged}
	}
	o.size, o.etag = head.size, head.etag
	o.addReady(0, head.data)
	if h, t := int64(len(head.data)), o.size-int64(len(tail.data)); t >= h {
		o.addReady(t, tail.data)
	} else if t >= 0 { // the two overlap: keep what the head lacks
		o.addReady(h, tail.data[h-t:])
	}
	return o, nil
}

func (o *Object) addReady(off int64, b []byte) {
	if len(b) == 0 {
		return
	}
	s := &span{off: off, end: off + int64(len(b)), data: b, ready: make(chan struct{})}
	close(s.ready)
	o.spans = append(o.spans, s)
	o.used += int64(len(b))
}

// Size returns the object's size in bytes.
func (o *Object) Size() int64 { return o.size }

// ETag returns the object's ETag when it was opened.
func (o *Object) ETag() string { return o.etag }

// URL returns s3://bucket/key.
func (o *Object) URL() string { return objURL(o.bucket, o.key) }

// Stats returns the counts of the requests the Object sent, opening
// included.
func (o *Object) Stats() Stats { return o.c.load() }

// Close forgets what the Object holds. Fetches under way end on their own.
func (o *Object) Close() error {
	o.mu.Lock()
	o.spans, o.used = nil, 0
	o.mu.Unlock()
	return nil
}

// ReadAt reads len(p) bytes at off, as io.ReaderAt: fewer only at the end
// of the object, with io.EOF.
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &Error{Op: "read", URL: o.URL(), Err: errors.New("negative offset")}
	}
	if off >= o.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), o.size-off))
	end := off + int64(n)
	for done := 0; done < n; {
		pos := off + int64(done)
		s, err := o.spanAt(pos, end)
		if err != nil {
			return done, err
		}
		done += copy(p[done:n], s.data[pos-s.off:])
		o.readFrom(s, off+int64(done))
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// spanAt returns the span holding byte pos once it is fetched, starting
// the fetch of pos up to end and its read-ahead if no span holds it.
func (o *Object) spanAt(pos, end int64) (*span, error) {
	o.mu.Lock()
	s := o.covering(pos)
	if s == nil {
		s = o.miss(pos, end)
	}
	o.clock++
	s.lastUse = o.clock
	o.mu.Unlock()
	<-s.ready
	if s.err != nil {
		o.mu.Lock()
		o.remove(s) // the next read tries again
		o.mu.Unlock()
		return nil, s.err
	}
	return s, nil
}

// covering returns the span holding byte pos, or nil. o.mu is held.
func (o *Object) covering(pos int64) *span {
	for _, s := range o.spans {
		if s.off <= pos && pos < s.end {
			return s
		}
	}
	return nil
}

// nextStart returns the start of the first span after pos, or the size.
// o.mu is held.
func (o *Object) nextStart(pos int64) int64 {
	n := o.size
	for _, s := range o.spans {
		if s.off > pos && s.off < n {
			n = s.off
		}
	}
	return n
}

// miss starts fetching bytes pos to end, no span holding pos. A read adds
// at most its own length, up to ReadAhead; but a miss that begins where
// a span ends which itself began where another ended is a sequential
// scan, which reads windows that double with each such miss (and are
// fetched ahead, readFrom). One such miss alone can be a random read
// that happens to follow another: it stays small. Spans, not the order
// of the misses, tell, so that the decoder's threads, which read the
// chunks of an episode at once and not quite in order, still scan. Bytes
// held are not fetched again. o.mu is held.
func (o *Object) miss(pos, end int64) *span {
	run := 0
	if pos > 0 {
		if prev := o.endingAt(pos); prev != nil {
			run = prev.run + 1
		}
	}
	var ra int64
	if run < 2 {
		ra = min(end-pos, o.ro.ReadAhead)
	} else {
		ra = min(o.ro.MaxWindow, o.ro.ReadAhead<<min(run-1, 30))
	}
	stop := min(end+ra, o.nextStart(pos))
	s := o.fetch(pos, stop)
	s.run = run
	if run >= 2 {
		s.window = ra
	}
	// A span asked for earlier that begins where this one ends (a thread
	// ran ahead) continues the run.
	if next := o.startingAt(stop); next != nil {
		next.run = max(next.run, run+1)
	}
	return s
}

// startingAt returns a span that begins at pos, or nil. o.mu is held.
func (o *Object) startingAt(pos int64) *span {
	for _, s := range o.spans {
		if s.off == pos {
			return s
		}
	}
	return nil
}

// endingAt returns a span that ends at pos, or nil. o.mu is held.
func (o *Object) endingAt(pos int64) *span {
	for _, s := range o.spans {
		if s.end == pos {
			return s
		}
	}
	return nil
}

// readFrom starts fetching the window after s when a sequential reader
// is half way through s: from the first byte after s that no span holds
// (the decoder's other threads may have asked for the chunks just after
// s already).
func (o *Object) readFrom(s *span, pos int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s.window == 0 || s.ahead || pos < s.off+(s.end-s.off)/2 {
		return
	}
	s.ahead = true
	q, run := s.end, s.run
	for q < o.size {
		c := o.covering(q)
		if c == nil {
			break
		}
		q, run = c.end, max(run, c.run)
		if q-s.end >= s.window { // far enough ahead already
			return
		}
	}
	if q >= o.size {
		return
	}
	w := min(2*s.window, o.ro.MaxWindow)
	n := o.fetch(q, min(q+w, o.nextStart(q)))
	n.window, n.run = w, run+1
}

// fetch adds a span for bytes [pos, end) and fetches it in the
// background. o.mu is held.
func (o *Object) fetch(pos, end int64) *span {
	s := &span{off: pos, end: end, ready: make(chan struct{})}
	o.spans = append(o.spans, s)
	o.used += end - pos
	o.evict(s)
	go func() {
		r, err := o.s.getRange(o.ctx, &o.c, o.bucket, o.key, o.etag, pos, end)
		if err == nil && int64(len(r.data)) != end-pos {
			err = &Error{Op: fmt.Sprintf("read bytes %d-%d", pos, end-1), URL: o.URL(),
				Err: fmt.Errorf("%w: the object ends at byte %d, not %d as when it was opened", io.ErrUnexpectedEOF, pos+int64(len(r.data)), o.size)}
		}
		s.data, s.err = r.data, err
		close(s.ready)
	}()
	return s
}

// evict drops the spans used longest ago, fetched ones only, until the
// Object holds at most CacheBytes (keep aside). o.mu is held.
func (o *Object) evict(keep *span) {
	for o.used > o.ro.CacheBytes {
		var old *span
		for _, s := range o.spans {
			if s != keep && isReady(s) && (old == nil || s.lastUse < old.lastUse) {
				old = s
			}
		}
		if old == nil {
			return
		}
		o.remove(old)
	}
}

func isReady(s *span) bool {
	select {
	case <-s.ready:
		return true
	default:
		return false
	}
}

// remove forgets span s. o.mu is held.
func (o *Object) remove(s *span) {
	for i, x := range o.spans {
		if x == s {
			o.spans = append(o.spans[:i], o.spans[i+1:]...)
			o.used -= s.end - s.off
			return
		}
	}
}
