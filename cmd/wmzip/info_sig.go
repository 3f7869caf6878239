package main

import (
	"encoding/hex"
	"fmt"

	"github.com/wmzip/wmzip/internal/format"
)

// signatureJSON is what info says of a file's signature record: checked
// for damage, not verified (that takes the public key: verify --key).
type signatureJSON struct {
	Signed     bool   `json:"signed"`
	KeyID      string `json:"key_id,omitempty"`
	FileID     string `json:"file_id,omitempty"`
	Generation uint64 `json:"generation,omitempty"`
	Time       int64  `json:"time,omitempty"`
}

func readSignatureInfo(path string) (*signatureJSON, error) {
	fh, err := openInput(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	s, ok, err := format.ReadSignature(fh, fh.Size())
	if err != nil || !ok {
		return nil, err
	}
	return &signatureJSON{Signed: true, KeyID: s.KeyID.String(), FileID: hex.EncodeToString(s.FileID[:]), Generation: s.Generation, Time: s.Time}, nil
}

// text is info's line; s is nil for an unsigned file (absent from JSON).
func (s *signatureJSON) text() string {
	if s == nil || !s.Signed {
		return "signature    unsigned"
	}
	return fmt.Sprintf("signature    signed by key %s, generation %d, file %s (not verified here: verify --key)", s.KeyID, s.Generation, s.FileID)
}
