package search

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"sync"

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

// tailReads says how fileIdentity reads the CRCs closing the records: one
// small read each (a local file), or joined into ranges read several at
// once (an object in a store, where each read is a request).
type tailReads struct {
	gap     int64 // records whose CRCs are at most gap bytes apart share a read
	span    int64 // the longest read
	threads int   // reads sent at once
}

var (
	localReads  = tailReads{gap: 0, span: 4, threads: 1}
	remoteReads = tailReads{gap: 16 << 10, span: 1 << 20, threads: 8}
)

// fileIdentity fingerprints the .wmz file r of the given size (already
// opened and checked by the container reader) for codec c (nil: no model
// named): SHA-256 of its header, index and trailer and of the CRC that
// closes each episode and chunk record. Any change to a record changes its CRC, and appending or
// re-encoding changes the index, so a stale index is found without reading
// the whole file.
func fileIdentity(r io.ReaderAt, size int64, c *wmzip.Codec, how tailReads) (identity, error) {
	id := identity{size: size}
	if c != nil {
		id.model = c.Model().ID()
	}
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
	// The records' ends, in the index's order (at most one per 16 bytes
	// of the index read).
	var ends []int64
	tail := func(end uint64) error {
		if end < 4 || end > uint64(size) {
			return fmt.Errorf("%w: record ends at %d", ErrInput, end)
		}
		ends = append(ends, int64(end-4))
		return nil
	}
	eps := binary.LittleEndian.Uint32(idx[4:])
	p := uint64(indexFixed)
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
	crcs, err := readCRCs(r, ends, how)
	if err != nil {
		return id, err
	}
	h.Write(crcs)
	h.Sum(id.print[:0])
	return id, nil
}

// readCRCs returns the 4 bytes at each of offs, one after the other, read
// as how says.
func readCRCs(r io.ReaderAt, offs []int64, how tailReads) ([]byte, error) {
	out := make([]byte, 4*len(offs))
	if how.threads <= 1 && how.gap == 0 {
		for i, o := range offs {
			if _, err := r.ReadAt(out[4*i:4*i+4], o); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	// Reads of ranges covering the offsets, in file order.
	order := make([]int, len(offs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return offs[order[a]] < offs[order[b]] })
	type rng struct{ first, last int } // positions in order
	var rs []rng
	for i, oi := range order {
		o := offs[oi]
		if len(rs) > 0 {
			cur := &rs[len(rs)-1]
			start := offs[order[cur.first]]
			if o-(offs[order[i-1]]+4) <= how.gap && o+4-start <= how.span {
				cur.last = i
				continue
			}
		}
		rs = append(rs, rng{i, i})
	}
	// At most how.threads reads at once; the first error is returned.
	sem := make(chan struct{}, max(how.threads, 1))
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for _, g := range rs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			start := offs[order[g.first]]
			b := make([]byte, offs[order[g.last]]+4-start)
			if _, err := r.ReadAt(b, start); err != nil {
				once.Do(func() { first = fmt.Errorf("reading %d bytes at %d: %w", len(b), start, err) })
				return
			}
			for _, oi := range order[g.first : g.last+1] {
				copy(out[4*oi:4*oi+4], b[offs[oi]-start:])
			}
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, nil
}
