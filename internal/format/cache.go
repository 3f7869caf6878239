package format

import (
	"sync"

	"github.com/wmzip/wmzip/internal/wm"
)

// Random access decodes a chunk from its keyframe only as far as the state
// asked for. A File keeps the chunks it read last (WithCacheBytes): the
// states decoded so far and, until the chunk's last state, the live coder
// that decoded them, so a later read of a state before it costs a copy and
// one after it continues the decode where it stopped. Measurements:
// docs/results-random-access.md.

// A live coder's memory is the world model's bound for its predictor
// (wm.Model.PredictorBytes) plus the coder's own buffers: the reconstruction
// scratch, the rANS decoder and a cache entry's fields. TestCoderBytesBound
// checks the estimate against a measured coder.
const (
	coderFixed = 64 << 10 // rANS decoder, action and level models, scratch
	entryBytes = 256      // a cache entry's own fields
)

// coderBytes bounds the memory of a chunkCoder of model m that has decoded
// chunks of up to g states.
func coderBytes(m *wm.Model, g int) int64 {
	return coderFixed + 2*int64(m.Geom.N()) + m.PredictorBytes(g)
}

// chunkCache is a File's LRU cache of partly or wholly decoded chunks,
// holding at most limit bytes between calls (a call in flight holds its
// chunk as it would without a cache). Lock order: an entry's mutex is never
// held while taking mu, nor mu while taking an entry's.
type chunkCache struct {
	mu    sync.Mutex
	limit int64
	used  int64
	byOff map[int64]*cachedChunk // by chunk record offset
	lru   cachedChunk            // sentinel: lru.next is the most recent
}

// cachedChunk is one chunk, decoded from its keyframe up to state n-1.
type cachedChunk struct {
	// Guarded by chunkCache.mu.
	off        int64
	prev, next *cachedChunk
	cost       int64
	listed     bool // false once evicted: a new entry then serves off

	mu      sync.Mutex // guards what follows
	n       int        // states decoded
	actions []int64
	codes   []uint16
	cc      *chunkCoder // positioned after state n-1; nil when n is 0 or the chunk is done
	rec     []byte      // the chunk record, whose stream cc reads
}

func newChunkCache(limit int64) *chunkCache {
	c := &chunkCache{limit: limit, byOff: make(map[int64]*cachedChunk)}
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	return c
}

func (c *chunkCache) unlink(e *cachedChunk) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (c *chunkCache) pushFront(e *cachedChunk) {
	e.prev, e.next = &c.lru, c.lru.next
	c.lru.next.prev = e
	c.lru.next = e
}

// get returns the entry of the chunk at off, new and empty if it was not
// cached, and marks it most recently used.
func (c *chunkCache) get(off int64) *cachedChunk {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byOff[off]
	if e == nil {
		e = &cachedChunk{off: off, listed: true, cost: entryBytes}
		c.byOff[off] = e
		c.used += e.cost
	} else {
		c.unlink(e)
	}
	c.pushFront(e)
	return e
}

// settle charges entry e its new cost and evicts least recently used
// entries until the cache fits its limit; an entry larger than the limit
// by itself is evicted alone. It returns the entries whose data the caller
// must drop, e included if it is no longer cached.
func (c *chunkCache) settle(e *cachedChunk, cost int64) []*cachedChunk {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !e.listed {
		return []*cachedChunk{e}
	}
	c.used += cost - e.cost
	e.cost = cost
	if cost > c.limit {
		c.remove(e)
		return []*cachedChunk{e}
	}
	var out []*cachedChunk
	for c.used > c.limit {
		old := c.lru.prev // e only if others were used since
		c.remove(old)
		out = append(out, old)
	}
	return out
}

// drop removes entry e from the cache if it is still there.
func (c *chunkCache) drop(e *cachedChunk) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.listed {
		c.remove(e)
	}
}

func (c *chunkCache) remove(e *cachedChunk) {
	c.unlink(e)
	delete(c.byOff, e.off)
	c.used -= e.cost
	e.cost, e.listed = 0, false
}

// bytes is what entry e holds: decoded states and, while it has one, the
// live coder with the record its decoder reads. e.mu is held.
func (e *cachedChunk) bytes(coder int64) int64 {
	b := entryBytes + 8*int64(cap(e.actions)) + 2*int64(cap(e.codes))
	if e.cc != nil {
		b += coder + int64(len(e.rec))
	}
	return b
}

// release forgets everything e holds, returning its coder to pool. e.mu is
// held.
func (e *cachedChunk) release(pool *sync.Pool) {
	if e.cc != nil {
		pool.Put(e.cc)
	}
	e.cc, e.rec, e.actions, e.codes, e.n = nil, nil, nil, nil, 0
}
