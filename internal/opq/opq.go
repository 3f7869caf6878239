package opq

import (
	"errors"
	"fmt"
	"math"
	"runtime"

	"github.com/wmzip/wmzip/internal/gemm"
)

// Limits on the geometry, checked by New, UnmarshalQuantizer and training.
const (
	MaxDim   = 1 << 16 // largest vector dimension
	MaxK     = 1 << 16 // largest number of centroids per subspace (codes fit in uint16)
	MaxSlots = 1 << 12 // largest number of per-slot codebook sets
)

// Defaults used for zero fields of Config.
const (
	DefaultDim      = 512
	DefaultM        = 32
	DefaultK        = 64
	DefaultIters    = 25    // Lloyd iterations of the final codebook training
	DefaultOPQIters = 20    // alternating rotation/codebook iterations
	DefaultSample   = 65536 // training vectors drawn from the input (per slot when PerSlot)
)

// Config sets the geometry and training of a quantizer (train.Quantizer).
// Zero fields take the defaults above.
type Config struct {
	Dim int // vector dimension (default 512)
	M   int // subspaces; must divide Dim (default 32)
	K   int // centroids per subspace, 2..65536 (default 64)

	// PerSlot trains one rotation and codebook set per slot; vectors are then
	// laid out [n][Slots][Dim]. Otherwise one set is shared by all vectors.
	PerSlot bool
	Slots   int

	Iters    int // Lloyd iterations of the final k-means (default 25)
	OPQIters int // rotation updates after the PCA start (default 20; negative: identity rotation, plain PQ)

	// Sample is the number of training vectors used (per slot when PerSlot);
	// with n > Sample vectors, vector i*n/Sample is taken for i < Sample.
	// Default 65536; negative means all.
	Sample int

	Seed    uint64 // seeds k-means++ initialization
	Threads int    // worker goroutines (default GOMAXPROCS); results do not depend on it

	// Progress, if set, is called with a stage name ("pca", "opq",
	// "kmeans"), the work done and the total. Calls are serialized.
	Progress func(stage string, done, total int)
}

// ErrCorrupt is returned (wrapped) by UnmarshalQuantizer for bytes that are
// not a valid quantizer.
var ErrCorrupt = errors.New("opq: corrupt quantizer")

// book is one rotation with its codebooks.
type book struct {
	rot  []float32 // Dim x Dim, row-major; the rotated vector is y = rot·x; nil: identity (plain PQ)
	cent []float32 // M x K x dsub

	enc    *gemm.Packed   // rotᵀ, for y = x·rotᵀ; nil without rotation
	dec    *gemm.Packed   // rot, for x = y·rot; nil without rotation
	cb     []*gemm.Packed // per subspace: -2·centroidsᵀ (dsub x K)
	cnorm2 [][]float32    // per subspace: squared centroid norms, padded to 16
}

// Quantizer is a trained OPQ quantizer. Its methods may be called
// concurrently, except SetThreads and SetProgress.
type Quantizer struct {
	dim, m, k, dsub int
	books           []book // 1 when shared, else one per slot

	threads  int
	progress func(stage string, done, total int)
}

// Dim returns the vector dimension.
func (q *Quantizer) Dim() int { return q.dim }

// M returns the number of subspaces, i.e. codes per vector.
func (q *Quantizer) M() int { return q.m }

// K returns the number of centroids per subspace; codes are below K.
func (q *Quantizer) K() int { return q.k }

// Rotated reports whether the quantizer rotates vectors before splitting
// them into subspaces (OPQ); without, it is a plain product quantizer.
func (q *Quantizer) Rotated() bool { return q.books[0].rot != nil }

// Slots returns the number of per-slot codebook sets, or 0 for a quantizer
// shared by all slots.
func (q *Quantizer) Slots() int {
	if len(q.books) == 1 {
		return 0
	}
	return len(q.books)
}

// SetThreads sets the goroutines used by Encode and Decode (0: GOMAXPROCS).
// The results do not depend on it.
func (q *Quantizer) SetThreads(n int) { q.threads = n }

// SetProgress sets a callback for Encode and Decode progress (stages
// "encode" and "decode"); nil, the default, reports nothing.
func (q *Quantizer) SetProgress(f func(stage string, done, total int)) { q.progress = f }

// CheckGeometry checks a quantizer's geometry against the limits: Dim
// values per vector in 1..MaxDim, M subspaces dividing Dim, K centroids in
// 2..MaxK.
func CheckGeometry(dim, m, k int) error {
	switch {
	case dim < 1 || dim > MaxDim:
		return fmt.Errorf("opq: dimension %d out of range 1..%d", dim, MaxDim)
	case m < 1 || m > dim || dim%m != 0:
		return fmt.Errorf("opq: %d subspaces do not divide dimension %d", m, dim)
	case k < 2 || k > MaxK:
		return fmt.Errorf("opq: K=%d out of range 2..%d", k, MaxK)
	}
	return nil
}

