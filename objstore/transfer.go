package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/minio/minio-go/v7"
)

// ParseObjectURL splits s3://bucket/key naming one object; unlike
// ParseURL it refuses a bucket or a prefix (an empty key, or one ending
// in "/"), with an error that says what to name.
func ParseObjectURL(name string) (bucket, key string, err error) {
	bucket, key, ok := ParseURL(name)
	if !ok || key == "" || strings.HasSuffix(key, "/") {
		return "", "", fmt.Errorf("%s: name an object, s3://bucket/key", name)
	}
	return bucket, key, nil
}

// IsPrefix reports whether an s3:// name is a prefix (s3://bucket,
// s3://bucket/ or s3://bucket/dir/) rather than one object.
func IsPrefix(name string) bool {
	_, key, ok := ParseURL(name)
	return ok && (key == "" || strings.HasSuffix(key, "/"))
}

// Download copies the object bucket/key to w with one GET (resumed where
// it broke) and returns the ETag of what it copied. For a missing object
// it returns an error wrapping fs.ErrNotExist and writes nothing.
func (s *Store) Download(ctx context.Context, bucket, key string, w io.Writer) (etag string, err error) {
	st, err := s.OpenStream(ctx, bucket, key)
	if err != nil {
		return "", err
	}
	defer st.Close()
	if _, err := io.Copy(w, st); err != nil {
		return "", err
	}
	return st.ETag(), nil
}

// PutOptions are the conditions of Put.
type PutOptions struct {
	// Conditional makes Put replace only the object whose ETag is
	// IfMatch, or, with IfMatch "", write only where there is no object
	// (see Upload.IfMatch); it fails otherwise with an error wrapping
	// ErrChanged.
	Conditional bool
	IfMatch     string
}

// Put uploads what r reads as the object bucket/key, streamed in parts
// (Create): the object appears only once r is read to its end, and a
// failure leaves no object (and the old one, if any, as it was).
func (s *Store) Put(ctx context.Context, bucket, key string, r io.Reader, opt PutOptions) error {
	u, err := s.Create(ctx, bucket, key)
	if err != nil {
		return err
	}
	if opt.Conditional {
		u.IfMatch(opt.IfMatch)
	}
	if _, err := io.Copy(u, r); err != nil {
		u.Abort()
		return err
	}
	return u.Close()
}

// Exists reports whether the object bucket/key exists, with one HEAD
// request.
func (s *Store) Exists(ctx context.Context, bucket, key string) (bool, error) {
	err := s.retry(ctx, nil, func(int) error {
		_, err := s.core.Client.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
		return err
	})
	err = s.storeError("look up", bucket, key, err)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
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
