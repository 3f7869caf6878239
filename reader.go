package wmzip

import (
	"fmt"
	"io"
	"os"

	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/wm"
)

// A ReaderOption configures Open, NewFile, NewReader and Recover.
type ReaderOption interface{ applyReader(*readerConfig) }

type readerConfig struct {
	format []format.Option
	access func(episode, step int64) // for the Reader; a File's is in format
}

type readerOpt []format.Option

func (o readerOpt) applyReader(c *readerConfig) { c.format = append(c.format, o...) }

// WithReadOptions passes options through to the container's reader (cache
// size, memory limit, recovery, access log; see package format).
func WithReadOptions(opts ...format.Option) ReaderOption { return readerOpt(opts) }

type accessLogOpt func(episode, step int64)

func (fn accessLogOpt) applyReader(c *readerConfig) {
	c.format = append(c.format, format.WithAccessLog(fn))
	c.access = fn
}

// WithAccessLog tells fn of every state a File or Reader returns, as the
// access trace that StoreByAccess later reads.
func WithAccessLog(fn func(episode, step int64)) ReaderOption { return accessLogOpt(fn) }

func readerOptions(opts []ReaderOption) readerConfig {
	var c readerConfig
	for _, o := range opts {
		o.applyReader(&c)
	}
	return c
}

// File reads a .wmz file at random through its index: one state or one
// episode at a time, as codes or as reconstructed observations. Its
// methods are safe for concurrent use.
type File struct {
	f     *format.File
	c     *Codec
	close io.Closer
	r     io.ReaderAt // the file, read again in order by WriteNPZ
	size  int64
	opts  []ReaderOption
}

// Open opens the .wmz file name. c may be nil when the file embeds its
// model. Close closes the file.
func Open(name string, c *Codec, opts ...ReaderOption) (*File, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	f, err := NewFile(fh, st.Size(), c, opts...)
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f.close = fh
	return f, nil
}

// NewFile reads a .wmz file of the given size from r. c may be nil when
// the file embeds its model.
func NewFile(r io.ReaderAt, size int64, c *Codec, opts ...ReaderOption) (*File, error) {
	f, err := format.Open(r, size, modelOf(c), readerOptions(opts).format...)
	if err != nil {
		return nil, err
	}
	if c == nil {
		if c, err = NewCodec(f.Model()); err != nil {
			return nil, err
		}
	}
	return &File{f: f, c: c, r: r, size: size, opts: opts}, nil
}

// Close closes the file Open opened; it does nothing for NewFile.
func (f *File) Close() error {
	if f.close == nil {
		return nil
	}
	return f.close.Close()
}

// Codec returns the codec the file is read with.
func (f *File) Codec() *Codec { return f.c }

// Episodes returns the number of episodes.
func (f *File) Episodes() int { return f.f.Episodes() }

// EpisodeLen returns the number of states of episode e.
func (f *File) EpisodeLen(e int) int { return f.f.EpisodeLen(e) }

// State decodes state t of episode e into dst (reused when large enough)
// and returns its action and codes.
func (f *File) State(e, t int, dst []uint16) (action int64, codes []uint16, err error) {
	return f.f.ReadState(e, t, dst)
}

// Obs decodes state t of episode e and appends its reconstructed slot
// vectors to dst.
func (f *File) Obs(e, t int, dst []float32) ([]float32, error) {
	_, codes, err := f.f.ReadState(e, t, nil)
	if err != nil {
		return dst, err
	}
	return f.c.Reconstruct(dst, codes)
}

// Episode decodes episode e: its actions, codes and, when the codec has a
// quantizer, the reconstructed observations.
func (f *File) Episode(e int) (*Episode, error) {
	acts, codes, err := f.f.DecodeEpisode(e)
	if err != nil {
		return nil, err
	}
	ep := &Episode{Actions: acts, Codes: codes, Slots: f.c.m.Geom.S}
	if f.c.q != nil {
		if ep.Obs, err = f.c.Reconstruct(nil, codes); err != nil {
			return nil, err
		}
	}
	return ep, nil
}

// Verify decodes the whole file with every check.
func (f *File) Verify() error { return f.f.Verify() }

// Info returns the file's summary from its index.
func (f *File) Info() format.Info { return f.f.Info() }

// Format returns the container file beneath.
func (f *File) Format() *format.File { return f.f }

// Reader decodes a .wmz stream in order, from any io.Reader.
type Reader struct {
	r      *format.Reader
	c      *Codec
	access func(episode, step int64)
	e, t   int64 // episode and step of the next state
}

// NewReader reads a .wmz stream from r. c may be nil when the stream
// embeds its model.
func NewReader(r io.Reader, c *Codec, opts ...ReaderOption) (*Reader, error) {
	cfg := readerOptions(opts)
	fr, err := format.NewReader(r, modelOf(c), cfg.format...)
	if err != nil {
		return nil, err
	}
	if c == nil {
		if c, err = NewCodec(fr.Model()); err != nil {
			return nil, err
		}
	}
	return &Reader{r: fr, c: c, access: cfg.access, e: -1}, nil
}

// NextEpisode moves to the next episode and returns its metadata; io.EOF
// after the last.
func (r *Reader) NextEpisode() (meta []byte, err error) {
	meta, err = r.r.NextEpisode()
	if err == nil {
		r.e, r.t = r.e+1, 0
	}
	return meta, err
}

// ReadState decodes the next state of the episode into dst; io.EOF at the
// episode's end.
func (r *Reader) ReadState(dst []uint16) (action int64, codes []uint16, err error) {
	action, codes, err = r.r.ReadState(dst)
	if err == nil {
		if r.access != nil {
			r.access(r.e, r.t)
		}
		r.t++
	}
	return action, codes, err
}

// ReadObs decodes the next state and appends its reconstructed slot
// vectors to dst; io.EOF at the episode's end.
func (r *Reader) ReadObs(dst []float32) (action int64, obs []float32, err error) {
	a, codes, err := r.ReadState(nil)
	if err != nil {
		return 0, dst, err
	}
	obs, err = r.c.Reconstruct(dst, codes)
	return a, obs, err
}

// Level returns the retention level of the state read last.
func (r *Reader) Level() int { return r.r.Level() }

// Codec returns the codec the stream is read with.
func (r *Reader) Codec() *Codec { return r.c }

// Recover writes to w a complete file holding what is valid of the
// damaged file of the given size in r: the episodes and chunks before the
// damage. c may be nil when the file embeds its model. It returns what was
// recovered and the Info of the file written.
func Recover(w io.Writer, r io.ReaderAt, size int64, c *Codec, opts ...ReaderOption) (format.Recovery, format.Info, error) {
	return format.Recover(w, r, size, modelOf(c), readerOptions(opts).format...)
}

func modelOf(c *Codec) *wm.Model {
	if c == nil {
		return nil
	}
	return c.m
}
