package testkit

import (
	"errors"
	"io"
)

// MemFile is an in-memory file that format.Append can continue: it
// remembers what was synced. With AppendOnly, a write anywhere but at the
// end fails, which checks that a writer seeks to the end first.
type MemFile struct {
	B          []byte
	Pos        int64
	Synced     int64 // length at the last Sync
	Syncs      int
	AppendOnly bool
}

func (f *MemFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(f.B)) {
		return 0, io.EOF
	}
	n := copy(p, f.B[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *MemFile) Write(p []byte) (int, error) {
	if f.AppendOnly && f.Pos != int64(len(f.B)) {
		return 0, errors.New("MemFile: write not at the end")
	}
	if gap := f.Pos - int64(len(f.B)); gap > 0 {
		f.B = append(f.B, make([]byte, gap)...)
	}
	n := copy(f.B[f.Pos:], p)
	f.B = append(f.B, p[n:]...)
	f.Pos += int64(len(p))
	return len(p), nil
}

func (f *MemFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += f.Pos
	case io.SeekEnd:
		off += int64(len(f.B))
	}
	if off < 0 {
		return 0, errors.New("negative seek")
	}
	f.Pos = off
	return off, nil
}

func (f *MemFile) Truncate(n int64) error {
	if n < int64(len(f.B)) {
		f.B = f.B[:n]
	}
	return nil
}

func (f *MemFile) Sync() error { f.Synced, f.Syncs = int64(len(f.B)), f.Syncs+1; return nil }
