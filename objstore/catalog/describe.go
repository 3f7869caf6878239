package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/search"
)

// Index and trailer layout (SPEC.md 6.7).
const (
	indexFixed = 48
	episodeLen = 24
	chunkLen   = 16
)

// readIndex returns the offset of the .wmz file's index, the SHA-256 of
// the index in hex, and the index, bounded by the file's size (the
// trailer is checked by format.ReadInfo, which describe calls first).
func readIndex(r io.ReaderAt, size int64) (int64, string, []byte, error) {
	if size < format.HeaderSize+indexFixed+format.TrailerSize {
		return 0, "", nil, fmt.Errorf("a file of %d bytes is no .wmz file", size)
	}
	tr, err := readAt(r, size-format.TrailerSize, format.TrailerSize)
	if err != nil {
		return 0, "", nil, err
	}
	off, n := binary.LittleEndian.Uint64(tr), binary.LittleEndian.Uint64(tr[8:])
	if n < indexFixed || off > uint64(size) || n != uint64(size)-format.TrailerSize-off {
		return 0, "", nil, fmt.Errorf("the trailer names an index of %d bytes at %d in a file of %d", n, off, size)
	}
	idx, err := readAt(r, int64(off), int64(n))
	if err != nil {
		return 0, "", nil, err
	}
	sum := sha256.Sum256(idx)
	return int64(off), hex.EncodeToString(sum[:]), idx, nil
}

// chunksOf returns the states of each chunk of each episode of an index
// that format.ReadInfo accepted.
func chunksOf(idx []byte) ([][]int, error) {
	eps := binary.LittleEndian.Uint32(idx[4:])
	var out [][]int
	p := uint64(indexFixed)
	n := uint64(len(idx))
	for range eps {
		if p+episodeLen > n {
			return nil, fmt.Errorf("the index ends inside an episode entry")
		}
		chunks := uint64(binary.LittleEndian.Uint32(idx[p+16:]))
		p += episodeLen
		if chunks > (n-p)/chunkLen {
			return nil, fmt.Errorf("the index ends inside a chunk entry")
		}
		cs := make([]int, chunks)
		for i := range cs {
			cs[i] = int(binary.LittleEndian.Uint32(idx[p+12:]))
			p += chunkLen
		}
		out = append(out, cs)
	}
	return out, nil
}

// describe fills e from the .wmz file r of size bytes: header and index
// (format.ReadInfo), the index's hash, chunks and fingerprint, and the
// bytes that open it when they are small.
func describe(e *Entry, r io.ReaderAt, size int64) error {
	h, info, err := format.ReadInfo(r, size)
	if err != nil {
		return err
	}
	_ = h
	off, sum, idx, err := readIndex(r, size)
	if err != nil {
		return err
	}
	chunks, err := chunksOf(idx)
	if err != nil {
		return err
	}
	print, err := search.Fingerprint(r, size)
	if err != nil {
		return err
	}
	e.IndexSHA256, e.Fingerprint = sum, hex.EncodeToString(print[:])
	e.ModelID, e.Embedded = info.ModelID.String(), info.Embedded
	e.States, e.Chunks = info.States, chunks
	e.Episodes = make([]int, len(chunks))
	for i, cs := range chunks {
		for _, n := range cs {
			e.Episodes[i] += n
		}
	}
	if info.States > 0 {
		e.BitsPerState = float64(size-info.ModelBytes) * 8 / float64(info.States)
	}
	rep := info.Report
	mean := func(sum float64, n uint64) *float64 {
		if n == 0 {
			return nil
		}
		v := sum / float64(n)
		return &v
	}
	e.Distortion = Distortion{Source: mean(rep.Source, rep.SourceSlots), Cosine: mean(rep.Cosine, rep.SourceSlots),
		Retention: mean(rep.Retention, rep.Slots)}
	e.Head, e.Tail, e.TailOffset = nil, nil, 0
	if body := size - info.PayloadBytes - info.IndexBytes; !info.Embedded && body > 0 && body <= MaxHead {
		if e.Head, err = readAt(r, 0, body); err != nil {
			return err
		}
	}
	if size-off <= MaxTail {
		if e.Tail, err = readAt(r, off, size-off); err != nil {
			return err
		}
		e.TailOffset = off
	}
	return nil
}
