package fuzz

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/testkit"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/sign"
)

func fuzzKey(tb testing.TB) *sign.SecretKey {
	k, err := sign.GenerateKey(rand.NewChaCha8([32]byte{'w', 'm', 'z'}))
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// FuzzSignature reads arbitrary bytes, seeded with signed conformance
// files, with and without the public key that signed the seeds. Nothing may
// panic; errors are format or signature errors; and a file that reads whole
// with the key is byte for byte one of the seeds before its signature
// record (every byte is covered by the signature; the record itself, with
// its random file ID, cannot be forged without the secret key). With fix set, the signature record's and trailer's
// checksums are first made to match, so that mutations reach the
// signature checks behind them.
func FuzzSignature(f *testing.F) {
	k := fuzzKey(f)
	signed := map[[32]byte]bool{}
	for _, b := range seedFiles(f, 8<<10, "conformance/*.wmz") {
		mf := &testkit.MemFile{B: bytes.Clone(b)}
		if _, err := format.Sign(mf, int64(len(b)), k); err != nil {
			continue // a vector that is not a complete file
		}
		signed[sha256.Sum256(b)] = true
		f.Add(mf.B, false)
		f.Add(mf.B, true)
	}
	ms := models(f)
	pub := format.WithPublicKey(k.Public())
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix {
			data = fixSignature(data)
		}
		for _, m := range ms {
			var keyed error
			n := allocated(func() { keyed = readSigned(data, m, pub, format.WithMaxMemory(memLimit)) })
			if bound := uint64(memLimit+slack) + modelAlloc(data) + 4*uint64(len(data)); n > bound {
				t.Fatalf("signed read allocated %d bytes, bound %d", n, bound)
			}
			if keyed == nil && !signed[sha256.Sum256(unsignedPart(data))] {
				t.Fatal("a file that is none of the signed seeds reads with the key")
			}
			if keyed != nil && !isFileError(keyed) && !isSignatureError(keyed) &&
				!errors.Is(keyed, format.ErrNoModel) {
				t.Fatalf("signed read: %v is neither a format nor a signature error", keyed)
			}
			unkeyed := readSigned(data, m, format.WithMaxMemory(memLimit))
			if unkeyed != nil && !isFileError(unkeyed) {
				t.Fatalf("read without the key: %v is not a format error", unkeyed)
			}
			if keyed == nil && unkeyed != nil {
				t.Fatalf("reads with the key, not without: %v", unkeyed)
			}
		}
		if _, _, err := format.ReadSignature(bytes.NewReader(data), int64(len(data))); err != nil && !isFileError(err) {
			t.Fatalf("ReadSignature: %v", err)
		}
		// Re-signing checks the file against the signature it continues:
		// an error of either kind, and never a signature over a file that
		// differs from a seed where the old one was this key's.
		mf := &testkit.MemFile{B: bytes.Clone(data)}
		n, err := format.Sign(mf, int64(len(data)), k, format.WithMaxMemory(memLimit))
		if err != nil && !isFileError(err) && !isSignatureError(err) {
			t.Fatalf("Sign: %v is neither a format nor a signature error", err)
		}
		if err == nil {
			if old, ok, _ := format.ReadSignature(bytes.NewReader(data), int64(len(data))); ok && old.KeyID == k.ID &&
				!signed[sha256.Sum256(unsignedPart(data))] {
				t.Fatal("re-signed a file that is none of the signed seeds")
			}
			if n != int64(len(mf.B)) {
				t.Fatalf("Sign returned %d for a file of %d bytes", n, len(mf.B))
			}
		}
	})
}

func isSignatureError(err error) bool { return format.IsSignatureError(err) }

// readSigned opens data and reads every state and metadata, then streams it.
func readSigned(data []byte, m *wm.Model, opts ...format.Option) error {
	f, err := format.Open(bytes.NewReader(data), int64(len(data)), m, opts...)
	if err != nil {
		return err
	}
	for e := range f.Episodes() {
		if _, err := f.Metadata(e); err != nil {
			return err
		}
		for s := range f.EpisodeLen(e) {
			if _, _, err := f.ReadState(e, s, nil); err != nil {
				return err
			}
		}
	}
	_, err = readAll(data, m, opts...)
	return err
}

// fixSignature makes the signature trailer's and record's checksums match
// their bytes, where the file ends in a signature trailer.
func fixSignature(b []byte) []byte {
	b = bytes.Clone(b)
	le := binary.LittleEndian
	tab := crc32.MakeTable(crc32.Castagnoli)
	n := len(b)
	if n < 20 || string(b[n-4:]) != "WMZS" {
		return b
	}
	le.PutUint32(b[n-8:], crc32.Checksum(b[n-16:n-8], tab))
	end := n - 16 - 4
	if at := le.Uint64(b[n-16:]); at < uint64(end) {
		le.PutUint32(b[end:], crc32.Checksum(b[at:end], tab))
	}
	return b
}

// unsignedPart is data before its signature record, as its signature
// trailer places it (all of data if that is not possible).
func unsignedPart(data []byte) []byte {
	if len(data) < 16 {
		return data
	}
	if at := binary.LittleEndian.Uint64(data[len(data)-16:]); at <= uint64(len(data)) {
		return data[:at]
	}
	return data
}
