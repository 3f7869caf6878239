//go:build !amd64 || noasm

package rans

// useAsm reports whether the assembly paths are in use.
var useAsm = false

func search(cum []uint16, slot uint32) int { return searchGo(cum, slot) }

func decodeN(d *Decoder, lane int, dst []uint16, cums []uint16, k, stride int) {
	decodeNGo(d, lane, dst, cums, k, stride)
}

func decodeStatic(d *Decoder, lane int, dst []uint16, t *StaticTable) {
	decodeStaticGo(d, lane, dst, t)
}

func decodeFast(d *Decoder, lane int, cum []uint16) (int, bool) { return 0, false }

func encode(x *[MaxLanes]uint32, syms []uint32, lanes []uint8, out []byte, prec uint) int {
	return encodeGo(x, syms, lanes, out, prec)
}
