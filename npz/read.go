package npz

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zip"
)

// ReadNPZ reads every array of the .npz file at path, in archive order.
// All headers and sizes are checked, and the memory limit applied, before
// any array data is decompressed.
func ReadNPZ(path string, opts ...Option) ([]Array, error) {
	return readNPZFile(path, false, opts)
}

// ReadNPZHeaders returns the name, dtype and shape of every array of the
// .npz file at path, with nil Data, after the same checks as ReadNPZ but
// without reading array data (each member's header is decompressed).
func ReadNPZHeaders(path string, opts ...Option) ([]Array, error) {
	return readNPZFile(path, true, opts)
}

// DecodeNPZ reads every array of the .npz archive held in the size bytes of
// r. Errors name no file. It is safe to call concurrently on one r if r's
// ReadAt is.
func DecodeNPZ(r io.ReaderAt, size int64, opts ...Option) ([]Array, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return decodeNPZ(r, size, "", c, false)
}

func readNPZFile(path string, headersOnly bool, opts []Option) ([]Array, error) {
	c, f, size, err := openWith(path, opts)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeNPZ(f, size, path, c, headersOnly)
}

// openWith reads the options and opens the file at path.
func openWith(path string, opts []Option) (c config, f *os.File, size int64, err error) {
	if c, err = newConfig(opts); err != nil {
		return c, nil, 0, err
	}
	f, size, err = openSized(path)
	return c, f, size, err
}

func openSized(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("npz: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("npz: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, &Error{Path: path, Kind: ErrFormat, Msg: "is not a regular file"}
	}
	return f, fi.Size(), nil
}

// member is a validated .npz member.
type member struct {
	f *zip.File
	h npyHeader
	l loc
}

func decodeNPZ(r io.ReaderAt, size int64, path string, c config, headersOnly bool) ([]Array, error) {
	l := loc{path: path}
	members, err := checkMembers(r, size, l)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, m := range members {
		need, ok := memSize(m.h)
		if !ok || need > c.maxBytes {
			return nil, m.l.errf(ErrTooLarge, nil, "needs %s of memory, over the %d-byte limit", memString(m.h), c.maxBytes)
		}
		if total > c.maxBytes-need {
			return nil, l.errf(ErrTooLarge, nil, "arrays need over %d bytes of memory in total (limit %d)", total+need, c.maxBytes)
		}
		total += need
	}
	arrays := make([]Array, len(members))
	for i, m := range members {
		arrays[i] = Array{Name: m.l.array, Dtype: m.h.dt.name, Shape: m.h.shape}
		if headersOnly {
			continue
		}
		if arrays[i].Data, err = readMember(m); err != nil {
			return nil, err
		}
	}
	return arrays, nil
}

// checkMembers reads the directory of the .npz archive held in the size
// bytes of r and validates every member, in archive order, and that no
// array appears twice.
func checkMembers(r io.ReaderAt, size int64, l loc) ([]member, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, l.errf(ErrFormat, err, "is not a valid .npz (zip) archive")
	}
	members := make([]member, 0, len(zr.File))
	seen := make(map[string]bool, len(zr.File))
	for _, f := range zr.File {
		m, err := checkMember(f, size, l)
		if err != nil {
			return nil, err
		}
		if seen[m.l.array] {
			return nil, m.l.errf(ErrFormat, nil, "appears twice")
		}
		seen[m.l.array] = true
		members = append(members, m)
	}
	return members, nil
}

// checkMember validates a member's directory entry against the archive size
// and reads its .npy header.
func checkMember(f *zip.File, size int64, l loc) (member, error) {
	name, ok := strings.CutSuffix(f.Name, ".npy")
	if !ok || !validName(name) {
		return member{}, l.errf(ErrUnsupported, nil, "has member %q, which is not a .npy array", f.Name)
	}
	l.array = name
	m := member{f: f, l: l}
	switch {
	case f.Flags&0x1 != 0:
		return m, l.errf(ErrUnsupported, nil, "is encrypted")
	case f.Method != zip.Store && f.Method != zip.Deflate:
		return m, l.errf(ErrUnsupported, nil, "uses zip compression method %d (want 0, stored, or 8, deflated)", f.Method)
	case f.Method == zip.Store && f.CompressedSize64 != f.UncompressedSize64:
		return m, l.errf(ErrFormat, nil, "is stored with compressed size %d but uncompressed size %d", f.CompressedSize64, f.UncompressedSize64)
	case f.CompressedSize64 > uint64(size) || f.UncompressedSize64 > math.MaxInt64:
		return m, l.errf(ErrFormat, io.ErrUnexpectedEOF, "declares %d compressed bytes in a %d-byte archive", f.CompressedSize64, size)
	}
	off, err := f.DataOffset()
	if err != nil {
		return m, l.errf(ErrFormat, err, "has a bad local header")
	}
	if off < 0 || off > size-int64(f.CompressedSize64) {
		return m, l.errf(ErrFormat, io.ErrUnexpectedEOF, "has %d compressed bytes at offset %d, past the end of the %d-byte archive", f.CompressedSize64, off, size)
	}
	rc, err := f.Open()
	if err != nil {
		return m, l.errf(ErrFormat, err, "cannot be opened")
	}
	defer rc.Close()
	m.h, err = readHeader(rc, int64(f.UncompressedSize64), l)
	return m, memberErr(err, l)
}

