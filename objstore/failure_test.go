package objstore_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/objstore"
	"github.com/wmzip/wmzip/objstore/s3test"
)

// TestServerStopped (issue 30): reads from a server that was stopped fail
// with an error naming the object and the store, after a bounded number
// of tries; the same File reads again once the server is back, and a
// read that is being retried while it comes back succeeds.
func TestServerStopped(t *testing.T) {
	srv := s3test.Start(t)
	s := srv.Store(t)
	ctx := context.Background()
	b := memFile(t, 4)
	put(t, s, "stop/a.wmz", b)
	c, eps := fixture()
	ro := objstore.ReadOptions{HeadBytes: 256, TailBytes: 4096, ReadAhead: 64}
	f, err := s.OpenFile(ctx, s3test.Bucket, "stop/a.wmz", c, ro)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.State(0, 0, nil); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	t0 := time.Now()
	mid := len(eps) / 2 // held by neither the head nor the tail
	_, _, err = f.State(mid, 49, nil)
	if err == nil {
		t.Fatal("a read from a stopped server succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"s3://wmzip/stop/a.wmz", "did not answer", "tried 3 times"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("the failing read took %v", d)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	_, codes, err := f.State(mid, 49, nil)
	if err != nil {
		t.Fatalf("after the server came back: %v", err)
	}
	if k := len(codes); !slicesEqual(codes, eps[mid].Codes[49*k:50*k]) {
		t.Fatal("the state read after the restart differs")
	}

	// A read under way while the server restarts: retried until it
	// answers.
	opt := srv.Options()
	opt.Retries, opt.RetryPause = 20, 50*time.Millisecond
	patient, err := objstore.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	f2, err := patient.OpenFile(ctx, s3test.Bucket, "stop/a.wmz", c, ro)
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	go func() {
		time.Sleep(300 * time.Millisecond)
		srv.Restart()
	}()
	if _, _, err := f2.State(mid+1, 30, nil); err != nil {
		t.Fatalf("a read retried while the server restarted: %v", err)
	}
	if r := f2.Object.Stats().Retries; r == 0 {
		t.Error("the read succeeded without a retry: the server was not stopped?")
	}
}

// cutProxy forwards loopback connections to a server, and cuts the
// server's answer on a connection after a set number of bytes.
type cutProxy struct {
	l      net.Listener
	target string
	cut    atomic.Int64 // the next connection's answer ends after this many bytes; 0: never
	conns  atomic.Int64
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{l: l, target: strings.TrimPrefix(target, "http://")}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *cutProxy) serve(c net.Conn) {
	defer c.Close()
	p.conns.Add(1)
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	go io.Copy(s, c)
	if n := p.cut.Swap(0); n > 0 {
		io.CopyN(c, s, n)
		return // both ends close mid-answer
	}
	io.Copy(c, s)
}

func (p *cutProxy) endpoint() string { return "http://" + p.l.Addr().String() }

// TestTransferCut: a transfer cut in the middle of an answer is resumed:
// the stream where it broke, a ranged read from its start.
func TestTransferCut(t *testing.T) {
	srv := s3test.Shared(t)
	ctx := context.Background()
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	put(t, srv.Store(t), "cut/big", big)
	p := newCutProxy(t, srv.Endpoint)
	opt := srv.Options()
	opt.Endpoint = p.endpoint()
	// One connection per request: the proxy cuts the next request's answer.
	opt.Transport = &http.Transport{DisableKeepAlives: true}
	s, err := objstore.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	p.cut.Store(300 << 10)
	st, err := s.OpenStream(ctx, s3test.Bucket, "cut/big")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(st)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if !bytes.Equal(got, big) {
		t.Fatal("the resumed stream differs")
	}
	if n := st.Stats().Requests; n != 2 {
		t.Errorf("the cut stream took %d requests, want 2", n)
	}

	if err != nil {
		t.Fatal(err)
	}
	o, err := s.Open(ctx, s3test.Bucket, "cut/big", objstore.ReadOptions{HeadBytes: 1024, TailBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	p.cut.Store(100 << 10)
	buf := make([]byte, 400<<10)
	if _, err := o.ReadAt(buf, 200<<10); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, big[200<<10:600<<10]) {
		t.Fatal("the ranged read after a cut differs")
	}
	if r := o.Stats().Retries; r != 1 {
		t.Errorf("the cut ranged read was retried %d times, want 1", r)
	}
}

const childEnv = "WMZIP_OBJSTORE_UPLOAD_CHILD"

// uploadChild is the process TestKilledUpload kills: it sends two parts
// of an upload, says so, and waits.
func uploadChild() {
	opt := objstore.Options{Endpoint: os.Getenv("AWS_ENDPOINT_URL"), AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey, PartSize: 5 << 20}
	s, err := objstore.New(opt)
	if err != nil {
		panic(err)
	}
	u, err := s.Create(context.Background(), s3test.Bucket, os.Getenv(childEnv))
	if err != nil {
		panic(err)
	}
	// A .wmz file's first bytes, then enough for two parts to have gone
	// up (the third part's start waits for the second).
	c, _ := fixture()
	w, err := wmzip.NewWriter(u, c)
	if err != nil {
		panic(err)
	}
	if err := w.Flush(); err != nil {
		panic(err)
	}
	block := make([]byte, 1<<20)
	for u.Size() < 15<<20 {
		if _, err := u.Write(block); err != nil {
			panic(err)
		}
	}
	fmt.Println("parts sent")
	time.Sleep(time.Hour)
}

// TestKilledUpload (issue 30): a writer killed in the middle of an upload
// leaves no object; what it sent is an incomplete upload, which
// AbortUploads removes.
func TestKilledUpload(t *testing.T) {
	srv := s3test.Shared(t)
	s := srv.Store(t)
	key := "killed/a.wmz"
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+key, "AWS_ENDPOINT_URL="+srv.Endpoint)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "parts sent\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the writer said %q, %v", line, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	assertNoObject(t, s, key)
	n, err := s.AbortUploads(context.Background(), s3test.Bucket, "killed/", time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d incomplete uploads aborted, want 1", n)
	}
}
