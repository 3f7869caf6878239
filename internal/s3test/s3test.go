// Package s3test gives tests a real S3-compatible server on the loopback:
// the one scripts/s3server.sh started, when WMZIP_S3_ENDPOINT names it, or
// one of their own, from the binary the script builds (WMZIP_S3_BIN),
// started on a free port of 127.0.0.1 with a fresh data folder and one
// bucket, and stopped when the test (or the package's tests) end. Tests
// that stop and restart the server always start their own. Without
// either variable the tests skip, saying how to run them.
package s3test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/wmzip/wmzip/objstore"
)

// Credentials and bucket of every server started here.
const (
	AccessKey = "wmzip-test"
	SecretKey = "wmzip-test-secret-key"
	Bucket    = "wmzip"
)

// skip skips t, or fails it where the server is required
// (WMZIP_S3_REQUIRED=1, as in .ci/run).
func skip(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("WMZIP_S3_REQUIRED") == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// SkipReason says why S3 tests cannot run here, or "" when they can.
func SkipReason() string {
	bin := os.Getenv("WMZIP_S3_BIN")
	if bin == "" {
		return "no S3 server: WMZIP_S3_BIN is unset (eval \"$(bash scripts/s3server.sh start)\" builds and starts one and sets it; .ci/run does)"
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Sprintf("no S3 server: WMZIP_S3_BIN=%s: %v", bin, err)
	}
	return ""
}

// Server is a running S3 server.
type Server struct {
	Endpoint string // http://127.0.0.1:port
	bin      string
	dir      string
	port     int
	cmd      *exec.Cmd
	done     chan struct{}
	log      *os.File
}

// Start starts a server of its own for the test t, stopped when t ends;
// it skips t without WMZIP_S3_BIN.
func Start(t testing.TB) *Server {
	t.Helper()
	if why := SkipReason(); why != "" {
		skip(t, why)
	}
	s, err := start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

var shared struct {
	once sync.Once
	s    *Server
	err  error
	dir  string
}

// Shared returns the server the tests of the package share: the running
// one WMZIP_S3_ENDPOINT names, or one started on first use, which Main
// stops. It skips t with neither WMZIP_S3_ENDPOINT nor WMZIP_S3_BIN.
func Shared(t testing.TB) *Server {
	t.Helper()
	if e := os.Getenv("WMZIP_S3_ENDPOINT"); e != "" {
		return &Server{Endpoint: e}
	}
	if why := SkipReason(); why != "" {
		skip(t, why)
	}
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "wmzip-s3test-")
		if shared.err == nil {
			shared.s, shared.err = start(shared.dir)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.s
}

// Main runs the tests and stops the shared server: call it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	if shared.s != nil {
		shared.s.Stop()
		os.RemoveAll(shared.dir)
	}
	return code
}

// freePort returns a port of 127.0.0.1 free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func start(dir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: os.Getenv("WMZIP_S3_BIN"), dir: dir, port: port, Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port)}
	if err := s.run(); err != nil {
		return nil, err
	}
	if err := s.makeBucket(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// run starts the server process and waits until it answers.
func (s *Server) run() error {
	data := filepath.Join(s.dir, "data")
	meta := filepath.Join(s.dir, "meta")
	for _, d := range []string{data, meta} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	cmd := exec.Command(s.bin, "--access", AccessKey, "--secret", SecretKey,
		"--port", fmt.Sprintf("127.0.0.1:%d", s.port), "--quiet",
		"posix", "--sidecar", meta, data)
	cmd.Env = append(os.Environ(), "VGW_QUIET=true")
	log, err := os.Create(filepath.Join(s.dir, "server.log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting the S3 server %s: %w", s.bin, err)
	}
	s.cmd, s.log, s.done = cmd, log, make(chan struct{})
	go func() { cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-s.done:
			b, _ := os.ReadFile(log.Name())
			return fmt.Errorf("the S3 server exited: %s", strings.TrimSpace(string(b)))
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return errors.New("the S3 server did not answer within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Server) makeBucket() error {
	c, err := minio.New(fmt.Sprintf("127.0.0.1:%d", s.port), &minio.Options{
		Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""), Region: "us-east-1", BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ok, err := c.BucketExists(ctx, Bucket)
	if err == nil && !ok {
		err = c.MakeBucket(ctx, Bucket, minio.MakeBucketOptions{})
	}
	if err != nil {
		return fmt.Errorf("creating bucket %s: %w", Bucket, err)
	}
	return nil
}

// Stop stops the server (SIGKILL, as a crash would) and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
	s.log.Close()
	s.cmd = nil
}

// Restart starts the server again on its port and data, after Stop.
func (s *Server) Restart() error {
	if s.cmd != nil {
		return errors.New("s3test: Restart of a running server")
	}
	return s.run()
}

// Options are the objstore options of the server, for a Store; fewer
// retries and shorter pauses than the defaults keep failure tests quick.
func (s *Server) Options() objstore.Options {
	return objstore.Options{Endpoint: s.Endpoint, AccessKey: AccessKey, SecretKey: SecretKey, Retries: 2, RetryPause: 20 * time.Millisecond}
}

// Store returns a Store of the server with Options.
func (s *Server) Store(t testing.TB) *objstore.Store {
	t.Helper()
	st, err := objstore.New(s.Options())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Env returns the environment a wmzip command needs to reach the server.
func (s *Server) Env() []string {
	return []string{"AWS_ENDPOINT_URL=" + s.Endpoint, "AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey, "AWS_REGION=us-east-1"}
}
