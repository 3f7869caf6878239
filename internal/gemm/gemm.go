// Package gemm is the quantizer's one numeric kernel, shared by encoding
// (package opq) and training (package train): a float32 matrix product
// whose every output element is accumulated in a fixed order,
//
//	c[i][j] = (((bias[j] + a[i][0]*b[0][j]) + a[i][1]*b[1][j]) + ...)
//
// with each product rounded to float32 before it is added (no fused
// multiply-add). The SIMD kernel computes one output column per vector lane
// with the same sequence of roundings, so it returns the same bits as the
// pure-Go reference gemmGeneric; a test cross-checks them. This is what makes
// opq's Encode and Decode independent of the batch size, the thread count
// and the presence of the assembly.
package gemm

import "github.com/viterin/vek/vek32"

// panelWidth is the number of output columns a Packed panel holds.
const panelWidth = 16

// Packed is a right-hand matrix b (k x n) stored as ceil(n/16) panels of
// k rows by 16 columns, zero-padded on the right, so the kernel reads it
// contiguously.
type Packed struct {
	k, n   int
	panels int
	data   []float32 // panels * k * 16
}

// PadTo16 rounds n up to a multiple of the panel width.
func PadTo16(n int) int { return (n + panelWidth - 1) / panelWidth * panelWidth }

// PackRows packs b, given row-major as k rows of n with stride ldb.
func PackRows(b []float32, k, n, ldb int) *Packed {
	p := &Packed{k: k, n: n, panels: PadTo16(n) / panelWidth}
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

// PackCols packs the transpose of a, given row-major as n rows of k with
// stride lda: the Packed matrix is aᵀ (k x n).
func PackCols(a []float32, n, k, lda int) *Packed {
	p := &Packed{k: k, n: n, panels: PadTo16(n) / panelWidth}
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
func Gemm(c []float32, ldc int, a []float32, lda, m int, b *Packed, bias []float32) {
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
func gemmGeneric(c []float32, ldc int, a []float32, lda, m int, b *Packed, bias []float32) {
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

// Argmin returns the index of the first smallest value (0 when the values
// are NaN, which only non-finite input produces).
func Argmin(x []float32) int {
	return max(vek32.ArgMin(x), 0)
}

// argminGeneric is Argmin without SIMD, for tests.
func argminGeneric(x []float32) int {
	best, bv := 0, x[0]
	for i, v := range x[1:] {
		if v < bv {
			best, bv = i+1, v
		}
	}
	return best
}
