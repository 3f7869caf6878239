package gate

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/internal/wm"
)

// refDecide is Decider.Decide as SPEC.md 5.2 reads, written plainly: the
// rule's statistics from TwoStepStats, ê·V from RetainStats, and the
// expected distances, row fill and fill of a weak prediction summed value
// by value here.
func refDecide(p *Params, lambda uint32, j int, pr *wm.Predictor) (bool, uint16) {
	r := p.Rule(lam(lambda))
	v, f := pr.ModalFreq()
	_, hit := pr.Prediction()
	st := TwoStepStats(v, f, p.Precision, p.Geom.K)
	if p.SearchFill {
		if r.RetainStats(j, st) {
			return true, v
		}
		if hit != 0 || p.Dist == nil {
			return false, v
		}
		return false, p.SpreadFill(j, pr.Table(), v, f)
	}
	if hit != 0 || 2*f >= 1<<p.Precision {
		return r.RetainStats(j, st), v
	}
	c, e := v, (uint32(1)<<p.Precision-f)*UnitDistance
	if p.Dist != nil {
		K := p.Geom.K
		D := p.Dist[p.tableOf(j)]
		E := func(cum []uint16, prec uint, c int) uint64 {
			var s uint64
			for u, fu := range freqs(cum, prec) {
				s += uint64(fu) * uint64(D[c*K+u])
			}
			return s
		}
		_, f1 := pr.Row()
		rf := 0
		for x := 1; x < K; x++ {
			if E(f1, 16, x) < E(f1, 16, rf) {
				rf = x
			}
		}
		cum := pr.Table()
		ev, er := E(cum, p.Precision, int(v)), E(cum, p.Precision, rf)
		c, e = v, uint32(ev)
		if er < ev {
			c, e = uint16(rf), uint32(er)
		}
	}
	return keepWeak(lambda, e, p.weight(j), st.H, p.Precision), c
}

// randomParams returns parameters of geometry g and precision prec with
// random rates (some bins without an estimate, some rates 0), weights and
// distance tables (one a subspace or one a coordinate), or uniform
// distances; prepared.
func randomParams(rng *rand.Rand, g wm.Geometry, prec uint) *Params {
	p := &Params{Geom: g, Precision: prec, BinShift: uint(rng.IntN(9)), Axis: Axis(rng.IntN(2)), SearchFill: rng.IntN(4) == 0}
	p.BinErr = make([]uint32, 1+rng.IntN(64))
	for i := range p.BinErr {
		switch rng.IntN(5) {
		case 0:
			p.BinErr[i] = NoEstimate
		case 1:
		default:
			p.BinErr[i] = rng.Uint32N(MaxErr + 1)
		}
	}
	p.CoordErr = make([]uint32, g.N())
	for i := range p.CoordErr {
		p.CoordErr[i] = rng.Uint32N(1 << 17)
	}
	if rng.IntN(2) == 0 {
		p.Weights = make([]uint16, g.N())
		for i := range p.Weights {
			p.Weights[i] = uint16(rng.IntN(1024))
		}
	}
	if rng.IntN(5) != 0 {
		n := g.M
		if rng.IntN(2) == 0 {
			n = g.N()
		}
		p.Dist = make([][]uint16, n)
		for t := range p.Dist {
			d := make([]uint16, g.K*g.K)
			for a := range g.K {
				for b := a + 1; b < g.K; b++ {
					x := uint16(rng.IntN(1 << 16))
					if rng.IntN(4) == 0 {
						x = uint16(rng.IntN(4) * 1000) // ties
					}
					d[a*g.K+b], d[b*g.K+a] = x, x
				}
			}
			p.Dist[t] = d
		}
	}
	p.Prepare()
	return p
}

