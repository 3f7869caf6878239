package format

// Chunks restart the predictor, the action model and the level model, and
// carry their own reconstruction checksum: a chunk's record depends only on
// its states, their actions and levels. So chunks are coded on goroutines
// of their own (WithThreads) and their records are placed in file order
// by the goroutine that called, which alone computes offsets, the index
// and the account and alone touches the underlying reader or writer. The
// bytes are those of a serial coder whatever the thread count.

// maxThreads bounds WithThreads: each thread holds a world-model predictor.
const maxThreads = 256

// closedDone is the done channel of work that is ready when queued.
var closedDone = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// A crew runs chunk work on goroutines, at most n at a time, each with a
// coder of its own. A goroutine exists only while its work is queued or
// running, so work abandoned by its owner ends by itself: nothing leaks.
type crew struct {
	sem chan struct{}
	get func() (*chunkCoder, error)
	put func(*chunkCoder)
}

func newCrew(n int, get func() (*chunkCoder, error), put func(*chunkCoder)) *crew {
	return &crew{sem: make(chan struct{}, n), get: get, put: put}
}

// do runs fn with a coder (or the error of getting one) on a goroutine of
// its own and closes done when fn has returned.
func (k *crew) do(done chan struct{}, fn func(c *chunkCoder, err error)) {
	go func() {
		k.sem <- struct{}{}
		c, err := k.get()
		fn(c, err)
		if c != nil {
			k.put(c)
		}
		<-k.sem
		close(done)
	}()
}

// coderList is a free list of at most n coders made by mk, for a crew of n.
type coderList struct {
	free chan *chunkCoder
	mk   func() (*chunkCoder, error)
}

func newCoderList(n int, mk func() (*chunkCoder, error)) *coderList {
	return &coderList{free: make(chan *chunkCoder, n), mk: mk}
}

func (l *coderList) get() (*chunkCoder, error) {
	select {
	case c := <-l.free:
		return c, nil
	default:
		return l.mk()
	}
}

func (l *coderList) put(c *chunkCoder) {
	select {
	case l.free <- c:
	default:
	}
}

// isDone reports whether done is closed, without waiting.
func isDone(done chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// decodedChunk is one chunk decoded, in place or ahead of its reader.
type decodedChunk struct {
	n       int
	actions []int64
	codes   []uint16
	cost    chunkCost
	err     error
	done    chan struct{}
}

// hold makes d's buffers hold n states of nc coordinates.
func (d *decodedChunk) hold(n, nc int) {
	if cap(d.actions) < n {
		d.actions = make([]int64, n)
		d.codes = make([]uint16, n*nc)
	}
	d.n, d.actions, d.codes = n, d.actions[:n], d.codes[:n*nc]
}

// eachChunk decodes the chunks of refs and calls visit with each in order,
// its decode error included; visit's error ends the walk. With several
// threads up to 2·threads chunks decode ahead of visit, as far as the
// memory limit allows; every goroutine has returned when eachChunk does.
func (f *File) eachChunk(refs []*chunkRef, visit func(i int, d *decodedChunk) error) error {
	nc := f.h.Geom.N()
	window := min(f.cfg.threads, maxThreads, len(refs)) * 2
	per := int64(f.h.KeyframeInterval) * (2*int64(nc) + 8)
	window = int(min(int64(window), (f.cfg.maxMemory-f.h.memory())/per))
	if window <= 2 {
		d := &decodedChunk{}
		cc := f.coder()
		defer f.pool.Put(cc)
		for i, ref := range refs {
			d.hold(int(ref.states), nc)
			d.cost, d.err = f.decodeRef(cc, ref, d.actions, d.codes)
			if err := visit(i, d); err != nil {
				return err
			}
		}
		return nil
	}
	k := newCrew(window/2, func() (*chunkCoder, error) { return f.coder(), nil }, func(c *chunkCoder) { f.pool.Put(c) })
	var queue, free []*decodedChunk
	defer func() {
		for _, d := range queue {
			<-d.done
		}
	}()
	next := 0
	for i := range refs {
		for ; next < len(refs) && len(queue) < window; next++ {
			var d *decodedChunk
			if m := len(free); m > 0 {
				d, free = free[m-1], free[:m-1]
			} else {
				d = &decodedChunk{}
			}
			ref := refs[next]
			d.hold(int(ref.states), nc)
			d.done = make(chan struct{})
			k.do(d.done, func(cc *chunkCoder, _ error) { d.cost, d.err = f.decodeRef(cc, ref, d.actions, d.codes) })
			queue = append(queue, d)
		}
		d := queue[0]
		<-d.done
		queue = queue[1:]
		if err := visit(i, d); err != nil {
			return err
		}
		free = append(free, d)
	}
	return nil
}
