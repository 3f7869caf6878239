// Command gen writes kernel_amd64.s, the AVX2 scan kernel of package
// search. Run it from this folder with:
//
//	go run . -pkg search -out ../kernel_amd64.s -stubs ../stubs_amd64.go
//
// The kernel mirrors scanGo in the parent package for whole groups of 8
// codes; the tests there check that both give identical sums, and
// TestGeneratedAsm that the committed assembly is this program's output.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

func main() {
	ConstraintExpr("!noasm")
	genScan()
	Generate()
}

// genScan writes scanAVX2: for each of rows vectors of codes (row r at
// codes + r·stride, n8 codes, a multiple of 8), out[r] = Σ_j tab[j·k +
// code_j]. Eight codes at a time are widened to 32 bits, offset by j·k and
// gathered from the table; the eight lanes are summed at the end of the row.
func genScan() {
	TEXT("scanAVX2", NOSPLIT, "func(tab *uint32, k uint64, codes *byte, n8 uint64, stride uint64, rows uint64, out *uint32)")
	Pragma("noescape")
	Doc("scanAVX2 is scanGo for rows of n8 codes, n8 a positive multiple of 8.")
	tab := Load(Param("tab"), GP64())
	k := Load(Param("k"), GP64())
	codes := Load(Param("codes"), GP64())
	n8 := Load(Param("n8"), GP64())
	stride := Load(Param("stride"), GP64())
	rows := Load(Param("rows"), GP64())
	out := Load(Param("out"), GP64())

	// base = [0, k, 2k, ..., 7k]; step = 8k in every lane.
	base, step, t := YMM(), YMM(), XMM()
	acc := YMM()
	// Lane i of base gets i·k, written through the stack.
	lanes := GP64()
	MOVQ(U64(0), lanes)
	buf := AllocLocal(32)
	for i := 0; i < 8; i++ {
		MOVL(lanes.As32(), buf.Offset(4*i))
		ADDQ(k, lanes)
	}
	VMOVDQU(buf, base)
	SHLQ(U8(3), k)
	MOVQ(k, t)
	VPBROADCASTD(t, step)

	Label("row")
	p, j := GP64(), GP64()
	MOVQ(codes, p)
	XORQ(j, j)
	VPXOR(acc, acc, acc)
	cur := YMM()
	VMOVDQA(base, cur)
	Label("block")
	idx, g, mask := YMM(), YMM(), YMM()
	VPMOVZXBD(Mem{Base: p, Index: j, Scale: 1}, idx)
	VPADDD(cur, idx, idx)
	VPCMPEQD(mask, mask, mask)
	VPXOR(g, g, g)
	VPGATHERDD(mask, Mem{Base: tab, Index: idx, Scale: 4}, g)
	VPADDD(g, acc, acc)
	VPADDD(step, cur, cur)
	ADDQ(U8(8), j)
	CMPQ(j, n8)
	JB(LabelRef("block"))

	// Sum the eight lanes of acc.
	lo, hi := XMM(), XMM()
	VEXTRACTI128(U8(1), acc, hi)
	VPADDD(hi, acc.AsX(), lo)
	VPSHUFD(U8(0x4e), lo, hi)
	VPADDD(hi, lo, lo)
	VPSHUFD(U8(0xb1), lo, hi)
	VPADDD(hi, lo, lo)
	VMOVD(lo, Mem{Base: out})
	ADDQ(U8(4), out)
	ADDQ(stride, codes)
	DECQ(rows)
	JNZ(LabelRef("row"))
	VZEROUPPER()
	RET()
}
