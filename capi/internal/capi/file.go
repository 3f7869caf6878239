package capi

import (
	"encoding/json"
	"io"
	"math"
	"sync"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/objstore/catalog"
	"github.com/wmzip/wmzip/sign"
)

// File is the object of a file handle: a wmzip.File read concurrently;
// Close waits for the reads in flight.
type File struct {
	mu   sync.RWMutex
	f    *wmzip.File // nil once closed
	shut io.Closer   // closes f and what it reads through
	geom shape
	bufs sync.Pool // *[]uint16 of a state, for 8-bit reads
}

// shape is what a handle checks buffers against: codes a state, their
// bound K, floats a state (0 without a quantizer).
type shape struct{ n, k, floats int }

func shapeOf(c *wmzip.Codec) shape {
	g := c.Geometry()
	s := shape{n: g.N(), k: g.K}
	if q := c.Quantizer(); q != nil {
		s.floats = g.S * q.Dim()
	}
	return s
}

// readOptions are the JSON options of OpenFile and OpenReader.
type readOptions struct {
	Threads *int `json:"threads"` // chunks decoded ahead at once (default: every core)
	// PublicKey is the text of a minisign public key file (or its base64
	// line): the file must be signed by it, and every chunk read is checked
	// against its signed hash.
	PublicKey     *string `json:"public_key"`
	MinGeneration *uint64 `json:"min_generation"` // with PublicKey: refuse older signed versions
	// Entry is the file's catalog entry (remote.go).
	Entry *catalog.Entry `json:"entry"`
}

func (o readOptions) options() ([]wmzip.ReaderOption, error) {
	var opts []wmzip.ReaderOption
	if o.Threads != nil {
		opts = append(opts, wmzip.WithDecoderThreads(*o.Threads))
	}
	if o.PublicKey != nil {
		k, err := sign.ParsePublicKey([]byte(*o.PublicKey))
		if err != nil {
			return nil, Inputf("public_key: %v", err)
		}
		opts = append(opts, wmzip.WithPublicKey(k))
	} else if o.MinGeneration != nil {
		return nil, Inputf("min_generation needs public_key")
	}
	if o.MinGeneration != nil {
		opts = append(opts, wmzip.WithMinGeneration(*o.MinGeneration))
	}
	return opts, nil
}

// OpenFile opens the .wmz file at path for random access, with the codec
// of handle codec (0: the model the file embeds) and JSON options
// (threads).
func OpenFile(path string, codec Handle, options []byte) (Handle, error) {
	c, err := codecOrNil(codec)
	if err != nil {
		return 0, err
	}
	var o readOptions
	if err := decodeOptions(options, &o); err != nil {
		return 0, err
	}
	opts, err := o.options()
	if err != nil {
		return 0, err
	}
	f, shut, err := openFile(path, o.Entry, c, opts)
	if err != nil {
		return 0, err
	}
	return add(&File{f: f, shut: shut, geom: shapeOf(f.Codec())}), nil
}

// file runs fn on the file of h, unless it is closed; calls run
// concurrently.
func file(h Handle, fn func(f *File) error) error {
	ff, err := lookup[*File](h, "file")
	if err != nil {
		return err
	}
	ff.mu.RLock()
	defer ff.mu.RUnlock()
	if ff.f == nil {
		return closedf("the file of handle %d was closed", h)
	}
	return fn(ff)
}

