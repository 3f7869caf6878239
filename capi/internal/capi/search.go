package capi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sync"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/objstore/catalog"
	"github.com/wmzip/wmzip/search"
)

// MaxNeighbours bounds the k of a search, as the command's --k does.
const MaxNeighbours = 1 << 20

// Search is the object of a search handle: the indexes of one or more
// .wmz files searched together (a search.Memory). Searches run
// concurrently; Close waits for those in flight.
type Search struct {
	mu   sync.RWMutex
	m    *search.Memory // nil once closed
	c    *wmzip.Codec
	dim  int // floats a slot vector
	geom shape
	info []byte // SearchInfo's JSON
}

// searchOpenOptions are the JSON options of OpenSearch.
type searchOpenOptions struct {
	Threads int  `json:"threads"` // goroutines that build a missing index (0: every core)
	Save    bool `json:"save"`    // write an index built here beside its file
	// Entries are the files' catalog entries (remote.go), none or one
	// a path.
	Entries []*catalog.Entry `json:"entries"`
}

// searchInfoJSON is what SearchInfo returns.
type searchInfoJSON struct {
	Episodes int              `json:"episodes"`
	States   int64            `json:"states"`
	ModelID  string           `json:"model_id"`
	Files    []searchFileJSON `json:"files"`
}

// searchFileJSON is one file of a search: how its index was come by.
type searchFileJSON struct {
	Path     string `json:"path"`
	Episodes []int  `json:"episodes"` // states of each of its episodes
	States   int64  `json:"states"`
	// Index is "loaded" (the index beside the file was current) or
	// "built" (decoded from the file for this search); Reason says why
	// a built one was (no index, or a stale or invalid one).
	Index      string `json:"index"`
	Reason     string `json:"reason,omitempty"`
	Saved      bool   `json:"saved"`       // a built index was written beside the file
	IndexBytes int64  `json:"index_bytes"` // the size of its index file
	Cells      int    `json:"cells"`       // cells of its partition (0: none)
}

// OpenSearch opens the .wmz files at paths to be searched as one memory,
// with the codec of handle codec (0: the model the first file embeds; a
// bundle: the member that wrote the files, which must all be that
// member's), and JSON options (threads, save). Each file's index is
// loaded from beside it when it is current, built from the file otherwise
// (and then written beside it with the option save); SearchInfo tells
// which.
func OpenSearch(paths []string, codec Handle, options []byte) (Handle, error) {
	var o searchOpenOptions
	if err := decodeOptions(options, &o); err != nil {
		return 0, err
	}
	if o.Threads < 0 {
		return 0, Inputf("threads %d: want 0 (every core) or more", o.Threads)
	}
	if len(paths) == 0 {
		return 0, Inputf("no .wmz files to search")
	}
	c, err := codecOrNil(codec)
	if err != nil {
		return 0, err
	}
	if o.Entries != nil && len(o.Entries) != len(paths) {
		return 0, Inputf("%d entries for %d paths", len(o.Entries), len(paths))
	}
	entry := func(i int) *catalog.Entry {
		if o.Entries == nil {
			return nil
		}
		return o.Entries[i]
	}
	if c == nil {
		f, shut, err := openFile(paths[0], entry(0), nil, nil)
		if err != nil {
			return 0, err
		}
		c = f.Codec()
		shut.Close()
	}
	q := c.Quantizer()
	if q == nil {
		return 0, Inputf("the model has no quantizer, so codes have no distances: search needs a model trained on float observations")
	}
	info := searchInfoJSON{}
	idx := make([]*search.Index, len(paths))
	for i, p := range paths {
		ix, why, err := openIndex(p, entry(i), c, search.BuildOptions{Threads: o.Threads})
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return 0, err // it names the file
			}
			return 0, fmt.Errorf("%s: %w", p, err)
		}
		fj := searchFileJSON{Path: p, Episodes: ix.Episodes(), States: ix.States(), Index: "loaded",
			IndexBytes: ix.Bytes(), Cells: ix.Cells()}
		if why != nil {
			fj.Index, fj.Reason = "built", "no index"
			if !errors.Is(why, fs.ErrNotExist) {
				fj.Reason = why.Error()
			}
			if o.Save {
				if err := saveIndex(ix, p); err != nil {
					return 0, err
				}
				fj.Saved = true
			}
		}
		idx[i] = ix
		info.Files = append(info.Files, fj)
	}
	m, err := search.NewMemory(c, idx...)
	if err != nil {
		return 0, err
	}
	// A bundle's memory runs with the member that wrote its files (their
	// indexes are that member's): its shape is the queries' and the
	// results'. Files of its finest member are the bundle's own.
	if id := idx[0].ModelID(); id != c.Model().ID() {
		for _, mem := range c.Members() {
			if mem.Model().ID() == id {
				c, q = mem, mem.Quantizer()
			}
		}
	}
	info.ModelID = c.Model().ID().String()
	info.Episodes, info.States = m.Episodes(), m.States()
	b, err := json.Marshal(info)
	if err != nil {
		return 0, err
	}
	return add(&Search{m: m, c: c, dim: q.Dim(), geom: shapeOf(c), info: b}), nil
}

