package search

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/wmzip/wmzip/internal/gemm"
	"github.com/wmzip/wmzip/internal/opq"
)

// The coarse partition (IVF) groups an index's states into cells by a
// sketch of each state: every slot vector's reconstruction projected on
// the leading SketchDims principal directions of the slot vectors (in the
// quantizer's rotated space), side by side for the S slots. Cells are a
// k-means of the sketches; a state query scans the NProbe cells whose
// centroids are nearest its own sketch. The sketch of a stored state is a
// sum of table entries, one per code, like a distance.

// SketchDims is how many principal directions of a slot vector a state's
// sketch keeps. (On a million states of web-pgdocs tiled, probing 64 of
// 1,000 cells: 8 directions found 0.96 of the flat scan's neighbours, 2
// found 0.79.)
const SketchDims = 8

// Training of the partition.
const (
	kmeansIters   = 10
	kmeansPerCell = 64    // training sketches per cell
	kmeansSample  = 65536 // at most this many
	pcaSample     = 4096  // slot vectors the principal directions are taken from
	pcaIters      = 40
)

// partition is a coarse partition of an index's stored states.
type partition struct {
	cells int
	r     int         // principal directions per slot vector
	proj  [][]float32 // per quantizer set: r × Dim, the directions
	cent  []float32   // cells × (S·r) centroids
	// offsets: cell c holds stored states offsets[c] to offsets[c+1]−1.
	offsets []uint64
}

// dims is the sketch's dimension.
func (pt *partition) dims(s int) int { return s * pt.r }

// probe returns the nprobe cells nearest the sketch of a state query
// given its rotated slot vectors, nearest first (ties by cell).
func (pt *partition) probe(rotated [][]float64, nprobe int) []int {
	d := len(rotated) * pt.r
	z := make([]float64, d)
	for s, y := range rotated {
		p := pt.proj[min(s, len(pt.proj)-1)]
		for i := range pt.r {
			var sum float64
			for j, v := range p[i*len(y) : (i+1)*len(y)] {
				sum += float64(float64(v) * y[j])
			}
			z[s*pt.r+i] = sum
		}
	}
	type cd struct {
		d float64
		c int
	}
	all := make([]cd, pt.cells)
	for c := range pt.cells {
		var sum float64
		for i, v := range pt.cent[c*d : (c+1)*d] {
			x := z[i] - float64(v)
			sum += float64(x * x)
		}
		all[c] = cd{sum, c}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].d < all[j].d || all[i].d == all[j].d && all[i].c < all[j].c })
	out := make([]int, min(nprobe, pt.cells))
	for i := range out {
		out[i] = all[i].c
	}
	return out
}

