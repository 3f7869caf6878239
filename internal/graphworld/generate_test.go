package graphworld

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
)

// small is a quick world with every feature on.
func small(family string) Config {
	return Config{
		Family: family, Nodes: 60, GraphSeed: 7, Seed: 11,
		Episodes: 3, Steps: 40, Slots: 8, Subspaces: 4, K: 16,
		Obs: true, ObsDim: 16, Ideal: true,
	}
}

func TestDeterministic(t *testing.T) {
	for _, fam := range Families {
		a, err := Generate(small(fam))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Generate(small(fam))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs of the same config differ", fam)
		}
	}
}

func TestWorldFixedByGraphSeed(t *testing.T) {
	cfg := small(Mixed)
	world := func(c Config) *world {
		p, err := resolve(c)
		if err != nil {
			t.Fatal(err)
		}
		return newWorld(p)
	}
	w1 := world(cfg)
	other := cfg
	other.Seed, other.Episodes, other.Steps, other.Noise = 99, 1, 5, 0.3
	other.ActionProbs, other.ActionShifts = []float64{0.5, 0.5}, []int{0, 3}
	if w2 := world(other); !reflect.DeepEqual(w1, w2) {
		t.Fatal("walk fields changed the world")
	}
	other = cfg
	other.GraphSeed++
	if w3 := world(other); reflect.DeepEqual(w1.latent, w3.latent) || reflect.DeepEqual(w1.g, w3.g) {
		t.Fatal("another GraphSeed gave the same world")
	}

	// And through the public output: without noise and dynamic slots, every
	// step shows its node's latent state, shifted, whatever the Seed.
	cfg.Noise, cfg.DynamicSlots, cfg.Obs = -1, -1, false
	seen := map[int][]uint16{} // node -> codes seen there after action 0 or a start
	for seed := range uint64(4) {
		cfg.Seed = seed
		r, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		N := r.S * r.M
		for i, u := range r.Nodes {
			if r.Actions[i] > 0 {
				continue // the default actions 0 and -1 do not shift
			}
			codes := r.Codes[i*N : (i+1)*N]
			if prev, ok := seen[u]; ok && !slices.Equal(prev, codes) {
				t.Fatalf("seed %d: node %d shows different codes", seed, u)
			}
			seen[u] = codes
		}
	}
	if len(seen) < 20 {
		t.Fatalf("only %d nodes compared", len(seen))
	}
}

func TestOutputShape(t *testing.T) {
	cfg := small(Modular)
	r, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	T := cfg.Episodes * cfg.Steps
	N := cfg.Slots * cfg.Subspaces
	if len(r.Codes) != T*N || len(r.Actions) != T || len(r.Nodes) != T || len(r.Obs) != T*cfg.Slots*cfg.ObsDim {
		t.Fatalf("lengths: codes %d actions %d nodes %d obs %d", len(r.Codes), len(r.Actions), len(r.Nodes), len(r.Obs))
	}
	if !slices.Equal(r.EpisodeStart, []int64{0, 40, 80}) {
		t.Fatalf("EpisodeStart = %v", r.EpisodeStart)
	}
	var visits int64
	for _, c := range r.VisitCounts {
		visits += c
	}
	if visits != int64(T) {
		t.Fatalf("visits sum to %d, want %d", visits, T)
	}
	for _, c := range r.Codes {
		if int(c) >= cfg.K {
			t.Fatalf("code %d >= K", c)
		}
	}
	p, _ := resolve(cfg)
	w := newWorld(p)
	for i, a := range r.Actions {
		start := slices.Contains(r.EpisodeStart, int64(i))
		if start != (a == -1) || a >= int64(len(DefaultActionProbs)) {
			t.Fatalf("step %d: action %d, episode start %v", i, a, start)
		}
		if !start && !slices.Contains(w.g.neighbors(r.Nodes[i-1]), r.Nodes[i]) {
			t.Fatalf("step %d: %d -> %d is not an edge", i, r.Nodes[i-1], r.Nodes[i])
		}
	}
	if r2, _ := Generate(Config{Nodes: 20, Episodes: 1, Steps: 3}); r2.Obs != nil || !math.IsNaN(r2.IdealBitsPerState) {
		t.Fatal("Obs or IdealBitsPerState present though not asked for")
	}
}

