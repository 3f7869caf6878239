package graphworld

import "math"

// posteriorFloor is the relative probability below which a node is dropped
// from the forward filter's posterior; the neglected mass changes the code
// length by less than Nodes*2^-64 relative.
const posteriorFloor = 0x1p-64

// idealBits returns, for each step t of the generated data,
// -log2 P(action t, codes t | world, steps before t), with the hidden node
// marginalized by the forward algorithm. The sum is -log2 P(data | world).
func idealBits(p *params, w *world, r *Result) []float64 {
	S, M, K, T, n := p.Slots, p.Subspaces, p.K, p.T, p.Nodes
	N := S * M
	src := sourceSlots(p)
	e := p.noise
	logStay := math.Log2(1 - e + e/float64(K))
	logMove := math.Log2(e / float64(K)) // -Inf without noise
	staticCoords := (S - p.dynamic) * M

	// loglik is log2 P(codes of step t | node v, action a).
	loglik := func(x []uint16, v int, a int64) float64 {
		lat := w.state(v)
		matches := 0
		for s, from := range src[a+1] {
			if from < 0 {
				continue
			}
			xs, ls := x[s*M:(s+1)*M], lat[from*M:(from+1)*M]
			for m := range xs {
				if xs[m] == ls[m] {
					matches++
				}
			}
		}
		miss := staticCoords - matches
		switch {
		case e >= 1:
			return float64(staticCoords) * logStay
		case miss == 0:
			return float64(matches) * logStay
		case e == 0:
			return math.Inf(-1)
		}
		return float64(matches)*logStay + float64(miss)*logMove
	}
	dynLik := func(x []uint16) float64 {
		h := 0.0
		for s, from := range src[0] {
			if from >= 0 {
				continue
			}
			for m, c := range x[s*M : (s+1)*M] {
				h += math.Log2((1-e)*w.law[m*K+int(c)] + e/float64(K))
			}
		}
		return h
	}

	pred := make([]float64, n) // predictive probability of each node
	inPred := make([]bool, n)
	var touched, post []int
	var postP []float64
	lik := make([]float64, 0, n)
	bits := make([]float64, T)
	for t := range T {
		total := 0.0
		x := r.Codes[t*N : (t+1)*N]
		a := r.Actions[t]
		touched = touched[:0]
		if a < 0 {
			for v := range n {
				pred[v] = 1 / float64(n)
				touched = append(touched, v)
			}
		} else {
			total += math.Log2(p.ActionProbs[a])
			for i, u := range post {
				nb := w.g.neighbors(u)
				q := postP[i] / float64(len(nb))
				for _, v := range nb {
					if !inPred[v] {
						inPred[v] = true
						touched = append(touched, v)
					}
					pred[v] += q
				}
			}
		}
		lik = lik[:0]
		best := math.Inf(-1)
		for _, v := range touched {
			l := loglik(x, v, a)
			lik = append(lik, l)
			best = max(best, l)
		}
		if math.IsInf(best, -1) {
			// Impossible under the model (cannot happen for generated data).
			bits[t] = math.Inf(1)
			for _, v := range touched {
				pred[v], inPred[v] = 0, false
			}
			post, postP = post[:0], postP[:0]
			continue
		}
		z := 0.0
		for i, v := range touched {
			z += pred[v] * math.Exp2(lik[i]-best)
		}
		total += best + math.Log2(z) + dynLik(x)
		post, postP = post[:0], postP[:0]
		top := 0.0
		for i, v := range touched {
			top = max(top, pred[v]*math.Exp2(lik[i]-best)/z)
		}
		for i, v := range touched {
			q := pred[v] * math.Exp2(lik[i]-best) / z
			if q >= top*posteriorFloor {
				post = append(post, v)
				postP = append(postP, q)
			}
			pred[v], inPred[v] = 0, false
		}
		bits[t] = -total
	}
	return bits
}
