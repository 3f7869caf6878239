package wmzip

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/wm"
)

// Writer writes episodes of observations or codes to a .wmz stream, in
// one of three modes: lossless (the default), lossy at one λ (WithLambda)
// or at the least storage meeting a distortion target (WithDistortion),
// and per-state levels (WithLevels and SetLevel).
//
// The bytes depend only on the codec, the options and the sequence of
// calls. Errors of the underlying writer are sticky. Close does not close
// the underlying writer.
type Writer struct {
	c    *Codec
	cfg  writerConfig
	w    io.Writer
	fw   *format.Writer // nil with a distortion target: states are held
	held []wm.Episode
	buf  []uint16
	rot  []float32
	src  *source // the states' observations, with a quantizer
	res  *format.LambdaResult
	done bool
}

// NewWriter returns a Writer of a new file on w.
func NewWriter(w io.Writer, c *Codec, opts ...WriterOption) (*Writer, error) {
	wr, err := newWriter(c, opts)
	if err != nil {
		return nil, err
	}
	wr.w = w
	if !wr.searches() {
		if wr.fw, err = format.NewWriter(w, c.m, wr.cfg.format...); err != nil {
			return nil, err
		}
	}
	return wr, nil
}

// Append returns a Writer that continues the closed file f: its episodes
// are kept and new ones follow. A distortion target is not available.
func Append(f format.AppendFile, c *Codec, opts ...WriterOption) (*Writer, error) {
	wr, err := newWriter(c, opts)
	if err != nil {
		return nil, err
	}
	if wr.searches() {
		return nil, fmt.Errorf("%w: a distortion target cannot append", ErrInput)
	}
	if wr.fw, err = format.Append(f, c.m, wr.cfg.format...); err != nil {
		return nil, err
	}
	return wr, nil
}

func newWriter(c *Codec, opts []WriterOption) (*Writer, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: nil codec", ErrInput)
	}
	wr := &Writer{c: c, cfg: writerConfig{distortion: -1, sourceDistortion: -1, ctx: context.Background(), lambda: format.LambdaLossless}}
	for _, o := range opts {
		if err := o.applyWriter(&wr.cfg); err != nil {
			return nil, err
		}
	}
	cfg := &wr.cfg
	if c.q != nil {
		wr.src = newSource(c.q, c.m.Geom)
		// The measures go first: options of the caller's come after.
		cfg.format = append([]format.Option{format.WithMeasure(retention{c.q}), format.WithSource(wr.src.place)}, cfg.format...)
	} else if cfg.sourceDistortion >= 0 {
		return nil, fmt.Errorf("%w: a distortion target against the source needs a codec with a quantizer", ErrNoQuantizer)
	}
	modes := 0
	for _, on := range []bool{cfg.lossy, cfg.distortion >= 0, cfg.sourceDistortion >= 0, cfg.levels != nil} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return nil, fmt.Errorf("%w: WithLambda, WithDistortion, WithSourceDistortion and WithLevels exclude each other", ErrInput)
	}
	if modes == 1 && !c.HasGate() {
		return nil, ErrNoGate
	}
	if cfg.lossy {
		cfg.format = append(cfg.format, format.WithLambda(cfg.lambda))
	}
	if cfg.levels != nil {
		cfg.format = append(cfg.format, format.WithLevels(cfg.levels...))
	}
	return wr, nil
}

// searches reports whether the Writer has a distortion target: it holds
// every state until Close.
func (w *Writer) searches() bool { return w.cfg.distortion >= 0 || w.cfg.sourceDistortion >= 0 }

// WriteEpisode starts an episode; meta, if not nil, is JSON kept with it
// (not available with a distortion target).
func (w *Writer) WriteEpisode(meta []byte) error {
	if w.fw == nil {
		if w.done {
			return ErrClosed
		}
		if meta != nil {
			return fmt.Errorf("%w: episode metadata with a distortion target", ErrInput)
		}
		w.held = append(w.held, wm.Episode{})
		return nil
	}
	return w.fw.WriteEpisode(meta)
}

// WriteCodes writes the next state of the episode as codes (S × M values
// below K); action leads into it.
func (w *Writer) WriteCodes(action int64, codes []uint16) error {
	return w.writeState(action, codes, nil)
}

// writeState writes the next state: its codes and, when it was written as
// float observations, their rotation (kept until the state is placed).
func (w *Writer) writeState(action int64, codes []uint16, rot []float32) error {
	if w.fw != nil {
		// Pushed first: writing the state may place its chunk.
		w.push(codes, rot)
		err := w.fw.WriteState(action, codes)
		if err != nil && w.src != nil {
			w.src.unpush() // refused, not written (or the Writer is broken)
		}
		return err
	}
	if w.done {
		return ErrClosed
	}
	if len(w.held) == 0 {
		return fmt.Errorf("%w: a state written before its episode began (WriteEpisode)", ErrInput)
	}
	g := w.c.m.Geom
	if len(codes) != g.N() {
		return fmt.Errorf("%w: %d codes, want %d", ErrInput, len(codes), g.N())
	}
	for _, v := range codes {
		if int(v) >= g.K {
			return fmt.Errorf("%w: code %d ≥ K=%d", ErrInput, v, g.K)
		}
	}
	e := &w.held[len(w.held)-1]
	e.Actions = append(e.Actions, action)
	e.Codes = append(e.Codes, codes...)
	w.push(codes, rot)
	return nil
}

// push hands a written state to the source account.
func (w *Writer) push(codes []uint16, rot []float32) {
	if w.src == nil {
		return
	}
	if rot == nil {
		w.src.push(nil, nil)
		return
	}
	w.src.push(slices.Clone(rot), slices.Clone(codes))
}

