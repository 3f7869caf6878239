package opq

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// Serialized layout (version 1), all integers and floats little-endian:
//
//	offset  size  field
//	0       4     magic "OPQ1"
//	4       4     uint32 version, 1
//	8       4     uint32 Dim, 1..65536
//	12      4     uint32 M, 1..Dim, divides Dim
//	16      4     uint32 K, 2..65536
//	20      4     uint32 books B: 0 for one shared set, else Slots (1..4096)
//	24      ...   max(B,1) books, each:
//	                Dim*Dim float32 rotation R, row-major (rotated y = R·x)
//	                M*K*(Dim/M) float32 codebooks: subspace, centroid, coordinate
//	end-4   4     uint32 CRC-32 (IEEE) of all preceding bytes
//
// Every float must be finite. The size of the whole is fixed by the header,
// so a reader checks it against the input length before allocating.
const (
	magic         = "OPQ1"
	formatVersion = 1
	headerSize    = 24
)

// MarshalBinary returns the canonical serialization of q (see the layout
// above); equal quantizers give equal bytes.
func (q *Quantizer) MarshalBinary() ([]byte, error) {
	size := serializedSize(q.dim, q.m, q.k, len(q.books))
	b := make([]byte, 0, size)
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint32(b, formatVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(q.dim))
	b = binary.LittleEndian.AppendUint32(b, uint32(q.m))
	b = binary.LittleEndian.AppendUint32(b, uint32(q.k))
	b = binary.LittleEndian.AppendUint32(b, uint32(q.Slots()))
	for _, bk := range q.books {
		for _, v := range bk.rot {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
		for _, v := range bk.cent {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	return b, nil
}

// serializedSize is the byte length for a geometry, in int64 so that no
// declared header can overflow it.
func serializedSize(dim, m, k, books int) int64 {
	perBook := int64(dim)*int64(dim) + int64(k)*int64(dim)
	return headerSize + int64(books)*perBook*4 + 4
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
	if v := le.Uint32(b[4:]); v != formatVersion {
		return nil, fmt.Errorf("%w: unsupported version %d", ErrCorrupt, v)
	}
	dim, m, k, slots := le.Uint32(b[8:]), le.Uint32(b[12:]), le.Uint32(b[16:]), le.Uint32(b[20:])
	if dim > MaxDim || k > MaxK || slots > MaxSlots {
		return nil, fmt.Errorf("%w: header out of range (Dim %d, K %d, slots %d)", ErrCorrupt, dim, k, slots)
	}
	if err := CheckGeometry(int(dim), int(m), int(k)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	books := max(int(slots), 1)
	if want := serializedSize(int(dim), int(m), int(k), books); int64(len(b)) != want {
		return nil, fmt.Errorf("%w: %d bytes, the header implies %d", ErrCorrupt, len(b), want)
	}
	body := len(b) - 4
	if got, want := crc32.ChecksumIEEE(b[:body]), le.Uint32(b[body:]); got != want {
		return nil, fmt.Errorf("%w: checksum %08x, stored %08x", ErrCorrupt, got, want)
	}
	off := headerSize
	read := func(n int) ([]float32, error) {
		v := make([]float32, n)
		for i := range v {
			f := math.Float32frombits(le.Uint32(b[off:]))
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return nil, fmt.Errorf("%w: non-finite value at byte %d", ErrCorrupt, off)
			}
			v[i] = f
			off += 4
		}
		return v, nil
	}
	bks := make([]book, books)
	for i := range bks {
		var err error
		if bks[i].rot, err = read(int(dim) * int(dim)); err != nil {
			return nil, err
		}
		if bks[i].cent, err = read(int(k) * int(dim)); err != nil {
			return nil, err
		}
	}
	return newQuantizer(int(dim), int(m), int(k), bks), nil
}
