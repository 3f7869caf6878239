// Package hook gives the command line and the bench tooling what package
// wmzip does not export: the distortion search's trace and outcome, the
// container beneath a File, and options passed through to package format.
// Package wmzip sets the functions when it initializes; the values of type
// any are its WriterOption and ReaderOption, its *Writer, *File and
// *Codec.
package hook

import (
	"context"
	"io"

	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/wm"
)

var (
	// WithProbe reports every trial encoding of a Writer's distortion
	// search.
	WithProbe func(fn func(format.Probe)) any
	// WithProgress reports a Writer's distortion search, one call per
	// trial encoding ("searching", n, 0).
	WithProgress func(fn func(stage string, done, total int)) any
	// WithContext lets a Writer's distortion search stop when ctx is done.
	WithContext func(ctx context.Context) any
	// WithFormatOptions passes options to the container's writer.
	WithFormatOptions func(opts ...format.Option) any
	// WithReadOptions passes options to the container's reader (a
	// ReaderOption).
	WithReadOptions func(opts ...format.Option) any

	// Search returns a Writer's distortion search outcome after Close (nil
	// without a distortion target).
	Search func(w any) *format.LambdaResult
	// Quantizer returns the mean relative squared error, against the
	// float observations a Writer was given, of their lossless
	// reconstruction, and how many slot vectors that is.
	Quantizer func(w any) (float64, int64)
	// Container returns the container file beneath a File.
	Container func(f any) *format.File
	// Source returns what a File reads, its size and the options it was
	// opened with (a []ReaderOption), to read it again in order.
	Source func(f any) (r io.ReaderAt, size int64, opts any)
	// NewCodec wraps a world model as a *Codec, reading its quantizer
	// section if it has one: how package train returns what it built.
	NewCodec func(m *wm.Model) (any, error)
)
