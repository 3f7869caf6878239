// Command gen writes rans_amd64.s, the AVX2/BMI2 kernels of package rans.
// Run it from this folder with:
//
//	go run . -pkg rans -out ../rans_amd64.s -stubs ../stubs_amd64.go
//
// The kernels mirror their Go twins in the parent package (searchGo,
// Decode, encodeGo and the table functions) step for step; the tests there
// check that both give identical results, and TestGeneratedAsm that the
// committed assembly is this program's output.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

const stateLow = 1 << 24

func main() {
	ConstraintExpr("!noasm")
	genSearch64()
	genStep64()
	genEncode()
	genProducts64()
	genQuantizeProducts64()
	genQuantize64()
	genQuantizeMax64()
	genAddFrom64()
	genFirstOf64()
	genRowWeights64()
	genNarrow64()
	genMode64()
	genDots64()
	Generate()
}

// countLE64 returns in a 32-bit register max(c-1, 0), where c counts the
// entries of the 64-entry table at cum that are <= the slot broadcast to all
// 16 words of b: for a valid table, the symbol whose interval holds the slot.
func countLE64(cum Register, b VecVirtual) GPVirtual {
	var y [4]VecVirtual
	for i := range y {
		y[i] = YMM()
		// max(cum[j], slot) == slot  <=>  cum[j] <= slot, unsigned.
		VPMAXUW(Mem{Base: cum, Disp: 32 * i}, b, y[i])
		VPCMPEQW(y[i], b, y[i])
	}
	// Pack the 64 word masks into 64 byte masks; the packing permutes
	// positions, which does not matter for a count.
	VPACKSSWB(y[1], y[0], y[0])
	VPACKSSWB(y[3], y[2], y[2])
	lo, hi := GP32(), GP32()
	VPMOVMSKB(y[0], lo)
	VPMOVMSKB(y[2], hi)
	POPCNTL(lo, lo)
	POPCNTL(hi, hi)
	ADDL(hi, lo)
	// c-1, or 0 when c = 0 (possible only for a malformed table): the borrow
	// of the subtraction is added back.
	SUBL(U8(1), lo)
	ADCL(U8(0), lo)
	return lo
}

