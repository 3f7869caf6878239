package objstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Options say where the store is and who asks. Empty fields are taken
// from the environment (see the package documentation); zero numbers
// take the defaults.
type Options struct {
	// Endpoint is the store's URL, such as http://127.0.0.1:8333 or
	// https://s3.eu-west-1.amazonaws.com (a bare host means https). A
	// store other than AWS is addressed path-style (host/bucket/key).
	Endpoint string
	// AccessKey, SecretKey and SessionToken are the credentials; with no
	// access key requests go unsigned (anonymous).
	AccessKey, SecretKey, SessionToken string
	// Region is the store's region; us-east-1 if unset anywhere.
	Region string
	// Retries is how many times a failed request is sent again, with a
	// pause that doubles from RetryPause (defaults 4 and 100ms).
	Retries    int
	RetryPause time.Duration
	// PartSize is the size of an upload's parts (default 8 MiB, at least
	// 5 MiB as S3 requires).
	PartSize int64
	// Transport carries the requests (default: a clone of
	// http.DefaultTransport).
	Transport http.RoundTripper
}

const (
	defaultRetries    = 4
	defaultRetryPause = 100 * time.Millisecond
	defaultPartSize   = 8 << 20
	minPartSize       = 5 << 20
)

// A Store is a connection to an S3-compatible object store. It is safe
// for concurrent use.
type Store struct {
	core     minio.Core
	endpoint string
	opt      Options
	stats    counters // every request of the Store
	unset    bool     // no endpoint and no credentials: errors say so
}

// Stats counts the requests sent and the bytes they moved.
type Stats struct {
	Requests int64 // HTTP requests sent, retries included
	Retries  int64 // of which sent again after a failure
	Bytes    int64 // bytes of response bodies received (reads) ...
	Sent     int64 // ... and of request bodies sent (uploads)
}

type counters struct{ requests, retries, bytes, sent atomic.Int64 }

func (c *counters) load() Stats {
	return Stats{Requests: c.requests.Load(), Retries: c.retries.Load(), Bytes: c.bytes.Load(), Sent: c.sent.Load()}
}

// New connects to the store that opt and the environment describe. It
// sends no request.
func New(opt Options) (*Store, error) {
	env := func(v *string, names ...string) {
		for _, n := range names {
			if *v == "" {
				*v = os.Getenv(n)
			}
		}
	}
	env(&opt.Endpoint, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
	if opt.AccessKey == "" && opt.SecretKey == "" {
		env(&opt.AccessKey, "AWS_ACCESS_KEY_ID")
		env(&opt.SecretKey, "AWS_SECRET_ACCESS_KEY")
		env(&opt.SessionToken, "AWS_SESSION_TOKEN")
	}
	env(&opt.Region, "AWS_REGION", "AWS_DEFAULT_REGION")
	if opt.Region == "" {
		opt.Region = "us-east-1"
	}
	if opt.Retries == 0 {
		opt.Retries = defaultRetries
	}
	if opt.Retries < 0 {
		opt.Retries = 0
	}
	if opt.RetryPause <= 0 {
		opt.RetryPause = defaultRetryPause
	}
	switch {
	case opt.PartSize == 0:
		opt.PartSize = defaultPartSize
	case opt.PartSize < minPartSize:
		return nil, fmt.Errorf("objstore: part size %d below S3's least, %d", opt.PartSize, minPartSize)
	}
	host, secure, aws, err := parseEndpoint(opt.Endpoint)
	if err != nil {
		return nil, err
	}
	rt := opt.Transport
	if rt == nil {
		rt = http.DefaultTransport.(*http.Transport).Clone()
	}
	s := &Store{endpoint: host, opt: opt, unset: opt.Endpoint == "" && opt.AccessKey == ""}
	lookup := minio.BucketLookupPath
	if aws {
		lookup = minio.BucketLookupAuto
	}
	var creds *credentials.Credentials
	if opt.AccessKey != "" {
		creds = credentials.NewStaticV4(opt.AccessKey, opt.SecretKey, opt.SessionToken)
	} else {
		creds = credentials.NewStatic("", "", "", credentials.SignatureAnonymous)
	}
	c, err := minio.NewCore(host, &minio.Options{
		Creds:        creds,
		Secure:       secure,
		Region:       opt.Region,
		BucketLookup: lookup,
		Transport:    &counting{rt: rt, store: &s.stats},
		MaxRetries:   1, // retries are this package's, counted
	})
	if err != nil {
		return nil, fmt.Errorf("objstore: %w", err)
	}
	s.core = *c
	return s, nil
}

// parseEndpoint returns the host of an endpoint URL and whether it uses
// TLS and is AWS's.
func parseEndpoint(e string) (host string, secure, aws bool, err error) {
	if e == "" {
		return "s3.amazonaws.com", true, true, nil
	}
	if !strings.Contains(e, "://") {
		e = "https://" + e
	}
	u, err := url.Parse(e)
	if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return "", false, false, fmt.Errorf("objstore: endpoint %q: want a URL such as http://127.0.0.1:8333", e)
	}
	switch u.Scheme {
	case "http", "https":
	default:
		return "", false, false, fmt.Errorf("objstore: endpoint %q: the scheme must be http or https", e)
	}
	return u.Host, u.Scheme == "https", strings.HasSuffix(u.Hostname(), ".amazonaws.com"), nil
}

