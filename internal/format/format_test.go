package format

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wmzip/wmzip/internal/rans"
	"github.com/wmzip/wmzip/internal/wm"
)

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	geoms := []struct {
		g    wm.Geometry
		prec uint
	}{
		{wm.Geometry{S: 1, M: 1, K: 2}, 10},
		{wm.Geometry{S: 2, M: 3, K: 3}, 12},
		{wm.Geometry{S: 3, M: 5, K: 300}, 16},
		{wm.Geometry{S: 4, M: 2, K: 17}, 11},
		{wm.Geometry{S: 32, M: 32, K: 64}, 16},
	}
	for gi, tc := range geoms {
		G := []int{1, 3, 8}[gi%3]
		if tc.g.N() > 100 {
			G = 4
		}
		lanes := []int{1, 2, 5, rans.MaxLanes, rans.DefaultLanes}[gi]
		name := fmt.Sprintf("%dx%dxK%d/G%d/L%d", tc.g.S, tc.g.M, tc.g.K, G, lanes)
		t.Run(name, func(t *testing.T) {
			eps := genEpisodes(rng, tc.g, []int{0, 1, G - 1, G, G + 1, 2*G + 3})
			m := trainModel(tc.g, tc.prec, eps)
			b := encode(t, m, eps, WithKeyframeInterval(G), WithLanes(lanes))
			got, err := readAll(b, m)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameEpisodes(got, eps); err != nil {
				t.Fatal("sequential:", err)
			}
			got, err = openAll(b, m)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameEpisodes(got, eps); err != nil {
				t.Fatal("random access:", err)
			}
			f, err := Open(bytes.NewReader(b), int64(len(b)), m)
			if err != nil {
				t.Fatal(err)
			}
			n := tc.g.N()
			for e := range eps {
				if f.EpisodeLen(e) != len(eps[e].Actions) {
					t.Fatalf("episode %d: length %d, want %d", e, f.EpisodeLen(e), len(eps[e].Actions))
				}
				for s := range eps[e].Actions {
					a, c, err := f.StateAction(e, s)
					if err != nil {
						t.Fatal(err)
					}
					if a != eps[e].Actions[s] || !slices.Equal(c, eps[e].Codes[s*n:(s+1)*n]) {
						t.Fatalf("State(%d, %d) differs from sequential decode", e, s)
					}
				}
			}
			info := f.Info()
			var states int64
			for _, e := range eps {
				states += int64(len(e.Actions))
			}
			if info.States != states || info.Episodes != len(eps) ||
				info.HeaderBytes+info.ModelBytes+info.PayloadBytes+info.IndexBytes != int64(len(b)) {
				t.Fatalf("info %+v inconsistent with %d states, %d bytes", info, states, len(b))
			}
			// The physical size must stay close to the ideal code length.
			if ideal := info.IdealBits() / 8; float64(info.PayloadBytes) < ideal {
				t.Fatalf("payload %d bytes below ideal %.1f", info.PayloadBytes, ideal)
			}
		})
	}
}

