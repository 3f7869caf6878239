package graphworld

import (
	"math"
	"math/rand/v2"
	"slices"
)

// graph is an undirected simple graph in compressed sparse rows: the
// neighbours of u are adj[off[u]:off[u+1]], ascending.
type graph struct {
	off []int
	adj []int
}

func (g *graph) n() int                { return len(g.off) - 1 }
func (g *graph) degree(u int) int      { return g.off[u+1] - g.off[u] }
func (g *graph) neighbors(u int) []int { return g.adj[g.off[u]:g.off[u+1]] }
func (g *graph) edges() int            { return len(g.adj) / 2 }

// edgeSet collects undirected edges; duplicates and self-loops are dropped
// when the graph is built, so generators may propose freely.
type edgeSet struct{ e [][2]int }

func (s *edgeSet) add(u, v int) {
	if u == v {
		return
	}
	if u > v {
		u, v = v, u
	}
	s.e = append(s.e, [2]int{u, v})
}

func (s *edgeSet) build(n int) *graph {
	slices.SortFunc(s.e, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	s.e = slices.Compact(s.e)
	g := &graph{off: make([]int, n+1), adj: make([]int, 2*len(s.e))}
	for _, e := range s.e {
		g.off[e[0]+1]++
		g.off[e[1]+1]++
	}
	for u := 0; u < n; u++ {
		g.off[u+1] += g.off[u]
	}
	fill := slices.Clone(g.off[:n])
	for _, e := range s.e {
		g.adj[fill[e[0]]] = e[1]
		fill[e[0]]++
		g.adj[fill[e[1]]] = e[0]
		fill[e[1]]++
	}
	for u := 0; u < n; u++ {
		slices.Sort(g.adj[g.off[u]:g.off[u+1]])
	}
	return g
}

// Inter-community edges of Modular and Mixed worlds are this fraction of
// all edges (the mixing parameter mu).
const interFraction = 0.1

// buildGraph draws the world's graph and its communities (community[u] in
// [0, Communities)). For families without planted communities the
// communities are sections: runs of the breadth-first order from node 0, so
// that neighbouring pages tend to share a section.
func buildGraph(p *params, rng *rand.Rand) (*graph, []int) {
	n, d := p.Nodes, p.Degree
	var es edgeSet
	var community []int
	nodes := make([]int, n)
	for i := range nodes {
		nodes[i] = i
	}
	switch p.Family {
	case Uniform:
		uniformEdges(&es, nodes, d, rng)
	case Exponential:
		exponentialEdges(&es, nodes, d, rng)
	case ScaleFree:
		scaleFreeEdges(&es, nodes, d, rng)
	case Modular, Mixed:
		community = plantCommunities(&es, p, rng)
	}
	g := es.build(n)
	g = connect(g, &es, rng)
	if community == nil {
		community = bfsSections(g, p.Communities)
	}
	return g, community
}

// configurationEdges pairs degree stubs at random (the configuration model).
func configurationEdges(es *edgeSet, nodes, deg []int, rng *rand.Rand) {
	var stubs []int
	for i, u := range nodes {
		for range deg[i] {
			stubs = append(stubs, u)
		}
	}
	if len(stubs)%2 == 1 {
		stubs = append(stubs, nodes[rng.IntN(len(nodes))])
	}
	rng.Shuffle(len(stubs), func(i, j int) { stubs[i], stubs[j] = stubs[j], stubs[i] })
	for i := 0; i+1 < len(stubs); i += 2 {
		es.add(stubs[i], stubs[i+1])
	}
}

func uniformEdges(es *edgeSet, nodes []int, d int, rng *rand.Rand) {
	d = min(d, len(nodes)-1)
	deg := make([]int, len(nodes))
	for i := range deg {
		deg[i] = d
	}
	configurationEdges(es, nodes, deg, rng)
}

// exponentialEdges draws degrees from the geometric law on {1, 2, ...} with
// mean d, P(k) = (1/d)(1-1/d)^(k-1), capped at len(nodes)-1.
func exponentialEdges(es *edgeSet, nodes []int, d int, rng *rand.Rand) {
	deg := make([]int, len(nodes))
	q := 1 - 1/float64(d)
	for i := range deg {
		k := 1
		if q > 0 {
			k += int(math.Floor(math.Log(1-rng.Float64()) / math.Log(q)))
		}
		deg[i] = min(k, len(nodes)-1)
	}
	configurationEdges(es, nodes, deg, rng)
}

// scaleFreeEdges is Barabási–Albert preferential attachment: a clique of
// m+1 seed nodes, then each node attaches to m distinct earlier nodes with
// probability proportional to their degree; m = max(1, round(d/2)).
func scaleFreeEdges(es *edgeSet, nodes []int, d int, rng *rand.Rand) {
	m := max(1, (d+1)/2)
	m = min(m, len(nodes)-1)
	var ends []int // each node appears once per incident edge
	for i := 0; i <= m; i++ {
		for j := 0; j < i; j++ {
			es.add(nodes[i], nodes[j])
			ends = append(ends, nodes[i], nodes[j])
		}
	}
	picked := make([]int, 0, m)
	for i := m + 1; i < len(nodes); i++ {
		picked = picked[:0]
		for len(picked) < m {
			v := ends[rng.IntN(len(ends))]
			if !slices.Contains(picked, v) {
				picked = append(picked, v)
			}
		}
		for _, v := range picked {
			es.add(nodes[i], v)
			ends = append(ends, nodes[i], v)
		}
	}
}

// erdosRenyiEdges adds each pair of nodes with probability q, in time
// proportional to the number of edges (Batagelj & Brandes, 2005).
func erdosRenyiEdges(es *edgeSet, nodes []int, q float64, rng *rand.Rand) {
	c := len(nodes)
	if q <= 0 || c < 2 {
		return
	}
	if q >= 1 {
		for i := 1; i < c; i++ {
			for j := 0; j < i; j++ {
				es.add(nodes[i], nodes[j])
			}
		}
		return
	}
	lq := math.Log(1 - q)
	v, w := 1, -1
	for v < c {
		w += 1 + int(math.Floor(math.Log(1-rng.Float64())/lq))
		for w >= v && v < c {
			w -= v
			v++
		}
		if v < c {
			es.add(nodes[v], nodes[w])
		}
	}
}

// plantCommunities assigns nodes to communities and adds intra- and
// inter-community edges. Modular: equal sizes, Erdős–Rényi inside.
// Mixed: sizes drawn at random (each at least 2), and community i is built
// by the uniform, exponential, scale-free or Erdős–Rényi generator in turn.
// Inside edges target mean degree Degree*(1-mu), and Nodes*Degree*mu/2
// random edges join distinct communities.
func plantCommunities(es *edgeSet, p *params, rng *rand.Rand) []int {
	n, C := p.Nodes, p.Communities
	perm := rng.Perm(n)
	size := make([]int, C)
	if p.Family == Modular {
		for i := range size {
			size[i] = n / C
		}
		for i := 0; i < n%C; i++ {
			size[i]++
		}
	} else {
		// Random composition of n into C parts of at least 2.
		cuts := make([]int, 0, C+1)
		cuts = append(cuts, 0, n-2*C)
		for range C - 1 {
			cuts = append(cuts, rng.IntN(n-2*C+1))
		}
		slices.Sort(cuts)
		for i := range size {
			size[i] = 2 + cuts[i+1] - cuts[i]
		}
	}
	community := make([]int, n)
	members := make([][]int, C)
	at := 0
	for i := range C {
		members[i] = perm[at : at+size[i]]
		slices.Sort(members[i])
		for _, u := range members[i] {
			community[u] = i
		}
		at += size[i]
	}
	inner := float64(p.Degree) * (1 - interFraction)
	for i, mem := range members {
		c := len(mem)
		di := max(1, int(math.Round(inner)))
		kind := 3
		if p.Family == Mixed {
			kind = i % 4
		}
		switch {
		case c <= di+1:
			erdosRenyiEdges(es, mem, 1, rng)
		case kind == 0:
			uniformEdges(es, mem, di, rng)
		case kind == 1:
			exponentialEdges(es, mem, max(2, di), rng)
		case kind == 2:
			scaleFreeEdges(es, mem, max(2, di), rng)
		default:
			erdosRenyiEdges(es, mem, inner/float64(c-1), rng)
		}
	}
	if C > 1 {
		for range int(math.Round(float64(n) * float64(p.Degree) * interFraction / 2)) {
			u := rng.IntN(n)
			v := rng.IntN(n)
			for community[v] == community[u] {
				v = rng.IntN(n)
			}
			es.add(u, v)
		}
	}
	return community
}

// connect joins every connected component to the largest one (ties: the
// one holding the smallest node) by one edge between random members.
func connect(g *graph, es *edgeSet, rng *rand.Rand) *graph {
	n := g.n()
	comp := make([]int, n)
	for i := range comp {
		comp[i] = -1
	}
	var members [][]int
	queue := make([]int, 0, n)
	for s := 0; s < n; s++ {
		if comp[s] >= 0 {
			continue
		}
		id := len(members)
		comp[s] = id
		queue = append(queue[:0], s)
		for h := 0; h < len(queue); h++ {
			for _, v := range g.neighbors(queue[h]) {
				if comp[v] < 0 {
					comp[v] = id
					queue = append(queue, v)
				}
			}
		}
		members = append(members, slices.Clone(queue))
	}
	if len(members) == 1 {
		return g
	}
	root := 0
	for i, m := range members {
		if len(m) > len(members[root]) {
			root = i
		}
	}
	big := members[root]
	for i, m := range members {
		if i != root {
			es.add(m[rng.IntN(len(m))], big[rng.IntN(len(big))])
		}
	}
	return es.build(n)
}

// bfsSections cuts the breadth-first order from node 0 into C runs of
// near-equal length.
func bfsSections(g *graph, C int) []int {
	n := g.n()
	seen := make([]bool, n)
	order := make([]int, 0, n)
	seen[0] = true
	order = append(order, 0)
	for h := 0; h < len(order); h++ {
		for _, v := range g.neighbors(order[h]) {
			if !seen[v] {
				seen[v] = true
				order = append(order, v)
			}
		}
	}
	sec := make([]int, n)
	for i, u := range order {
		sec[u] = i * C / n
	}
	return sec
}
