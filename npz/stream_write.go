package npz

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zip"

	"github.com/wmzip/wmzip/internal/atomicfile"
)

// TrajectoryWriter writes a trajectory .npz state by state, with memory
// that does not grow with the file. A zip archive holds its members one
// after the other, so only the first array (codes, or obs without codes)
// goes straight to the file; the other per-step arrays wait in temporary
// files beside it until Close, which appends them. The bytes are those
// WriteTrajectory writes for the same trajectory and options.
type TrajectoryWriter struct {
	h      TrajectoryHeader
	path   string
	method uint16
	f      *atomicfile.File
	bw     *bufio.Writer
	zw     *zip.Writer
	cols   []*column // per-step arrays in member order
	t      int       // states written
	big    bool      // an action needs int64
	err    error     // sticky
	small  []uint8   // uint8 codes
}

// column is one per-step array of a TrajectoryWriter.
type column struct {
	name  string
	dt    dtype
	row   int64 // elements per state
	w     io.Writer
	spool *os.File // nil for the array written straight to the file
	sw    *bufio.Writer
}

// CreateTrajectory starts writing a trajectory of the shape h describes
// to path, atomically (see WriteNPZ): h.T states are then written with
// Write, and Close completes the file. CodesDtype must be uint8 or uint16;
// actions are written as int32 when they all fit, else as int64, as
// WriteTrajectory does. WithDeflate applies.
func CreateTrajectory(path string, h *TrajectoryHeader, opts ...Option) (*TrajectoryWriter, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := h.check(path); err != nil {
		return nil, err
	}
	w := &TrajectoryWriter{h: *h, path: path, method: zip.Store}
	w.h.EpisodeStart = append([]int64(nil), h.EpisodeStart...)
	w.h.Extra = append([]string(nil), h.Extra...)
	if c.deflate {
		w.method = zip.Deflate
	}
	if w.h.ObsDtype == "" {
		w.h.ObsDtype = "float32"
	}
	add := func(name, dt string, s, m int) {
		d, _ := dtypeByName(dt)
		w.cols = append(w.cols, &column{name: name, dt: d, row: int64(s) * int64(m)})
	}
	if w.h.HasCodes {
		add(NameCodes, w.h.CodesDtype, w.h.S, w.h.M)
	}
	if w.h.HasObs {
		add(NameObs, w.h.ObsDtype, w.h.ObsS, w.h.ObsD)
	}
	if w.h.HasActions {
		add(NameActions, "int64", 1, 1)
	}
	for _, name := range w.h.Extra {
		add(name, "uint8", 1, 1)
	}
	if w.f, err = atomicfile.Create(path); err != nil {
		return nil, fmt.Errorf("npz: %w", err)
	}
	w.bw = bufio.NewWriterSize(w.f, 1<<20)
	w.zw = zip.NewWriter(w.bw)
	// Spools go where the output's temporary file went: beside the file
	// it replaces, or in the temporary folder for a device.
	dir, base := filepath.Dir(w.f.Name()), filepath.Base(path)
	for i, col := range w.cols {
		if i == 0 {
			if col.w, err = w.member(col.name, col.dt, col.row); err != nil {
				break
			}
			continue
		}
		if col.spool, err = os.CreateTemp(dir, "."+base+".spool-*"); err != nil {
			err = fmt.Errorf("npz: %w", err)
			break
		}
		col.sw = bufio.NewWriterSize(col.spool, 1<<16)
		col.w = col.sw
	}
	if err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

// member starts the zip member of an array of T rows of row elements and
// writes its .npy header.
func (w *TrajectoryWriter) member(name string, dt dtype, row int64) (io.Writer, error) {
	mw, err := w.zw.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: w.method, Modified: zipTime})
	if err != nil {
		return nil, err
	}
	var shape []int
	switch name {
	case NameCodes:
		shape = stateDims(w.h.T, w.h.S, w.h.M)
	case NameObs:
		shape = stateDims(w.h.T, w.h.ObsS, w.h.ObsD)
	case NameEpisodeStart:
		shape = []int{int(row)}
	default:
		shape = []int{w.h.T}
	}
	_, err = mw.Write(appendHeader(nil, dt, shape))
	return mw, err
}

// Write writes the next len(actions) states: their actions, their codes
// (S×M each; nil without codes), their observations (ObsS×ObsD each; nil
// without obs) and, for each array the header's Extra names, one value per
// state. Errors are sticky.
func (w *TrajectoryWriter) Write(actions []int64, codes []uint16, obs []float32, extra ...[]uint8) error {
	if w.err != nil {
		return w.err
	}
	if err := w.checkWrite(actions, codes, obs, extra); err != nil {
		return err
	}
	for _, col := range w.cols {
		var err error
		switch col.name {
		case NameCodes:
			err = w.writeCodes(col.w, codes)
		case NameObs:
			err = writeData(col.w, col.dt, obs)
		case NameActions:
			err = writeData(col.w, col.dt, actions)
		default:
			_, err = col.w.Write(extra[0])
			extra = extra[1:]
		}
		if err != nil {
			w.err = fmt.Errorf("npz: %w", err)
			return w.err
		}
	}
	w.t += len(actions)
	return nil
}

