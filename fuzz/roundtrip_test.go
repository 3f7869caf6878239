package fuzz

import (
	"bytes"
	"errors"
	"io"
	"math/bits"
	"testing"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/testkit"
	"github.com/wmzip/wmzip/internal/wm"
)

// data reads fuzz bytes as parameters, then zeros.
type data struct{ b []byte }

func (d *data) byte() byte {
	if len(d.b) == 0 {
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *data) u16() int { return int(d.byte()) | int(d.byte())<<8 }

// Retention modes of a round trip.
const (
	modeLossless = iota
	modeRule     // a custom integer rule (WithRetainRule)
	modeGate     // the model's calibrated gate at a finite λ (WithLambda)
	modes
)

// trip is one round trip drawn from fuzz bytes.
type trip struct {
	g        wm.Geometry
	prec     uint
	keyframe int
	lanes    int
	embed    bool
	mode     int
	lambda   lambda.Lambda
	thresh   uint32 // modeRule: retain below this modal frequency
	eps      []episode
	split    int  // episodes written before an Append
	flushes  byte // Flush before state t of an episode when bit t mod 8 is set
	levels   bool // modeGate: three levels, λ, 2λ+1 and lossless, by state
}

// flushBefore reports whether the trip flushes (ends a chunk) before state
// t > 0 of an episode.
func (tr *trip) flushBefore(t int) bool { return t > 0 && tr.flushes>>(t%8)&1 != 0 }

// levelOf is the level of state t of episode i when the trip has levels.
func levelOf(i, t int) int { return (i + t) % 3 }

// lambdas are the trip's levels.
func (tr *trip) lambdas() []lambda.Lambda {
	return []lambda.Lambda{tr.lambda, 2*tr.lambda + 1, format.LambdaLossless}
}

// boundary reports whether a chunk starts at state t of an episode.
func (tr *trip) boundary(t, inChunk int) bool {
	return t == 0 || inChunk == tr.keyframe || tr.flushBefore(t)
}

func drawTrip(raw []byte) *trip {
	d := &data{raw}
	tr := &trip{}
	tr.g = wm.Geometry{S: 1 + int(d.byte()%3), M: 1 + int(d.byte()%4)}
	// Small alphabets mostly (training costs grow with K²); sometimes one
	// above 256, for two-byte codes in the model's reference store.
	if kb := d.u16(); kb&0x8000 != 0 {
		tr.g = wm.Geometry{S: 1, M: 1 + tr.g.M%2, K: 257 + kb%16}
	} else {
		tr.g.K = 2 + kb%30
	}
	tr.prec = max(uint(10+d.byte()%7), uint(bits.Len(uint(tr.g.K-1))))
	tr.keyframe = 1 + int(d.byte()%5)
	tr.lanes = 1 + int(d.byte()%6)
	flags := d.byte()
	tr.embed = flags&1 != 0
	tr.mode = int(flags>>1&3) % modes
	tr.levels = tr.mode == modeGate && flags&8 != 0
	tr.flushes = d.byte()
	tr.lambda = lambda.Lambda(d.u16()) << 4
	tr.thresh = uint32(d.u16()) % (1 << tr.prec)
	ne := int(d.byte() % 4)
	tr.split = int(d.byte()) % (ne + 1)
	n := tr.g.N()
	for i := range ne {
		T := int(d.byte() % 9)
		e := episode{Actions: make([]int64, T), Codes: make([]uint16, T*n)}
		if i%2 == 1 {
			e.Meta = []byte(`{"i":1}`)
		}
		prev := make([]uint16, n)
		for t := range T {
			switch c := d.byte(); {
			case t == 0:
				e.Actions[t] = wm.NoAction
			case c < 200:
				e.Actions[t] = int64(c % 5)
			case c < 250:
				e.Actions[t] = e.Actions[t-1]
			default:
				e.Actions[t] = int64(uint64(d.u16())<<48|uint64(d.u16())) * int64(c%2*2-1)
			}
			for j := range n {
				// Persistent codes: a zero byte keeps the previous value.
				if c := d.byte(); c != 0 {
					prev[j] = uint16((int(c) + d.u16()) % tr.g.K)
				}
				e.Codes[t*n+j] = prev[j]
			}
		}
		tr.eps = append(tr.eps, e)
	}
	return tr
}

// model trains the trip's model on its own episodes (or one dummy state),
// and calibrates a gate for modeGate.
func (tr *trip) model(t *testing.T) *wm.Model {
	var train []wm.Episode
	for _, e := range tr.eps {
		if len(e.Actions) > 0 {
			train = append(train, wm.Episode{Codes: e.Codes, Actions: e.Actions})
		}
	}
	if len(train) == 0 {
		train = []wm.Episode{{Codes: make([]uint16, tr.g.N()), Actions: []int64{wm.NoAction}}}
	}
	m, err := wm.Train(tr.g, train, wm.TrainOptions{Precision: tr.prec, MaxRefStates: 64})
	if err != nil {
		t.Fatalf("Train: %v", err)
	}
	if tr.mode == modeGate {
		p, err := gate.Calibrate(m, train, gate.CalibOptions{})
		if err != nil {
			t.Fatalf("Calibrate: %v", err)
		}
		if m, err = gate.Apply(m, p); err != nil {
			t.Fatalf("Apply: %v", err)
		}
	}
	return m
}

// rule returns the retention rule of state t of episode i of the trip
// (nil: lossless) and the options that select it.
func (tr *trip) rule(t *testing.T, m *wm.Model) (func(i, t int) func(int, *wm.Predictor) (bool, uint16), []format.Option) {
	fn, opts := tr.rule1(t, m)
	if !tr.levels {
		return func(int, int) func(int, *wm.Predictor) (bool, uint16) { return fn }, opts
	}
	p, err := gate.FromModel(m)
	if err != nil {
		t.Fatal(err)
	}
	ls := tr.lambdas()
	rules := make([]func(int, *wm.Predictor) (bool, uint16), len(ls))
	for k, l := range ls {
		if l != format.LambdaLossless {
			rules[k] = p.Rule(l).NewDecider().Decide
		}
	}
	return func(i, k int) func(int, *wm.Predictor) (bool, uint16) { return rules[levelOf(i, k)] },
		[]format.Option{format.WithLevels(ls...)}
}

// rule1 is rule without levels.
func (tr *trip) rule1(t *testing.T, m *wm.Model) (func(int, *wm.Predictor) (bool, uint16), []format.Option) {
	switch tr.mode {
	case modeRule:
		thresh, prec := tr.thresh, m.Precision
		fn := gate.ModalFill(func(j int, pr *wm.Predictor) bool {
			_, best := pr.Prediction()
			if best == 0 {
				cum := pr.Table()
				for v := range cum {
					end := uint32(1) << prec
					if v+1 < len(cum) {
						end = uint32(cum[v+1])
					}
					best = max(best, end-uint32(cum[v]))
				}
			}
			return best < thresh || j == 0
		})
		return fn, []format.Option{format.WithRetainRule(tr.lambda, fn)}
	case modeGate:
		p, err := gate.FromModel(m)
		if err != nil {
			t.Fatal(err)
		}
		return p.Rule(tr.lambda).NewDecider().Decide, []format.Option{format.WithLambda(tr.lambda)}
	}
	return nil, nil
}

// reconstruct is the writer's reconstruction, computed with the model's
// predictor alone: coded coordinates keep their value, omitted ones take
// the rule's fill and are committed as omitted, and the predictor
// restarts at every chunk. levels are the states' levels as a Reader
// reports them: −1 for a chunk the writer coded losslessly.
func (tr *trip) reconstruct(m *wm.Model, rules func(i, t int) func(int, *wm.Predictor) (bool, uint16), levels [][]int) []episode {
	return testkit.Reconstruct(m, tr.eps, func(_, t, inChunk int) bool { return tr.boundary(t, inChunk) },
		func(i, t int) func(int, *wm.Predictor) (bool, uint16) {
			if levels[i][t] < 0 {
				return nil
			}
			return rules(i, t)
		}, true)
}

func modal(cum []uint16, prec uint) uint16 {
	best, bf := 0, uint32(0)
	for v := range cum {
		end := uint32(1) << prec
		if v+1 < len(cum) {
			end = uint32(cum[v+1])
		}
		if f := end - uint32(cum[v]); f > bf {
			best, bf = v, f
		}
	}
	return uint16(best)
}

// writeTrip writes episodes first.. of the trip with w and closes it.
func (tr *trip) write(t *testing.T, w *format.Writer, first int, eps []episode) {
	n := tr.g.N()
	for i, e := range eps {
		if err := w.WriteEpisode(e.Meta); err != nil {
			t.Fatal(err)
		}
		for k, a := range e.Actions {
			if tr.flushBefore(k) {
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if tr.levels {
				if err := w.SetLevel(levelOf(first+i, k)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.WriteState(a, e.Codes[k*n:(k+1)*n]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// FuzzRoundTrip draws a geometry, episodes of codes and actions, a
// keyframe interval, lanes and a retention mode from the fuzz input,
// encodes and decodes: the decode must equal the source in lossless mode
// and the writer's reconstruction in lossy mode, every way of decoding
// must agree, and appending the last episodes to a file of the first must
// give the bytes of writing them all at once.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 30, 0, 12, 3, 2, 0, 0, 0, 0, 0, 2, 1, 5, 9, 3, 4, 0, 0, 7, 7, 200, 1, 2, 3})
	f.Add([]byte{2, 3, 255, 0, 16, 1, 7, 3, 0, 1, 0, 64, 3, 2, 8, 250, 4, 0, 0, 0, 3, 1, 0, 0, 5, 5})
	f.Add([]byte{0, 1, 9, 0, 11, 4, 1, 4, 0, 2, 0, 255, 1, 0, 4, 20, 255, 1, 0, 0, 0, 9, 9, 9})
	// The gate with three levels and flushes mid-episode.
	f.Add([]byte{1, 2, 12, 0, 12, 3, 2, 12, 0x2A, 0, 8, 0, 0, 3, 1, 9, 0, 5, 7, 1, 3, 0, 9, 200, 0, 1, 0, 2, 0, 3, 7, 0, 0, 5, 1, 1, 1, 1, 1, 1, 9})
	f.Add([]byte{2, 1, 6, 0, 10, 2, 3, 13, 0xFF, 0, 1, 0, 0, 2, 0, 8, 2, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 0, 0, 0, 128})
	f.Fuzz(func(t *testing.T, raw []byte) {
		tr := drawTrip(raw)
		m := tr.model(t)
		retain, opts := tr.rule(t, m)
		opts = append(opts, format.WithKeyframeInterval(tr.keyframe), format.WithLanes(tr.lanes), format.WithEmbeddedModel(tr.embed))
		n := tr.g.N()
		var buf bytes.Buffer
		w, err := format.NewWriter(&buf, m, opts...)
		if err != nil {
			t.Fatalf("NewWriter: %v", err)
		}
		tr.write(t, w, 0, tr.eps)
		b := buf.Bytes()

		dm := m
		if tr.embed {
			dm = nil
		}
		ropts := opts[: len(opts)-3 : len(opts)-3] // the retention choice only
		want := tr.eps
		if tr.mode != modeLossless {
			want = tr.reconstruct(m, retain, stateLevels(t, b, dm, ropts))
		}
		seq, err := readAll(b, dm, ropts...)
		if err != nil {
			t.Fatalf("Reader: %v", err)
		}
		if !sameEpisodes(seq, want) {
			t.Fatal("decode differs from the source (lossless) or the writer's reconstruction (lossy)")
		}
		fl, err := format.Open(bytes.NewReader(b), int64(len(b)), dm, ropts...)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if err := fl.Verify(); err != nil {
			t.Fatalf("Verify: %v", err)
		}
		ra, err := fileEpisodes(fl)
		if err != nil || !sameEpisodes(ra, want) {
			t.Fatalf("random-access decode differs: %v", err)
		}
		for e := range want {
			for s := range want[e].Actions {
				a, c, err := fl.StateAction(e, s)
				if err != nil || a != want[e].Actions[s] || !bytes.Equal(u16(c), u16(want[e].Codes[s*n:(s+1)*n])) {
					t.Fatalf("StateAction(%d, %d) differs: %v", e, s, err)
				}
			}
		}
		// A crash: the file cut at an offset drawn from the input recovers
		// a prefix of the episodes, each cut at a chunk boundary.
		cut := len(b)
		if len(raw) > 0 {
			cut = int(raw[len(raw)-1]) * len(b) / 256
		}
		if rf, err := format.Open(bytes.NewReader(b[:cut]), int64(cut), dm, append(ropts, format.WithRecovery(true))...); err == nil {
			got, err := fileEpisodes(rf)
			if err != nil {
				t.Fatalf("cut at %d: recovered records do not decode: %v", cut, err)
			}
			if !tr.isPrefix(got, want) {
				t.Fatalf("cut at %d: recovery is not a prefix of the episodes", cut)
			}
		} else if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d: recovery: %v", cut, err)
		}
		// Append the episodes after split to a file of those before.
		var first bytes.Buffer
		w, err = format.NewWriter(&first, m, opts...)
		if err != nil {
			t.Fatal(err)
		}
		tr.write(t, w, 0, tr.eps[:tr.split])
		mf := &testkit.MemFile{B: first.Bytes(), AppendOnly: true}
		w, err = format.Append(mf, dm, ropts...)
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
		tr.write(t, w, tr.split, tr.eps[tr.split:])
		if !bytes.Equal(mf.B, b) {
			t.Fatal("appending gives other bytes than one write")
		}
	})
}

// isPrefix reports whether got is want cut short: the same episodes, the
// last one possibly holding only its first chunks.
func (tr *trip) isPrefix(got, want []episode) bool {
	if len(got) > len(want) {
		return false
	}
	n := tr.g.N()
	for i, e := range got {
		w := want[i]
		k := len(e.Actions)
		if k > len(w.Actions) || (i < len(got)-1 && k != len(w.Actions)) || (k != len(w.Actions) && !tr.chunkEnd(k)) {
			return false
		}
		w.Actions, w.Codes = w.Actions[:k], w.Codes[:k*n]
		if len(e.Actions) == 0 {
			e.Actions, e.Codes, w.Actions, w.Codes = nil, nil, nil, nil
		}
		if !sameEpisodes([]episode{e}, []episode{w}) {
			return false
		}
	}
	return true
}

// chunkEnd reports whether a chunk of an episode ends after its first k
// states.
func (tr *trip) chunkEnd(k int) bool {
	inChunk := 0
	for t := 0; t <= k; t++ {
		if tr.boundary(t, inChunk) {
			if t == k {
				return true
			}
			inChunk = 0
		}
		inChunk++
	}
	return false
}

// stateLevels returns the level of every state of file b as a Reader
// reports it.
func stateLevels(t *testing.T, b []byte, m *wm.Model, opts []format.Option) [][]int {
	t.Helper()
	r, err := format.NewReader(bytes.NewReader(b), m, opts...)
	if err != nil {
		t.Fatalf("Reader: %v", err)
	}
	var out [][]int
	for {
		if _, err := r.NextEpisode(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("Reader: %v", err)
		}
		var ls []int
		for {
			if _, _, err := r.ReadState(nil); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("Reader: %v", err)
			}
			ls = append(ls, r.Level())
		}
		out = append(out, ls)
	}
	return out
}
