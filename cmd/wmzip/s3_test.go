package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/objstore"
	"github.com/wmzip/wmzip/objstore/s3test"
)

// s3Run runs the CLI with the server's environment.
func s3Run(t *testing.T, srv *s3test.Server, args ...string) (string, string, bool) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), srv.Env()...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err == nil
}

func s3Must(t *testing.T, srv *s3test.Server, args ...string) string {
	t.Helper()
	out, errs, ok := s3Run(t, srv, args...)
	if !ok {
		t.Fatalf("wmzip %s failed: %s", strings.Join(args, " "), errs)
	}
	return out
}

func s3Fail(t *testing.T, srv *s3test.Server, want string, args ...string) {
	t.Helper()
	_, errs, ok := s3Run(t, srv, args...)
	if ok {
		t.Fatalf("wmzip %s succeeded, want an error", strings.Join(args, " "))
	}
	if strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 || !strings.Contains(errs, want) {
		t.Fatalf("wmzip %s: want one line saying %q, got %q", strings.Join(args, " "), want, errs)
	}
}

// TestS3Names (issue 30): every verb takes s3://bucket/key for its files;
// encode to the store then decode from it gives the bytes of the local
// round trip.
func TestS3Names(t *testing.T) {
	srv := s3test.Start(t)
	d := t.TempDir()
	p := func(n string) string { return filepath.Join(d, n) }
	u := func(n string) string { return "s3://" + s3test.Bucket + "/cli/" + n }
	gen := []string{"gen", "graphworld", "--nodes", "40", "--graph-seed", "3", "--episodes", "3", "--steps", "40", "-q"}

	// Locally.
	mustRun(t, append(gen, "--seed", "1", "-o", p("train.npz"))...)
	mustRun(t, append(gen, "--seed", "2", "-o", p("test.npz"))...)
	mustRun(t, "train", "-q", "-o", p("m.wmm"), p("train.npz"))
	mustRun(t, "encode", "-q", "-m", p("m.wmm"), "-o", p("t.wmz"), p("test.npz"))
	mustRun(t, "decode", "-q", "-m", p("m.wmm"), "-o", p("back.npz"), p("t.wmz"))

	// The same through the store: outputs uploaded, inputs read there.
	s3Must(t, srv, append(gen, "--seed", "1", "-o", u("train.npz"))...)
	s3Must(t, srv, append(gen, "--seed", "2", "-o", u("test.npz"))...)
	s3Must(t, srv, "train", "-q", "-o", u("m.wmm"), u("train.npz"))
	s3Must(t, srv, "encode", "-q", "-m", u("m.wmm"), "-o", u("t.wmz"), u("test.npz"))
	s3Must(t, srv, "decode", "-q", "-m", u("m.wmm"), "-o", p("back-s3.npz"), u("t.wmz"))
	s3Must(t, srv, "decode", "-q", "-m", u("m.wmm"), "-o", u("back.npz"), u("t.wmz"))

	s, err := objstore.New(srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	same := func(local, key string) {
		t.Helper()
		want, err := os.ReadFile(p(local))
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.ReadAll(context.Background(), s3test.Bucket, "cli/"+key, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("s3://%s/cli/%s differs from %s (%d and %d bytes)", s3test.Bucket, key, local, len(got), len(want))
		}
	}
	same("test.npz", "test.npz")
	same("m.wmm", "m.wmm")
	same("t.wmz", "t.wmz")
	same("back.npz", "back.npz")
	a, _ := os.ReadFile(p("back.npz"))
	b, _ := os.ReadFile(p("back-s3.npz"))
	if !bytes.Equal(a, b) {
		t.Error("decoding from the store differs from decoding the local file")
	}

	// Reading verbs, and ls from the indexes.
	s3Must(t, srv, "verify", "-q", "-m", u("m.wmm"), "--against", u("test.npz"), u("t.wmz"))
	info := s3Must(t, srv, "info", "--json", u("t.wmz"))
	var j map[string]any
	if err := json.Unmarshal([]byte(info), &j); err != nil || j["states"] != 120.0 {
		t.Errorf("info of an object: %v %s", err, info)
	}
	s3Must(t, srv, "info", u("m.wmm"))
	s3Must(t, srv, "decode", "-q", "-m", u("m.wmm"), "--episode", "1", "--step", "7", "-o", p("one.npz"), u("t.wmz"))
	ls := s3Must(t, srv, "ls", "--json", "s3://"+s3test.Bucket+"/cli/")
	var lj lsJSON
	if err := json.Unmarshal([]byte(ls), &lj); err != nil {
		t.Fatal(err)
	}
	if lj.Memories != 1 || lj.States != 120 || len(lj.Files) != 1 || lj.Files[0].Name != u("t.wmz") {
		t.Errorf("ls: %s", ls)
	}
	if len(lj.Files) > 0 && lj.Files[0].Requests > 2 {
		t.Errorf("ls read the index of a memory with %d requests", lj.Files[0].Requests)
	}
	text := s3Must(t, srv, "ls", "--all", "s3://"+s3test.Bucket+"/cli/")
	if !strings.Contains(text, "not a .wmz file") || !strings.Contains(text, "1 memories, 120 states") {
		t.Errorf("ls --all:\n%s", text)
	}

	// Outputs never replace inputs, and failures leave nothing.
	s3Fail(t, srv, "never writes over its inputs", "encode", "-q", "-m", u("m.wmm"), "-o", u("test.npz"), u("test.npz"))
	s3Fail(t, srv, "no such object", "decode", "-q", "-o", p("x.npz"), u("nothing.wmz"))
	s3Fail(t, srv, "no bucket", "decode", "-q", "-m", u("m.wmm"), "-o", "s3://nosuchbucket/x.npz", u("t.wmz"))
	s3Fail(t, srv, "episode 9", "decode", "-q", "-m", u("m.wmm"), "--episode", "9", "-o", u("bad.npz"), u("t.wmz"))
	if _, err := s.Open(context.Background(), s3test.Bucket, "cli/bad.npz", objstore.ReadOptions{}); err == nil {
		t.Error("a failed decode left its output object")
	}
	// An input copied down is named by its URL in errors.
	s3Fail(t, srv, u("train.npz")+" is", "decode", "-q", "-o", p("z.npz"), u("train.npz"))

	// Files changed in place: an access log grows in the store, append
	// adds episodes to an object, and both match their local twins.
	for range 2 {
		mustRun(t, "decode", "-q", "-m", p("m.wmm"), "--episode", "2", "--access-log", p("log.tsv"), "-o", p("e.npz"), p("t.wmz"))
		s3Must(t, srv, "decode", "-q", "-m", u("m.wmm"), "--episode", "2", "--access-log", u("log.tsv"), "-o", p("e.npz"), u("t.wmz"))
	}
	same("log.tsv", "log.tsv")
	s3Must(t, srv, "audit", "-q", "--json", u("log.tsv"))
	mustRun(t, "encode", "-q", "-m", p("m.wmm"), "-o", p("grow.wmz"), p("test.npz"))
	mustRun(t, "append", "-q", "-m", p("m.wmm"), p("grow.wmz"), p("train.npz"))
	s3Must(t, srv, "encode", "-q", "-m", u("m.wmm"), "-o", u("grow.wmz"), u("test.npz"))
	s3Must(t, srv, "append", "-q", "-m", u("m.wmm"), u("grow.wmz"), u("train.npz"))
	same("grow.wmz", "grow.wmz")
	s3Fail(t, srv, u("none.wmz")+": no such file", "append", "-q", "-m", u("m.wmm"), u("none.wmz"), u("train.npz"))
	if _, err := s.Open(context.Background(), s3test.Bucket, "cli/none.wmz", objstore.ReadOptions{}); err == nil {
		t.Error("a failed append made an object")
	}

	// recover reads a damaged object and writes the file it saves.
	b, _ = os.ReadFile(p("t.wmz"))
	if err := os.WriteFile(p("cut.wmz"), b[:len(b)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	up, err := s.Create(context.Background(), s3test.Bucket, "cli/cut.wmz")
	if err != nil {
		t.Fatal(err)
	}
	up.Write(b[:len(b)*2/3])
	if err := up.Close(); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "recover", "-q", "-m", p("m.wmm"), "-o", p("fixed.wmz"), p("cut.wmz"))
	s3Must(t, srv, "recover", "-q", "-m", u("m.wmm"), "-o", u("fixed.wmz"), u("cut.wmz"))
	same("fixed.wmz", "fixed.wmz")
}
