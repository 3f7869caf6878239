package capi

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/search"
)

// The status codes of the C interface (wmzip.h): 0 and WMZ_EOF succeed,
// the negative ones are errors, each a sentinel of package wmzip or an
// operating system's error.
const (
	OK             = 0
	EOF            = 1  // the end of an episode or of the file (a Reader)
	ErrInput       = -1 // wmzip.ErrInput: an invalid argument
	ErrCorrupt     = -2 // wmzip.ErrCorrupt: not a valid .wmz file
	ErrChecksum    = -3 // wmzip.ErrChecksum
	ErrMismatch    = -4 // wmzip.ErrModelMismatch
	ErrNoModel     = -5 // wmzip.ErrNoModel
	ErrTooLarge    = -6 // wmzip.ErrTooLarge
	ErrClosed      = -7 // wmzip.ErrClosed, or a handle already released
	ErrUnsupported = -8 // a valid file of a version or feature this library does not read
	ErrNotFound    = -9 // the operating system's "no such file"
	ErrPermission  = -10
	ErrIO          = -11 // another error of the operating system
	ErrBuffer      = -12 // an output buffer too small: the size needed is returned
	ErrInternal    = -13 // a bug of the library (a recovered panic)
	ErrOther       = -14 // any other error
	ErrSignature   = -15 // a signed read refused: unsigned, another key, or altered (format's signature errors)
)

// Code returns the status code of err.
func Code(err error) int {
	var pe *fs.PathError
	switch {
	case err == nil:
		return OK
	case errors.Is(err, io.EOF):
		return EOF
	case errors.Is(err, errBuffer):
		return ErrBuffer
	case errors.Is(err, errInternal):
		return ErrInternal
	case isSignature(err):
		return ErrSignature
	case errors.Is(err, wmzip.ErrChecksum):
		return ErrChecksum
	case errors.Is(err, wmzip.ErrModelMismatch), errors.Is(err, search.ErrStale):
		return ErrMismatch
	case errors.Is(err, wmzip.ErrNoModel):
		return ErrNoModel
	case errors.Is(err, wmzip.ErrTooLarge):
		return ErrTooLarge
	case errors.Is(err, wm.ErrModelTooLarge):
		return ErrTooLarge
	case errors.Is(err, format.ErrVersion), errors.Is(err, format.ErrUnsupported), errors.Is(err, wm.ErrModelVersion):
		return ErrUnsupported
	case errors.Is(err, wmzip.ErrCorrupt), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, wm.ErrModelFormat),
		errors.Is(err, opq.ErrCorrupt), errors.Is(err, gate.ErrSection), errors.Is(err, search.ErrIndex):
		return ErrCorrupt
	case errors.Is(err, wmzip.ErrClosed):
		return ErrClosed
	case errors.Is(err, wmzip.ErrInput), errors.Is(err, npz.ErrContract), errors.Is(err, search.ErrInput):
		return ErrInput
	case errors.Is(err, fs.ErrNotExist):
		return ErrNotFound
	case errors.Is(err, fs.ErrPermission):
		return ErrPermission
	case errors.As(err, &pe):
		return ErrIO
	}
	return ErrOther
}

// isSignature reports whether err is one of the errors of a signed read.
func isSignature(err error) bool { return format.IsSignatureError(err) }

var (
	errBuffer   = errors.New("output buffer too small")
	errInternal = errors.New("wmzip: internal error")
)

// Inputf returns an error wrapping wmzip.ErrInput.
func Inputf(f string, args ...any) error {
	return fmt.Errorf("%w: %s", wmzip.ErrInput, fmt.Sprintf(f, args...))
}

// BufferError is the error of an output of need bytes given a buffer
// of have.
func BufferError(need int, have uint64) error {
	return fmt.Errorf("%w: %d bytes needed, %d given", errBuffer, need, have)
}

// closedf returns an error wrapping wmzip.ErrClosed.
func closedf(f string, args ...any) error {
	return fmt.Errorf("%w: %s", wmzip.ErrClosed, fmt.Sprintf(f, args...))
}

// Recovered turns a panic's value into an error (ErrInternal): the C
// library recovers every panic, so that a bug costs the call, not the
// process.
func Recovered(v any) error { return fmt.Errorf("%w: %v", errInternal, v) }
