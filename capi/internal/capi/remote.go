package capi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/objstore"
	"github.com/wmzip/wmzip/objstore/catalog"
	"github.com/wmzip/wmzip/search"
)

// Names of the form s3://bucket/key are objects of the store the standard
// AWS environment variables describe (AWS_ENDPOINT_URL,
// AWS_ACCESS_KEY_ID, ...; catalog.Store); other names are local files.
// Options may carry a memory's catalog entry (catalog.Entry, as the
// manifest holds it), which then spares requests and is checked against
// the memory, never trusted.

// createOut creates the file or starts the upload of the object at path.
func createOut(path string) (io.WriteCloser, error) {
	if !objstore.IsURL(path) {
		return os.Create(path)
	}
	s, err := catalog.Store()
	if err != nil {
		return nil, err
	}
	bucket, key, ok := objstore.ParseURL(path)
	if !ok {
		return nil, Inputf("%s: want s3://bucket/key", path)
	}
	return s.Create(context.Background(), bucket, key)
}

// remove closes and removes what open made: a file is deleted, an upload
// given up (no object is made).
func (o *outFile) remove() error {
	if !o.created {
		return nil
	}
	if up, ok := o.f.(*objstore.Upload); ok {
		up.Abort()
		o.f = nil
		return nil
	}
	err := o.close()
	if rerr := os.Remove(o.path); err == nil && !errors.Is(rerr, os.ErrNotExist) {
		err = rerr
	}
	return err
}

// leave closes what open made as it stands: a file stays incomplete
// (recoverable), an upload is given up, since an object is whole or
// absent.
func (o *outFile) leave() error {
	if up, ok := o.f.(*objstore.Upload); ok {
		up.Abort()
		o.f = nil
		return nil
	}
	return o.close()
}

// openFile opens path, an object or a local file, with entry e (nil:
// none).
func openFile(path string, e *catalog.Entry, c *wmzip.Codec, opts []wmzip.ReaderOption) (*wmzip.File, io.Closer, error) {
	if !objstore.IsURL(path) && e == nil {
		f, err := wmzip.Open(path, c, opts...)
		return f, f, err
	}
	f, err := catalog.OpenFile(context.Background(), path, e, c, opts...)
	if err != nil {
		return nil, nil, err
	}
	return f.File, f, nil
}

// openIndex returns the search index of path with entry e (nil: none):
// loaded when current, built otherwise (why says why).
func openIndex(path string, e *catalog.Entry, c *wmzip.Codec, opt search.BuildOptions) (*search.Index, error, error) {
	if !objstore.IsURL(path) && e == nil {
		return search.Open(context.Background(), path, c, opt)
	}
	ix, why, _, err := catalog.Index(context.Background(), path, e, c, opt)
	return ix, why, err
}

// saveIndex writes ix beside path: a file, or an object.
func saveIndex(ix *search.Index, path string) error {
	name := search.IndexPath(path)
	if !objstore.IsURL(name) {
		return ix.Save(name)
	}
	var b bytes.Buffer
	if _, err := ix.WriteTo(&b); err != nil {
		return err
	}
	out, err := createOut(name)
	if err != nil {
		return err
	}
	if _, err := out.Write(b.Bytes()); err != nil {
		out.(*objstore.Upload).Abort()
		return err
	}
	return out.Close()
}

// catalogOptions are the JSON options of UpdateCatalog.
type catalogOptions struct {
	Parallel int  `json:"parallel"`
	DryRun   bool `json:"dry_run"`
}

// UpdateCatalog brings the manifest of root (an s3:// prefix or a
// folder) up to date (catalog.Update) and returns what was done, as a
// JSON object (catalog.Stats); LoadCatalog then reads the manifest.
func UpdateCatalog(root string, options []byte) ([]byte, error) {
	var o catalogOptions
	if err := decodeOptions(options, &o); err != nil {
		return nil, err
	}
	_, st, err := catalog.Update(context.Background(), root, catalog.Options{Parallel: o.Parallel, DryRun: o.DryRun})
	if err != nil {
		return nil, err
	}
	return json.Marshal(st)
}

// LoadCatalog reads the manifest of name (a root or a manifest) with
// one request and returns it as JSON (docs/catalog.md), its root where
// it was found.
func LoadCatalog(name string) ([]byte, error) {
	cat, err := catalog.Load(context.Background(), name)
	if err != nil {
		return nil, err
	}
	return json.Marshal(cat)
}
