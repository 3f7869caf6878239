package bench

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/wm"
)

// wmzipCoder writes the test states with format.Writer and reads them with
// format.Reader (decode) and format.File (random reads).
type wmzipCoder struct {
	row  Row
	m    *wm.Model
	t    *testSet
	opts []format.Option
}

func newWmzip(m *wm.Model, t *testSet, keyframe int, lambda uint32, row Row) *wmzipCoder {
	return &wmzipCoder{row: row, m: m, t: t, opts: []format.Option{format.WithKeyframeInterval(keyframe), format.WithLambda(lambda)}}
}

func (c *wmzipCoder) Info() Row { return c.row }

// Threads is 1: format codes chunks on one goroutine. When a Writer and
// Reader option for parallel chunks exists, pass it in Encode and Decode and
// return n here.
func (c *wmzipCoder) Threads(int) int { return 1 }

func (c *wmzipCoder) Encode(int) (*Encoding, error) {
	var buf bytes.Buffer
	want, _, err := c.write(&buf, !c.row.Lossless)
	if err != nil {
		return nil, err
	}
	return &Encoding{File: buf.Bytes(), Bytes: int64(buf.Len()), Want: want}, nil
}

// write encodes the test states to dst and returns the writer's
// reconstruction (when recon is set) and its account.
func (c *wmzipCoder) write(dst io.Writer, recon bool) ([]uint16, format.Account, error) {
	w, err := format.NewWriter(dst, c.m, c.opts...)
	if err != nil {
		return nil, format.Account{}, err
	}
	var want, last []uint16
	n := c.t.n
	for e := range c.t.episodes() {
		if err := w.WriteEpisode(nil); err != nil {
			return nil, format.Account{}, err
		}
		for i := c.t.starts[e]; i < c.t.starts[e+1]; i++ {
			if err := w.WriteState(c.t.actions[i], c.t.codes[i*n:(i+1)*n]); err != nil {
				return nil, format.Account{}, err
			}
			if recon {
				last = w.LastState(last)
				want = append(want, last...)
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, format.Account{}, err
	}
	return want, w.Account(), nil
}

func (c *wmzipCoder) Decode(file []byte, _ int) (*Decoded, error) {
	r, err := format.NewReader(bytes.NewReader(file), c.m)
	if err != nil {
		return nil, err
	}
	codes := make([]uint16, 0, len(c.t.codes))
	actions := make([]int64, 0, len(c.t.actions))
	var st []uint16
	for {
		if _, err := r.NextEpisode(); err == io.EOF {
			return &Decoded{Codes: codes, Actions: actions}, nil
		} else if err != nil {
			return nil, err
		}
		for {
			a, s, err := r.ReadState(st)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			st = s
			codes = append(codes, s...)
			actions = append(actions, a)
		}
	}
}

func (c *wmzipCoder) Open(file []byte) (StateReader, error) {
	f, err := format.Open(bytes.NewReader(file), int64(len(file)), c.m)
	if err != nil {
		return nil, err
	}
	return fileReader{f}, nil
}

type fileReader struct{ f *format.File }

func (r fileReader) State(e, step int, dst []uint16) ([]uint16, error) {
	s, err := r.f.State(e, step)
	return append(dst[:0], s...), err
}

// lossyWmzip returns the coder of the least-storage λ whose encoding of the
// test states has relative distortion ≤ target, found as `wmzip encode
// --distortion` finds it (searchLambda); the search is timed apart.
func lossyWmzip(s *Setup, t *testSet, keyframe int, target float64) (*wmzipCoder, error) {
	t0 := time.Now()
	lambda, d, runs, acct, err := searchLambda(s.Model, s.Gate, t, keyframe, target)
	if err != nil {
		return nil, err
	}
	row := Row{
		Coder: fmt.Sprintf("wmzip D<=%g", target), Lambda: float64(lambda) / 65536, Target: target, Distortion: d,
		Retained:      float64(acct.Retained) / float64(max(acct.States, 1)*int64(t.n)),
		SearchSeconds: time.Since(t0).Seconds(), SearchRuns: runs,
	}
	row.Note = fmt.Sprintf("λ %.4g found in %d encodings (%.2fs, not in the encode figure); distortion %.4g, retained %.3f; checked against the writer's reconstruction",
		row.Lambda, runs, row.SearchSeconds, d, row.Retained)
	return newWmzip(s.Model, t, keyframe, lambda, row), nil
}

// searchLambda is `wmzip encode --distortion`'s search: bisection over
// λ = 2^(k/4), k = −16..63, for the smallest λ whose closed-loop encoding
// has relative distortion ≤ target under the writer's account, assuming
// distortion does not grow with λ. It returns λ, its distortion, the
// encodings run and the account of λ's encoding.
func searchLambda(m *wm.Model, p *gate.Params, t *testSet, keyframe int, target float64) (uint32, float64, int, format.Account, error) {
	at := func(k int) uint32 {
		l, _ := gate.LambdaFixed(math.Exp2(float64(k) / 4))
		return l
	}
	runs := 0
	eval := func(k int) (float64, format.Account, error) {
		runs++
		_, a, err := newWmzip(m, t, keyframe, at(k), Row{}).write(io.Discard, false)
		return p.RelDistortion(a.DistSum, a.States), a, err
	}
	lo, hi := -16, 63 // invariant: D(hi) ≤ target
	dHi, aHi, err := eval(hi)
	if err != nil {
		return 0, 0, 0, aHi, err
	}
	if dHi > target {
		return 0, 0, 0, aHi, fmt.Errorf("%w: distortion %.4g at the largest λ already exceeds %g", ErrInput, dHi, target)
	}
	dLo, aLo, err := eval(lo)
	if err != nil {
		return 0, 0, 0, aLo, err
	}
	if dLo <= target {
		return at(lo), dLo, runs, aLo, nil
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		d, a, err := eval(mid)
		if err != nil {
			return 0, 0, 0, a, err
		}
		if d <= target {
			hi, dHi, aHi = mid, d, a
		} else {
			lo = mid
		}
	}
	return at(hi), dHi, runs, aHi, nil
}
