// Package atomicfile writes files so that a reader never sees a partial
// one: the bytes go to a temporary file in the destination's folder, which
// is synced and renamed over the destination only when everything was
// written.
//
// A destination that is a symbolic link is written through: the file it
// leads to is replaced, and the link stays. A destination that exists and
// is not a regular file (a device such as /dev/null, a named pipe) is
// written, not replaced: the bytes wait in a temporary file and are copied
// into it on Commit. The names /dev/stdout, /dev/fd/1 and /proc/self/fd/1
// mean the process's standard output, and those of 2 its standard error:
// the streams os.Stdout and os.Stderr were when the program started.
//
// A destination named by a URL whose scheme has a Remote (Register) is
// written as a device is: the bytes wait in a temporary file, and Commit
// hands that file to the Remote, which makes the destination whole or
// not at all.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// File is an output file under construction.
type File struct {
	*os.File
	name string // as given: errors name it
	dst  string // the file renamed over, or the device or stream written
	std  int    // 1 or 2: written to that standard stream; 0 otherwise
	dev  bool   // dst is written, not replaced
	rem  Remote // dst is a URL this Remote writes
	done bool
}

// A Remote writes destinations named by URLs of one scheme.
type Remote interface {
	// Check reports whether name can be written, leaving nothing behind.
	Check(name string) error
	// Put makes name hold the size bytes of f (at offset 0), whole or not
	// at all.
	Put(name string, f *os.File, size int64) error
}

var remotes = map[string]Remote{}

// Register makes URLs that begin with prefix (such as "s3://") be
// written by r. It is meant for a program's init.
func Register(prefix string, r Remote) { remotes[prefix] = r }

// remoteOf returns the Remote of a URL, or nil.
func remoteOf(path string) Remote {
	for p, r := range remotes {
		if strings.HasPrefix(path, p) {
			return r
		}
	}
	return nil
}

// stdStreams are the standard output and error as the program started
// with them: a command may point os.Stdout elsewhere (at its messages)
// once its data goes to the standard output.
var stdStreams = [3]*os.File{1: os.Stdout, 2: os.Stderr}

// maxLinks bounds the symbolic links followed to a destination, as the
// kernel's own limit does.
const maxLinks = 40

// Std returns 1 or 2 if path names the standard output or standard error
// (/dev/stdout, /dev/fd/1, /proc/self/fd/1, or the same with 2 and
// stderr), else 0.
func Std(path string) int {
	switch filepath.Clean(path) {
	case "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return 1
	case "/dev/stderr", "/dev/fd/2", "/proc/self/fd/2":
		return 2
	}
	return 0
}

// Target returns the file that writing path replaces: path itself, or,
// when path is a symbolic link, the file the chain of links leads to
// (which need not exist yet).
func Target(path string) (string, error) {
	for range maxLinks {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		to, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			dir := filepath.Dir(path)
			if d, err := filepath.EvalSymlinks(dir); err == nil {
				dir = d
			}
			to = filepath.Join(dir, to)
		}
		path = to
	}
	return "", &fs.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
}

// Check reports, without leaving anything behind, whether Create(path)
// can succeed: the destination is not a folder, and its folder exists and
// takes a new file (a temporary one is made and removed). A device or a
// standard stream passes.
func Check(path string) error {
	if r := remoteOf(path); r != nil {
		if err := r.Check(path); err != nil {
			return err
		}
	}
	f, err := Create(path)
	if err != nil {
		return err
	}
	f.Abort()
	return nil
}

// Create starts writing path. The file is created with mode 0666 less the
// umask, as os.Create would, not the 0600 of os.CreateTemp; errors name
// path, not the temporary file.
func Create(path string) (*File, error) {
	out := &File{name: path, std: Std(path), rem: remoteOf(path)}
	dir := ""
	if out.std == 0 && out.rem == nil {
		dst, err := Target(path)
		if err != nil {
			return nil, &fs.PathError{Op: "create", Path: path, Err: unwrapPath(err)}
		}
		out.dst = dst
		switch fi, err := os.Stat(dst); {
		case err == nil && fi.IsDir():
			return nil, &fs.PathError{Op: "create", Path: path, Err: syscall.EISDIR}
		case err == nil && !fi.Mode().IsRegular():
			out.dev = true
		default:
			dir = filepath.Dir(dst)
		}
	}
	if dir == "" {
		dir = os.TempDir() // a device's folder need not take new files
	}
	base := filepath.Base(path)
	if out.rem != nil {
		dir, out.dst = os.TempDir(), path
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
		out.File = f
		return out, nil
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
		err = &fs.PathError{Op: "write", Path: f.name, Err: unwrapPath(err)}
	}
	return n, err
}

// Commit syncs the file and renames it to its destination; a device or a
// standard stream gets a copy of the bytes instead.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("atomicfile: %s already closed", f.name)
	}
	f.done = true
	fail := func(op string, err error) error {
		f.File.Close()
		os.Remove(f.File.Name())
		return &fs.PathError{Op: op, Path: f.name, Err: unwrapPath(err)}
	}
	if f.rem != nil {
		size, err := f.File.Seek(0, io.SeekEnd)
		if err == nil {
			err = f.rem.Put(f.dst, f.File, size)
		}
		f.File.Close()
		os.Remove(f.File.Name())
		return err
	}
	if f.std != 0 || f.dev {
		if err := f.copyOut(); err != nil {
			return fail("write", err)
		}
		f.File.Close()
		os.Remove(f.File.Name())
		return nil
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

// copyOut copies the temporary file into the device or standard stream.
func (f *File) copyOut() error {
	if _, err := f.File.Seek(0, io.SeekStart); err != nil {
		return err
	}
	w := stdStreams[f.std]
	if w == nil {
		d, err := os.OpenFile(f.dst, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer d.Close()
		w = d
	}
	_, err := io.Copy(struct{ io.Writer }{w}, f.File) // no sendfile tricks on a stream
	return err
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
