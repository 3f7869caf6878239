package format

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

// feedOp is one call of a feeding pattern.
type feedOp struct {
	kind  byte // 'e' WriteEpisode, 's' WriteState, 'f' Flush, 'l' SetLevel, 'a' Account, 'L' LastAccount, 'A' Close and Append (before an episode)
	ep, k int  // 'e': episode; 's': episode and step; 'l': level
}

// feedPattern is a random sequence of calls writing eps: flushes, level
// changes, account queries and appends between the states, every call
// kind at most every few states. last allows LastAccount (which turns the
// Writer serial).
func feedPattern(rng *rand.Rand, eps []episode, levels int, last bool) []feedOp {
	var ops []feedOp
	for i, e := range eps {
		if i > 0 && rng.IntN(4) == 0 {
			ops = append(ops, feedOp{kind: 'A'}) // Append starts with a new episode
		}
		ops = append(ops, feedOp{kind: 'e', ep: i})
		for k := range e.Actions {
			switch r := rng.IntN(40); {
			case r == 0:
				ops = append(ops, feedOp{kind: 'f'})
			case r < 6 && levels > 1:
				ops = append(ops, feedOp{kind: 'l', k: rng.IntN(levels)})
			case r == 7:
				ops = append(ops, feedOp{kind: 'a'})
			case r == 8 && last:
				ops = append(ops, feedOp{kind: 'L'})
			}
			ops = append(ops, feedOp{kind: 's', ep: i, k: k})
		}
		if rng.IntN(4) == 0 {
			ops = append(ops, feedOp{kind: 'f'})
		}
	}
	return ops
}

