package wmzip

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/wm"
)

// File reads a .wmz file at random through its index: one state or one
// episode at a time, as codes or as reconstructed observations. Its
// methods are safe for concurrent use.
type File struct {
	f     *format.File
	c     *Codec
	close io.Closer // Open's file; nil once closed
	r     io.ReaderAt
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
	cfg, err := readerOptions(opts)
	if err != nil {
		return nil, err
	}
	if c != nil && c.members != nil {
		var hdr [64]byte
		if n, _ := r.ReadAt(hdr[:], 0); n == len(hdr) {
			c = c.forHeader(hdr[:])
		}
	}
	f, err := format.Open(r, size, modelOf(c), cfg.format...)
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

// Close closes the file Open opened; it does nothing for NewFile, or when
// called again.
func (f *File) Close() error {
	if f.close == nil {
		return nil
	}
	err := f.close.Close()
	f.close = nil
	return err
}

// Codec returns the codec the file is read with: the one given, or the
// model the file embeds.
func (f *File) Codec() *Codec { return f.c }

// Episodes returns the number of states of each episode of the file, in
// order: len(f.Episodes()) is the number of episodes.
func (f *File) Episodes() []int {
	n := make([]int, f.f.Episodes())
	for e := range n {
		n[e] = f.f.EpisodeLen(e)
	}
	return n
}

// State decodes state t of episode e and returns its action and codes,
// written to dst when it is large enough (dst may be nil).
func (f *File) State(e, t int, dst []uint16) (action int64, codes []uint16, err error) {
	return f.f.ReadState(e, t, dst)
}

// Obs decodes state t of episode e and returns its action and its
// reconstructed slot vectors, written to dst when it is large enough (dst
// may be nil).
func (f *File) Obs(e, t int, dst []float32) (action int64, obs []float32, err error) {
	if f.c.q == nil {
		return 0, dst, errNoQuantizer
	}
	a, codes, err := f.f.ReadState(e, t, nil)
	if err != nil {
		return 0, dst, err
	}
	obs, err = f.c.Reconstruct(dst, codes)
	return a, obs, err
}

// Episode decodes episode e: its actions, codes, metadata and, when the
// codec has a quantizer, the reconstructed observations.
func (f *File) Episode(e int) (*Episode, error) {
	acts, codes, err := f.f.DecodeEpisode(e)
	if err != nil {
		return nil, err
	}
	meta, err := f.f.Metadata(e)
	if err != nil {
		return nil, err
	}
	return f.c.episode(acts, codes, meta)
}

// episode assembles a decoded episode, with its reconstruction when the
// codec has a quantizer.
func (c *Codec) episode(acts []int64, codes []uint16, meta []byte) (*Episode, error) {
	ep := &Episode{Actions: acts, Codes: codes, Slots: c.Slots(), Meta: meta}
	if c.q != nil {
		var err error
		if ep.Obs, err = c.Reconstruct(nil, codes); err != nil {
			return nil, err
		}
	}
	return ep, nil
}

// Verify decodes the whole file with every check.
func (f *File) Verify() error { return f.f.Verify() }

// Info returns the file's summary from its index: counts, sizes, λ and
// the distortion its writer recorded.
func (f *File) Info() Info { return f.f.Info() }

// Reader decodes a .wmz stream in order, from any io.Reader: NextEpisode
// moves to an episode, ReadState or ReadObs return its states in turn.
type Reader struct {
	r      *format.Reader
	c      *Codec
	given  bool   // c was given, not read from the stream
	bundle *Codec // the bundle given, whose member c is
	opts   []format.Option
	access func(episode, step int64)
	e, t   int64 // episode and step of the next state
}

// NewReader reads a .wmz stream from r. c may be nil when the stream
// embeds its model.
func NewReader(r io.Reader, c *Codec, opts ...ReaderOption) (*Reader, error) {
	cfg, err := readerOptions(opts)
	if err != nil {
		return nil, err
	}
	rd := &Reader{c: c, given: c != nil, opts: cfg.format, access: cfg.access}
	if err := rd.Reset(r); err != nil {
		return nil, err
	}
	return rd, nil
}

// Reset discards the Reader's state and makes it read a new stream from
// r, as NewReader would, with the same codec and options. A Reader
// created without a codec takes the new stream's embedded model.
func (r *Reader) Reset(in io.Reader) error {
	var m *wm.Model
	if r.given {
		if r.bundle == nil && r.c.members != nil {
			r.bundle = r.c
		}
		if r.bundle != nil {
			br := bufio.NewReader(in)
			hdr, _ := br.Peek(64)
			r.c, in = r.bundle.forHeader(hdr), br
		}
		m = r.c.m
	}
	fr, err := format.NewReader(in, m, r.opts...)
	if err != nil {
		return err
	}
	if !r.given {
		if r.c == nil || r.c.m.ID() != fr.Model().ID() {
			if r.c, err = NewCodec(fr.Model()); err != nil {
				return err
			}
		}
	}
	r.r, r.e, r.t = fr, -1, 0
	return nil
}

// Codec returns the codec the stream is decoded with: the one given, or
// the member of a bundle given that wrote the stream, or the stream's
// embedded one.
func (r *Reader) Codec() *Codec { return r.c }

// NextEpisode moves to the next episode and returns its metadata; io.EOF
// after the last.
func (r *Reader) NextEpisode() (meta []byte, err error) {
	meta, err = r.r.NextEpisode()
	if err == nil {
		r.e, r.t = r.e+1, 0
	}
	return meta, err
}

// ReadState decodes the next state of the episode and returns its action
// and codes, written to dst when it is large enough (dst may be nil);
// io.EOF at the episode's end.
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

// ReadObs decodes the next state of the episode and returns its action
// and reconstructed slot vectors, written to dst when it is large enough
// (dst may be nil); io.EOF at the episode's end.
func (r *Reader) ReadObs(dst []float32) (action int64, obs []float32, err error) {
	if r.c.q == nil {
		return 0, dst, errNoQuantizer
	}
	a, codes, err := r.ReadState(nil)
	if err != nil {
		return 0, dst, err
	}
	obs, err = r.c.Reconstruct(dst, codes)
	return a, obs, err
}

// Level returns the retention level of the state read last: an index
// into the file's levels (format.Info.Levels), -1 for a state of a chunk
// coded losslessly in a file with levels, 0 in a file without.
func (r *Reader) Level() int { return r.r.Level() }

// DecodeAll reads the whole .wmz stream r into episodes: their actions,
// codes, metadata and, when the codec has a quantizer, their
// reconstructed observations. c may be nil when the stream embeds its
// model. The stream must end with its index.
func DecodeAll(r io.Reader, c *Codec, opts ...ReaderOption) ([]Episode, error) {
	rd, err := NewReader(r, c, opts...)
	if err != nil {
		return nil, err
	}
	var eps []Episode
	for {
		meta, err := rd.NextEpisode()
		if err == io.EOF {
			break
		}
		if err != nil {
			return eps, err
		}
		var acts []int64
		var codes []uint16
		for {
			a, s, err := rd.ReadState(nil)
			if err == io.EOF {
				break
			}
			if err != nil {
				return eps, err
			}
			acts, codes = append(acts, a), append(codes, s...)
		}
		ep, err := rd.c.episode(acts, codes, meta)
		if err != nil {
			return eps, err
		}
		eps = append(eps, *ep)
	}
	if _, ok := rd.r.Info(); !ok {
		return eps, fmt.Errorf("%w: the stream ended before its index", ErrCorrupt)
	}
	return eps, nil
}

// Recover writes to w a complete file holding what is valid of the
// damaged file of the given size in r: the episodes and chunks before the
// damage, and those after it that the index or the records themselves
// vouch for. c may be nil when the file embeds its model. It returns what
// was recovered and the Info of the file written.
func Recover(w io.Writer, r io.ReaderAt, size int64, c *Codec, opts ...ReaderOption) (Recovery, Info, error) {
	cfg, err := readerOptions(opts)
	if err != nil {
		return format.Recovery{}, format.Info{}, err
	}
	if c != nil && c.members != nil {
		var hdr [64]byte
		if n, _ := r.ReadAt(hdr[:], 0); n == len(hdr) {
			c = c.forHeader(hdr[:])
		}
	}
	return format.Recover(w, r, size, modelOf(c), cfg.format...)
}

// forHeader returns the member of bundle c that wrote the file whose
// first bytes are hdr (its header names the model at bytes 32 to 47), or
// c itself when none did: opening then fails on the model's ID.
func (c *Codec) forHeader(hdr []byte) *Codec {
	if len(hdr) < 48 {
		return c
	}
	var id wm.ModelID
	copy(id[:], hdr[32:48])
	if m := c.member(id); m != nil && id != c.m.ID() {
		return m
	}
	return c
}

func modelOf(c *Codec) *wm.Model {
	if c == nil {
		return nil
	}
	return c.m
}

// Header returns the file's header: its geometry, the ID of its model,
// whether it is lossless, its retention levels.
func (f *File) Header() Header { return f.f.Header() }

// Metadata returns the metadata written with episode e, nil when it has
// none.
func (f *File) Metadata(e int) ([]byte, error) { return f.f.Metadata(e) }

// EpisodeChunks decodes episode e a chunk at a time, in order, and gives
// visit each chunk's actions and codes, which are valid only during the
// call: an episode decoded in the memory of one chunk.
func (f *File) EpisodeChunks(e int, visit func(actions []int64, codes []uint16) error) error {
	return f.f.DecodeEpisodeChunks(e, visit)
}

// Reader returns a Reader of the whole file from its start, with the
// codec and options the file was opened with: the states in order, each
// with its level.
func (f *File) Reader() (*Reader, error) {
	return NewReader(io.NewSectionReader(f.r, 0, f.size), f.c, f.opts...)
}
