package search

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/wm"
)

// Memory is what Search runs over: the indexes of one or more .wmz files
// written with one model, in order. Episodes are numbered across them as
// if they were one file: episode e of the second file is episode
// len(first.Episodes()) + e of the memory (Locate turns it back). A Memory
// is safe for concurrent use.
type Memory struct {
	c       *wmzip.Codec // the codec of the files: a bundle's member that wrote them
	q       *opq.Quantizer
	g       wm.Geometry
	files   []*Index
	firstEp []int   // first memory episode of each file
	firstSt []int64 // first memory state of each file
	epFirst []int64 // first memory state of each memory episode, and the total at the end
}

// NewMemory returns the memory of the indexes, all built with codec c, or
// all with one member of c when it is a bundle (files written by
// different members of a bundle are searched one member at a time).
func NewMemory(c *wmzip.Codec, files ...*Index) (*Memory, error) {
	bundle := c
	if len(files) > 0 {
		c = member(c, files[0].id.model)
	}
	if err := checkCodec(c); err != nil {
		return nil, err
	}
	for i, ix := range files {
		if ix.id.model != c.Model().ID() {
			if m := member(bundle, ix.id.model); m != bundle {
				return nil, fmt.Errorf("%w: files %d and 0 were written by different members of the bundle (models %s and %s): search them apart", ErrInput, i, ix.id.model, c.Model().ID())
			}
			return nil, fmt.Errorf("%w: index %d was built with model %s, not %s", ErrStale, i, ix.id.model, c.Model().ID())
		}
		if ix.geom != c.Geometry() {
			return nil, fmt.Errorf("%w: index %d has geometry %v, the model %v", ErrIndex, i, ix.geom, c.Geometry())
		}
	}
	m := newMemory(c.Quantizer(), c.Geometry(), files)
	m.c = c
	return m, nil
}

// Codec returns the codec the memory searches with: the one given, or the
// member of the bundle given that wrote its files.
func (m *Memory) Codec() *wmzip.Codec { return m.c }

// member returns the member of c whose model has the given ID (c itself
// for a codec of one model), or c when none has.
func member(c *wmzip.Codec, id wm.ModelID) *wmzip.Codec {
	if c == nil {
		return nil
	}
	for _, m := range c.Members() {
		if m.Model().ID() == id {
			return m
		}
	}
	return c
}

// newMemory is NewMemory without the checks.
func newMemory(q *opq.Quantizer, g wm.Geometry, files []*Index) *Memory {
	m := &Memory{q: q, g: g, files: files}
	var st int64
	for _, ix := range files {
		m.firstEp = append(m.firstEp, len(m.epFirst))
		m.firstSt = append(m.firstSt, st)
		for _, n := range ix.epLens {
			m.epFirst = append(m.epFirst, st)
			st += int64(n)
		}
	}
	m.epFirst = append(m.epFirst, st)
	return m
}

// Episodes returns the number of episodes of the memory.
func (m *Memory) Episodes() int { return len(m.epFirst) - 1 }

// States returns the number of states of the memory.
func (m *Memory) States() int64 { return m.epFirst[len(m.epFirst)-1] }

// Locate returns the file (its position among the indexes) and that
// file's episode number of memory episode e.
func (m *Memory) Locate(e int) (file, episode int) {
	f := sort.Search(len(m.firstEp), func(i int) bool { return m.firstEp[i] > e }) - 1
	return f, e - m.firstEp[f]
}

// Query is one query: float vectors or codes, one slot vector (Dim floats
// or M codes) for a slot query, S of them for a state query.
type Query struct {
	Vectors []float32
	Codes   []uint16
}

// Options configure Search.
type Options struct {
	K      int  // neighbours per query (default 10)
	States bool // state queries: whole states, distances summed over slots
	// NProbe is how many cells of each file's partition a state query
	// scans, the nearest to the query first; 0 scans every state. Files
	// without a partition are scanned whole.
	NProbe int
	// Episodes and Steps restrict the states searched to memory episodes
	// [Episodes[0], Episodes[1]) and steps [Steps[0], Steps[1]) of each
	// episode; an end of 0 means no bound.
	Episodes, Steps [2]int
	// Threads is the goroutines a search uses (0: every core). Results do
	// not depend on it.
	Threads int
}

