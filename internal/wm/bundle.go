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
//	12      24·n   per member: u64 length (≥ 24), its 16-byte model ID
//	…              the members' model files, in order
//	end−4   4      u32 CRC-32C of every byte before it
//
// The IDs let a reader find the member a file names without parsing the
// others (BundleMembers).
const (
	bundleMagic   = "WMZB"
	BundleVersion = 1
	MaxMembers    = 16
	bundleHdr     = 12
	bundleEntry   = 8 + ModelIDSize
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
	size := bundleHdr + bundleEntry*len(models) + 4
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
	for i, p := range parts {
		out = binary.LittleEndian.AppendUint64(out, uint64(len(p)))
		id := models[i].ID()
		out = append(out, id[:]...)
	}
	for _, p := range parts {
		out = append(out, p...)
	}
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli)), nil
}

// BundleMember is one member of a bundle as BundleMembers finds it: its
// listed model ID and its model file, not yet parsed.
type BundleMember struct {
	ID   ModelID
	File []byte // a sub-slice of the bundle
}

// BundleMembers checks a bundle's header, lengths, CRC and listed IDs
// (distinct) and returns its members without parsing them; a member's
// file is checked against its listed ID when parsed (ParseBundleMember).
// A version other than 1 fails with ErrModelVersion (checked before the
// CRC, so that later versions are told apart), anything else invalid
// with ErrModelFormat.
func BundleMembers(b []byte) ([]BundleMember, error) {
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
	off := int64(bundleHdr) + bundleEntry*n
	if int64(len(b)) < off+4 {
		return nil, fmt.Errorf("%w: bundle truncated in its member list", ErrModelFormat)
	}
	body := int64(len(b)) - 4
	if got, want := crc32.Checksum(b[:body], castagnoli), le.Uint32(b[body:]); got != want {
		return nil, fmt.Errorf("%w: bundle checksum %08x, stored %08x", ErrModelFormat, got, want)
	}
	ms := make([]BundleMember, n)
	end := off
	for i := range ms {
		e := b[bundleHdr+bundleEntry*i:]
		l := le.Uint64(e)
		if l < 24 || l > uint64(body) {
			return nil, fmt.Errorf("%w: bundle member %d of %d bytes", ErrModelFormat, i, l)
		}
		copy(ms[i].ID[:], e[8:8+ModelIDSize])
		for _, o := range ms[:i] {
			if o.ID == ms[i].ID {
				return nil, fmt.Errorf("%w: bundle member %d repeats model %s", ErrModelFormat, i, ms[i].ID)
			}
		}
		if int64(l) > body-end {
			return nil, fmt.Errorf("%w: bundle members run past its end", ErrModelFormat)
		}
		ms[i].File = b[end : end+int64(l)]
		end += int64(l)
	}
	if end != body {
		return nil, fmt.Errorf("%w: %d bytes after the bundle's last member", ErrModelFormat, body-end)
	}
	return ms, nil
}

// ParseBundleMember parses member i of a bundle (BundleMembers) under a
// memory cap as UnmarshalModelLimit does, and checks it is the model its
// entry lists.
func ParseBundleMember(bm BundleMember, i int, maxBytes int64) (*Model, error) {
	m, err := UnmarshalModelLimit(bm.File, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("bundle member %d: %w", i, err)
	}
	if m.ID() != bm.ID {
		return nil, fmt.Errorf("%w: bundle member %d is model %s, listed as %s", ErrModelFormat, i, m.ID(), bm.ID)
	}
	return m, nil
}

// UnmarshalBundle parses and validates a bundle and every member;
// maxBytes caps the memory of each member as UnmarshalModelLimit does (0:
// no cap). Errors are those of BundleMembers and ParseBundleMember.
func UnmarshalBundle(b []byte, maxBytes int64) ([]*Model, error) {
	bms, err := BundleMembers(b)
	if err != nil {
		return nil, err
	}
	models := make([]*Model, len(bms))
	for i, bm := range bms {
		if models[i], err = ParseBundleMember(bm, i, maxBytes); err != nil {
			return nil, err
		}
	}
	return models, nil
}
