package fuzz

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/wm"
)

// fixChecksums rewrites, where the structure allows, every checksum of a
// .wmz (docs/spec-format.md) so that it matches the bytes it covers: the
// header CRC, the model ID (the embedded model's hash), the level table's
// CRC, the record CRCs, the
// index CRC and the trailer CRC. A mutated file then reaches the decoders
// behind the checksums: record grammar, limits, the index's consistency,
// model parsing, rANS streams and the world model. Only reconstruction
// checksums stay as they are: they need a decode.
func fixChecksums(in []byte) []byte {
	b := append([]byte(nil), in...)
	le := binary.LittleEndian
	tab := crc32.MakeTable(crc32.Castagnoli)
	sum := func(p []byte) uint32 { return crc32.Checksum(p, tab) }
	const header, trailer = 64, 28
	if len(b) < header {
		return b
	}
	modelSize := int64(le.Uint32(b[48:]))
	body := header + modelSize
	if modelSize > 0 && body <= int64(len(b)) {
		raw := b[header:body]
		id := sha256.Sum256(raw)
		if len(raw) >= 6 && (raw[4] >= 3 || raw[5] != 0) {
			// Version 3: the ID of the content, once it parses.
			if m, err := wm.UnmarshalModel(raw); err == nil {
				mid := m.ID()
				copy(id[:], mid[:])
			}
		}
		copy(b[32:48], id[:16])
	}
	if q := int64(b[22]); q > 0 && body+4*q+4 <= int64(len(b)) {
		le.PutUint32(b[body+4*q:], sum(b[body:body+4*q])) // level table
		body += 4*q + 4
	}
	le.PutUint32(b[60:], sum(b[:60]))
	end := int64(len(b))
	if end >= header+trailer {
		end -= trailer // leave room for a trailer when there is one
	}
	pos := body
	for pos+8 <= end {
		var n int64
		switch b[pos] {
		case 'E':
			n = 8 + int64(le.Uint32(b[pos+4:]))
		case 'C':
			if pos+16 > end {
				return b
			}
			n = 16 + int64(le.Uint32(b[pos+8:]))
		default:
			goto index
		}
		if pos+n+4 > end {
			return b
		}
		le.PutUint32(b[pos+n:], sum(b[pos:pos+n]))
		pos += n + 4
	}
index:
	if int64(len(b)) < pos+trailer || b[pos] != 'X' {
		return b
	}
	t := int64(len(b)) - trailer
	le.PutUint64(b[t:], uint64(pos))
	le.PutUint64(b[t+8:], uint64(t-pos))
	le.PutUint32(b[t+16:], sum(b[pos:t]))
	le.PutUint32(b[t+20:], sum(b[t:t+20]))
	return b
}

// TestFixChecksumsIdentity checks that fixChecksums leaves valid files as
// they are, so that it fixes exactly what a mutation broke.
func TestFixChecksumsIdentity(t *testing.T) {
	for _, b := range seedFiles(t, 1<<20, "conformance/*.wmz") {
		if _, err := readAll(b, nil); err != nil && !errors.Is(err, format.ErrNoModel) {
			continue // a stale vector: its own tests report it
		}
		if !bytes.Equal(fixChecksums(b), b) {
			t.Fatal("fixChecksums changed a valid file")
		}
	}
}
