package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/objstore"
	"github.com/wmzip/wmzip/search"
)

// File is a memory open for random access, and what it reads through.
type File struct {
	*wmzip.File
	closer io.Closer
}

// Close closes the file and what it reads through.
func (f *File) Close() error {
	err := f.File.Close()
	if cerr := f.closer.Close(); err == nil {
		err = cerr
	}
	return err
}

// OpenFile opens the memory name (an s3:// object or a local file) for
// random access with codec c (nil: the model the file embeds). With e,
// its catalog entry, an object opens from the entry's head and tail
// without a request when the entry holds them, and every read names the
// entry's ETag: an object replaced since gives an error wrapping
// ErrStale; a local file whose size differs from the entry's too.
func OpenFile(ctx context.Context, name string, e *Entry, c *wmzip.Codec, opts ...wmzip.ReaderOption) (*File, error) {
	if !objstore.IsURL(name) {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		st, err := f.Stat()
		if err == nil && e != nil && st.Size() != e.Size {
			err = fmt.Errorf("%s: %w: %d bytes, the catalog says %d", name, ErrStale, st.Size(), e.Size)
		}
		var wf *wmzip.File
		if err == nil {
			wf, err = wmzip.NewFile(f, st.Size(), c, opts...)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		return &File{File: wf, closer: f}, nil
	}
	s, err := Store()
	if err != nil {
		return nil, err
	}
	bucket, key, ok := objstore.ParseURL(name)
	if !ok || key == "" || strings.HasSuffix(key, "/") {
		return nil, fmt.Errorf("%s: want s3://bucket/key of a .wmz object", name)
	}
	var o *objstore.Object
	if e != nil && e.ETag != "" && len(e.Head) > 0 && len(e.Tail) > 0 && e.TailOffset+int64(len(e.Tail)) == e.Size {
		if o, err = s.OpenKnown(ctx, bucket, key, e.Size, e.ETag, e.Head, e.Tail, objstore.ReadOptions{}); err != nil {
			return nil, err
		}
	} else {
		if o, err = s.Open(ctx, bucket, key, objstore.ReadOptions{}); err != nil {
			return nil, err
		}
		if e != nil && (o.ETag() != e.ETag || o.Size() != e.Size) {
			return nil, fmt.Errorf("%s: %w: ETag %s and %d bytes, the catalog says %s and %d", name, ErrStale, o.ETag(), o.Size(), e.ETag, e.Size)
		}
	}
	wf, err := wmzip.NewFile(stale{o}, o.Size(), c, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &File{File: wf, closer: o}, nil
}

// stale reads an Object, its ErrChanged also ErrStale.
type stale struct{ o *objstore.Object }

func (s stale) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.o.ReadAt(p, off)
	if err != nil && errors.Is(err, objstore.ErrChanged) {
		err = fmt.Errorf("%w: %w", ErrStale, err)
	}
	return n, err
}

// Index returns the search index of the memory name (an s3:// object or
// a local file) for codec c: the index beside it (search.IndexPath) when
// it serves, else one built by decoding the memory (why then says why). e,
// the memory's catalog entry, may be nil. With an entry of an object, two
// requests sent together decide: the object's HEAD, whose ETag and size
// must be the entry's, and the GET of the index, whose fingerprint must be
// the entry's; anything else (stale is then true) falls back to reading
// the memory itself, as without an entry: its open, its index object, and
// the fingerprint read from the memory (search.Index.Check).
func Index(ctx context.Context, name string, e *Entry, c *wmzip.Codec, opt search.BuildOptions) (ix *search.Index, why error, stale bool, err error) {
	if !objstore.IsURL(name) {
		ix, why, err = search.Open(ctx, name, c, opt)
		if err == nil && e != nil {
			if size, print, _ := ix.File(); size != e.Size || fmt.Sprintf("%x", print) != e.Fingerprint {
				stale = true
			}
		}
		return ix, why, stale, err
	}
	s, err := Store()
	if err != nil {
		return nil, nil, false, err
	}
	bucket, key, _ := objstore.ParseURL(name)
	_, ikey, _ := objstore.ParseURL(search.IndexPath(name))
	if e != nil && e.ETag != "" && e.Fingerprint != "" {
		var head objstore.Listed
		var herr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			head, herr = s.Stat(ctx, bucket, key)
		}()
		ix, ierr := readIndexObject(ctx, s, bucket, ikey, e.SearchIndex != nil)
		<-done
		if herr != nil {
			return nil, nil, false, herr
		}
		if head.ETag == e.ETag && head.Size == e.Size {
			if ierr == nil {
				size, print, model := ix.File()
				if size == e.Size && fmt.Sprintf("%x", print) == e.Fingerprint && model == member(c, model).Model().ID() {
					return ix, nil, false, nil
				}
				why = fmt.Errorf("%w: %s was not built from the memory the catalog names", search.ErrStale, search.IndexPath(name))
			}
		} else {
			stale = true
		}
	}
	o, err := s.Open(ctx, bucket, key, objstore.ReadOptions{})
	if err != nil {
		return nil, nil, stale, err
	}
	defer o.Close()
	if e != nil && (o.ETag() != e.ETag || o.Size() != e.Size) {
		stale = true
	}
	ix, ierr := readIndexObject(ctx, s, bucket, ikey, true)
	if ierr == nil {
		ierr = ix.Check(o, o.Size(), c)
	}
	if ierr == nil {
		return ix, nil, stale, nil
	}
	var pe *fs.PathError
	if !errors.Is(ierr, fs.ErrNotExist) && !errors.Is(ierr, search.ErrStale) && !errors.Is(ierr, search.ErrIndex) && !errors.As(ierr, &pe) {
		return nil, nil, stale, ierr // the memory or the codec is at fault
	}
	ix, err = search.BuildAt(ctx, o, o.Size(), c, opt)
	if err != nil {
		return nil, nil, stale, fmt.Errorf("%s: %w", name, err)
	}
	return ix, ierr, stale, nil
}

// maxIndexBytes bounds an index object read whole: 16 GiB.
const maxIndexBytes = 16 << 30

// readIndexObject reads and parses the index object bucket/key; with
// listed false it is known to be absent, and no request is sent.
func readIndexObject(ctx context.Context, s *objstore.Store, bucket, key string, listed bool) (*search.Index, error) {
	if !listed {
		return nil, fmt.Errorf("s3://%s/%s: %w", bucket, key, fs.ErrNotExist)
	}
	b, err := s.ReadAll(ctx, bucket, key, maxIndexBytes)
	if err != nil {
		return nil, err
	}
	ix, err := search.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("s3://%s/%s: %w", bucket, key, err)
	}
	return ix, nil
}

// member returns the member of c that wrote files of model id (c itself
// when none has that ID).
func member(c *wmzip.Codec, id interface{ String() string }) *wmzip.Codec {
	for _, m := range c.Members() {
		if m.Model().ID().String() == id.String() {
			return m
		}
	}
	return c
}
