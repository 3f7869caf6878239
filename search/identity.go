package search

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/wmzip/wmzip"
)

// Trailer and index geometry of a .wmz file (SPEC.md 6.7).
const (
	headerLen   = 64
	trailerLen  = 28
	indexFixed  = 48
	episodeLen  = 24
	chunkLen    = 16
	maxIdentity = 1 << 30 // largest index read to fingerprint a file
)

// fileIdentity fingerprints the .wmz file r of the given size (already
// opened and checked by the container reader) for codec c: SHA-256 of its
// header, index and trailer and of the CRC that closes each episode and
// chunk record. Any change to a record changes its CRC, and appending or
// re-encoding changes the index, so a stale index is found without reading
// the whole file.
func fileIdentity(r io.ReaderAt, size int64, c *wmzip.Codec) (identity, error) {
	id := identity{size: size, model: c.Model().ID()}
	if size < headerLen+trailerLen {
		return id, fmt.Errorf("%w: file of %d bytes", ErrInput, size)
	}
	h := sha256.New()
	read := func(off, n int64) ([]byte, error) {
		b := make([]byte, n)
		if _, err := r.ReadAt(b, off); err != nil {
			return nil, fmt.Errorf("reading %d bytes at %d: %w", n, off, err)
		}
		return b, nil
	}
	hb, err := read(0, headerLen)
	if err != nil {
		return id, err
	}
	tr, err := read(size-trailerLen, trailerLen)
	if err != nil {
		return id, err
	}
	off, n := binary.LittleEndian.Uint64(tr), binary.LittleEndian.Uint64(tr[8:])
	if n < indexFixed || n > maxIdentity || off > uint64(size) || n > uint64(size)-off {
		return id, fmt.Errorf("%w: index of %d bytes at %d", ErrInput, n, off)
	}
	idx, err := read(int64(off), int64(n))
	if err != nil {
		return id, err
	}
	h.Write(hb)
	h.Write(idx)
	h.Write(tr)
	eps := binary.LittleEndian.Uint32(idx[4:])
	p := uint64(indexFixed)
	crc := make([]byte, 4)
	tail := func(end uint64) error {
		if end < 4 || end > uint64(size) {
			return fmt.Errorf("%w: record ends at %d", ErrInput, end)
		}
		if _, err := r.ReadAt(crc, int64(end-4)); err != nil {
			return err
		}
		h.Write(crc)
		return nil
	}
	for range eps {
		if p+episodeLen > n {
			return id, fmt.Errorf("%w: index ends inside an episode entry", ErrInput)
		}
		e := idx[p:]
		chunks, meta := binary.LittleEndian.Uint32(e[16:]), binary.LittleEndian.Uint32(e[20:])
		if err := tail(binary.LittleEndian.Uint64(e) + 12 + uint64(meta)); err != nil {
			return id, err
		}
		p += episodeLen
		if uint64(chunks) > (n-p)/chunkLen {
			return id, fmt.Errorf("%w: index ends inside a chunk entry", ErrInput)
		}
		for range chunks {
			c := idx[p:]
			if err := tail(binary.LittleEndian.Uint64(c) + uint64(binary.LittleEndian.Uint32(c[8:]))); err != nil {
				return id, err
			}
			p += chunkLen
		}
	}
	h.Sum(id.print[:0])
	return id, nil
}
