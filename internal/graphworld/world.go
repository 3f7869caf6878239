package graphworld

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
)

// Second PCG seed words, one stream per purpose, so that turning one
// feature on (say Obs) never shifts the random numbers of another.
const (
	streamGraph  = 0x67726170685f7767 // world: graph
	streamLatent = 0x6c6174656e745f73 // world: code law, tiles, latent states
	streamProto  = 0x70726f746f747970 // world: observation prototypes and rotation
	streamWalk   = 0x77616c6b5f737465 // walk: starts, actions, neighbours, per-visit content, code noise
	streamObs    = 0x6f62735f6e6f6973 // walk: Gaussian observation noise
)

// poolShare is the probability that a content slot of a node holds a tile
// of the world-wide pool rather than a tile of its own.
const poolShare = 0.5

// world is everything fixed by GraphSeed.
type world struct {
	g         *graph
	community []int
	S, M, K   int
	latent    []uint16  // [Nodes][S][M]; dynamic slots are zero and unused
	law       []float64 // [M][K] per-subspace code law
	aliasP    []float64 // [M][K] alias-method tables for sampling law
	aliasI    []uint16
	rproto    []float32 // [M][K][ObsDim] rotated prototypes (Obs only)
}

func newWorld(p *params) *world {
	w := &world{S: p.Slots, M: p.Subspaces, K: p.K}
	w.g, w.community = buildGraph(p, rand.New(rand.NewPCG(p.GraphSeed, streamGraph)))
	rng := rand.New(rand.NewPCG(p.GraphSeed, streamLatent))
	w.buildLaw(p.Skew, rng)
	w.buildLatent(p, rng)
	if p.Obs {
		w.buildProtos(p, rand.New(rand.NewPCG(p.GraphSeed, streamProto)))
	}
	return w
}

// buildLaw gives each subspace a Zipf(skew) law over a random ordering of
// the K code values: real quantizer codes have skewed marginals.
func (w *world) buildLaw(skew float64, rng *rand.Rand) {
	M, K := w.M, w.K
	w.law = make([]float64, M*K)
	w.aliasP = make([]float64, M*K)
	w.aliasI = make([]uint16, M*K)
	for m := range M {
		q := w.law[m*K : (m+1)*K]
		z := 0.0
		for r, v := range rng.Perm(K) {
			q[v] = math.Pow(float64(r+1), -skew)
			z += q[v]
		}
		for v := range q {
			q[v] /= z
		}
		buildAlias(q, w.aliasP[m*K:(m+1)*K], w.aliasI[m*K:(m+1)*K])
	}
}

