package rans

import (
	"errors"
	"fmt"
	"math/bits"
)

const (
	// MinPrecision and MaxPrecision bound P, the number of bits of the
	// probability scale 2^P.
	MinPrecision, MaxPrecision = 10, 16

	// DefaultPrecision is 16: world-model tables are very confident, and
	// every one of K symbols must keep a frequency of at least 1, so the most
	// likely symbol gets at most 1-(K-1)/2^P. At P=16 and K=64 that ceiling
	// is 0.99904 (costing 0.0014 bits); at P=12 it is 0.9846 (0.022 bits per
	// symbol, more than the symbol itself is worth). Byte renormalization
	// keeps states in [2^24, 2^32), so state/2^P >= 2^8 and the coding loss
	// stays far below 0.1% even at P=16 (docs/results-rans.md).
	DefaultPrecision = 16

	// MaxLanes is the largest number of interleaved lanes.
	MaxLanes = 32

	// DefaultLanes is 8, a compromise: the flush costs 32 bytes per stream
	// instead of 128 for 32 lanes, at some loss of decode speed on a loaded
	// machine (docs/results-rans.md).
	DefaultLanes = 8

	// MaxSymbols is the largest alphabet.
	MaxSymbols = 1 << 16

	stateLow = 1 << 24 // L: lane states live in [L, 2^32)
)

var (
	// ErrCorrupt reports a stream that is truncated, extended or altered.
	ErrCorrupt = errors.New("rans: corrupt stream")
	// ErrTable reports a frequency table or weight vector that is invalid.
	ErrTable = errors.New("rans: invalid table")
	// ErrParam reports an invalid lane count, precision or lane index.
	ErrParam = errors.New("rans: invalid parameter")
)

func checkPrecision(precision uint) error {
	if precision < MinPrecision || precision > MaxPrecision {
		return fmt.Errorf("%w: precision %d outside [%d, %d]", ErrParam, precision, MinPrecision, MaxPrecision)
	}
	return nil
}

// CheckTable reports whether cum is a valid table at the given precision:
// 1 <= len(cum) <= 2^precision, cum[0] = 0, strictly increasing and
// cum[len-1] < 2^precision, so that every symbol has a frequency of at least
// 1 and the frequencies sum to exactly 2^precision.
func CheckTable(cum []uint16, precision uint) error {
	if err := checkPrecision(precision); err != nil {
		return err
	}
	k := len(cum)
	if k == 0 || k > 1<<precision {
		return fmt.Errorf("%w: %d symbols at precision %d", ErrTable, k, precision)
	}
	if cum[0] != 0 {
		return fmt.Errorf("%w: cum[0] = %d, want 0", ErrTable, cum[0])
	}
	for s := 1; s < k; s++ {
		if cum[s] <= cum[s-1] {
			return fmt.Errorf("%w: cum[%d] = %d not above cum[%d] = %d", ErrTable, s, cum[s], s-1, cum[s-1])
		}
	}
	if uint32(cum[k-1]) >= 1<<precision {
		return fmt.Errorf("%w: cum[%d] = %d leaves no room below 2^%d", ErrTable, k-1, cum[k-1], precision)
	}
	return nil
}

// Symbol returns the start and frequency of symbol v in table cum at the
// given precision. It panics, as slice indexing does, if v is out of range.
func Symbol(cum []uint16, v int, precision uint) (start, freq uint32) {
	return uint32(cum[v]), Freq(cum, v, precision)
}

// Freq returns the frequency of symbol v in table cum at the given
// precision: cum[v+1] − cum[v], or 2^precision − cum[v] for the last
// symbol. It panics, as slice indexing does, if v is out of range.
func Freq(cum []uint16, v int, precision uint) uint32 {
	if v+1 < len(cum) {
		return uint32(cum[v+1]) - uint32(cum[v])
	}
	return 1<<precision - uint32(cum[v])
}

// Quantize turns integer weights w into a table cum (len(cum) = len(w) = K,
// 1 <= K <= 2^precision) whose frequencies sum to exactly 2^precision, each
// at least 1. Frequencies are proportional to the weights, rounded down,
// after reserving 1 for every symbol; the units that rounding leaves over go
// to the symbol of largest weight, the lowest index among equals. All-zero
// weights give the most uniform table, lower indices taking the extra units.
// The algorithm is normative (SPEC.md, "Quantize"); it uses integers only.
func Quantize(w []uint32, precision uint, cum []uint16) error {
	if err := checkPrecision(precision); err != nil {
		return err
	}
	k := len(w)
	if k == 0 || k > 1<<precision || len(cum) != k {
		return fmt.Errorf("%w: Quantize of %d weights into %d entries at precision %d", ErrTable, k, len(cum), precision)
	}
	QuantizeTrusted(w, precision, cum)
	return nil
}

