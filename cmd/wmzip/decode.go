package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wmzip/wmzip/ctmc"
	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/wm"
)

func init() {
	register("decode", "decompress a .wmz file into a trajectory (.npz)", runDecode)
}

// openWMZ opens a .wmz with the model at modelPath, or its embedded model
// when modelPath is empty.
func openWMZ(path, modelPath string, opts ...format.Option) (*format.File, *os.File, error) {
	var m *wm.Model
	if modelPath != "" {
		var err error
		if m, err = loadModel(modelPath); err != nil {
			return nil, nil, err
		}
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	f, err := format.Open(fh, st.Size(), m, opts...)
	if err != nil {
		fh.Close()
		return nil, nil, wmzError(path, err)
	}
	return f, fh, nil
}

// wmzError names the .wmz file at path in err and, when the damage lies
// where recovery can work around it (after the header, embedded model and
// level table), says how to keep what is left.
func wmzError(path string, err error) error {
	var fe *format.FormatError
	if !errors.As(err, &fe) || errors.Is(err, format.ErrModelMismatch) || errors.Is(err, format.ErrNoModel) || errors.Is(err, format.ErrTooLarge) {
		return fmt.Errorf("%s: %w", path, err)
	}
	fh, oerr := os.Open(path)
	if oerr != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer fh.Close()
	h, herr := format.ReadHeader(fh)
	if herr != nil || fe.Offset < h.BodyStart() {
		return fmt.Errorf("%s: %w", path, err)
	}
	return fmt.Errorf("%s: %w (cut short or damaged? 'wmzip recover -o fixed.wmz %s' keeps its valid records)", path, err, path)
}

// decodeAll decodes every episode of f into a trajectory. Episodes without
// states are left out, as a trajectory .npz cannot hold them: eps gives
// the file's episode of each episode of tr.
func decodeAll(f *format.File, quiet bool) (tr *npz.Trajectory, eps []int, err error) {
	h := f.Header()
	tr = &npz.Trajectory{S: h.Geom.S, M: h.Geom.M, HasActions: true}
	if h.Geom.K <= 256 {
		tr.CodesDtype = "uint8"
	} else {
		tr.CodesDtype = "uint16"
	}
	prog := progress(quiet, "decoding")
	for e := range f.Episodes() {
		acts, codes, err := f.DecodeEpisode(e)
		if err != nil {
			return nil, nil, err
		}
		if len(acts) > 0 {
			tr.EpisodeStart = append(tr.EpisodeStart, int64(len(tr.Actions)))
			tr.Actions = append(tr.Actions, acts...)
			tr.Codes = append(tr.Codes, codes...)
			eps = append(eps, e)
		}
		prog(e+1, f.Episodes())
	}
	tr.T = len(tr.Actions)
	return tr, eps, nil
}

// decodeStream decodes every state of the file at path in order with a
// sequential format.Reader, which also gives each state's retention level.
// access, if not nil, is told of every state returned.
func decodeStream(path string, m *wm.Model, access func(e, t int64), quiet bool, opts ...format.Option) (*npz.Trajectory, []uint8, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	r, err := format.NewReader(fh, m, opts...)
	if err != nil {
		return nil, nil, err
	}
	h := r.Header()
	tr := &npz.Trajectory{S: h.Geom.S, M: h.Geom.M, HasActions: true, CodesDtype: "uint16"}
	if h.Geom.K <= 256 {
		tr.CodesDtype = "uint8"
	}
	var levels []uint8
	var buf []uint16
	for e := int64(0); ; e++ {
		if _, err := r.NextEpisode(); err == io.EOF {
			break
		} else if err != nil {
			return nil, nil, err
		}
		start := int64(len(tr.Actions))
		for t := int64(0); ; t++ {
			a, c, err := r.ReadState(buf)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, nil, err
			}
			buf = c
			tr.Actions = append(tr.Actions, a)
			tr.Codes = append(tr.Codes, c...)
			levels = append(levels, uint8(r.Level()))
			if access != nil {
				access(e, t)
			}
		}
		if int64(len(tr.Actions)) > start { // an .npz cannot hold an empty episode
			tr.EpisodeStart = append(tr.EpisodeStart, start)
		}
	}
	if _, ok := r.Info(); !ok {
		return nil, nil, fmt.Errorf("%w: stream ended before its index", format.ErrCorrupt)
	}
	tr.T = len(tr.Actions)
	return tr, levels, nil
}

// openAccessLog opens an access trace for appending, creating it with the
// trace header when it is missing or empty. An existing trace must begin
// with the header.
func openAccessLog(path string) (*ctmc.TraceWriter, *os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if st.Size() == 0 {
		return ctmc.NewTraceWriter(f), f, nil
	}
	// The first line that is neither blank nor a comment must be the header.
	sc := bufio.NewScanner(io.NewSectionReader(f, 0, st.Size()))
	first := ""
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && l[0] != '#' {
			first = strings.TrimRight(sc.Text(), "\r")
			break
		}
	}
	if first != ctmc.TraceHeader {
		f.Close()
		return nil, nil, fmt.Errorf("%s: not an access trace (its first line is not %q)", path, ctmc.TraceHeader)
	}
	tw := ctmc.AppendTraceWriter(f)
	var last [1]byte
	if _, err := f.ReadAt(last[:], st.Size()-1); err == nil && last[0] != '\n' {
		if _, err := f.Write([]byte("\n")); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	return tw, f, nil
}

