package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/objstore"
)

// Objects in an S3-compatible store are named s3://bucket/key wherever a
// verb takes a file (the store and credentials come from the AWS
// environment variables, see package objstore).
//
//   - A .wmz input is read in place by ranged GETs (objstore.Object), and
//     a model (.wmm) with one GET: their names stay URLs.
//   - Any other input (trajectories, traces, JSON) is copied to a
//     temporary file first, removed when the verb returns; errors name
//     the URL, not the copy.
//   - An output goes to a temporary file, and only once the verb has
//     written it whole is it uploaded (atomicfile.Remote): the object
//     appears complete or not at all, and never replaces one of the
//     verb's inputs (checkFiles compares the names).
//   - A file a verb changes in place (append's .wmz, decode's access log)
//     is copied down when it exists, changed there, and uploaded whole
//     once the verb succeeds (s3Commit), in place of the object only if
//     that is still the one copied down: the object goes from its old
//     bytes to its new ones in one step, never halfway, and a writer that
//     changed it meanwhile is not overwritten.

// s3Store is the store of the process, made on first use.
var s3Store = sync.OnceValues(func() (*objstore.Store, error) { return objstore.New(objstore.Options{}) })

// s3Objects are the .wmz objects checkFiles opened, by URL: their head
// and tail, read once, serve every later read.
var s3Objects = map[string]*objstore.Object{}

// s3Copies maps the temporary copies of inputs to their URLs, for errors.
var s3Copies = map[string]string{}

// s3InPlace are the objects the verb changes in place, copied down
// (s3Check), to upload when it succeeds (s3Commit).
var s3InPlace []inPlaceObject

type inPlaceObject struct {
	url, local string
	etag       string // of the object copied down; "" if there was none
}

func init() { atomicfile.Register("s3://", s3Output{}) }

// splitURL returns the bucket and key of an s3:// URL naming an object.
func splitURL(name string) (bucket, key string, err error) {
	bucket, key, ok := objstore.ParseURL(name)
	if !ok || key == "" || strings.HasSuffix(key, "/") {
		return "", "", fmt.Errorf("%s: name an object, s3://bucket/key", name)
	}
	return bucket, key, nil
}

// openS3 opens the object at name for reading at random, once per run.
func openS3(name string) (*objstore.Object, error) {
	if o := s3Objects[name]; o != nil {
		return o, nil
	}
	bucket, key, err := splitURL(name)
	if err != nil {
		return nil, err
	}
	s, err := s3Store()
	if err != nil {
		return nil, err
	}
	o, err := s.Open(context.Background(), bucket, key, objstore.ReadOptions{})
	if err != nil {
		return nil, err
	}
	s3Objects[name] = o
	return o, nil
}

// s3Inputs readies a verb's s3:// inputs: .wmz files and models stay
// where they are, anything else is copied to a temporary file whose name
// replaces the URL.
func s3Inputs(ins []*string) error {
	for _, in := range ins {
		if !objstore.IsURL(*in) {
			continue
		}
		o, err := openS3(*in)
		if err != nil {
			return err
		}
		head := make([]byte, 8)
		n, _ := o.ReadAt(head, 0)
		switch {
		case n >= 8 && string(head[:8]) == wmzMagic, n >= 4 && string(head[:4]) == "WMZM":
			continue
		}
		p, _, err := copyDown(*in)
		if err != nil {
			return err
		}
		*in = p
	}
	return nil
}

