package wmzip

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

// Writer writes episodes of observations or codes to a .wmz stream, in
// one of four modes: lossless (the default), lossy at one λ (WithLambda),
// at the least storage meeting a distortion target (WithDistortion,
// WithSourceDistortion), and per-state levels (WithLevels and SetLevel).
//
// An episode begins with WriteEpisode; WriteObs or WriteCodes add its
// states. WriteAll writes whole episodes. Close completes the file.
//
// The bytes depend only on the codec, the options and the sequence of
// calls. Errors of the underlying writer are sticky. A Writer is not safe
// for concurrent use.
type Writer struct {
	c    *Codec
	cfg  writerConfig
	w    io.Writer
	fw   *format.Writer // nil with a distortion target: states are held
	file *os.File       // Create's, closed by Close
	held []wm.Episode
	buf  []uint16
	rot  []float32
	src  *source // the states' observations, with a quantizer
	res  *format.LambdaResult
	done bool
	rd   *rdMode // coding by rate and distortion (a codec without a gate), or nil
}

// NewWriter returns a Writer of a new file on w. Close does not close w.
func NewWriter(w io.Writer, c *Codec, opts ...WriterOption) (*Writer, error) {
	wr, err := newWriter(c, opts)
	if err != nil {
		return nil, err
	}
	if err := wr.start(w); err != nil {
		return nil, err
	}
	return wr, nil
}

