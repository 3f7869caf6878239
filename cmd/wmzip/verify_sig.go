package main

import (
	"fmt"
	"os"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/sign"
)

// signedRead holds verify's signature flags.
type signedRead struct {
	key    *string
	minGen *uint64
	sig    *string
	pub    *sign.PublicKey
}

func (s *signedRead) flags(fs interface {
	String(name, value, usage string) *string
	Uint64(name string, value uint64, usage string) *uint64
}) {
	s.key = fs.String("key", "", "public key file: the file must be signed by it, and every record is checked against its signed hash")
	s.minGen = fs.Uint64("min-generation", 0, "with --key: refuse a file signed at an older generation (a replayed old version)")
	s.sig = fs.String("sig", "", "with --key: detached signature to check too (default: file.wmz.minisig when it exists)")
}

// options returns the reader options the flags ask for.
func (s *signedRead) options() ([]wmzlib.ReaderOption, error) {
	if *s.key == "" {
		if *s.minGen != 0 || *s.sig != "" {
			return nil, fmt.Errorf("--min-generation and --sig need --key")
		}
		return nil, nil
	}
	pub, err := sign.ReadPublicKeyFile(*s.key)
	if err != nil {
		return nil, err
	}
	s.pub = pub
	return []wmzlib.ReaderOption{wmzlib.WithPublicKey(pub), wmzlib.WithMinGeneration(*s.minGen)}, nil
}

// detached checks the detached signature of path, when one is named or
// lies beside it, and describes what was verified.
func (s *signedRead) detached(path string, f *wmzlib.File) (string, error) {
	if s.pub == nil {
		return "", nil
	}
	sg, _ := f.Signature()
	msg := fmt.Sprintf("signed by key %s (generation %d), every record matches its signed hash", sg.KeyID, sg.Generation)
	sigPath := *s.sig
	if sigPath == "" {
		if _, err := os.Stat(path + ".minisig"); err != nil {
			return msg, nil
		}
		sigPath = path + ".minisig"
	}
	text, err := os.ReadFile(sigPath)
	if err != nil {
		return "", err
	}
	fh, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	if _, err := sign.VerifyDetached(s.pub, fh, text); err != nil {
		return "", fmt.Errorf("%s: detached signature %s: %w", path, sigPath, err)
	}
	return msg + ", detached signature " + sigPath + " verified", nil
}
