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