// copyDown copies the object at name to a temporary file, removed when
// the verb returns, and returns the file's name (the key's last element,
// so that its extension stays) and the ETag of the object copied; with
// no object it returns the name a copy would have, and etag "".
func copyDown(name string) (p, etag string, err error) {
	s, err := s3Store()
	if err != nil {
		return "", "", err
	}
	bucket, key, _ := objstore.ParseURL(name)
	dir, err := os.MkdirTemp("", "wmzip-s3-")
	if err != nil {
		return "", "", err
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	p = filepath.Join(dir, path.Base(key))
	s3Copies[p] = name
	st, err := s.OpenStream(context.Background(), bucket, key)
	if errors.Is(err, fs.ErrNotExist) {
		return p, "", nil
	}
	if err != nil {
		return "", "", err
	}
	defer st.Close()
	f, err := os.Create(p)
	if err != nil {
		return "", "", err
	}
	_, err = io.Copy(f, st)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return p, st.ETag(), err
}

// s3Names puts back the URLs of the inputs copied down in a message.
func s3Names(msg string) string {
	for p, name := range s3Copies {
		msg = strings.ReplaceAll(msg, p, name)
	}
	return msg
}

// s3Output writes outputs named s3://bucket/key (atomicfile.Remote).
type s3Output struct{}

// Check checks that the name is an object's and that its bucket exists.
func (s3Output) Check(name string) error {
	bucket, _, err := splitURL(name)
	if err != nil {
		return err
	}
	s, err := s3Store()
	if err != nil {
		return err
	}
	ok, err := s.BucketExists(context.Background(), bucket)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: no bucket %q at %s", name, bucket, s.Endpoint())
	}
	return nil
}

// Put uploads the file as the object, which appears only when complete.
func (s3Output) Put(name string, f *os.File, size int64) error {
	return putFile(name, io.NewSectionReader(f, 0, size), "", false)
}

// putFile uploads r as the object name; with cond, only if the object
// still has the ETag etag, or with etag "" if there is none.
func putFile(name string, r io.Reader, etag string, cond bool) error {
	bucket, key, err := splitURL(name)
	if err != nil {
		return err
	}
	s, err := s3Store()
	if err != nil {
		return err
	}
	u, err := s.Create(context.Background(), bucket, key)
	if err != nil {
		return err
	}
	if cond {
		u.IfMatch(etag)
	}
	if _, err := io.Copy(u, r); err != nil {
		u.Abort()
		return err
	}
	return u.Close()
}

// s3Check readies a verb's s3:// inputs and outputs: inputs other than
// .wmz files and models are copied down (s3Inputs), and so are the files
// it changes in place, whose names become those of the copies.
func s3Check(ins []*string, outs []output) error {
	if err := s3Inputs(ins); err != nil {
		return err
	}
	for _, o := range outs {
		if !o.inPlace || !objstore.IsURL(*o.path) {
			continue
		}
		if err := (s3Output{}).Check(*o.path); err != nil {
			return err
		}
		p, etag, err := copyDown(*o.path)
		if err != nil {
			return err
		}
		s3InPlace = append(s3InPlace, inPlaceObject{url: *o.path, local: p, etag: etag})
		*o.path = p
	}
	return nil
}

// s3Commit uploads the objects the verb changed in place, once it has
// succeeded: each replaces the object it was copied from only if that is
// unchanged (If-Match its ETag; If-None-Match when there was none).
func s3Commit() error {
	for _, ip := range s3InPlace {
		f, err := os.Open(ip.local)
		if errors.Is(err, fs.ErrNotExist) {
			continue // the verb made no file
		}
		if err != nil {
			return err
		}
		err = putFile(ip.url, f, ip.etag, true)
		f.Close()
		if errors.Is(err, objstore.ErrChanged) {
			return fmt.Errorf("%s was changed by another writer while this one worked on a copy; it was left as that writer made it: run again", ip.url)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// loadCodecS3 reads the codec of the model object at name.
func loadCodecS3(name string) (*wmzlib.Codec, error) {
	o, err := openS3(name)
	if err != nil {
		return nil, err
	}
	if o.Size() > 1<<30 { // SPEC.md 6.2 bounds a model to 2^30 bytes
		return nil, fmt.Errorf("%s: %d bytes is no model file", name, o.Size())
	}
	b := make([]byte, o.Size())
	if _, err := o.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, err
	}
	c, err := wmzlib.UnmarshalCodec(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}
