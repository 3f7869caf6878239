package npz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/klauspost/compress/zip"
	"github.com/wmzip/wmzip/internal/half"
)

// TrajectoryReader reads a trajectory .npz state by state, with memory
// that does not grow with the file: codes, obs and actions are
// decompressed as they are read, each from its own position in the
// archive; only the episode starts are held. Arrays outside the contract
// are not read. A TrajectoryReader is not safe for concurrent use.
type TrajectoryReader struct {
	h     TrajectoryHeader
	path  string
	close io.Closer

	codes, obs, actions *stateStream // nil: the file has no such array
	t                   int          // states read
	err                 error        // sticky
	buf                 []byte
}

// OpenTrajectory opens the trajectory .npz at path and reads its header:
// every member's .npy header, the contract's dtypes and shapes, and the
// episode starts, which it checks (ErrContract). No state is read yet.
// WithMaxBytes bounds the episode starts, the one array read whole.
func OpenTrajectory(path string, opts ...Option) (*TrajectoryReader, error) {
	c, f, size, err := openWith(path, opts)
	if err != nil {
		return nil, err
	}
	r, err := newTrajectoryReader(f, size, path, c)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.close = f
	return r, nil
}

// NewTrajectoryReader is OpenTrajectory for an archive held in the size
// bytes of r, which must stay readable until the last state is read.
func NewTrajectoryReader(r io.ReaderAt, size int64, opts ...Option) (*TrajectoryReader, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return newTrajectoryReader(r, size, "", c)
}

func newTrajectoryReader(ra io.ReaderAt, size int64, path string, c config) (*TrajectoryReader, error) {
	members, err := checkMembers(ra, size, loc{path: path})
	if err != nil {
		return nil, err
	}
	arrays := make([]Array, len(members))
	byName := make(map[string]member, len(members))
	for i, m := range members {
		arrays[i] = Array{Name: m.l.array, Dtype: m.h.dt.name, Shape: m.h.shape}
		byName[m.l.array] = m
	}
	ct, err := sortArrays(arrays, path)
	if err != nil {
		return nil, err
	}
	r := &TrajectoryReader{h: ct.h, path: path}
	h := &r.h
	for _, a := range ct.extra {
		h.Extra = append(h.Extra, a.Name)
	}
	if ct.starts != nil {
		m := byName[NameEpisodeStart]
		if need, ok := memSize(m.h); !ok || need > c.maxBytes {
			return nil, m.l.errf(ErrTooLarge, nil, "needs %s of memory, over the %d-byte limit", memString(m.h), c.maxBytes)
		}
		data, err := readMember(m)
		if err != nil {
			return nil, err
		}
		h.EpisodeStart = toInt64(data)
	} else if h.T > 0 {
		h.EpisodeStart = []int64{0}
	}
	if err := checkStarts(h.EpisodeStart, h.T, path); err != nil {
		return nil, err
	}
	if h.T == 0 {
		return r, nil // no state to read; a state's size is not even bounded
	}
	// An array in Fortran order is converted whole when first read.
	for _, a := range []*Array{ct.codes, ct.obs, ct.actions} {
		if a == nil {
			continue
		}
		if m := byName[a.Name]; m.h.fortran {
			if need, ok := memSize(m.h); !ok || need > c.maxBytes {
				return nil, m.l.errf(ErrTooLarge, nil, "is in Fortran order, whose conversion needs %d bytes of memory, over the %d-byte limit: save it with np.ascontiguousarray", need, c.maxBytes)
			}
		}
	}
	// The member's size check bounds T × S × M, so these products fit.
	if ct.codes != nil {
		r.codes = &stateStream{m: byName[NameCodes], row: int64(h.S) * int64(h.M)}
	}
	if ct.obs != nil {
		r.obs = &stateStream{m: byName[NameObs], row: int64(h.ObsS) * int64(h.ObsD)}
	}
	if ct.actions != nil {
		r.actions = &stateStream{m: byName[NameActions], row: 1}
	}
	return r, nil
}

// Header returns the trajectory's shape, dtypes and episode starts (not
// to be modified).
func (r *TrajectoryReader) Header() TrajectoryHeader { return r.h }

