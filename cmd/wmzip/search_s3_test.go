package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/objstore"
	"github.com/wmzip/wmzip/objstore/s3test"
)

// TestS3Search (issue 30): `wmzip search` over the memories under an
// s3:// prefix gives what it gives over local copies of them, numbered
// across the files in key order; `wmzip index` writes the index objects
// beside them, which search then uses, and refuses once stale; a prefix
// without memories is a clear error.
func TestS3Search(t *testing.T) {
	srv := s3test.Start(t)
	p, tr := obsSet(t)
	mustRun(t, "gen", "graphworld", "--obs", "--nodes", "20", "--graph-seed", "4", "--episodes", "3", "--steps", "15", "--seed", "2", "-q", "-o", p("obs2.npz"))
	mustRun(t, "encode", "-q", "-m", p("q.wmm"), "-o", p("a.wmz"), p("obs.npz"))
	mustRun(t, "encode", "-q", "-m", p("q.wmm"), "-o", p("b.wmz"), p("obs2.npz"))
	mustRun(t, "encode", "-q", "--embed-model", "-m", p("q.wmm"), "-o", p("c.wmz"), p("obs2.npz"))
	S, d := tr.ObsS, tr.ObsD
	if err := npz.WriteNPY(p("state.npy"), npz.Array{Name: "q", Dtype: "float32", Shape: []int{2, S, d}, Data: tr.Obs[25*S*d : 27*S*d]}); err != nil {
		t.Fatal(err)
	}
	if err := npz.WriteNPY(p("slots.npy"), npz.Array{Name: "q", Dtype: "float32", Shape: []int{3, d}, Data: tr.Obs[7*d : 10*d]}); err != nil {
		t.Fatal(err)
	}

	s, err := objstore.New(srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	put := func(local, key string) {
		t.Helper()
		f, err := os.Open(p(local))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		u, err := s.Create(context.Background(), s3test.Bucket, key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(u, f); err != nil {
			t.Fatal(err)
		}
		if err := u.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Key order: a.wmz, b.wmz, notes.npz (no memory), sub/c.wmz.
	put("a.wmz", "srch/a.wmz")
	put("b.wmz", "srch/b.wmz")
	put("obs.npz", "srch/notes.npz")
	put("c.wmz", "srch/sub/c.wmz")
	put("obs.npz", "other/x.npz")
	prefix := "s3://" + s3test.Bucket + "/srch/"
	local := []string{p("a.wmz"), p("b.wmz"), p("c.wmz")}

	// Each query set and filter: the store's answer is the local one.
	same := func(wantNote string, extra ...string) string {
		t.Helper()
		for _, q := range [][]string{{"--query", p("state.npy")}, {"--query", p("slots.npy"), "--k", "7"}, {"--query", p("state.npy"), "--episodes", "2:6", "--steps", "3:"}} {
			args := append(append([]string{"search", "-m", p("q.wmm"), "--json"}, q...), extra...)
			want := mustRun(t, append(args, local...)...)
			got, errs, ok := s3Run(t, srv, append(args, prefix)...)
			if !ok {
				t.Fatalf("search %s: %s", prefix, errs)
			}
			if got != want {
				t.Fatalf("search %v over %s:\n%s\nover local copies:\n%s", q, prefix, got, want)
			}
			if wantNote != "" && !strings.Contains(errs, wantNote) || wantNote == "" && strings.Contains(errs, "note:") {
				t.Fatalf("search %v: want a note %q, got %q", q, wantNote, errs)
			}
			if !strings.Contains(errs, "read 3 memories from the store") {
				t.Fatalf("no summary of the reads: %q", errs)
			}
		}
		return ""
	}
	// No indexes: every memory decoded, with the local path's note.
	same(prefix + "a.wmz: no index")

	// Indexes uploaded beside the memories, the bytes a local index has.
	out := s3Must(t, srv, "index", "-m", p("q.wmm"), prefix)
	if strings.Count(out, "wrote s3://") != 3 {
		t.Fatalf("index of a prefix said %q", out)
	}
	mustRun(t, "index", "-q", "-m", p("q.wmm"), p("a.wmz"), p("b.wmz"), p("c.wmz"))
	for local, key := range map[string]string{"a.wmzi": "srch/a.wmzi", "c.wmzi": "srch/sub/c.wmzi"} {
		want, _ := os.ReadFile(p(local))
		got, err := s.ReadAll(context.Background(), s3test.Bucket, key, 1<<30)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %v, %d bytes, want the %d of %s", key, err, len(got), len(want), local)
		}
	}
	same("")
	// One object by name, with the model the first memory embeds.
	want := mustRun(t, "search", "--json", "--query", p("state.npy"), p("c.wmz"))
	got := s3Must(t, srv, "search", "--json", "--query", p("state.npy"), prefix+"sub/c.wmz")
	if got != want {
		t.Fatalf("search of one object:\n%s\nwant\n%s", got, want)
	}

	// b.wmz replaced by a longer memory: its index is stale, and refused.
	mustRun(t, "append", "-m", p("q.wmm"), p("b.wmz"), p("obs.npz"))
	put("b.wmz", "srch/b.wmz")
	same(prefix + "b.wmz: search: index is stale")

	// Nothing to search.
	s3Fail(t, srv, "no memories under this prefix", "search", "-m", p("q.wmm"), "--query", p("state.npy"), "s3://"+s3test.Bucket+"/nothing/")
	s3Fail(t, srv, "no memories under this prefix", "search", "-m", p("q.wmm"), "--query", p("state.npy"), "s3://"+s3test.Bucket+"/other/")
	s3Fail(t, srv, "no such object", "search", "-m", p("q.wmm"), "--query", p("state.npy"), prefix+"none.wmz")
}
