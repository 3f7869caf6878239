package objstore

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/minio/minio-go/v7"
)

// A Stream reads an object in order with one GET, as an io.ReadCloser. A
// transfer that breaks is resumed where it broke with a ranged GET of the
// same ETag, up to Options.Retries times in a row.
type Stream struct {
	s           *Store
	ctx         context.Context
	bucket, key string
	etag        string
	size        int64
	pos         int64
	body        io.ReadCloser
	c           counters
	err         error // sticky
}

// OpenStream starts reading the object bucket/key from its first byte.
func (s *Store) OpenStream(ctx context.Context, bucket, key string) (*Stream, error) {
	st := &Stream{s: s, ctx: ctx, bucket: bucket, key: key, size: -1}
	if err := st.open(); err != nil {
		return nil, err
	}
	return st, nil
}

// open sends the GET of the bytes from st.pos on.
func (st *Stream) open() error {
	var opts minio.GetObjectOptions
	if st.pos > 0 {
		opts.SetRange(st.pos, 0)
	}
	if st.etag != "" {
		opts.SetMatchETag(st.etag)
	}
	err := st.s.retry(st.ctx, &st.c, func(int) error {
		body, info, _, err := st.s.core.GetObject(withCounters(st.ctx, &st.c), st.bucket, st.key, opts)
		if err != nil {
			return err
		}
		st.body = body
		if st.etag == "" {
			st.etag, st.size = strings.Trim(info.ETag, `"`), info.Size
		}
		return nil
	})
	return st.s.storeError(fmt.Sprintf("read from byte %d", st.pos), st.bucket, st.key, err)
}

// Read reads the next bytes of the object.
func (st *Stream) Read(p []byte) (int, error) {
	if st.err != nil {
		return 0, st.err
	}
	for tries := 0; ; tries++ {
		n, err := st.body.Read(p)
		st.pos += int64(n)
		switch {
		case err == io.EOF && st.pos < st.size:
			err = io.ErrUnexpectedEOF
		case err == nil || err == io.EOF:
			if err == io.EOF {
				st.err = io.EOF
			}
			return n, err
		}
		if n > 0 { // hand over what came; the error comes back next call
			return n, nil
		}
		st.body.Close()
		if tries >= st.s.opt.Retries || st.ctx.Err() != nil {
			st.err = st.s.storeError(fmt.Sprintf("read from byte %d", st.pos), st.bucket, st.key, fmt.Errorf("the transfer broke: %w (tried %d times)", err, tries+1))
			return 0, st.err
		}
		st.c.retries.Add(1)
		st.s.stats.retries.Add(1)
		if err := st.open(); err != nil {
			st.err = err
			return 0, err
		}
	}
}

// Size returns the object's size.
func (st *Stream) Size() int64 { return st.size }

// ETag returns the object's ETag.
func (st *Stream) ETag() string { return st.etag }

// Stats returns the counts of the Stream's requests.
func (st *Stream) Stats() Stats { return st.c.load() }

// Close ends the transfer.
func (st *Stream) Close() error {
	if st.err == nil {
		st.err = fmt.Errorf("%s: read after Close", objURL(st.bucket, st.key))
	}
	return st.body.Close()
}
