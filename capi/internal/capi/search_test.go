package capi

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/wmzip/wmzip/search"
)

// searchFixture is the fixture's file copied twice into a directory of
// its own (no index beside either), and the memory package search makes
// of them.
func searchFixture(t *testing.T) (fixture, []string, *search.Memory) {
	t.Helper()
	fx := setup(t)
	dir := t.TempDir()
	b, err := os.ReadFile(fx.path)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{filepath.Join(dir, "a.wmz"), filepath.Join(dir, "b.wmz")}
	c, _ := codecOf(fx.codec)
	var idx []*search.Index
	for _, p := range paths {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		ix, err := search.Build(context.Background(), p, c, search.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		idx = append(idx, ix)
	}
	m, err := search.NewMemory(c, idx...)
	if err != nil {
		t.Fatal(err)
	}
	return fx, paths, m
}

// results runs a search through the handle and returns its results as
// package search's, the padding dropped.
func results(t *testing.T, h Handle, floats []float32, codes Codes, states bool, k int, opts string) [][]search.Result {
	t.Helper()
	var need int
	var err error
	run := func(r Results) {
		if codes.None() {
			need, err = SearchFloats(h, floats, states, k, []byte(opts), r)
		} else {
			need, err = SearchCodes(h, codes, states, k, []byte(opts), r)
		}
	}
	run(Results{}) // the size first
	if Code(err) != ErrBuffer || need == 0 {
		t.Fatalf("asking the size: %d, %v", need, err)
	}
	r := Results{make([]int64, need), make([]int64, need), make([]int64, need), make([]float64, need)}
	if run(r); err != nil {
		t.Fatal(err)
	}
	var out [][]search.Result
	for i := 0; i < need; i += k {
		var rs []search.Result
		for j := i; j < i+k; j++ {
			if r.Episode[j] < 0 {
				if !math.IsInf(r.Distance[j], 1) || r.Step[j] != -1 || r.Slot[j] != -1 {
					t.Fatalf("entry %d: padding %d %d %d %v", j, r.Episode[j], r.Step[j], r.Slot[j], r.Distance[j])
				}
				continue
			}
			rs = append(rs, search.Result{Episode: int(r.Episode[j]), Step: int(r.Step[j]), Slot: int(r.Slot[j]), Distance: r.Distance[j]})
		}
		out = append(out, rs)
	}
	return out
}

// TestSearchAsGo: a search handle finds what package search finds over
// the same files, for slot and state queries, by floats and by codes,
// with filters; the index is built, saved, then loaded.
func TestSearchAsGo(t *testing.T) {
	fx, paths, m := searchFixture(t)
	h, err := OpenSearch(paths, fx.codec, []byte(`{"save": true, "threads": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	defer CloseSearch(h)
	var info searchInfoJSON
	b, err := SearchInfo(h)
	if err != nil || json.Unmarshal(b, &info) != nil {
		t.Fatalf("info %s: %v", b, err)
	}
	if info.Episodes != 8 || info.States != m.States() || len(info.Files) != 2 ||
		info.Files[0].Index != "built" || info.Files[0].Reason != "no index" || !info.Files[0].Saved {
		t.Fatalf("info %s", b)
	}
	h2, err := OpenSearch(paths[:1], 0, nil)
	if Code(err) != ErrNoModel {
		t.Fatalf("a file without its model, searched without a codec: %v", err)
	}
	if h2, err = OpenSearch(paths[:1], fx.codec, nil); err != nil {
		t.Fatal(err)
	}
	b, _ = SearchInfo(h2)
	info = searchInfoJSON{}
	if json.Unmarshal(b, &info) != nil || info.Files[0].Index != "loaded" || info.Files[0].Reason != "" {
		t.Fatalf("the saved index was not loaded: %s", b)
	}
	CloseSearch(h2)

	in, _ := InfoOfCodec(fx.codec)
	d, sm := in.Dim, in.Slots*in.Subspaces
	e := fx.eps[5] // written in neither file
	for _, c := range []struct {
		name   string
		states bool
		floats []float32
		codes  []uint16
		k      int
		opts   string
		opt    search.Options
	}{
		{name: "slots", floats: e.Obs[:3*d], k: 7},
		{name: "states", states: true, floats: e.Obs[:2*in.Slots*d], k: 5},
		{name: "slot codes", codes: fx.codes[5][:2*in.Subspaces], k: 4},
		{name: "state codes", states: true, codes: fx.codes[5][sm : 3*sm], k: 6},
		{name: "filters", floats: e.Obs[d : 3*d], k: 9, opts: `{"episodes": [3, 6], "steps": [2, 0], "threads": 1}`,
			opt: search.Options{Episodes: [2]int{3, 6}, Steps: [2]int{2, 0}}},
		{name: "state filters", states: true, floats: e.Obs[:in.Slots*d], k: 3, opts: `{"steps": [4, 9]}`,
			opt: search.Options{Steps: [2]int{4, 9}}},
		{name: "few", states: true, floats: e.Obs[:in.Slots*d], k: 20, opts: `{"episodes": [7, 8], "steps": [0, 5]}`,
			opt: search.Options{Episodes: [2]int{7, 8}, Steps: [2]int{0, 5}}},
	} {
		opt := c.opt
		opt.K, opt.States = c.k, c.states
		per := len(c.floats) / d
		var qs []search.Query
		if c.codes != nil {
			per = len(c.codes) / in.Subspaces
		}
		if c.states {
			per /= in.Slots
		}
		for i := range per {
			if c.codes != nil {
				n := len(c.codes) / per
				qs = append(qs, search.Query{Codes: c.codes[i*n : (i+1)*n]})
			} else {
				n := len(c.floats) / per
				qs = append(qs, search.Query{Vectors: c.floats[i*n : (i+1)*n]})
			}
		}
		want, err := m.Search(context.Background(), qs, opt)
		if err != nil {
			t.Fatal(err)
		}
		var codes Codes
		if c.codes != nil {
			u8 := make([]uint8, len(c.codes))
			for i, v := range c.codes {
				u8[i] = uint8(v)
			}
			codes = Codes{U8: u8}
		}
		got := results(t, h, c.floats, codes, c.states, c.k, c.opts)
		if len(got) != len(want) {
			t.Fatalf("%s: %d queries answered, want %d", c.name, len(got), len(want))
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("%s: query %d:\n got %v\nwant %v", c.name, i, got[i], want[i])
			}
		}
		if c.name == "few" && len(got[0]) != 5 {
			t.Errorf("few: %d results, want the 5 states the filters leave", len(got[0]))
		}
	}
}

// TestSearchConcurrent searches from many goroutines at once, then
// closes the search while others run: each returns its results or
// ErrClosed. The race detector watches.
func TestSearchConcurrent(t *testing.T) {
	fx, paths, m := searchFixture(t)
	h, err := OpenSearch(paths, fx.codec, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := InfoOfCodec(fx.codec)
	d := in.Dim
	obs := fx.eps[6].Obs
	want, err := m.Search(context.Background(), []search.Query{{Vectors: obs[:d]}}, search.Options{K: 5})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ep, st := make([]int64, 5), make([]int64, 5)
			sl, di := make([]int64, 5), make([]float64, 5)
			for range 20 {
				if _, err := SearchFloats(h, obs[:d], false, 5, []byte(`{"threads": `+string(rune('1'+g%2))+`}`),
					Results{ep, st, sl, di}); err != nil {
					errs <- err.Error()
					return
				}
				for j, r := range want[0] {
					if ep[j] != int64(r.Episode) || st[j] != int64(r.Step) || sl[j] != int64(r.Slot) || di[j] != r.Distance {
						errs <- "results differ from a lone search's"
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	var wg2 sync.WaitGroup
	for range 4 {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			r := Results{Distance: make([]float64, 3)}
			for range 50 {
				if _, err := SearchFloats(h, obs[:in.Slots*d], true, 3, nil, r); err != nil {
					if Code(err) != ErrClosed {
						t.Errorf("search during close: %v", err)
					}
					return
				}
			}
		}()
	}
	if err := CloseSearch(h); err != nil {
		t.Fatal(err)
	}
	wg2.Wait()
	if err := CloseSearch(h); err != nil {
		t.Fatalf("closing twice: %v", err)
	}
	if _, err := SearchInfo(h); Code(err) != ErrClosed {
		t.Fatalf("a closed search: %v", err)
	}
}

// TestSearchInput: bad queries, options, arrays and files are errors of
// their codes, and nothing is written.
func TestSearchInput(t *testing.T) {
	fx, paths, _ := searchFixture(t)
	h, err := OpenSearch(paths, fx.codec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer CloseSearch(h)
	in, _ := InfoOfCodec(fx.codec)
	d := in.Dim
	q := fx.eps[0].Obs[:d]
	nan := slices.Clone(q)
	nan[3] = float32(math.NaN())
	ok := Results{Episode: make([]int64, 40)}
	for name, c := range map[string]struct {
		err  error
		code int
	}{
		"k 0":           {only(SearchFloats(h, q, false, 0, nil, ok)), ErrInput},
		"k huge":        {only(SearchFloats(h, q, false, MaxNeighbours+1, nil, ok)), ErrInput},
		"partial":       {only(SearchFloats(h, q[:d-1], false, 1, nil, ok)), ErrInput},
		"state of slot": {only(SearchFloats(h, q, true, 1, nil, ok)), ErrInput},
		"empty":         {only(SearchFloats(h, nil, false, 1, nil, ok)), ErrInput},
		"nan":           {only(SearchFloats(h, nan, false, 1, nil, ok)), ErrInput},
		"code ≥ K":      {only(SearchCodes(h, Codes{U16: slices.Repeat([]uint16{16}, in.Subspaces)}, false, 1, nil, ok)), ErrInput},
		"nprobe slot":   {only(SearchFloats(h, q, false, 1, []byte(`{"nprobe": 2}`), ok)), ErrInput},
		"unknown":       {only(SearchFloats(h, q, false, 1, []byte(`{"kk": 2}`), ok)), ErrInput},
		"backwards":     {only(SearchFloats(h, q, false, 1, []byte(`{"episodes": [3, 2]}`), ok)), ErrInput},
		"negative":      {only(SearchFloats(h, q, false, 1, []byte(`{"steps": [-1, 0]}`), ok)), ErrInput},
		"short":         {only(SearchFloats(h, q, false, 41, nil, ok)), ErrBuffer},
		"short one":     {only(SearchFloats(h, q, false, 4, nil, Results{Episode: ok.Episode, Slot: make([]int64, 3)})), ErrBuffer},
		"not a search":  {only(SearchFloats(fx.codec, q, false, 1, nil, ok)), ErrInput},
		"no files":      {only(OpenSearch(nil, fx.codec, nil)), ErrInput},
		"missing":       {only(OpenSearch([]string{paths[0], paths[0] + "x"}, fx.codec, nil)), ErrNotFound},
		"bad option":    {only(OpenSearch(paths, fx.codec, []byte(`{"threads": -1}`))), ErrInput},
	} {
		if Code(c.err) != c.code {
			t.Errorf("%s: %v, want code %d", name, c.err, c.code)
		}
	}
	if slices.ContainsFunc(ok.Episode, func(e int64) bool { return e != 0 }) {
		t.Error("a refused search wrote results")
	}
	bad := filepath.Join(t.TempDir(), "bad.wmz")
	os.WriteFile(bad, []byte("not a wmz file at all, not at all"), 0o644)
	if _, err := OpenSearch([]string{bad}, fx.codec, nil); Code(err) != ErrCorrupt {
		t.Errorf("a file that is not .wmz: %v", err)
	}
	tr := trajectory(fx.eps[:2])
	codesOnly, err := Train(context.Background(), tr, []byte(`{"subspaces": 8, "codes_only": true, "gate_holdout": 0}`))
	if err != nil {
		t.Fatal(err)
	}
	defer FreeCodec(codesOnly)
	if _, err := OpenSearch(paths, codesOnly, nil); Code(err) != ErrInput {
		t.Errorf("a codec without a quantizer: %v", err)
	}
}

func only[T any](_ T, err error) error { return err }