// withSearch runs fn on the search of h, unless it is closed; calls run
// concurrently.
func withSearch(h Handle, fn func(s *Search) error) error {
	s, err := lookup[*Search](h, "search")
	if err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.m == nil {
		return closedf("the search of handle %d was closed", h)
	}
	return fn(s)
}

// CloseSearch closes the search of h, once the searches in flight have
// returned. Closing it again does nothing.
func CloseSearch(h Handle) error {
	s, ok, err := release[*Search](h, "search")
	if !ok {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m = nil
	return nil
}

// SearchCodec returns a new handle to the codec the search runs with.
func SearchCodec(h Handle) (c Handle, err error) {
	err = withSearch(h, func(s *Search) error { c = newCodec(s.c); return nil })
	return c, err
}

// SearchInfo returns, as a JSON object, the memory's episodes and states,
// its model's ID, and for each file its path, its episodes' lengths, its
// states, whether its index was "loaded" or "built" (and why), whether a
// built one was saved, its index's size and its partition's cells.
func SearchInfo(h Handle) (b []byte, err error) {
	err = withSearch(h, func(s *Search) error { b = s.info; return nil })
	return b, err
}

// searchOptions are the JSON options of a query.
type searchOptions struct {
	NProbe   int    `json:"nprobe"`   // state queries: cells of each partition scanned (0: every state)
	Episodes [2]int `json:"episodes"` // [first, end): memory episodes searched (end 0: no bound)
	Steps    [2]int `json:"steps"`    // [first, end): steps of each episode searched
	Threads  int    `json:"threads"`  // goroutines (0: every core)
}

// Results are a caller's arrays for the neighbours of n queries, k each:
// query i's at [i·k, i·k+k), nearest first. Any may be nil (not wanted).
// A query that finds fewer than k leaves the rest of its row as episode,
// step and slot −1 and distance +Inf.
type Results struct {
	Episode, Step, Slot []int64
	Distance            []float64
}

// None reports whether no array is given.
func (r Results) None() bool {
	return r.Episode == nil && r.Step == nil && r.Slot == nil && r.Distance == nil
}

// fits checks that each array given holds n entries.
func (r Results) fits(n int) error {
	for _, a := range []struct {
		given bool
		len   int
	}{{r.Episode != nil, len(r.Episode)}, {r.Step != nil, len(r.Step)}, {r.Slot != nil, len(r.Slot)},
		{r.Distance != nil, len(r.Distance)}} {
		if a.given && a.len < n {
			return BufferError(n*8, uint64(a.len)*8) // entries of 8 bytes
		}
	}
	return nil
}

// SearchFloats finds the k nearest neighbours of each query of q: slot
// vectors (the quantizer's dim floats each) or, with states, whole
// states (S slot vectors each, distances summed over slots). It returns
// the number of entries the results need (queries × k); with no array
// given, or one too short, it returns that and an error of ErrBuffer
// without searching.
func SearchFloats(h Handle, q []float32, states bool, k int, options []byte, out Results) (need int, err error) {
	err = withSearch(h, func(s *Search) error {
		per := s.dim
		if states {
			per = s.geom.floats
		}
		n, err := queries(len(q), per, k, "floats", states)
		if err != nil {
			return err
		}
		for i, x := range q {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return Inputf("query %d: value %d is %v: queries must be finite", i/per, i%per, x)
			}
		}
		need = n * k
		qs := make([]search.Query, n)
		for i := range qs {
			qs[i].Vectors = q[i*per : (i+1)*per : (i+1)*per]
		}
		return s.run(qs, states, k, options, out)
	})
	return need, err
}

