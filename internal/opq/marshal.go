package opq

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/wmzip/wmzip/internal/half"
)

// Serialized layout, all integers and floats little-endian:
//
//	offset  size  field
//	0       4     magic "OPQ1"
//	4       4     uint32 version, 1 or 2
//	8       4     uint32 Dim, 1..65536
//	12      4     uint32 M, 1..Dim, divides Dim
//	16      4     uint32 K, 2..65536
//	20      4     uint32 books B: 0 for one shared set, else Slots (1..4096)
//	24      4     version 2 only: uint32 flags: bit 0 rotations present,
//	              bit 1 values stored as binary16; other bits 0
//	...     ...   max(B,1) books, each:
//	                Dim*Dim rotation values R, row-major (rotated y = R·x),
//	                  present in version 1 and under flag bit 0
//	                M*K*(Dim/M) codebook values: subspace, centroid, coordinate
//	              each value a float32, or under flag bit 1 an IEEE 754
//	              binary16
//	end-4   4     uint32 CRC-32 (IEEE) of all preceding bytes
//
// Every value must be finite. The size of the whole is fixed by the header,
// so a reader checks it against the input length before allocating.
// MarshalBinary writes version 1 for a rotated quantizer whose values need
// float32, version 2 otherwise: the shortest layout that holds the values
// exactly, so equal quantizers give equal bytes.
// FormatVersion is the latest version of the serialization MarshalBinary
// writes (version 1 still for a rotated quantizer of float32 values).
const FormatVersion = 2

const (
	magic        = "OPQ1"
	headerSize   = 24
	flagRotation = 1
	flagHalf     = 2
)

// layoutOf returns the serialization version and flags of q.
func (q *Quantizer) layoutOf() (version, flags uint32) {
	if q.Rotated() {
		flags |= flagRotation
	}
	exact := true
	for _, bk := range q.books {
		for _, vs := range [][]float32{bk.rot, bk.cent} {
			for _, v := range vs {
				if half.Float32(half.FromFloat32(v)) != v {
					exact = false
					break
				}
			}
		}
	}
	if exact {
		flags |= flagHalf
	}
	if flags == flagRotation {
		return 1, flags
	}
	return 2, flags
}

// MarshalBinary returns the canonical serialization of q (see the layout
// above); equal quantizers give equal bytes.
func (q *Quantizer) MarshalBinary() ([]byte, error) {
	version, flags := q.layoutOf()
	size := serializedSize(q.dim, q.m, q.k, len(q.books), version, flags)
	b := make([]byte, 0, size)
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint32(b, version)
	b = binary.LittleEndian.AppendUint32(b, uint32(q.dim))
	b = binary.LittleEndian.AppendUint32(b, uint32(q.m))
	b = binary.LittleEndian.AppendUint32(b, uint32(q.k))
	b = binary.LittleEndian.AppendUint32(b, uint32(q.Slots()))
	if version >= 2 {
		b = binary.LittleEndian.AppendUint32(b, flags)
	}
	put := func(v float32) {
		if flags&flagHalf != 0 {
			b = binary.LittleEndian.AppendUint16(b, half.FromFloat32(v))
		} else {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	for _, bk := range q.books {
		for _, v := range bk.rot {
			put(v)
		}
		for _, v := range bk.cent {
			put(v)
		}
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	return b, nil
}

// serializedSize is the byte length for a geometry, in int64 so that no
// declared header can overflow it.
func serializedSize(dim, m, k, books int, version, flags uint32) int64 {
	perBook := int64(k) * int64(dim)
	if flags&flagRotation != 0 {
		perBook += int64(dim) * int64(dim)
	}
	width, hdr := int64(4), int64(headerSize)
	if flags&flagHalf != 0 {
		width = 2
	}
	if version >= 2 {
		hdr += 4
	}
	return hdr + int64(books)*perBook*width + 4
}

// UnmarshalQuantizer parses bytes written by MarshalBinary. It checks the
// header against the documented limits and the input length before
// allocating, verifies the checksum, and returns an error wrapping
// ErrCorrupt for any invalid input.
func UnmarshalQuantizer(b []byte) (*Quantizer, error) {
	if len(b) < headerSize+4 {
		return nil, fmt.Errorf("%w: %d bytes, shorter than a header", ErrCorrupt, len(b))
	}
	if string(b[:4]) != magic {
		return nil, fmt.Errorf("%w: bad magic %q", ErrCorrupt, b[:4])
	}
	le := binary.LittleEndian
	version := le.Uint32(b[4:])
	if version != 1 && version != 2 {
		return nil, fmt.Errorf("%w: unsupported version %d", ErrCorrupt, version)
	}
	dim, m, k, slots := le.Uint32(b[8:]), le.Uint32(b[12:]), le.Uint32(b[16:]), le.Uint32(b[20:])
	if dim > MaxDim || k > MaxK || slots > MaxSlots {
		return nil, fmt.Errorf("%w: header out of range (Dim %d, K %d, slots %d)", ErrCorrupt, dim, k, slots)
	}
	if err := CheckGeometry(int(dim), int(m), int(k)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	off, flags := headerSize, uint32(flagRotation)
	if version == 2 {
		if len(b) < headerSize+8 {
			return nil, fmt.Errorf("%w: %d bytes, shorter than a header", ErrCorrupt, len(b))
		}
		if flags = le.Uint32(b[headerSize:]); flags&^(flagRotation|flagHalf) != 0 || flags == flagRotation {
			return nil, fmt.Errorf("%w: flags %#x not allowed in version 2", ErrCorrupt, flags)
		}
		off += 4
	}
	books := max(int(slots), 1)
	if want := serializedSize(int(dim), int(m), int(k), books, version, flags); int64(len(b)) != want {
		return nil, fmt.Errorf("%w: %d bytes, the header implies %d", ErrCorrupt, len(b), want)
	}
	body := len(b) - 4
	if got, want := crc32.ChecksumIEEE(b[:body]), le.Uint32(b[body:]); got != want {
		return nil, fmt.Errorf("%w: checksum %08x, stored %08x", ErrCorrupt, got, want)
	}
	read := func(n int) ([]float32, error) {
		v := make([]float32, n)
		for i := range v {
			var f float32
			if flags&flagHalf != 0 {
				f = half.Float32(le.Uint16(b[off:]))
				off += 2
			} else {
				f = math.Float32frombits(le.Uint32(b[off:]))
				off += 4
			}
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return nil, fmt.Errorf("%w: non-finite value at byte %d", ErrCorrupt, off)
			}
			v[i] = f
		}
		return v, nil
	}
	bks := make([]book, books)
	for i := range bks {
		var err error
		if flags&flagRotation != 0 {
			if bks[i].rot, err = read(int(dim) * int(dim)); err != nil {
				return nil, err
			}
		}
		if bks[i].cent, err = read(int(k) * int(dim)); err != nil {
			return nil, err
		}
	}
	return newQuantizer(int(dim), int(m), int(k), bks), nil
}

// RoundToHalf rounds every value of q's rotations and codebooks to the
// nearest IEEE 754 binary16 in place, so that q serializes in half the
// bytes (version 2) and encodes as the quantizer read back does. Call it
// before encoding anything with q.
func (q *Quantizer) RoundToHalf() {
	for i := range q.books {
		bk := &q.books[i]
		for _, vs := range [][]float32{bk.rot, bk.cent} {
			for j, v := range vs {
				vs[j] = half.Float32(half.FromFloat32(v))
			}
		}
	}
	q.books = newQuantizer(q.dim, q.m, q.k, q.books).books
}
