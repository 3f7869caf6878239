package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wmzip/wmzip/objstore"
)

// source is where memories and their manifest are: a folder or a prefix
// of a bucket. Keys are relative to its root.
type source interface {
	root() string
	// read returns the bytes of the manifest (fs.ErrNotExist: none) and
	// its version tag, for write.
	read(ctx context.Context, manifest string) ([]byte, string, error)
	// write writes the manifest; in a store only if it still has the tag
	// read (or, with existed false, if there is none).
	write(ctx context.Context, manifest string, b []byte, tag string, existed bool) error
	list(ctx context.Context) ([]listedObject, error)
	// same reports whether memory e, as listed, is the one entry p
	// describes.
	same(ctx context.Context, p, e *Entry) (bool, error)
	// describe fills e from the memory e.Key.
	describe(ctx context.Context, e *Entry) error
	requests() int64
}

type listedObject struct {
	Key, ETag, Modified string
	Size                int64
}

// sourceOf returns the source of name (a root or a manifest in it) and
// the manifest's key or path.
func sourceOf(name string) (source, string, error) {
	if objstore.IsURL(name) {
		bucket, key, ok := objstore.ParseURL(name)
		if !ok {
			return nil, "", fmt.Errorf("%s: want s3://bucket/prefix", name)
		}
		s, err := Store()
		if err != nil {
			return nil, "", err
		}
		prefix, manifest := key, key
		if strings.HasSuffix(key, ".json") {
			prefix = key[:strings.LastIndex(key, "/")+1]
		} else {
			if prefix != "" && !strings.HasSuffix(prefix, "/") {
				prefix += "/"
			}
			manifest = prefix + Name
		}
		return &s3Source{s: s, bucket: bucket, prefix: prefix}, manifest, nil
	}
	dir, manifest := name, filepath.Join(name, Name)
	if strings.HasSuffix(name, ".json") {
		dir, manifest = filepath.Dir(name), name
	}
	return &dirSource{dir: dir}, manifest, nil
}

var store struct {
	once sync.Once
	s    *objstore.Store
	err  error
}

// Store returns the store s3:// names are read from: the one the
// standard AWS environment variables describe (objstore.New), made on
// first use and shared.
func Store() (*objstore.Store, error) {
	store.once.Do(func() { store.s, store.err = objstore.New(objstore.Options{}) })
	return store.s, store.err
}

// ---- a prefix of a bucket

type s3Source struct {
	s              *objstore.Store
	bucket, prefix string
}

func (s *s3Source) root() string { return "s3://" + s.bucket + "/" + s.prefix }

func (s *s3Source) requests() int64 { return s.s.Stats().Requests }

func (s *s3Source) read(ctx context.Context, manifest string) ([]byte, string, error) {
	st, err := s.s.OpenStream(ctx, s.bucket, manifest)
	if err != nil {
		return nil, "", err
	}
	defer st.Close()
	if st.Size() > maxManifest {
		return nil, "", fmt.Errorf("s3://%s/%s: a manifest of %d bytes, more than %d", s.bucket, manifest, st.Size(), maxManifest)
	}
	b, err := io.ReadAll(io.LimitReader(st, maxManifest))
	return b, st.ETag(), err
}

// maxManifest bounds a manifest read: 1 GiB, about a million memories.
const maxManifest = 1 << 30

func (s *s3Source) write(ctx context.Context, manifest string, b []byte, tag string, existed bool) error {
	u, err := s.s.Create(ctx, s.bucket, manifest)
	if err != nil {
		return err
	}
	if !existed {
		tag = ""
	}
	u.IfMatch(tag)
	if _, err := u.Write(b); err != nil {
		return err
	}
	if err := u.Close(); err != nil {
		if errors.Is(err, objstore.ErrChanged) {
			return fmt.Errorf("%w (another writer updated the catalog meanwhile: run again)", err)
		}
		return err
	}
	return nil
}

func (s *s3Source) list(ctx context.Context) ([]listedObject, error) {
	keys, err := s.s.Keys(ctx, s.bucket, s.prefix)
	if err != nil {
		return nil, err
	}
	out := make([]listedObject, 0, len(keys))
	for _, k := range keys {
		out = append(out, listedObject{Key: strings.TrimPrefix(k.Key, s.prefix), Size: k.Size, ETag: k.ETag,
			Modified: k.Modified.UTC().Format(time.RFC3339Nano)})
	}
	return out, nil
}

func (s *s3Source) same(_ context.Context, p, e *Entry) (bool, error) {
	return e.ETag != "" && p.ETag == e.ETag && p.Size == e.Size, nil
}

func (s *s3Source) describe(ctx context.Context, e *Entry) error {
	o, err := s.s.Open(ctx, s.bucket, s.prefix+e.Key, objstore.ReadOptions{})
	if err != nil {
		return err
	}
	defer o.Close()
	// What was read is what the entry describes, should the object have
	// changed since it was listed.
	e.Size, e.ETag = o.Size(), o.ETag()
	return describe(e, o, o.Size())
}

// ---- a local folder

type dirSource struct{ dir string }

func (d *dirSource) root() string {
	r := filepath.ToSlash(d.dir)
	if !strings.HasSuffix(r, "/") {
		r += "/"
	}
	return r
}

func (d *dirSource) requests() int64 { return 0 }

func (d *dirSource) read(_ context.Context, manifest string) ([]byte, string, error) {
	b, err := os.ReadFile(manifest)
	return b, "", err
}

func (d *dirSource) write(_ context.Context, manifest string, b []byte, _ string, _ bool) error {
	f, err := os.CreateTemp(filepath.Dir(manifest), ".wmzip-catalog-*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), manifest)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

func (d *dirSource) list(_ context.Context) ([]listedObject, error) {
	var out []listedObject
	err := filepath.WalkDir(d.dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() || !de.Type().IsRegular() {
			return nil
		}
		info, err := de.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(d.dir, p)
		if err != nil {
			return err
		}
		out = append(out, listedObject{Key: filepath.ToSlash(rel), Size: info.Size(),
			Modified: info.ModTime().UTC().Format(time.RFC3339Nano)})
		return nil
	})
	return out, err
}

func (d *dirSource) path(key string) string { return filepath.Join(d.dir, filepath.FromSlash(key)) }

// same compares sizes, modification times and the index's hash: a file
// has no ETag, and one rewritten within the clock's resolution keeps its
// time.
func (d *dirSource) same(_ context.Context, p, e *Entry) (bool, error) {
	if p.Size != e.Size || p.Modified != e.Modified {
		return false, nil
	}
	f, err := os.Open(d.path(e.Key))
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, sum, _, err := readIndex(f, e.Size)
	if err != nil {
		return false, nil // describe says what is wrong
	}
	return sum == p.IndexSHA256, nil
}

func (d *dirSource) describe(_ context.Context, e *Entry) error {
	f, err := os.Open(d.path(e.Key))
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	e.Size = st.Size()
	return describe(e, f, e.Size)
}

// readAll reads n bytes at off.
func readAt(r io.ReaderAt, off, n int64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := r.ReadAt(b, off); err != nil && !(err == io.EOF && int64(len(b)) == n) {
		return nil, err
	}
	return b, nil
}
