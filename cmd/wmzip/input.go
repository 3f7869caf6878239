package main

import (
	"io"
	"os"

	"github.com/wmzip/wmzip/objstore"
)

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
