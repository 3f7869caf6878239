package rans

import (
	"math"
	"math/rand/v2"
)

// Test and benchmark fixtures. Floating point appears here only to measure.

// confidentWeights returns K weights with one symbol carrying about 1-eps of
// the mass and the rest spread geometrically, as the world model produces.
func confidentWeights(r *rand.Rand, k int, eps float64, w []uint32) []uint32 {
	w = w[:0]
	top := r.IntN(k)
	for s := 0; s < k; s++ {
		w = append(w, uint32(eps*float64(1<<24)*math.Pow(0.7, float64(r.IntN(k)))+float64(r.IntN(3))))
	}
	w[top] = uint32((1 - eps) * float64(1<<24))
	return w
}

// randomTables returns n quantized tables of k symbols, flattened, mixing
// confident, skewed and near-uniform shapes.
func randomTables(r *rand.Rand, n, k int, prec uint) []uint16 {
	cums := make([]uint16, n*k)
	w := make([]uint32, 0, k)
	for i := 0; i < n; i++ {
		switch i % 4 {
		case 0, 1:
			w = confidentWeights(r, k, math.Pow(10, -1-3*r.Float64()), w)
		case 2:
			w = w[:0]
			for s := 0; s < k; s++ {
				w = append(w, uint32(r.ExpFloat64()*r.ExpFloat64()*1000))
			}
		default:
			w = w[:0]
			for s := 0; s < k; s++ {
				w = append(w, r.Uint32()>>r.IntN(32))
			}
		}
		if err := Quantize(w, prec, cums[i*k:(i+1)*k]); err != nil {
			panic(err)
		}
	}
	return cums
}

// sample draws a symbol from table cum by its own quantized distribution.
func sample(r *rand.Rand, cum []uint16, prec uint) uint16 {
	return uint16(searchGo(cum, r.Uint32N(1<<prec)))
}

// idealBits is the code length of symbol v under cum: P - log2(freq).
func idealBits(cum []uint16, v int, prec uint) float64 {
	_, f := Symbol(cum, v, prec)
	return float64(prec) - math.Log2(float64(f))
}

// putSymbol buffers symbol v of table cum on a lane.
func putSymbol(e *Encoder, lane int, cum []uint16, v int) {
	start, freq := Symbol(cum, v, e.prec)
	e.Put(lane, start, freq)
}

// putN buffers len(syms) symbols, symbol i on lane (lane+i) mod Lanes()
// with table cums[i*k:(i+1)*k], or with the one table cums if len(cums) == k.
func putN(e *Encoder, lane int, syms []uint16, cums []uint16, k int) {
	stride := k
	if len(cums) == k {
		stride = 0
	}
	for i, v := range syms {
		putSymbol(e, lane, cums[i*stride:i*stride+k], int(v))
		lane = (lane + 1) % e.lanes
	}
}

// decodeN is putN's counterpart: it decodes len(dst) symbols with Decode
// and returns Err().
func decodeN(d *Decoder, lane int, dst []uint16, cums []uint16, k int) error {
	stride := k
	if len(cums) == k {
		stride = 0
	}
	for i := range dst {
		dst[i] = uint16(d.Decode(lane, cums[i*stride:i*stride+k]))
		if d.err != nil {
			break
		}
		lane = (lane + 1) % d.lanes
	}
	return d.err
}

// randomTable returns a quantized table of k symbols from seeded weights.
func randomTable(r *rand.Rand, k int, prec uint) []uint16 {
	w := make([]uint32, k)
	for s := range w {
		switch r.IntN(3) {
		case 0:
			w[s] = r.Uint32() >> r.IntN(32)
		case 1:
			w[s] = uint32(r.IntN(4))
		default:
			w[s] = 1 << 20
		}
	}
	cum := make([]uint16, k)
	if err := Quantize(w, prec, cum); err != nil {
		panic(err)
	}
	return cum
}

// sameState reports whether two decoders agree on lane states, position
// and error status.
func sameState(a, b *Decoder) bool {
	return a.x == b.x && a.pos == b.pos && (a.err == nil) == (b.err == nil)
}
