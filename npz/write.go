package npz

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"github.com/klauspost/compress/zip"

	"github.com/wmzip/wmzip/internal/atomicfile"
)

// zipTime is the modification time of every member written, the earliest
// a zip file can record (numpy writes the same), so that equal arrays give
// equal bytes.
var zipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// EncodeNPY writes a as a .npy stream (format version 1.0, C order, laid
// out as numpy writes it). a.Name is not used.
func EncodeNPY(w io.Writer, a Array) error {
	dt, err := a.check(loc{})
	if err != nil {
		return err
	}
	if _, err := w.Write(appendHeader(nil, dt, a.Shape)); err != nil {
		return err
	}
	return writeData(w, dt, a.Data)
}

// EncodeNPZ writes arrays as a .npz archive, each as member Name+".npy",
// deflated unless WithDeflate(false) is given. Names must be unique,
// non-empty, relative slash-separated paths. The bytes depend only on the
// arrays and options.
func EncodeNPZ(w io.Writer, arrays []Array, opts ...Option) error {
	c, err := newConfig(opts)
	if err != nil {
		return err
	}
	return encodeNPZ(w, arrays, c, loc{})
}

func encodeNPZ(w io.Writer, arrays []Array, c config, l loc) (err error) {
	dts := make([]dtype, len(arrays))
	seen := make(map[string]bool, len(arrays))
	for i := range arrays {
		a := &arrays[i]
		la := l
		la.array = a.Name
		if !validName(a.Name) {
			return la.errf(ErrFormat, nil, "has an invalid name for a .npz member")
		}
		if seen[a.Name] {
			return la.errf(ErrFormat, nil, "appears twice")
		}
		seen[a.Name] = true
		if dts[i], err = a.check(l); err != nil {
			return err
		}
	}
	method := zip.Store
	if c.deflate {
		method = zip.Deflate
	}
	zw := zip.NewWriter(w)
	for i := range arrays {
		a := &arrays[i]
		mw, err := zw.CreateHeader(&zip.FileHeader{Name: a.Name + ".npy", Method: method, Modified: zipTime})
		if err != nil {
			return err
		}
		if _, err := mw.Write(appendHeader(nil, dts[i], a.Shape)); err != nil {
			return err
		}
		if err := writeData(mw, dts[i], a.Data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// WriteNPY writes a to path as a .npy file, atomically: the file appears
// complete or not at all.
func WriteNPY(path string, a Array) error {
	if _, err := a.check(loc{path: path}); err != nil {
		return err
	}
	return writeAtomic(path, func(w io.Writer) error { return EncodeNPY(w, a) })
}

// WriteNPZ writes arrays to path as a .npz archive (see EncodeNPZ),
// atomically: the data goes to a temporary file in the same directory,
// which is synced and then renamed over path. On error nothing is left at
// path that was not there before.
func WriteNPZ(path string, arrays []Array, opts ...Option) error {
	c, err := newConfig(opts)
	if err != nil {
		return err
	}
	return writeNPZ(path, arrays, c)
}

func writeNPZ(path string, arrays []Array, c config) error {
	return writeAtomic(path, func(w io.Writer) error { return encodeNPZ(w, arrays, c, loc{path: path}) })
}

func writeAtomic(path string, write func(io.Writer) error) (err error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	if err = f.Commit(); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	return nil
}
