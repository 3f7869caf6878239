package train

import (
	"bytes"
	"context"
	"fmt"
	"math"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/knn"
	"github.com/wmzip/wmzip/search"
)

// RetrievalOptions configure RetrievalWeights.
type RetrievalOptions struct {
	// Rate is the fraction of the lossless rate the weights are tuned at:
	// the largest λ (a power of two) whose memory is at most this size
	// (default 0.15).
	Rate float64
	// K is the recall@K measured (default 10).
	K int
	// Floor bounds the weights below, as a fraction of their mean
	// (default 1/8); they are normalized to mean 1.
	Floor float64
	// Subspaces also weighs each subspace (across slots), as each slot
	// is weighed: a coordinate's weight is then its slot's times its
	// subspace's. Without it the weights are one per slot.
	Subspaces bool
}

// RetrievalWeights calibrates per-coordinate weights for the retention
// gate (gate.CalibOptions.Weights, WithGate) that make it retrieval-aware:
// the gate of codec c keeps a coordinate when λ·ê·V·w outweighs its cost,
// and w_j here is how much an omission in coordinate j's slot damages
// nearest-neighbour recall per unit of the distance it causes, measured
// on episodes with float observations: the first five sixths are a
// memory, coded by c's gate at the rate asked; states and slot vectors of
// the last sixth are queries, their exact float neighbours the truth. For
// each slot, the memory with only that slot's coordinates as the gate
// left them (the others lossless) is searched (package search), and the
// recall it loses, over the squared distance those coordinates moved,
// is the slot's weight (with Subspaces, likewise each subspace's). Slots
// whose errors move states across the K-th neighbour get more bits. c must
// not have seen eps (its world model would predict them from memory):
// train it on other episodes. Floating point is used only here, offline,
// like the gate's other tables.
func RetrievalWeights(ctx context.Context, c *wmzip.Codec, eps []wmzip.Episode, opt RetrievalOptions) ([]float64, error) {
	if opt.Rate == 0 {
		opt.Rate = 0.15
	}
	if opt.K == 0 {
		opt.K = 10
	}
	if opt.Floor == 0 {
		opt.Floor = 1.0 / 8
	}
	q := c.Quantizer()
	if q == nil {
		return nil, fmt.Errorf("%w: retrieval weights need a codec with a quantizer", wmzip.ErrInput)
	}
	if len(eps) < 2 {
		return nil, fmt.Errorf("%w: retrieval weights need at least 2 episodes", wmzip.ErrInput)
	}
	g, dim := c.Geometry(), q.Dim()
	hold := max(1, len(eps)/6)
	mem, qeps := eps[:len(eps)-hold], eps[len(eps)-hold:]
	var lens []int
	var obs []float32
	var lossless []uint16
	for _, e := range mem {
		if e.Obs == nil {
			return nil, fmt.Errorf("%w: retrieval weights need float observations", wmzip.ErrInput)
		}
		lens = append(lens, len(e.Actions))
		obs = append(obs, e.Obs...)
		cd, err := c.Quantize(nil, e.Obs)
		if err != nil {
			return nil, err
		}
		lossless = append(lossless, cd...)
	}
	// The lossy memory: the largest power-of-two λ within the rate.
	size := func(opts ...wmzip.WriterOption) ([]byte, error) {
		var buf bytes.Buffer
		w, err := wmzip.NewWriter(&buf, c, opts...)
		if err != nil {
			return nil, err
		}
		if err := w.WriteAll(mem); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	full, err := size()
	if err != nil {
		return nil, err
	}
	var lossy []uint16
	for e := 15; e >= -4 && lossy == nil; e-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := size(wmzip.WithLambda(math.Exp2(float64(e))))
		if err != nil {
			return nil, err
		}
		if float64(len(b)) > opt.Rate*float64(len(full)) {
			continue
		}
		dec, err := wmzip.DecodeAll(bytes.NewReader(b), c)
		if err != nil {
			return nil, err
		}
		for _, d := range dec {
			lossy = append(lossy, d.Codes...)
		}
	}
	if lossy == nil {
		return nil, fmt.Errorf("%w: no λ reaches %.3g of the lossless rate", wmzip.ErrInput, opt.Rate)
	}
	// Queries and their exact neighbours.
	var sq, stq []search.Query
	for _, e := range qeps {
		for t := range len(e.Actions) {
			st := e.Obs[t*g.S*dim : (t+1)*g.S*dim]
			stq = append(stq, search.Query{Vectors: st})
			for s := range g.S {
				if (t*g.S+s)%max(1, g.S/4) == 0 {
					sq = append(sq, search.Query{Vectors: st[s*dim : (s+1)*dim]})
				}
			}
		}
	}
	truthSt, kthSt := knn.Exact(stq, obs, dim*g.S, opt.K)
	truthSl, kthSl := knn.Exact(sq, obs, dim, opt.K)
	score := func(codes []uint16) (float64, error) {
		ix, err := search.FromCodes(c, lens, codes, -1)
		if err != nil {
			return 0, err
		}
		m, err := search.NewMemory(c, ix)
		if err != nil {
			return 0, err
		}
		a, err := m.Search(ctx, stq, search.Options{K: opt.K, States: true})
		if err != nil {
			return 0, err
		}
		b, err := m.Search(ctx, sq, search.Options{K: opt.K})
		if err != nil {
			return 0, err
		}
		first := make([]int, len(lens))
		for i := 1; i < len(lens); i++ {
			first[i] = first[i-1] + lens[i-1]
		}
		hits := func(res [][]search.Result, truth [][]int, kth []float64, qs []search.Query, per int, states bool) float64 {
			var sum float64
			for i, rs := range res {
				want := map[int]bool{}
				for _, t := range truth[i] {
					want[t] = true
				}
				for _, r := range rs {
					pos := first[r.Episode] + r.Step
					if !states {
						pos = pos*g.S + r.Slot
					}
					// Strict and tie-aware hits, half each.
					if want[pos] {
						sum += 0.5
					}
					if knn.SqDist(qs[i].Vectors, obs, per, pos) <= kth[i] {
						sum += 0.5
					}
				}
			}
			return sum / float64(len(res)*opt.K)
		}
		return hits(a, truthSt, kthSt, stq, dim*g.S, true) + hits(b, truthSl, kthSl, sq, dim, false), nil
	}
	base, err := score(lossless)
	if err != nil {
		return nil, err
	}
	// Per group of coordinates (a slot; with opt.Subspaces, also a
	// subspace across slots): the recall lost with only the group lossy,
	// over the squared distance it moved (in the quantizer's rotated space).
	n := g.N()
	sub := q.Dim() / g.M
	hybrid := make([]uint16, len(lossless))
	var ya, yb []float64
	groupWeight := func(in func(s, m int) bool) (float64, error) {
		copy(hybrid, lossless)
		var moved float64
		for t := range len(lossless) / n {
			for s := range g.S {
				o := t*n + s*g.M
				if ya, err = q.RotatedCentroids(ya, lossless[o:o+g.M], s); err != nil {
					return 0, err
				}
				if yb, err = q.RotatedCentroids(yb, lossy[o:o+g.M], s); err != nil {
					return 0, err
				}
				for m := range g.M {
					if !in(s, m) {
						continue
					}
					hybrid[o+m] = lossy[o+m]
					for i := m * sub; i < (m+1)*sub; i++ {
						d := ya[i] - yb[i]
						moved += d * d
					}
				}
			}
		}
		r, err := score(hybrid)
		if err != nil || moved == 0 {
			return 0, err
		}
		return max(base-r, 0) / moved, nil
	}
	ws := make([]float64, g.S)
	for s := range g.S {
		if ws[s], err = groupWeight(func(s2, _ int) bool { return s2 == s }); err != nil {
			return nil, err
		}
	}
	wm := make([]float64, g.M)
	for m := range g.M {
		wm[m] = 1
		if opt.Subspaces {
			if wm[m], err = groupWeight(func(_, m2 int) bool { return m2 == m }); err != nil {
				return nil, err
			}
		}
	}
	ws, wm = normalize(ws, opt.Floor), normalize(wm, opt.Floor)
	out := make([]float64, n)
	for s := range g.S {
		for m := range g.M {
			out[s*g.M+m] = ws[s] * wm[m]
		}
	}
	return out, nil
}

// normalize scales the positive weights of w to mean 1, floored, and gives
// the others (groups the gate left untouched) the mean.
func normalize(w []float64, floor float64) []float64 {
	var sum float64
	var cnt int
	for _, v := range w {
		if v > 0 {
			sum, cnt = sum+v, cnt+1
		}
	}
	out := make([]float64, len(w))
	for i, v := range w {
		out[i] = 1
		if cnt > 0 && sum > 0 {
			out[i] = max(v/(sum/float64(cnt)), floor)
		}
	}
	return out
}
