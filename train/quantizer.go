package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/viterin/vek/vek32"
	"github.com/wmzip/wmzip/internal/gemm"
	"github.com/wmzip/wmzip/internal/opq"
	"gonum.org/v1/gonum/mat"
)

// Lloyd iterations per codebook update inside the alternating loop: many
// for the first (cold) codebooks, few afterwards (warm start).
const (
	firstLloyd = 20
	innerLloyd = 4
)

// Quantizer learns an OPQ quantizer from vectors, n rows of cfg.Dim
// values, or [n][Slots][Dim] values when cfg.PerSlot is set: a rotation
// started from PCA and refined by Procrustes steps between k-means runs,
// and the codebooks of its subspaces. The result depends only on the
// vectors and cfg, not on cfg.Threads.
func Quantizer(vectors []float32, cfg opq.Config) (*opq.Quantizer, error) {
	cfg = withDefaults(cfg)
	if err := opq.CheckGeometry(cfg.Dim, cfg.M, cfg.K); err != nil {
		return nil, err
	}
	books := 1
	if cfg.PerSlot {
		if cfg.Slots < 1 || cfg.Slots > opq.MaxSlots {
			return nil, fmt.Errorf("opq: PerSlot needs Slots in 1..%d, got %d", opq.MaxSlots, cfg.Slots)
		}
		books = cfg.Slots
	}
	stride := books * cfg.Dim
	if len(vectors)%stride != 0 {
		return nil, fmt.Errorf("opq: train: %d values are not a whole number of %d x %d", len(vectors), books, cfg.Dim)
	}
	n := len(vectors) / stride
	ns := n
	if cfg.Sample > 0 && n > cfg.Sample {
		ns = cfg.Sample
	}
	if ns < cfg.K {
		return nil, fmt.Errorf("opq: train: %d training vectors for K=%d centroids", ns, cfg.K)
	}
	rot, cent := make([][]float32, books), make([][]float32, books)
	for bi := range rot {
		x := sampleRows(vectors, n, ns, stride, bi*cfg.Dim, cfg.Dim)
		for _, v := range x {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("opq: train: vectors contain NaN or Inf")
			}
		}
		t := &trainer{cfg: cfg, n: ns, x: x, seed: cfg.Seed + uint64(bi)*0x9e3779b97f4a7c15}
		if books > 1 {
			t.stage = fmt.Sprintf("slot %d: ", bi)
		}
		rot[bi], cent[bi] = t.run()
	}
	q, err := opq.New(cfg.Dim, cfg.M, cfg.K, rot, cent)
	if err != nil {
		return nil, err
	}
	q.SetThreads(cfg.Threads)
	return q, nil
}

func withDefaults(c opq.Config) opq.Config {
	if c.Dim == 0 {
		c.Dim = opq.DefaultDim
	}
	if c.M == 0 {
		c.M = opq.DefaultM
	}
	if c.K == 0 {
		c.K = opq.DefaultK
	}
	if c.Iters <= 0 {
		c.Iters = opq.DefaultIters
	}
	if c.OPQIters == 0 {
		c.OPQIters = opq.DefaultOPQIters
	}
	if c.Sample == 0 {
		c.Sample = opq.DefaultSample
	}
	if c.Threads <= 0 {
		c.Threads = runtime.GOMAXPROCS(0)
	}
	return c
}

// sampleRows returns ns of n rows (row i*n/ns), taking dim values at offset
// off of each stride-long row: a copy, or v itself when that is all of it.
func sampleRows(v []float32, n, ns, stride, off, dim int) []float32 {
	if ns == n && stride == dim {
		return v // every row, contiguous: training only reads them
	}
	x := make([]float32, ns*dim)
	for i := 0; i < ns; i++ {
		r := int(int64(i) * int64(n) / int64(ns))
		copy(x[i*dim:(i+1)*dim], v[r*stride+off:r*stride+off+dim])
	}
	return x
}

// batch is the number of rows one task of the rotation and of k-means
// handles.
const batch = 256

// pcaBlock is the number of rows whose covariance is formed at once.
const pcaBlock = 4096

// trainer holds one book's training state.
type trainer struct {
	cfg   opq.Config
	n     int
	x     []float32 // n x dim training vectors
	seed  uint64
	stage string

	rot   []float32 // dim x dim
	cent  []float32 // M x K x dsub
	y     []float32 // n x dimPad rotated vectors
	codes []uint16  // n x M
}