// checkWrite checks the arguments of Write: counts, actions and codes.
func (w *TrajectoryWriter) checkWrite(actions []int64, codes []uint16, obs []float32, extra [][]uint8) error {
	h := &w.h
	n := int64(len(actions))
	l := loc{path: w.path}
	switch {
	case n > int64(h.T-w.t):
		return l.errf(ErrContract, nil, "has T=%d states, %d written and %d more given", h.T, w.t, n)
	case h.HasCodes != (codes != nil) || h.HasCodes && int64(len(codes)) != n*int64(h.S)*int64(h.M):
		return l.errf(ErrContract, nil, "takes %d codes for %d states, got %d", n*int64(h.S)*int64(h.M)*bool01(h.HasCodes), n, len(codes))
	case h.HasObs != (obs != nil) || h.HasObs && int64(len(obs)) != n*int64(h.ObsS)*int64(h.ObsD):
		return l.errf(ErrContract, nil, "takes %d observation values for %d states, got %d", n*int64(h.ObsS)*int64(h.ObsD)*bool01(h.HasObs), n, len(obs))
	case len(extra) != len(h.Extra):
		return l.errf(ErrContract, nil, "has %d extra arrays, got values for %d", len(h.Extra), len(extra))
	}
	for i, x := range extra {
		if int64(len(x)) != n {
			return loc{w.path, h.Extra[i]}.errf(ErrContract, nil, "takes %d values for %d states, got %d", n, n, len(x))
		}
	}
	// Every int64 is an action (SPEC.md 6.10 codes any i64): none is
	// refused, and int32 is written only when every action fits.
	for _, a := range actions {
		w.big = w.big || a != int64(int32(a))
	}
	return nil
}

func bool01(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// writeCodes writes codes as CodesDtype.
func (w *TrajectoryWriter) writeCodes(dst io.Writer, codes []uint16) error {
	if w.h.CodesDtype == "uint16" {
		d, _ := dtypeByName("uint16")
		return writeData(dst, d, codes)
	}
	w.small = w.small[:0]
	for i, c := range codes {
		if c > math.MaxUint8 {
			at := int64(w.t)*int64(w.h.S)*int64(w.h.M) + int64(i)
			return loc{w.path, NameCodes}.errf(ErrContract, nil, "has code %d at index %d, too large for CodesDtype uint8", c, at)
		}
		w.small = append(w.small, uint8(c))
	}
	_, err := dst.Write(w.small)
	return err
}

// Close checks that T states were written, appends the arrays that waited
// and episode_start, and moves the file into place. On error nothing is
// left at the path. Close after an error returns it.
func (w *TrajectoryWriter) Close() error {
	if w.err == nil && w.t != w.h.T {
		w.err = loc{path: w.path}.errf(ErrContract, nil, "has T=%d states but %d were written", w.h.T, w.t)
	}
	if w.err == nil {
		w.err = w.finish()
	}
	err := w.err
	w.Abort()
	if err == nil {
		return nil
	}
	w.err = err
	return err
}

func (w *TrajectoryWriter) finish() error {
	starts := w.h.EpisodeStart
	if starts == nil && w.h.T > 0 {
		starts = []int64{0}
	}
	d64, _ := dtypeByName("int64")
	d32, _ := dtypeByName("int32")
	// episode_start follows actions (or obs, or codes) and precedes Extra.
	wroteStarts := false
	writeStarts := func() error {
		wroteStarts = true
		mw, err := w.member(NameEpisodeStart, d64, int64(len(starts)))
		if err != nil {
			return err
		}
		return writeData(mw, d64, starts)
	}
	for _, col := range w.cols[1:] {
		if !wroteStarts && col.name != NameObs && col.name != NameActions {
			if err := writeStarts(); err != nil {
				return fmt.Errorf("npz: %w", err)
			}
		}
		if err := w.appendSpool(col, d32); err != nil {
			return fmt.Errorf("npz: %w", err)
		}
	}
	if !wroteStarts {
		if err := writeStarts(); err != nil {
			return fmt.Errorf("npz: %w", err)
		}
	}
	if err := w.zw.Close(); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	if err := w.f.Commit(); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	return nil
}

// appendSpool writes the zip member of a column that waited in its
// temporary file; actions become int32 (d32) when they all fit.
func (w *TrajectoryWriter) appendSpool(col *column, d32 dtype) error {
	if err := col.sw.Flush(); err != nil {
		return err
	}
	if _, err := col.spool.Seek(0, io.SeekStart); err != nil {
		return err
	}
	dt := col.dt
	if col.name == NameActions && !w.big {
		dt = d32
	}
	mw, err := w.member(col.name, dt, col.row)
	if err != nil {
		return err
	}
	src := io.Reader(col.spool)
	if dt.name == "int32" {
		src = &narrowReader{r: bufio.NewReaderSize(col.spool, 1<<16)}
	}
	_, err = io.Copy(mw, src)
	return err
}

// narrowReader reads int64 little-endian values from r as int32 ones.
type narrowReader struct {
	r   *bufio.Reader
	buf [8 << 10]byte
}

func (n *narrowReader) Read(p []byte) (int, error) {
	k := min(len(p)/4, len(n.buf)/8)
	if k == 0 {
		return 0, io.ErrShortBuffer
	}
	got, err := io.ReadFull(n.r, n.buf[:8*k])
	if err == io.ErrUnexpectedEOF && got%8 == 0 {
		err = nil
	}
	if err != nil && err != io.EOF {
		return 0, err
	}
	le := binary.LittleEndian
	for i := range got / 8 {
		le.PutUint32(p[4*i:], uint32(int32(le.Uint64(n.buf[8*i:]))))
	}
	if got == 0 {
		return 0, io.EOF
	}
	return got / 2, nil
}

// Abort abandons the file: the temporary files are removed and nothing is
// left at the path. It does nothing after Close.
func (w *TrajectoryWriter) Abort() {
	for _, col := range w.cols {
		if col.spool != nil {
			col.spool.Close()
			os.Remove(col.spool.Name())
			col.spool = nil
		}
	}
	if w.f != nil {
		w.f.Abort()
		w.f = nil
	}
	if w.err == nil {
		w.err = fmt.Errorf("npz: %s: written after Close or Abort", w.path)
	}
}