// Result is one neighbour.
type Result struct {
	Episode int // memory episode (Locate gives the file's own)
	Step    int
	Slot    int // the slot vector's slot; -1 for a state query
	// Distance is the squared Euclidean distance between the query and
	// the stored vector's reconstruction (a state query: summed over
	// slots), up to the rounding of the integer tables that rank them.
	Distance float64
}

// Search returns the K nearest neighbours of each query, nearest first:
// by asymmetric distance (the query against the reconstruction of the
// stored codes), ties broken by episode, step and slot. The ranks are
// decided in integers and are the same on every machine. ctx is checked
// between blocks of states.
func (m *Memory) Search(ctx context.Context, qs []Query, opt Options) ([][]Result, error) {
	if opt.K <= 0 {
		opt.K = 10
	}
	if opt.NProbe < 0 || opt.Episodes[0] < 0 || opt.Steps[0] < 0 || opt.Episodes[1] < 0 || opt.Steps[1] < 0 {
		return nil, fmt.Errorf("%w: negative option", ErrInput)
	}
	if opt.NProbe > 0 && !opt.States {
		return nil, fmt.Errorf("%w: the partition groups states; slot queries scan every vector (no NProbe)", ErrInput)
	}
	threads := opt.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	plans := make([]*plan, len(qs))
	for i, q := range qs {
		p, err := m.plan(q, opt)
		if err != nil {
			return nil, fmt.Errorf("query %d: %w", i, err)
		}
		plans[i] = p
	}
	out := make([][]Result, len(qs))
	if len(qs) >= threads || threads == 1 {
		// One query a goroutine.
		var wg sync.WaitGroup
		var mu sync.Mutex
		var first error
		next := make(chan int)
		for range min(threads, len(qs)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					r, err := m.run(ctx, plans[i], opt, 1)
					mu.Lock()
					if err != nil && first == nil {
						first = err
					}
					out[i] = r
					mu.Unlock()
				}
			}()
		}
		for i := range qs {
			if ctx.Err() != nil {
				break
			}
			next <- i
		}
		close(next)
		wg.Wait()
		if first == nil {
			first = ctx.Err()
		}
		return out, first
	}
	for i := range qs {
		r, err := m.run(ctx, plans[i], opt, threads)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// plan is one query prepared: its integer tables and, for state queries,
// its rotated slot vectors (to probe partitions).
type plan struct {
	tabs    table       // slot queries: per set M·K; state queries: N·K
	sets    int         // tables side by side (slot queries of a per-slot quantizer)
	rotated [][]float64 // per query slot (state queries)
}

func (m *Memory) plan(q Query, opt Options) (*plan, error) {
	g, dim := m.g, m.q.Dim()
	nq := 1
	if opt.States {
		nq = g.S
	}
	p := &plan{}
	switch {
	case q.Vectors != nil && q.Codes != nil:
		return nil, fmt.Errorf("%w: a query has vectors or codes, not both", ErrInput)
	case q.Vectors != nil && len(q.Vectors) != nq*dim:
		return nil, fmt.Errorf("%w: %d values, want %d (%d slot vectors of %d)", ErrInput, len(q.Vectors), nq*dim, nq, dim)
	case q.Vectors == nil && len(q.Codes) != nq*g.M:
		return nil, fmt.Errorf("%w: %d codes, want %d (%d slot vectors of %d)", ErrInput, len(q.Codes), nq*g.M, nq, g.M)
	}
	rot := func(i, s int) ([]float64, error) {
		if q.Vectors != nil {
			return m.q.RotateQuery(nil, q.Vectors[i*dim:(i+1)*dim], s)
		}
		return m.q.RotatedCentroids(nil, q.Codes[i*g.M:(i+1)*g.M], s)
	}
	mk := g.M * g.K
	var f []float64
	if opt.States {
		f = make([]float64, g.S*mk)
		p.rotated = make([][]float64, g.S)
		for s := range g.S {
			y, err := rot(s, s)
			if err != nil {
				return nil, err
			}
			if _, err := m.q.QueryTable(f[s*mk:(s+1)*mk], y, s); err != nil {
				return nil, err
			}
			p.rotated[s] = y
		}
		quantize(f, 1, g.S*g.M, g.K, &p.tabs)
		p.sets = 1
		return p, nil
	}
	p.sets = max(m.q.Slots(), 1)
	f = make([]float64, p.sets*mk)
	for s := range p.sets {
		y, err := rot(0, s)
		if err != nil {
			return nil, err
		}
		if _, err := m.q.QueryTable(f[s*mk:(s+1)*mk], y, s); err != nil {
			return nil, err
		}
	}
	quantize(f, p.sets, g.M, g.K, &p.tabs)
	return p, nil
}

// blockStates is how many states a scan handles between checks of ctx.
const blockStates = 4096

// run answers one query on up to threads goroutines.
func (m *Memory) run(ctx context.Context, p *plan, opt Options, threads int) ([]Result, error) {
	var jobs []job
	for fi, ix := range m.files {
		jobs = m.jobs(jobs, fi, ix, p, opt)
	}
	tops := make([]*topK, max(1, min(threads, len(jobs))))
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	var nextJob int
	for w := range tops {
		tops[w] = newTopK(opt.K)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := &scanner{m: m, p: p, opt: opt, top: tops[w]}
			for {
				mu.Lock()
				j := nextJob
				nextJob++
				mu.Unlock()
				if j >= len(jobs) {
					return
				}
				if err := ctx.Err(); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					return
				}
				sc.scan(jobs[j])
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	all := tops[0]
	for _, t := range tops[1:] {
		for _, h := range t.h {
			all.push(h)
		}
	}
	hits := all.sorted()
	res := make([]Result, len(hits))
	for i, h := range hits {
		st, slot := int64(h.row), -1
		if !opt.States {
			st, slot = int64(h.row/uint64(m.g.S)), int(h.row%uint64(m.g.S))
		}
		e := sort.Search(len(m.epFirst), func(i int) bool { return m.epFirst[i] > st }) - 1
		res[i] = Result{Episode: e, Step: int(st - m.epFirst[e]), Slot: slot, Distance: p.tabs.distance(h.dist)}
	}
	return res, nil
}

// job is a run of stored states of one file to scan: [from, to) in the
// index's stored order.
type job struct {
	file     int
	from, to int
}

// jobs appends the blocks of file fi that a query scans.
func (m *Memory) jobs(dst []job, fi int, ix *Index, p *plan, opt Options) []job {
	add := func(from, to int) {
		for a := from; a < to; a += blockStates {
			dst = append(dst, job{fi, a, min(a+blockStates, to)})
		}
	}
	if opt.NProbe > 0 && ix.part != nil {
		for _, c := range ix.part.probe(p.rotated, opt.NProbe) {
			add(int(ix.part.offsets[c]), int(ix.part.offsets[c+1]))
		}
		return dst
	}
	if ix.perm != nil {
		add(0, int(ix.States()))
		return dst
	}
	// Stored in file order: only the episodes asked for.
	lo, hi := m.firstEp[fi], m.firstEp[fi]+len(ix.epLens)
	if opt.Episodes[0] > lo {
		lo = opt.Episodes[0]
	}
	if opt.Episodes[1] > 0 && opt.Episodes[1] < hi {
		hi = opt.Episodes[1]
	}
	if lo >= hi {
		return dst
	}
	add(int(m.epFirst[lo]-m.firstSt[fi]), int(m.epFirst[hi]-m.firstSt[fi]))
	return dst
}

// scanner scans jobs of one query into its top K.
type scanner struct {
	m   *Memory
	p   *plan
	opt Options
	top *topK
	out []uint32
}

func (sc *scanner) scan(j job) {
	m, g, p := sc.m, sc.m.g, sc.p
	ix := m.files[j.file]
	n := g.N()
	rows := j.to - j.from
	codes := ix.codes[j.from*n : j.to*n]
	firstSt := m.firstSt[j.file]
	filter := sc.opt.Episodes != [2]int{} || sc.opt.Steps != [2]int{}
	offer := func(i int, slot int, d uint32) {
		st := int64(i)
		if ix.perm != nil {
			st = int64(ix.perm[i])
		}
		st += firstSt
		if filter && !m.admit(st, sc.opt) {
			return
		}
		row := uint64(st)
		if !sc.opt.States {
			row = row*uint64(g.S) + uint64(slot)
		}
		sc.top.push(hit{uint64(d), row})
	}
	if sc.opt.States {
		sc.out = grow32(sc.out, rows)
		scan(p.tabs.tab, g.K, codes, n, n, rows, sc.out)
		sc.emit(j.from, rows, 1, 0, offer)
		return
	}
	mk := g.M * g.K
	if p.sets == 1 {
		sc.out = grow32(sc.out, rows*g.S)
		scan(p.tabs.tab, g.K, codes, g.M, g.M, rows*g.S, sc.out)
		sc.emit(j.from, rows, g.S, -1, offer)
		return
	}
	sc.out = grow32(sc.out, rows)
	for s := range g.S {
		scan(p.tabs.tab[s*mk:(s+1)*mk], g.K, codes[s*g.M:], g.M, n, rows, sc.out)
		sc.emit(j.from, rows, 1, s, offer)
	}
}

// emit offers the sums of sc.out: rows states of per vectors each, slot
// `slot` (or, with slot −1, slots 0..per−1 in turn).
func (sc *scanner) emit(from, rows, per, slot int, offer func(i, slot int, d uint32)) {
	out := sc.out[:rows*per]
	for r, d := range out {
		if sc.top.full() {
			w := sc.top.worst()
			if uint64(d) > w.dist {
				continue
			}
		}
		s := slot
		if s < 0 {
			s = r % per
		}
		offer(from+r/per, s, d)
	}
}

// admit reports whether memory state st passes the episode and step
// filters.
func (m *Memory) admit(st int64, opt Options) bool {
	e := sort.Search(len(m.epFirst), func(i int) bool { return m.epFirst[i] > st }) - 1
	if e < opt.Episodes[0] || opt.Episodes[1] > 0 && e >= opt.Episodes[1] {
		return false
	}
	t := int(st - m.epFirst[e])
	return t >= opt.Steps[0] && (opt.Steps[1] == 0 || t < opt.Steps[1])
}

func grow32(b []uint32, n int) []uint32 {
	if cap(b) < n {
		return make([]uint32, n)
	}
	return b[:n]
}

// NewCodesMemory returns the memory of states held as codes under any
// quantizer q (one trained elsewhere, say): episodes of the given lengths
// of slots slot vectors each, whose codes (M per slot vector, below K ≤
// MaxK) follow one another. It has no partition.
func NewCodesMemory(q *opq.Quantizer, slots int, lens []int, codes []uint16) (*Memory, error) {
	if q == nil || q.K() > MaxK || slots < 1 || q.Slots() > 0 && q.Slots() != slots {
		return nil, fmt.Errorf("%w: a quantizer with K ≤ %d for %d slots", ErrInput, MaxK, slots)
	}
	g := wm.Geometry{S: slots, M: q.M(), K: q.K()}
	ix := &Index{geom: g, epLens: append([]int(nil), lens...)}
	var total int64
	for _, l := range lens {
		if l < 0 {
			return nil, fmt.Errorf("%w: episode of %d states", ErrInput, l)
		}
		total += int64(l)
	}
	if int64(len(codes)) != total*int64(g.N()) {
		return nil, fmt.Errorf("%w: %d codes for %d states of %d", ErrInput, len(codes), total, g.N())
	}
	ix.codes = make([]byte, len(codes))
	for i, v := range codes {
		if int(v) >= g.K {
			return nil, fmt.Errorf("%w: code %d at %d is not below K=%d", ErrInput, v, i, g.K)
		}
		ix.codes[i] = byte(v)
	}
	return newMemory(q, g, []*Index{ix}), nil
}
