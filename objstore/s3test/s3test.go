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
	ports    ports
	cmd      *exec.Cmd
	done     chan struct{}
	log      *os.File
}

// ports are the server's listening ports on 127.0.0.1: SeaweedFS runs a
// master, a volume server, a filer and the S3 gateway, each with an HTTP
// and a gRPC port.
type ports struct{ s3, s3Grpc, master, masterGrpc, volume, volumeGrpc, filer, filerGrpc int }

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

// freePorts returns n distinct ports of 127.0.0.1 free a moment ago.
func freePorts(n int) ([]int, error) {
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close() // held until all are chosen: no port twice
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func start(dir string) (*Server, error) {
	p, err := freePorts(8)
	if err != nil {
		return nil, err
	}
	pt := ports{p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]}
	s := &Server{bin: os.Getenv("WMZIP_S3_BIN"), dir: dir, ports: pt, Endpoint: fmt.Sprintf("http://127.0.0.1:%d", pt.s3)}
	if err := s.run(); err != nil {
		return nil, err
	}
	if err := s.makeBucket(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Args returns the command line of a SeaweedFS server (master, volume
// server, filer and S3 gateway in one process) that listens on 127.0.0.1
// only, keeps its data under dir, reports nothing to anyone (no
// telemetry) and takes the credentials in the file s3config (Config).
// scripts/s3server.sh starts the same.
func Args(dir, s3config string, p ports) []string {
	sock := filepath.Join(dir, "filer.sock")
	if len(sock) > 100 { // a Unix socket's name is short
		sock = ""
	}
	return []string{"-logtostderr", "-v=0", "server",
		"-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir=" + filepath.Join(dir, "data"),
		"-master.port=" + itoa(p.master), "-master.port.grpc=" + itoa(p.masterGrpc),
		"-master.telemetry=false", "-master.volumeSizeLimitMB=64", "-volume.max=16",
		"-volume.port=" + itoa(p.volume), "-volume.port.grpc=" + itoa(p.volumeGrpc),
		"-filer", "-filer.port=" + itoa(p.filer), "-filer.port.grpc=" + itoa(p.filerGrpc),
		"-filer.localSocket=" + sock,
		"-s3", "-s3.port=" + itoa(p.s3), "-s3.port.grpc=" + itoa(p.s3Grpc),
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.config=" + s3config,
	}
}

func itoa(n int) string { return fmt.Sprint(n) }

// Config is the S3 gateway's identity file: one identity, AccessKey and
// SecretKey, allowed everything.
const Config = `{"identities": [{"name": "wmzip", "credentials": [{"accessKey": "` + AccessKey + `", "secretKey": "` + SecretKey + `"}], "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]}`

// run starts the server process and waits until its gateway answers.
func (s *Server) run() error {
	if err := os.MkdirAll(filepath.Join(s.dir, "data"), 0o755); err != nil {
		return err
	}
	cfg := filepath.Join(s.dir, "s3.json")
	if err := os.WriteFile(cfg, []byte(Config), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(s.bin, Args(s.dir, cfg, s.ports)...)
	cmd.Dir = s.dir
	setDeathSignal(cmd)
	log, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
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
	return s.ready(60 * time.Second)
}

// ready waits until the gateway answers a request about the bucket (the
// filer and volume server behind it start after it listens).
func (s *Server) ready(limit time.Duration) error {
	c, err := s.client()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := c.ListBuckets(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			b, _ := os.ReadFile(s.log.Name())
			return fmt.Errorf("the S3 server exited: %s", tail(string(b), 2000))
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("the S3 server did not answer within %v: %v", limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}

func (s *Server) client() (*minio.Client, error) {
	return minio.New(fmt.Sprintf("127.0.0.1:%d", s.ports.s3), &minio.Options{
		Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""), Region: "us-east-1", BucketLookup: minio.BucketLookupPath,
	})
}

func (s *Server) makeBucket() error {
	c, err := s.client()
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
