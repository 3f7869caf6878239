package format

import (
	"crypto/sha256"
	"fmt"

	"github.com/wmzip/wmzip/wm"
)

// resolveModel picks the model to decode with: the caller's, which must
// carry the header's model ID, else the embedded one, whose bytes must hash
// to that ID. Either must match the header's geometry and precision.
func resolveModel(h *Header, raw []byte, given *wm.Model) (*wm.Model, error) {
	if raw != nil {
		sum := sha256.Sum256(raw)
		if [wm.ModelIDSize]byte(sum[:wm.ModelIDSize]) != h.ModelID {
			return nil, badSum(HeaderSize, "embedded model does not hash to the model ID")
		}
	}
	m := given
	switch {
	case given != nil:
		if given.ID() != h.ModelID {
			return nil, &FormatError{Offset: 32, Msg: fmt.Sprintf("file needs model %v, given %v", h.ModelID, given.ID()), Err: ErrModelMismatch}
		}
	case raw != nil:
		var err error
		if m, err = wm.UnmarshalModel(raw); err != nil {
			return nil, corrupt(HeaderSize, "embedded model: %v", err)
		}
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
