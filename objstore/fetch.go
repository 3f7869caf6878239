package objstore

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7"
)

// counting is the Store's transport: it counts every request and the
// bytes of every response body, for the Store and for the Object or
// Upload whose counters ride in the request's context.
type counting struct {
	rt    http.RoundTripper
	store *counters
}

type countersKey struct{}

func withCounters(ctx context.Context, c *counters) context.Context {
	return context.WithValue(ctx, countersKey{}, c)
}

func (t *counting) RoundTrip(req *http.Request) (*http.Response, error) {
	own, _ := req.Context().Value(countersKey{}).(*counters)
	t.store.requests.Add(1)
	if own != nil {
		own.requests.Add(1)
	}
	if req.ContentLength > 0 {
		t.store.sent.Add(req.ContentLength)
		if own != nil {
			own.sent.Add(req.ContentLength)
		}
	}
	resp, err := t.rt.RoundTrip(req)
	if debugReq != nil {
		debugReq(req, resp, err)
	}
	if err == nil && resp.Body != nil {
		resp.Body = &countedBody{ReadCloser: resp.Body, store: t.store, own: own}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	store, own *counters
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.store.bytes.Add(int64(n))
	if b.own != nil {
		b.own.bytes.Add(int64(n))
	}
	return n, err
}

// rangeResult is what a ranged GET returned.
type rangeResult struct {
	data []byte
	size int64  // the object's size, from Content-Range
	etag string // the object's ETag
}

// getRange reads bytes [off, end) of an object, or with off < 0 its last
// -off bytes (end ignored), in one GET, sent again on failures that allow
// it. With etag set the object must still have it. A range past the end
// of the object is cut to it; an empty object gives no bytes, size 0.
func (s *Store) getRange(ctx context.Context, c *counters, bucket, key, etag string, off, end int64) (rangeResult, error) {
	var opts minio.GetObjectOptions
	var err error
	if off < 0 {
		err = opts.SetRange(0, off)
	} else {
		err = opts.SetRange(off, end-1)
	}
	if err != nil {
		return rangeResult{}, err
	}
	if etag != "" {
		opts.SetMatchETag(etag)
	}
	var res rangeResult
	op := fmt.Sprintf("read bytes %d-%d", off, end-1)
	if off < 0 {
		op = fmt.Sprintf("read the last %d bytes", -off)
	}
	err = s.retry(ctx, c, func(int) error {
		body, info, hdr, err := s.core.GetObject(withCounters(ctx, c), bucket, key, opts)
		if err != nil {
			if r := minio.ToErrorResponse(err); r.Code == "InvalidRange" {
				res = rangeResult{size: 0, etag: etag}
				return nil // an empty object has no bytes to range over
			}
			return err
		}
		defer body.Close()
		first, last, size, ok := contentRange(hdr.Get("Content-Range"))
		if !ok { // a 200 with the whole object
			first, size = 0, info.Size
			last = size - 1
		}
		want := last - first + 1
		if want < 0 || (off >= 0 && (first != off || last >= end)) || size < 0 {
			return fmt.Errorf("the store answered bytes %d-%d of %d for %s", first, last, size, op)
		}
		b := make([]byte, want)
		if _, err := io.ReadFull(body, b); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("the transfer broke: %w", err)
		}
		res = rangeResult{data: b, size: size, etag: strings.Trim(info.ETag, `"`)}
		return nil
	})
	if err != nil {
		return rangeResult{}, s.storeError(op, bucket, key, err)
	}
	return res, nil
}

// contentRange parses "bytes first-last/size".
func contentRange(h string) (first, last, size int64, ok bool) {
	r, ok := strings.CutPrefix(h, "bytes ")
	if !ok {
		return 0, 0, 0, false
	}
	rng, sz, ok := strings.Cut(r, "/")
	a, b, ok2 := strings.Cut(rng, "-")
	if !ok || !ok2 {
		return 0, 0, 0, false
	}
	var e1, e2, e3 error
	first, e1 = strconv.ParseInt(a, 10, 64)
	last, e2 = strconv.ParseInt(b, 10, 64)
	size, e3 = strconv.ParseInt(sz, 10, 64)
	return first, last, size, e1 == nil && e2 == nil && e3 == nil && first >= 0 && last >= first-1 && size > last
}

var debugReq func(*http.Request, *http.Response, error)