func (t *trainer) run() (rot, cent []float32) {
	dim, m, k := t.cfg.Dim, t.cfg.M, t.cfg.K
	dsub := dim / m
	if t.cfg.OPQIters >= 0 {
		t.rot = t.pcaRotation()
	}
	t.cent = make([]float32, m*k*dsub)
	t.y = make([]float32, t.n*gemm.PadTo16(dim))
	t.codes = make([]uint16, t.n*m)

	iters := max(t.cfg.OPQIters, 0)
	prog := gemm.NewProgress(t.cfg.Progress, t.stage+"opq", iters)
	for it := 0; it < iters; it++ {
		t.rotate()
		if it == 0 {
			t.initCentroids()
			t.lloyd(firstLloyd)
		} else {
			t.lloyd(innerLloyd)
		}
		t.assign()
		t.procrustes()
		prog.Add(1)
	}
	t.rotate()
	if iters == 0 {
		t.initCentroids()
	}
	prog = gemm.NewProgress(t.cfg.Progress, t.stage+"kmeans", t.cfg.Iters)
	for it := 0; it < t.cfg.Iters; it++ {
		t.lloyd(1)
		prog.Add(1)
	}
	return t.rot, t.cent
}

// rotate computes y = x·rotᵀ (y = x without a rotation).
func (t *trainer) rotate() {
	dim, dimPad := t.cfg.Dim, gemm.PadTo16(t.cfg.Dim)
	if t.rot == nil {
		for i := range t.n {
			copy(t.y[i*dimPad:i*dimPad+dim], t.x[i*dim:(i+1)*dim])
		}
		return
	}
	p := gemm.PackCols(t.rot, dim, dim, dim)
	tasks := (t.n + batch - 1) / batch
	gemm.Parallel(t.cfg.Threads, tasks, func(_, ti int) {
		r0 := ti * batch
		rows := min(batch, t.n-r0)
		gemm.Gemm(t.y[r0*dimPad:], dimPad, t.x[r0*dim:], dim, rows, p, nil)
	})
}

