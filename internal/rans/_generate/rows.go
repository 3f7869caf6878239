package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// genRowWeights64 writes rowWeights64AVX2: w[v] = alpha·f(v) + beta modulo
// 2^64 for the 64 frequencies f(v) of a cumulative table of precision 16,
// four values a round. The 64-bit product is formed from two 32-bit ones:
// alpha·f = lo(alpha)·f + (hi(alpha)·f << 32), f being below 2^17.
func genRowWeights64() {
	TEXT("rowWeights64AVX2", NOSPLIT, "func(cum *uint16, alpha uint64, beta uint64, w *uint64)")
	Pragma("noescape")
	Doc("rowWeights64AVX2 is rowWeightsGo for a 64-entry table.")
	cum := Load(Param("cum"), GP64())
	a := Load(Param("alpha"), GP64())
	b := Load(Param("beta"), GP64())
	w := Load(Param("w"), GP64())
	ax, bx := XMM(), XMM()
	VMOVQ(a, ax)
	VMOVQ(b, bx)
	aLo, aHi, B := YMM(), YMM(), YMM()
	VPBROADCASTQ(ax, aLo)
	VPSRLQ(U8(32), aLo, aHi)
	VPBROADCASTQ(bx, B)
	// 2^16 in every qword: the end of the last interval.
	top := YMM()
	VPCMPEQQ(top, top, top)
	VPSRLQ(U8(63), top, top)
	VPSLLQ(U8(16), top, top)
	for i := 0; i < 16; i++ {
		cur, next := YMM(), YMM()
		VPMOVZXWQ(Mem{Base: cum, Disp: 8 * i}, cur)
		if i < 15 {
			VPMOVZXWQ(Mem{Base: cum, Disp: 8*i + 2}, next)
		} else {
			// cum[61], cum[62], cum[63], 2^16.
			VPERMQ(U8(0xF9), cur, next)
			VPBLENDD(U8(0xC0), top, next, next)
		}
		f, lo, hi := YMM(), YMM(), YMM()
		VPSUBQ(cur, next, f)
		VPMULUDQ(aLo, f, lo)
		VPMULUDQ(aHi, f, hi)
		VPSLLQ(U8(32), hi, hi)
		VPADDQ(hi, lo, lo)
		VPADDQ(B, lo, lo)
		VMOVDQU(lo, Mem{Base: w, Disp: 32 * i})
	}
	VZEROUPPER()
	RET()
}

// genNarrow64 writes narrow64AVX2: wq[v] = uint32(w[v] >> sh) for 64
// weights, with their sum and largest value, eight a round.
func genNarrow64() {
	TEXT("narrow64AVX2", NOSPLIT, "func(w *uint64, sh uint64, wq *uint32) (total uint64, top uint32)")
	Pragma("noescape")
	Doc("narrow64AVX2 is narrowGo for 64 weights.")
	w := Load(Param("w"), GP64())
	sh := Load(Param("sh"), GP64())
	wq := Load(Param("wq"), GP64())
	shx := XMM()
	VMOVQ(sh, shx)
	low := YMM()
	VPCMPEQD(low, low, low)
	VPSRLQ(U8(32), low, low) // the low dword of every qword
	sum, mx := YMM(), YMM()
	VPXOR(sum, sum, sum)
	VPXOR(mx, mx, mx)
	for k := 0; k < 8; k++ {
		a, b := YMM(), YMM()
		VMOVDQU(Mem{Base: w, Disp: 64 * k}, a)
		VMOVDQU(Mem{Base: w, Disp: 64*k + 32}, b)
		VPSRLQ(shx, a, a)
		VPSRLQ(shx, b, b)
		VPAND(low, a, a)
		VPAND(low, b, b)
		VPADDQ(a, sum, sum)
		VPADDQ(b, sum, sum)
		// The high dwords are 0, so a dword maximum is the qwords'.
		VPMAXUD(a, mx, mx)
		VPMAXUD(b, mx, mx)
		// Gather the low dwords, in order: a's four, then b's.
		VPSHUFD(U8(0x08), a, a)
		VPERMQ(U8(0x08), a, a)
		VPSHUFD(U8(0x08), b, b)
		VPERMQ(U8(0x08), b, b)
		VINSERTI128(U8(1), b.AsX(), a, a)
		VMOVDQU(a, Mem{Base: wq, Disp: 32 * k})
	}
	hs, t := XMM(), XMM()
	VEXTRACTI128(U8(1), sum, hs)
	VPADDQ(sum.AsX(), hs, hs)
	VPSHUFD(U8(0x4E), hs, t)
	VPADDQ(t, hs, hs)
	hm := maxDwords(mx)
	tot, tp := GP64(), GP32()
	VMOVQ(hs, tot)
	VMOVD(hm, tp)
	Store(tot, ReturnIndex(0))
	Store(tp, ReturnIndex(1))
	VZEROUPPER()
	RET()
}