// Stats returns the counts of every request the Store sent.
func (s *Store) Stats() Stats { return s.stats.load() }

// Endpoint returns the host the Store sends its requests to.
func (s *Store) Endpoint() string { return s.endpoint }

// ParseURL splits s3://bucket/key into its bucket and key; ok is false
// for a name of another form. The key may be empty (s3://bucket or
// s3://bucket/), as a prefix.
func ParseURL(name string) (bucket, key string, ok bool) {
	rest, ok := strings.CutPrefix(name, "s3://")
	if !ok {
		return "", "", false
	}
	bucket, key, _ = strings.Cut(rest, "/")
	return bucket, key, bucket != ""
}

// IsURL reports whether name is an s3:// URL.
func IsURL(name string) bool { return strings.HasPrefix(name, "s3://") }

func objURL(bucket, key string) string { return "s3://" + bucket + "/" + key }

// ErrChanged is the error of a read of an object that was replaced
// after it was opened.
var ErrChanged = errors.New("the object changed since it was opened")

// Error is an error of a request about an object: what was done, the
// object's URL and the cause.
type Error struct {
	Op  string // "open", "read bytes 100-199", "upload", ...
	URL string
	Err error
}

func (e *Error) Error() string { return e.URL + ": " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// storeError turns an error of the client into one a user can act on:
// missing objects wrap fs.ErrNotExist, refused credentials
// fs.ErrPermission.
func (s *Store) storeError(op, bucket, key string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	r := minio.ToErrorResponse(err)
	switch r.Code {
	case "NoSuchKey":
		err = fmt.Errorf("no such object (%w)", fs.ErrNotExist)
	case "NoSuchBucket":
		err = fmt.Errorf("no bucket %q at %s (%w)", bucket, s.endpoint, fs.ErrNotExist)
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken":
		err = fmt.Errorf("the store refused the credentials (%s: %s; see AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY): %w", r.Code, r.Message, fs.ErrPermission)
	case "PreconditionFailed":
		err = ErrChanged
	case "":
		var ne net.Error
		if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("the store at %s did not answer: %w", s.endpoint, err)
		}
	default:
		if r.StatusCode == http.StatusNotFound && key != "" {
			err = fmt.Errorf("no such object (%w)", fs.ErrNotExist)
		}
	}
	if !errors.Is(err, ErrChanged) {
		err = s.hintError(err)
	}
	return &Error{Op: op, URL: objURL(bucket, key), Err: err}
}

// retryable reports whether a failed request may succeed if sent again:
// the network failed, the transfer broke, or the server said it was busy
// or failing. A refusal (missing key, credentials, precondition) is final.
func retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	r := minio.ToErrorResponse(err)
	if r.Code == "" && r.StatusCode == 0 {
		return true // network, short body
	}
	switch r.StatusCode {
	case 0, http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusRequestTimeout, http.StatusTooManyRequests:
		return true
	}
	switch r.Code {
	case "SlowDown", "InternalError", "RequestTimeout", "ServiceUnavailable":
		return true
	}
	return false
}

// retry runs fn until it succeeds, fails for good, or has been tried
// 1+Retries times, pausing between tries; fn's try is 0 the first time.
func (s *Store) retry(ctx context.Context, c *counters, fn func(try int) error) error {
	pause := s.opt.RetryPause
	for try := 0; ; try++ {
		if try > 0 {
			s.stats.retries.Add(1)
			if c != nil {
				c.retries.Add(1)
			}
		}
		err := fn(try)
		if err == nil || !retryable(err) || try >= s.opt.Retries {
			if err != nil && try > 0 {
				err = fmt.Errorf("%w (tried %d times)", err, try+1)
			}
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause = min(2*pause, 2*time.Second)
	}
}

// BucketExists reports whether the bucket exists.
func (s *Store) BucketExists(ctx context.Context, bucket string) (bool, error) {
	var ok bool
	err := s.retry(ctx, nil, func(int) error {
		var err error
		ok, err = s.core.Client.BucketExists(ctx, bucket)
		return err
	})
	if err != nil {
		return false, s.storeError("check the bucket", bucket, "", err)
	}
	return ok, nil
}

// unconfigured is the hint an error of a Store made with neither an
// endpoint nor credentials carries: the request went, unsigned, to AWS.
const unconfigured = "no store is configured: the request went unsigned to %s; set AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3) to the store's URL and AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY to its credentials"

// hintError adds to err the hint of a Store with neither an endpoint nor
// credentials (none given and none in the environment).
func (s *Store) hintError(err error) error {
	if err == nil || !s.unset {
		return err
	}
	return fmt.Errorf("%w (%s)", err, fmt.Sprintf(unconfigured, s.endpoint))
}
