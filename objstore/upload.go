package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/minio/minio-go/v7"
)

// An Upload writes one object. Bytes gather into a part of
// Options.PartSize; each full part goes up while the next fills, so an
// Upload holds at most two parts whatever the object's size. Close
// completes the upload, and only then does the object exist: an object
// smaller than one part goes up whole in one request at Close, a larger
// one as a multipart upload completed by Close. Abort, or any failure,
// aborts the multipart upload; a process that dies before Close leaves no
// object either, only an incomplete upload that Store.AbortUploads
// removes (as would a bucket's lifecycle rule).
//
// An Upload is not safe for concurrent use; its errors are sticky.
type Upload struct {
	s           *Store
	ctx         context.Context
	bucket, key string
	opts        minio.PutObjectOptions
	cond        *minio.PutObjectOptions // opts with IfMatch's condition, for the request that completes
	buf         *bytes.Buffer
	spare       *bytes.Buffer
	id          string // multipart upload ID, once started
	parts       []minio.CompletePart
	pending     chan error // the part going up, if any
	size        int64
	err         error
	done        bool
	c           counters
}

// Create starts writing the object bucket/key. Nothing is sent before the
// first part fills or Close.
func (s *Store) Create(ctx context.Context, bucket, key string) (*Upload, error) {
	if bucket == "" || key == "" {
		return nil, &Error{Op: "create", URL: objURL(bucket, key), Err: errors.New("name a bucket and a key")}
	}
	return &Upload{s: s, ctx: ctx, bucket: bucket, key: key, buf: new(bytes.Buffer),
		opts: minio.PutObjectOptions{ContentType: "application/octet-stream"}}, nil
}

// IfMatch makes Close complete the object only if the object bucket/key
// then has the ETag etag, or with etag "" only if there is no such object
// (a conditional write, If-Match or If-None-Match): an object read, changed
// and written back does not overwrite what another writer put there
// meanwhile. Close then fails with an error wrapping ErrChanged. Call it
// before Close.
func (u *Upload) IfMatch(etag string) {
	c := u.opts
	if etag == "" {
		c.SetMatchETagExcept("*")
	} else {
		c.SetMatchETag(etag)
	}
	u.cond = &c
}

// completeOpts returns the options of the request that completes the
// object.
func (u *Upload) completeOpts() minio.PutObjectOptions {
	if u.cond != nil {
		return *u.cond
	}
	return u.opts
}

// Write adds p to the object.
func (u *Upload) Write(p []byte) (int, error) {
	if u.err != nil {
		return 0, u.err
	}
	if u.done {
		return 0, u.fail(errors.New("write after Close"))
	}
	n := 0
	for len(p) > 0 {
		k := min(len(p), int(u.s.opt.PartSize)-u.buf.Len())
		u.buf.Write(p[:k])
		p, n = p[k:], n+k
		if u.buf.Len() == int(u.s.opt.PartSize) {
			if err := u.sendPart(); err != nil {
				return n, err
			}
		}
	}
	u.size += int64(n)
	return n, nil
}

// sendPart starts the upload of the full buffer as the next part, after
// the part before it has gone up.
func (u *Upload) sendPart() error {
	if err := u.wait(); err != nil {
		return err
	}
	if u.id == "" {
		var id string
		err := u.s.retry(u.ctx, &u.c, func(int) error {
			var err error
			id, err = u.s.core.NewMultipartUpload(withCounters(u.ctx, &u.c), u.bucket, u.key, u.opts)
			return err
		})
		if err != nil {
			return u.fail(err)
		}
		u.id = id
	}
	part := u.buf
	if u.spare == nil {
		u.spare = new(bytes.Buffer)
	}
	u.buf, u.spare = u.spare, nil
	u.buf.Reset()
	num := len(u.parts) + 1
	u.parts = append(u.parts, minio.CompletePart{PartNumber: num})
	u.pending = make(chan error, 1)
	go func(ch chan error) {
		b := part.Bytes()
		err := u.s.retry(u.ctx, &u.c, func(int) error {
			p, err := u.s.core.PutObjectPart(withCounters(u.ctx, &u.c), u.bucket, u.key, u.id, num,
				bytes.NewReader(b), int64(len(b)), minio.PutObjectPartOptions{})
			if err == nil {
				u.parts[num-1].ETag = p.ETag
			}
			return err
		})
		u.spare = part
		ch <- err
	}(u.pending)
	return nil
}