// memberErr turns a decompression failure that surfaced while reading into
// a corrupt-data error; errors already described pass through.
func memberErr(err error, l loc) error {
	var e *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e) && e.Err == nil || errors.Is(err, io.ErrUnexpectedEOF):
		return err
	case errors.As(err, &e):
		return l.errf(ErrFormat, e.Err, "has corrupt compressed data")
	}
	return l.errf(ErrFormat, err, "has corrupt compressed data")
}

// readMember decompresses a member's data and checks its checksum.
func readMember(m member) (any, error) {
	rc, err := m.f.Open()
	if err != nil {
		return nil, m.l.errf(ErrFormat, err, "cannot be opened")
	}
	defer rc.Close()
	if _, err := io.CopyN(io.Discard, rc, m.h.dataOff); err != nil {
		return nil, m.l.errf(ErrFormat, err, "cannot be reread")
	}
	trusted := m.h.count // stored: the directory check proved every byte present
	if m.f.Method == zip.Deflate {
		trusted = int64(m.f.CompressedSize64) / int64(m.h.dt.size)
	}
	data, err := readOrdered(rc, m.h, trusted)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, m.l.truncated("data")
		}
		return nil, m.l.errf(ErrFormat, err, "has corrupt compressed data")
	}
	var one [1]byte
	if n, err := io.ReadFull(rc, one[:]); n != 0 || err != io.EOF {
		if err == nil {
			err = zip.ErrFormat
		}
		return nil, m.l.errf(ErrFormat, err, "fails its size or checksum check")
	}
	return data, nil
}

// readOrdered is readData for an array in either order: its elements are
// returned in C order.
func readOrdered(r io.Reader, h npyHeader, trusted int64) (any, error) {
	if !h.fortran {
		return readData(r, h, trusted)
	}
	b, err := readFortran(r, h)
	if err != nil {
		return nil, err
	}
	return readData(bytes.NewReader(b), h, h.count)
}

// memSize returns the bytes the decoded array takes in memory.
func memSize(h npyHeader) (int64, bool) {
	g := int64(h.dt.goSize)
	if h.fortran {
		g += 2 * int64(h.dt.size) // the bytes read and their C-order copy
	}
	if h.count > math.MaxInt/g {
		return 0, false
	}
	return h.count * g, true
}

func memString(h npyHeader) string {
	return fmt.Sprintf("%d × %d bytes", h.count, h.dt.goSize)
}

// ReadNPY reads the .npy file at path. The array's Name is the file's base
// name without ".npy".
func ReadNPY(path string, opts ...Option) (Array, error) {
	c, f, size, err := openWith(path, opts)
	if err != nil {
		return Array{}, err
	}
	defer f.Close()
	a, err := decodeNPY(f, size, loc{path: path}, c)
	a.Name = strings.TrimSuffix(filepath.Base(path), ".npy")
	return a, err
}

// DecodeNPY reads a .npy array from r, which must hold exactly size bytes.
// The header is checked against size before the data is allocated, so size
// must come from a trusted source such as the length of a file.
func DecodeNPY(r io.Reader, size int64, opts ...Option) (Array, error) {
	c, err := newConfig(opts)
	if err != nil {
		return Array{}, err
	}
	return decodeNPY(r, size, loc{}, c)
}

func decodeNPY(r io.Reader, size int64, l loc, c config) (Array, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	h, err := readHeader(br, size, l)
	if err != nil {
		return Array{}, err
	}
	if need, ok := memSize(h); !ok || need > c.maxBytes {
		return Array{}, l.errf(ErrTooLarge, nil, "needs %s of memory, over the %d-byte limit", memString(h), c.maxBytes)
	}
	data, err := readOrdered(br, h, h.count)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return Array{}, l.truncated("data")
		}
		return Array{}, l.errf(ErrFormat, err, "cannot read data")
	}
	return Array{Dtype: h.dt.name, Shape: h.shape, Data: data}, nil
}
