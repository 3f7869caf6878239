package format

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/wm"
)

var (
	searchOnce  sync.Once
	searchModel *wm.Model
	searchEps   []episode
)

// searchFile is a synthetic file of 12 episodes with a gated model trained
// and calibrated on it: 360 states, 48 chunks at keyframe interval 8.
func searchFile(t testing.TB) (*wm.Model, []episode, []wm.Episode) {
	searchOnce.Do(func() {
		g := wm.Geometry{S: 4, M: 4, K: 16}
		eps := genEpisodes(rand.New(rand.NewPCG(7, 8)), g, []int{30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30})
		for i := range eps {
			eps[i].Meta = nil
		}
		m := trainModel(g, 12, eps)
		train := make([]wm.Episode, len(eps))
		for i, e := range eps {
			train[i] = wm.Episode{Codes: e.Codes, Actions: e.Actions}
		}
		p, err := gate.Calibrate(m, train, gate.CalibOptions{MinSamples: 8})
		if err != nil {
			panic(err)
		}
		if searchModel, err = gate.Apply(m, p); err != nil {
			panic(err)
		}
		searchEps = eps
	})
	w := make([]wm.Episode, len(searchEps))
	for i, e := range searchEps {
		w[i] = wm.Episode{Codes: e.Codes, Actions: e.Actions}
	}
	return searchModel, searchEps, w
}

// TestSearchLambda checks that the search meets the target on the whole
// file, that its file is the Writer's at the λ it reports and decodes,
// and that it reports its work.
func TestSearchLambda(t *testing.T) {
	m, eps, weps := searchFile(t)
	p, err := gate.FromModel(m)
	if err != nil {
		t.Fatal(err)
	}
	// lossy encodes the file at λ l with a Writer.
	lossy := func(l uint32) ([]byte, float64) {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, m, WithKeyframeInterval(8), WithLambda(l))
		if err != nil {
			t.Fatal(err)
		}
		n := m.Geom.N()
		for _, e := range eps {
			if err := w.WriteEpisode(nil); err != nil {
				t.Fatal(err)
			}
			for k, a := range e.Actions {
				if err := w.WriteState(a, e.Codes[k*n:(k+1)*n]); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		a := w.Account()
		return buf.Bytes(), p.RelDistortion(a.DistSum, a.States)
	}
	_, dMin := lossy(lambdaAt(searchMin))
	for _, target := range []float64{dMin / 2, dMin / 8, dMin / 40} {
		var probes []Probe
		r, err := SearchLambda(context.Background(), m, weps, target, func(p Probe) { probes = append(probes, p) }, WithKeyframeInterval(8))
		if err != nil {
			t.Fatalf("target %g: %v", target, err)
		}
		b, d := lossy(r.Lambda)
		if !bytes.Equal(b, r.File) {
			t.Fatalf("target %g: the file differs from the Writer's at λ %#x", target, r.Lambda)
		}
		if d != r.Distortion || d > target {
			t.Fatalf("target %g: distortion %g (reported %g)", target, d, r.Distortion)
		}
		dec, err := readAll(r.File, m)
		if err != nil || len(dec) != len(eps) {
			t.Fatalf("target %g: decode: %v", target, err)
		}
		var states int64
		for _, q := range probes {
			states += q.States
		}
		if want := float64(states) / 360; r.Encodes != want || r.Encodes > maxProbes+1 {
			t.Fatalf("target %g: Encodes %g, probes encoded %g files", target, r.Encodes, want)
		}
		t.Logf("target %.4g: λ %.4g, distortion %.4g, %d bytes, %.2f encodes, %d probes", target, float64(r.Lambda)/65536, d, len(b), r.Encodes, len(probes))
	}
}

// TestSearchSample checks what the search relies on: a chunk's prefix
// codes exactly as in the file, so that the sample's distortion and rate
// equal those of its states within a whole-file encode.
func TestSearchSample(t *testing.T) {
	m, _, weps := searchFile(t)
	gp, err := gate.FromModel(m)
	if err != nil {
		t.Fatal(err)
	}
	s := newSearcher(context.Background(), m, gp, weps, 8, 1, nil, []Option{WithKeyframeInterval(8)})
	if len(s.sample) > samplePieces || float64(s.sampled) < sampleShare*360 {
		t.Fatalf("sample of %d pieces, %d states", len(s.sample), s.sampled)
	}
	for _, i := range []int{2 * searchStep, 5 * searchStep, 9 * searchStep} {
		q, err := s.sampleAt(i)
		if err != nil {
			t.Fatal(err)
		}
		f, err := s.fileAt(i, false)
		if err != nil {
			t.Fatal(err)
		}
		if !f.complete || f.sample != q {
			t.Fatalf("λ %#x: sample %+v, its states in the file %+v", lambdaAt(i), q, f.sample)
		}
	}
}

// TestSearchLambdaErrors covers refused arguments, an unreachable target
// and cancellation.
func TestSearchLambdaErrors(t *testing.T) {
	m, _, weps := searchFile(t)
	bg := context.Background()
	for _, c := range []struct {
		name   string
		target float64
		opts   []Option
	}{
		{"negative target", -1, nil},
		{"with lambda", 0.1, []Option{WithLambda(1 << 16)}},
		{"with levels", 0.1, []Option{WithLevels(1, 2)}},
	} {
		if _, err := SearchLambda(bg, m, weps, c.target, nil, c.opts...); !errors.Is(err, ErrInput) {
			t.Errorf("%s: %v, want ErrInput", c.name, err)
		}
	}
	if _, err := SearchLambda(bg, m, nil, 0.1, nil); !errors.Is(err, ErrInput) {
		t.Errorf("no states: %v", err)
	}
	short := []wm.Episode{{Codes: weps[0].Codes, Actions: weps[0].Actions[1:]}}
	if _, err := SearchLambda(bg, m, short, 0.1, nil); !errors.Is(err, ErrInput) {
		t.Errorf("an action missing: %v", err)
	}
	plain := trainModel(m.Geom, 12, nil)
	if _, err := SearchLambda(bg, plain, weps, 0.1, nil); !errors.Is(err, gate.ErrSection) {
		t.Errorf("model without a gate: %v", err)
	}
	// Every coordinate of a random table is unpredictable: even the
	// largest λ leaves some omitted wrongly, so a zero target is out of
	// reach unless it is met exactly.
	if r, err := SearchLambda(bg, m, weps, 0, nil, WithKeyframeInterval(8)); err == nil && r.Distortion != 0 {
		t.Errorf("target 0: distortion %g", r.Distortion)
	} else if err != nil && !errors.Is(err, ErrNoLambda) {
		t.Errorf("target 0: %v", err)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := SearchLambda(ctx, m, weps, 0.01, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// BenchmarkSearchLambda compares a lossless encode, one lossy encode and
// the distortion-target search on one synthetic file (384 states of 64
// coordinates, 24 chunks); the search reports its work in encodes.
func BenchmarkSearchLambda(b *testing.B) {
	g := wm.Geometry{S: 8, M: 8, K: 32}
	eps := genEpisodes(rand.New(rand.NewPCG(9, 10)), g, []int{48, 48, 48, 48, 48, 48, 48, 48})
	weps := make([]wm.Episode, len(eps))
	for i := range eps {
		eps[i].Meta = nil
		weps[i] = wm.Episode{Codes: eps[i].Codes, Actions: eps[i].Actions}
	}
	m := trainModel(g, 12, eps)
	p, err := gate.Calibrate(m, weps, gate.CalibOptions{MinSamples: 8})
	if err != nil {
		b.Fatal(err)
	}
	if m, err = gate.Apply(m, p); err != nil {
		b.Fatal(err)
	}
	opts := []Option{WithKeyframeInterval(16)}
	// The target: a tenth of the distortion of the smallest λ.
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, m, append(opts, WithLambda(lambdaAt(searchMin)))...)
	for _, e := range eps {
		w.WriteEpisode(nil)
		for k, a := range e.Actions {
			w.WriteState(a, e.Codes[k*g.N():(k+1)*g.N()])
		}
	}
	w.Close()
	a := w.Account()
	target := p.RelDistortion(a.DistSum, a.States) / 10
	r, err := SearchLambda(context.Background(), m, weps, target, nil, opts...)
	if err != nil {
		b.Fatal(err)
	}
	size := int64(2 * len(eps) * len(eps[0].Codes))
	b.Run("lossless", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			encode(b, m, eps, opts...)
		}
	})
	b.Run("lambda", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			encode(b, m, eps, append(opts, WithLambda(r.Lambda))...)
		}
	})
	b.Run("distortion", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		var enc float64
		for b.Loop() {
			r, err := SearchLambda(context.Background(), m, weps, target, nil, opts...)
			if err != nil {
				b.Fatal(err)
			}
			enc = r.Encodes
		}
		b.ReportMetric(enc, "encodes")
	})
}

