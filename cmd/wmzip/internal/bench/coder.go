package bench

import (
	"errors"

	"github.com/wmzip/wmzip/npz"
)

// ErrInput is wrapped by errors for input a benchmark cannot run on.
var ErrInput = errors.New("bench: invalid input")

// ErrMismatch is wrapped by the error of a decode or read that does not
// return what was written.
var ErrMismatch = errors.New("bench: decoded output differs")

// A Coder is one row of the speed table: it compresses the test states of a
// Setup and reads them back. Measure times Encode, Decode and
// StateReader.State; work done before (training, a λ search, building a
// dictionary, opening a file) is not timed and is reported by Info.
type Coder interface {
	// Info describes the row: name, whether it is lossless, shared bytes
	// not counted, notes. Measure fills in the figures.
	Info() Row
	// Threads returns the goroutines Encode and Decode use when allowed n:
	// 1 for a coder that cannot use more.
	Threads(n int) int
	// Encode compresses the test states on up to threads goroutines.
	Encode(threads int) (*Encoding, error)
	// Decode decompresses every test state of file on up to threads
	// goroutines.
	Decode(file []byte, threads int) (*Decoded, error)
	// Open prepares single-state reads of file.
	Open(file []byte) (StateReader, error)
}

// An Encoding is what Coder.Encode wrote.
type Encoding struct {
	File  []byte   // what Decode and Open read
	Bytes int64    // bytes charged to the test states: len(File) but for a conditional coder
	Want  []uint16 // the codes a decoder must return; nil: the input's (lossless)
}

// Decoded is what Coder.Decode returns, in the coder's own layout so that
// no conversion is timed: Codes (time-major) and Actions (nil when the coder
// does not store them), or Packed, the codes as baseline.Pack lays them out.
type Decoded struct {
	Codes   []uint16
	Actions []int64
	Packed  []byte
}

// A StateReader reads single states of a file.
type StateReader interface {
	// State appends to dst[:0] the codes of state step of episode e.
	State(e, step int, dst []uint16) ([]uint16, error)
}

// testSet is the test trajectory as every coder sees it.
type testSet struct {
	codes   []uint16
	actions []int64
	n, k    int
	starts  []int // first state of each episode, then the number of states
	packed  []byte
}

func newTestSet(tr *npz.Trajectory, k int) *testSet {
	t := &testSet{codes: tr.Codes, actions: tr.Actions, n: tr.S * tr.M, k: k}
	for _, e := range tr.Episodes() {
		t.starts = append(t.starts, e[0])
	}
	t.starts = append(t.starts, tr.T)
	return t
}

func (t *testSet) states() int   { return len(t.codes) / t.n }
func (t *testSet) episodes() int { return len(t.starts) - 1 }

// index is the position of state step of episode e in the trajectory.
func (t *testSet) index(e, step int) (int, error) {
	if e < 0 || e >= t.episodes() || step < 0 || step >= t.starts[e+1]-t.starts[e] {
		return 0, errors.New("bench: no such state")
	}
	return t.starts[e] + step, nil
}

// codeBytes is the width of one packed code (baseline.Pack).
func (t *testSet) codeBytes() int {
	if t.k > 256 {
		return 2
	}
	return 1
}

// unpack appends the codes of packed bytes to dst[:0].
func (t *testSet) unpack(dst []uint16, b []byte) []uint16 {
	dst = dst[:0]
	if t.k > 256 {
		for i := 0; i+1 < len(b); i += 2 {
			dst = append(dst, uint16(b[i])|uint16(b[i+1])<<8)
		}
		return dst
	}
	for _, v := range b {
		dst = append(dst, uint16(v))
	}
	return dst
}