// New returns the quantizer of the given rotations and codebooks: one
// rotation and codebook set shared by all slot vectors, or one per slot
// (at most MaxSlots). rot[i] is Dim×Dim, row-major (the rotated vector is
// y = rot[i]·x), or nil for none (a plain product quantizer: the vector's
// coordinates are split into subspaces as they are); cent[i] holds M×K
// centroids of Dim/M values, subspace by subspace. Rotations are all given
// or all nil. Every value must be finite; the slices are kept, not copied.
// This is how a trainer (package train) or a quantizer trained elsewhere
// becomes a Quantizer.
func New(dim, m, k int, rot, cent [][]float32) (*Quantizer, error) {
	if err := CheckGeometry(dim, m, k); err != nil {
		return nil, err
	}
	if len(rot) < 1 || len(rot) > MaxSlots || len(cent) != len(rot) {
		return nil, fmt.Errorf("opq: %d rotations and %d codebook sets, want as many, 1 to %d", len(rot), len(cent), MaxSlots)
	}
	books := make([]book, len(rot))
	for i := range books {
		if (rot[i] == nil) != (rot[0] == nil) {
			return nil, fmt.Errorf("opq: set %d: rotations are given for some sets and not others", i)
		}
		if (rot[i] != nil && len(rot[i]) != dim*dim) || len(cent[i]) != k*dim {
			return nil, fmt.Errorf("opq: set %d: %d rotation and %d centroid values, want %d and %d", i, len(rot[i]), len(cent[i]), dim*dim, k*dim)
		}
		for _, v := range [][]float32{rot[i], cent[i]} {
			for _, f := range v {
				if f-f != 0 {
					return nil, fmt.Errorf("opq: set %d holds a value that is not finite", i)
				}
			}
		}
		books[i] = book{rot: rot[i], cent: cent[i]}
	}
	return newQuantizer(dim, m, k, books), nil
}

// newQuantizer builds the derived tables of each book.
func newQuantizer(dim, m, k int, books []book) *Quantizer {
	q := &Quantizer{dim: dim, m: m, k: k, dsub: dim / m, books: books}
	for i := range q.books {
		q.books[i].prepare(dim, m, k)
	}
	return q
}

func (b *book) prepare(dim, m, k int) {
	dsub := dim / m
	if b.rot != nil {
		b.enc = gemm.PackCols(b.rot, dim, dim, dim)
		b.dec = gemm.PackRows(b.rot, dim, dim, dim)
	}
	b.cb = make([]*gemm.Packed, m)
	b.cnorm2 = make([][]float32, m)
	scaled := make([]float32, k*dsub)
	for s := 0; s < m; s++ {
		c := b.cent[s*k*dsub : (s+1)*k*dsub]
		norms := make([]float32, gemm.PadTo16(k))
		for j := 0; j < k; j++ {
			var n2 float32
			for t := 0; t < dsub; t++ {
				v := c[j*dsub+t]
				n2 += float32(v * v)
				scaled[j*dsub+t] = -2 * v
			}
			norms[j] = n2
		}
		for j := k; j < len(norms); j++ {
			norms[j] = float32(math.Inf(1)) // padding columns never win
		}
		b.cb[s] = gemm.PackCols(scaled, k, dsub, dsub)
		b.cnorm2[s] = norms
	}
}

// batch is the number of vectors one encode or decode task handles.
const batch = 256

// scratch holds one worker's buffers.
type scratch struct {
	y    []float32 // batch x dimPad
	out  []float32 // batch x dimPad
	dots []float32 // batch x kPad
}

func (q *Quantizer) newScratch() *scratch {
	return &scratch{
		y:    make([]float32, batch*gemm.PadTo16(q.dim)),
		out:  make([]float32, batch*gemm.PadTo16(q.dim)),
		dots: make([]float32, batch*gemm.PadTo16(q.k)),
	}
}

func (q *Quantizer) layout(nfloats int, what string) (rows, stride int, err error) {
	stride = q.dim * len(q.books)
	if nfloats%stride != 0 {
		if len(q.books) > 1 {
			return 0, 0, fmt.Errorf("opq: %s: %d values are not a whole number of %d slots x %d", what, nfloats, len(q.books), q.dim)
		}
		return 0, 0, fmt.Errorf("opq: %s: %d values are not a whole number of %d-vectors", what, nfloats, q.dim)
	}
	return nfloats / stride, stride, nil
}

// Encode quantizes vectors, n rows of Dim values ([n][Slots][Dim] for a
// per-slot quantizer), into codes, n x M values ([n][Slots][M]): each rotated
// sub-vector gets the index of its nearest centroid, the lowest index on a
// tie. Work is spread over SetThreads goroutines in batches of 256 vectors;
// the codes do not depend on the thread count, the batching, or whether the
// SIMD kernel is used. Vectors holding NaN get valid but unspecified codes.
func (q *Quantizer) Encode(vectors []float32, codes []uint16) error {
	return q.EncodeRotated(vectors, codes, nil)
}

