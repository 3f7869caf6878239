package wmzip

import (
	"os"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/sign"
)

// WithPublicKey makes Open, NewFile, NewReader and DecodeAll accept only a
// file signed by pub (package sign reads minisign public key files), and
// check every chunk they read against its signed hash (SPEC.md 6.16): a
// file without a signature, or signed by another key, is refused, and a
// chunk that fails is reported as a *format.RecordError naming it.
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
func (f *File) Signature() (format.Signature, bool) { return f.f.Signature() }

// SignFile signs the .wmz file name in place with k: it writes (or
// replaces) the signature record at its end, and returns what it says.
// The file is checked (header, index, every record's checksum) first. A
// file signed by another key is refused unless rekey is set, which starts
// a new file ID and generation (rotating keys, SECURITY.md).
func SignFile(name string, k *sign.SecretKey, rekey bool) (format.Signature, error) {
	fh, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return format.Signature{}, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return format.Signature{}, err
	}
	var opts []format.Option
	if rekey {
		opts = append(opts, format.WithDropSignature())
	}
	size, err := format.Sign(fh, st.Size(), k, opts...)
	if err != nil {
		return format.Signature{}, err
	}
	if err := fh.Sync(); err != nil {
		return format.Signature{}, err
	}
	sig, _, err := format.ReadSignature(fh, size)
	return sig, err
}
