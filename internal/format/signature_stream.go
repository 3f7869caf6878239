package format

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"io"
)

// A signedStream checks what a Reader reads against a signature verified
// before the first byte is decoded: the signature record sits at the end
// of the file, so a Reader given a public key needs a source it can also
// read at random (an *os.File, a bytes.Reader, an io.SectionReader).
type signedStream struct {
	blk   *sigBlock
	pre   hash.Hash
	coder func() *chunkCoder // a coder of the Reader's, to classify a record no hash matches
}

// newSignedStream verifies the signature of the file r reads, from its
// start, with the public key of opts.
func newSignedStream(r io.Reader, opts []Option) (*signedStream, error) {
	ra, ok := r.(io.ReaderAt)
	if !ok {
		return nil, fmt.Errorf("%w: a Reader with a public key needs an io.ReaderAt (the signature is at the end)", ErrInput)
	}
	var size int64
	switch s := r.(type) {
	case interface{ Size() int64 }:
		size = s.Size()
	case io.Seeker:
		cur, err := s.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, err
		}
		if size, err = s.Seek(0, io.SeekEnd); err != nil {
			return nil, err
		}
		if _, err := s.Seek(cur, io.SeekStart); err != nil {
			return nil, err
		}
		if cur != 0 {
			return nil, fmt.Errorf("%w: a Reader with a public key reads a file from its start", ErrInput)
		}
	default:
		return nil, fmt.Errorf("%w: a Reader with a public key needs the file's size (Size or Seek)", ErrInput)
	}
	inner, blk, err := splitOpts(ra, size, opts)
	if err != nil {
		return nil, err
	}
	f, err := openIndex(ra, inner, opts)
	if err != nil {
		return nil, err
	}
	if err := f.attach(blk); err != nil {
		return nil, err
	}
	return &signedStream{blk: blk, pre: sha256.New()}, nil
}

// prefix hashes bytes before the body as the Reader reads them.
func (s *signedStream) prefix(b []byte) {
	if s != nil {
		s.pre.Write(b)
	}
}

func (s *signedStream) checkPrefix() error {
	if s == nil || bytes.Equal(s.pre.Sum(nil), s.blk.prefix[:]) {
		return nil
	}
	return ErrPrefixAltered
}

// check checks a record read in two parts against its signed hash; whole
// is checkRecord's.
func (s *signedStream) check(off int64, head, rest []byte, whole func() bool) error {
	if s == nil {
		return nil
	}
	return s.blk.checkRecord(off, append(bytes.Clone(head), rest...), whole)
}

// checkIndex checks the index and trailer the Reader read.
func (s *signedStream) checkIndex(index, trailer []byte) error {
	if s == nil {
		return nil
	}
	h := sha256.New()
	h.Write(index)
	h.Write(trailer)
	if !bytes.Equal(h.Sum(nil), s.blk.index[:]) {
		return ErrIndexAltered
	}
	return nil
}

// readSignature reads the signature record and trailer that may follow
// the trailer, checked for damage (and, with a public key, equal to the
// one verified), and returns their size, 0 if there are none.
func (r *Reader) readSignature() (int64, error) {
	if _, err := r.br.Peek(1); err != nil {
		if r.sig != nil && err == io.EOF {
			return 0, ErrUnsigned
		}
		return 0, nil // EOF, or an error the caller's Peek reports
	}
	start := r.off
	n := sigFixedSize + sigHashSize*(int64(len(r.idx.episodes))+r.idx.chunks) + 64 + crcSize
	if need := r.h.memory() + n; need > r.cfg.maxMemory {
		return 0, tooLarge(start, need, r.cfg.maxMemory)
	}
	if b, err := r.br.Peek(1); err == nil && b[0] != tagSignature {
		return 0, corrupt(start, "bytes after the trailer")
	}
	b, err := r.read(int(n)+sigTrailerSize, "signature record")
	if err != nil {
		return 0, err
	}
	t := b[n:]
	if [4]byte(t[12:]) != sigMagic || crc(t[:8]) != le.Uint32(t[8:]) || int64(le.Uint64(t)) != start {
		return 0, corrupt(start+n, "bad signature trailer")
	}
	blk, err := parseSignature(b[:n], start)
	if err != nil {
		return 0, err
	}
	if r.sig != nil && !bytes.Equal(blk.raw, r.sig.blk.raw) {
		return 0, ErrBadSignature
	}
	return r.off - start, nil
}

// useCoder gives s the Reader's coder maker.
func (s *signedStream) useCoder(mk func() *chunkCoder) {
	if s != nil {
		s.coder = mk
	}
}

// wholeRecord reports whether a record read in two parts, of a chunk of n
// states in mode md when chunk is set, passes its CRC and, for a chunk, a
// decode to its reconstruction checksum: checkRecord's whole for the
// Reader.
func (s *signedStream) wholeRecord(chunk bool, md chunkMode, n int, head, rest []byte) bool {
	k := len(rest) - crcSize
	if k < 0 || crc32Update(crc(head), rest[:k]) != le.Uint32(rest[k:]) {
		return false
	}
	if !chunk {
		return k == 0 || json.Valid(rest[:k])
	}
	if s.coder == nil || len(head) < chunkHdrSize {
		return false
	}
	cc := s.coder()
	actions, codes := make([]int64, n), make([]uint16, n*cc.geom.N())
	return cc.decodeChunk(rest[:k], md, n, le.Uint32(head[12:]), actions, codes, 0) == nil
}