// pcaRotation returns the eigenvectors of the covariance of x as rows,
// grouped into subspaces by eigenvalue allocation: each eigenvector, in
// decreasing eigenvalue order, joins the non-full subspace whose product of
// eigenvalues is smallest, which balances the variance across subspaces.
func (t *trainer) pcaRotation() []float32 {
	dim, n, m := t.cfg.Dim, t.n, t.cfg.M
	dsub := dim / m
	prog := gemm.NewProgress(t.cfg.Progress, t.stage+"pca", 1)
	mean := make([]float64, dim)
	for i := 0; i < n; i++ {
		for j, v := range t.x[i*dim : (i+1)*dim] {
			mean[j] += float64(v)
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	// The covariance, a block of rows at a time so that memory does not
	// grow with n: each block's centered rows (b x dim) and their transpose
	// (dim x b) give its part of the sum, added in float64 in block order
	// (deterministic for any thread count).
	blk := min(n, pcaBlock)
	xt := make([]float32, dim*blk)
	xc := make([]float32, blk*dim)
	dimPad := gemm.PadTo16(dim)
	cov := make([]float32, dim*dimPad)
	sum := make([]float64, dim*dim)
	const rowsPerTask = 16
	for r0 := 0; r0 < n; r0 += blk {
		b := min(blk, n-r0)
		for i := 0; i < b; i++ {
			for j, x := range t.x[(r0+i)*dim : (r0+i+1)*dim] {
				v := float32(float64(x) - mean[j])
				xc[i*dim+j] = v
				xt[j*b+i] = v
			}
		}
		p := gemm.PackRows(xc[:b*dim], b, dim, dim)
		gemm.Parallel(t.cfg.Threads, (dim+rowsPerTask-1)/rowsPerTask, func(_, ti int) {
			q0 := ti * rowsPerTask
			gemm.Gemm(cov[q0*dimPad:], dimPad, xt[q0*b:], b, min(rowsPerTask, dim-q0), p, nil)
		})
		for i := 0; i < dim; i++ {
			for j, c := range cov[i*dimPad : i*dimPad+dim] {
				sum[i*dim+j] += float64(c)
			}
		}
	}
	sym := mat.NewSymDense(dim, nil)
	for i := 0; i < dim; i++ {
		for j := i; j < dim; j++ {
			sym.SetSym(i, j, (sum[i*dim+j]+sum[j*dim+i])/2/float64(n))
		}
	}
	var eig mat.EigenSym
	rot := make([]float32, dim*dim)
	if !eig.Factorize(sym, true) {
		for i := 0; i < dim; i++ {
			rot[i*dim+i] = 1
		}
		prog.Add(1)
		return rot
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	floor := math.Max(vals[dim-1], 1e-30) * 1e-12
	logSum := make([]float64, m)
	members := make([][]int, m)
	for e := dim - 1; e >= 0; e-- {
		// Compare the products the subspaces would reach if their free places
		// took this eigenvalue (later ones are smaller): scale-invariant,
		// unlike comparing partial products of unequal length.
		lv := math.Log(math.Max(vals[e], floor))
		best, bestV := -1, 0.0
		for s := 0; s < m; s++ {
			if len(members[s]) == dsub {
				continue
			}
			v := logSum[s] + float64(dsub-len(members[s]))*lv
			if best < 0 || v < bestV {
				best, bestV = s, v
			}
		}
		members[best] = append(members[best], e)
		logSum[best] += lv
	}
	for s := 0; s < m; s++ {
		for c, e := range members[s] {
			r := s*dsub + c
			for j := 0; j < dim; j++ {
				rot[r*dim+j] = float32(vecs.At(j, e))
			}
		}
	}
	prog.Add(1)
	return rot
}

// initPointsPerCentroid bounds the points k-means++ draws from: vector
// i*n/np for i < np, np = min(n, initPointsPerCentroid*K). Lloyd iterations
// then use every point.
const initPointsPerCentroid = 128

// initCentroids seeds each subspace's codebook by k-means++.
func (t *trainer) initCentroids() {
	m, k, dsub, dimPad := t.cfg.M, t.cfg.K, t.cfg.Dim/t.cfg.M, gemm.PadTo16(t.cfg.Dim)
	np := t.n
	if int64(np) > int64(initPointsPerCentroid)*int64(k) {
		np = initPointsPerCentroid * k
	}
	gemm.Parallel(t.cfg.Threads, m, func(_, s int) {
		rng := rand.New(rand.NewPCG(t.seed, uint64(s)))
		cent := t.cent[s*k*dsub : (s+1)*k*dsub]
		d2 := make([]float64, np)
		pt := func(i int) []float32 {
			r := int(int64(i) * int64(t.n) / int64(np))
			return t.y[r*dimPad+s*dsub : r*dimPad+(s+1)*dsub]
		}
		copy(cent[:dsub], pt(rng.IntN(np)))
		for i := range d2 {
			d2[i] = sqDist(pt(i), cent[:dsub])
		}
		for j := 1; j < k; j++ {
			var total float64
			for _, v := range d2 {
				total += v
			}
			pick := 0
			if total > 0 {
				r := rng.Float64() * total
				for pick = 0; pick < np-1; pick++ {
					r -= d2[pick]
					if r < 0 {
						break
					}
				}
			} else {
				pick = rng.IntN(np)
			}
			c := cent[j*dsub : (j+1)*dsub]
			copy(c, pt(pick))
			for i := range d2 {
				if d := sqDist(pt(i), c); d < d2[i] {
					d2[i] = d
				}
			}
		}
	})
}

func sqDist(a, b []float32) float64 {
	var s float64
	for i, v := range a {
		d := float64(v) - float64(b[i])
		s += float64(d * d)
	}
	return s
}

// assign sets codes to the nearest centroid of each subspace.
func (t *trainer) assign() {
	t.lloydSteps(0)
}

// lloyd runs iters Lloyd iterations (assignment, then centroid update) on
// every subspace; codes hold the last assignment.
func (t *trainer) lloyd(iters int) { t.lloydSteps(iters) }

// lloydSteps assigns and updates each subspace iters times; with iters 0 it
// only assigns.
func (t *trainer) lloydSteps(iters int) {
	m, k, dsub, dimPad, kPad := t.cfg.M, t.cfg.K, t.cfg.Dim/t.cfg.M, gemm.PadTo16(t.cfg.Dim), gemm.PadTo16(t.cfg.K)
	gemm.Parallel(t.cfg.Threads, m, func(_, s int) {
		cent := t.cent[s*k*dsub : (s+1)*k*dsub]
		dots := make([]float32, batch*kPad)
		sums := make([]float64, k*dsub)
		counts := make([]int, k)
		scaled := make([]float32, k*dsub)
		norms := make([]float32, kPad)
		for it := 0; it <= iters; it++ {
			// Assignment, with the same arithmetic as Encode.
			for j := 0; j < k; j++ {
				var n2 float32
				for c := 0; c < dsub; c++ {
					v := cent[j*dsub+c]
					n2 += float32(v * v)
					scaled[j*dsub+c] = -2 * v
				}
				norms[j] = n2
			}
			for j := k; j < kPad; j++ {
				norms[j] = float32(math.Inf(1))
			}
			p := gemm.PackCols(scaled, k, dsub, dsub)
			for r0 := 0; r0 < t.n; r0 += batch {
				rows := min(batch, t.n-r0)
				gemm.Gemm(dots, kPad, t.y[r0*dimPad+s*dsub:], dimPad, rows, p, norms)
				for i := 0; i < rows; i++ {
					t.codes[(r0+i)*m+s] = uint16(gemm.Argmin(dots[i*kPad : i*kPad+k]))
				}
			}
			if it == iters {
				break
			}
			// Update: centroid = mean of its points, summed in row order.
			clear(sums)
			clear(counts)
			for i := 0; i < t.n; i++ {
				c := int(t.codes[i*m+s])
				counts[c]++
				acc := sums[c*dsub : (c+1)*dsub]
				for j, v := range t.y[i*dimPad+s*dsub : i*dimPad+(s+1)*dsub] {
					acc[j] += float64(v)
				}
			}
			for c := 0; c < k; c++ {
				if counts[c] == 0 {
					continue
				}
				inv := 1 / float64(counts[c])
				for j := 0; j < dsub; j++ {
					cent[c*dsub+j] = float32(sums[c*dsub+j] * inv)
				}
			}
			splitEmpty(cent, counts, k, dsub)
		}
	})
}

// splitEmpty gives each empty cluster half of the largest one: the two
// centroids are pushed apart by a relative 1/1024 in alternating directions.
func splitEmpty(cent []float32, counts []int, k, dsub int) {
	const eps = 1.0 / 1024
	for c := 0; c < k; c++ {
		if counts[c] != 0 {
			continue
		}
		big := 0
		for j := 1; j < k; j++ {
			if counts[j] > counts[big] {
				big = j
			}
		}
		if counts[big] < 2 {
			return
		}
		for j := 0; j < dsub; j++ {
			v := cent[big*dsub+j]
			if j%2 == 0 {
				cent[c*dsub+j], cent[big*dsub+j] = v*(1+eps), v*(1-eps)
			} else {
				cent[c*dsub+j], cent[big*dsub+j] = v*(1-eps), v*(1+eps)
			}
		}
		counts[c] = counts[big] / 2
		counts[big] -= counts[c]
	}
}

// procrustes replaces the rotation by the orthogonal R minimizing
// ||Ŷ - X·Rᵀ||, where Ŷ is the current reconstruction in rotated space:
// with Ŷᵀ·X = U·S·Vᵀ, R = U·Vᵀ. Ŷᵀ·X is formed from per-cluster sums of x,
// which costs n·M·dim additions instead of a full product.
func (t *trainer) procrustes() {
	dim, m, k := t.cfg.Dim, t.cfg.M, t.cfg.K
	dsub := dim / m
	g := mat.NewDense(dim, dim, nil)
	gemm.Parallel(t.cfg.Threads, m, func(_, s int) {
		sums := make([]float32, k*dim)
		for i := 0; i < t.n; i++ {
			c := int(t.codes[i*m+s])
			vek32.Add_Inplace(sums[c*dim:(c+1)*dim], t.x[i*dim:(i+1)*dim])
		}
		cent := t.cent[s*k*dsub : (s+1)*k*dsub]
		row := make([]float64, dim)
		for r := 0; r < dsub; r++ {
			clear(row)
			for c := 0; c < k; c++ {
				w := float64(cent[c*dsub+r])
				for j, v := range sums[c*dim : (c+1)*dim] {
					row[j] += float64(w * float64(v))
				}
			}
			g.SetRow(s*dsub+r, row)
		}
	})
	var svd mat.SVD
	if !svd.Factorize(g, mat.SVDFull) {
		return
	}
	var u, v, r mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	r.Mul(&u, v.T())
	for i := 0; i < dim; i++ {
		for j := 0; j < dim; j++ {
			t.rot[i*dim+j] = float32(r.At(i, j))
		}
	}
}
