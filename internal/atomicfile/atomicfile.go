// Package atomicfile writes files so that a reader never sees a partial
// one: the bytes go to a temporary file in the destination's folder, which
// is synced and renamed over the destination only when everything was
// written.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// File is an output file under construction.
type File struct {
	*os.File
	dst  string
	done bool
}

// Create starts writing path.
func Create(path string) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &File{File: f, dst: path}, nil
}

// Commit syncs the file and renames it to its destination.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("atomicfile: %s already closed", f.dst)
	}
	f.done = true
	if err := f.File.Sync(); err != nil {
		f.File.Close()
		os.Remove(f.File.Name())
		return err
	}
	if err := f.File.Close(); err != nil {
		os.Remove(f.File.Name())
		return err
	}
	if err := os.Rename(f.File.Name(), f.dst); err != nil {
		os.Remove(f.File.Name())
		return err
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
