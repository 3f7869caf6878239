package capi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/check"
)

// Writer is the object of a writer handle: a wmzip.Writer of a file it
// created, its calls serialized.
type Writer struct {
	mu     sync.Mutex
	w      *wmzip.Writer
	out    *outFile
	geom   shape
	slots  int
	buf    []uint16
	state  writerState
	closed error // Close's error, returned again
}

type writerState int

const (
	writing writerState = iota
	completed
	aborted
)

// outFile is the file a Writer writes: created at its first byte (so
// that options are checked before anything on disk is touched), counting
// what is written.
type outFile struct {
	path    string
	f       io.WriteCloser // an *os.File, or an upload for an s3:// path
	n       int64
	created bool // f was made (a file created, an upload started)
}

func (o *outFile) open() error {
	if o.f != nil {
		return nil
	}
	f, err := createOut(o.path)
	if err != nil {
		return err
	}
	o.f, o.created = f, true
	return nil
}

func (o *outFile) Write(b []byte) (int, error) {
	if err := o.open(); err != nil {
		return 0, err
	}
	n, err := o.f.Write(b)
	o.n += int64(n)
	return n, err
}

// close closes the file, if opened: an object is then completed.
func (o *outFile) close() error {
	if o.f == nil {
		return nil
	}
	err := o.f.Close()
	o.f = nil
	return err
}

// writerOptions are CreateWriter's JSON options; a λ of null is
// lossless.
type writerOptions struct {
	Lambda           *float64   `json:"lambda"`
	Levels           []*float64 `json:"levels"`
	Distortion       *float64   `json:"distortion"`
	SourceDistortion *float64   `json:"source_distortion"`
	Keyframe         *int       `json:"keyframe"`
	Threads          *int       `json:"threads"`
	EmbedModel       bool       `json:"embed_model"`
}

func (o writerOptions) options() []wmzip.WriterOption {
	var opts []wmzip.WriterOption
	if o.EmbedModel {
		opts = append(opts, wmzip.WithEmbeddedModel(true))
	}
	if o.Keyframe != nil {
		opts = append(opts, wmzip.WithKeyframeInterval(*o.Keyframe))
	}
	if o.Threads != nil {
		opts = append(opts, wmzip.WithEncoderThreads(*o.Threads))
	}
	if o.Lambda != nil {
		opts = append(opts, wmzip.WithLambda(*o.Lambda))
	}
	if o.Levels != nil {
		ls := make([]float64, len(o.Levels))
		for i, l := range o.Levels {
			ls[i] = math.Inf(1)
			if l != nil {
				ls[i] = *l
			}
		}
		opts = append(opts, wmzip.WithLevels(ls...))
	}
	if o.Distortion != nil {
		opts = append(opts, wmzip.WithDistortion(*o.Distortion))
	}
	if o.SourceDistortion != nil {
		opts = append(opts, wmzip.WithSourceDistortion(*o.SourceDistortion))
	}
	return opts
}

// CreateWriter creates (or truncates) the file at path and returns a
// writer of a new .wmz file in it with the codec of handle codec and JSON
// options (lambda, levels, distortion, source_distortion, keyframe,
// threads, embed_model). Invalid options touch no file.
func CreateWriter(path string, codec Handle, options []byte) (Handle, error) {
	c, err := codecOf(codec)
	if err != nil {
		return 0, err
	}
	var o writerOptions
	if err := decodeOptions(options, &o); err != nil {
		return 0, err
	}
	out := &outFile{path: path}
	w, err := wmzip.NewWriter(out, c, o.options()...)
	if err == nil {
		err = out.open()
	}
	if err != nil {
		out.remove()
		return 0, err
	}
	return add(&Writer{w: w, out: out, geom: shapeOf(c), slots: c.Slots()}), nil
}

// withWriter runs fn on the writer of h, alone.
func withWriter(h Handle, fn func(w *Writer) error) error {
	w, err := lookup[*Writer](h, "writer")
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return fn(w)
}

// writer runs fn on the writer of h, alone, unless it is closed.
func writer(h Handle, fn func(w *Writer) error) error {
	return withWriter(h, func(w *Writer) error {
		if w.state != writing {
			return closedf("the writer of handle %d was closed", h)
		}
		return fn(w)
	})
}

// WriterBegin starts an episode; meta, if not nil, is JSON kept with it
// (copied).
func WriterBegin(h Handle, meta []byte) error {
	return writer(h, func(w *Writer) error { return w.w.WriteEpisode(bytes.Clone(meta)) })
}

// WriterCodes writes states states of codes to the episode, the first led
// into by actions[0] (nil actions: none known, -1). Codes out of range
// write nothing.
func WriterCodes(h Handle, actions []int64, states int, codes Codes) error {
	return writer(h, func(w *Writer) error {
		if err := w.batch(actions, states, codes.Len(), w.geom.n, "codes"); err != nil {
			return err
		}
		all := codes.wide(w.buf)
		if codes.U8 != nil {
			w.buf = all
		}
		for i, v := range all {
			if int(v) >= w.geom.k {
				return Inputf("code %d of state %d (coordinate %d) is not below K=%d", v, i/w.geom.n, i%w.geom.n, w.geom.k)
			}
		}
		for t := range states {
			if err := w.w.WriteCodes(action(actions, t), all[t*w.geom.n:(t+1)*w.geom.n]); err != nil {
				return stateErr(t, states, err)
			}
		}
		return nil
	})
}

