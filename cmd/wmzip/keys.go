package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"

	"golang.org/x/term"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/sign"
)

// password returns a function that reads a password: the first line of
// file when it is given, else typed at the terminal (twice with confirm),
// else the first line of the standard input, as minisign reads it.
func password(file string, confirm bool) func() ([]byte, error) {
	return func() ([]byte, error) {
		if file != "" {
			b, err := os.ReadFile(file)
			if err != nil {
				return nil, err
			}
			return firstLine(b)
		}
		fd := int(os.Stdin.Fd())
		if !term.IsTerminal(fd) {
			line, err := bufio.NewReader(os.Stdin).ReadBytes('\n')
			if err != nil && len(line) == 0 {
				return nil, errors.New("no password on the standard input (or give --password-file)")
			}
			return firstLine(line)
		}
		fmt.Fprint(os.Stderr, "Password: ")
		pw, err := term.ReadPassword(fd)
		fmt.Fprintln(os.Stderr)
		if err != nil {
			return nil, err
		}
		if confirm {
			fmt.Fprint(os.Stderr, "Password (one more time): ")
			again, err := term.ReadPassword(fd)
			fmt.Fprintln(os.Stderr)
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(pw, again) {
				return nil, errors.New("the passwords differ")
			}
		}
		return pw, nil
	}
}

func firstLine(b []byte) ([]byte, error) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) == 0 {
		return nil, errors.New("empty password")
	}
	return b, nil
}

// loadSecretKey reads a secret key file, asking for its password if it is
// encrypted.
func loadSecretKey(path, passwordFile string) (*sign.SecretKey, error) {
	return sign.ReadSecretKeyFile(path, password(passwordFile, false))
}

// appendSigning returns the options of an append to the file old at path:
// re-signing with the secret key at keyPath, or dropping the signature,
// and refuses a signed file with neither.
func appendSigning(path string, old interface {
	Signature() (format.Signature, bool)
}, keyPath, pwFile string, drop bool) ([]wmzlib.WriterOption, error) {
	s, signed := old.Signature()
	switch {
	case keyPath != "" && drop:
		return nil, errors.New("--key and --drop-signature exclude each other")
	case keyPath != "":
		k, err := loadSecretKey(keyPath, pwFile)
		if err != nil {
			return nil, err
		}
		return []wmzlib.WriterOption{wmzlib.WithSigningKey(k)}, nil
	case drop:
		return []wmzlib.WriterOption{wmzlib.WithDropSignature()}, nil
	case signed:
		return nil, fmt.Errorf("%s is signed by key %s: append --key name.key re-signs it, --drop-signature leaves it unsigned", path, s.KeyID)
	}
	return nil, nil
}
