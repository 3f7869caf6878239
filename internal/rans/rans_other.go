//go:build !amd64 || noasm

package rans

// useAsm reports whether the assembly paths are in use.
var useAsm = false

func search(cum []uint16, slot uint32) int { return searchGo(cum, slot) }

// step64 is not called: useAsm is false.
func step64(x *uint32, cum []uint16, src []byte, pos int, prec uint) (int, int) { return 0, -1 }

func encode(x *[MaxLanes]uint32, syms []uint32, lanes []uint8, out []byte, prec uint) int {
	return encodeGo(x, syms, lanes, out, prec)
}

func products(g1, g2 []uint16, w []uint32) (uint64, uint32) { return productsGo(g1, g2, w) }

func quantizeProducts(g1, g2 []uint16, precision uint, cum []uint16, w []uint32) {
	quantizeProductsGo(g1, g2, precision, cum, w)
}

func addFrom(cum []uint16, from int, d uint16) { addFromGo(cum, from, d) }

func quantizeSteps(w []uint32, f uint64, cum []uint16) uint32 { return quantizeGo(w, f, cum) }

func quantizeMax(w []uint32, total uint64, top uint32, precision uint, cum []uint16) {
	quantizeMaxGo(w, total, top, precision, cum)
}

func firstOf(w []uint32, x uint32) int { return firstOfGo(w, x) }

func rowWeights(cum []uint16, alpha, beta uint64, w []uint64) { rowWeightsGo(cum, alpha, beta, w) }

func narrow(w []uint64, sh uint, wq []uint32) (uint64, uint32) { return narrowGo(w, sh, wq) }

func mode(cum []uint16, top uint32) (int, uint32) { return modeGo(cum, top) }

func dots(cum []uint16, top uint32, a, b []uint16) (uint32, uint32) { return dotsGo(cum, top, a, b) }
