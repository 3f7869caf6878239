package wmzip

import (
	"os"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/sign"
)

// Errors of a read WithPublicKey (SPEC.md 6.16), each for its own way of
// altering a signed file, to test with errors.Is; a record that fails is
// reported as a *RecordError naming its episode and chunk.
var (
	// ErrUnsigned reports a file without a signature.
	ErrUnsigned = format.ErrUnsigned
	// ErrCutShort reports a signed file cut short: its valid prefix is not
	// signed.
	ErrCutShort = format.ErrCutShort
	// ErrWrongKey reports a file signed by another key.
	ErrWrongKey = format.ErrWrongKey
	// ErrBadSignature reports a signature that does not verify.
	ErrBadSignature = format.ErrBadSignature
	// ErrRollback reports a generation below WithMinGeneration's.
	ErrRollback = format.ErrRollback
	// ErrPrefixAltered reports an altered header, model or level table.
	ErrPrefixAltered = format.ErrPrefixAltered
	// ErrIndexAltered reports an altered index or trailer.
	ErrIndexAltered = format.ErrIndexAltered
	// ErrRecordAltered reports a record edited in place.
	ErrRecordAltered = format.ErrRecordAltered
	// ErrRecordForeign reports a whole, valid record that the signature
	// does not cover: from another file, or coded anew.
	ErrRecordForeign = format.ErrRecordForeign
	// ErrRecordMoved reports a record holding another signed record.
	ErrRecordMoved = format.ErrRecordMoved
	// ErrSigned reports an Append to a signed file that neither re-signs
	// it nor drops its signature.
	ErrSigned = format.ErrSigned
)

// A RecordError reports a record that fails its signed hash: its episode
// and chunk (−1 for the episode record), offset and error.
type RecordError = format.RecordError

// Signature is what a file's signature record says.
type Signature = format.Signature

// WithPublicKey makes Open, NewFile, NewReader and DecodeAll accept only a
// file signed by pub (package sign reads minisign public key files), and
// check every chunk they read against its signed hash (SPEC.md 6.16): a
// file without a signature, or signed by another key, is refused, and a
// chunk that fails is reported as a *RecordError naming it.
func WithPublicKey(pub *sign.PublicKey) ReaderOption {
	return readerOpt(func(c *readerConfig) error {
		c.format = append(c.format, format.WithPublicKey(pub))
		return nil
	})
}

// WithMinGeneration makes a read with WithPublicKey refuse a file signed
// at a generation below g (format.ErrRollback): a reader that keeps the
// last generation it read (File.Signature) is not given an older version.
func WithMinGeneration(g uint64) ReaderOption {
	return readerOpt(func(c *readerConfig) error {
		c.format = append(c.format, format.WithMinGeneration(g))
		return nil
	})
}

// WithSigningKey makes Append re-sign the file with k when its Writer is
// closed (a signed file's generation goes up by one).
func WithSigningKey(k *sign.SecretKey) WriterOption {
	return writerOpt(func(c *writerConfig) error {
		c.format = append(c.format, format.WithSigningKey(k))
		return nil
	})
}

// WithDropSignature lets Append write to a signed file without re-signing
// it: the file becomes unsigned. Without it or WithSigningKey, Append
// refuses a signed file (format.ErrSigned).
func WithDropSignature() WriterOption {
	return writerOpt(func(c *writerConfig) error {
		c.format = append(c.format, format.WithDropSignature())
		return nil
	})
}

// Signature returns what the file's signature record says, and false for
// an unsigned file; Verified is set when it was opened WithPublicKey.
func (f *File) Signature() (Signature, bool) { return f.f.Signature() }

// SignFile signs the .wmz file name in place with k: it writes (or
// replaces) the signature record at its end, and returns what it says.
// The file is checked (header, index, every record's checksum) first,
// and a file k signed before against that signature: an altered file is
// refused (ErrRecordAltered and the others), not signed anew. A file
// signed by another key is refused unless rekey is set, which signs the
// file as it stands under a new file ID at generation 1 (rotating keys,
// SECURITY.md).
func SignFile(name string, k *sign.SecretKey, rekey bool) (Signature, error) {
	fh, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return Signature{}, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return Signature{}, err
	}
	var opts []format.Option
	if rekey {
		opts = append(opts, format.WithDropSignature())
	}
	size, err := format.Sign(fh, st.Size(), k, opts...)
	if err != nil {
		return Signature{}, err
	}
	if err := fh.Sync(); err != nil {
		return Signature{}, err
	}
	sig, _, err := format.ReadSignature(fh, size)
	return sig, err
}
