//go:build !noasm

#include "textflag.h"

// The lanes of the last block of frequencies: cum[57..63] and then top.
DATA shiftNext<>+0(SB)/4, $1
DATA shiftNext<>+4(SB)/4, $2
DATA shiftNext<>+8(SB)/4, $3
DATA shiftNext<>+12(SB)/4, $4
DATA shiftNext<>+16(SB)/4, $5
DATA shiftNext<>+20(SB)/4, $6
DATA shiftNext<>+24(SB)/4, $7
DATA shiftNext<>+28(SB)/4, $7
GLOBL shiftNext<>(SB), RODATA|NOPTR, $32

// func dotRows64AVX2(cum *uint16, top uint32, d *uint16, idx *uint16, n int, out *uint32)
// The 64 frequencies, as dwords, stay in Y8..Y15; each row is 8 blocks of
// 8 products summed in Y0 and Y1, then across the lanes. A row index is
// taken mod 64: the kernel reads no memory but the rows of d.
TEXT ·dotRows64AVX2(SB), NOSPLIT, $0-48
	MOVQ cum+0(FP), AX
	MOVL top+8(FP), BX
	MOVQ d+16(FP), DX
	MOVQ idx+24(FP), SI
	MOVQ n+32(FP), CX
	MOVQ out+40(FP), DI

	// f_v = cum[v+1] − cum[v], f_63 = top − cum[63].
	VPMOVZXWD (AX), Y0
	VPMOVZXWD 2(AX), Y1
	VPSUBD    Y0, Y1, Y8
	VPMOVZXWD 16(AX), Y0
	VPMOVZXWD 18(AX), Y1
	VPSUBD    Y0, Y1, Y9
	VPMOVZXWD 32(AX), Y0
	VPMOVZXWD 34(AX), Y1
	VPSUBD    Y0, Y1, Y10
	VPMOVZXWD 48(AX), Y0
	VPMOVZXWD 50(AX), Y1
	VPSUBD    Y0, Y1, Y11
	VPMOVZXWD 64(AX), Y0
	VPMOVZXWD 66(AX), Y1
	VPSUBD    Y0, Y1, Y12
	VPMOVZXWD 80(AX), Y0
	VPMOVZXWD 82(AX), Y1
	VPSUBD    Y0, Y1, Y13
	VPMOVZXWD 96(AX), Y0
	VPMOVZXWD 98(AX), Y1
	VPSUBD    Y0, Y1, Y14
	VPMOVZXWD 112(AX), Y0
	VMOVDQU   shiftNext<>(SB), Y1
	VPERMD    Y0, Y1, Y1
	VMOVD     BX, X2
	VPBROADCASTD X2, Y2
	VPBLENDD  $0x80, Y2, Y1, Y1
	VPSUBD    Y0, Y1, Y15

row:
	MOVWQZX (SI), R8
	ANDQ    $63, R8
	SHLQ    $7, R8
	ADDQ    DX, R8
	VPMOVZXWD (R8), Y0
	VPMULLD   Y8, Y0, Y0
	VPMOVZXWD 16(R8), Y1
	VPMULLD   Y9, Y1, Y1
	VPMOVZXWD 32(R8), Y2
	VPMULLD   Y10, Y2, Y2
	VPADDD    Y2, Y0, Y0
	VPMOVZXWD 48(R8), Y3
	VPMULLD   Y11, Y3, Y3
	VPADDD    Y3, Y1, Y1
	VPMOVZXWD 64(R8), Y2
	VPMULLD   Y12, Y2, Y2
	VPADDD    Y2, Y0, Y0
	VPMOVZXWD 80(R8), Y3
	VPMULLD   Y13, Y3, Y3
	VPADDD    Y3, Y1, Y1
	VPMOVZXWD 96(R8), Y2
	VPMULLD   Y14, Y2, Y2
	VPADDD    Y2, Y0, Y0
	VPMOVZXWD 112(R8), Y3
	VPMULLD   Y15, Y3, Y3
	VPADDD    Y3, Y1, Y1
	VPADDD    Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD    X1, X0, X0
	VPSHUFD   $0x4e, X0, X1
	VPADDD    X1, X0, X0
	VPSHUFD   $0xb1, X0, X1
	VPADDD    X1, X0, X0
	VMOVD     X0, (DI)
	ADDQ $2, SI
	ADDQ $4, DI
	DECQ CX
	JNZ  row
	VZEROUPPER
	RET
