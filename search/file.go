package search

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/internal/wm"
)

// The index file (docs/index-format.md): a fixed header, the episodes'
// lengths, the codes, the partition when there is one, and a CRC-32C of
// all that precedes it. Little-endian throughout.
const (
	indexMagic   = "WMZI"
	indexVersion = 1
	indexHeader  = 104
	// Ext is the extension of an index file (IndexPath).
	Ext = ".wmzi"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// IndexPath returns where the index of the .wmz file name is kept: beside
// it, with the extension .wmz replaced by .wmzi (or .wmzi added).
func IndexPath(name string) string {
	if strings.EqualFold(filepath.Ext(name), ".wmz") {
		return name[:len(name)-4] + Ext
	}
	return name + Ext
}

// encodedSize is the size of the index's file.
func (ix *Index) encodedSize() int64 {
	n := int64(indexHeader) + 8*int64(len(ix.epLens)) + int64(len(ix.codes)) + 4
	if pt := ix.part; pt != nil {
		n += 4*int64(len(pt.proj))*int64(len(pt.proj[0])) + 4*int64(len(pt.cent)) + 8*int64(pt.cells+1) + 4*int64(len(ix.perm))
	}
	return n
}

// WriteTo writes the index file to w.
func (ix *Index) WriteTo(w io.Writer) (int64, error) {
	crc := crc32.New(castagnoli)
	cw := &countWriter{w: io.MultiWriter(w, crc)}
	h := make([]byte, indexHeader)
	copy(h, indexMagic)
	le := binary.LittleEndian
	le.PutUint16(h[4:], indexVersion)
	le.PutUint32(h[8:], uint32(ix.geom.S))
	le.PutUint32(h[12:], uint32(ix.geom.M))
	le.PutUint32(h[16:], uint32(ix.geom.K))
	copy(h[20:36], ix.id.model[:])
	le.PutUint64(h[36:], uint64(ix.id.size))
	copy(h[44:76], ix.id.print[:])
	le.PutUint32(h[76:], uint32(len(ix.epLens)))
	le.PutUint64(h[80:], uint64(ix.States()))
	if pt := ix.part; pt != nil {
		le.PutUint32(h[88:], uint32(pt.cells))
		le.PutUint32(h[92:], uint32(pt.r))
		le.PutUint32(h[96:], uint32(len(pt.proj)))
		le.PutUint32(h[100:], uint32(len(pt.proj[0])/pt.r))
	}
	cw.Write(h)
	b := make([]byte, 8)
	for _, n := range ix.epLens {
		le.PutUint64(b, uint64(n))
		cw.Write(b)
	}
	cw.Write(ix.codes)
	if pt := ix.part; pt != nil {
		for _, p := range pt.proj {
			writeF32(cw, p)
		}
		writeF32(cw, pt.cent)
		for _, o := range pt.offsets {
			le.PutUint64(b, o)
			cw.Write(b)
		}
		u := make([]byte, 4*len(ix.perm))
		for i, v := range ix.perm {
			le.PutUint32(u[4*i:], v)
		}
		cw.Write(u)
	}
	le.PutUint32(b, crc.Sum32())
	cw.w = w
	cw.Write(b[:4])
	return cw.n, cw.err
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

func writeF32(w io.Writer, v []float32) {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	w.Write(b)
}

// Save writes the index to the file name atomically: under a temporary
// name, renamed when complete.
func (ix *Index) Save(name string) error {
	f, err := atomicfile.Create(name)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if _, err := ix.WriteTo(bw); err != nil {
		f.Abort()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// Load reads the index file indexName of the .wmz file wmzName and checks
// that it belongs to that file as it is now and to codec c (nil: the model
// the file embeds): otherwise the error wraps ErrStale, and the index
// must be rebuilt (Build).
func Load(indexName, wmzName string, c *wmzip.Codec) (*Index, error) {
	b, err := os.ReadFile(indexName)
	if err != nil {
		return nil, err
	}
	ix, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", indexName, err)
	}
	f, err := os.Open(wmzName)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := ix.check(f, st.Size(), c, indexName, wmzName, localReads); err != nil {
		return nil, err
	}
	return ix, nil
}

// Check checks that the index (Parse) belongs to the .wmz file that r
// holds, size bytes long, as it is now, and to codec c (nil: the model the
// file embeds), as Load does: otherwise the error wraps ErrStale (or
// ErrIndex). It reads the file's header, index and trailer and the CRC
// closing each of its records; those small reads are joined into ranges
// (records less than 16 KiB apart share one) and sent several at once,
// which suits an object in a store.
func (ix *Index) Check(r io.ReaderAt, size int64, c *wmzip.Codec) error {
	return ix.check(r, size, c, "the index", "the file", remoteReads)
}

func (ix *Index) check(r io.ReaderAt, size int64, c *wmzip.Codec, indexName, wmzName string, how tailReads) error {
	if c == nil {
		wf, err := wmzip.NewFile(r, size, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", wmzName, err)
		}
		c = wf.Codec()
	}
	c = member(c, ix.id.model)
	if err := checkCodec(c); err != nil {
		return err
	}
	if ix.id.model != c.Model().ID() {
		return fmt.Errorf("%w: %s was built with model %s, not %s", ErrStale, indexName, ix.id.model, c.Model().ID())
	}
	if ix.geom != c.Geometry() || ix.part != nil && c.Quantizer().Dim() != ix.dim() || ix.part != nil && len(ix.part.proj) != max(c.Quantizer().Slots(), 1) {
		return fmt.Errorf("%w: %s: geometry differs from the model's", ErrIndex, indexName)
	}
	id, err := fileIdentity(r, size, c, how)
	if err != nil {
		return fmt.Errorf("%s: %w", wmzName, err)
	}
	if id != ix.id {
		return fmt.Errorf("%w: %s no longer matches %s (the file changed since it was built)", ErrStale, indexName, wmzName)
	}
	return nil
}

// dim is the slot vector dimension the partition was built for (0 without
// one: any).
func (ix *Index) dim() int {
	if ix.part == nil {
		return 0
	}
	return len(ix.part.proj[0]) / ix.part.r
}

// Parse decodes the bytes of an index file, checking its CRC and every
// count against the bytes present. It does not check the index against a
// file (Load does).
func Parse(b []byte) (*Index, error) {
	bad := func(what string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrIndex, fmt.Sprintf(what, a...))
	}
	if len(b) < indexHeader+4 || !bytes.Equal(b[:4], []byte(indexMagic)) {
		return nil, bad("no index header")
	}
	le := binary.LittleEndian
	if v := le.Uint16(b[4:]); v != indexVersion {
		return nil, bad("version %d, this reader knows %d", v, indexVersion)
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != le.Uint32(b[len(b)-4:]) {
		return nil, bad("checksum mismatch")
	}
	ix := &Index{geom: wm.Geometry{S: int(le.Uint32(b[8:])), M: int(le.Uint32(b[12:])), K: int(le.Uint32(b[16:]))}}
	g := ix.geom
	if g.S < 1 || g.M < 1 || g.K < 2 || g.K > MaxK || int64(g.S)*int64(g.M) > 1<<16 || le.Uint16(b[6:]) != 0 {
		return nil, bad("geometry S=%d M=%d K=%d", g.S, g.M, g.K)
	}
	copy(ix.id.model[:], b[20:36])
	ix.id.size = int64(le.Uint64(b[36:]))
	copy(ix.id.print[:], b[44:76])
	eps, states := int64(le.Uint32(b[76:])), le.Uint64(b[80:])
	cells, r, sets, dim := int64(le.Uint32(b[88:])), int64(le.Uint32(b[92:])), int64(le.Uint32(b[96:])), int64(le.Uint32(b[100:]))
	rest := int64(len(body) - indexHeader)
	n := int64(g.N())
	// Every count is checked against the bytes present before it sizes
	// anything: each episode takes 8 bytes, each state n.
	if eps > rest/8 || states > uint64(rest)/uint64(n) {
		return nil, bad("%d episodes and %d states in %d bytes", eps, states, rest)
	}
	want := 8*eps + int64(states)*n
	if cells > 0 {
		if r < 1 || sets < 1 || dim < 1 || cells > 1<<16 || uint64(cells) > states || r > dim || dim > 1<<16 || (sets != 1 && sets != int64(g.S)) {
			return nil, bad("partition of %d cells, %d directions of %d values, %d sets", cells, r, dim, sets)
		}
		want += 4*sets*r*dim + 4*cells*int64(g.S)*r + 8*(cells+1) + 4*int64(states)
	} else if r != 0 || sets != 0 || dim != 0 {
		return nil, bad("partition fields without cells")
	}
	if want != rest {
		return nil, bad("%d bytes after the header, want %d", rest, want)
	}
	p := b[indexHeader:]
	ix.epLens = make([]int, eps)
	var sum uint64
	for i := range ix.epLens {
		v := le.Uint64(p[8*i:])
		if v > states-sum {
			return nil, bad("episode lengths exceed %d states", states)
		}
		sum += v
		ix.epLens[i] = int(v)
	}
	if sum != states {
		return nil, bad("episode lengths sum to %d, not %d states", sum, states)
	}
	p = p[8*eps:]
	ix.codes = p[: int64(states)*n : int64(states)*n]
	for i, v := range ix.codes {
		if int(v) >= g.K {
			return nil, bad("code %d at %d is not below K=%d", v, i, g.K)
		}
	}
	p = p[int64(states)*n:]
	if cells > 0 {
		pt := &partition{cells: int(cells), r: int(r)}
		for range sets {
			pt.proj = append(pt.proj, readF32(p[:4*r*dim]))
			p = p[4*r*dim:]
		}
		pt.cent = readF32(p[:4*cells*int64(g.S)*r])
		p = p[4*cells*int64(g.S)*r:]
		for _, v := range pt.proj {
			if !finite(v) {
				return nil, bad("a direction is not finite")
			}
		}
		if !finite(pt.cent) {
			return nil, bad("a centroid is not finite")
		}
		pt.offsets = make([]uint64, cells+1)
		for i := range pt.offsets {
			pt.offsets[i] = le.Uint64(p[8*i:])
			if i > 0 && pt.offsets[i] < pt.offsets[i-1] || pt.offsets[i] > states {
				return nil, bad("cell offsets out of order")
			}
		}
		if pt.offsets[0] != 0 || pt.offsets[cells] != states {
			return nil, bad("cells do not cover the states")
		}
		p = p[8*(cells+1):]
		ix.perm = make([]uint32, states)
		seen := make([]bool, states)
		for i := range ix.perm {
			v := le.Uint32(p[4*i:])
			if uint64(v) >= states || seen[v] {
				return nil, bad("state order is not a permutation")
			}
			seen[v] = true
			ix.perm[i] = v
		}
		ix.part = pt
	}
	ix.bytes = int64(len(b))
	return ix, nil
}

func readF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func finite(v []float32) bool {
	for _, f := range v {
		if f-f != 0 {
			return false
		}
	}
	return true
}
