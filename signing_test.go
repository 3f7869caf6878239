package wmzip_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/sign"
)

// TestSignedFile: the root's face of signed files. SignFile signs, Open
// WithPublicKey reads what was written and refuses, with errors the root
// exports, an unsigned file, another key, an older generation and an
// altered chunk (a RecordError naming it); Append WithSigningKey re-signs.
func TestSignedFile(t *testing.T) {
	codec := codesCodec()
	eps := walks.CodesOnly(walks.Episodes(2, 2))
	dir := t.TempDir()
	plain, signed := filepath.Join(dir, "plain.wmz"), filepath.Join(dir, "signed.wmz")
	w, err := wmzip.Create(plain, codec, wmzip.WithKeyframeInterval(8))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAll(eps); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(signed, b, 0o644)
	k, _ := sign.GenerateKey(nil)
	other, _ := sign.GenerateKey(nil)
	sig, err := wmzip.SignFile(signed, k, false)
	if err != nil || sig.KeyID != k.ID || sig.Generation != 1 {
		t.Fatalf("SignFile: %+v %v", sig, err)
	}
	pub := wmzip.WithPublicKey(k.Public())
	read := func(path string, opts ...wmzip.ReaderOption) error {
		f, err := wmzip.Open(path, codec, opts...)
		if err != nil {
			return err
		}
		defer f.Close()
		for e, n := range f.Episodes() {
			for t := range n {
				if _, _, err := f.State(e, t, nil); err != nil {
					return err
				}
			}
		}
		return nil
	}
	f, err := wmzip.Open(signed, codec, pub)
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := f.State(1, 3, nil)
	if err != nil || !slices.Equal(got, eps[1].Codes[3*len(got):4*len(got)]) {
		t.Fatalf("signed read: %v", err)
	}
	if s, ok := f.Signature(); !ok || !s.Verified {
		t.Fatalf("Signature: %+v %v", s, ok)
	}
	f.Close()

	// An altered chunk: the first chunk record, found from the signature
	// record's BodyStart (SPEC.md 6.16), one byte of its stream flipped.
	sb, _ := os.ReadFile(signed)
	le := binary.LittleEndian
	covered := int(le.Uint64(sb[len(sb)-16:]))
	body := int(le.Uint64(sb[covered+56:]))
	sb[body+8+int(le.Uint32(sb[body+4:]))+4+16] ^= 1
	altered := filepath.Join(dir, "altered.wmz")
	os.WriteFile(altered, sb, 0o644)

	for _, c := range []struct {
		name string
		path string
		opts []wmzip.ReaderOption
		want error
	}{
		{"unsigned", plain, []wmzip.ReaderOption{pub}, wmzip.ErrUnsigned},
		{"another key", signed, []wmzip.ReaderOption{wmzip.WithPublicKey(other.Public())}, wmzip.ErrWrongKey},
		{"older generation", signed, []wmzip.ReaderOption{pub, wmzip.WithMinGeneration(2)}, wmzip.ErrRollback},
		{"chunk altered", altered, []wmzip.ReaderOption{pub}, wmzip.ErrRecordAltered},
	} {
		if err := read(c.path, c.opts...); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	var re *wmzip.RecordError
	if err := read(altered, pub); !errors.As(err, &re) || re.Episode != 0 || re.Chunk != 0 {
		t.Errorf("altered chunk: %v names no episode 0 chunk 0", err)
	}

	// Append: refused unless it re-signs or drops; re-signed, generation 2.
	fh, err := os.OpenFile(signed, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := wmzip.Append(fh, codec); !errors.Is(err, wmzip.ErrSigned) {
		t.Fatalf("Append without a choice: %v", err)
	}
	aw, err := wmzip.Append(fh, codec, wmzip.WithSigningKey(k))
	if err != nil {
		t.Fatal(err)
	}
	if err := aw.WriteAll(eps[:1]); err != nil {
		t.Fatal(err)
	}
	if err := aw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := read(signed, pub, wmzip.WithMinGeneration(2)); err != nil {
		t.Fatalf("after a re-signing Append: %v", err)
	}
}
