// Package atomicfile writes files so that a reader never sees a partial
// one: the bytes go to a temporary file in the destination's folder, which
// is synced and renamed over the destination only when everything was
// written.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// File is an output file under construction.
type File struct {
	*os.File
	dst  string
	done bool
}

// Create starts writing path. The file is created with mode 0666 less the
// umask, as os.Create would, not the 0600 of os.CreateTemp; errors name
// path, not the temporary file.
func Create(path string) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	for range 1000 {
		name := filepath.Join(dir, "."+base+".tmp-"+strconv.FormatUint(rand.Uint64()%1e10, 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "create", Path: path, Err: unwrapPath(err)}
		}
		return &File{File: f, dst: path}, nil
	}
	return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("no unused temporary name")}
}

// unwrapPath returns the cause of a *fs.PathError, which names the
// temporary file.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Write writes to the temporary file; errors name the destination.
func (f *File) Write(b []byte) (int, error) {
	n, err := f.File.Write(b)
	if err != nil {
		err = &fs.PathError{Op: "write", Path: f.dst, Err: unwrapPath(err)}
	}
	return n, err
}

// Commit syncs the file and renames it to its destination.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("atomicfile: %s already closed", f.dst)
	}
	f.done = true
	fail := func(op string, err error) error {
		f.File.Close()
		os.Remove(f.File.Name())
		return &fs.PathError{Op: op, Path: f.dst, Err: unwrapPath(err)}
	}
	if err := f.File.Sync(); err != nil {
		return fail("sync", err)
	}
	if err := f.File.Close(); err != nil {
		return fail("close", err)
	}
	if err := os.Rename(f.File.Name(), f.dst); err != nil {
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return fail("rename", err)
	}
	// Make the rename durable; some systems cannot sync a folder.
	if d, err := os.Open(filepath.Dir(f.dst)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Abort removes the temporary file; it is a no-op after Commit.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.File.Name())
}

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
