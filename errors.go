package wmzip

import (
	"errors"

	"github.com/wmzip/wmzip/alloc"
	"github.com/wmzip/wmzip/format"
)

// Errors of the container, re-exported so that a caller needs this package
// only.
var (
	ErrCorrupt       = format.ErrCorrupt
	ErrChecksum      = format.ErrChecksum
	ErrModelMismatch = format.ErrModelMismatch
	ErrNoModel       = format.ErrNoModel
	ErrTooLarge      = format.ErrTooLarge
	ErrClosed        = format.ErrClosed
	// ErrInput reports an invalid argument: an option out of range,
	// observations or codes of the wrong size, an empty training set.
	ErrInput = format.ErrInput
	// ErrBudget reports a storage budget below the lowest retention level.
	ErrBudget = alloc.ErrBudget
)

var (
	// ErrNoQuantizer reports float observations given to a Codec trained
	// on codes only.
	ErrNoQuantizer = errors.New("wmzip: the codec has no quantizer for float observations")
	// ErrNoGate reports a lossy mode asked of a Codec trained without a
	// retention gate.
	ErrNoGate = errors.New("wmzip: the codec has no retention gate")
)

// FormatError reports invalid bytes at an offset of a file.
type FormatError = format.FormatError

// UnsupportedError reports a valid feature this version does not read.
type UnsupportedError = format.UnsupportedError
