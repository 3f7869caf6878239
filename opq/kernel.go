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

// rowBlock is the number of left-hand rows kept hot while all panels pass.
const rowBlock = 64

// gemm computes c = bias + a·b for rows of a (m rows of b.k values, stride
// lda) into c (m rows, stride ldc >= 16*b.panels). bias has 16*b.panels
// entries, or is nil for zero.
func gemm(c []float32, ldc int, a []float32, lda, m int, b *packed, bias []float32) {
	if m == 0 {
		return
	}
	if bias == nil {
		bias = zeroBias(b.panels * panelWidth)
	}
	k := b.k
	for r0 := 0; r0 < m; r0 += rowBlock {
		r1 := min(r0+rowBlock, m)
		for pi := 0; pi < b.panels; pi++ {
			bp := b.data[pi*k*panelWidth : (pi+1)*k*panelWidth]
			bb := bias[pi*panelWidth : (pi+1)*panelWidth]
			i := r0
			if useAsm && k > 0 {
				for ; i+4 <= r1; i += 4 {
					kern4x16(&a[i*lda], lda, &bp[0], k, &bb[0], &c[i*ldc+pi*panelWidth], ldc)
				}
			}
			for ; i < r1; i++ {
				rowGeneric(c[i*ldc+pi*panelWidth:i*ldc+pi*panelWidth+panelWidth], a[i*lda:i*lda+k], bp, bb)
			}
		}
	}
}

// rowGeneric is the reference for one row and one panel.
func rowGeneric(c, a, bp, bias []float32) {
	var acc [panelWidth]float32
	copy(acc[:], bias[:panelWidth])
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
			rowGeneric(c[i*ldc+pi*panelWidth:i*ldc+pi*panelWidth+panelWidth], a[i*lda:i*lda+k],
				b.data[pi*k*panelWidth:(pi+1)*k*panelWidth], bias[pi*panelWidth:(pi+1)*panelWidth])
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