// TestNoiseRate checks the substitution rate and the action shifts against
// the latent states.
func TestNoiseRate(t *testing.T) {
	cfg := Config{Nodes: 50, GraphSeed: 3, Seed: 4, Episodes: 2, Steps: 100, Noise: 0.05}
	r, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := resolve(cfg)
	w := newWorld(p)
	src := sourceSlots(p)
	M := r.M
	var diff, total int
	for i, u := range r.Nodes {
		lat := w.state(u)
		x := r.Codes[i*r.S*M : (i+1)*r.S*M]
		for s, from := range src[r.Actions[i]+1] {
			if from < 0 {
				continue
			}
			for m := range M {
				total++
				if x[s*M+m] != lat[from*M+m] {
					diff++
				}
			}
		}
	}
	want := 0.05 * (1 - 1.0/64)
	got := float64(diff) / float64(total)
	if sd := math.Sqrt(want * (1 - want) / float64(total)); math.Abs(got-want) > 5*sd {
		t.Fatalf("substitution rate %.4f, want %.4f ± %.4f", got, want, sd)
	}
}

func TestObservations(t *testing.T) {
	cfg := small(Uniform)
	cfg.ObsSigma = -1
	r, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := resolve(cfg)
	w := newWorld(p)
	D, M, K := cfg.ObsDim, cfg.Subspaces, cfg.K
	// Noiseless slot vectors are sums of the rotated prototypes, and the
	// rotation keeps norms: E|v|^2 = ObsDim.
	var sq float64
	for i := range r.Obs {
		sq += float64(r.Obs[i]) * float64(r.Obs[i])
	}
	if mean := sq / float64(len(r.Obs)/D); math.Abs(mean/float64(D)-1) > 0.1 {
		t.Fatalf("mean squared norm %.2f, want about %d", mean, D)
	}
	// Nearest-prototype decoding of each subspace recovers the codes: the
	// rotated subspace blocks are orthogonal, so project onto each block.
	for slot := range len(r.Obs) / D {
		v := r.Obs[slot*D : (slot+1)*D]
		for m := range M {
			best, bestC := math.Inf(-1), -1
			for c := range K {
				pr := w.rproto[(m*K+c)*D : (m*K+c+1)*D]
				var dot, nn float64
				for j := range pr {
					dot += float64(pr[j]) * float64(v[j])
					nn += float64(pr[j]) * float64(pr[j])
				}
				if s := dot - nn/2; s > best {
					best, bestC = s, c
				}
			}
			if bestC != int(r.Codes[slot*M+m]) {
				t.Fatalf("slot %d subspace %d decodes to %d, code is %d", slot, m, bestC, r.Codes[slot*M+m])
			}
		}
	}
	R := randomRotation(24, newTestRand(5))
	for i := range 24 {
		for j := range 24 {
			dot := 0.0
			for k := range 24 {
				dot += R[k*24+i] * R[k*24+j]
			}
			if want := b2f(i == j); math.Abs(dot-want) > 1e-12 {
				t.Fatalf("R^T R [%d,%d] = %g", i, j, dot)
			}
		}
	}
	// Observation noise has the documented sigma.
	cfg.ObsSigma = 0.25
	rn, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ss float64
	for i := range rn.Obs {
		d := float64(rn.Obs[i] - r.Obs[i])
		ss += d * d
	}
	if sd := math.Sqrt(ss / float64(len(r.Obs))); math.Abs(sd-0.25) > 0.01 {
		t.Fatalf("observation noise sd %.4f, want 0.25", sd)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func TestValidation(t *testing.T) {
	cases := []struct {
		field string
		cfg   Config
	}{
		{"Family", Config{Family: "grid"}},
		{"Nodes", Config{Nodes: 3}},
		{"Nodes", Config{Nodes: -5}},
		{"Degree", Config{Nodes: 10, Degree: 10}},
		{"Degree", Config{Degree: 1}},
		{"Communities", Config{Nodes: 10, Communities: 6}},
		{"Episodes", Config{Episodes: -1}},
		{"Steps", Config{Steps: -1}},
		{"Steps", Config{Episodes: 1 << 20, Steps: 1 << 20}},
		{"Slots", Config{Slots: -1}},
		{"Slots", Config{Slots: 512, Subspaces: 512}},
		{"Subspaces", Config{Subspaces: -2}},
		{"K", Config{K: 1}},
		{"K", Config{K: 1<<16 + 1}},
		{"FrameSlots", Config{Slots: 4, FrameSlots: 3}},
		{"PoolTiles", Config{PoolTiles: -1}},
		{"Skew", Config{Skew: math.NaN()}},
		{"Noise", Config{Noise: 1.5}},
		{"Noise", Config{Noise: math.NaN()}},
		{"ActionProbs", Config{ActionProbs: []float64{0.5, 0.6}}},
		{"ActionProbs", Config{ActionProbs: []float64{1, 0}}},
		{"ActionProbs", Config{ActionProbs: []float64{}}},
		{"ActionShifts", Config{ActionShifts: []int{1}}},
		{"ActionShifts", Config{ActionProbs: []float64{1}, ActionShifts: []int{1, 2}}},
		{"ObsDim", Config{ObsDim: 100}},
		{"ObsDim", Config{Obs: true, K: 1 << 16}},
		{"ObsSigma", Config{ObsSigma: math.Inf(1)}},
	}
	for _, c := range cases {
		_, err := Generate(c.cfg)
		var ce *ConfigError
		if !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &ce) || ce.Field != c.field {
			t.Errorf("%+v: got %v, want an error on %s", c.cfg, err, c.field)
		}
	}
	// Zero values and "none" sentinels are valid.
	ok := []Config{
		{Nodes: 4, Episodes: 1, Steps: 1},
		{Nodes: 10, Episodes: 0, Steps: 5, Noise: -1, FrameSlots: -1, DynamicSlots: -1, ObsSigma: -1},
		{Nodes: 10, Steps: 5, Slots: 1, Subspaces: 1, K: 2, Noise: 1},
		{Nodes: 10, Steps: 5, Episodes: 0, ActionProbs: []float64{0.25, 0.75}},
	}
	for _, c := range ok {
		if _, err := Generate(c); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestGiniTopShare(t *testing.T) {
	if g := Gini([]int64{5, 5, 5, 5}); g != 0 {
		t.Errorf("Gini(equal) = %v", g)
	}
	if g := Gini([]int64{0, 0, 0, 8}); math.Abs(g-0.75) > 1e-12 {
		t.Errorf("Gini(one holds all of 4) = %v, want 0.75", g)
	}
	counts := []int64{10, 0, 0, 0, 0, 0, 0, 0, 0, 10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	if s := TopShare(counts, 0.1); math.Abs(s-20.0/30) > 1e-12 {
		t.Errorf("TopShare = %v, want 2/3", s)
	}
}

func BenchmarkGenerate(b *testing.B) {
	cfg := Config{Family: ScaleFree, Nodes: 500, GraphSeed: 1, Seed: 2, Episodes: 10, Steps: 200}
	b.ReportAllocs()
	b.SetBytes(int64(cfg.Episodes * cfg.Steps * DefaultSlots * DefaultSubs * 2))
	for b.Loop() {
		if _, err := Generate(cfg); err != nil {
			b.Fatal(err)
		}
	}
}
