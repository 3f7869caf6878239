package graphworld

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Result is a set of generated trajectories, laid out as wmzip's trajectory
// arrays (codes, actions, episode_start, obs).
type Result struct {
	// Codes holds T states of S*M codes each, state-major then slot-major:
	// Codes[(t*S+s)*M+m].
	Codes   []uint16
	S, M, K int
	// Actions[t] is the action leading into step t; -1 at an episode's
	// first step.
	Actions []int64
	// EpisodeStart holds the ascending offsets of each episode's first
	// step; the first is 0.
	EpisodeStart []int64
	// Nodes[t] is the world node the agent is at in step t (hidden state,
	// for analysis; a codec never sees it).
	Nodes []int
	// VisitCounts[u] is the number of steps spent at node u.
	VisitCounts []int64
	// Degrees[u] is the number of neighbours of node u.
	Degrees []int
	// Obs holds T*S slot vectors of ObsDim floats, Obs[(t*S+s)*ObsDim+i],
	// when Config.Obs is set; nil otherwise.
	Obs    []float32
	ObsDim int

	// EntropyBitsPerState is the generator's entropy of everything a file
	// must store (actions and codes), given the world, in bits per state:
	// the mean over the generated steps of the conditional entropy of step
	// t given the node of step t-1 (see EntropyParts). EntropyStdErr is its
	// Monte-Carlo standard error by batch means.
	EntropyBitsPerState, EntropyStdErr float64
	// EntropyParts splits EntropyBitsPerState by source.
	EntropyParts EntropyParts

	// IdealBitsPerState is, when Config.Ideal is set, the exact code length
	// -log2 P(actions, codes | world) of the generated data per state,
	// computed by forward filtering over the hidden nodes: what an ideal
	// coder that knows the world spends on these very trajectories. Its
	// expectation is at most EntropyBitsPerState, short by the entropy of
	// the node path given the observations. NaN when not computed.
	// IdealStdErr is its standard error by batch means (it varies with the
	// realized noise, which EntropyBitsPerState averages out).
	IdealBitsPerState, IdealStdErr float64
}

// EntropyParts are the sources of the entropy rate, in bits per state,
// summing to EntropyBitsPerState.
type EntropyParts struct {
	Start    float64 // log2(Nodes) at each episode's first step
	Action   float64 // H(action) at the other steps
	Neighbor float64 // log2(degree of the node left) at the other steps
	Noise    float64 // substitution noise on frame and content coordinates
	Dynamic  float64 // per-visit content of dynamic slots, noise included
}

// Generate builds the world of cfg and walks it. The output is a function
// of cfg alone. Memory is proportional to the output plus the world
// (Nodes*Slots*Subspaces codes, and Subspaces*K*ObsDim floats with Obs).
func Generate(cfg Config) (*Result, error) {
	p, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	w := newWorld(p)
	return walk(p, w), nil
}

// noiseEntropy is the entropy in bits of a code that keeps its value with
// probability 1-e and otherwise takes a uniform value in [0,K):
// -(1-e+e/K)log2(1-e+e/K) - (K-1)(e/K)log2(e/K).
func noiseEntropy(e float64, K int) float64 {
	stay, move := 1-e+e/float64(K), e/float64(K)
	return -xlog2x(stay) - float64(K-1)*xlog2x(move)
}

func xlog2x(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return x * math.Log2(x)
}

// dynamicEntropy is the entropy of one observed code of a dynamic slot of
// subspace m: the law (1-e)q_m(v) + e/K.
func (w *world) dynamicEntropy(m int, e float64) float64 {
	h := 0.0
	for _, q := range w.law[m*w.K : (m+1)*w.K] {
		h -= xlog2x((1-e)*q + e/float64(w.K))
	}
	return h
}

// sourceSlots returns, for each action (index a+1, a = -1 included), the
// latent slot shown at each observed slot, -1 for dynamic slots.
func sourceSlots(p *params) [][]int {
	src := make([][]int, len(p.shifts)+1)
	for a := -1; a < len(p.shifts); a++ {
		shift := 0
		if a >= 0 {
			shift = p.shifts[a]
		}
		row := make([]int, p.Slots)
		for s := range row {
			switch {
			case s < p.frame:
				row[s] = s
			case s < p.frame+p.content:
				row[s] = p.frame + (s-p.frame+shift)%p.content
			default:
				row[s] = -1
			}
		}
		src[a+1] = row
	}
	return src
}