// WriterObs writes states states of float observations to the episode,
// the first led into by actions[0] (nil actions: none known, -1).
// Observations that are not finite write nothing.
func WriterObs(h Handle, actions []int64, states int, obs []float32) error {
	return writer(h, func(w *Writer) error {
		if w.geom.floats == 0 {
			return w.w.WriteObs(0, nil) // the codec's own error
		}
		if err := w.batch(actions, states, len(obs), w.geom.floats, "observation values"); err != nil {
			return err
		}
		if err := check.Finite(obs, w.slots, w.geom.floats/w.slots, 0, "", nil); err != nil {
			return err
		}
		per := w.geom.floats
		for t := range states {
			if err := w.w.WriteObs(action(actions, t), obs[t*per:(t+1)*per]); err != nil {
				return stateErr(t, states, err)
			}
		}
		return nil
	})
}

// batch checks the arrays of states states of per values each.
func (w *Writer) batch(actions []int64, states, values, per int, what string) error {
	if states < 0 || values != states*per {
		return Inputf("%d %s are not %d states of %d", values, what, states, per)
	}
	if actions != nil && len(actions) != states {
		return Inputf("%d actions for %d states", len(actions), states)
	}
	return nil
}

func action(actions []int64, t int) int64 {
	if actions == nil {
		return -1
	}
	return actions[t]
}

// stateErr says which state of a batch failed, when states before it
// were written.
func stateErr(t, states int, err error) error {
	if states == 1 || t == 0 {
		return err
	}
	return &stateError{t, err}
}

type stateError struct {
	t   int
	err error
}

func (e *stateError) Error() string { return fmt.Sprintf("state %d of the batch: %v", e.t, e.err) }
func (e *stateError) Unwrap() error { return e.err }

// WriterLevel sets the retention level of the states written next.
func WriterLevel(h Handle, level int) error {
	return writer(h, func(w *Writer) error { return w.w.SetLevel(level) })
}

// WriterFlush writes the completed chunks to the file.
func WriterFlush(h Handle) error {
	return writer(h, func(w *Writer) error { return w.w.Flush() })
}

// CloseWriter completes the file (with a distortion target: searches and
// writes it) and closes it; the handle stays for WriterAccount until
// FreeWriter. Closing again returns what the first Close returned. A
// Close that fails before a byte was written removes the empty file.
func CloseWriter(h Handle) error {
	return withWriter(h, func(w *Writer) error {
		switch w.state {
		case completed:
			return w.closed
		case aborted:
			return closedf("the writer of handle %d was aborted", h)
		}
		err := w.w.Close()
		if cerr := w.out.close(); err == nil {
			err = cerr
		}
		if err != nil && w.out.n == 0 {
			w.out.remove()
		}
		w.state, w.closed = completed, err
		return err
	})
}

// AbortWriter closes the file without completing it and removes it. It
// does nothing to a completed file.
func AbortWriter(h Handle) error {
	return withWriter(h, func(w *Writer) error {
		if w.state != writing {
			return nil
		}
		w.state = aborted
		return w.out.remove()
	})
}

// FreeWriter releases a writer handle. A file neither completed nor
// aborted is closed as it stands: incomplete, as after a crash, its
// flushed chunks recoverable (wmzip recover).
func FreeWriter(h Handle) error {
	w, ok, err := release[*Writer](h, "writer")
	if !ok {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state == writing {
		w.state = aborted
		return w.out.leave()
	}
	return nil
}

// WriterAccount returns the writer's account of the states placed so far
// (of the whole file after Close) as a JSON object.
func WriterAccount(h Handle) (b []byte, err error) {
	err = withWriter(h, func(w *Writer) error { b, err = w.account(); return err })
	return b, err
}

func (w *Writer) account() ([]byte, error) {
	a := w.w.Account()
	j := accountJSON{States: a.States, Retained: a.Retained, Wrong: a.Wrong, Distortion: a.Distortion,
		LosslessChunks: a.LosslessChunks, Bytes: w.out.n, Report: distortionOf(a.Report)}
	j.QuantizerDistortion, j.QuantizerVectors = w.w.QuantizerDistortion()
	if r := w.w.Search(); r != nil {
		s := &searchJSON{Distortion: r.Distortion, Encodes: r.Encodes}
		for _, l := range r.Lambdas {
			s.Lambdas = append(s.Lambdas, finite(l.Float()))
		}
		s.Lambda = finite(r.Lambda.Float())
		j.Search = s
	}
	return json.Marshal(j)
}

// accountJSON is a format.Account as WriterAccount writes it.
type accountJSON struct {
	States         int64          `json:"states"`
	Retained       uint64         `json:"retained"`
	Wrong          uint64         `json:"wrong"`
	Distortion     float64        `json:"distortion"`
	LosslessChunks int64          `json:"lossless_chunks"`
	Bytes          int64          `json:"bytes"`
	Report         distortionJSON `json:"report"`
	// The quantizer's own error on the observations written (against
	// them, of their lossless reconstruction), over QuantizerVectors slot
	// vectors.
	QuantizerDistortion float64     `json:"quantizer_distortion"`
	QuantizerVectors    int64       `json:"quantizer_vectors"`
	Search              *searchJSON `json:"search"`
}

// searchJSON is the outcome of a distortion target's search.
type searchJSON struct {
	Lambda     *float64   `json:"lambda"`
	Lambdas    []*float64 `json:"lambdas"`
	Distortion float64    `json:"distortion"`
	Encodes    float64    `json:"encodes"`
}