// CloseFile closes the file of h, once the reads in flight have returned.
// Closing it again does nothing.
func CloseFile(h Handle) error {
	f, ok, err := release[*File](h, "file")
	if !ok {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	err = f.shut.Close()
	f.f = nil
	return err
}

// FileCodec returns a new handle to the codec the file is read with.
func FileCodec(h Handle) (c Handle, err error) {
	err = file(h, func(f *File) error { c = newCodec(f.f.Codec()); return nil })
	return c, err
}

// FileEpisodes returns the number of states of each episode.
func FileEpisodes(h Handle) (lens []int, err error) {
	err = file(h, func(f *File) error { lens = f.f.Episodes(); return nil })
	return lens, err
}

// FileState decodes state t of episode e: its action, and its codes to
// dst (none: the action only).
func FileState(h Handle, e, t int, dst Codes) (action int64, err error) {
	err = file(h, func(f *File) error {
		if dst.None() {
			action, _, err = f.f.State(e, t, nil)
			return err
		}
		if err := fits(dst, f.geom.n, "codes", f.geom.k); err != nil {
			return err
		}
		var buf *[]uint16
		if dst.U8 != nil {
			buf = f.buf()
			defer f.bufs.Put(buf)
		}
		var codes []uint16
		if action, codes, err = f.f.State(e, t, dst.dst(deref(buf), f.geom.n)); err != nil {
			return err
		}
		dst.put(codes)
		return nil
	})
	return action, err
}

// buf returns a buffer of a state's codes from the pool.
func (f *File) buf() *[]uint16 {
	if b, ok := f.bufs.Get().(*[]uint16); ok {
		return b
	}
	b := make([]uint16, f.geom.n)
	return &b
}

func deref(b *[]uint16) []uint16 {
	if b == nil {
		return nil
	}
	return *b
}

// FileObs decodes state t of episode e: its action, and its
// reconstructed slot vectors to dst.
func FileObs(h Handle, e, t int, dst []float32) (action int64, err error) {
	err = file(h, func(f *File) error {
		if err := f.floats(dst, 1); err != nil {
			return err
		}
		action, _, err = f.f.Obs(e, t, dst[:0:f.geom.floats])
		return err
	})
	return action, err
}

// floats checks that dst holds the reconstruction of states states.
func (f *File) floats(dst []float32, states int) error {
	if f.geom.floats == 0 {
		_, _, err := f.f.Obs(0, 0, nil) // the codec's own error
		return err
	}
	if n := states * f.geom.floats; len(dst) < n {
		return Inputf("an array of %d floats cannot hold the %d of %d states", len(dst), n, states)
	}
	return nil
}

// FileStates decodes states from to to−1 of episode e: their actions,
// codes and reconstructed slot vectors to the arrays given (nil or none:
// not wanted). A whole episode decodes chunk by chunk on the decoder's
// threads; part of one, state by state from the file's chunk cache.
func FileStates(h Handle, e, from, to int, actions []int64, codes Codes, obs []float32) error {
	return file(h, func(f *File) error {
		lens := f.f.Episodes()
		if e < 0 || e >= len(lens) {
			return Inputf("the file has %d episodes, not episode %d", len(lens), e)
		}
		if from < 0 || to < from || to > lens[e] {
			return Inputf("episode %d has steps 0 to %d, not %d to %d", e, lens[e]-1, from, to-1)
		}
		k := to - from
		if actions != nil && len(actions) < k {
			return Inputf("an array of %d actions cannot hold %d", len(actions), k)
		}
		if !codes.None() {
			if err := fits(codes, k*f.geom.n, "codes", f.geom.k); err != nil {
				return err
			}
		}
		if obs != nil {
			if err := f.floats(obs, k); err != nil {
				return err
			}
		}
		c := f.f.Codec()
		n, d := f.geom.n, f.geom.floats
		at := 0 // states written
		put := func(a []int64, s []uint16) error {
			if actions != nil {
				copy(actions[at:], a)
			}
			if !codes.None() {
				codes.slice(at*n, (at+len(a))*n).put(s)
			}
			if obs != nil {
				if _, err := c.Reconstruct(obs[at*d:at*d:(at+len(a))*d], s); err != nil {
					return err
				}
			}
			at += len(a)
			return nil
		}
		if from == 0 && to == lens[e] {
			return f.f.EpisodeChunks(e, put)
		}
		var buf []uint16
		for t := from; t < to; t++ {
			a, s, err := f.f.State(e, t, buf)
			if err != nil {
				return err
			}
			buf = s
			if err := put([]int64{a}, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// FileMeta returns the metadata of episode e (nil: none).
func FileMeta(h Handle, e int) (meta []byte, err error) {
	err = file(h, func(f *File) error {
		meta, err = f.f.Metadata(e)
		return err
	})
	return meta, err
}

// FileVerify decodes the whole file with every check.
func FileVerify(h Handle) error {
	return file(h, func(f *File) error { return f.f.Verify() })
}

// FileInfo returns the file's summary (format.Info) as a JSON object.
func FileInfo(h Handle) (b []byte, err error) {
	err = file(h, func(f *File) error {
		in := f.f.Info()
		b, err = json.Marshal(infoJSON{
			Episodes: in.Episodes, States: in.States, Chunks: in.Chunks,
			FileBytes: in.FileBytes, HeaderBytes: in.HeaderBytes, ModelBytes: in.ModelBytes,
			PayloadBytes: in.PayloadBytes, IndexBytes: in.IndexBytes,
			Lambda: finite(in.Lambda), Levels: finites(in.Levels), Embedded: in.Embedded,
			ModelID: in.ModelID.String(), IdealBits: in.IdealBits(), Retained: in.Retained,
			Distortion: distortionOf(in.Report),
		})
		return err
	})
	return b, err
}

// infoJSON is format.Info as FileInfo writes it; a λ of null is lossless.
type infoJSON struct {
	Episodes     int            `json:"episodes"`
	States       int64          `json:"states"`
	Chunks       int64          `json:"chunks"`
	FileBytes    int64          `json:"file_bytes"`
	HeaderBytes  int64          `json:"header_bytes"`
	ModelBytes   int64          `json:"model_bytes"`
	PayloadBytes int64          `json:"payload_bytes"`
	IndexBytes   int64          `json:"index_bytes"`
	Lambda       *float64       `json:"lambda"`
	Levels       []*float64     `json:"levels"`
	Embedded     bool           `json:"embedded"`
	ModelID      string         `json:"model_id"`
	IdealBits    float64        `json:"ideal_bits"`
	Retained     uint64         `json:"retained"`
	Distortion   distortionJSON `json:"distortion"`
}

// distortionJSON is a format.Report as means.
type distortionJSON struct {
	Slots        uint64  `json:"slots"`         // slot vectors measured against the lossless reconstruction
	Retention    float64 `json:"retention"`     // their mean distortion
	SourceSlots  uint64  `json:"source_slots"`  // slot vectors measured against the source floats
	Source       float64 `json:"source"`        // their mean relative squared error
	SourceCosine float64 `json:"source_cosine"` // and mean cosine
}

func distortionOf(r format.Report) distortionJSON {
	return distortionJSON{Slots: r.Slots, Retention: r.RetentionDistortion(), SourceSlots: r.SourceSlots,
		Source: r.SourceDistortion(), SourceCosine: r.SourceCosine()}
}

// finite returns x, or nil for an infinite λ (lossless).
func finite(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

func finites(xs []float64) []*float64 {
	if xs == nil {
		return nil
	}
	out := make([]*float64, len(xs))
	for i, x := range xs {
		out[i] = finite(x)
	}
	return out
}