// TestSearchLambdaNoNorm: a gate without a slot norm makes every
// distortion 0, so the smallest λ meets any target.
func TestSearchLambdaNoNorm(t *testing.T) {
	m, _, weps := searchFile(t)
	p, err := gate.FromModel(m)
	if err != nil {
		t.Fatal(err)
	}
	p.SlotNorm = 0
	m0, err := gate.Apply(m, p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := SearchLambda(context.Background(), m0, weps, 0, nil, WithKeyframeInterval(8))
	if err != nil {
		t.Fatal(err)
	}
	if r.Lambda != lambdaAt(searchMin) || r.Distortion != 0 {
		t.Fatalf("λ %#x, distortion %v; want λ %#x, 0", r.Lambda, r.Distortion, lambdaAt(searchMin))
	}
}

// TestSearchResume checks that an encode stopped far below the target
// continues where it stopped, into the file a Writer writes at that λ.
func TestSearchResume(t *testing.T) {
	m, eps, weps := searchFile(t)
	gp, err := gate.FromModel(m)
	if err != nil {
		t.Fatal(err)
	}
	i := 12 * searchStep // keeps nearly everything
	s := newSearcher(context.Background(), m, gp, weps, 8, 1, nil, []Option{WithKeyframeInterval(8)})
	f, err := s.fileAt(i, true)
	if err != nil {
		t.Fatal(err)
	}
	if !f.under || s.paused[i] == nil || s.encoded != 90 {
		t.Fatalf("not stopped below the target after a quarter: %+v, %d states", f, s.encoded)
	}
	if f, err = s.fileAt(i, true); err != nil {
		t.Fatal(err)
	}
	if !f.complete || s.encoded != 360 || s.kept[i] == nil {
		t.Fatalf("resumed encode: complete %v, %d states", f.complete, s.encoded)
	}
	want := encode(t, m, eps, WithKeyframeInterval(8), WithLambda(lambdaAt(i)))
	if !bytes.Equal(f.file, want) {
		t.Fatal("the resumed encode differs from the Writer's")
	}
}
