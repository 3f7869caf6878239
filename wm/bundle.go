package wm

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// A bundle (SPEC.md 3.6) holds several model files in one: the members of
// a codec that serves a range of rates, each with its own quantizer and
// world model. A .wmz file names the member it was written with by that
// member's model ID, so a bundle decodes every file any of its members
// wrote.
//
//	offset  size   field
//	0       4      magic "WMZB"
//	4       2      u16 version, 1
//	6       2      u16 flags, 0
//	8       4      u32 n, members, 1..MaxMembers
//	12      8·n    u64 length of each member, ≥ 24
//	…              the members' model files, in order
//	end−4   4      u32 CRC-32C of every byte before it
const (
	bundleMagic   = "WMZB"
	BundleVersion = 1
	MaxMembers    = 16
	bundleHdr     = 12
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// IsBundle reports whether b starts as a bundle does.
func IsBundle(b []byte) bool { return len(b) >= 4 && string(b[:4]) == bundleMagic }

// MarshalBundle returns the bundle of models, in order: at least one, at
// most MaxMembers, with distinct IDs, each of a model file.
func MarshalBundle(models []*Model) ([]byte, error) {
	if len(models) < 1 || len(models) > MaxMembers {
		return nil, fmt.Errorf("wm: a bundle of %d models, want 1 to %d", len(models), MaxMembers)
	}
	parts := make([][]byte, len(models))
	seen := map[ModelID]bool{}
	size := bundleHdr + 8*len(models) + 4
	for i, m := range models {
		if seen[m.ID()] {
			return nil, fmt.Errorf("wm: bundle member %d repeats model %s", i, m.ID())
		}
		seen[m.ID()] = true
		b, err := m.MarshalBinary()
		if err != nil {
			return nil, err
		}
		parts[i] = b
		size += len(b)
	}
	out := make([]byte, 0, size)
	out = append(out, bundleMagic...)
	out = binary.LittleEndian.AppendUint16(out, BundleVersion)
	out = binary.LittleEndian.AppendUint16(out, 0)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(models)))
	for _, p := range parts {
		out = binary.LittleEndian.AppendUint64(out, uint64(len(p)))
	}
	for _, p := range parts {
		out = append(out, p...)
	}
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli)), nil
}

// UnmarshalBundle parses and validates a bundle; maxBytes caps the memory
// of each member as UnmarshalModelLimit does (0: no cap). A version other
// than 1 fails with ErrModelVersion, anything else invalid with
// ErrModelFormat.
func UnmarshalBundle(b []byte, maxBytes int64) ([]*Model, error) {
	if len(b) < bundleHdr+4 || !IsBundle(b) {
		return nil, fmt.Errorf("%w: not a bundle", ErrModelFormat)
	}
	le := binary.LittleEndian
	if v := le.Uint16(b[4:]); v != BundleVersion {
		return nil, fmt.Errorf("%w: bundle version %d", ErrModelVersion, v)
	}
	if f := le.Uint16(b[6:]); f != 0 {
		return nil, fmt.Errorf("%w: bundle flags %#x set", ErrModelFormat, f)
	}
	n := int64(le.Uint32(b[8:]))
	if n < 1 || n > MaxMembers {
		return nil, fmt.Errorf("%w: bundle of %d members, want 1 to %d", ErrModelFormat, n, MaxMembers)
	}
	off := int64(bundleHdr) + 8*n
	if int64(len(b)) < off+4 {
		return nil, fmt.Errorf("%w: bundle truncated in its member lengths", ErrModelFormat)
	}
	body := int64(len(b)) - 4
	if got, want := crc32.Checksum(b[:body], castagnoli), le.Uint32(b[body:]); got != want {
		return nil, fmt.Errorf("%w: bundle checksum %08x, stored %08x", ErrModelFormat, got, want)
	}
	lens := make([]int64, n)
	end := off
	for i := range lens {
		l := le.Uint64(b[bundleHdr+8*i:])
		if l < 24 || l > uint64(body) {
			return nil, fmt.Errorf("%w: bundle member %d of %d bytes", ErrModelFormat, i, l)
		}
		lens[i] = int64(l)
		if end += lens[i]; end > body {
			return nil, fmt.Errorf("%w: bundle members run past its end", ErrModelFormat)
		}
	}
	if end != body {
		return nil, fmt.Errorf("%w: %d bytes after the bundle's last member", ErrModelFormat, body-end)
	}
	models := make([]*Model, n)
	seen := map[ModelID]bool{}
	for i := range models {
		m, err := UnmarshalModelLimit(b[off:off+lens[i]], maxBytes)
		if err != nil {
			return nil, fmt.Errorf("bundle member %d: %w", i, err)
		}
		if seen[m.ID()] {
			return nil, fmt.Errorf("%w: bundle member %d repeats model %s", ErrModelFormat, i, m.ID())
		}
		seen[m.ID()] = true
		models[i] = m
		off += lens[i]
	}
	return models, nil
}