// genMode64 writes mode64AVX2: the symbol of highest frequency of a
// 64-entry cumulative table whose frequencies end at top = 2^P, the lowest
// among equals, and its frequency. The 64 frequencies stay in eight
// registers between the maximum and the search for its first place.
func genMode64() {
	TEXT("mode64AVX2", NOSPLIT, "func(cum *uint16, top uint32) (v int, f uint32)")
	Pragma("noescape")
	Doc("mode64AVX2 is modeGo for a 64-entry table.")
	cum := Load(Param("cum"), GP64())
	tp := Load(Param("top"), GP32())
	tx := XMM()
	VMOVD(tp, tx)
	T := YMM()
	VPBROADCASTD(tx, T)
	// VPERMD indices 1, 2, ..., 7, 7: the next start of each of the last
	// eight symbols but the last.
	idx := YMM()
	VMOVDQU(permNext, idx)
	var f [8]VecVirtual
	mx := YMM()
	for i := range f {
		cur, next := YMM(), YMM()
		VPMOVZXWD(Mem{Base: cum, Disp: 16 * i}, cur)
		if i < 7 {
			VPMOVZXWD(Mem{Base: cum, Disp: 16*i + 2}, next)
		} else {
			VPERMD(cur, idx, next)
			VPBLENDD(U8(0x80), T, next, next)
		}
		f[i] = YMM()
		VPSUBD(cur, next, f[i])
		if i == 0 {
			VMOVDQA(f[0], mx)
		} else {
			VPMAXUD(f[i], mx, mx)
		}
	}
	// The maximum in every dword, and its first place.
	hm := maxDwords(mx)
	VPBROADCASTD(hm, mx)
	v := firstEqual(mx, func(i int) Op { return f[i] })
	fr := GP32()
	VMOVD(hm, fr)
	Store(v, ReturnIndex(0))
	Store(fr, ReturnIndex(1))
	VZEROUPPER()
	RET()
}

// permNext holds the dword indices 1, 2, ..., 7, 7.
var permNext = GLOBL("permNext", RODATA|NOPTR)

func init() {
	for i := 0; i < 8; i++ {
		DATA(4*i, U32(min(i+1, 7)))
	}
}

// genDots64 writes dots64AVX2: Σ_v f_v·a[v] and Σ_v f_v·b[v] modulo 2^32,
// f_v the 64 frequencies of a cumulative table whose frequencies end at
// top, a and b rows of 64 words. Eight dwords a round, the products summed
// in eight lanes, then across.
func genDots64() {
	TEXT("dots64AVX2", NOSPLIT, "func(cum *uint16, top uint32, a *uint16, b *uint16) (ea uint32, eb uint32)")
	Pragma("noescape")
	Doc("dots64AVX2 is dotsGo for a 64-entry table.")
	cum := Load(Param("cum"), GP64())
	tp := Load(Param("top"), GP32())
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	tx := XMM()
	VMOVD(tp, tx)
	T := YMM()
	VPBROADCASTD(tx, T)
	idx := YMM()
	VMOVDQU(permNext, idx)
	sa, sb := YMM(), YMM()
	VPXOR(sa, sa, sa)
	VPXOR(sb, sb, sb)
	for i := 0; i < 8; i++ {
		cur, next, f := YMM(), YMM(), YMM()
		VPMOVZXWD(Mem{Base: cum, Disp: 16 * i}, cur)
		if i < 7 {
			VPMOVZXWD(Mem{Base: cum, Disp: 16*i + 2}, next)
		} else {
			VPERMD(cur, idx, next)
			VPBLENDD(U8(0x80), T, next, next)
		}
		VPSUBD(cur, next, f)
		ra, rb := YMM(), YMM()
		VPMOVZXWD(Mem{Base: a, Disp: 16 * i}, ra)
		VPMOVZXWD(Mem{Base: b, Disp: 16 * i}, rb)
		VPMULLD(f, ra, ra)
		VPMULLD(f, rb, rb)
		VPADDD(ra, sa, sa)
		VPADDD(rb, sb, sb)
	}
	ea := sumDwords(sa)
	eb := sumDwords(sb)
	Store(ea, ReturnIndex(0))
	Store(eb, ReturnIndex(1))
	VZEROUPPER()
	RET()
}

// sumDwords returns the sum of the eight dwords of v modulo 2^32.
func sumDwords(v VecVirtual) GPVirtual {
	hi := XMM()
	VEXTRACTI128(U8(1), v, hi)
	lo := v.AsX()
	VPADDD(hi, lo, lo)
	t := XMM()
	VPSHUFD(U8(0x4E), lo, t)
	VPADDD(t, lo, lo)
	VPSHUFD(U8(0xB1), lo, t)
	VPADDD(t, lo, lo)
	r := GP32()
	VMOVD(lo, r)
	return r
}