func walk(p *params, w *world) *Result {
	S, M, K, T := p.Slots, p.Subspaces, p.K, p.T
	N := S * M
	n := p.Nodes
	r := &Result{
		Codes:             make([]uint16, T*N),
		S:                 S,
		M:                 M,
		K:                 K,
		Actions:           make([]int64, T),
		EpisodeStart:      make([]int64, p.Episodes),
		Nodes:             make([]int, T),
		VisitCounts:       make([]int64, n),
		Degrees:           make([]int, n),
		ObsDim:            p.ObsDim,
		IdealBitsPerState: math.NaN(),
		IdealStdErr:       math.NaN(),
	}
	for u := range n {
		r.Degrees[u] = w.g.degree(u)
	}
	rng := rand.New(rand.NewPCG(p.Seed, streamWalk))
	src := sourceSlots(p)

	actCDF := make([]float64, len(p.ActionProbs))
	acc := 0.0
	for a, q := range p.ActionProbs {
		acc += q
		actCDF[a] = acc
	}
	actCDF[len(actCDF)-1] = math.Inf(1)
	ent := newEntropyModel(p, w)
	var logNoiseGap float64 // log(1-e) for geometric gaps between noisy coordinates
	if p.noise > 0 && p.noise < 1 {
		logNoiseGap = math.Log1p(-p.noise)
	}

	perStep := make([]float64, T)
	var parts EntropyParts
	u := 0
	for t := range T {
		first := t%p.Steps == 0
		perStep[t] = ent.step(first, u, &parts)
		if first {
			r.EpisodeStart[t/p.Steps] = int64(t)
			u = rng.IntN(n)
			r.Actions[t] = -1
		} else {
			a, _ := slices.BinarySearch(actCDF, rng.Float64())
			nb := w.g.neighbors(u)
			u = nb[rng.IntN(len(nb))]
			r.Actions[t] = int64(a)
		}
		r.Nodes[t] = u
		r.VisitCounts[u]++

		out := r.Codes[t*N : (t+1)*N]
		lat := w.state(u)
		for s, from := range src[r.Actions[t]+1] {
			dst := out[s*M : (s+1)*M]
			if from >= 0 {
				copy(dst, lat[from*M:(from+1)*M])
			} else {
				for m := range dst {
					dst[m] = w.drawCode(m, rng)
				}
			}
		}
		switch {
		case p.noise >= 1:
			for j := range out {
				out[j] = uint16(rng.IntN(K))
			}
		case p.noise > 0:
			for j := geometricGap(rng, logNoiseGap); j < N; j += 1 + geometricGap(rng, logNoiseGap) {
				out[j] = uint16(rng.IntN(K))
			}
		}
	}
	if T > 0 {
		parts.Noise = ent.noise
		parts.Dynamic = ent.dynamic
		parts.Start /= float64(T)
		parts.Action /= float64(T)
		parts.Neighbor /= float64(T)
	}
	r.EntropyParts = parts
	r.EntropyBitsPerState, r.EntropyStdErr = batchMeans(perStep)
	if p.Obs {
		r.Obs = observe(p, w, r.Codes)
	}
	if p.Ideal {
		r.IdealBitsPerState, r.IdealStdErr = batchMeans(idealBits(p, w, r))
	}
	return r
}

// entropyModel holds the terms of the per-step conditional entropy.
type entropyModel struct {
	g              *graph
	start, action  float64 // log2(Nodes), H(A)
	noise, dynamic float64 // Hc split into its two sources
}

func newEntropyModel(p *params, w *world) *entropyModel {
	M := p.Subspaces
	e := &entropyModel{g: w.g, start: math.Log2(float64(p.Nodes))}
	for _, q := range p.ActionProbs {
		e.action -= xlog2x(q)
	}
	e.noise = float64((p.Slots-p.dynamic)*M) * noiseEntropy(p.noise, p.K)
	for m := range M {
		e.dynamic += float64(p.dynamic) * w.dynamicEntropy(m, p.noise)
	}
	return e
}

// step returns the entropy in bits of a step's action and codes given the
// world and the node prev of the step before (ignored at an episode's first
// step), and adds its walk terms to parts.
func (e *entropyModel) step(first bool, prev int, parts *EntropyParts) float64 {
	h := e.noise + e.dynamic
	if first {
		parts.Start += e.start
		return h + e.start
	}
	nb := math.Log2(float64(e.g.degree(prev)))
	parts.Action += e.action
	parts.Neighbor += nb
	return h + e.action + nb
}

// geometricGap returns the number of coordinates before the next noisy
// one: Geometric(e) on {0, 1, ...}, given logq = log(1-e).
func geometricGap(rng *rand.Rand, logq float64) int {
	g := math.Floor(math.Log(1-rng.Float64()) / logq)
	if g > 1<<30 { // beyond any state; keeps j+1+g within int32
		return 1 << 30
	}
	return int(g)
}

// batchMeans returns the mean of x and the standard error of the mean from
// floor(sqrt(len)) contiguous batches, which absorbs the serial correlation
// of a walk's per-step entropies.
func batchMeans(x []float64) (mean, stderr float64) {
	T := len(x)
	if T == 0 {
		return math.NaN(), math.NaN()
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(T)
	B := int(math.Sqrt(float64(T)))
	if B < 2 {
		return mean, math.NaN()
	}
	size := T / B
	bm := make([]float64, B)
	all := 0.0
	for b := range B {
		for _, v := range x[b*size : (b+1)*size] {
			bm[b] += v
		}
		bm[b] /= float64(size)
		all += bm[b]
	}
	all /= float64(B)
	ss := 0.0
	for _, v := range bm {
		ss += (v - all) * (v - all)
	}
	return mean, math.Sqrt(ss / float64(B-1) / float64(B))
}

// observe renders each slot of each state as the sum over subspaces of the
// rotated prototype of its code, plus Gaussian noise of ObsSigma per
// dimension.
func observe(p *params, w *world, codes []uint16) []float32 {
	M, K, D := p.Subspaces, p.K, p.ObsDim
	rng := rand.New(rand.NewPCG(p.Seed, streamObs))
	slots := len(codes) / M
	obs := make([]float32, slots*D)
	sigma := p.obsSigma
	for i := range slots {
		dst := obs[i*D : (i+1)*D]
		for m, c := range codes[i*M : (i+1)*M] {
			proto := w.rproto[(m*K+int(c))*D : (m*K+int(c)+1)*D]
			for j, x := range proto {
				dst[j] += x
			}
		}
		if sigma > 0 {
			for j := range dst {
				dst[j] += float32(sigma * rng.NormFloat64())
			}
		}
	}
	return obs
}
