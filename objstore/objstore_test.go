package objstore_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/objstore"
	"github.com/wmzip/wmzip/objstore/s3test"
	"github.com/wmzip/wmzip/train"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		uploadChild()
		return
	}
	os.Exit(s3test.Main(m))
}

var fixture = sync.OnceValues(func() (*wmzip.Codec, []wmzip.Episode) {
	c, err := train.Codec(context.Background(), walks.CodesOnly(walks.Episodes(1, 8)))
	if err != nil {
		panic(err)
	}
	return c, walks.CodesOnly(walks.Episodes(2, 12))
})

// memFile returns a .wmz of the test episodes, written with keyframe
// interval g.
func memFile(t testing.TB, g int, opts ...wmzip.WriterOption) []byte {
	t.Helper()
	c, eps := fixture()
	var buf bytes.Buffer
	w, err := wmzip.NewWriter(&buf, c, append([]wmzip.WriterOption{wmzip.WithKeyframeInterval(g)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAll(eps); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// put uploads b as key of the shared server's bucket.
func put(t testing.TB, s *objstore.Store, key string, b []byte) {
	t.Helper()
	u, err := s.Create(context.Background(), s3test.Bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
}

// chunks returns the offset and length of every chunk record of a .wmz,
// from its index (SPEC.md 6.7), and for each episode its chunks' state
// counts.
func chunks(t testing.TB, b []byte) (recs [][2]int64, states [][]int) {
	t.Helper()
	le := binary.LittleEndian
	tr := b[len(b)-28:]
	idx := b[le.Uint64(tr):][:le.Uint64(tr[8:])]
	ne := int(le.Uint32(idx[4:]))
	p := idx[48:]
	for range ne {
		nc := int(le.Uint32(p[16:]))
		p = p[24:]
		var st []int
		for range nc {
			recs = append(recs, [2]int64{int64(le.Uint64(p)), int64(le.Uint32(p[8:]))})
			st = append(st, int(le.Uint32(p[12:])))
			p = p[16:]
		}
		states = append(states, st)
	}
	return recs, states
}

// TestRoundTrip writes a .wmz to the store through an Upload and reads it
// back at random, whole with a File, and in order with a Reader.
func TestRoundTrip(t *testing.T) {
	srv := s3test.Shared(t)
	s := srv.Store(t)
	ctx := context.Background()
	c, eps := fixture()
	u, err := s.Create(ctx, s3test.Bucket, "rt/a.wmz")
	if err != nil {
		t.Fatal(err)
	}
	w, err := wmzip.NewWriter(u, c, wmzip.WithKeyframeInterval(8))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAll(eps); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	want := memFile(t, 8)
	got, err := s.ReadAll(ctx, s3test.Bucket, "rt/a.wmz", 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the object differs from the file written locally (%d and %d bytes)", len(got), len(want))
	}
	f, err := s.OpenFile(ctx, s3test.Bucket, "rt/a.wmz", c, objstore.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for e, n := range f.Episodes() {
		ep, err := f.Episode(e)
		if err != nil {
			t.Fatal(err)
		}
		if !slicesEqual(ep.Codes, eps[e].Codes) {
			t.Fatalf("episode %d differs", e)
		}
		for _, st := range []int{0, n / 2, n - 1} {
			_, codes, err := f.State(e, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			k := len(codes)
			if !slicesEqual(codes, eps[e].Codes[st*k:(st+1)*k]) {
				t.Fatalf("episode %d state %d differs", e, st)
			}
		}
	}
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	r, st, err := s.NewReader(ctx, s3test.Bucket, "rt/a.wmz", c)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for e := 0; ; e++ {
		if _, err := r.NextEpisode(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var all []uint16
		for {
			_, codes, err := r.ReadState(nil)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, codes...)
		}
		if !slicesEqual(all, eps[e].Codes) {
			t.Fatalf("streamed episode %d differs", e)
		}
	}
	if n := st.Stats().Requests; n != 1 {
		t.Errorf("the stream took %d requests, want 1", n)
	}
}

func slicesEqual(a, b []uint16) bool {
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

// asked counts what a ReaderAt is asked for.
type asked struct {
	r     io.ReaderAt
	bytes atomic.Int64
}

func (a *asked) ReadAt(p []byte, off int64) (int, error) {
	a.bytes.Add(int64(len(p)))
	return a.r.ReadAt(p, off)
}

// TestRandomReadBars (issue 30): opening takes at most 2 requests, and a
// random state read at most 2 more, moving at most twice the bytes of the
// chunk it decodes.
func TestRandomReadBars(t *testing.T) {
	srv := s3test.Shared(t)
	s := srv.Store(t)
	ctx := context.Background()
	b := memFile(t, 16)
	put(t, s, "bars/a.wmz", b)
	recs, states := chunks(t, b)
	c, _ := fixture()
	// Small head and tail windows, so that the file is not read whole
	// at open: the bars must hold for files far larger than the windows.
	last := recs[len(recs)-1]
	ro := objstore.ReadOptions{HeadBytes: 256, TailBytes: int64(len(b)) - last[0] - last[1]} // the index and trailer
	o, err := s.Open(ctx, s3test.Bucket, "bars/a.wmz", ro)
	if err != nil {
		t.Fatal(err)
	}
	f, err := wmzip.NewFile(o, o.Size(), c)
	if err != nil {
		t.Fatal(err)
	}
	if n := o.Stats().Requests; n > 2 {
		t.Errorf("opening took %d requests, want at most 2", n)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var worst float64
	ci := 0
	first := make([]int, len(states)) // index of each episode's first chunk
	for e := range states {
		first[e] = ci
		ci += len(states[e])
	}
	for range 40 {
		e := rng.IntN(len(states))
		k := rng.IntN(len(states[e]))
		st := rng.IntN(states[e][k])
		for _, n := range states[e][:k] {
			st += n
		}
		rec := recs[first[e]+k]
		// A fresh Object for each read: nothing cached from the last.
		o, err := s.Open(ctx, s3test.Bucket, "bars/a.wmz", ro)
		if err != nil {
			t.Fatal(err)
		}
		f, err = wmzip.NewFile(o, o.Size(), c)
		if err != nil {
			t.Fatal(err)
		}
		before := o.Stats()
		if _, _, err := f.State(e, st, nil); err != nil {
			t.Fatal(err)
		}
		d := o.Stats()
		req, moved := d.Requests-before.Requests, d.Bytes-before.Bytes
		if req > 2 {
			t.Errorf("episode %d state %d: %d requests, want at most 2", e, st, req)
		}
		if moved > 2*rec[1] {
			t.Errorf("episode %d state %d: %d bytes moved for a chunk of %d", e, st, moved, rec[1])
		}
		worst = max(worst, float64(moved)/float64(rec[1]))
	}
	t.Logf("worst bytes moved / chunk bytes: %.2f", worst)
}

// TestSequentialReadAhead: decoding a whole file through an Object takes
// far fewer requests than chunks, and no byte twice.
func TestSequentialReadAhead(t *testing.T) {
	srv := s3test.Shared(t)
	s := srv.Store(t)
	ctx := context.Background()
	b := memFile(t, 4)
	put(t, s, "seq/a.wmz", b)
	recs, _ := chunks(t, b)
	c, eps := fixture()
	ro := objstore.ReadOptions{HeadBytes: 256, TailBytes: 4096, ReadAhead: 512}
	f, err := s.OpenFile(ctx, s3test.Bucket, "seq/a.wmz", c, ro)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for e := range f.Episodes() {
		ep, err := f.Episode(e)
		if err != nil {
			t.Fatal(err)
		}
		if !slicesEqual(ep.Codes, eps[e].Codes) {
			t.Fatalf("episode %d differs", e)
		}
	}
	st := f.Object.Stats()
	t.Logf("%d chunks, %d bytes: %d requests, %d bytes moved", len(recs), len(b), st.Requests, st.Bytes)
	if st.Requests > int64(len(recs))/4 {
		t.Errorf("%d requests for %d chunks read in order", st.Requests, len(recs))
	}
	if st.Bytes > int64(len(b))+4096 {
		t.Errorf("%d bytes moved for a file of %d", st.Bytes, len(b))
	}
}

// TestMultipart writes an object of several parts and reads it back.
func TestMultipart(t *testing.T) {
	srv := s3test.Shared(t)
	opt := srv.Options()
	opt.PartSize = 5 << 20
	s, err := objstore.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b := make([]byte, 11<<20+123)
	for i := range b {
		b[i] = byte(i * 7 >> 3)
	}
	u, err := s.Create(ctx, s3test.Bucket, "mp/big")
	if err != nil {
		t.Fatal(err)
	}
	for p := b; len(p) > 0; {
		n := min(len(p), 1<<20+17)
		if _, err := u.Write(p[:n]); err != nil {
			t.Fatal(err)
		}
		p = p[n:]
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if st := u.Stats(); st.Requests != 5 { // start, 3 parts, complete
		t.Errorf("the upload took %d requests, want 5", st.Requests)
	}
	got, err := s.ReadAll(ctx, s3test.Bucket, "mp/big", 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b) {
		t.Fatal("the object read back differs")
	}
}

// TestFailedUploadLeavesNothing: an upload whose context ends midway
// fails, and leaves neither an object nor an incomplete upload.
func TestFailedUploadLeavesNothing(t *testing.T) {
	srv := s3test.Shared(t)
	opt := srv.Options()
	opt.PartSize = 5 << 20
	s, err := objstore.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	u, err := s.Create(ctx, s3test.Bucket, "fail/a")
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for range 12 {
		if _, err := u.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	u.Write(chunk)
	if err := u.Close(); err == nil {
		t.Fatal("Close succeeded after the context ended")
	}
	assertNoObject(t, s, "fail/a")
	n, err := s.AbortUploads(context.Background(), s3test.Bucket, "fail/", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the failed upload left %d incomplete uploads", n)
	}
}

func assertNoObject(t *testing.T, s *objstore.Store, key string) {
	t.Helper()
	_, err := s.Open(context.Background(), s3test.Bucket, key, objstore.ReadOptions{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s: want no object, got %v", key, err)
	}
	ents, err := s.List(context.Background(), s3test.Bucket, key, objstore.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Fatalf("%s is listed: %+v", key, ents)
	}
}

// TestList lists .wmz files and other objects under a prefix.
func TestList(t *testing.T) {
	srv := s3test.Shared(t)
	s := srv.Store(t)
	b := memFile(t, 16)
	put(t, s, "ls/a.wmz", b)
	put(t, s, "ls/b.wmz", memFile(t, 8, wmzip.WithEmbeddedModel(true)))
	put(t, s, "ls/notes.txt", []byte("not a memory"))
	// A tail read smaller than the files, as for files of any real size.
	ents, err := s.List(context.Background(), s3test.Bucket, "ls/", objstore.ReadOptions{TailBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 3 {
		t.Fatalf("%d entries, want 3", len(ents))
	}
	_, eps := fixture()
	for _, e := range ents[:2] {
		if e.Err != nil {
			t.Fatalf("%s: %v", e.Key, e.Err)
		}
		if e.Info.Episodes != len(eps) || e.Info.States != int64(len(eps)*50) {
			t.Errorf("%s: %d episodes and %d states", e.Key, e.Info.Episodes, e.Info.States)
		}
		if e.Stats.Requests > 2 {
			t.Errorf("%s: %d requests, want at most 2", e.Key, e.Stats.Requests)
		}
		if e.Stats.Bytes >= e.Size && e.Key == "ls/b.wmz" {
			t.Errorf("%s: the whole file was read for its summary", e.Key)
		}
	}
	if ents[2].Err == nil {
		t.Error("a text object is listed as a .wmz file")
	}
}

// TestMissing: a missing key or bucket is fs.ErrNotExist, named.
func TestMissing(t *testing.T) {
	srv := s3test.Shared(t)
	s := srv.Store(t)
	ctx := context.Background()
	_, err := s.OpenFile(ctx, s3test.Bucket, "no/such.wmz", nil, objstore.ReadOptions{})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "s3://wmzip/no/such.wmz") {
		t.Errorf("missing key: %v", err)
	}
	_, err = s.OpenFile(ctx, "nosuchbucket", "a.wmz", nil, objstore.ReadOptions{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing bucket: %v", err)
	}
	_, err = s.LoadCodec(ctx, s3test.Bucket, "no/model.wmm")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing model: %v", err)
	}
}

// TestWrongCredentials: the store's refusal is fs.ErrPermission, and
// says where to look.
func TestWrongCredentials(t *testing.T) {
	srv := s3test.Shared(t)
	put(t, srv.Store(t), "cred/a.wmz", memFile(t, 16))
	opt := srv.Options()
	opt.SecretKey = "not-the-secret"
	s, err := objstore.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.OpenFile(context.Background(), s3test.Bucket, "cred/a.wmz", nil, objstore.ReadOptions{})
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
		t.Errorf("wrong secret: %v", err)
	}
	if st := s.Stats(); st.Retries != 0 {
		t.Errorf("a refusal was sent again %d times", st.Retries)
	}
	u, err := s.Create(context.Background(), s3test.Bucket, "cred/b.wmz")
	if err != nil {
		t.Fatal(err)
	}
	u.Write([]byte("x"))
	if err := u.Close(); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("upload with a wrong secret: %v", err)
	}
}

// TestTruncated: an object cut short is reported as a damaged file, with
// its name.
func TestTruncated(t *testing.T) {
	srv := s3test.Shared(t)
	s := srv.Store(t)
	b := memFile(t, 16)
	put(t, s, "trunc/a.wmz", b[:len(b)*2/3])
	c, _ := fixture()
	_, err := s.OpenFile(context.Background(), s3test.Bucket, "trunc/a.wmz", c, objstore.ReadOptions{})
	if !errors.Is(err, wmzip.ErrCorrupt) || !strings.Contains(err.Error(), "s3://wmzip/trunc/a.wmz") {
		t.Errorf("truncated object: %v", err)
	}
}

// TestReplacedWhileOpen: a read of an object replaced since it was opened
// fails with ErrChanged, never mixing two files.
func TestReplacedWhileOpen(t *testing.T) {
	srv := s3test.Shared(t)
	s := srv.Store(t)
	ctx := context.Background()
	b := memFile(t, 16)
	put(t, s, "repl/a.wmz", b)
	c, _ := fixture()
	f, err := s.OpenFile(ctx, s3test.Bucket, "repl/a.wmz", c, objstore.ReadOptions{HeadBytes: 256, TailBytes: 2048})
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "repl/a.wmz", memFile(t, 8))
	_, err = f.Episode(len(f.Episodes()) / 2) // held by neither the head nor the tail
	if !errors.Is(err, objstore.ErrChanged) {
		t.Errorf("read after the object was replaced: %v", err)
	}
}

// TestIfMatch: a conditional write completes only over the object it
// names, and never over one another writer put there.
func TestIfMatch(t *testing.T) {
	srv := s3test.Shared(t)
	s := srv.Store(t)
	ctx := context.Background()
	write := func(key, etag string, b []byte) error {
		u, err := s.Create(ctx, s3test.Bucket, key)
		if err != nil {
			return err
		}
		u.IfMatch(etag)
		u.Write(b)
		return u.Close()
	}
	if err := write("cond/a", "", []byte("one")); err != nil {
		t.Fatalf("a write of a new object: %v", err)
	}
	if err := write("cond/a", "", []byte("two")); !errors.Is(err, objstore.ErrChanged) {
		t.Errorf("a write meant for a new object over an existing one: %v", err)
	}
	o, err := s.Open(ctx, s3test.Bucket, "cond/a", objstore.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "cond/a", []byte("another writer"))
	if err := write("cond/a", o.ETag(), []byte("three")); !errors.Is(err, objstore.ErrChanged) {
		t.Errorf("a write over an object changed meanwhile: %v", err)
	}
	got, _ := s.ReadAll(ctx, s3test.Bucket, "cond/a", 100)
	if string(got) != "another writer" {
		t.Errorf("the object holds %q", got)
	}
	o, err = s.Open(ctx, s3test.Bucket, "cond/a", objstore.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := write("cond/a", o.ETag(), []byte("four")); err != nil {
		t.Errorf("a write over the object it names: %v", err)
	}
}
