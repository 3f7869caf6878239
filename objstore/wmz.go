package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/format"
	"golang.org/x/sync/errgroup"
)

// File is a .wmz file in a store, open for random access: the wmzip.File
// and the Object it reads through.
type File struct {
	*wmzip.File
	Object *Object
}

// OpenFile opens the .wmz object bucket/key for random access with the
// codec c (nil when the file embeds its model): two requests, and one
// more for each of the header's part (embedded model, level table) and
// the index that does not fit the head or tail read (ReadOptions).
func (s *Store) OpenFile(ctx context.Context, bucket, key string, c *wmzip.Codec, ro ReadOptions, opts ...wmzip.ReaderOption) (*File, error) {
	o, err := s.Open(ctx, bucket, key, ro)
	if err != nil {
		return nil, err
	}
	f, err := wmzip.NewFile(o, o.Size(), c, opts...)
	if err != nil {
		return nil, fileError(o.URL(), err)
	}
	return &File{File: f, Object: o}, nil
}

// fileError names the object in an error of the codec; errors of the
// store name it already.
func fileError(url string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return fmt.Errorf("%s: %w", url, err)
}

// Close closes the file and its Object.
func (f *File) Close() error {
	f.File.Close()
	return f.Object.Close()
}

// NewReader reads the .wmz object bucket/key in order, from one streaming
// GET, with the codec c (nil when the file embeds its model). Closing the
// Stream returned ends the transfer.
func (s *Store) NewReader(ctx context.Context, bucket, key string, c *wmzip.Codec, opts ...wmzip.ReaderOption) (*wmzip.Reader, *Stream, error) {
	st, err := s.OpenStream(ctx, bucket, key)
	if err != nil {
		return nil, nil, err
	}
	r, err := wmzip.NewReader(st, c, opts...)
	if err != nil {
		st.Close()
		return nil, nil, fileError(objURL(bucket, key), err)
	}
	return r, st, nil
}

// maxModelBytes bounds a model read whole: SPEC.md 6.2 bounds an embedded
// model to 2^30 bytes.
const maxModelBytes = 1 << 30

// ReadAll reads the whole object bucket/key, of at most limit bytes, with
// one streaming GET.
func (s *Store) ReadAll(ctx context.Context, bucket, key string, limit int64) ([]byte, error) {
	st, err := s.OpenStream(ctx, bucket, key)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if st.Size() > limit {
		return nil, &Error{Op: "read", URL: objURL(bucket, key), Err: fmt.Errorf("%d bytes, more than the %d allowed", st.Size(), limit)}
	}
	b := make([]byte, 0, max(st.Size(), 0))
	b, err = readAllInto(b, st)
	return b, err
}

func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// LoadCodec reads a codec from the model object (.wmm) bucket/key.
func (s *Store) LoadCodec(ctx context.Context, bucket, key string) (*wmzip.Codec, error) {
	b, err := s.ReadAll(ctx, bucket, key, maxModelBytes)
	if err != nil {
		return nil, err
	}
	c, err := wmzip.UnmarshalCodec(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", objURL(bucket, key), err)
	}
	return c, nil
}

// Entry is an object listed by List: a .wmz file's summary from its
// header and index, or why it has none.
type Entry struct {
	Key      string
	Size     int64
	Modified time.Time
	Header   format.Header
	Info     format.Info
	Err      error // not a .wmz file, or a damaged one; Header and Info unset
	Stats    Stats // the requests reading the summary took
}

// listHead is the head read of a listing: the header, and the level table
// of a file without an embedded model.
const listHead = 4 << 10

// List reads the summary of every object under prefix in bucket, in key
// order, from its header and index (format.ReadInfo: two ranged GETs
// each, sent together, more only for an index past ro.TailBytes or a
// level table after an embedded model), on up to 8 objects at a time.
// An object that is no .wmz file is listed with its Err set.
func (s *Store) List(ctx context.Context, bucket, prefix string, ro ReadOptions) ([]Entry, error) {
	var out []Entry
	for obj, err := range s.listObjects(ctx, bucket, prefix) {
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{Key: obj.Key, Size: obj.Size, Modified: obj.LastModified})
	}
	if ro.HeadBytes == 0 {
		ro.HeadBytes = listHead
	}
	var g errgroup.Group
	g.SetLimit(8)
	for i := range out {
		e := &out[i]
		if e.Size == 0 {
			e.Err = errors.New("empty")
			continue
		}
		g.Go(func() error {
			o, err := s.Open(ctx, bucket, e.Key, ro)
			if err != nil {
				e.Err = err
				return nil
			}
			e.Size = o.Size()
			e.Header, e.Info, e.Err = format.ReadInfo(o, o.Size())
			e.Stats = o.Stats()
			o.Close()
			return nil
		})
	}
	g.Wait()
	return out, nil
}

// listObjects yields the objects under prefix, recursively, in key order.
func (s *Store) listObjects(ctx context.Context, bucket, prefix string) func(yield func(minio.ObjectInfo, error) bool) {
	return func(yield func(minio.ObjectInfo, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		for obj := range s.core.Client.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
			if obj.Err != nil {
				yield(obj, s.storeError("list", bucket, prefix, obj.Err))
				return
			}
			if !yield(obj, nil) {
				return
			}
		}
	}
}

// Listed is an object of a listing (Keys): its key, size and ETag.
type Listed struct {
	Key      string
	Size     int64
	ETag     string
	Modified time.Time
}

// Keys lists the objects under prefix in bucket, recursively, in key
// order, from the listing alone (one request per 1,000 keys): nothing of
// the objects is read.
func (s *Store) Keys(ctx context.Context, bucket, prefix string) ([]Listed, error) {
	var out []Listed
	for obj, err := range s.listObjects(ctx, bucket, prefix) {
		if err != nil {
			return nil, err
		}
		out = append(out, Listed{Key: obj.Key, Size: obj.Size, ETag: obj.ETag, Modified: obj.LastModified})
	}
	return out, nil
}
