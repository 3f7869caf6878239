package capi

import (
	"bytes"
	"io"
	"os"
	"sync"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/format"
)

// Reader is the object of a reader handle: a wmzip.Reader of a file it
// opened, its calls serialized.
type Reader struct {
	mu    sync.Mutex
	r     *wmzip.Reader // nil once closed
	fh    *os.File
	codec *wmzip.Codec
	geom  shape
	meta  []byte // the current episode's
	buf   []uint16
}

// OpenReader opens the .wmz file at path to read in order, with the codec
// of handle codec (0: the model the file embeds) and JSON options
// (threads).
func OpenReader(path string, codec Handle, options []byte) (Handle, error) {
	c, err := codecOrNil(codec)
	if err != nil {
		return 0, err
	}
	var o readOptions
	if err := decodeOptions(options, &o); err != nil {
		return 0, err
	}
	fh, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	if c == nil {
		if c, err = embedded(fh); err != nil {
			fh.Close()
			return 0, err
		}
	}
	opts, err := o.options()
	if err != nil {
		fh.Close()
		return 0, err
	}
	r, err := wmzip.NewReader(fh, c, opts...)
	if err != nil {
		fh.Close()
		return 0, err
	}
	return add(&Reader{r: r, fh: fh, codec: r.Codec(), geom: shapeOf(r.Codec())}), nil
}

// embedded returns the codec of the model the stream fh embeds, and
// rewinds it.
func embedded(fh *os.File) (*wmzip.Codec, error) {
	fr, err := format.NewReader(fh, nil)
	if err != nil {
		return nil, err
	}
	c, err := wmzip.NewCodec(fr.Model())
	if err != nil {
		return nil, err
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return c, nil
}

// reader runs fn on the reader of h, alone, unless it is closed.
func reader(h Handle, fn func(r *Reader) error) error {
	r, err := lookup[*Reader](h, "reader")
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.r == nil {
		return closedf("the reader of handle %d was closed", h)
	}
	return fn(r)
}

// ReaderCodec returns a new handle to the codec the stream is read with.
func ReaderCodec(h Handle) (c Handle, err error) {
	err = reader(h, func(r *Reader) error { c = newCodec(r.codec); return nil })
	return c, err
}

// ReaderNext moves to the next episode; io.EOF after the last.
func ReaderNext(h Handle) error {
	return reader(h, func(r *Reader) error {
		meta, err := r.r.NextEpisode()
		if err == nil {
			r.meta = bytes.Clone(meta)
		}
		return err
	})
}

// ReaderMeta returns the metadata of the current episode (nil: none).
func ReaderMeta(h Handle) (meta []byte, err error) {
	err = reader(h, func(r *Reader) error { meta = r.meta; return nil })
	return meta, err
}

// ReaderState decodes the next state of the episode: its action, and its
// codes to dst (none: the action only); io.EOF at the episode's end.
func ReaderState(h Handle, dst Codes) (action int64, err error) {
	err = reader(h, func(r *Reader) error {
		if !dst.None() {
			if err := fits(dst, r.geom.n, "codes", r.geom.k); err != nil {
				return err
			}
		}
		var codes []uint16
		if action, codes, err = r.r.ReadState(dst.dst(r.buf, r.geom.n)); err != nil {
			return err
		}
		if dst.U16 == nil {
			r.buf = codes
		}
		if !dst.None() {
			dst.put(codes)
		}
		return nil
	})
	return action, err
}

// ReaderObs decodes the next state of the episode: its action, and its
// reconstructed slot vectors to dst; io.EOF at the episode's end.
func ReaderObs(h Handle, dst []float32) (action int64, err error) {
	err = reader(h, func(r *Reader) error {
		if r.geom.floats == 0 {
			_, _, err := r.r.ReadObs(nil) // the codec's own error
			return err
		}
		if len(dst) < r.geom.floats {
			return Inputf("an array of %d floats cannot hold the %d of a state", len(dst), r.geom.floats)
		}
		action, _, err = r.r.ReadObs(dst[:0:r.geom.floats])
		return err
	})
	return action, err
}

// ReaderLevel returns the retention level of the state read last (see
// wmzip.Reader.Level).
func ReaderLevel(h Handle) (level int, err error) {
	err = reader(h, func(r *Reader) error { level = r.r.Level(); return nil })
	return level, err
}

// CloseReader closes the reader of h. Closing it again does nothing.
func CloseReader(h Handle) error {
	r, ok, err := release[*Reader](h, "reader")
	if !ok {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.r = nil
	return r.fh.Close()
}