// SearchCodes is SearchFloats of queries given as codes: M a slot
// vector, S·M a state; each query stands for its reconstruction.
func SearchCodes(h Handle, q Codes, states bool, k int, options []byte, out Results) (need int, err error) {
	err = withSearch(h, func(s *Search) error {
		per := s.c.Geometry().M
		if states {
			per = s.geom.n
		}
		n, err := queries(q.Len(), per, k, "codes", states)
		if err != nil {
			return err
		}
		wide := q.wide(nil)
		for i, v := range wide {
			if int(v) >= s.geom.k {
				return Inputf("query %d: code %d at %d is not below K=%d", i/per, v, i%per, s.geom.k)
			}
		}
		need = n * k
		qs := make([]search.Query, n)
		for i := range qs {
			qs[i].Codes = wide[i*per : (i+1)*per : (i+1)*per]
		}
		return s.run(qs, states, k, options, out)
	})
	return need, err
}

// queries returns the number of queries of total values, per a query.
func queries(total, per, k int, what string, states bool) (int, error) {
	kind := "slot vector"
	if states {
		kind = "state"
	}
	switch {
	case k < 1 || k > MaxNeighbours:
		return 0, Inputf("k %d: want 1 to %d neighbours a query", k, MaxNeighbours)
	case total == 0:
		return 0, Inputf("no queries")
	case total%per != 0:
		return 0, Inputf("%d %s: not a whole number of queries of %d (a %s)", total, what, per, kind)
	}
	return total / per, nil
}

// run searches for qs and writes the results to out.
func (s *Search) run(qs []search.Query, states bool, k int, options []byte, out Results) error {
	var o searchOptions
	if err := decodeOptions(options, &o); err != nil {
		return err
	}
	for _, r := range []struct {
		name string
		v    [2]int
	}{{"episodes", o.Episodes}, {"steps", o.Steps}} {
		if r.v[0] < 0 || r.v[1] < 0 || r.v[1] != 0 && r.v[1] <= r.v[0] {
			return Inputf("%s [%d, %d]: want 0 <= first < end, or end 0 for no bound", r.name, r.v[0], r.v[1])
		}
	}
	switch {
	case o.NProbe < 0 || o.Threads < 0:
		return Inputf("nprobe %d, threads %d: want 0 or more", o.NProbe, o.Threads)
	case o.NProbe > 0 && !states:
		return Inputf("nprobe needs state queries: the partition groups states")
	}
	n := len(qs) * k
	if out.None() {
		return BufferError(n*8, 0)
	}
	if err := out.fits(n); err != nil {
		return err
	}
	res, err := s.m.Search(context.Background(), qs, search.Options{K: k, States: states, NProbe: o.NProbe,
		Episodes: o.Episodes, Steps: o.Steps, Threads: o.Threads})
	if err != nil {
		return err
	}
	for i, rs := range res {
		for j := range k {
			at := i*k + j
			e, t, sl, d := int64(-1), int64(-1), int64(-1), math.Inf(1)
			if j < len(rs) {
				r := rs[j]
				e, t, sl, d = int64(r.Episode), int64(r.Step), int64(r.Slot), r.Distance
			}
			if out.Episode != nil {
				out.Episode[at] = e
			}
			if out.Step != nil {
				out.Step[at] = t
			}
			if out.Slot != nil {
				out.Slot[at] = sl
			}
			if out.Distance != nil {
				out.Distance[at] = d
			}
		}
	}
	return nil
}
