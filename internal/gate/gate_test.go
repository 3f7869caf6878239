package gate_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/policy"
	"github.com/wmzip/wmzip/internal/wm"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.txt")

type fixture struct {
	m     *wm.Model // with a GATE section
	p     *gate.Params
	test  []wm.Episode
	noCal *wm.Model // without
}

var (
	fixOnce sync.Once
	fix     fixture
	fixErr  error
)

// world trains a small model on graphworld episodes, calibrates the gate on
// held-out ones and keeps two more for coding.
func world(t testing.TB) fixture {
	t.Helper()
	fixOnce.Do(func() {
		r, err := graphworld.Generate(graphworld.Config{Nodes: 40, Episodes: 8, Steps: 40, Slots: 4, Subspaces: 4, K: 16, Seed: 3, GraphSeed: 5})
		if err != nil {
			fixErr = err
			return
		}
		n := r.S * r.M
		var eps []wm.Episode
		for i := range r.EpisodeStart {
			s, e := r.Span(i)
			eps = append(eps, wm.Episode{Codes: r.Codes[s*int64(n) : e*int64(n)], Actions: r.Actions[s:e]})
		}
		g := wm.Geometry{S: r.S, M: r.M, K: r.K}
		m, err := wm.Train(g, eps[:4], wm.TrainOptions{MaxRefStates: 1024})
		if err != nil {
			fixErr = err
			return
		}
		p, err := gate.Calibrate(m, eps[4:6], gate.CalibOptions{MinSamples: 16})
		if err != nil {
			fixErr = err
			return
		}
		mg, err := gate.Apply(m, p)
		if err != nil {
			fixErr = err
			return
		}
		fix = fixture{m: mg, p: p, test: eps[6:], noCal: m}
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fix
}

// write encodes episodes and returns the file and the writer's
// reconstruction of every state.
func write(t testing.TB, m *wm.Model, eps []wm.Episode, opts ...format.Option) ([]byte, [][]uint16, format.Account) {
	t.Helper()
	var buf bytes.Buffer
	w, err := format.NewWriter(&buf, m, opts...)
	if err != nil {
		t.Fatal(err)
	}
	n := m.Geom.N()
	var rec [][]uint16
	for _, e := range eps {
		if err := w.WriteEpisode(nil); err != nil {
			t.Fatal(err)
		}
		for i, a := range e.Actions {
			if err := w.WriteState(a, e.Codes[i*n:(i+1)*n]); err != nil {
				t.Fatal(err)
			}
			rec = append(rec, w.LastState(nil))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// A chunk coded losslessly, as no longer than by the rule, decodes to
	// its input: LastState gave the rule's reconstruction.
	r, err := format.NewReader(bytes.NewReader(buf.Bytes()), m, opts...)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for _, e := range eps {
		if _, err := r.NextEpisode(); err != nil {
			t.Fatal(err)
		}
		for k := range e.Actions {
			if _, _, err := r.ReadState(nil); err != nil {
				t.Fatal(err)
			}
			if r.Level() == -1 {
				rec[i] = slices.Clone(e.Codes[k*n : (k+1)*n])
			}
			i++
		}
	}
	return buf.Bytes(), rec, w.Account()
}

// readAll decodes a file sequentially.
func readAll(t testing.TB, b []byte, m *wm.Model, opts ...format.Option) [][]uint16 {
	t.Helper()
	r, err := format.NewReader(bytes.NewReader(b), m, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]uint16
	for {
		if _, err := r.NextEpisode(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		for {
			_, c, err := r.ReadState(nil)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
	}
	return out
}

// TestDecoderEqualsWriter checks, at several λ and keyframe intervals, that
// the sequential reader, whole-episode decoding and random access to single
// states all return the writer's reconstruction, on every state.
func TestDecoderEqualsWriter(t *testing.T) {
	f := world(t)
	n := f.m.Geom.N()
	states := 0
	for _, e := range f.test {
		states += len(e.Actions)
	}
	prevRetained := uint64(0)
	for _, lambda := range []lambda.Lambda{0, 1 << 12, 1 << 16, 4 << 16, 32 << 16, 1024 << 16, format.LambdaLossless} {
		for _, g := range []int{1, 7, 256} {
			name := fmt.Sprintf("lambda=%#x/G=%d", lambda, g)
			b, rec, acct := write(t, f.m, f.test, format.WithLambda(lambda), format.WithKeyframeInterval(g), format.WithLanes(3))
			got := readAll(t, b, f.m)
			if len(got) != len(rec) {
				t.Fatalf("%s: %d states decoded, %d written", name, len(got), len(rec))
			}
			for i := range rec {
				if !slices.Equal(got[i], rec[i]) {
					t.Fatalf("%s: state %d: reader differs from writer", name, i)
				}
			}
			file, err := format.Open(bytes.NewReader(b), int64(len(b)), f.m)
			if err != nil {
				t.Fatal(err)
			}
			if err := file.Verify(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			in := file.Info()
			if in.Retained != acct.Retained {
				t.Fatalf("%s: index retains %d, writer %d", name, in.Retained, acct.Retained)
			}
			if lambda == format.LambdaLossless && in.Retained != uint64(states*n) {
				t.Fatalf("%s: lossless retains %d of %d", name, in.Retained, states*n)
			}
			if g == 7 && in.Retained < prevRetained {
				t.Fatalf("%s: retained %d fell below %d at a smaller λ", name, in.Retained, prevRetained)
			}
			if g == 7 {
				prevRetained = in.Retained
			}
			// Random access, last state first.
			base := 0
			for e := range f.test {
				l := file.EpisodeLen(e)
				for s := l - 1; s >= 0; s -= 3 {
					c, err := file.State(e, s)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(c, rec[base+s]) {
						t.Fatalf("%s: episode %d state %d: random access differs", name, e, s)
					}
				}
				_, all, err := file.DecodeEpisode(e)
				if err != nil {
					t.Fatal(err)
				}
				for s := range l {
					if !slices.Equal(all[s*n:(s+1)*n], rec[base+s]) {
						t.Fatalf("%s: episode %d state %d: DecodeEpisode differs", name, e, s)
					}
				}
				base += l
			}
		}
	}
	if prevRetained != uint64(states*n) {
		t.Fatalf("lossless retained %d", prevRetained)
	}
}

// TestLossyNeedsGate checks that a finite λ is refused without a GATE
// section, on both sides.
func TestLossyNeedsGate(t *testing.T) {
	f := world(t)
	if _, err := format.NewWriter(io.Discard, f.noCal, format.WithLambda(1<<16)); !errors.Is(err, format.ErrUnsupported) {
		t.Fatalf("writer: %v", err)
	}
	b, _, _ := write(t, f.m, f.test[:1], format.WithLambda(1<<16), format.WithEmbeddedModel(false))
	if _, err := format.NewReader(bytes.NewReader(b), f.noCal); !errors.Is(err, format.ErrModelMismatch) {
		t.Fatalf("reader with another model: %v", err)
	}
}

// TestBaselinesDecode checks that every baseline policy decodes to its
// writer's reconstruction when the reader is given the same rule.
func TestBaselinesDecode(t *testing.T) {
	f := world(t)
	for _, pol := range policy.All() {
		knob := uint32(4 << 16)
		switch pol {
		case policy.Random:
			knob = 1 << 31
		case policy.Uncertainty:
			knob = 256
		}
		opt := format.WithRetainRule(lambda.Lambda(knob), gate.ModalFill(policy.Retain(f.p, pol, knob)))
		b, rec, acct := write(t, f.m, f.test, opt, format.WithKeyframeInterval(5))
		got := readAll(t, b, f.m, opt)
		for i := range rec {
			if !slices.Equal(got[i], rec[i]) {
				t.Fatalf("%s: state %d differs", pol, i)
			}
		}
		if acct.Retained == 0 || acct.Retained == uint64(len(rec)*f.m.Geom.N()) {
			t.Errorf("%s: retained %d of %d: the knob does not bite", pol, acct.Retained, len(rec)*f.m.Geom.N())
		}
	}
}

// TestGolden pins the bytes of a lossy file and of its decode. Run with
// -update after a deliberate change; the same test under -tags noasm and
// GOARCH=386 must pass unchanged.
func TestGolden(t *testing.T) {
	f := world(t)
	b, rec, _ := write(t, f.m, f.test, format.WithLambda(8<<16), format.WithKeyframeInterval(16))
	h := sha256.New()
	for _, s := range readAll(t, b, f.m) {
		for _, v := range s {
			h.Write([]byte{byte(v), byte(v >> 8)})
		}
	}
	_ = rec
	got := fmt.Sprintf("model %s\nfile %x\ndecode %x\n", f.m.ID(), sha256.Sum256(b), h.Sum(nil))
	path := filepath.Join("testdata", "golden.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Fatalf("golden mismatch:\n got %s\nwant %s", got, want)
	}
}

// TestEntropyAxisDecodes checks that a gate calibrated on entropy bins
// (GATE version 1) is parsed back as such and that its files decode to the
// writer's reconstruction, as the default modal bins do.
func TestEntropyAxisDecodes(t *testing.T) {
	f := world(t)
	if f.p.Axis != gate.AxisModal {
		t.Fatalf("default axis %d, want modal", f.p.Axis)
	}
	p, err := gate.Calibrate(f.noCal, f.test, gate.CalibOptions{MinSamples: 16, EntropyBins: true})
	if err != nil {
		t.Fatal(err)
	}
	m, err := gate.Apply(f.noCal, p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := gate.FromModel(m)
	if err != nil || q.Axis != gate.AxisEntropy {
		t.Fatalf("parsed back: %v", err)
	}
	if b := m.Section(gate.Tag); b[0] != 1 {
		t.Fatalf("entropy-axis section written as version %d", b[0])
	}
	for _, l := range []lambda.Lambda{1 << 14, 4 << 16, 64 << 16} {
		b, rec, _ := write(t, m, f.test, format.WithLambda(l), format.WithKeyframeInterval(16))
		got := readAll(t, b, m)
		if len(got) != len(rec) {
			t.Fatalf("λ %d: %d states decoded, %d written", l, len(got), len(rec))
		}
		for i := range rec {
			if !slices.Equal(got[i], rec[i]) {
				t.Fatalf("λ %d: state %d differs from the writer's", l, i)
			}
		}
	}
}

// TestCalibrateMarginal: a marginal gate has no bin estimate, the
// coordinates' own rates as the binned calibration has them, and codes a
// file that decodes (ê then comes from CoordErr alone).
func TestCalibrateMarginal(t *testing.T) {
	f := world(t)
	p, err := gate.Calibrate(f.noCal, f.test, gate.CalibOptions{MinSamples: 16, Marginal: true})
	if err != nil {
		t.Fatal(err)
	}
	q, err := gate.Calibrate(f.noCal, f.test, gate.CalibOptions{MinSamples: 16})
	if err != nil {
		t.Fatal(err)
	}
	for b, v := range p.BinErr {
		if v != gate.NoEstimate {
			t.Fatalf("bin %d has an estimate %#x", b, v)
		}
	}
	if !slices.Equal(p.CoordErr, q.CoordErr) {
		t.Fatal("marginal rates differ from the binned calibration's")
	}
	m, err := gate.Apply(f.noCal, p)
	if err != nil {
		t.Fatal(err)
	}
	file, rec, _ := write(t, m, f.test, format.WithLambda(64<<16))
	got := readAll(t, file, m)
	for i := range rec {
		if !slices.Equal(got[i], rec[i]) {
			t.Fatalf("state %d decodes otherwise than written", i)
		}
	}
}

// TestSearchFill: a gate with SearchFill (flag bit 2) decodes to its
// writer's reconstruction, which is that of Retain (no step 3 of SPEC.md
// 5.2) with omitted one-step predictions taking their SpreadFill; with
// distance tables the default gate makes some other state.
func TestSearchFill(t *testing.T) {
	f := world(t)
	g := f.m.Geom
	rng := rand.New(rand.NewPCG(27, 3))
	dist := make([][]uint32, g.M)
	for i := range dist {
		dist[i] = make([]uint32, g.K*g.K)
		for a := range g.K {
			for c := range a {
				x := uint32(1 + rng.IntN(0xFFFF))
				dist[i][a*g.K+c], dist[i][c*g.K+a] = x, x
			}
		}
	}
	opt := gate.CalibOptions{MinSamples: 16, Dist: dist, SlotNorm: 1 << 20}
	pd, err := gate.Calibrate(f.noCal, f.test, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.SearchFill = true
	ps, err := gate.Calibrate(f.noCal, f.test, opt)
	if err != nil {
		t.Fatal(err)
	}
	md, err := gate.Apply(f.noCal, pd)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := gate.Apply(f.noCal, ps)
	if err != nil {
		t.Fatal(err)
	}
	if q, err := gate.FromModel(ms); err != nil || !q.SearchFill {
		t.Fatalf("parsed back without the flag: %v", err)
	}
	if ms.Section(gate.Tag)[2]&4 == 0 || md.Section(gate.Tag)[2]&4 != 0 {
		t.Fatal("flag bit 2 not as set")
	}
	differs := false
	var spread atomic.Int64 // the rule runs on the writer's and reader's goroutines
	for _, l := range []lambda.Lambda{1 << 12, 1 << 16, 16 << 16, 256 << 16} {
		b, rec, _ := write(t, ms, f.test, format.WithLambda(l), format.WithKeyframeInterval(16))
		got := readAll(t, b, ms)
		if len(got) != len(rec) {
			t.Fatalf("λ %#x: %d states decoded, %d written", l, len(got), len(rec))
		}
		for i := range rec {
			if !slices.Equal(got[i], rec[i]) {
				t.Fatalf("λ %#x: state %d decodes otherwise than written", l, i)
			}
		}
		retain := pd.Rule(l).Retain
		rule := func(j int, pr *wm.Predictor) (bool, uint16) {
			if retain(j, pr) {
				return true, 0
			}
			v, fr := pr.ModalFreq()
			if _, hit := pr.Prediction(); hit != 0 {
				return false, v
			}
			c := pd.SpreadFill(j, pr.Table(), v, fr)
			if c != v {
				spread.Add(1)
			}
			return false, c
		}
		_, want, _ := write(t, md, f.test, format.WithRetainRule(l, rule), format.WithKeyframeInterval(16))
		_, def, _ := write(t, md, f.test, format.WithLambda(l), format.WithKeyframeInterval(16))
		for i := range rec {
			if !slices.Equal(want[i], rec[i]) {
				t.Fatalf("λ %#x: state %d is not Retain's with spread fills", l, i)
			}
			differs = differs || !slices.Equal(def[i], rec[i])
		}
	}
	if !differs || spread.Load() == 0 {
		t.Errorf("default gate differs %v, spread fills other than the modal value %d: the test does not reach the flag", differs, spread.Load())
	}
}