// WriteObs quantizes one state of float observations (S slot vectors)
// and writes it. The Writer compares them with the state's reconstruction
// (Report).
func (w *Writer) WriteObs(action int64, obs []float32) error {
	if w.c.q == nil {
		return ErrNoQuantizer
	}
	if len(obs) != w.c.m.Geom.S*w.c.q.Dim() {
		return fmt.Errorf("%w: %d observation values, want %d", ErrInput, len(obs), w.c.m.Geom.S*w.c.q.Dim())
	}
	var err error
	if w.buf, w.rot, err = w.c.quantizeRotated(w.buf[:0], w.rot[:0], obs); err != nil {
		return err
	}
	return w.writeState(action, w.buf, w.rot)
}

// WriteEpisodeOf writes a whole episode: its codes, or its observations
// quantized.
func (w *Writer) WriteEpisodeOf(e *Episode) error {
	if err := w.WriteEpisode(nil); err != nil {
		return err
	}
	codes, rot, err := w.c.episodeCodes(e, w.src != nil)
	if err != nil {
		return err
	}
	n := w.c.m.Geom.N()
	per := len(rot) / max(len(e.Actions), 1)
	for t, a := range e.Actions {
		var r []float32
		if rot != nil {
			r = rot[t*per : (t+1)*per]
		}
		if err := w.writeState(a, codes[t*n:(t+1)*n], r); err != nil {
			return err
		}
	}
	return nil
}

// SetLevel sets the retention level (an index into WithLevels) of the
// states written next.
func (w *Writer) SetLevel(level int) error {
	if w.fw == nil {
		return fmt.Errorf("%w: levels with a distortion target", ErrInput)
	}
	return w.fw.SetLevel(level)
}

// Flush writes the completed chunks, so that Recover can keep them if the
// writer never closes. It does nothing with a distortion target.
func (w *Writer) Flush() error {
	if w.fw == nil {
		return nil
	}
	return w.fw.Flush()
}

// Close completes the file (with a distortion target: searches λ and
// writes the file). It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.fw != nil {
		return w.fw.Close()
	}
	if w.done {
		return nil
	}
	w.done = true
	n := 0
	report := func(pr format.Probe) {
		n++
		if w.cfg.probe != nil {
			w.cfg.probe(pr)
		}
		if w.cfg.progress != nil {
			w.cfg.progress("searching", n, 0)
		}
	}
	target, opts := w.cfg.distortion, w.cfg.format
	if w.cfg.sourceDistortion >= 0 {
		// Against the source: the quantizer's own error on these
		// observations is the floor; the search spends the rest.
		floor, vectors := w.src.quantizerFloor()
		if vectors == 0 {
			return fmt.Errorf("%w: a distortion target against the source, but no state was written as float observations", ErrInput)
		}
		if w.cfg.sourceDistortion < floor {
			return fmt.Errorf("%w: target distortion %.4g against the source is below %.4g, what the quantizer alone loses on these observations: a finer quantizer (more subspaces or centroids) or a larger target", ErrInput, w.cfg.sourceDistortion, floor)
		}
		target = w.cfg.sourceDistortion - floor
		first := make([]int, len(w.held))
		for i := 1; i < len(w.held); i++ {
			first[i] = first[i-1] + len(w.held[i-1].Actions)
		}
		opts = append(slices.Clip(opts), format.WithMeasure(sourceMeasure{src: w.src, first: first, dim: w.c.q.Dim()}))
	}
	r, err := format.SearchLambda(w.cfg.ctx, w.c.m, w.held, target, report, opts...)
	if err != nil {
		return err
	}
	w.res = r
	_, err = w.w.Write(r.File)
	return err
}

// Account returns the writer's record of what its reconstruction lost.
func (w *Writer) Account() format.Account {
	if w.fw == nil {
		if w.res == nil {
			return format.Account{}
		}
		return w.res.Account
	}
	return w.fw.Account()
}

// Report returns what the file's index records of its distortion: the
// retention's against the lossless reconstruction, and, for states written
// as float observations, the end-to-end one against them. It covers the
// states placed so far (with a distortion target, the file after Close).
func (w *Writer) Report() format.Report {
	if w.fw != nil {
		return w.fw.Report()
	}
	if w.res != nil {
		return w.res.Report
	}
	return format.Report{}
}

// QuantizerDistortion returns the mean relative squared error, against
// the float observations written, of their lossless reconstruction (the
// quantizer's share of Report's source distortion) over the states placed,
// and how many slot vectors that is.
func (w *Writer) QuantizerDistortion() (float64, int64) {
	if w.src == nil {
		return 0, 0
	}
	return w.src.quant.Distortion(), w.src.quant.Vectors
}

// Search returns the distortion search's outcome after Close (nil without
// a distortion target).
func (w *Writer) Search() *format.LambdaResult { return w.res }

// Format returns the container writer beneath (nil with a distortion
// target), for what this package does not wrap.
func (w *Writer) Format() *format.Writer { return w.fw }

// Encode writes episodes to w in one call and returns the account.
func Encode(ctx context.Context, w io.Writer, c *Codec, eps []Episode, opts ...WriterOption) (format.Account, error) {
	wr, err := NewWriter(w, c, append(opts[:len(opts):len(opts)], WithContext(ctx))...)
	if err != nil {
		return format.Account{}, err
	}
	for i := range eps {
		if err := ctx.Err(); err != nil {
			return format.Account{}, err
		}
		if err := wr.WriteEpisodeOf(&eps[i]); err != nil {
			return format.Account{}, err
		}
		if p := wr.cfg.progress; p != nil && wr.fw != nil {
			p("encoding", i+1, len(eps))
		}
	}
	if err := wr.Close(); err != nil {
		return format.Account{}, err
	}
	return wr.Account(), nil
}
