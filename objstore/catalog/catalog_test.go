package catalog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/objstore"
	"github.com/wmzip/wmzip/objstore/catalog"
	"github.com/wmzip/wmzip/objstore/s3test"
	"github.com/wmzip/wmzip/search"
	"github.com/wmzip/wmzip/train"
)

func TestMain(m *testing.M) { os.Exit(s3test.Main(m)) }

var codec = sync.OnceValues(func() (*wmzip.Codec, error) {
	return train.Codec(context.Background(), walks.Episodes(1, 8),
		train.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: 2, Iters: 5}), train.WithGate(0, gate.CalibOptions{}))
})

// memory returns a .wmz of n episodes walked with seed, chunks of 16.
func memory(t testing.TB, seed uint64, n int) []byte {
	t.Helper()
	c, err := codec()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := wmzip.NewWriter(&buf, c, wmzip.WithKeyframeInterval(16))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAll(walks.Episodes(seed, n)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFolder(t *testing.T) {
	dir := t.TempDir()
	for i, n := range []int{1, 2, 3} {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%d.wmz", i)), memory(t, uint64(10+i), n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a memory"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.wmz"), []byte("not a memory either, though named as one"), 0o644)
	cat, st, err := catalog.Update(context.Background(), dir, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 4 || st.Kept != 0 || !st.Written || len(cat.Valid()) != 3 || cat.Episodes != 6 || cat.States != 300 {
		t.Fatalf("first update: %+v, %d valid, %d episodes, %d states", st, len(cat.Valid()), cat.Episodes, cat.States)
	}
	for _, e := range cat.Valid() {
		if len(e.Chunks) != len(e.Episodes) || len(e.Chunks[0]) != 4 || e.Chunks[0][3] != 2 || e.BitsPerState <= 0 || len(e.Head) == 0 || len(e.Tail) == 0 {
			t.Errorf("%s: %+v", e.Key, e)
		}
	}
	got, err := catalog.Load(context.Background(), dir)
	if err != nil || len(got.Memories) != 4 || got.Memories[1].Fingerprint != cat.Memories[1].Fingerprint {
		t.Fatalf("load: %v %+v", err, got)
	}
	// A memory replaced: same size is not enough to be kept.
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(dir, "m1.wmz"), memory(t, 99, 2), 0o644); err != nil {
		t.Fatal(err)
	}
	c2, st, err := catalog.Update(context.Background(), dir, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Kept != 3 || st.Refreshed != 1 || st.Added != 0 {
		t.Fatalf("second update: %+v", st)
	}
	if c2.Memories[2].Fingerprint == cat.Memories[2].Fingerprint {
		t.Fatal("the replaced memory kept its fingerprint")
	}
	// The stale entry of the first catalog fails the open: a local file
	// of another size.
	c, _ := codec()
	os.WriteFile(filepath.Join(dir, "m2.wmz"), memory(t, 5, 1), 0o644)
	if _, err := catalog.OpenFile(context.Background(), filepath.Join(dir, "m2.wmz"), &cat.Memories[3], c); !errors.Is(err, catalog.ErrStale) {
		t.Fatalf("open of a stale entry: %v", err)
	}
}

// TestStore is a catalog of a prefix of a bucket: one request to load,
// opens from the entries without a request and one ranged GET for each
// chunk read, searches with two requests per memory, and a replaced
// memory detected everywhere.
func TestStore(t *testing.T) {
	srv := s3test.Shared(t)
	t.Setenv("AWS_ENDPOINT_URL", srv.Endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	ctx := context.Background()
	s, err := catalog.Store()
	if err != nil {
		t.Fatal(err)
	}
	c, err := codec()
	if err != nil {
		t.Fatal(err)
	}
	root := "s3://" + s3test.Bucket + "/cat-" + t.Name() + "/"
	put := func(key string, b []byte) {
		u, err := s.Create(ctx, s3test.Bucket, "cat-"+t.Name()+"/"+key)
		if err != nil {
			t.Fatal(err)
		}
		u.Write(b)
		if err := u.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		b := memory(t, uint64(20+i), 2)
		put(fmt.Sprintf("a/m%d.wmz", i), b)
		ix, err := search.BuildAt(ctx, bytes.NewReader(b), int64(len(b)), c, search.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var ib bytes.Buffer
		ix.WriteTo(&ib)
		put(fmt.Sprintf("a/m%d.wmzi", i), ib.Bytes())
	}
	cat, st, err := catalog.Update(ctx, root, catalog.Options{})
	if err != nil || st.Added != 3 || len(cat.Valid()) != 3 {
		t.Fatalf("update: %v %+v", err, st)
	}
	r0 := s.Stats().Requests
	cat, err = catalog.Load(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Stats().Requests - r0; n != 1 {
		t.Errorf("loading the catalog took %d requests, want 1", n)
	}
	e := &cat.Memories[1]
	r0 = s.Stats().Requests
	f, err := catalog.OpenFile(ctx, cat.URL(e), e, c)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Stats().Requests - r0; n != 0 {
		t.Errorf("opening from the entry took %d requests, want 0", n)
	}
	if _, _, err := f.State(1, 20, nil); err != nil {
		t.Fatal(err)
	}
	if n := s.Stats().Requests - r0; n != 1 {
		t.Errorf("a state of one chunk took %d requests, want 1", n)
	}
	f.Close()
	r0 = s.Stats().Requests
	ix, why, stale, err := catalog.Index(ctx, cat.URL(e), e, c, search.BuildOptions{})
	if err != nil || why != nil || stale || ix.States() != 100 {
		t.Fatalf("index: %v %v %v", err, why, stale)
	}
	if n := s.Stats().Requests - r0; n != 2 {
		t.Errorf("the index from the catalog took %d requests, want 2", n)
	}
	// Replace memory 1 under the catalog.
	put("a/m1.wmz", memory(t, 77, 3))
	f, err = catalog.OpenFile(ctx, cat.URL(e), e, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.State(1, 20, nil); !errors.Is(err, catalog.ErrStale) || !errors.Is(err, objstore.ErrChanged) {
		t.Errorf("a read through a stale entry: %v", err)
	}
	f.Close()
	ix, why, stale, err = catalog.Index(ctx, cat.URL(e), e, c, search.BuildOptions{})
	if err != nil || !stale || why == nil || ix.States() != 150 {
		t.Fatalf("index of the replaced memory: %v, why %v, stale %v", err, why, stale)
	}
	c2, st, err := catalog.Update(ctx, root, catalog.Options{})
	if err != nil || st.Kept != 2 || st.Refreshed != 1 || c2.Memories[1].States != 150 {
		t.Fatalf("refresh: %v %+v", err, st)
	}
}