// Create creates or truncates the file name, as os.Create does, and
// returns a Writer of a new .wmz file in it. Close completes the file and
// closes it.
func Create(name string, c *Codec, opts ...WriterOption) (*Writer, error) {
	wr, err := newWriter(c, opts)
	if err != nil {
		return nil, err
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	if err := wr.start(f); err != nil {
		f.Close()
		return nil, err
	}
	wr.file = f
	return wr, nil
}

// Append returns a Writer that continues the closed .wmz file f (an
// *os.File opened for reading and writing will do): its episodes are kept
// and new ones follow, from Close on. A distortion target is not
// available. Close does not close f.
func Append(f AppendFile, c *Codec, opts ...WriterOption) (*Writer, error) {
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
	wr := &Writer{c: c, cfg: writerConfig{distortion: -1, sourceDistortion: -1, lambda: format.LambdaLossless}}
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
		return nil, fmt.Errorf("%w (a distortion target against the source needs one)", errNoQuantizer)
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
	if modes == 1 && !c.hasGate() {
		if c.q == nil {
			return nil, errNoGate
		}
		return wr, wr.useRD()
	}
	if cfg.lossy {
		cfg.format = append(cfg.format, format.WithLambda(cfg.lambda))
	}
	if cfg.levels != nil {
		cfg.format = append(cfg.format, format.WithLevels(cfg.levels...))
	}
	return wr, nil
}

// start begins a new file on w.
func (w *Writer) start(out io.Writer) error {
	w.w, w.done, w.held, w.res = out, false, nil, nil
	if w.c.q != nil {
		w.src.reset()
	}
	if w.rd != nil {
		return w.rd.start(w, out)
	}
	if w.searches() {
		w.fw = nil
		return nil
	}
	var err error
	w.fw, err = format.NewWriter(out, w.c.m, w.cfg.format...)
	return err
}

// Reset discards the Writer's state and the file it was writing, unless
// closed, and makes it write a new file to out with the same codec and
// options, as NewWriter would. A file Create opened is closed as it
// stands.
func (w *Writer) Reset(out io.Writer) error {
	if w.file != nil {
		w.file.Close()
		w.file = nil
	}
	return w.start(out)
}

// searches reports whether the Writer has a distortion target: it holds
// every state until Close.
func (w *Writer) searches() bool { return w.cfg.distortion >= 0 || w.cfg.sourceDistortion >= 0 }

// WriteEpisode starts an episode; meta, if not nil, is JSON kept with it
// (not available with a distortion target).
func (w *Writer) WriteEpisode(meta []byte) error {
	if w.rd != nil && w.rd.held != nil {
		if w.done {
			return ErrClosed
		}
		if meta != nil {
			return fmt.Errorf("%w: episode metadata with a distortion target", ErrInput)
		}
		w.rd.held = append(w.rd.held, nil)
		return nil
	}
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
	if w.rd != nil {
		return w.rd.write(w, action, codes, nil)
	}
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
// and writes it; action leads into it. The Writer compares them with the
// state's reconstruction (Account's Report).
func (w *Writer) WriteObs(action int64, obs []float32) error {
	if w.c.q == nil {
		return errNoQuantizer
	}
	if w.rd != nil {
		return w.rd.write(w, action, nil, obs)
	}
	if len(obs) != w.c.Slots()*w.c.q.Dim() {
		return fmt.Errorf("%w: %d observation values, want %d", ErrInput, len(obs), w.c.Slots()*w.c.q.Dim())
	}
	var err error
	if w.buf, w.rot, err = w.c.quantizeRotated(w.buf[:0], w.rot[:0], obs); err != nil {
		return err
	}
	return w.writeState(action, w.buf, w.rot)
}

// WriteAll writes whole episodes, each with its metadata: its codes, or
// its observations quantized.
func (w *Writer) WriteAll(eps []Episode) error {
	for i := range eps {
		if err := w.writeEpisode(&eps[i]); err != nil {
			if len(eps) > 1 {
				return fmt.Errorf("episode %d: %w", i, err)
			}
			return err
		}
	}
	return nil
}

func (w *Writer) writeEpisode(e *Episode) error {
	if w.rd != nil {
		return w.rd.writeEpisode(w, e)
	}
	codes, rot, err := w.c.episodeCodes(e, w.src != nil)
	if err != nil {
		return err
	}
	if err := w.WriteEpisode(e.Meta); err != nil {
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

// episodeCodes returns the codes of e: its observations quantized when it
// has them and the codec a quantizer (with their rotation when rotate is
// set), else its codes.
func (c *Codec) episodeCodes(e *Episode, rotate bool) (codes []uint16, rot []float32, err error) {
	codes = e.Codes
	if codes == nil || e.Obs != nil && c.q != nil {
		if c.q == nil {
			return nil, nil, errNoQuantizer
		}
		if rotate {
			codes, rot, err = c.quantizeRotated(nil, nil, e.Obs)
		} else {
			codes, err = c.Quantize(nil, e.Obs)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if g := c.m.Geom; len(codes) != len(e.Actions)*g.N() {
		return nil, nil, inputError(fmt.Sprintf("%d actions (one per state) but %d codes: %d states take %d codes (%d slots × %d subspaces)", len(e.Actions), len(codes), len(e.Actions), len(e.Actions)*g.N(), g.S, g.M))
	}
	return codes, rot, nil
}

// SetLevel sets the retention level (an index into WithLevels) of the
// states written next.
func (w *Writer) SetLevel(level int) error {
	if w.rd != nil {
		return w.rd.setLevel(level)
	}
	if w.fw == nil {
		return fmt.Errorf("%w: levels with a distortion target", ErrInput)
	}
	return w.fw.SetLevel(level)
}

// Flush writes the completed chunks, so that Recover can keep them if the
// Writer never closes. It does nothing with a distortion target.
func (w *Writer) Flush() error {
	if w.fw == nil {
		return nil
	}
	return w.fw.Flush()
}

// Close completes the file (with a distortion target: searches λ and
// writes the file), and closes the file Create opened. Closing again does
// nothing and returns nil.
func (w *Writer) Close() error {
	err := w.close()
	if w.file != nil {
		if cerr := w.file.Close(); err == nil {
			err = cerr
		}
		w.file = nil
	}
	return err
}

func (w *Writer) close() error {
	if w.rd != nil && w.rd.held != nil {
		if w.done {
			return nil
		}
		w.done = true
		return w.rd.close(w)
	}
	if w.fw != nil {
		return w.fw.Close()
	}
	if w.done {
		return nil
	}
	w.done = true
	report := func(pr format.Probe) {
		if w.cfg.probe != nil {
			w.cfg.probe(pr)
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
	r, err := format.SearchLambda(context.Background(), w.c.m, w.held, target, report, opts...)
	if err != nil {
		return err
	}
	w.res, w.held = r, nil
	_, err = w.w.Write(r.File)
	return err
}

// Account returns the Writer's record of the states placed so far (of
// the whole file after Close): how many states and coded coordinates, what
// the omitted ones lost, and the Report the file's index records of its
// distortion against the lossless reconstruction and, for states written
// as float observations, against them.
func (w *Writer) Account() Account {
	if w.rd != nil && w.rd.res != nil {
		return w.rd.res.Account
	}
	if w.fw == nil {
		if w.res == nil {
			return format.Account{}
		}
		return w.res.Account
	}
	return w.fw.Account()
}

// Search returns, after Close, the outcome of the search a distortion
// target made (WithDistortion, WithSourceDistortion): the λ chosen in the
// file's 16.16 unit, the distortion reached, the trials it took. It is
// nil for a Writer without a target.
func (w *Writer) Search() *SearchResult {
	if w.rd != nil && w.rd.res != nil {
		p := w.rd.res
		l := format.LambdaLossless
		if p.Lam > 0 {
			// The coder's λ in the public unit (WithLambda), 16.16.
			l = lambda.Lambda(min(float64(format.DistUnit)/float64(p.Lam)*65536, float64(format.LambdaLossless-1)))
		}
		return &SearchResult{Lambda: l, Distortion: p.Dist, File: p.File,
			Account: p.Account, Report: p.Account.Report, Encodes: float64(w.rd.passes)}
	}
	return w.res
}

// QuantizerDistortion returns what the quantizer alone lost on the float
// observations written (written with WriteObs or as an Episode's Obs):
// the mean over slot vectors of the squared error of their lossless
// reconstruction over their squared norm, and how many slot vectors that
// is (0 when none were floats). A distortion target's file adds what
// coding changed on top of it.
func (w *Writer) QuantizerDistortion() (d float64, vectors int64) {
	if w.rd != nil {
		if p := w.rd.res; p != nil {
			return p.Floor, p.Vectors
		}
		if s := w.rd.src; s != nil {
			return s.quant.Distortion(), s.quant.Vectors
		}
		return 0, 0
	}
	if w.src == nil {
		return 0, 0
	}
	return w.src.quant.Distortion(), w.src.quant.Vectors
}
