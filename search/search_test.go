package search_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/search"
	"github.com/wmzip/wmzip/train"
)

var (
	fixOnce  sync.Once
	fixCodec *wmzip.Codec
	fixErr   error
)

// codec is a small codec with a quantizer (8 slots of 32 floats, 8
// subspaces, K = 16), trained once for the package's tests.
func codec(t testing.TB) *wmzip.Codec {
	fixOnce.Do(func() {
		fixCodec, fixErr = train.Codec(context.Background(), walks.Episodes(1, 8), train.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: 2, Iters: 5}), train.WithGate(0, gateNone))
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fixCodec
}

// write writes episodes to a .wmz file in dir.
func write(t testing.TB, dir, name string, eps []wmzip.Episode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	w, err := wmzip.Create(p, codec(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAll(eps); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// brute is the reference: the squared distance from each query to every
// stored slot vector's (or state's) reconstruction, in float64, ranked by
// distance then episode, step and slot.
func brute(t *testing.T, c *wmzip.Codec, eps []wmzip.Episode, q []float32, states bool, k int) []search.Result {
	dim := c.Quantizer().Dim()
	S := c.Model().Geom.S
	var all []search.Result
	for e, ep := range eps {
		codes, err := c.Quantize(nil, ep.Obs)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := c.Reconstruct(nil, codes)
		if err != nil {
			t.Fatal(err)
		}
		for st := range len(ep.Actions) {
			var sum float64
			for s := range S {
				v := rec[(st*S+s)*dim : (st*S+s+1)*dim]
				qv := q
				if states {
					qv = q[s*dim : (s+1)*dim]
				}
				var d float64
				for i := range v {
					x := float64(qv[i]) - float64(v[i])
					d += x * x
				}
				if !states {
					all = append(all, search.Result{Episode: e, Step: st, Slot: s, Distance: d})
				}
				sum += d
			}
			if states {
				all = append(all, search.Result{Episode: e, Step: st, Slot: -1, Distance: sum})
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Distance < all[j].Distance })
	return all[:k]
}

// sameRanks checks got against the reference: the same distances within
// a tolerance, and the same neighbours except where distances tie within it.
func sameRanks(t *testing.T, got, want []search.Result) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for i := range got {
		tol := 1e-4 * (1 + want[i].Distance)
		if math.Abs(got[i].Distance-want[i].Distance) > tol {
			t.Fatalf("result %d: distance %v, want %v\n got %v\nwant %v", i, got[i].Distance, want[i].Distance, got, want)
		}
		if i > 0 && (got[i].Distance < got[i-1].Distance) {
			t.Fatalf("results out of order: %v", got)
		}
	}
}

func TestSearchMatchesBruteForce(t *testing.T) {
	c := codec(t)
	dir := t.TempDir()
	eps := walks.Episodes(2, 3)
	name := write(t, dir, "m.wmz", eps)
	ix, err := search.Build(context.Background(), name, c, search.BuildOptions{Cells: -1})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := search.NewMemory(c, ix)
	if err != nil {
		t.Fatal(err)
	}
	qeps := walks.Episodes(9, 1)
	dim := c.Quantizer().Dim()
	S := c.Model().Geom.S
	var qs, ss []search.Query
	for i := range 4 {
		qs = append(qs, search.Query{Vectors: qeps[0].Obs[i*7*dim : (i*7+1)*dim]})
		ss = append(ss, search.Query{Vectors: qeps[0].Obs[i*5*S*dim : (i*5+1)*S*dim]})
	}
	for _, threads := range []int{1, 3} {
		res, err := mem.Search(context.Background(), qs, search.Options{K: 10, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range qs {
			sameRanks(t, res[i], brute(t, c, eps, q.Vectors, false, 10))
		}
		res, err = mem.Search(context.Background(), ss, search.Options{K: 7, States: true, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range ss {
			sameRanks(t, res[i], brute(t, c, eps, q.Vectors, true, 7))
		}
	}
	// A state's own codes find it first, at distance 0.
	st := quantized(t, c, eps[1])[3*S*c.Model().Geom.M : 4*S*c.Model().Geom.M]
	res, err := mem.Search(context.Background(), []search.Query{{Codes: st}}, search.Options{K: 1, States: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0][0]; r.Distance > 1e-9 || r.Episode != 1 || r.Step != 3 && !sameState(t, c, eps, r, 1, 3) {
		t.Fatalf("own codes: %+v", r)
	}
}

// TestSearchAcrossFilesAndFilters checks the numbering of episodes across
// files, the episode and step filters, and that probing every cell of a
// partition gives the flat scan's results.
func TestSearchAcrossFilesAndFilters(t *testing.T) {
	c := codec(t)
	dir := t.TempDir()
	a, b := walks.Episodes(3, 2), walks.Episodes(4, 3)
	ia, err := search.Build(context.Background(), write(t, dir, "a.wmz", a), c, search.BuildOptions{Cells: 5})
	if err != nil {
		t.Fatal(err)
	}
	ib, err := search.Build(context.Background(), write(t, dir, "b.wmz", b), c, search.BuildOptions{Cells: -1})
	if err != nil {
		t.Fatal(err)
	}
	if ia.Cells() != 5 || ib.Cells() != 0 {
		t.Fatalf("cells %d %d", ia.Cells(), ib.Cells())
	}
	mem, err := search.NewMemory(c, ia, ib)
	if err != nil {
		t.Fatal(err)
	}
	if mem.Episodes() != 5 {
		t.Fatalf("%d episodes", mem.Episodes())
	}
	if f, e := mem.Locate(3); f != 1 || e != 1 {
		t.Fatalf("Locate(3) = %d, %d", f, e)
	}
	S, M := c.Model().Geom.S, c.Model().Geom.M
	q := []search.Query{{Codes: quantized(t, c, b[1])[10*S*M : 11*S*M]}}
	ctx := context.Background()
	res, err := mem.Search(ctx, q, search.Options{K: 5, States: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0][0]; r.Distance != 0 || r.Episode > 3 || r.Episode == 3 && r.Step > 10 {
		t.Fatalf("nearest %+v, want episode 3 step 10", r)
	}
	all, err := mem.Search(ctx, q, search.Options{K: 5, States: true, NProbe: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !equalResults(all[0], res[0]) {
		t.Fatalf("probing every cell: %v, flat %v", all[0], res[0])
	}
	f, err := mem.Search(ctx, q, search.Options{K: 50, States: true, Episodes: [2]int{1, 3}, Steps: [2]int{5, 9}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f[0]) != 8 {
		t.Fatalf("%d results in 2 episodes × 4 steps", len(f[0]))
	}
	for _, r := range f[0] {
		if r.Episode < 1 || r.Episode >= 3 || r.Step < 5 || r.Step >= 9 {
			t.Fatalf("filtered result %+v", r)
		}
	}
	sq := []search.Query{{Codes: b[0].Codes[:M]}}
	f, err = mem.Search(ctx, sq, search.Options{K: 1000, Steps: [2]int{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f[0]) != 5*S {
		t.Fatalf("%d slot results at step 0 of 5 episodes", len(f[0]))
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := mem.Search(cctx, q, search.Options{States: true}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled search: %v", err)
	}
	for _, bad := range []struct {
		q   search.Query
		opt search.Options
	}{
		{search.Query{Codes: b[0].Codes[:M-1]}, search.Options{}},
		{search.Query{Vectors: make([]float32, 5)}, search.Options{States: true}},
		{search.Query{Codes: b[0].Codes[:M]}, search.Options{NProbe: 2}},
		{search.Query{Codes: b[0].Codes[:M]}, search.Options{Episodes: [2]int{-1, 0}}},
		{search.Query{Codes: []uint16{99, 0, 0, 0, 0, 0, 0, 0}}, search.Options{}},
	} {
		if _, err := mem.Search(ctx, []search.Query{bad.q}, bad.opt); !errors.Is(err, search.ErrInput) && err == nil {
			t.Errorf("query %+v %+v accepted", bad.q, bad.opt)
		}
	}
}

// quantized returns the codes the writer stores for an episode.
func quantized(t *testing.T, c *wmzip.Codec, ep wmzip.Episode) []uint16 {
	codes, err := c.Quantize(nil, ep.Obs)
	if err != nil {
		t.Fatal(err)
	}
	return codes
}

// sameState reports whether result r is a state with the same codes as
// step st of episode e.
func sameState(t *testing.T, c *wmzip.Codec, eps []wmzip.Episode, r search.Result, e, st int) bool {
	n := c.Model().Geom.N()
	a, b := quantized(t, c, eps[r.Episode])[r.Step*n:(r.Step+1)*n], quantized(t, c, eps[e])[st*n:(st+1)*n]
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalResults(a, b []search.Result) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestIndexFile checks Save and Load, and that an index is refused once
// its file changes or with another model.
func TestIndexFile(t *testing.T) {
	c := codec(t)
	dir := t.TempDir()
	name := write(t, dir, "m.wmz", walks.Episodes(5, 2))
	ix, err := search.Build(context.Background(), name, c, search.BuildOptions{Cells: 3})
	if err != nil {
		t.Fatal(err)
	}
	ip := search.IndexPath(name)
	if filepath.Base(ip) != "m.wmzi" {
		t.Fatalf("IndexPath %s", ip)
	}
	if err := ix.Save(ip); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(ip)
	if err != nil || fi.Size() != ix.Bytes() {
		t.Fatalf("saved %v bytes, Bytes %d (%v)", fi.Size(), ix.Bytes(), err)
	}
	back, err := search.Load(ip, name, c)
	if err != nil {
		t.Fatal(err)
	}
	q := []search.Query{{Codes: make([]uint16, c.Model().Geom.N())}}
	for _, o := range []search.Options{{States: true}, {States: true, NProbe: 2}} {
		m1, _ := search.NewMemory(c, ix)
		m2, _ := search.NewMemory(c, back)
		r1, err1 := m1.Search(context.Background(), q, o)
		r2, err2 := m2.Search(context.Background(), q, o)
		if err1 != nil || err2 != nil || !equalResults(r1[0], r2[0]) {
			t.Fatalf("loaded index answers differently: %v %v", err1, err2)
		}
	}
	// Appending changes the file: the index is stale.
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	w, err := wmzip.Append(f, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAll(walks.Episodes(6, 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := search.Load(ip, name, c); !errors.Is(err, search.ErrStale) {
		t.Fatalf("index of an appended file: %v", err)
	}
	other, err := train.Codec(context.Background(), walks.Episodes(1, 8), train.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 2, OPQIters: 2, Iters: 5}), train.WithGate(0, gateNone))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := search.NewMemory(other, ix); !errors.Is(err, search.ErrStale) {
		t.Fatalf("index with another model: %v", err)
	}
	// Damaged bytes are refused, never a panic.
	b, _ := os.ReadFile(ip)
	for i := 0; i < len(b); i += 1 + len(b)/50 {
		d := append([]byte(nil), b...)
		d[i] ^= 0x10
		if _, err := search.Parse(d); !errors.Is(err, search.ErrIndex) {
			t.Fatalf("flip at %d: %v", i, err)
		}
	}
	for _, n := range []int{0, 10, 104, len(b) - 1} {
		if _, err := search.Parse(b[:n]); !errors.Is(err, search.ErrIndex) {
			t.Fatalf("cut at %d: %v", n, err)
		}
	}
}

// FuzzParse feeds arbitrary bytes to the index parser.
func FuzzParse(f *testing.F) {
	c := codec(f)
	dir := f.TempDir()
	name := write(f, dir, "m.wmz", walks.Episodes(5, 1))
	ix, err := search.Build(context.Background(), name, c, search.BuildOptions{Cells: 2})
	if err != nil {
		f.Fatal(err)
	}
	if err := ix.Save(search.IndexPath(name)); err != nil {
		f.Fatal(err)
	}
	b, _ := os.ReadFile(search.IndexPath(name))
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := search.Parse(b)
		if err != nil {
			return
		}
		mem, err := search.NewMemory(c, ix)
		if err != nil {
			return
		}
		q := []search.Query{{Codes: make([]uint16, c.Model().Geom.N())}}
		mem.Search(context.Background(), q, search.Options{States: true, NProbe: 1})
	})
}

var gateNone = gate.CalibOptions{}

// countingReader counts the reads of an io.ReaderAt, as a store counts
// requests.
type countingReader struct {
	r     io.ReaderAt
	reads atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads.Add(1)
	return c.r.ReadAt(p, off)
}

// TestBuildAtAndCheck checks that an index built from an io.ReaderAt is
// the one Build writes, byte for byte, that Check accepts it and the
// index Build saved, joining the fingerprint's small reads, and refuses
// both once the file changes.
func TestBuildAtAndCheck(t *testing.T) {
	c := codec(t)
	dir := t.TempDir()
	name := write(t, dir, "m.wmz", walks.Episodes(5, 2))
	ix, err := search.Build(context.Background(), name, c, search.BuildOptions{Cells: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	cr := &countingReader{r: bytes.NewReader(b)}
	at, err := search.BuildAt(context.Background(), cr, int64(len(b)), c, search.BuildOptions{Cells: 3})
	if err != nil {
		t.Fatal(err)
	}
	var w1, w2 bytes.Buffer
	ix.WriteTo(&w1)
	at.WriteTo(&w2)
	if !bytes.Equal(w1.Bytes(), w2.Bytes()) {
		t.Fatal("BuildAt and Build wrote different indexes")
	}
	back, err := search.Parse(w1.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	cr.reads.Store(0)
	if err := back.Check(cr, int64(len(b)), c); err != nil {
		t.Fatal(err)
	}
	// Header, trailer, index and one range for all the records' CRCs
	// (the file is far shorter than a range).
	if n := cr.reads.Load(); n > 4 {
		t.Errorf("Check read the file %d times, want at most 4", n)
	}
	// A changed record CRC (the last record's, just before the file's
	// index), or another file, makes it stale.
	d := append([]byte(nil), b...)
	d[binary.LittleEndian.Uint64(d[len(d)-28:])-1] ^= 1
	if err := back.Check(bytes.NewReader(d), int64(len(d)), c); !errors.Is(err, search.ErrStale) {
		t.Fatalf("index of a file with a changed record: %v", err)
	}
	other := write(t, dir, "o.wmz", walks.Episodes(6, 2))
	ob, _ := os.ReadFile(other)
	if err := back.Check(bytes.NewReader(ob), int64(len(ob)), c); !errors.Is(err, search.ErrStale) {
		t.Fatalf("index of another file: %v", err)
	}
}