// Path returns the path given to OpenTrajectory ("" for
// NewTrajectoryReader), which errors name.
func (r *TrajectoryReader) Path() string { return r.path }

// Read reads the next states, as many as actions holds but not past step
// T, and returns how many it read; io.EOF when every state has been read.
// It sets their actions (NoAction where the file has none), their codes
// into codes (S×M each, widened from uint8) and their observations into
// obs (ObsS×ObsD each, widened from float16). codes or obs may be nil to
// leave that array unread; it is skipped over when a later call asks for
// it. Reading the last state checks the checksums of the arrays read.
// Errors in the data are sticky.
func (r *TrajectoryReader) Read(actions []int64, codes []uint16, obs []float32) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n := min(len(actions), r.h.T-r.t)
	if n == 0 {
		if len(actions) > 0 {
			return 0, io.EOF
		}
		return 0, nil
	}
	if err := r.checkBuffers(n, codes, obs); err != nil {
		return 0, err
	}
	if r.buf == nil {
		r.buf = make([]byte, chunkElems*8)
	}
	le := binary.LittleEndian
	var err error
	if codes != nil {
		if r.h.CodesDtype == "uint8" {
			err = r.codes.read(r.t, n, r.buf, func(i int, b []byte) {
				for j, c := range b {
					codes[i+j] = uint16(c)
				}
			})
		} else {
			err = r.codes.read(r.t, n, r.buf, func(i int, b []byte) {
				for j := range len(b) / 2 {
					codes[i+j] = le.Uint16(b[2*j:])
				}
			})
		}
	}
	if err == nil && obs != nil {
		switch r.h.ObsDtype {
		case "float16":
			err = r.obs.read(r.t, n, r.buf, func(i int, b []byte) {
				for j := range len(b) / 2 {
					obs[i+j] = half.Float32(le.Uint16(b[2*j:]))
				}
			})
		case "float64":
			err = r.obs.read(r.t, n, r.buf, func(i int, b []byte) {
				for j := range len(b) / 8 {
					obs[i+j] = float32(math.Float64frombits(le.Uint64(b[8*j:])))
				}
			})
		default:
			err = r.obs.read(r.t, n, r.buf, func(i int, b []byte) {
				for j := range len(b) / 4 {
					obs[i+j] = math.Float32frombits(le.Uint32(b[4*j:]))
				}
			})
		}
	}
	if err == nil {
		err = r.readActions(actions[:n])
	}
	if err == nil && r.t+n == r.h.T {
		for _, s := range []*stateStream{r.codes, r.obs, r.actions} {
			if err == nil && s != nil {
				err = s.finish(r.h.T)
			}
		}
	}
	if err != nil {
		r.err = err
		return 0, err
	}
	r.t += n
	return n, nil
}

// checkBuffers checks that the caller's buffers hold n states of the
// arrays they ask for.
func (r *TrajectoryReader) checkBuffers(n int, codes []uint16, obs []float32) error {
	switch {
	case codes != nil && r.codes == nil:
		return fmt.Errorf("npz: Read: the trajectory has no %q array", NameCodes)
	case obs != nil && r.obs == nil:
		return fmt.Errorf("npz: Read: the trajectory has no %q array", NameObs)
	case codes != nil && int64(len(codes)) < int64(n)*r.codes.row:
		return fmt.Errorf("npz: Read: %d codes cannot hold %d states of %d", len(codes), n, r.codes.row)
	case obs != nil && int64(len(obs)) < int64(n)*r.obs.row:
		return fmt.Errorf("npz: Read: %d observation values cannot hold %d states of %d", len(obs), n, r.obs.row)
	}
	return nil
}

