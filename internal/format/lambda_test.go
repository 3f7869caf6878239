package format

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/wm"
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

// fileDistortion decodes file b and returns its mean slot distortion
// against eps under the default measure (the gate's distances over the
// slot norm), as the writer accounts it.
func fileDistortion(t *testing.T, m *wm.Model, b []byte, eps []episode) float64 {
	t.Helper()
	p, err := gate.FromModel(m)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := readAll(b, m)
	if err != nil {
		t.Fatal(err)
	}
	g := m.Geom
	var d float64
	var slots int
	for e := range eps {
		for k := 0; k < len(eps[e].Codes); k += g.M {
			var sum uint64
			for j := k; j < k+g.M; j++ {
				sum += uint64(p.Distance(j%g.N(), dec[e].Codes[j], eps[e].Codes[j]))
			}
			d += float64(sum) / float64(p.SlotNorm)
			slots++
		}
	}
	return d / float64(slots)
}

// TestSearchLambda checks that the search meets the target on the whole
// file, lands within [0.8, 1] of it, never writes more than the lossless
// file, that its file decodes to the distortion it reports, and that it
// reports its work.
func TestSearchLambda(t *testing.T) {
	m, eps, weps := searchFile(t)
	lossless := encode(t, m, eps, WithKeyframeInterval(8))
	low := encode(t, m, eps, WithKeyframeInterval(8), WithLambda(lambdaAt(searchMin)))
	dMin := fileDistortion(t, m, low, eps)
	for _, target := range []float64{dMin / 2, dMin / 8, dMin / 40} {
		var probes []Probe
		r, err := SearchLambda(context.Background(), m, weps, target, func(p Probe) { probes = append(probes, p) }, WithKeyframeInterval(8))
		if err != nil {
			t.Fatalf("target %g: %v", target, err)
		}
		d := fileDistortion(t, m, r.File, eps)
		if math.Abs(d-r.Distortion) > 1e-9 || d > target {
			t.Fatalf("target %g: distortion %g (reported %g)", target, d, r.Distortion)
		}
		if d < 0.8*target {
			t.Errorf("target %g: distortion %g below 0.8 of the target", target, d)
		}
		if len(r.File) > len(lossless) {
			t.Fatalf("target %g: %d bytes, more than the lossless %d", target, len(r.File), len(lossless))
		}
		dec, err := readAll(r.File, m)
		if err != nil || len(dec) != len(eps) {
			t.Fatalf("target %g: decode: %v", target, err)
		}
		if f, err := openAll(r.File, m); err != nil || sameEpisodes(f, dec) != nil {
			t.Fatalf("target %g: random access differs from sequential decoding: %v", target, err)
		}
		var states int64
		for _, q := range probes {
			states += q.States
		}
		if want := float64(states) / 360; r.Encodes != want {
			t.Fatalf("target %g: Encodes %g, probes encoded %g files", target, r.Encodes, want)
		}
		t.Logf("target %.4g: λ %v, distortion %.4g, %d bytes (lossless %d), %.2f encodes, %d probes",
			target, r.Lambdas, d, len(r.File), len(lossless), r.Encodes, len(probes))
	}
}

// TestSearchLossless: a zero target gives the lossless file, byte for
// byte.
func TestSearchLossless(t *testing.T) {
	m, eps, weps := searchFile(t)
	want := encode(t, m, eps, WithKeyframeInterval(8))
	r, err := SearchLambda(context.Background(), m, weps, 0, nil, WithKeyframeInterval(8))
	if err != nil {
		t.Fatal(err)
	}
	if r.Lambda != LambdaLossless || r.Distortion != 0 || !bytes.Equal(r.File, want) {
		t.Fatalf("target 0: λ %#x, distortion %g, %d bytes; want the lossless file of %d", r.Lambda, r.Distortion, len(r.File), len(want))
	}
	// A target so small that only codings without a wrong value meet it.
	r, err = SearchLambda(context.Background(), m, weps, 1e-12, nil, WithKeyframeInterval(8))
	if err != nil {
		t.Fatal(err)
	}
	if r.Distortion != 0 || len(r.File) > len(want) {
		t.Fatalf("target 1e-12: distortion %g, %d bytes, lossless %d", r.Distortion, len(r.File), len(want))
	}
}

// TestSearchSample checks that the sample is a set of whole chunks, and
// that a sample whose distortion is off the file's by more than a fifth
// is no longer trusted.
func TestSearchSample(t *testing.T) {
	m, _, weps := searchFile(t)
	gp, err := gate.FromModel(m)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := newConfig([]Option{WithKeyframeInterval(8)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSearcher(context.Background(), m, gp, weps, cfg, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.chunks) != 48 || len(s.sample) != 6 {
		t.Fatalf("%d chunks, sample of %d", len(s.chunks), len(s.sample))
	}
	s.plain = make([]coded, len(s.chunks))
	all := make([]int, len(s.chunks))
	for c := range all {
		all[c] = c
	}
	if err := s.code(noLambda, all, s.plain); err != nil {
		t.Fatal(err)
	}
	i := 2 * searchStep
	sd, err := s.sampleD(i)
	if err != nil {
		t.Fatal(err)
	}
	s.target = sd // the trust test is relative to the file's distortion
	fd, err := s.fileD(i)
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Abs(sd-fd) <= sampleTrust*fd; s.trusted != want {
		t.Fatalf("sample %g, file %g: trusted %v", sd, fd, s.trusted)
	}
	// A sample made unrepresentative: its chunks counted with no
	// distortion.
	s.trusted = true
	s.files = map[int]float64{}
	for _, c := range s.sample {
		s.at[i][c].cost.dist = 0
	}
	if _, err := s.fileD(i); err != nil {
		t.Fatal(err)
	}
	if s.trusted {
		t.Fatal("a sample without distortion is trusted")
	}
}

// TestSearchLambdaErrors covers refused arguments and cancellation.
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
	target := w.Account().Distortion / 10
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

// TestShortfall: a choice that leaves budget unspent asks for a cheaper
// grid point below the lowest it uses, for the chunks it codes at a
// finite λ only; a choice at the target, or all lossless, asks for none.
func TestShortfall(t *testing.T) {
	s := &searcher{target: 0.01, slots: 100, files: map[int]float64{}, partial: map[int]bool{},
		at: map[int][]coded{300: make([]coded, 3), 320: make([]coded, 3)}}
	s.at[300][0].cost.dist = 0.2
	s.at[320][2].cost.dist = 0.2
	s.choice = []int{300, noLambda, 320}
	// landed 0.004 of 0.01: the two chunks may take 2.5 times their
	// distortion, log2(2.5)·32/2 → 22 grid points below 300.
	i, which, ok := s.shortfall()
	if !ok || i != 278 || !slices.Equal(which, []int{0, 2}) {
		t.Fatalf("shortfall = %d %v %v, want 278 [0 2] true", i, which, ok)
	}
	s.partial[278] = true
	if _, _, ok := s.shortfall(); ok {
		t.Fatal("a point already probed asked for again")
	}
	s.at[300][0].cost.dist, s.at[320][2].cost.dist = 0.5, 0.5
	if _, _, ok := s.shortfall(); ok {
		t.Fatal("a choice at the target asked for a cheaper point")
	}
	s.choice = []int{noLambda, noLambda, noLambda}
	if _, _, ok := s.shortfall(); ok {
		t.Fatal("an all-lossless choice asked for a point")
	}
}