// partition builds ix's partition into the given number of cells and
// reorders its codes cell by cell.
func (ix *Index) partition(ctx context.Context, q *opq.Quantizer, cells, threads int, progress func(string, int64, int64)) error {
	g := ix.geom
	n := int(ix.States())
	cells = min(cells, n)
	pt := &partition{cells: cells, r: SketchDims}
	if q.Dim() < pt.r {
		pt.r = q.Dim()
	}
	sets := max(q.Slots(), 1)
	// Sketch tables: per set, per subspace m and code v, the projection of
	// centroid v of subspace m (placed in the rotated space) on each
	// direction.
	tabs := make([][]float32, sets)
	for b := range sets {
		dirs, err := ix.directions(q, b, pt.r)
		if err != nil {
			return err
		}
		pt.proj = append(pt.proj, dirs)
		tabs[b] = sketchTable(q, b, dirs, pt.r)
	}
	d := pt.dims(g.S)
	sk := make([]float32, n*d)
	const block = 1024
	gemm.Parallel(threads, (n+block-1)/block, func(_, t int) {
		for st := t * block; st < min(n, (t+1)*block); st++ {
			ix.sketch(sk[st*d:(st+1)*d], st, tabs, pt.r, g.M, g.K)
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	// k-means on a sample, assignment of all.
	ns := min(n, max(cells*kmeansPerCell, cells), kmeansSample)
	sample := make([]float32, 0, ns*d)
	for i := range ns {
		st := int(int64(i) * int64(n) / int64(ns))
		sample = append(sample, sk[st*d:(st+1)*d]...)
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(cells)))
	cent := make([]float32, cells*d)
	for c, i := range rng.Perm(ns)[:cells] {
		copy(cent[c*d:], sample[i*d:(i+1)*d])
	}
	assign := make([]uint16, ns)
	for it := range kmeansIters {
		if err := nearest(cent, d, cells, sample, assign, threads); err != nil {
			return err
		}
		update(cent, d, cells, sample, assign, rng)
		if progress != nil {
			progress("partitioning", int64(it+1), kmeansIters+1)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	all := make([]uint16, n)
	if err := nearest(cent, d, cells, sk, all, threads); err != nil {
		return err
	}
	if progress != nil {
		progress("partitioning", kmeansIters+1, kmeansIters+1)
	}
	pt.cent = cent
	// Reorder: cells in order, states of a cell in file order.
	pt.offsets = make([]uint64, cells+1)
	for _, a := range all {
		pt.offsets[a+1]++
	}
	for c := range cells {
		pt.offsets[c+1] += pt.offsets[c]
	}
	pos := slices.Clone(pt.offsets[:cells])
	perm := make([]uint32, n)
	for st, a := range all {
		perm[pos[a]] = uint32(st)
		pos[a]++
	}
	nn := g.N()
	codes := make([]byte, len(ix.codes))
	for i, st := range perm {
		copy(codes[i*nn:(i+1)*nn], ix.codes[int(st)*nn:(int(st)+1)*nn])
	}
	ix.codes, ix.perm, ix.part = codes, perm, pt
	return nil
}

// directions returns the r leading principal directions (r × Dim, unit
// and orthogonal) of the reconstructions of ix's slot vectors quantized
// with set b, by orthogonal iteration on their covariance.
func (ix *Index) directions(q *opq.Quantizer, b, r int) ([]float32, error) {
	g, dim := ix.geom, q.Dim()
	n := int(ix.States())
	var vecs [][]float64
	codes := make([]uint16, g.M)
	for i := range pcaSample {
		st := int(int64(i) * int64(n) / pcaSample)
		s := i % g.S
		if q.Slots() > 0 {
			s = b
		}
		for m := range g.M {
			codes[m] = uint16(ix.codes[st*g.N()+s*g.M+m])
		}
		y, err := q.RotatedCentroids(nil, codes, s)
		if err != nil {
			return nil, err
		}
		vecs = append(vecs, y)
	}
	mean := make([]float64, dim)
	for _, y := range vecs {
		for j, v := range y {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(len(vecs))
	}
	cov := make([]float64, dim*dim)
	for _, y := range vecs {
		for j := range y {
			y[j] -= mean[j]
		}
		for a := range dim {
			ya := y[a]
			row := cov[a*dim : (a+1)*dim]
			for c := a; c < dim; c++ {
				row[c] += float64(ya * y[c])
			}
		}
	}
	for a := range dim {
		for c := a + 1; c < dim; c++ {
			cov[c*dim+a] = cov[a*dim+c]
		}
	}
	z := make([]float64, r*dim)
	rng := rand.New(rand.NewPCG(7, uint64(b)))
	for i := range z {
		z[i] = rng.Float64() - 0.5 // not NormFloat64: its math.Log may round differently by machine
	}
	w := make([]float64, r*dim)
	for range pcaIters {
		for i := range r {
			zi := z[i*dim : (i+1)*dim]
			for a := range dim {
				var sum float64
				for c, v := range cov[a*dim : (a+1)*dim] {
					sum += float64(v * zi[c])
				}
				w[i*dim+a] = sum
			}
		}
		// Gram–Schmidt.
		for i := range r {
			wi := w[i*dim : (i+1)*dim]
			for p := range i {
				wp := w[p*dim : (p+1)*dim]
				var dot float64
				for j := range wi {
					dot += float64(wi[j] * wp[j])
				}
				for j := range wi {
					wi[j] -= float64(dot * wp[j])
				}
			}
			var nrm float64
			for _, v := range wi {
				nrm += float64(v * v)
			}
			nrm = math.Sqrt(nrm)
			if nrm == 0 {
				nrm = 1
			}
			for j := range wi {
				wi[j] /= nrm
			}
		}
		z, w = w, z
	}
	out := make([]float32, r*dim)
	for i, v := range z {
		out[i] = float32(v)
	}
	return out, nil
}

// sketchTable returns, for set b, entry (m·K + v)·r + i: the projection of
// centroid v of subspace m on direction i.
func sketchTable(q *opq.Quantizer, b int, dirs []float32, r int) []float32 {
	dim, m, k := q.Dim(), q.M(), q.K()
	dsub := dim / m
	t := make([]float32, m*k*r)
	codes := make([]uint16, m)
	for v := range k {
		for j := range codes {
			codes[j] = uint16(v)
		}
		s := 0
		if q.Slots() > 0 {
			s = b
		}
		y, _ := q.RotatedCentroids(nil, codes, s)
		for sub := range m {
			for i := range r {
				var sum float64
				for j := sub * dsub; j < (sub+1)*dsub; j++ {
					sum += float64(float64(dirs[i*dim+j]) * y[j])
				}
				t[(sub*k+v)*r+i] = float32(sum)
			}
		}
	}
	return t
}

// sketch writes the sketch of stored state st to dst (S·r values).
func (ix *Index) sketch(dst []float32, st int, tabs [][]float32, r, m, k int) {
	g := ix.geom
	c := ix.codes[st*g.N() : (st+1)*g.N()]
	for s := range g.S {
		t := tabs[min(s, len(tabs)-1)]
		z := dst[s*r : (s+1)*r]
		for i := range z {
			z[i] = 0
		}
		for j, v := range c[s*m : (s+1)*m] {
			e := t[(j*k+int(v))*r : (j*k+int(v)+1)*r]
			for i := range z {
				z[i] += e[i]
			}
		}
	}
}

// nearest assigns each of the vectors x (d values each) to its nearest
// centroid, lowest index on ties, with opq's exact kernel: a quantizer of
// one subspace whose codebook is cent and whose rotation is the identity.
func nearest(cent []float32, d, cells int, x []float32, out []uint16, threads int) error {
	rot := make([]float32, d*d)
	for i := range d {
		rot[i*d+i] = 1
	}
	q, err := opq.New(d, 1, max(cells, 2), [][]float32{rot}, [][]float32{padCells(cent, d, cells)})
	if err != nil {
		return fmt.Errorf("search: partition: %w", err)
	}
	q.SetThreads(threads)
	return q.Encode(x, out)
}

// padCells returns cent with a far-away second centroid when there is only
// one (a quantizer needs two).
func padCells(cent []float32, d, cells int) []float32 {
	if cells >= 2 {
		return cent
	}
	out := make([]float32, 2*d)
	copy(out, cent)
	for i := d; i < 2*d; i++ {
		out[i] = float32(math.MaxFloat32 / 4)
	}
	return out
}

// update moves each centroid to the mean of its vectors; an empty cell
// takes a random vector.
func update(cent []float32, d, cells int, x []float32, assign []uint16, rng *rand.Rand) {
	sum := make([]float64, cells*d)
	cnt := make([]int, cells)
	for i, a := range assign {
		cnt[a]++
		s := sum[int(a)*d : (int(a)+1)*d]
		for j, v := range x[i*d : (i+1)*d] {
			s[j] += float64(v)
		}
	}
	n := len(assign)
	for c := range cells {
		if cnt[c] == 0 {
			i := rng.IntN(n)
			copy(cent[c*d:(c+1)*d], x[i*d:(i+1)*d])
			continue
		}
		for j := range d {
			cent[c*d+j] = float32(sum[c*d+j] / float64(cnt[c]))
		}
	}
}