// wait waits for the part going up, if any.
func (u *Upload) wait() error {
	if u.pending == nil {
		return nil
	}
	err := <-u.pending
	u.pending = nil
	if err != nil {
		return u.fail(err)
	}
	return nil
}

// fail aborts the upload and makes err sticky.
func (u *Upload) fail(err error) error {
	if u.err == nil {
		u.err = u.s.storeError("upload", u.bucket, u.key, err)
		u.abort()
	}
	return u.err
}

// abort aborts the multipart upload, if one was started. It is sent
// even when the Upload's context has ended, with a short time limit of
// its own.
func (u *Upload) abort() {
	if u.pending != nil {
		<-u.pending
		u.pending = nil
	}
	u.done = true
	if u.id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(u.ctx), 10*time.Second)
	defer cancel()
	u.s.core.AbortMultipartUpload(withCounters(ctx, &u.c), u.bucket, u.key, u.id)
	u.id = ""
}

// Close sends what remains and completes the object; it then exists,
// whole. On error nothing was completed.
func (u *Upload) Close() error {
	if u.err != nil {
		return u.err
	}
	if u.done {
		return nil
	}
	if u.id == "" { // one part at most: one request
		b := u.buf.Bytes()
		err := u.s.retry(u.ctx, &u.c, func(int) error {
			_, err := u.s.core.PutObject(withCounters(u.ctx, &u.c), u.bucket, u.key, bytes.NewReader(b), int64(len(b)), "", "", u.completeOpts())
			return err
		})
		if err != nil {
			return u.fail(err)
		}
		u.done = true
		return nil
	}
	if u.buf.Len() > 0 {
		if err := u.sendPart(); err != nil {
			return err
		}
	}
	if err := u.wait(); err != nil {
		return err
	}
	err := u.s.retry(u.ctx, &u.c, func(int) error {
		_, err := u.s.core.CompleteMultipartUpload(withCounters(u.ctx, &u.c), u.bucket, u.key, u.id, u.parts, u.completeOpts())
		return err
	})
	if err != nil {
		return u.fail(err)
	}
	u.done, u.id = true, ""
	return nil
}

// Abort gives the upload up: no object is made, and the parts sent are
// dropped. It does nothing after Close.
func (u *Upload) Abort() {
	if u.done || u.err != nil {
		return
	}
	u.err = &Error{Op: "upload", URL: objURL(u.bucket, u.key), Err: errors.New("aborted")}
	u.abort()
}

// Size returns the bytes written so far.
func (u *Upload) Size() int64 { return u.size }

// Stats returns the counts of the Upload's requests.
func (u *Upload) Stats() Stats { return u.c.load() }

// AbortUploads aborts the incomplete multipart uploads under prefix in
// bucket begun before the time given (those of writers that died), and
// returns how many it aborted.
func (s *Store) AbortUploads(ctx context.Context, bucket, prefix string, before time.Time) (int, error) {
	n := 0
	for up := range s.core.Client.ListIncompleteUploads(ctx, bucket, prefix, true) {
		if up.Err != nil {
			return n, s.storeError("list uploads", bucket, prefix, up.Err)
		}
		if !up.Initiated.Before(before) {
			continue
		}
		if err := s.core.AbortMultipartUpload(ctx, bucket, up.Key, up.UploadID); err != nil {
			return n, s.storeError("abort upload", bucket, up.Key, err)
		}
		n++
	}
	return n, nil
}

// String describes the upload for messages.
func (u *Upload) String() string { return fmt.Sprintf("upload of %s", objURL(u.bucket, u.key)) }
