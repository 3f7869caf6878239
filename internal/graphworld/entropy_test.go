package graphworld

import (
	"math"
	"testing"
)

// tinyConfig is a world small enough to enumerate every outcome of a
// three-step episode: 4 nodes, states of 3 slots (2 content slots that an
// action may swap, 1 dynamic slot) of one ternary code.
func tinyConfig(graphSeed uint64, noise float64) Config {
	return Config{
		Family: Uniform, Nodes: 4, Degree: 2, GraphSeed: graphSeed,
		Episodes: 1, Steps: 3, Slots: 3, Subspaces: 1, K: 3,
		FrameSlots: -1, DynamicSlots: 1, Noise: noise,
		ActionProbs: []float64{0.7, 0.3}, ActionShifts: []int{0, 1},
	}
}

// bruteForce enumerates every (node path, actions, codes) of one episode
// of the tiny world and returns the joint entropy H(nodes, actions, codes),
// the observable entropy H(actions, codes), the formula's expectation
// E[sum of per-step entropies], and P(actions, codes) indexed by
// obsIndex.
func bruteForce(t *testing.T, cfg Config) (hJoint, hObs, formula float64, pObs []float64, w *world) {
	t.Helper()
	p, err := resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w = newWorld(p)
	const K, codes = 3, 27 // codes: K^3 code vectors per step
	e := p.noise
	probs := cfg.ActionProbs
	// emit[v][a][x]: probability of code vector x (digits slot0, slot1,
	// slot2) at node v after action a (a = 0 also for the first step),
	// written from the package documentation, not from its code.
	emit := make([][2][codes]float64, cfg.Nodes)
	for v := range cfg.Nodes {
		lat := w.state(v)
		for a := range 2 {
			for x := range codes {
				digits := [3]int{x / 9, x / 3 % 3, x % 3}
				pr := 1.0
				for s := range 2 {
					l := int(lat[(s+a)%2])
					pr *= (1-e)*b2f(digits[s] == l) + e/K
				}
				pr *= (1-e)*w.law[digits[2]] + e/K
				emit[v][a][x] = pr
			}
		}
	}
	pObs = make([]float64, 4*codes*codes*codes)
	ent := newEntropyModel(p, w)
	n := cfg.Nodes
	// path: u0; (a1, u1); (a2, u2)
	for u0 := range n {
		p0 := 1 / float64(n)
		for a1 := range 2 {
			for _, u1 := range w.g.neighbors(u0) {
				p1 := p0 * probs[a1] / float64(w.g.degree(u0))
				for a2 := range 2 {
					for _, u2 := range w.g.neighbors(u1) {
						pPath := p1 * probs[a2] / float64(w.g.degree(u1))
						var parts EntropyParts
						formula += pPath * (ent.step(true, 0, &parts) + ent.step(false, u0, &parts) + ent.step(false, u1, &parts))
						for x0 := range codes {
							q0 := pPath * emit[u0][0][x0]
							for x1 := range codes {
								q1 := q0 * emit[u1][a1][x1]
								for x2 := range codes {
									q := q1 * emit[u2][a2][x2]
									if q > 0 {
										hJoint -= q * math.Log2(q)
									}
									pObs[obsIndex(a1, a2, x0, x1, x2)] += q
								}
							}
						}
					}
				}
			}
		}
	}
	total := 0.0
	for _, q := range pObs {
		total += q
		if q > 0 {
			hObs -= q * math.Log2(q)
		}
	}
	if math.Abs(total-1) > 1e-12 {
		t.Fatalf("probabilities sum to %v", total)
	}
	return hJoint, hObs, formula, pObs, w
}

func obsIndex(a1, a2, x0, x1, x2 int) int {
	return (((a1*2+a2)*27+x0)*27+x1)*27 + x2
}