// feed runs ops on a Writer to a new file in dir and returns the file's
// bytes and the accounts: of every 'a' op, then of the whole file.
func feed(t *testing.T, dir string, m *wm.Model, eps []episode, ops []feedOp, opts ...Option) ([]byte, []Account) {
	t.Helper()
	f, err := os.CreateTemp(dir, "feed*.wmz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := NewWriter(f, m, opts...)
	if err != nil {
		t.Fatal(err)
	}
	n := m.Geom.N()
	var acct Account
	var accts []Account
	for _, op := range ops {
		switch op.kind {
		case 'e':
			err = w.WriteEpisode(eps[op.ep].Meta)
		case 's':
			e := eps[op.ep]
			err = w.WriteState(e.Actions[op.k], e.Codes[op.k*n:(op.k+1)*n])
		case 'f':
			err = w.Flush()
		case 'l':
			err = w.SetLevel(op.k)
		case 'a':
			accts = append(accts, w.Account())
		case 'L':
			w.LastAccount()
		case 'A':
			acct = addAccount(acct, w.Account())
			if err = w.Close(); err == nil {
				w, err = Append(f, m, opts...)
			}
		}
		if err != nil {
			t.Fatalf("op %c: %v", op.kind, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	acct = addAccount(acct, w.Account())
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return b, append(accts, acct)
}

func addAccount(a, b Account) Account {
	return Account{States: a.States + b.States, Retained: a.Retained + b.Retained, Wrong: a.Wrong + b.Wrong, DistSum: a.DistSum + b.DistSum,
		LosslessChunks: a.LosslessChunks + b.LosslessChunks}
}

// TestParallelWriteIdentical writes the same feeding patterns serially
// and with 2, 3 and 8 threads at GOMAXPROCS 1, 2 and 8: the files and the
// accounts are identical, and decode alike with any thread count.
func TestParallelWriteIdentical(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	g := wm.Geometry{S: 3, M: 4, K: 16}
	rng := rand.New(rand.NewPCG(131, 132))
	eps := genEpisodes(rng, g, []int{40, 0, 25, 1, 0, 33, 17, 0})
	lossless := trainModel(g, 12, eps)
	gated := gateModel(t, g, eps)
	levels := []lambda.Lambda{1 << 12, 4 << 16, LambdaLossless}
	cases := []struct {
		name   string
		m      *wm.Model
		levels int
		last   bool
		opts   []Option
	}{
		{"lossless", lossless, 1, false, []Option{WithKeyframeInterval(4)}},
		{"lossless/embedded", lossless, 1, false, []Option{WithKeyframeInterval(3), WithEmbeddedModel(true)}},
		{"lambda", gated, 1, false, []Option{WithKeyframeInterval(5), WithLambda(2 << 16)}},
		{"levels", gated, len(levels), false, []Option{WithKeyframeInterval(4), WithLevels(levels...)}},
		{"levels/last", gated, len(levels), true, []Option{WithKeyframeInterval(4), WithLevels(levels...)}},
		{"g1", lossless, 1, true, []Option{WithKeyframeInterval(1)}},
	}
	dir := t.TempDir()
	for ci, c := range cases {
		for seed := range uint64(3) {
			ops := feedPattern(rand.New(rand.NewPCG(seed, uint64(ci))), eps, c.levels, c.last)
			runtime.GOMAXPROCS(2)
			want, wantAcct := feed(t, dir, c.m, eps, ops, append(c.opts, WithThreads(1))...)
			for _, procs := range []int{1, 2, 8} {
				runtime.GOMAXPROCS(procs)
				for _, threads := range []int{1, 2, 3, 8, 0} {
					got, acct := feed(t, dir, c.m, eps, ops, append(c.opts, WithThreads(threads))...)
					if !bytes.Equal(got, want) {
						t.Fatalf("%s seed %d GOMAXPROCS %d threads %d: %d bytes differ from the serial %d", c.name, seed, procs, threads, len(got), len(want))
					}
					if !slices.Equal(acct, wantAcct) {
						t.Fatalf("%s seed %d GOMAXPROCS %d threads %d: account %+v, serial %+v", c.name, seed, procs, threads, acct, wantAcct)
					}
				}
			}
			runtime.GOMAXPROCS(2)
			checkDecodeThreads(t, want, c.m)
		}
	}
}

// checkDecodeThreads decodes b with a Reader and a File at several thread
// counts: all agree with the serial decode.
func checkDecodeThreads(t *testing.T, b []byte, m *wm.Model) {
	t.Helper()
	want, err := readAll(b, m, WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{2, 3, 8} {
		seq, err := readAll(b, m, WithThreads(threads))
		if err != nil {
			t.Fatalf("Reader, %d threads: %v", threads, err)
		}
		if err := sameEpisodes(seq, want); err != nil {
			t.Fatalf("Reader, %d threads: %v", threads, err)
		}
		ra, err := openAll(b, m, WithThreads(threads))
		if err != nil {
			t.Fatalf("File, %d threads: %v", threads, err)
		}
		if err := sameEpisodes(ra, want); err != nil {
			t.Fatalf("File, %d threads: %v", threads, err)
		}
		f, err := Open(bytes.NewReader(b), int64(len(b)), m, WithThreads(threads))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Verify(); err != nil {
			t.Fatalf("Verify, %d threads: %v", threads, err)
		}
	}
}

// sinkWriter accepts limit bytes, then fails.
type sinkWriter struct {
	w     bytes.Buffer
	limit int
}

var errSink = errors.New("sink failed")

func (f *sinkWriter) Write(b []byte) (int, error) {
	if f.w.Len()+len(b) > f.limit {
		return 0, errSink
	}
	return f.w.Write(b)
}

// settled waits until the goroutine count is back to n, as goroutines that
// closed their done channel may still be returning.
func settled(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > n; {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, want %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}

// TestParallelWriteError fails the underlying writer at several points of
// a threaded encode: the error surfaces from a later call or Close and
// stays, what was flushed before is a prefix of the serial file, and no
// goroutine is left behind.
func TestParallelWriteError(t *testing.T) {
	g := wm.Geometry{S: 3, M: 4, K: 16}
	eps := genEpisodes(rand.New(rand.NewPCG(133, 134)), g, []int{300, 0, 200})
	m := trainModel(g, 12, eps)
	opts := []Option{WithKeyframeInterval(2)}
	flushAt := func(w *Writer, i, k int) error {
		if i == 0 && k%97 == 1 {
			return w.Flush()
		}
		return nil
	}
	want := encodeHook(t, m, eps, flushAt, append(opts, WithThreads(1))...)
	base := runtime.NumGoroutine()
	n := g.N()
	for _, limit := range []int{0, 100, len(want) / 3, len(want) - 10} {
		for _, threads := range []int{2, 8} {
			fw := &sinkWriter{limit: limit}
			w, err := NewWriter(fw, m, append(opts, WithThreads(threads))...)
			if err != nil {
				t.Fatal(err)
			}
			var first error
			for i, e := range eps {
				if err := w.WriteEpisode(e.Meta); err != nil && first == nil {
					first = err
				}
				for k, a := range e.Actions {
					if err := flushAt(w, i, k); err != nil && first == nil {
						first = err
					}
					if err := w.WriteState(a, e.Codes[k*n:(k+1)*n]); err != nil && first == nil {
						first = err
					}
				}
			}
			cerr := w.Close()
			if first == nil {
				first = cerr
			}
			if !errors.Is(first, errSink) || !errors.Is(cerr, errSink) {
				t.Fatalf("limit %d threads %d: first error %v, Close %v", limit, threads, first, cerr)
			}
			if err := w.WriteState(0, eps[0].Codes[:n]); !errors.Is(err, errSink) {
				t.Fatalf("limit %d threads %d: error not sticky: %v", limit, threads, err)
			}
			if !bytes.HasPrefix(want, fw.w.Bytes()) {
				t.Fatalf("limit %d threads %d: written bytes are not a prefix of the serial file", limit, threads)
			}
			settled(t, base)
		}
	}
}

// TestParallelDecodeCorrupt damages one chunk deep in a file: decoding it
// with read-ahead fails as the serial decode does, at the same offset,
// and leaves no goroutine behind.
func TestParallelDecodeCorrupt(t *testing.T) {
	g := wm.Geometry{S: 3, M: 4, K: 16}
	eps := genEpisodes(rand.New(rand.NewPCG(135, 136)), g, []int{90, 3, 60})
	m := trainModel(g, 12, eps)
	b := encode(t, m, eps, WithKeyframeInterval(3), WithThreads(1))
	f, err := Open(bytes.NewReader(b), int64(len(b)), m)
	if err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()
	for _, ref := range []chunkRef{f.idx.episodes[0].chunks[0], f.idx.episodes[0].chunks[20], f.idx.episodes[2].chunks[5]} {
		for _, at := range []int64{ref.offset + 4, ref.offset + 12, ref.offset + chunkHdrSize + 2, ref.offset + ref.length - 1} {
			for _, fix := range []bool{false, true} {
				bad := slices.Clone(b)
				bad[at] ^= 0x20
				if fix {
					// A record whose CRC holds: the damage is found by decoding
					// (the stream's checks, the reconstruction checksum).
					end := ref.offset + ref.length - crcSize
					le.PutUint32(bad[end:], crc(bad[ref.offset:end]))
				}
				_, want := readAll(bad, m, WithThreads(1))
				_, wantRA := openAll(bad, m, WithThreads(1))
				if !fix && (want == nil || wantRA == nil) {
					t.Fatalf("flip at %d: serial decode succeeded", at)
				}
				for _, threads := range []int{2, 8} {
					_, err := readAll(bad, m, WithThreads(threads))
					if fmt.Sprint(err) != fmt.Sprint(want) {
						t.Fatalf("flip at %d, Reader, %d threads: %v, serial %v", at, threads, err, want)
					}
					_, err = openAll(bad, m, WithThreads(threads))
					if fmt.Sprint(err) != fmt.Sprint(wantRA) {
						t.Fatalf("flip at %d, File, %d threads: %v, serial %v", at, threads, err, wantRA)
					}
					// A Reader abandoned mid-file leaves no work running.
					if ref.offset != f.idx.episodes[0].chunks[0].offset {
						readFirst(t, bad, m, threads)
					}
					settled(t, base)
				}
			}
		}
	}
}

// TestParallelRecovery decodes cut and damaged files with WithRecovery at
// several thread counts: the same episodes as serially.
func TestParallelRecovery(t *testing.T) {
	g := wm.Geometry{S: 3, M: 4, K: 16}
	eps := genEpisodes(rand.New(rand.NewPCG(137, 138)), g, []int{30, 0, 20, 11})
	m := trainModel(g, 12, eps)
	b := encode(t, m, eps, WithKeyframeInterval(3), WithThreads(1))
	rng := rand.New(rand.NewPCG(139, 140))
	for range 40 {
		bad := slices.Clone(b[:HeaderSize+rng.IntN(len(b)-HeaderSize)])
		if rng.IntN(2) == 0 {
			bad[HeaderSize+rng.IntN(len(bad)-HeaderSize)] ^= 1 << rng.IntN(8)
		}
		want, werr := readAll(bad, m, WithRecovery(true), WithThreads(1))
		for _, threads := range []int{2, 8} {
			got, err := readAll(bad, m, WithRecovery(true), WithThreads(threads))
			if fmt.Sprint(err) != fmt.Sprint(werr) {
				t.Fatalf("%d threads: %v, serial %v", threads, err, werr)
			}
			if err == nil {
				if err := sameEpisodes(got, want); err != nil {
					t.Fatalf("%d threads: %v", threads, err)
				}
			}
		}
	}
}

// TestReadAheadFrames checks that a threaded Reader does decode ahead:
// after the first state, chunks of the next episodes are queued, and every
// chunk after the first is taken from the queue.
func TestReadAheadFrames(t *testing.T) {
	g := wm.Geometry{S: 3, M: 4, K: 16}
	eps := genEpisodes(rand.New(rand.NewPCG(141, 142)), g, []int{10, 0, 10, 10})
	m := trainModel(g, 12, eps)
	b := encode(t, m, eps, WithKeyframeInterval(3), WithThreads(1))
	r := readFirst(t, b, m, 2)
	if q := len(r.ahead.queue); q != r.ahead.window {
		t.Fatalf("%d chunks decoding ahead, want %d", q, r.ahead.window)
	}
	if last := r.ahead.queue[len(r.ahead.queue)-1].off; last < r.idx.episodes[0].offset+int64(len(b)-TrailerSize-indexReport(&r.h))/4 {
		t.Fatalf("read-ahead stopped at %d", last)
	}
}

// readFirst returns a Reader of b with the given threads that has read the
// first state of the first episode.
func readFirst(t *testing.T, b []byte, m *wm.Model, threads int) *Reader {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b), m, WithThreads(threads))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.NextEpisode(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.ReadState(nil); err != nil {
		t.Fatal(err)
	}
	return r
}

// overlapRule is a retention rule (keeping every coordinate) that proves
// two coders run at once: the first call from each predictor waits, up
// to a few seconds, for a second predictor to call.
type overlapRule struct {
	mu      sync.Mutex
	seen    map[*wm.Predictor]bool
	both    chan struct{}
	waited  bool // a first call gave up waiting
	timeout time.Duration
}

func newOverlapRule() *overlapRule {
	return &overlapRule{seen: map[*wm.Predictor]bool{}, both: make(chan struct{}), timeout: 10 * time.Second}
}

func (o *overlapRule) retain(_ int, pr *wm.Predictor) bool {
	o.mu.Lock()
	first := !o.seen[pr]
	if first {
		o.seen[pr] = true
		if len(o.seen) == 2 {
			close(o.both)
		}
	}
	o.mu.Unlock()
	if first {
		select {
		case <-o.both:
		case <-time.After(o.timeout):
			o.mu.Lock()
			o.waited = true
			o.mu.Unlock()
		}
	}
	return true
}

// TestParallelOverlap checks, whatever the machine's load, that two
// threads do code two chunks at the same time: in the Writer, the Reader
// and File.DecodeEpisode.
func TestParallelOverlap(t *testing.T) {
	g := wm.Geometry{S: 3, M: 4, K: 16}
	eps := genEpisodes(rand.New(rand.NewPCG(143, 144)), g, []int{24})
	m := trainModel(g, 12, eps)
	opts := func(o *overlapRule) []Option {
		return []Option{WithKeyframeInterval(4), withGate(1<<16, o.retain), WithThreads(2)}
	}
	o := newOverlapRule()
	b := encode(t, m, eps, opts(o)...)
	if o.waited {
		t.Error("Writer: no two chunks were encoded at once")
	}
	o = newOverlapRule()
	if _, err := readAll(b, m, opts(o)...); err != nil || o.waited {
		t.Errorf("Reader: %v; no two chunks decoded at once: %v", err, o.waited)
	}
	o = newOverlapRule()
	if _, err := openAll(b, m, opts(o)...); err != nil || o.waited {
		t.Errorf("File: %v; no two chunks decoded at once: %v", err, o.waited)
	}
}
