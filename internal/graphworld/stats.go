package graphworld

import (
	"slices"
)

// Gini returns the Gini coefficient of counts (0: all equal; near 1: one
// item takes everything), as in the CTMC paper's access-concentration
// tables. It is 0 for an empty or all-zero input.
func Gini(counts []int64) float64 {
	n := len(counts)
	if n == 0 {
		return 0
	}
	x := slices.Clone(counts)
	slices.Sort(x)
	var sum, weighted float64
	for i, c := range x {
		sum += float64(c)
		weighted += float64(i+1) * float64(c)
	}
	if sum == 0 {
		return 0
	}
	return 2*weighted/(float64(n)*sum) - float64(n+1)/float64(n)
}

// TopShare returns the share of the total held by the ceil(frac*len) largest
// counts (frac = 0.1 gives the paper's top-10% share).
func TopShare(counts []int64, frac float64) float64 {
	n := len(counts)
	if n == 0 {
		return 0
	}
	x := slices.Clone(counts)
	slices.Sort(x)
	k := min(n, max(1, int(frac*float64(n)+0.999999999)))
	var top, sum float64
	for i, c := range x {
		sum += float64(c)
		if i >= n-k {
			top += float64(c)
		}
	}
	if sum == 0 {
		return 0
	}
	return top / sum
}
