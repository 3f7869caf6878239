package baseline

import (
	"fmt"
	"math"
)

// order0Adaptive is the ideal code length in bits of codes under an adaptive
// order-0 model per coordinate position: every count starts at 1, each code v
// costs −log2(c[v]/Σc) and then increments c[v]. Prior codes, if any, are
// counted first at no cost. This is what a per-coordinate rANS with tables
// learned on the fly spends, framing aside.
func order0Adaptive(codes, prior []uint16, n, k int) float64 {
	counts := make([]uint32, n*k)
	for i := range counts {
		counts[i] = 1
	}
	total := make([]uint32, n)
	for i := range total {
		total[i] = uint32(k)
	}
	for i, v := range prior {
		pos := i % n
		counts[pos*k+int(v)]++
		total[pos]++
	}
	var sum float64
	for i, v := range codes {
		pos := i % n
		c := &counts[pos*k+int(v)]
		sum += math.Log2(float64(total[pos])) - math.Log2(float64(*c))
		*c++
		total[pos]++
	}
	return sum
}

// order0Static is the ideal code length in bits of codes under fixed
// per-coordinate frequencies counted on train with +1 smoothing:
// p(v) = (c[v]+1) / (Ttrain+K).
func order0Static(codes, train []uint16, n, k int) float64 {
	counts := make([]uint32, n*k)
	for i, v := range train {
		counts[(i%n)*k+int(v)]++
	}
	logTotal := math.Log2(float64(len(train)/n + k))
	var sum float64
	for i, v := range codes {
		sum += logTotal - math.Log2(float64(counts[(i%n)*k+int(v)]+1))
	}
	return sum
}

// copyPrev scores the reconstruction that repeats the previous state of the
// episode: the fraction of codes it gets right over the states that have a
// previous one. It costs nothing to store, so Bytes is 0.
func copyPrev(in *Input, t int) Result {
	first := in.episodeFirst(t)
	n := in.N
	var same, all int64
	for s := range t {
		if first[s] {
			continue
		}
		cur, prev := in.Codes[s*n:(s+1)*n], in.Codes[(s-1)*n:s*n]
		for i, v := range cur {
			if v == prev[i] {
				same++
			}
		}
		all += int64(n)
	}
	if all == 0 {
		return Result{Name: "copy-prev", Note: "no state has a predecessor in its episode", Available: true}
	}
	return Result{
		Name:      "copy-prev",
		Note:      fmt.Sprintf("%.2f%% of codes equal the previous state's (%d of %d)", 100*float64(same)/float64(all), same, all),
		Available: true,
	}
}
