package format

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/wmzip/wmzip/internal/wm"
)

// resolveModel picks the model to decode with: the caller's, which must
// carry the header's model ID, else the embedded one, whose ID (the hash of
// its canonical content, SPEC.md 1.5) must be that ID. Either must match the
// header's geometry and precision.
func resolveModel(h *Header, raw []byte, given *wm.Model, maxMemory int64) (*wm.Model, error) {
	var embedded *wm.Model
	if raw != nil && len(raw) < 6 {
		// No version field: not a model file, whatever model is given.
		return nil, corrupt(HeaderSize, "embedded model of %d bytes has no version field", len(raw))
	}
	if raw != nil {
		// Files of model versions 1 and 2 are their canonical content: a
		// hash mismatch is found before parsing. Version 3 is hashed after.
		if len(raw) >= 6 && raw[4] < 3 && raw[5] == 0 {
			sum := sha256.Sum256(raw)
			if [wm.ModelIDSize]byte(sum[:wm.ModelIDSize]) != h.ModelID {
				return nil, badSum(HeaderSize, "embedded model does not hash to the model ID")
			}
		}
		v3 := len(raw) >= 6 && (raw[4] >= 3 || raw[5] != 0)
		if given == nil || v3 {
			var err error
			// The memory left for the model once the chunk buffers are
			// counted: a version-3 model may declare a store far larger
			// than its bytes.
			limit := max(maxMemory-(h.memory()-2*h.ModelSize), 1)
			if embedded, err = wm.UnmarshalModelLimit(raw, limit); err != nil {
				if errors.Is(err, wm.ErrModelTooLarge) {
					return nil, &FormatError{Offset: HeaderSize, Msg: fmt.Sprintf("embedded model: %v", err), Err: ErrTooLarge}
				}
				if v3 {
					// Its ID is known only once it parses: a model that
					// does not parse cannot match the header's ID.
					return nil, badSum(HeaderSize, fmt.Sprintf("embedded model does not match the model ID: %v", err))
				}
				return nil, corrupt(HeaderSize, "embedded model: %v", err)
			}
			if embedded.ID() != h.ModelID {
				return nil, badSum(HeaderSize, "embedded model does not hash to the model ID")
			}
		}
	}
	m := given
	switch {
	case given != nil:
		if given.ID() != h.ModelID {
			return nil, &FormatError{Offset: 32, Msg: fmt.Sprintf("file needs model %v, given %v", h.ModelID, given.ID()), Err: ErrModelMismatch}
		}
	case raw != nil:
		m = embedded
	default:
		return nil, &FormatError{Offset: 10, Msg: "pass the model the file was written with", Err: ErrNoModel}
	}
	if m.Geom != h.Geom || m.Precision != h.Precision {
		return nil, &FormatError{Offset: 12, Msg: "model geometry or precision differs from the header", Err: ErrModelMismatch}
	}
	return m, nil
}

// tooLarge reports sizes declared in a file whose decoding would need more
// memory than the limit: the file is small, its claims are not.
func tooLarge(off, need, limit int64) error {
	return &FormatError{Offset: off, Msg: fmt.Sprintf("sizes declared in the file need %d bytes of memory, limit %d", need, limit), Err: ErrTooLarge}
}