// EncodeRotated is Encode that also writes the rotated vectors (as Rotate
// gives them, laid out as vectors) to rotated, unless it is nil.
func (q *Quantizer) EncodeRotated(vectors []float32, codes []uint16, rotated []float32) error {
	n, stride, err := q.layout(len(vectors), "encode")
	if err != nil {
		return err
	}
	nb := len(q.books)
	if len(codes) != n*nb*q.m {
		return fmt.Errorf("opq: encode: %d codes for %d vectors of %d subspaces", len(codes), n*nb, q.m)
	}
	if rotated != nil && len(rotated) != len(vectors) {
		return fmt.Errorf("opq: encode: %d rotated values for %d", len(rotated), len(vectors))
	}
	tasksPerBook := (n + batch - 1) / batch
	threads := q.threadCount()
	scr := make([]*scratch, threads)
	prog := gemm.NewProgress(q.progress, "encode", n*nb)
	gemm.Parallel(threads, tasksPerBook*nb, func(w, t int) {
		if scr[w] == nil {
			scr[w] = q.newScratch()
		}
		bi, r0 := t/tasksPerBook, t%tasksPerBook*batch
		rows := min(batch, n-r0)
		s := scr[w]
		q.books[bi].encode(q, vectors[r0*stride+bi*q.dim:], stride, rows, codes[(r0*nb+bi)*q.m:], nb*q.m, s)
		if rotated != nil {
			dimPad := gemm.PadTo16(q.dim)
			for i := range rows {
				copy(rotated[(r0+i)*stride+bi*q.dim:(r0+i)*stride+(bi+1)*q.dim], s.y[i*dimPad:i*dimPad+q.dim])
			}
		}
		prog.Add(rows)
	})
	return nil
}

func (q *Quantizer) threadCount() int {
	if q.threads > 0 {
		return q.threads
	}
	return runtime.GOMAXPROCS(0)
}

// encode quantizes rows vectors of x (stride lda) into codes (stride ldc).
func (b *book) encode(q *Quantizer, x []float32, lda, rows int, codes []uint16, ldc int, s *scratch) {
	dimPad, kPad := gemm.PadTo16(q.dim), gemm.PadTo16(q.k)
	if b.enc != nil {
		gemm.Gemm(s.y, dimPad, x, lda, rows, b.enc, nil)
	} else {
		for i := range rows {
			copy(s.y[i*dimPad:i*dimPad+q.dim], x[i*lda:i*lda+q.dim])
		}
	}
	for m := 0; m < q.m; m++ {
		gemm.Gemm(s.dots, kPad, s.y[m*q.dsub:], dimPad, rows, b.cb[m], b.cnorm2[m])
		for i := 0; i < rows; i++ {
			codes[i*ldc+m] = uint16(gemm.Argmin(s.dots[i*kPad : i*kPad+q.k]))
		}
	}
}

// Decode maps codes, n x M values ([n][Slots][M] for a per-slot quantizer),
// back to vectors, n x Dim values ([n][Slots][Dim]): the concatenated
// centroids rotated back. The result is reproducible on one machine.
func (q *Quantizer) Decode(codes []uint16, vectors []float32) error {
	nb := len(q.books)
	if len(codes)%(nb*q.m) != 0 {
		return fmt.Errorf("opq: decode: %d codes are not a whole number of %d x %d", len(codes), nb, q.m)
	}
	n := len(codes) / (nb * q.m)
	if len(vectors) != n*nb*q.dim {
		return fmt.Errorf("opq: decode: %d values for %d vectors of %d", len(vectors), n*nb, q.dim)
	}
	for i, c := range codes {
		if int(c) >= q.k {
			return fmt.Errorf("opq: decode: code %d at %d is not below K=%d", c, i, q.k)
		}
	}
	tasksPerBook := (n + batch - 1) / batch
	threads := q.threadCount()
	scr := make([]*scratch, threads)
	prog := gemm.NewProgress(q.progress, "decode", n*nb)
	gemm.Parallel(threads, tasksPerBook*nb, func(w, t int) {
		if scr[w] == nil {
			scr[w] = q.newScratch()
		}
		bi, r0 := t/tasksPerBook, t%tasksPerBook*batch
		rows := min(batch, n-r0)
		q.books[bi].decode(q, codes[(r0*nb+bi)*q.m:], nb*q.m, rows, vectors[(r0*nb+bi)*q.dim:], nb*q.dim, scr[w])
		prog.Add(rows)
	})
	return nil
}

func (b *book) decode(q *Quantizer, codes []uint16, ldc, rows int, x []float32, ldx int, s *scratch) {
	dimPad, dsub := gemm.PadTo16(q.dim), q.dsub
	for i := 0; i < rows; i++ {
		y := s.y[i*dimPad : i*dimPad+q.dim]
		for m := 0; m < q.m; m++ {
			c := int(codes[i*ldc+m])
			copy(y[m*dsub:(m+1)*dsub], b.cent[(m*q.k+c)*dsub:])
		}
	}
	out := s.y
	if b.dec != nil {
		gemm.Gemm(s.out, dimPad, s.y, dimPad, rows, b.dec, nil)
		out = s.out
	}
	for i := 0; i < rows; i++ {
		copy(x[i*ldx:i*ldx+q.dim], out[i*dimPad:])
	}
}