// readActions reads the actions of the states from r.t on: any int64.
func (r *TrajectoryReader) readActions(dst []int64) error {
	if r.actions == nil {
		for i := range dst {
			dst[i] = NoAction
		}
		return nil
	}
	le := binary.LittleEndian
	var err error
	if r.actions.m.h.dt.name == "int32" {
		err = r.actions.read(r.t, len(dst), r.buf, func(i int, b []byte) {
			for j := range len(b) / 4 {
				dst[i+j] = int64(int32(le.Uint32(b[4*j:])))
			}
		})
	} else {
		err = r.actions.read(r.t, len(dst), r.buf, func(i int, b []byte) {
			for j := range len(b) / 8 {
				dst[i+j] = int64(le.Uint64(b[8*j:]))
			}
		})
	}
	if err != nil {
		return err
	}
	return nil
}

// Close closes the file OpenTrajectory opened and the arrays' readers. It
// does not close the io.ReaderAt of NewTrajectoryReader.
func (r *TrajectoryReader) Close() error {
	for _, s := range []*stateStream{r.codes, r.obs, r.actions} {
		if s != nil && s.rc != nil {
			s.rc.Close()
			s.rc = nil
		}
	}
	if r.err == nil {
		r.err = errors.New("npz: read after Close")
	}
	if r.close == nil {
		return nil
	}
	err := r.close.Close()
	r.close = nil
	return err
}

// stateStream reads one array of the trajectory, a row of elements per
// state, from its own decompressor.
type stateStream struct {
	m   member
	row int64         // elements per state
	rc  io.ReadCloser // nil until the first read
	at  int           // states read or skipped
}

// read reads states [t, t+n) of the array, first skipping the states
// before t that were not read, and hands conv their bytes in pieces of
// whole elements no larger than buf, with the index of each piece's first
// element.
func (s *stateStream) read(t, n int, buf []byte, conv func(i int, b []byte)) error {
	if err := s.skipTo(t); err != nil {
		return err
	}
	size := int64(s.m.h.dt.size)
	per := int64(len(buf)) / size
	total := int64(n) * s.row
	for i := int64(0); i < total; {
		k := min(total-i, per)
		if _, err := io.ReadFull(s.rc, buf[:k*size]); err != nil {
			return s.fail(err)
		}
		conv(int(i), buf[:k*size])
		i += k
	}
	s.at = t + n
	return nil
}

// skipTo opens the array's reader if need be and moves it to state t.
func (s *stateStream) skipTo(t int) error {
	if s.rc == nil {
		rc, err := s.m.f.Open()
		if err != nil {
			return s.m.l.errf(ErrFormat, err, "cannot be opened")
		}
		s.rc = rc
		if _, err := io.CopyN(io.Discard, rc, s.m.h.dataOff); err != nil {
			return s.fail(err)
		}
		if s.m.h.fortran {
			b, err := readFortran(rc, s.m.h)
			if err != nil {
				return s.fail(err)
			}
			if err := s.checkEnd(); err != nil {
				return err
			}
			rc.Close()
			s.rc = io.NopCloser(bytes.NewReader(b))
		}
	}
	if skip := int64(t-s.at) * s.row * int64(s.m.h.dt.size); skip > 0 {
		if _, err := io.CopyN(io.Discard, s.rc, skip); err != nil {
			return s.fail(err)
		}
	}
	s.at = t
	return nil
}

// finish checks, for an array that was read, that its data ends after
// state t, the last: reaching the end checks the member's checksum.
func (s *stateStream) finish(t int) error {
	if s.rc == nil {
		return nil
	}
	if err := s.skipTo(t); err != nil {
		return err
	}
	return s.checkEnd()
}

// checkEnd checks that the array's reader is at its end, which checks a
// member's size and checksum.
func (s *stateStream) checkEnd() error {
	var one [1]byte
	if n, err := io.ReadFull(s.rc, one[:]); n != 0 || err != io.EOF {
		if err == nil {
			err = zip.ErrFormat
		}
		return s.m.l.errf(ErrFormat, err, "fails its size or checksum check")
	}
	return nil
}

func (s *stateStream) fail(err error) error {
	switch {
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return s.m.l.truncated("data")
	case errors.Is(err, zip.ErrChecksum) || errors.Is(err, zip.ErrFormat):
		return s.m.l.errf(ErrFormat, err, "fails its size or checksum check")
	}
	return s.m.l.errf(ErrFormat, err, "has corrupt compressed data")
}