// QuantizeTrusted is Quantize for input the caller has validated (a valid
// precision and 1 <= len(w) = len(cum) <= 2^precision). It returns the
// symbol of largest weight, the lowest index among equals: the modal
// symbol of the table.
func QuantizeTrusted(w []uint32, precision uint, cum []uint16) int {
	// Step 1: total weight, and the first index of the largest weight.
	var total uint64
	var top uint32
	arg := 0
	for s, v := range w {
		total += uint64(v)
		if v > top {
			top, arg = v, s
		}
	}
	// Step 4: the leftover 2^P - c goes to symbol arg; every later start
	// moves up by it.
	if d := quantizeSpread(w, total, precision, cum); d != 0 {
		addFrom(cum[:len(w)], arg+1, d)
	}
	return arg
}

// QuantizeProducts is Quantize of the weights w[v] = (g1[v]·g2[v]) >> 8
// (len(g2) >= len(g1) = len(cum) = len(w) >= 1, precision valid): the
// geometric mix of two tables of powers. It writes the weights to w.
func QuantizeProducts(g1, g2 []uint16, precision uint, cum []uint16, w []uint32) {
	quantizeProducts(g1, g2[:len(g1)], precision, cum, w[:len(g1)])
}

// quantizeProductsGo is QuantizeProducts through the steps' functions.
func quantizeProductsGo(g1, g2 []uint16, precision uint, cum []uint16, w []uint32) {
	total, top := products(g1, g2, w)
	quantizeMax(w, total, top, precision, cum)
}

// productsGo sets w[v] = (g1[v]·g2[v]) >> 8 and returns their sum and
// largest value.
func productsGo(g1, g2 []uint16, w []uint32) (total uint64, top uint32) {
	g2, w = g2[:len(g1)], w[:len(g1)]
	for v, a := range g1 {
		x := uint32(a) * uint32(g2[v]) >> 8
		w[v] = x
		total += uint64(x)
		top = max(top, x)
	}
	return total, top
}

// QuantizeMax is Quantize for trusted input whose total weight and largest
// weight top the caller has computed: the first index of top, where the
// leftover goes (step 4), is looked for only when there is one.
func QuantizeMax(w []uint32, total uint64, top uint32, precision uint, cum []uint16) {
	quantizeMax(w, total, top, precision, cum)
}

// quantizeMaxGo is QuantizeMax through the steps' functions, each of which
// may take a kernel.
func quantizeMaxGo(w []uint32, total uint64, top uint32, precision uint, cum []uint16) {
	if d := quantizeSpread(w, total, precision, cum); d != 0 {
		addFrom(cum[:len(w)], firstOf(w, top)+1, d)
	}
}

// addFromGo adds d to cum[from:].
func addFromGo(cum []uint16, from int, d uint16) {
	for s := from; s < len(cum); s++ {
		cum[s] += d
	}
}

// firstOfGo returns the first index of w holding x, which must be one of w.
func firstOfGo(w []uint32, x uint32) int {
	s := 0
	for w[s] != x {
		s++
	}
	return s
}

// quantizeGo is quantizeSteps in Go: Quantize's step 3 for weights below
// 2^32, where symbol s takes 1 + floor(w[s]·f / 2^32); cum[s] is the sum
// over the symbols before s, and the sum over all is returned. The
// assembly kernel takes 64 weights and f below 2^32.
func quantizeGo(w []uint32, f uint64, cum []uint16) uint32 {
	cum = cum[:len(w)]
	c := uint32(0)
	for s, v := range w {
		cum[s] = uint16(c)
		c += 1 + uint32((uint64(v)*f)>>32)
	}
	return c
}