func runDecode(args []string) (err error) {
	fs := newFlags("decode", "[-m model.wmm] [--episode E [--step T]] [--access-log trace.tsv] -o out.npz in.wmz")
	modelPath := fs.String("m", "", "model file (default: the model embedded in the file)")
	out := fs.String("o", "", "output .npz (required)")
	codesOnly := fs.Bool("codes-only", false, "write only the codes, not obs, the quantizer's reconstruction")
	episode := fs.Int("episode", -1, "random access: decode only episode E (0-based) through the index")
	step := fs.Int("step", -1, "random access: with --episode, decode only state T of the episode")
	accessLog := fs.String("access-log", "", "append one \"episode<TAB>step\" line per state decoded to this access trace (created with its header if missing; see package ctmc)")
	quiet := fs.Bool("q", false, "no progress or summary output")
	threads := threadsFlag(fs, "decoding a whole file or episode")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return errors.New("missing -o out.npz")
	}
	if len(pos) != 1 {
		return errors.New("want exactly one input .wmz")
	}
	if *step >= 0 && *episode < 0 {
		return errors.New("--step needs --episode")
	}
	if *episode < -1 || *step < -1 {
		return errors.New("--episode and --step must be ≥ 0")
	}
	var tw *ctmc.TraceWriter
	var opts []format.Option
	if *accessLog != "" {
		var lf *os.File
		if tw, lf, err = openAccessLog(*accessLog); err != nil {
			return err
		}
		defer func() {
			if e := tw.Close(); e != nil && err == nil {
				err = fmt.Errorf("%s: %w", *accessLog, e)
			}
			closeOr(lf, &err)
		}()
		opts = append(opts, format.WithAccessLog(tw.Access))
	}
	opts = append(opts, threads())
	f, fh, err := openWMZ(pos[0], *modelPath, opts...)
	if err != nil {
		return err
	}
	defer fh.Close()
	var tr *npz.Trajectory
	var levels []uint8
	what := ""
	switch {
	case *episode >= 0:
		if *episode >= f.Episodes() {
			return fmt.Errorf("%s: episode %d of %d", pos[0], *episode, f.Episodes())
		}
		h := f.Header()
		tr = &npz.Trajectory{S: h.Geom.S, M: h.Geom.M, HasActions: true, CodesDtype: "uint16", EpisodeStart: []int64{0}}
		if h.Geom.K <= 256 {
			tr.CodesDtype = "uint8"
		}
		if *step >= 0 {
			if *step >= f.EpisodeLen(*episode) {
				return fmt.Errorf("%s: step %d of %d in episode %d", pos[0], *step, f.EpisodeLen(*episode), *episode)
			}
			a, c, err := f.StateAction(*episode, *step)
			if err != nil {
				return wmzError(pos[0], err)
			}
			tr.Actions, tr.Codes = []int64{a}, c
			what = fmt.Sprintf(" (episode %d, step %d)", *episode, *step)
		} else {
			a, c, err := f.DecodeEpisode(*episode)
			if err != nil {
				return wmzError(pos[0], err)
			}
			tr.Actions, tr.Codes = a, c
			what = fmt.Sprintf(" (episode %d)", *episode)
		}
		tr.T = len(tr.Actions)
	case len(f.Header().Levels) > 0:
		// The sequential reader also gives every state's level.
		var access func(e, t int64)
		if tw != nil {
			access = tw.Access
		}
		if tr, levels, err = decodeStream(pos[0], f.Model(), access, *quiet, threads()); err != nil {
			return wmzError(pos[0], err)
		}
	default:
		if tr, _, err = decodeAll(f, *quiet); err != nil {
			return wmzError(pos[0], err)
		}
	}
	switch {
	case tr.T == 0 && *episode >= 0:
		return fmt.Errorf("%s: episode %d has no states", pos[0], *episode)
	case tr.T == 0:
		return fmt.Errorf("%s: no states to decode (%d episodes, none with a state)", pos[0], f.Episodes())
	}
	if empty := f.Episodes() - len(tr.EpisodeStart); *episode < 0 && empty > 0 {
		what = fmt.Sprintf(" (left out %d of %d episodes: without states, which an .npz cannot hold)", empty, f.Episodes())
	}
	// With a quantizer in the model, also give back the slot vectors.
	q, err := quantizerOf(f.Model())
	if err != nil {
		return err
	}
	if q != nil && !*codesOnly {
		if err := reconstructInto(q, tr); err != nil {
			return err
		}
	}
	if levels != nil {
		tr.Extra = append(tr.Extra, npz.Array{Name: "levels", Dtype: "uint8", Shape: []int{len(levels)}, Data: levels})
	}
	if err := npz.WriteTrajectory(*out, tr); err != nil {
		return err
	}
	if !*quiet {
		fmt.Printf("wrote %s: %d states, %d episodes%s\n", *out, tr.T, len(tr.EpisodeStart), what)
	}
	return nil
}
