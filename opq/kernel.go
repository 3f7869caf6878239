package opq

// The one numeric kernel of this package: a float32 matrix product whose
// every output element is accumulated in a fixed order,
//
//	c[i][j] = (((bias[j] + a[i][0]*b[0][j]) + a[i][1]*b[1][j]) + ...)
//
// with each product rounded to float32 before it is added (no fused
// multiply-add). The SIMD kernel computes one output column per vector lane
// with the same sequence of roundings, so it returns the same bits as the
// pure-Go reference gemmGeneric; a test cross-checks them. This is what makes
// Encode and Decode independent of the batch size, the thread count and the
// presence of the assembly.

// panelWidth is the number of output columns a packed panel holds.
const panelWidth = 16

// packed is a right-hand matrix b (k x n) stored as ceil(n/16) panels of
// k rows by 16 columns, zero-padded on the right, so the kernel reads it
// contiguously.
type packed struct {
	k, n   int
	panels int
	data   []float32 // panels * k * 16
}

// padTo16 rounds n up to a multiple of the panel width.
func padTo16(n int) int { return (n + panelWidth - 1) / panelWidth * panelWidth }

// packRows packs b, given row-major as k rows of n with stride ldb.
func packRows(b []float32, k, n, ldb int) *packed {
	p := &packed{k: k, n: n, panels: padTo16(n) / panelWidth}
	p.data = make([]float32, p.panels*k*panelWidth)
	for pi := 0; pi < p.panels; pi++ {
		dst := p.data[pi*k*panelWidth:]
		for r := 0; r < k; r++ {
			for c := 0; c < panelWidth; c++ {
				j := pi*panelWidth + c
				if j < n {
					dst[r*panelWidth+c] = b[r*ldb+j]
				}
			}
		}
	}
	return p
}

// packCols packs the transpose of a, given row-major as n rows of k with
// stride lda: the packed matrix is aᵀ (k x n).
func packCols(a []float32, n, k, lda int) *packed {
	p := &packed{k: k, n: n, panels: padTo16(n) / panelWidth}
	p.data = make([]float32, p.panels*k*panelWidth)
	for j := 0; j < n; j++ {
		pi, c := j/panelWidth, j%panelWidth
		dst := p.data[pi*k*panelWidth:]
		for r := 0; r < k; r++ {
			dst[r*panelWidth+c] = a[j*lda+r]
		}
	}
	return p
}

// Blocking: rowBlock left-hand rows are kept hot in L2 while the panels
// pass, and the inner dimension is cut into kBlock-long pieces so that a
// piece of a panel (16 KiB) and of eight rows (8 KiB) fit in L1 together.
// Splitting the inner dimension keeps the order of additions: each piece
// continues the sums left in c by the previous one.
const (
	rowBlock = 64
	kBlock   = 256
)

// gemm computes c = bias + a·b for rows of a (m rows of b.k values, stride
// lda) into c (m rows, stride ldc >= 16*b.panels). bias has 16*b.panels
// entries, or is nil for zero.
func gemm(c []float32, ldc int, a []float32, lda, m int, b *packed, bias []float32) {
	if m == 0 {
		return
	}
	width := b.panels * panelWidth
	for i := 0; i < m; i++ {
		if bias == nil {
			clear(c[i*ldc : i*ldc+width])
		} else {
			copy(c[i*ldc:i*ldc+width], bias[:width])
		}
	}
	k := b.k
	for r0 := 0; r0 < m; r0 += rowBlock {
		r1 := min(r0+rowBlock, m)
		for k0 := 0; k0 < k; k0 += kBlock {
			kc := min(kBlock, k-k0)
			for pi := 0; pi < b.panels; pi++ {
				bp := b.data[(pi*k+k0)*panelWidth : (pi*k+k0+kc)*panelWidth]
				col := pi * panelWidth
				i := r0
				if useAVX512 {
					for ; i+8 <= r1; i += 8 {
						kern8x16z(&a[i*lda+k0], lda, &bp[0], kc, &c[i*ldc+col], ldc)
					}
				}
				if useAsm {
					for ; i+4 <= r1; i += 4 {
						kern4x16(&a[i*lda+k0], lda, &bp[0], kc, &c[i*ldc+col], ldc)
					}
				}
				for ; i < r1; i++ {
					rowGeneric(c[i*ldc+col:i*ldc+col+panelWidth], a[i*lda+k0:i*lda+k0+kc], bp)
				}
			}
		}
	}
}

// rowGeneric is the reference for one row and one panel: c += a·bp.
func rowGeneric(c, a, bp []float32) {
	var acc [panelWidth]float32
	copy(acc[:], c[:panelWidth])
	for r, av := range a {
		row := bp[r*panelWidth : r*panelWidth+panelWidth]
		for j := range acc {
			acc[j] += float32(av * row[j])
		}
	}
	copy(c, acc[:])
}

// gemmGeneric is gemm without the assembly, for tests and noasm builds.
func gemmGeneric(c []float32, ldc int, a []float32, lda, m int, b *packed, bias []float32) {
	if bias == nil {
		bias = zeroBias(b.panels * panelWidth)
	}
	k := b.k
	for i := 0; i < m; i++ {
		for pi := 0; pi < b.panels; pi++ {
			ci := c[i*ldc+pi*panelWidth : i*ldc+pi*panelWidth+panelWidth]
			copy(ci, bias[pi*panelWidth:])
			rowGeneric(ci, a[i*lda:i*lda+k], b.data[pi*k*panelWidth:(pi+1)*k*panelWidth])
		}
	}
}

var zeros = make([]float32, 4096)

func zeroBias(n int) []float32 {
	if n <= len(zeros) {
		return zeros[:n]
	}
	return make([]float32, n)
}