// quantizeSpread is Quantize's steps 2 and 3 (or the uniform table for a
// total of 0): it writes the starts before the leftover is placed and
// returns the leftover, 2^P less the frequencies given.
func quantizeSpread(w []uint32, total uint64, precision uint, cum []uint16) uint16 {
	k := len(w)
	cum = cum[:k]
	m := uint32(1) << precision
	if total == 0 {
		// Uniform: q = 2^P / K each, the first 2^P mod K symbols one more.
		q, r := m/uint32(k), int(m%uint32(k))
		c := uint32(0)
		for s := range cum {
			cum[s] = uint16(c)
			c += q
			if s < r {
				c++
			}
		}
		return 0
	}
	// Step 2: scale the weights below 2^32 so the fixed-point factor keeps at
	// least 16 significant bits.
	shift := uint(0)
	if n := bits.Len64(total); n > 32 {
		shift = uint(n - 32)
		total = 0
		for _, v := range w {
			total += uint64(v >> shift)
		}
	}
	// Step 3: f = floor(R * 2^32 / total), R = 2^P - K, and each symbol gets
	// 1 + floor(w * f / 2^32).
	f := ((uint64(m) - uint64(k)) << 32) / total
	if shift == 0 {
		return uint16(m - quantizeSteps(w, f, cum))
	}
	c := uint32(0)
	for s, v := range w {
		cum[s] = uint16(c)
		c += 1 + uint32((uint64(v>>shift)*f)>>32)
	}
	return uint16(m - c)
}

// RowWeights sets w[v] = alpha·f(v) + beta (modulo 2^64) for every symbol v
// of cum, a cumulative table of precision 16, f(v) being its frequency
// (len(w) >= len(cum) >= 1): the weights of a fallback row scaled and
// lifted, as a model mixing it with other predictions forms them.
func RowWeights(cum []uint16, alpha, beta uint64, w []uint64) {
	rowWeights(cum, alpha, beta, w[:len(cum)])
}

// rowWeightsGo is RowWeights in Go.
func rowWeightsGo(cum []uint16, alpha, beta uint64, w []uint64) {
	w = w[:len(cum)]
	last := len(cum) - 1
	for v := range last {
		w[v] = alpha*uint64(cum[v+1]-cum[v]) + beta
	}
	w[last] = alpha*uint64(1<<16-uint32(cum[last])) + beta
}

// Narrow sets wq[v] = uint32(w[v] >> sh) (len(wq) >= len(w)) and returns
// the sum and the largest of them: 64-bit weights brought to the 32 bits
// Quantize takes.
func Narrow(w []uint64, sh uint, wq []uint32) (total uint64, top uint32) {
	return narrow(w, sh, wq[:len(w)])
}

// narrowGo is Narrow in Go.
func narrowGo(w []uint64, sh uint, wq []uint32) (total uint64, top uint32) {
	wq = wq[:len(w)]
	for v, x := range w {
		y := uint32(x >> sh)
		wq[v] = y
		total += uint64(y)
		top = max(top, y)
	}
	return total, top
}

// Mode returns the symbol of highest frequency of table cum (len(cum) >= 1)
// at the given precision, the lowest among equals, and its frequency.
func Mode(cum []uint16, precision uint) (v int, f uint32) {
	return mode(cum, uint32(1)<<precision)
}

// Dots returns Σ_v f_v·a[v] and Σ_v f_v·b[v] modulo 2^32, f_v the
// frequencies of table cum at the given precision and a, b rows of
// len(cum) values: with frequencies summing to 2^precision ≤ 2^16 and
// values below 2^16 the sums are exact. They are the expected values of a
// and b under the table, times 2^precision.
func Dots(cum []uint16, precision uint, a, b []uint16) (uint32, uint32) {
	return dots(cum, uint32(1)<<precision, a[:len(cum)], b[:len(cum)])
}

// dotsGo is Dots in Go, the frequencies ending at top = 2^P.
func dotsGo(cum []uint16, top uint32, a, b []uint16) (ea, eb uint32) {
	k := len(cum)
	a, b = a[:k], b[:k]
	for v := 0; v+1 < k; v++ {
		f := uint32(cum[v+1]) - uint32(cum[v])
		ea += f * uint32(a[v])
		eb += f * uint32(b[v])
	}
	f := top - uint32(cum[k-1])
	return ea + f*uint32(a[k-1]), eb + f*uint32(b[k-1])
}

// modeGo is Mode in Go, the frequencies ending at top = 2^P.
func modeGo(cum []uint16, top uint32) (v int, f uint32) {
	prev := uint32(cum[0])
	for s := 1; s < len(cum); s++ {
		cur := uint32(cum[s])
		if d := cur - prev; d > f {
			v, f = s-1, d
		}
		prev = cur
	}
	if d := top - prev; d > f {
		v, f = len(cum)-1, d
	}
	return v, f
}
