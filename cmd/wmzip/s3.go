package main

import (
	"context"
	"fmt"
	"io"
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

// s3Store is the store of the process, made on first use.
var s3Store = sync.OnceValues(func() (*objstore.Store, error) { return objstore.New(objstore.Options{}) })

// s3Objects are the .wmz objects checkFiles opened, by URL: their head
// and tail, read once, serve every later read.
var s3Objects = map[string]*objstore.Object{}

// s3Copies maps the temporary copies of inputs to their URLs, for errors.
var s3Copies = map[string]string{}

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
		case n >= 8 && string(head[:8]) == "\x89WMZ\r\n\x1a\n", n >= 4 && string(head[:4]) == "WMZM":
			continue
		}
		p, err := copyDown(*in, o.Size())
		if err != nil {
			return err
		}
		*in = p
	}
	return nil
}

// copyDown copies the object at name to a temporary file, removed when
// the verb returns, and returns the file's name (the key's last element,
// so that its extension stays).
func copyDown(name string, size int64) (string, error) {
	s, err := s3Store()
	if err != nil {
		return "", err
	}
	bucket, key, _ := objstore.ParseURL(name)
	dir, err := os.MkdirTemp("", "wmzip-s3-")
	if err != nil {
		return "", err
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	p := filepath.Join(dir, path.Base(key))
	f, err := os.Create(p)
	if err != nil {
		return "", err
	}
	st, err := s.OpenStream(context.Background(), bucket, key)
	if err == nil {
		_, err = io.Copy(f, st)
		st.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	s3Copies[p] = name
	return p, nil
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
	bucket, key, err := splitURL(name)
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
	_ = key
	return nil
}

// Put uploads the file as the object, which appears only when complete.
func (s3Output) Put(name string, f *os.File, size int64) error {
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
	if _, err := io.Copy(u, io.NewSectionReader(f, 0, size)); err != nil {
		u.Abort()
		return err
	}
	return u.Close()
}

// inputFile is a file read at random: a local file or an object.
type inputFile interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

type localFile struct {
	*os.File
	size int64
}

func (f localFile) Size() int64 { return f.size }

// s3Object is an Object a verb may close: the Object stays open for the
// verb's other reads.
type s3Object struct{ *objstore.Object }

func (s3Object) Close() error { return nil }

// openInput opens a .wmz or model input, local or s3://.
func openInput(name string) (inputFile, error) {
	if objstore.IsURL(name) {
		o, err := openS3(name)
		if err != nil {
			return nil, err
		}
		return s3Object{o}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return localFile{f, st.Size()}, nil
}

// inputSize returns the size of a file or object, or an error.
func inputSize(name string) (int64, error) {
	f, err := openInput(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.Size(), nil
}

// errInPlaceS3 is the error of an output a verb would change in place.
func errInPlaceS3(flag, name string) error {
	return fmt.Errorf("%s %s: an object cannot be changed in place; name a local file", flag, name)
}

// notS3 returns errInPlaceS3 for an s3:// name.
func notS3(flag, name string) error {
	if objstore.IsURL(name) {
		return errInPlaceS3(flag, name)
	}
	return nil
}

// s3Check checks a verb's s3:// inputs and outputs: an output changed in
// place cannot be an object; inputs other than .wmz files and models are
// copied down (s3Inputs).
func s3Check(ins []*string, outs []output) error {
	for _, o := range outs {
		if o.inPlace {
			if err := notS3(o.flag, *o.path); err != nil {
				return err
			}
		}
	}
	return s3Inputs(ins)
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