// TestDecideReference: on the predictions of models of 64 and of 20 values
// (the kernel's table size and another), over random parameters and λ,
// every decision and fill of a Decider is refDecide's, with two deciders
// of the same parameters sharing their memos on two goroutines.
func TestDecideReference(t *testing.T) {
	for _, K := range []int{64, 20} {
		r, err := graphworld.Generate(graphworld.Config{Nodes: 30, Episodes: 4, Steps: 30, Slots: 3, Subspaces: 4, K: K, Seed: 7, GraphSeed: 2})
		if err != nil {
			t.Fatal(err)
		}
		g := wm.Geometry{S: r.S, M: r.M, K: r.K}
		n := g.N()
		var eps []wm.Episode
		for i := range r.EpisodeStart {
			s, e := r.Span(i)
			eps = append(eps, wm.Episode{Codes: r.Codes[s*int64(n) : e*int64(n)], Actions: r.Actions[s:e]})
		}
		for _, prec := range []uint{16, 12} {
			m, err := wm.Train(g, eps[:2], wm.TrainOptions{Precision: prec, MaxRefStates: 256})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(K), uint64(prec)))
			for trial := range 6 {
				p := randomParams(rng, g, prec)
				if trial == 5 {
					// Not prepared (its decider prepares a copy).
					p.SearchFill = false
					p.mean, p.tab, p.memo = nil, nil, nil
				}
				lambda := []uint32{1, 1 << 12, 1 << 16, 40 << 16, 1 << 30, 0xFFFFFFFE}[trial]
				var wg sync.WaitGroup
				errs := make([]string, 2)
				for w := range 2 {
					wg.Go(func() {
						d := p.Rule(lam(lambda)).NewDecider()
						pr := m.NewPredictor()
						var weak, omitted, filled int
						for _, ep := range eps[2:] {
							pr.Reset()
							for s := range len(ep.Actions) {
								pr.Begin(ep.Actions[s])
								for j := range n {
									pr.Predict(j)
									keep, fill := d.Decide(j, pr)
									wk, wf := refDecide(p, lambda, j, pr)
									if keep != wk || !keep && fill != wf {
										errs[w] = "differs"
										t.Errorf("K %d P %d trial %d state %d j %d: Decide %v %d, reference %v %d", K, prec, trial, s, j, keep, fill, wk, wf)
										return
									}
									_, f := pr.ModalFreq()
									if _, hit := pr.Prediction(); hit == 0 && Weak(f, prec) {
										weak++
									}
									if keep {
										pr.Commit(j, ep.Codes[s*n+j])
									} else {
										omitted++
										if fill != pr.Modal() {
											filled++
										}
										pr.CommitOmitted(j, fill)
									}
								}
							}
						}
						if w == 0 && trial == 2 && (weak == 0 || omitted == 0) {
							t.Errorf("K %d P %d: %d weak predictions, %d omitted: the test misses a path", K, prec, weak, omitted)
						}
					})
				}
				wg.Wait()
			}
		}
	}
}

// TestFillWithTies: fillWith, in the kernel (64 values) and in Go, takes
// the row fill only where it is strictly nearer than the modal value, on
// tables and distances made to tie.
func TestFillWithTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 2))
	for _, K := range []int{3, 64} {
		for trial := range 400 {
			prec := uint(12 + trial%5)
			d := make([]uint16, K*K)
			for a := range K {
				for b := a + 1; b < K; b++ {
					x := uint16(1000)
					if trial%2 == 0 {
						x = uint16(rng.IntN(2) * 1000)
					}
					d[a*K+b], d[b*K+a] = x, x
				}
			}
			// Two values of equal frequency, or random frequencies.
			a, b := rng.IntN(K), rng.IntN(K)
			cum := randomTable(rng, K, prec)
			if trial%3 != 0 {
				half := (uint32(1)<<prec - uint32(K)) / 2
				for v := range K {
					cum[v] = uint16(v + int(half)*(b2i(v > a)+b2i(v > b)))
				}
			}
			f := freqs(cum, prec)
			v, r := uint16(a), uint16(b)
			E := func(c uint16) uint32 {
				var e uint32
				for u := range K {
					e += f[u] * uint32(d[int(c)*K+u])
				}
				return e
			}
			wc, we := v, E(v)
			if E(r) < E(v) {
				wc, we = r, E(r)
			}
			if c, e := fillWith(d, cum, prec, v, r); c != wc || e != we {
				t.Fatalf("K %d trial %d: fill %d E %d, want %d E %d", K, trial, c, e, wc, we)
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
