package objstore

import (
	"context"
	"errors"
	"strings"

	"github.com/minio/minio-go/v7"
)

// Stat returns the size and ETag of the object bucket/key, from one HEAD
// request: nothing of the object is read.
func (s *Store) Stat(ctx context.Context, bucket, key string) (Listed, error) {
	var info minio.ObjectInfo
	err := s.retry(ctx, nil, func(int) error {
		var err error
		info, err = s.core.Client.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
		return err
	})
	if err != nil {
		return Listed{}, s.storeError("stat", bucket, key, err)
	}
	return Listed{Key: key, Size: info.Size, ETag: strings.Trim(info.ETag, `"`), Modified: info.LastModified}, nil
}

// OpenKnown returns an Object over bucket/key as something read earlier
// describes it (a catalog of memories): its size and ETag, and its first
// bytes (head) and last bytes (tail), which it holds from the start. It
// sends no request; every read of other bytes names the ETag, so an
// object replaced since gives ErrChanged, as with Open.
func (s *Store) OpenKnown(ctx context.Context, bucket, key string, size int64, etag string, head, tail []byte, ro ReadOptions) (*Object, error) {
	if size < 0 || int64(len(head)) > size || int64(len(tail)) > size || etag == "" {
		return nil, &Error{Op: "open", URL: objURL(bucket, key), Err: errInvalidKnown}
	}
	o := &Object{s: s, ctx: ctx, bucket: bucket, key: key, ro: ro.withDefaults(), size: size, etag: etag}
	o.addReady(0, head)
	if h, t := int64(len(head)), size-int64(len(tail)); t >= h {
		o.addReady(t, tail)
	} else {
		o.addReady(h, tail[h-t:])
	}
	return o, nil
}

var errInvalidKnown = errors.New("want a size, an ETag, and a head and tail no longer than the object")
