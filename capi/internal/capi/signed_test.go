package capi

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/sign"
)

// firstChunk returns the offset and length of the first chunk record of
// a signed file b, found from its signature record (SPEC.md 6.16):
// BodyStart, the first episode record, then its first chunk.
func firstChunk(t *testing.T, b []byte) (off, n int) {
	t.Helper()
	le := binary.LittleEndian
	covered := int(le.Uint64(b[len(b)-16:]))
	body := int(le.Uint64(b[covered+56:]))
	off = body + 8 + int(le.Uint32(b[body+4:])) + 4
	if b[body] != 'E' || b[off] != 'C' {
		t.Fatalf("no episode record at %d or chunk record at %d", body, off)
	}
	return off, 16 + int(le.Uint32(b[off+8:])) + 4
}

// TestSignedReads: OpenFile with public_key reads a signed file as the
// unsigned one, and refuses with ErrSignature an unsigned file, another
// key's file, an older generation, and a chunk altered after signing,
// that one naming the chunk.
func TestSignedReads(t *testing.T) {
	fx := setup(t)
	plain, err := os.ReadFile(fx.path)
	if err != nil {
		t.Fatal(err)
	}
	k, err := sign.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := sign.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	signed := fx.path + ".signed.wmz"
	if err := os.WriteFile(signed, plain, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := wmzip.SignFile(signed, k, false); err != nil {
		t.Fatal(err)
	}
	opts := func(pub *sign.PublicKey, extra string) []byte {
		b, _ := json.Marshal(string(sign.MarshalPublicKey(pub)))
		return []byte(`{"public_key": ` + string(b) + extra + `}`)
	}
	n := len(fx.codes[0]) / len(fx.eps[0].Actions)
	state := func(path string, o []byte) ([]uint16, error) {
		h, err := OpenFile(path, fx.codec, o)
		if err != nil {
			return nil, err
		}
		defer CloseFile(h)
		dst := make([]uint16, n)
		_, err = FileState(h, 0, 0, Codes{U16: dst})
		return dst, err
	}
	want, err := state(fx.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := state(signed, opts(k.Public(), ""))
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("signed read: %v, %v want %v", err, got, want)
	}
	b, _ := os.ReadFile(signed)
	off, _ := firstChunk(t, b)
	b[off+16] ^= 1 // a byte of the first chunk's stream
	altered := fx.path + ".altered.wmz"
	if err := os.WriteFile(altered, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		opts       []byte
		want       error
		says       string
	}{
		{"unsigned", fx.path, opts(k.Public(), ""), wmzip.ErrUnsigned, "not signed"},
		{"another key", signed, opts(other.Public(), ""), wmzip.ErrWrongKey, "another key"},
		{"older generation", signed, opts(k.Public(), `, "min_generation": 2`), wmzip.ErrRollback, "older"},
		{"chunk altered", altered, opts(k.Public(), ""), wmzip.ErrRecordAltered, "episode 0 chunk 0"},
	} {
		_, err := state(c.path, c.opts)
		if Code(err) != ErrSignature || !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v (code %d), want %v (code %d) saying %q", c.name, err, Code(err), c.want, ErrSignature, c.says)
		}
	}
	var re *wmzip.RecordError
	if _, err := state(altered, opts(k.Public(), "")); !errors.As(err, &re) || re.Episode != 0 || re.Chunk != 0 {
		t.Errorf("altered chunk: %v is not a RecordError naming episode 0 chunk 0", err)
	}
	// Without the key the altered file opens (its CRC fails only when the
	// chunk is read); the key is what refuses it as altered.
	if _, err := state(altered, nil); err == nil || Code(err) == ErrSignature {
		t.Errorf("altered chunk without the key: %v", err)
	}
	if _, err := OpenFile(signed, fx.codec, []byte(`{"min_generation": 1}`)); Code(err) != ErrInput {
		t.Errorf("min_generation without public_key: %v", err)
	}
}
