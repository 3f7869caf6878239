package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

// wmzipCoder writes the test states with format.Writer and reads them with
// format.Reader (decode) and format.File (random reads).
type wmzipCoder struct {
	row  Row
	m    *wm.Model
	t    *testSet
	opts []format.Option
	want []uint16 // the reconstruction of a lossy encode on one goroutine
}

func newWmzip(m *wm.Model, t *testSet, keyframe int, lam lambda.Lambda, row Row) *wmzipCoder {
	return &wmzipCoder{row: row, m: m, t: t, opts: []format.Option{format.WithKeyframeInterval(keyframe), format.WithLambda(lam)}}
}

func (c *wmzipCoder) Info() Row { return c.row }

// Threads is n: format codes chunks on n goroutines (format.WithThreads).
func (c *wmzipCoder) Threads(n int) int { return n }

// Encode takes a lossy file's reconstruction as the Writer places its
// chunks (format.WithSource); an encode on more goroutines reuses the
// first's, as the bytes are the same.
func (c *wmzipCoder) Encode(threads int) (*Encoding, error) {
	var buf bytes.Buffer
	recon := !c.row.Lossless && c.want == nil
	want, _, err := c.write(&buf, recon, format.WithThreads(threads))
	if err != nil {
		return nil, err
	}
	if recon {
		c.want = want
	} else if !c.row.Lossless {
		want = c.want
	}
	return &Encoding{File: buf.Bytes(), Bytes: int64(buf.Len()), Want: want}, nil
}

// write encodes the test states to dst and returns the reconstruction
// (when recon is set) and the account.
func (c *wmzipCoder) write(dst io.Writer, recon bool, opts ...format.Option) ([]uint16, format.Account, error) {
	var want []uint16
	if recon {
		opts = append(opts, format.WithSource(func(r []uint16) format.Report {
			want = append(want, r...)
			return format.Report{}
		}))
	}
	w, err := format.NewWriter(dst, c.m, append(c.opts[:len(c.opts):len(c.opts)], opts...)...)
	if err != nil {
		return nil, format.Account{}, err
	}
	n := c.t.n
	for e := range c.t.episodes() {
		if err := w.WriteEpisode(nil); err != nil {
			return nil, format.Account{}, err
		}
		for i := c.t.starts[e]; i < c.t.starts[e+1]; i++ {
			if err := w.WriteState(c.t.actions[i], c.t.codes[i*n:(i+1)*n]); err != nil {
				return nil, format.Account{}, err
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, format.Account{}, err
	}
	return want, w.Account(), nil
}

func (c *wmzipCoder) Decode(file []byte, threads int) (*Decoded, error) {
	r, err := format.NewReader(bytes.NewReader(file), c.m, format.WithThreads(threads))
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
	// Cold reads: without the chunk cache every read decodes from its
	// chunk's keyframe, as the first read of a chunk does.
	f, err := format.Open(bytes.NewReader(file), int64(len(file)), c.m, format.WithCacheBytes(0))
	if err != nil {
		return nil, err
	}
	return fileReader{f}, nil
}

type fileReader struct{ f *format.File }

func (r fileReader) State(e, step int, dst []uint16) ([]uint16, error) {
	_, s, err := r.f.ReadState(e, step, dst[:0])
	return s, err
}

// lossyWmzip returns the coder of the least-storage λ whose encoding of the
// test states has relative distortion ≤ target, found by
// format.SearchLambda as `wmzip encode --distortion` finds it; the search
// is timed apart.
func lossyWmzip(s *Setup, t *testSet, keyframe int, target float64) (*wmzipCoder, error) {
	t0 := time.Now()
	var eps []wm.Episode
	for i := 0; i+1 < len(t.starts); i++ {
		a, b := t.starts[i], t.starts[i+1]
		eps = append(eps, wm.Episode{Codes: t.codes[a*t.n : b*t.n], Actions: t.actions[a:b]})
	}
	res, err := format.SearchLambda(context.Background(), s.Model, eps, target, nil, format.WithKeyframeInterval(keyframe))
	if err != nil {
		return nil, err
	}
	acct := res.Account
	row := Row{
		Coder: fmt.Sprintf("wmzip D<=%g", target), Lambda: float64(res.Lambda) / 65536, Target: target, Distortion: res.Distortion,
		Retained:      float64(acct.Retained) / float64(max(acct.States, 1)*int64(t.n)),
		SearchSeconds: time.Since(t0).Seconds(), SearchRuns: max(1, int(math.Ceil(res.Encodes))),
	}
	row.Note = fmt.Sprintf("λ %.4g found in %.1f encodes of the file (%.2fs, not in the encode figure); distortion %.4g, retained %.3f; checked against the writer's reconstruction",
		row.Lambda, res.Encodes, row.SearchSeconds, res.Distortion, row.Retained)
	return newWmzip(s.Model, t, keyframe, res.Lambda, row), nil
}