func genSearch64() {
	TEXT("search64AVX2", NOSPLIT, "func(cum *uint16, slot uint32) int")
	Pragma("noescape")
	Doc("search64AVX2 is searchGo for a 64-entry table.")
	cum := Load(Param("cum"), GP64())
	slot := Load(Param("slot"), GP32())
	x := XMM()
	VMOVD(slot, x)
	b := YMM()
	VPBROADCASTW(x, b)
	s := countLE64(cum, b)
	Store(s.As64(), ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// renormalize appends to the state st the bytes it needs, at most two, from
// p, and advances p. Away from the end of the source (p <= pEnd2, the last
// position from which two bytes can be read) it is branch-free: nb = (st <
// 2^24) + (st < 2^16) bytes are taken from the big-endian view of the next
// two. Within two bytes of the end it goes one byte at a time; if the source
// runs out it jumps to fail with p back where it was. It falls through with
// the new state in st. nb and t are scratch.
func renormalize(st, nb, t GPVirtual, p, pEnd2 Register, fail string, uniq string) {
	XORL(nb, nb)
	CMPL(st, U32(stateLow))
	ADCL(U8(0), nb)
	CMPL(st, U32(1<<16))
	ADCL(U8(0), nb)
	CMPQ(p, pEnd2)
	JA(LabelRef("tail" + uniq))
	MOVWLZX(Mem{Base: p}, t)
	ROLW(U8(8), t.As16()) // t = p[0]<<8 | p[1]
	ADDQ(nb.As64(), p)
	SHLL(U8(3), nb)
	SHLXL(nb, st, st) // x' << 8nb
	NEGL(nb)
	ADDL(U8(16), nb)
	SHRXL(nb, t, t) // the top nb bytes of t
	ORL(t, st)
	JMP(LabelRef("renormed" + uniq))

	Label("tail" + uniq)
	// nb is free here; it holds the end of the source.
	LEAQ(Mem{Base: pEnd2, Disp: 2}, nb.As64())
	CMPL(st, U32(stateLow))
	JAE(LabelRef("renormed" + uniq))
	CMPQ(p, nb.As64())
	JAE(LabelRef(fail))
	SHLL(U8(8), st)
	MOVBLZX(Mem{Base: p}, t)
	ORL(t, st)
	INCQ(p)
	CMPL(st, U32(stateLow))
	JAE(LabelRef("renormed" + uniq))
	CMPQ(p, nb.As64())
	JAE(LabelRef("back" + uniq))
	SHLL(U8(8), st)
	MOVBLZX(Mem{Base: p}, t)
	ORL(t, st)
	INCQ(p)
	JMP(LabelRef("renormed" + uniq))
	Label("back" + uniq)
	DECQ(p) // give back the first byte of the failing symbol
	JMP(LabelRef(fail))
	Label("renormed" + uniq)
}

// step64 decodes one symbol with the 64-entry table at cums from the state
// st (updated in place) and returns the symbol in a 32-bit register.
func step64(st GPVirtual, cums Register, prec GPVirtual) GPVirtual {
	slot := GP32()
	BZHIL(prec.As32(), st, slot) // slot = x mod 2^P
	xv := XMM()
	VMOVD(slot, xv)
	b := YMM()
	VPBROADCASTW(xv, b)
	s := countLE64(cums, b)

	start, end, t := GP32(), GP32(), GP32()
	MOVWLZX(Mem{Base: cums, Index: s.As64(), Scale: 2}, start)
	// end = cum[s+1] for s < 63, 2^P for s = 63; cum[64] is never read.
	MOVL(U32(63), t)
	LEAL(Mem{Base: s, Disp: 1}, end)
	CMPL(end, t)
	CMOVLGT(t, end)
	MOVWLZX(Mem{Base: cums, Index: end.As64(), Scale: 2}, end)
	MOVL(U32(1), t)
	SHLXL(prec.As32(), t, t)
	CMPL(s, U8(63))
	CMOVLEQ(t, end)
	SUBL(start, end) // freq

	// x' = freq*(x >> P) + slot - start
	SHRXL(prec.As32(), st, st)
	IMULL(end, st)
	ADDL(slot, st)
	SUBL(start, st)
	return s
}

func genStep64() {
	TEXT("step64AVX2", NOSPLIT, "func(x *uint32, cum *uint16, src []byte, pos int, prec uint64) (sym int, npos int)")
	Pragma("noescape")
	Doc("step64AVX2 is one Decode step with a 64-entry table on the lane state",
		"at x. If the step would read past src it leaves x unchanged and returns",
		"npos = -1.")
	x := Load(Param("x"), GP64())
	cum := Load(Param("cum"), GP64())
	p := Load(Param("src").Base(), GP64())
	pEnd2 := Load(Param("src").Len(), GP64())
	ADDQ(p, pEnd2)
	SUBQ(U8(2), pEnd2)
	pos := Load(Param("pos"), GP64())
	ADDQ(pos, p)
	prec := GP64()
	Load(Param("prec"), prec)
	st := GP32()
	MOVL(Mem{Base: x}, st)
	s := step64(st, cum, prec)
	renormalize(st, GP32(), GP32(), p, pEnd2, "fail", "")
	MOVL(st, Mem{Base: x})
	Store(s.As64(), ReturnIndex(0))
	src0 := Load(Param("src").Base(), GP64())
	SUBQ(src0, p)
	Store(p, ReturnIndex(1))
	VZEROUPPER()
	RET()

	Label("fail")
	m := GP64()
	MOVQ(I32(-1), m)
	Store(m, ReturnIndex(1))
	VZEROUPPER()
	RET()
}

func genEncode() {
	TEXT("encodeAsm", NOSPLIT, "func(x *[32]uint32, syms []uint32, lanes []uint8, out []byte, prec uint64) int")
	Pragma("noescape")
	Doc("encodeAsm is encodeGo: it codes syms back to front into the lane states",
		"and writes the renormalization bytes to out in emission order. The caller",
		"guarantees len(lanes) >= len(syms) and len(out) >= 2*len(syms).")
	x := Load(Param("x"), GP64())
	syms := Load(Param("syms").Base(), GP64())
	i := Load(Param("syms").Len(), GP64())
	lanes := Load(Param("lanes").Base(), GP64())
	out := Load(Param("out").Base(), GP64())
	prec := GP64()
	Load(Param("prec"), prec)
	sh := GP32() // 32 - P
	MOVL(U32(32), sh)
	SUBL(prec.As32(), sh)

	Label("loop")
	DECQ(i)
	JL(LabelRef("done"))
	freq, start, l, t := GP32(), GP32(), GP64(), GP32()
	MOVL(Mem{Base: syms, Index: i, Scale: 4}, freq)
	MOVBQZX(Mem{Base: lanes, Index: i, Scale: 1}, l)
	ANDQ(U8(31), l)
	MOVWLZX(freq.As16(), start)
	SHRL(U8(16), freq)
	INCL(freq)
	MOVL(Mem{Base: x, Index: l, Scale: 4}, EAX)
	for k := 0; k < 2; k++ { // emit while x >= freq << (32-P): at most twice
		SHRXL(sh, EAX, t)
		CMPL(t, freq)
		JB(LabelRef("code"))
		MOVB(AL, Mem{Base: out})
		INCQ(out)
		SHRL(U8(8), EAX)
	}
	Label("code")
	XORL(EDX, EDX)
	DIVL(freq) // EAX = x / freq, EDX = x mod freq
	SHLXL(prec.As32(), EAX, EAX)
	ADDL(EDX, EAX)
	ADDL(start, EAX)
	MOVL(EAX, Mem{Base: x, Index: l, Scale: 4})
	JMP(LabelRef("loop"))

	Label("done")
	out0 := Load(Param("out").Base(), GP64())
	SUBQ(out0, out)
	Store(out, ReturnIndex(0))
	RET()
}

// genProducts64 writes products64AVX2: w[v] = (g1[v]·g2[v]) >> 8 for 64
// values, with their sum and largest value. Each product of two uint16 fits
// 32 bits and each w[v] is below 2^24, so eight partial sums per lane cannot
// overflow 32 bits.
func genProducts64() {
	TEXT("products64AVX2", NOSPLIT, "func(g1 *uint16, g2 *uint16, w *uint32) (total uint64, top uint32)")
	Pragma("noescape")
	Doc("products64AVX2 is productsGo for 64 values.")
	g1 := Load(Param("g1"), GP64())
	g2 := Load(Param("g2"), GP64())
	w := Load(Param("w"), GP64())
	tot, top := productsSteps64(g1, g2, w)
	Store(tot.As64(), ReturnIndex(0))
	Store(top, ReturnIndex(1))
	VZEROUPPER()
	RET()
}

// productsSteps64 emits products64AVX2's steps: the 64 products of g1 and
// g2 to w, and their sum and largest value.
func productsSteps64(g1, g2, w Register) (GPVirtual, GPVirtual) {
	sum, mx := YMM(), YMM()
	VPXOR(sum, sum, sum)
	VPXOR(mx, mx, mx)
	for i := 0; i < 8; i++ {
		a, b := YMM(), YMM()
		VPMOVZXWD(Mem{Base: g1, Disp: 16 * i}, a)
		VPMOVZXWD(Mem{Base: g2, Disp: 16 * i}, b)
		VPMULLD(a, b, a)
		VPSRLD(U8(8), a, a)
		VMOVDQU(a, Mem{Base: w, Disp: 32 * i})
		VPADDD(a, sum, sum)
		VPMAXUD(a, mx, mx)
	}
	// Horizontal sum and maximum of the eight lanes.
	hs, t := XMM(), XMM()
	VEXTRACTI128(U8(1), sum, hs)
	VPADDD(sum.AsX(), hs, hs)
	VPSHUFD(U8(0x4E), hs, t)
	VPADDD(t, hs, hs)
	VPSHUFD(U8(0xB1), hs, t)
	VPADDD(t, hs, hs)
	hm := maxDwords(mx)
	tot, top := GP32(), GP32()
	VMOVD(hs, tot)
	VMOVD(hm, top)
	return tot, top
}

// genQuantizeProducts64 writes quantizeProducts64AVX2: products64AVX2,
// then, when their total t is at least 1 and f = ((m − 64) << 32) / t is
// below 2^32, quantizeMax64AVX2 of them, and true; otherwise false, with
// the table not written.
func genQuantizeProducts64() {
	TEXT("quantizeProducts64AVX2", NOSPLIT, "func(g1 *uint16, g2 *uint16, w *uint32, m uint32, cum *uint16) bool")
	Pragma("noescape")
	Doc("quantizeProducts64AVX2 is quantizeProductsGo for 64 values, m = 2^P, where quantizeMax64AVX2 serves (else false).")
	g1 := Load(Param("g1"), GP64())
	g2 := Load(Param("g2"), GP64())
	w := Load(Param("w"), GP64())
	tot, top := productsSteps64(g1, g2, w)
	// The sum of 64 products below 2^24 is below 2^32. f = ((m − 64) <<
	// 32) / total is below 2^32 exactly when m − 64 < total (which rules
	// out a total of 0): a 32-bit division then gives it.
	m := GP32()
	Load(Param("m"), m)
	r := GP32()
	MOVL(m, r)
	SUBL(U8(64), r)
	CMPL(r, tot)
	JAE(LabelRef("fail"))
	MOVL(r, EDX)
	XORL(EAX, EAX)
	DIVL(tot)
	f := GP64()
	MOVL(EAX, f.As32())
	tx := XMM()
	VMOVD(top, tx)
	T := YMM()
	VPBROADCASTD(tx, T)
	cum := Load(Param("cum"), GP64())
	c, mask := quantizeSteps64(w, f, cum, T)
	SUBL(c, m)
	JZ(LabelRef("done"))
	from := GP64()
	TZCNTQ(mask, from)
	INCQ(from)
	addFromSteps64(cum, from, m)
	Label("done")
	ok := GP8()
	MOVB(U8(1), ok)
	Store(ok, ReturnIndex(0))
	VZEROUPPER()
	RET()
	Label("fail")
	no := GP8()
	MOVB(U8(0), no)
	Store(no, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// genQuantize64 writes quantize64AVX2: the starts of a 64-entry table whose
// symbol s takes 1 + ((w[s]·f) >> 32) for a factor f below 2^32: cum[s] is
// the sum over the symbols before s, and the sum over all is returned.
func genQuantize64() {
	TEXT("quantize64AVX2", NOSPLIT, "func(w *uint32, f uint64, cum *uint16) uint32")
	Pragma("noescape")
	Doc("quantize64AVX2 is quantizeGo for 64 weights and f < 2^32.")
	w := Load(Param("w"), GP64())
	fr := Load(Param("f"), GP64())
	cum := Load(Param("cum"), GP64())
	c, _ := quantizeSteps64(w, fr, cum, nil)
	Store(c, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// genQuantizeMax64 writes quantizeMax64AVX2: quantize64AVX2, then the
// leftover m − Σ added to the starts after the first weight equal to top
// (addFrom64AVX2 from firstOf64AVX2 + 1), in one pass over the weights.
func genQuantizeMax64() {
	TEXT("quantizeMax64AVX2", NOSPLIT, "func(w *uint32, f uint64, top uint32, m uint32, cum *uint16)")
	Pragma("noescape")
	Doc("quantizeMax64AVX2 is quantizeMaxGo for 64 weights, total < 2^32 and f < 2^32 (m = 2^P).")
	w := Load(Param("w"), GP64())
	fr := Load(Param("f"), GP64())
	tr := Load(Param("top"), GP32())
	cum := Load(Param("cum"), GP64())
	tx := XMM()
	VMOVD(tr, tx)
	T := YMM()
	VPBROADCASTD(tx, T)
	c, mask := quantizeSteps64(w, fr, cum, T)
	d := GP32()
	Load(Param("m"), d)
	SUBL(c, d)
	JZ(LabelRef("done"))
	// TZCNT of the mask is the first index of top: the leftover goes to it.
	from := GP64()
	TZCNTQ(mask, from)
	INCQ(from)
	addFromSteps64(cum, from, d)
	Label("done")
	VZEROUPPER()
	RET()
}

// quantizeSteps64 emits quantize64AVX2's steps for the weights at w, the
// factor in fr, the starts to cum, and returns the sum over all. With a
// vector T of the top weight in every dword, it also returns a mask of the
// 64 weights equal to it (bit s for weight s).
func quantizeSteps64(w, fr, cum Register, T VecVirtual) (GPVirtual, GPVirtual) {
	fx := XMM()
	VMOVQ(fr, fx)
	F := YMM()
	VPBROADCASTQ(fx, F)
	ones, hiMask, last := YMM(), YMM(), YMM()
	VPCMPEQD(ones, ones, ones)
	VPSRLD(U8(31), ones, ones) // 1 in every dword
	VPCMPEQD(hiMask, hiMask, hiMask)
	VPSLLQ(U8(32), hiMask, hiMask) // the high dword of every qword
	VPSLLD(U8(3), ones, last)      // 8 in every dword
	VPSUBD(ones, last, last)       // 7: VPERMD index of the last dword
	carry := YMM()
	VPXOR(carry, carry, carry)
	var mask GPVirtual
	if T != nil {
		mask = GP64()
		XORQ(mask, mask)
	}
	var ex [2]VecVirtual
	for i := 0; i < 8; i++ {
		x, even, odd, q := YMM(), YMM(), YMM(), YMM()
		VMOVDQU(Mem{Base: w, Disp: 32 * i}, x)
		if T != nil {
			y := YMM()
			VPCMPEQD(x, T, y)
			b := GP32()
			VMOVMSKPS(y, b)
			if i > 0 {
				SHLQ(U8(8*i), b.As64())
			}
			ORQ(b.As64(), mask)
		}
		VPMULUDQ(F, x, even)
		VPSRLQ(U8(32), x, odd)
		VPMULUDQ(F, odd, odd)
		VPSRLQ(U8(32), even, even)
		VPAND(hiMask, odd, odd)
		VPOR(odd, even, q)
		VPADDD(ones, q, q) // q[s] = 1 + (w[s]·f) >> 32
		// Inclusive prefix sums within each 128-bit lane, then across.
		t, u := YMM(), YMM()
		VPSLLDQ(U8(4), q, t)
		VPADDD(q, t, t)
		VPSLLDQ(U8(8), t, u)
		VPADDD(u, t, t)
		VPSHUFD(U8(0xFF), t, u)
		VPERM2I128(U8(0x08), u, u, u)
		VPADDD(u, t, t)
		// Exclusive sums are the inclusive ones less q, plus the sum of
		// the groups before. The group's own sum is taken before the
		// carry is added: the carries' chain is one addition a group.
		e, g := YMM(), YMM()
		VPSUBD(q, t, e)
		VPADDD(carry, e, e)
		VPERMD(t, last, g)
		VPADDD(g, carry, carry)
		ex[i%2] = e
		if i%2 == 1 {
			// Pack 16 sums (each below 2^16) into words, in order.
			pk := YMM()
			VPACKUSDW(ex[1], ex[0], pk)
			VPERMQ(U8(0xD8), pk, pk)
			VMOVDQU(pk, Mem{Base: cum, Disp: 32 * (i / 2)})
		}
	}
	c := GP32()
	VMOVD(carry.AsX(), c)
	return c, mask
}

// genAddFrom64 writes addFrom64AVX2: cum[s] += d for from <= s < 64 (the
// remainder of a quantized table moving the later starts up).
func genAddFrom64() {
	TEXT("addFrom64AVX2", NOSPLIT, "func(cum *uint16, from int, d uint16)")
	Pragma("noescape")
	Doc("addFrom64AVX2 is addFromGo for a 64-entry table and 0 <= from <= 64.")
	cum := Load(Param("cum"), GP64())
	from, d := GP64(), GP32()
	Load(Param("from"), from)
	Load(Param("d"), d)
	addFromSteps64(cum, from, d)
	VZEROUPPER()
	RET()
}

// addFromSteps64 emits addFrom64AVX2's steps: the word d added to the 64
// words at cum from index from (at most 64) on.
func addFromSteps64(cum Register, from, d GPVirtual) {
	fx, dx := XMM(), XMM()
	VMOVD(from.As32(), fx)
	VMOVD(d, dx)
	F, D := YMM(), YMM()
	VPBROADCASTW(fx, F)
	VPBROADCASTW(dx, D)
	// idx holds the words 0..15; each round adds 16 to it.
	idx, step, one := YMM(), YMM(), YMM()
	VPCMPEQW(one, one, one)
	VPSRLW(U8(15), one, one) // 1 in every word
	// 0..15: prefix sums of ones within each 128-bit lane, less one, and 8
	// more on the high lane.
	t := YMM()
	pre := YMM()
	VMOVDQU(one, pre)
	VPSLLDQ(U8(2), pre, t)
	VPADDW(t, pre, pre)
	VPSLLDQ(U8(4), pre, t)
	VPADDW(t, pre, pre)
	VPSLLDQ(U8(8), pre, t)
	VPADDW(t, pre, pre)   // 1..8 in each lane
	VPSUBW(one, pre, idx) // 0..7 in each lane
	eight := YMM()
	VPSLLW(U8(3), one, eight)
	hi := YMM()
	VPERM2I128(U8(0x08), eight, eight, hi) // 0 in the low lane, 8 in the high
	VPADDW(hi, idx, idx)                   // 0..15
	VPSLLW(U8(4), one, step)               // 16 in every word
	for i := 0; i < 4; i++ {
		// idx >= from <=> !(from > idx); indices and from are at most 64.
		m, x := YMM(), YMM()
		VPCMPGTW(idx, F, m)
		VPANDN(D, m, m)
		VMOVDQU(Mem{Base: cum, Disp: 32 * i}, x)
		VPADDW(m, x, x)
		VMOVDQU(x, Mem{Base: cum, Disp: 32 * i})
		if i < 3 {
			VPADDW(step, idx, idx)
		}
	}
}

// genFirstOf64 writes firstOf64AVX2: the first index of 64 weights holding
// x. Without a match it returns 64 (the caller guarantees one).
func genFirstOf64() {
	TEXT("firstOf64AVX2", NOSPLIT, "func(w *uint32, x uint32) int")
	Pragma("noescape")
	Doc("firstOf64AVX2 is firstOf for 64 weights.")
	w := Load(Param("w"), GP64())
	xr := Load(Param("x"), GP32())
	xx := XMM()
	VMOVD(xr, xx)
	X := YMM()
	VPBROADCASTD(xx, X)
	idx := firstEqual(X, func(i int) Op { return Mem{Base: w, Disp: 32 * i} })
	Store(idx, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// maxDwords returns an XMM register holding in every dword the largest of
// the eight unsigned dwords of y.
func maxDwords(y VecVirtual) VecVirtual {
	h, t := XMM(), XMM()
	VEXTRACTI128(U8(1), y, h)
	VPMAXUD(y.AsX(), h, h)
	VPSHUFD(U8(0x4E), h, t)
	VPMAXUD(t, h, h)
	VPSHUFD(U8(0xB1), h, t)
	VPMAXUD(t, h, h)
	return h
}

// firstEqual returns the first index of 64 dwords, eight at group(i) for
// i = 0..7, equal to the dwords of x (64 when none is): one comparison mask
// per group, gathered into 64 bits, and its trailing zeros.
func firstEqual(x VecVirtual, group func(i int) Op) GPVirtual {
	mask := GP64()
	XORQ(mask, mask)
	for i := 7; i >= 0; i-- {
		y := YMM()
		VPCMPEQD(group(i), x, y)
		b := GP32()
		VMOVMSKPS(y, b)
		SHLQ(U8(8), mask)
		ORQ(b.As64(), mask)
	}
	// TZCNT of an empty mask is 64.
	idx := GP64()
	TZCNTQ(mask, idx)
	return idx
}