func TestEntropyBruteForce(t *testing.T) {
	for seed := range uint64(3) {
		cfg := tinyConfig(seed, 0.2)
		hJoint, hObs, formula, pObs, _ := bruteForce(t, cfg)
		t.Logf("seed %d: formula %.9f joint %.9f observable %.9f bits/episode", seed, formula, hJoint, hObs)
		if math.Abs(formula-hJoint) > 1e-9 {
			t.Errorf("seed %d: formula %.12f != brute-force joint entropy %.12f", seed, formula, hJoint)
		}
		if hObs > hJoint+1e-9 {
			t.Errorf("seed %d: observable entropy %.9f above joint %.9f", seed, hObs, hJoint)
		}

		// Ideal code length of generated episodes equals -log2 of the
		// brute-force probability of what was observed.
		for walkSeed := range uint64(5) {
			c := cfg
			c.Seed, c.Ideal = walkSeed, true
			r, err := Generate(c)
			if err != nil {
				t.Fatal(err)
			}
			x := make([]int, 3)
			for i := range 3 {
				x[i] = int(r.Codes[3*i])*9 + int(r.Codes[3*i+1])*3 + int(r.Codes[3*i+2])
			}
			want := -math.Log2(pObs[obsIndex(int(r.Actions[1]), int(r.Actions[2]), x[0], x[1], x[2])])
			if got := 3 * r.IdealBitsPerState; math.Abs(got-want) > 1e-9 {
				t.Errorf("seed %d/%d: ideal %.12f bits, brute force %.12f", seed, walkSeed, got, want)
			}
		}
	}
	// Without noise, distinct latent states make the node path a function
	// of the observations: the formula is then exactly the observable
	// entropy, the lower bound for a coder that knows the world.
	for seed := range uint64(3) {
		hJoint, hObs, formula, _, w := bruteForce(t, tinyConfig(seed, -1))
		for u := range 4 {
			for v := range u {
				if equalCodes(w.state(u)[:2], w.state(v)[:2]) {
					t.Fatalf("seed %d: nodes %d and %d share a state", seed, u, v)
				}
			}
		}
		if math.Abs(formula-hJoint) > 1e-9 || math.Abs(hObs-hJoint) > 1e-9 {
			t.Errorf("seed %d noiseless: formula %.9f joint %.9f observable %.9f", seed, formula, hJoint, hObs)
		}
	}
}

func equalCodes(a, b []uint16) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestIdealGap measures, on a default-shaped world, how far the generator's
// entropy is from the true lower bound. Pointwise,
// -log2 P(obs) <= -log2 P(obs, nodes); the difference is the realized
// information of the node path given the observations, which must be
// negligible.
func TestIdealGap(t *testing.T) {
	cfg := Config{Family: ScaleFree, Nodes: 200, GraphSeed: 5, Seed: 6, Episodes: 2, Steps: 150, Ideal: true}
	r, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := resolve(cfg)
	w := newWorld(p)
	src := sourceSlots(p)
	e, K, M := p.noise, float64(p.K), p.Subspaces
	joint := 0.0 // -log2 P(obs, nodes), realized
	for i, u := range r.Nodes {
		x := r.Codes[i*r.S*M : (i+1)*r.S*M]
		if r.Actions[i] < 0 {
			joint += math.Log2(float64(cfg.Nodes))
		} else {
			joint -= math.Log2(DefaultActionProbs[r.Actions[i]])
			joint += math.Log2(float64(w.g.degree(r.Nodes[i-1])))
		}
		for s, from := range src[r.Actions[i]+1] {
			for m := range M {
				c := x[s*M+m]
				var pr float64
				if from < 0 {
					pr = (1-e)*w.law[m*p.K+int(c)] + e/K
				} else {
					pr = (1-e)*b2f(c == w.state(u)[from*M+m]) + e/K
				}
				joint -= math.Log2(pr)
			}
		}
	}
	T := float64(len(r.Nodes))
	ideal := r.IdealBitsPerState * T
	gap := (joint - ideal) / T
	t.Logf("entropy %.3f ± %.3f, ideal %.3f ± %.3f, realized joint %.3f, gap %.2e bits/state",
		r.EntropyBitsPerState, r.EntropyStdErr, r.IdealBitsPerState, r.IdealStdErr, joint/T, gap)
	if gap < -1e-6 || gap > 0.01 {
		t.Fatalf("gap between joint and observable code length %.3g bits/state", gap)
	}
	if d := math.Abs(r.IdealBitsPerState - r.EntropyBitsPerState); d > 4*r.IdealStdErr+4*r.EntropyStdErr {
		t.Fatalf("ideal %.3f and entropy %.3f differ by %.3f", r.IdealBitsPerState, r.EntropyBitsPerState, d)
	}
}

func TestNoiseEntropy(t *testing.T) {
	// Against the entropy of the explicit law.
	for _, c := range []struct {
		e float64
		K int
	}{{0, 64}, {0.02, 64}, {0.5, 3}, {1, 16}} {
		law := make([]float64, c.K)
		for v := range law {
			law[v] = c.e / float64(c.K)
		}
		law[0] += 1 - c.e
		h := 0.0
		for _, q := range law {
			if q > 0 {
				h -= q * math.Log2(q)
			}
		}
		if got := noiseEntropy(c.e, c.K); math.Abs(got-h) > 1e-12 {
			t.Errorf("noiseEntropy(%v, %d) = %v, want %v", c.e, c.K, got, h)
		}
	}
}
