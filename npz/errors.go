package npz

import (
	"errors"
	"strconv"
)

// Error kinds. Every error returned while decoding a file is an *Error whose
// Kind is one of these, so callers can tell them apart with errors.Is.
var (
	// ErrFormat marks input that is not a valid .npy or .npz file: a bad
	// magic string or header, a damaged zip directory, truncated data,
	// sizes that disagree.
	ErrFormat = errors.New("npz: invalid format")

	// ErrUnsupported marks valid numpy data that this package does not
	// read: big-endian or object dtypes, dtypes outside the
	// supported set, zip compression methods other than store and deflate.
	ErrUnsupported = errors.New("npz: unsupported feature")

	// ErrTooLarge marks input whose decoded arrays would need more memory
	// than the limit set with WithMaxBytes.
	ErrTooLarge = errors.New("npz: arrays exceed the memory limit")

	// ErrContract marks a readable file whose arrays break the trajectory
	// contract: a missing codes/obs array, wrong dtype or number of
	// dimensions, disagreeing step counts, bad episode starts.
	ErrContract = errors.New("npz: not a valid trajectory")
)

// Error describes a problem with one file or one array in it.
// Its message is one line: "npz: FILE: array "NAME" MSG[: CAUSE]".
type Error struct {
	Path  string // file as given by the caller; empty when decoding from a reader
	Array string // array name; empty when the problem concerns the whole file
	Kind  error  // ErrFormat, ErrUnsupported, ErrTooLarge or ErrContract
	Msg   string // what is wrong
	Err   error  // underlying cause such as io.ErrUnexpectedEOF; may be nil
}

func (e *Error) Error() string {
	s := "npz: "
	if e.Path != "" {
		s += e.Path + ": "
	}
	if e.Array != "" {
		s += "array " + strconv.Quote(e.Array) + " "
	}
	s += e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the kind and the cause, so that both
// errors.Is(err, ErrFormat) and errors.Is(err, io.ErrUnexpectedEOF) work.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 2)
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}
