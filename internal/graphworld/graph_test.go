package graphworld

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func newTestRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

type degreeStats struct {
	mean, cv   float64 // mean degree, coefficient of variation
	min, max   int
	intraShare float64 // share of edges inside a community
}

func checkGraph(t *testing.T, fam string, g *graph, community []int) degreeStats {
	t.Helper()
	n := g.n()
	var st degreeStats
	st.min = n
	var sum, sq float64
	intra := 0
	for u := range n {
		nb := g.neighbors(u)
		if !slices.IsSorted(nb) {
			t.Fatalf("%s: neighbours of %d not sorted", fam, u)
		}
		for i, v := range nb {
			if v == u || (i > 0 && nb[i-1] == v) {
				t.Fatalf("%s: self-loop or duplicate edge at %d", fam, u)
			}
			if _, ok := slices.BinarySearch(g.neighbors(v), u); !ok {
				t.Fatalf("%s: edge %d-%d not symmetric", fam, u, v)
			}
			if community[u] == community[v] {
				intra++
			}
		}
		d := float64(len(nb))
		sum += d
		sq += d * d
		st.min = min(st.min, len(nb))
		st.max = max(st.max, len(nb))
	}
	st.mean = sum / float64(n)
	st.cv = math.Sqrt(sq/float64(n)-st.mean*st.mean) / st.mean
	st.intraShare = float64(intra) / float64(2*g.edges())
	// Connected.
	seen := make([]bool, n)
	stack := []int{0}
	seen[0] = true
	count := 1
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, v := range g.neighbors(u) {
			if !seen[v] {
				seen[v] = true
				count++
				stack = append(stack, v)
			}
		}
	}
	if count != n {
		t.Fatalf("%s: %d of %d nodes reachable", fam, count, n)
	}
	return st
}

func TestFamilies(t *testing.T) {
	stats := map[string]degreeStats{}
	for _, fam := range Families {
		for seed := range uint64(3) {
			p, err := resolve(Config{Family: fam, Nodes: 400, GraphSeed: seed})
			if err != nil {
				t.Fatal(err)
			}
			g, community := buildGraph(p, rand.New(rand.NewPCG(seed, streamGraph)))
			st := checkGraph(t, fam, g, community)
			if seed == 0 {
				stats[fam] = st
				t.Logf("%-11s mean %.2f cv %.2f min %d max %d intra %.2f", fam, st.mean, st.cv, st.min, st.max, st.intraShare)
			}
			if st.mean < 4.5 || st.mean > 7 {
				t.Errorf("%s: mean degree %.2f, want about 6", fam, st.mean)
			}
		}
	}
	u, e, s, m, x := stats[Uniform], stats[Exponential], stats[ScaleFree], stats[Modular], stats[Mixed]
	if u.cv > 0.1 || u.max > 7 {
		t.Errorf("uniform: cv %.2f max %d, want near-regular", u.cv, u.max)
	}
	if e.cv < 0.6 || e.max < 20 {
		t.Errorf("exponential: cv %.2f max %d, want a broad law", e.cv, e.max)
	}
	if s.max < 40 || s.min < 3 {
		t.Errorf("scalefree: max %d min %d, want hubs and min degree m=3", s.max, s.min)
	}
	if s.cv <= e.cv*0.9 {
		t.Errorf("scalefree cv %.2f not above exponential %.2f", s.cv, e.cv)
	}
	if m.intraShare < 0.8 || m.cv > 0.6 {
		t.Errorf("modular: intra share %.2f cv %.2f", m.intraShare, m.cv)
	}
	if x.intraShare < 0.8 || x.cv <= m.cv {
		t.Errorf("mixed: intra share %.2f cv %.2f (modular cv %.2f)", x.intraShare, x.cv, m.cv)
	}
}

func TestConnectRepairs(t *testing.T) {
	// Two triangles and an isolated node.
	var es edgeSet
	for _, e := range [][2]int{{0, 1}, {1, 2}, {2, 0}, {3, 4}, {4, 5}, {5, 3}} {
		es.add(e[0], e[1])
	}
	g := connect(es.build(7), &es, newTestRand(1))
	checkGraph(t, "repaired", g, make([]int, 7))
}
