package sign

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/blake2b"
)

// SignDetached returns a minisign signature file of the bytes of r:
// Ed25519 over their BLAKE2b-512 hash (algorithm "ED", what minisign 0.10
// and later make and verify), then over the signature and trustedComment.
// Comments are one line each.
func SignDetached(k *SecretKey, r io.Reader, comment, trustedComment string) ([]byte, error) {
	if strings.ContainsAny(comment, "\r\n") || strings.ContainsAny(trustedComment, "\r\n") {
		return nil, fmt.Errorf("%w: a comment must be one line", ErrSignatureFormat)
	}
	if len(comment) >= maxComment || len(trustedComment) >= maxTrusted {
		return nil, fmt.Errorf("%w: comment too long", ErrSignatureFormat)
	}
	digest, err := prehash(r)
	if err != nil {
		return nil, err
	}
	s := make([]byte, 0, sigSize)
	s = append(s, algHashed...)
	s = append(s, k.ID[:]...)
	sig := ed25519.Sign(k.Key, digest)
	s = append(s, sig...)
	global := ed25519.Sign(k.Key, append(bytes.Clone(sig), trustedComment...))
	enc := base64.StdEncoding.EncodeToString
	return fmt.Appendf(nil, "%s%s\n%s\n%s%s\n%s\n", untrusted, comment, enc(s), trusted, trustedComment, enc(global)), nil
}

// VerifyDetached checks the minisign signature file sigText of the bytes
// of r against k, and returns its trusted comment. It accepts both of
// minisign's algorithms: "ED" (prehashed) and the legacy "Ed", which reads
// the whole message into memory.
func VerifyDetached(k *PublicKey, r io.Reader, sigText []byte) (trustedComment string, err error) {
	lines := keyLines(sigText)
	if len(lines) != 4 || !strings.HasPrefix(lines[0], untrusted) || !strings.HasPrefix(lines[2], trusted) {
		return "", fmt.Errorf("%w: want four lines: comment, signature, trusted comment, global signature", ErrSignatureFormat)
	}
	s, err := base64.StdEncoding.DecodeString(lines[1])
	if err != nil || len(s) != sigSize {
		return "", fmt.Errorf("%w: signature line", ErrSignatureFormat)
	}
	global, err := base64.StdEncoding.DecodeString(lines[3])
	if err != nil || len(global) != ed25519.SignatureSize {
		return "", fmt.Errorf("%w: global signature line", ErrSignatureFormat)
	}
	alg := string(s[:2])
	if alg != algEd && alg != algHashed {
		return "", fmt.Errorf("%w: algorithm %q", ErrSignatureFormat, alg)
	}
	if !bytes.Equal(s[2:2+KeyIDSize], k.ID[:]) {
		var id KeyID
		copy(id[:], s[2:])
		return "", fmt.Errorf("%w: signed by key %s, not %s", ErrWrongKey, id, k.ID)
	}
	var msg []byte
	if alg == algHashed {
		msg, err = prehash(r)
	} else {
		msg, err = io.ReadAll(r)
	}
	if err != nil {
		return "", err
	}
	sig := s[2+KeyIDSize:]
	if !Verify(k, msg, sig) {
		return "", fmt.Errorf("%w: the file differs from the one signed", ErrBadSignature)
	}
	tc := strings.TrimPrefix(lines[2], trusted)
	if !Verify(k, append(bytes.Clone(sig), tc...), global) {
		return "", fmt.Errorf("%w: trusted comment", ErrBadSignature)
	}
	return tc, nil
}

func prehash(r io.Reader) ([]byte, error) {
	h, _ := blake2b.New512(nil)
	if _, err := io.Copy(h, r); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