// TestActionsExtreme codes every kind of action symbol, the extremes of
// int64 and runs that exercise the adaptive count halving.
func TestActionsExtreme(t *testing.T) {
	g := wm.Geometry{S: 1, M: 2, K: 4}
	rng := rand.New(rand.NewPCG(3, 4))
	e := genEpisodes(rng, g, []int{3000})
	for i := range e[0].Actions {
		switch i % 7 {
		case 0:
			e[0].Actions[i] = int64(i % 40)
		case 1:
			e[0].Actions[i] = -int64(i)
		case 2:
			e[0].Actions[i] = math.MinInt64 + int64(i%3)
		case 3:
			e[0].Actions[i] = math.MaxInt64 - int64(i%3)
		case 4:
			e[0].Actions[i] = 1 << (i % 63)
		}
	}
	m := trainModel(g, 10, e)
	b := encode(t, m, e, WithKeyframeInterval(1000))
	got, err := readAll(b, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameEpisodes(got, e); err != nil {
		t.Fatal(err)
	}
}

type chunkedWriter struct {
	w     bytes.Buffer
	max   int
	calls int
}

func (c *chunkedWriter) Write(p []byte) (int, error) {
	c.calls++
	return c.w.Write(p)
}

func TestIdenticalBytes(t *testing.T) {
	g := wm.Geometry{S: 4, M: 4, K: 40}
	rng := rand.New(rand.NewPCG(5, 6))
	eps := genEpisodes(rng, g, []int{5, 0, 17, 1, 9})
	m := trainModel(g, 14, eps)
	want := encode(t, m, eps, WithKeyframeInterval(4))

	// Flush after every call, under different GOMAXPROCS: each Flush ends
	// a chunk, so the bytes differ from want but not between runs, and
	// decode to the same states.
	var flushed []byte
	for _, procs := range []int{1, 2, 8} {
		old := runtime.GOMAXPROCS(procs)
		if b := encode(t, m, eps, WithKeyframeInterval(4)); !bytes.Equal(b, want) {
			t.Fatalf("GOMAXPROCS=%d: bytes differ", procs)
		}
		var cw chunkedWriter
		w, err := NewWriter(&cw, m, WithKeyframeInterval(4))
		if err != nil {
			t.Fatal(err)
		}
		n := g.N()
		for _, e := range eps {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := w.WriteEpisode(e.Meta); err != nil {
				t.Fatal(err)
			}
			for i, a := range e.Actions {
				// The writer must not keep the caller's slice.
				st := slices.Clone(e.Codes[i*n : (i+1)*n])
				if err := w.WriteState(a, st); err != nil {
					t.Fatal(err)
				}
				clear(st)
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		runtime.GOMAXPROCS(old)
		if flushed == nil {
			flushed = cw.w.Bytes()
			got, err := readAll(flushed, m)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameEpisodes(got, eps); err != nil {
				t.Fatalf("flushed file: %v", err)
			}
			if got, err := openAll(flushed, m); err != nil || sameEpisodes(got, eps) != nil {
				t.Fatalf("flushed file, random access: %v", err)
			}
		} else if !bytes.Equal(cw.w.Bytes(), flushed) {
			t.Fatalf("GOMAXPROCS=%d with flushes: bytes differ", procs)
		}
		if cw.calls < 5 {
			t.Fatalf("flushes made only %d writes", cw.calls)
		}
	}
}

func TestModelMismatch(t *testing.T) {
	g := wm.Geometry{S: 2, M: 2, K: 8}
	rng := rand.New(rand.NewPCG(7, 8))
	eps := genEpisodes(rng, g, []int{6})
	m := trainModel(g, 12, eps)
	other := trainModel(g, 12, genEpisodes(rng, g, []int{6}))
	b := encode(t, m, eps)
	if _, err := NewReader(bytes.NewReader(b), other); !errors.Is(err, ErrModelMismatch) {
		t.Fatalf("NewReader with another model: %v", err)
	}
	if _, err := Open(bytes.NewReader(b), int64(len(b)), other); !errors.Is(err, ErrModelMismatch) {
		t.Fatalf("Open with another model: %v", err)
	}
	if _, err := NewReader(bytes.NewReader(b), nil); !errors.Is(err, ErrNoModel) {
		t.Fatalf("NewReader without a model: %v", err)
	}
	if _, err := Open(bytes.NewReader(b), int64(len(b)), nil); !errors.Is(err, ErrNoModel) {
		t.Fatalf("Open without a model: %v", err)
	}
}

func TestEmbeddedModel(t *testing.T) {
	g := wm.Geometry{S: 2, M: 3, K: 9}
	rng := rand.New(rand.NewPCG(9, 10))
	eps := genEpisodes(rng, g, []int{4, 7})
	m := trainModel(g, 12, eps)
	b := encode(t, m, eps, WithEmbeddedModel(true), WithKeyframeInterval(3))
	raw, _ := m.MarshalBinary()
	for _, give := range []*wm.Model{nil, m} {
		got, err := readAll(b, give)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameEpisodes(got, eps); err != nil {
			t.Fatal(err)
		}
		f, err := Open(bytes.NewReader(b), int64(len(b)), give)
		if err != nil {
			t.Fatal(err)
		}
		if f.Model().ID() != m.ID() || f.Info().ModelBytes != int64(len(raw)) {
			t.Fatalf("embedded model not recovered: %+v", f.Info())
		}
	}
	other := trainModel(g, 12, genEpisodes(rng, g, []int{3}))
	if _, err := readAll(b, other); !errors.Is(err, ErrModelMismatch) {
		t.Fatalf("embedded file with another model: %v", err)
	}
}

func TestReadHeader(t *testing.T) {
	g := wm.Geometry{S: 3, M: 2, K: 20}
	rng := rand.New(rand.NewPCG(11, 12))
	eps := genEpisodes(rng, g, []int{2})
	m := trainModel(g, 13, eps)
	b := encode(t, m, eps, WithKeyframeInterval(5), WithLanes(3), WithEmbeddedModel(true))
	h, err := ReadHeader(bytes.NewReader(b[:HeaderSize]))
	if err != nil {
		t.Fatal(err)
	}
	want := Header{Version: Version, Geom: g, Precision: 13, Lanes: 3, KeyframeInterval: 5,
		Lambda: LambdaLossless, ModelID: m.ID(), ModelEmbedded: true, ModelSize: h.ModelSize}
	if !cmp.Equal(h, want) || h.ModelSize == 0 || !h.Lossless() {
		t.Fatalf("header %+v, want %+v", h, want)
	}
	if _, err := ReadHeader(bytes.NewReader(b[:HeaderSize-1])); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short header: %v", err)
	}
	v := slices.Clone(b[:HeaderSize])
	for _, ver := range []byte{1, Version + 1} {
		v[8] = ver
		var ue *UnsupportedError
		if _, err := ReadHeader(bytes.NewReader(v)); !errors.Is(err, ErrVersion) || !errors.As(err, &ue) || ue.Offset != 8 {
			t.Fatalf("version %d: %v", ver, err)
		}
	}
}

// TestRetainHook exercises the path of coordinates that are not coded:
// they decode to the modal value of their table.
func TestRetainHook(t *testing.T) {
	g := wm.Geometry{S: 3, M: 4, K: 11}
	rng := rand.New(rand.NewPCG(13, 14))
	eps := genEpisodes(rng, g, []int{9, 1})
	m := trainModel(g, 12, eps)
	gate := withGate(1<<16, func(j int, _ *wm.Predictor) bool { return j%3 != 0 })
	b := encode(t, m, eps, gate, WithKeyframeInterval(4))
	if _, err := readAll(b, m); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("finite lambda without a gate: %v", err)
	}
	got, err := readAll(b, m, gate)
	if err != nil {
		t.Fatal(err)
	}
	// Replay the decoder's predictor on the reconstruction: in a chunk
	// coded by the rule, every omitted coordinate must hold its table's
	// modal value, committed as omitted, and every other the input; a
	// chunk the writer coded losslessly holds the input.
	modes := chunkModes(t, b, m)
	p := m.NewPredictor()
	n := g.N()
	for e := range eps {
		for s := range eps[e].Actions {
			if s%4 == 0 {
				p.Reset()
			}
			lossless := modes[e][s/4].mode == modeLossless
			p.Begin(got[e].Actions[s])
			for j := 0; j < n; j++ {
				want := eps[e].Codes[s*n+j]
				p.Predict(j)
				omitted := j%3 == 0 && !lossless
				if omitted {
					want = p.Modal()
				}
				v := got[e].Codes[s*n+j]
				if v != want {
					t.Fatalf("episode %d state %d coordinate %d: %d, want %d", e, s, j, v, want)
				}
				if omitted {
					p.CommitOmitted(j, v)
				} else {
					p.Commit(j, v)
				}
			}
		}
	}
	ra, err := openAll(b, m, gate)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameEpisodes(ra, got); err != nil {
		t.Fatal(err)
	}
}

func TestWriterInput(t *testing.T) {
	g := wm.Geometry{S: 2, M: 2, K: 5}
	m := trainModel(g, 10, nil)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteState(0, make([]uint16, 4)); !errors.Is(err, ErrInput) {
		t.Fatalf("state before episode: %v", err)
	}
	if err := w.WriteEpisode([]byte("{not json")); !errors.Is(err, ErrInput) {
		t.Fatalf("bad metadata: %v", err)
	}
	if err := w.WriteEpisode(nil); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteState(0, make([]uint16, 3)); !errors.Is(err, ErrInput) {
		t.Fatalf("short state: %v", err)
	}
	if err := w.WriteState(0, []uint16{0, 5, 0, 0}); !errors.Is(err, ErrInput) {
		t.Fatalf("code out of range: %v", err)
	}
	if err := w.WriteState(0, []uint16{0, 4, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEpisode(nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	got, err := readAll(buf.Bytes(), m)
	if err != nil || len(got) != 1 || len(got[0].Actions) != 1 {
		t.Fatalf("decoded %v, %v", got, err)
	}
	for _, o := range []Option{WithKeyframeInterval(0), WithKeyframeInterval(MaxKeyframeInterval + 1),
		WithLanes(0), WithLanes(rans.MaxLanes + 1), WithPrecision(9), WithPrecision(17), WithMaxMemory(0)} {
		if _, err := NewWriter(io.Discard, m, o); err == nil {
			t.Fatal("invalid option accepted")
		}
	}
	if _, err := NewWriter(io.Discard, m, WithPrecision(12)); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("precision other than the model's: %v", err)
	}
	big := trainModel(wm.Geometry{S: 64, M: 64, K: 2}, 10, nil)
	if _, err := NewWriter(io.Discard, big, WithKeyframeInterval(MaxChunkCoords/4096+1)); !errors.Is(err, ErrInput) {
		t.Fatalf("chunk too large: %v", err)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriterStickyError(t *testing.T) {
	g := wm.Geometry{S: 1, M: 2, K: 5}
	m := trainModel(g, 10, nil)
	w, err := NewWriter(&failWriter{n: 10}, m)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteEpisode(nil)
	if err := w.Flush(); err == nil {
		t.Fatal("flush to a full disk succeeded")
	}
	if err := w.WriteState(0, []uint16{1, 2}); err == nil || err.Error() != "disk full" {
		t.Fatalf("error not sticky: %v", err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("close after failure succeeded")
	}
}

func TestMemoryLimit(t *testing.T) {
	g := wm.Geometry{S: 8, M: 8, K: 16}
	rng := rand.New(rand.NewPCG(15, 16))
	eps := genEpisodes(rng, g, []int{10})
	m := trainModel(g, 12, eps)
	b := encode(t, m, eps, WithEmbeddedModel(true))
	if _, err := NewReader(bytes.NewReader(b), nil, WithMaxMemory(1000)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("NewReader under a tiny memory limit: %v", err)
	}
	if _, err := Open(bytes.NewReader(b), int64(len(b)), nil, WithMaxMemory(1000)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Open under a tiny memory limit: %v", err)
	}
}

func TestEmptyFile(t *testing.T) {
	m := trainModel(wm.Geometry{S: 1, M: 1, K: 2}, 10, nil)
	b := encode(t, m, nil)
	if len(b) != HeaderSize+indexHdrSize+reportLen+TrailerSize {
		t.Fatalf("empty file of %d bytes", len(b))
	}
	got, err := readAll(b, m)
	if err != nil || len(got) != 0 {
		t.Fatalf("%v %v", got, err)
	}
	f, err := Open(bytes.NewReader(b), int64(len(b)), m)
	if err != nil || f.Episodes() != 0 {
		t.Fatalf("%v", err)
	}
	if _, _, err := f.DecodeEpisode(0); !errors.Is(err, ErrInput) {
		t.Fatalf("missing episode: %v", err)
	}
}

func TestCRC32C(t *testing.T) {
	if got := crc([]byte("123456789")); got != 0xE3069283 {
		t.Fatalf("CRC-32C check value %#x", got)
	}
}

// TestFileConcurrent decodes states of one File from several goroutines
// (run with -race).
func TestFileConcurrent(t *testing.T) {
	g := wm.Geometry{S: 3, M: 3, K: 12}
	rng := rand.New(rand.NewPCG(17, 18))
	eps := genEpisodes(rng, g, []int{13, 6})
	m := trainModel(g, 12, eps)
	b := encode(t, m, eps, WithKeyframeInterval(4))
	f, err := Open(bytes.NewReader(b), int64(len(b)), m)
	if err != nil {
		t.Fatal(err)
	}
	n := g.N()
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			for i := range 40 {
				e := (w + i) % 2
				s := (w*7 + i) % len(eps[e].Actions)
				c, err := f.State(e, s)
				if err == nil && !slices.Equal(c, eps[e].Codes[s*n:(s+1)*n]) {
					err = fmt.Errorf("State(%d, %d) differs", e, s)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestIdealRate checks the recorded ideal code length against the physical
// stream sizes, and that the sequential Reader reports the same summary as
// Open.
func TestIdealRate(t *testing.T) {
	g := wm.Geometry{S: 8, M: 8, K: 32}
	rng := rand.New(rand.NewPCG(19, 20))
	eps := genEpisodes(rng, g, []int{200, 70})
	m := trainModel(g, 14, eps)
	const lanes = 4
	b := encode(t, m, eps, WithKeyframeInterval(64), WithLanes(lanes))
	f, err := Open(bytes.NewReader(b), int64(len(b)), m)
	if err != nil {
		t.Fatal(err)
	}
	info := f.Info()
	r, err := NewReader(bytes.NewReader(b), m)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Info(); ok {
		t.Fatal("Info ready before the end")
	}
	for {
		if _, err := r.NextEpisode(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if ri, ok := r.Info(); !ok || !cmp.Equal(ri, info) {
		t.Fatalf("Reader.Info %+v, Open's %+v", ri, info)
	}
	framing := int64(0)
	for _, e := range eps {
		framing += episodeHdrSize + crcSize + int64(len(e.Meta))
	}
	framing += info.Chunks * (chunkHdrSize + crcSize)
	streamBits := float64(8 * (info.PayloadBytes - framing))
	ideal := info.IdealBits()
	// Each chunk's stream ends with its lane states (32 bits each, about
	// half of which carry information) and rounds to 16-bit words.
	slack := float64(info.Chunks * (32*lanes + 16))
	if streamBits < ideal*0.99 || streamBits > ideal*1.01+slack {
		t.Fatalf("streams %.0f bits, ideal %.0f bits", streamBits, ideal)
	}
	t.Logf("streams %.0f bits, ideal %.0f bits (%.3f%%)", streamBits, ideal, 100*(streamBits/ideal-1))
}

// TestActionWorkedExample pins the worked example of SPEC.md, "Action
// coding".
func TestActionWorkedExample(t *testing.T) {
	m := newActionModel(10)
	cum := m.table()
	if cum[1] != 13 || cum[11] != 146 || cum[12] != 159 || cum[76] != 1010 {
		t.Fatalf("initial table: cum[1]=%d cum[11]=%d cum[12]=%d cum[76]=%d", cum[1], cum[11], cum[12], cum[76])
	}
	if s, z, raw := m.symbolOf(-1); s != 0 || z != 0 || raw != 0 {
		t.Fatalf("action -1 at chunk start: symbol %d", s)
	}
	if s, z, raw := m.symbolOf(5); s != 11 || z != 10 || raw != 0 {
		t.Fatalf("action 5: symbol %d", s)
	}
	m.update(11, 5)
	if m.total != 109 || m.w[11] != 33 {
		t.Fatalf("after update: W=%d w[11]=%d", m.total, m.w[11])
	}
	cum = m.table()
	if cum[11] != 11+11*947/109 || cum[12] != 12+44*947/109 {
		t.Fatalf("adapted table: cum[11]=%d cum[12]=%d", cum[11], cum[12])
	}
	if s, z, raw := m.symbolOf(100); s != 20 || z != 200 || raw != 7 {
		t.Fatalf("action 100: symbol %d, z %d, %d raw bits", s, z, raw)
	}
	if s, _, raw := m.symbolOf(math.MinInt64); s != 76 || raw != 63 {
		t.Fatalf("action MinInt64: symbol %d, %d raw bits", s, raw)
	}
}

// chunkModes returns the mode of every chunk of file b, per episode.
func chunkModes(t *testing.T, b []byte, m *wm.Model) [][]chunkMode {
	t.Helper()
	f, err := Open(bytes.NewReader(b), int64(len(b)), m, withGate(0, func(int, *wm.Predictor) bool { return true }))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]chunkMode
	for _, e := range f.idx.episodes {
		var ms []chunkMode
		for _, c := range e.chunks {
			rec := b[c.offset : c.offset+c.length]
			ms = append(ms, modeOf(rec))
		}
		out = append(out, ms)
	}
	return out
}
