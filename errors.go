package wmzip

import (
	"github.com/wmzip/wmzip/internal/check"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/wm"
)

// Errors of this package and of the container beneath, to test with
// errors.Is. A damaged file gives an error wrapping ErrCorrupt (a
// *format.FormatError carrying the offset, for errors.As).
var (
	// ErrCorrupt reports bytes that are not a valid .wmz file.
	ErrCorrupt = format.ErrCorrupt
	// ErrChecksum reports a record whose checksum does not match.
	ErrChecksum = format.ErrChecksum
	// ErrModelMismatch reports a codec other than the one the file names.
	ErrModelMismatch = format.ErrModelMismatch
	// ErrNoModel reports a file without an embedded model read without a
	// codec.
	ErrNoModel = format.ErrNoModel
	// ErrTooLarge reports a file or an option beyond a memory limit.
	ErrTooLarge = format.ErrTooLarge
	// ErrClosed reports a call on a closed Writer or File.
	ErrClosed = format.ErrClosed
	// ErrInput reports an invalid argument: an option out of range,
	// observations or codes of the wrong size, a lossy mode asked of a
	// codec without a retention gate, observations given to a codec
	// without a quantizer.
	ErrInput = format.ErrInput
	// ErrVersion reports a file of a container version this package does
	// not read.
	ErrVersion = format.ErrVersion
	// ErrUnsupported reports a file using a feature this package does not
	// implement.
	ErrUnsupported = format.ErrUnsupported
	// ErrModelFormat reports bytes that are not a valid model file.
	ErrModelFormat = wm.ErrModelFormat
	// ErrModelVersion reports a model file of a version this package does
	// not read.
	ErrModelVersion = wm.ErrModelVersion
	// ErrModelTooLarge reports a model file beyond the memory limit.
	ErrModelTooLarge = wm.ErrModelTooLarge
)

// errNoQuantizer and errNoGate are the ErrInput of a codec that lacks a
// part.
var (
	errNoQuantizer = inputError("the codec has no quantizer for float observations (it was trained on codes)")
	errNoGate      = inputError("the codec has no retention gate, which the lossy modes need (train it with a gate)")
)

// inputError returns an error wrapping ErrInput whose message is msg.
func inputError(msg string) error { return check.Errorf("wmzip: %s", msg) }
