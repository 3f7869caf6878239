// Package knn finds exact nearest neighbours by brute force, in float64:
// the ground truth that retrieval over wmzip memories is measured against
// (train.RetrievalWeights, wmzip bench retrieval).
package knn

import (
	"runtime"
	"sort"
	"sync"

	"github.com/wmzip/wmzip/search"
)

// Exact returns, for each query, the positions of its k nearest rows of
// mem (rows of width floats: a slot vector, or a whole state's) by squared
// Euclidean distance, ties by position, and the k-th distance. Queries run
// on every core.
func Exact(qs []search.Query, mem []float32, width, k int) ([][]int, []float64) {
	out := make([][]int, len(qs))
	kth := make([]float64, len(qs))
	rows := len(mem) / width
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			type cand struct {
				d float64
				i int
			}
			all := make([]cand, rows)
			for qi := range next {
				for r := range rows {
					all[r] = cand{SqDist(qs[qi].Vectors, mem, width, r), r}
				}
				sort.Slice(all, func(a, b int) bool { return all[a].d < all[b].d || all[a].d == all[b].d && all[a].i < all[b].i })
				ids := make([]int, min(k, rows))
				for j := range ids {
					ids[j] = all[j].i
				}
				out[qi] = ids
				kth[qi] = all[len(ids)-1].d
			}
		}()
	}
	for i := range qs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, kth
}

// SqDist is the squared Euclidean distance between q and row r of mem, in
// float64 as Exact computes it.
func SqDist(q, mem []float32, width, r int) float64 {
	var sum float64
	for j, x := range mem[r*width : (r+1)*width] {
		y := float64(q[j]) - float64(x)
		sum += y * y
	}
	return sum
}
