package format

import (
	"errors"
	"fmt"
	"io"
)

// Sentinel errors. Decoding errors wrap exactly one of them.
var (
	// ErrCorrupt reports bytes that violate the container's structure.
	ErrCorrupt = errors.New("wmz: corrupt file")
	// ErrChecksum reports a checksum that does not match the bytes it covers
	// or the decoded reconstruction.
	ErrChecksum = errors.New("wmz: checksum mismatch")
	// ErrModelMismatch reports a model whose ID, geometry or precision differs
	// from the one the file was written with.
	ErrModelMismatch = errors.New("wmz: model mismatch")
	// ErrNoModel reports a file without an embedded model opened without one.
	ErrNoModel = errors.New("wmz: file has no embedded model and none was given")
	// ErrVersion reports a container version this package does not read.
	ErrVersion = errors.New("wmz: unsupported container version")
	// ErrUnsupported reports a valid feature this package does not implement.
	ErrUnsupported = errors.New("wmz: unsupported feature")
	// ErrTooLarge reports a file whose declared sizes exceed the decoder's
	// memory limit (see WithMaxMemory).
	ErrTooLarge = errors.New("wmz: exceeds decoder memory limit")
	// ErrInput reports an invalid argument to a Writer method (codes of the
	// wrong length or out of range, metadata that is not JSON, a state
	// outside an episode). Such calls write nothing and are not sticky.
	ErrInput = errors.New("wmz: invalid input")
	// ErrClosed reports use of a closed Writer or Reader.
	ErrClosed = errors.New("wmz: use of closed writer or reader")
)

// A FormatError reports that the input is not a valid .wmz file. Err is
// ErrCorrupt, ErrChecksum, ErrModelMismatch, ErrNoModel, ErrTooLarge or
// io.ErrUnexpectedEOF.
type FormatError struct {
	Offset int64 // byte offset in the file of the offending structure
	Msg    string
	Err    error
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%v at offset %d: %s", e.Err, e.Offset, e.Msg)
}

func (e *FormatError) Unwrap() error { return e.Err }

// An UnsupportedError reports a valid file that uses a version or feature
// this package does not implement. Err is ErrVersion or ErrUnsupported.
type UnsupportedError struct {
	Offset int64
	Msg    string
	Err    error
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%v at offset %d: %s", e.Err, e.Offset, e.Msg)
}

func (e *UnsupportedError) Unwrap() error { return e.Err }

func corrupt(off int64, format string, a ...any) error {
	return &FormatError{Offset: off, Msg: fmt.Sprintf(format, a...), Err: ErrCorrupt}
}

func badSum(off int64, what string) error {
	return &FormatError{Offset: off, Msg: what, Err: ErrChecksum}
}

func truncated(off int64, what string) error {
	return &FormatError{Offset: off, Msg: "truncated " + what, Err: io.ErrUnexpectedEOF}
}