// buildAlias fills Walker's alias tables for law q (Vose's construction):
// value i is drawn as i with probability prob[i], else as alias[i].
func buildAlias(q, prob []float64, alias []uint16) {
	K := len(q)
	scaled := make([]float64, K)
	var small, large []int
	for i, x := range q {
		scaled[i] = x * float64(K)
		alias[i] = uint16(i)
		if scaled[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		prob[s], alias[s] = scaled[s], uint16(l)
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range large {
		prob[i] = 1
	}
	for _, i := range small { // only rounding leaves entries here
		prob[i] = 1
	}
}

// drawCode samples subspace m's code law.
func (w *world) drawCode(m int, rng *rand.Rand) uint16 {
	u := rng.Float64() * float64(w.K)
	i := min(int(u), w.K-1)
	j := m*w.K + i
	if u-float64(i) < w.aliasP[j] {
		return uint16(i)
	}
	return w.aliasI[j]
}

// drawTile fills dst, a whole number of tiles, with codes of their
// subspaces' laws (coordinate i belongs to subspace i mod M).
func (w *world) drawTile(dst []uint16, rng *rand.Rand) {
	for i := range dst {
		dst[i] = w.drawCode(i%w.M, rng)
	}
}

func (w *world) state(u int) []uint16 {
	n := w.S * w.M
	return w.latent[u*n : (u+1)*n]
}

// buildLatent lays out every node's state: frame slots (global, then
// per-section), content slots (pool tiles with probability poolShare, else
// unique tiles), dynamic slots (left zero). It then makes states pairwise
// distinct where the alphabet allows it, so that a model knowing the world
// can tell any two nodes apart from noiseless codes.
func (w *world) buildLatent(p *params, rng *rand.Rand) {
	S, M, n := w.S, w.M, p.Nodes
	global := make([]uint16, p.frameGlobal*M)
	w.drawTile(global, rng)
	secSlots := p.frame - p.frameGlobal
	section := make([]uint16, p.Communities*secSlots*M)
	w.drawTile(section, rng)
	pool := make([]uint16, p.PoolTiles*M)
	w.drawTile(pool, rng)
	popCDF := make([]float64, p.PoolTiles)
	acc := 0.0
	for i := range popCDF {
		acc += 1 / float64(i+1)
		popCDF[i] = acc
	}
	w.latent = make([]uint16, n*S*M)
	for u := range n {
		st := w.state(u)
		copy(st, global)
		sec := w.community[u]
		copy(st[p.frameGlobal*M:p.frame*M], section[sec*secSlots*M:(sec+1)*secSlots*M])
		for s := p.frame; s < p.frame+p.content; s++ {
			tile := st[s*M : (s+1)*M]
			if rng.Float64() < poolShare {
				i, _ := slices.BinarySearch(popCDF, rng.Float64()*acc)
				i = min(i, p.PoolTiles-1)
				copy(tile, pool[i*M:(i+1)*M])
			} else {
				w.drawTile(tile, rng)
			}
		}
	}
	w.makeDistinct(p, rng)
}

// makeDistinct redraws one content coordinate of a node whose state equals
// an earlier node's, until all states differ or a bounded number of rounds
// has passed (tiny alphabets may not have room for Nodes distinct states).
func (w *world) makeDistinct(p *params, rng *rand.Rand) {
	n, N := p.Nodes, w.S*w.M
	key := func(u int) []byte {
		b := make([]byte, 2*N)
		for j, c := range w.state(u) {
			binary.BigEndian.PutUint16(b[2*j:], c)
		}
		return b
	}
	for range 64 {
		keys := make([][]byte, n)
		order := make([]int, n)
		for u := range n {
			keys[u] = key(u)
			order[u] = u
		}
		slices.SortStableFunc(order, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
		dup := false
		for i := 1; i < n; i++ {
			if bytes.Equal(keys[order[i]], keys[order[i-1]]) {
				dup = true
				u := order[i]
				j := p.frame*w.M + rng.IntN(p.content*w.M)
				w.state(u)[j] = uint16(rng.IntN(w.K))
			}
		}
		if !dup {
			return
		}
	}
}

// buildProtos draws a unit-variance Gaussian prototype of ObsDim/M
// dimensions for every (subspace, code) and a Haar-random rotation R of
// ObsDim dimensions, and stores R applied to each prototype placed in its
// subspace's block, so that an observation is a sum of M stored vectors.
func (w *world) buildProtos(p *params, rng *rand.Rand) {
	D, M, K := p.ObsDim, w.M, w.K
	sub := D / M
	R := randomRotation(D, rng)
	proto := make([]float64, sub)
	w.rproto = make([]float32, M*K*D)
	for m := range M {
		for c := range K {
			for i := range proto {
				proto[i] = rng.NormFloat64()
			}
			dst := w.rproto[(m*K+c)*D : (m*K+c+1)*D]
			for i := range D {
				row := R[i*D+m*sub : i*D+(m+1)*sub]
				s := 0.0
				for j, x := range proto {
					s += row[j] * x
				}
				dst[i] = float32(s)
			}
		}
	}
}

// randomRotation returns a D×D orthogonal matrix (row-major) from the
// Gram–Schmidt orthonormalization (each projection applied twice for
// accuracy) of a Gaussian matrix: the Q of a QR with positive diagonal,
// which is a Haar-distributed rotation.
func randomRotation(D int, rng *rand.Rand) []float64 {
	// Work on rows (vectors q[k]); the result's columns are the q[k].
	q := make([]float64, D*D)
	for i := range q {
		q[i] = rng.NormFloat64()
	}
	for k := range D {
		vk := q[k*D : (k+1)*D]
		for range 2 {
			for j := range k {
				vj := q[j*D : (j+1)*D]
				dot := 0.0
				for i := range D {
					dot += vj[i] * vk[i]
				}
				for i := range D {
					vk[i] -= dot * vj[i]
				}
			}
		}
		norm := 0.0
		for _, x := range vk {
			norm += x * x
		}
		inv := 1 / math.Sqrt(norm)
		for i := range vk {
			vk[i] *= inv
		}
	}
	R := make([]float64, D*D)
	for k := range D {
		for i := range D {
			R[i*D+k] = q[k*D+i]
		}
	}
	return R
}
