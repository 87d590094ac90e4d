//go:build amd64 && !purego

#include "textflag.h"

// func projectStrips(p []float64, ld int, w, phase []float64, rows []int, vals []float64, ones []uint8, ends []int, strips int)
//
// ProjectGroup's register-blocked projection: for each strip of 32
// features (256 bytes of every row of w), for each input e, the eight
// accumulators Y0–Y7 start from the strip's phases (zero when phase is
// empty) and take
// vals[k]·w[rows[k] : rows[k]+32] for input e's entries k in order,
// VMULPD then VADDPD (each lane rounded like MULSD and ADDSD, no fused
// instruction), or where ones[k] = 1 (x_j = 1, whose product is exactly
// the frequency) VADDPD alone: the bits of Project's sum
// (TestSeededBlocksProjectGroup); they are stored at p[e·ld : e·ld+32].
TEXT ·projectStrips(SB), NOSPLIT, $0-184
	MOVQ p_base+0(FP), DI      // strip of p
	MOVQ ld+24(FP), R8
	SHLQ $3, R8               // ld in bytes
	MOVQ w_base+32(FP), SI    // strip of w
	MOVQ rows_base+80(FP), R9
	MOVQ vals_base+104(FP), R10
	MOVQ ones_base+128(FP), BX
	MOVQ ends_base+152(FP), R11
	MOVQ ends_len+160(FP), R12 // inputs
	MOVQ strips+176(FP), R13

strip:
	TESTQ R13, R13
	JEQ   done
	MOVQ  DI, DX  // p[e·ld + strip]
	XORQ  CX, CX  // entry k
	XORQ  R14, R14 // input e

input:
	CMPQ R14, R12
	JEQ  nextstrip
	MOVQ (R11)(R14*8), R15 // end of input e's entries
	MOVQ phase_len+64(FP), AX
	TESTQ AX, AX
	JEQ  zero
	MOVQ phase_base+56(FP), AX // the strip's phases (advanced per strip)
	VMOVUPD 0(AX), Y0
	VMOVUPD 32(AX), Y1
	VMOVUPD 64(AX), Y2
	VMOVUPD 96(AX), Y3
	VMOVUPD 128(AX), Y4
	VMOVUPD 160(AX), Y5
	VMOVUPD 192(AX), Y6
	VMOVUPD 224(AX), Y7
	JMP  coord

zero:
	VXORPD  Y0, Y0, Y0
	VXORPD  Y1, Y1, Y1
	VXORPD  Y2, Y2, Y2
	VXORPD  Y3, Y3, Y3
	VXORPD  Y4, Y4, Y4
	VXORPD  Y5, Y5, Y5
	VXORPD  Y6, Y6, Y6
	VXORPD  Y7, Y7, Y7

coord:
	CMPQ         CX, R15
	JEQ          store
	MOVQ         (R9)(CX*8), AX
	LEAQ         (SI)(AX*8), AX   // row j of the strip
	CMPB         (BX)(CX*1), $1
	JEQ          one
	VBROADCASTSD (R10)(CX*8), Y15 // x_j
	VMULPD       0(AX), Y15, Y8
	VADDPD       Y8, Y0, Y0
	VMULPD       32(AX), Y15, Y9
	VADDPD       Y9, Y1, Y1
	VMULPD       64(AX), Y15, Y10
	VADDPD       Y10, Y2, Y2
	VMULPD       96(AX), Y15, Y11
	VADDPD       Y11, Y3, Y3
	VMULPD       128(AX), Y15, Y12
	VADDPD       Y12, Y4, Y4
	VMULPD       160(AX), Y15, Y13
	VADDPD       Y13, Y5, Y5
	VMULPD       192(AX), Y15, Y14
	VADDPD       Y14, Y6, Y6
	VMULPD       224(AX), Y15, Y8
	VADDPD       Y8, Y7, Y7
	INCQ         CX
	JMP          coord

one: // x_j = 1: add the row
	VADDPD 0(AX), Y0, Y0
	VADDPD 32(AX), Y1, Y1
	VADDPD 64(AX), Y2, Y2
	VADDPD 96(AX), Y3, Y3
	VADDPD 128(AX), Y4, Y4
	VADDPD 160(AX), Y5, Y5
	VADDPD 192(AX), Y6, Y6
	VADDPD 224(AX), Y7, Y7
	INCQ   CX
	JMP    coord

store:
	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD Y4, 128(DX)
	VMOVUPD Y5, 160(DX)
	VMOVUPD Y6, 192(DX)
	VMOVUPD Y7, 224(DX)
	ADDQ    R8, DX
	INCQ    R14
	JMP     input

nextstrip:
	ADDQ $256, DI
	ADDQ $256, SI
	ADDQ $256, phase_base+56(FP)
	DECQ R13
	JMP  strip

done:
	VZEROUPPER
	RET

// func projectStrips64(p []float64, ld int, w, phase []float64, rows []int, vals []float64, ones []uint8, ends []int, strips int)
//
// projectStrips with strips of 64 features in eight AVX-512 registers
// Z0–Z7 (VMULPD, VADDPD: each lane rounded alike, no fused instruction):
// the same sums, half the instructions. Only for CPUs with AVX-512F.
TEXT ·projectStrips64(SB), NOSPLIT, $0-184
	MOVQ p_base+0(FP), DI      // strip of p
	MOVQ ld+24(FP), R8
	SHLQ $3, R8               // ld in bytes
	MOVQ w_base+32(FP), SI    // strip of w
	MOVQ rows_base+80(FP), R9
	MOVQ vals_base+104(FP), R10
	MOVQ ones_base+128(FP), BX
	MOVQ ends_base+152(FP), R11
	MOVQ ends_len+160(FP), R12 // inputs
	MOVQ strips+176(FP), R13

strip:
	TESTQ R13, R13
	JEQ   done
	MOVQ  DI, DX  // p[e·ld + strip]
	XORQ  CX, CX  // entry k
	XORQ  R14, R14 // input e

input:
	CMPQ R14, R12
	JEQ  nextstrip
	MOVQ (R11)(R14*8), R15 // end of input e's entries
	MOVQ phase_len+64(FP), AX
	TESTQ AX, AX
	JEQ  zero
	MOVQ phase_base+56(FP), AX // the strip's phases (advanced per strip)
	VMOVUPD 0(AX), Z0
	VMOVUPD 64(AX), Z1
	VMOVUPD 128(AX), Z2
	VMOVUPD 192(AX), Z3
	VMOVUPD 256(AX), Z4
	VMOVUPD 320(AX), Z5
	VMOVUPD 384(AX), Z6
	VMOVUPD 448(AX), Z7
	JMP  coord

zero:
	VPXORQ  Z0, Z0, Z0
	VPXORQ  Z1, Z1, Z1
	VPXORQ  Z2, Z2, Z2
	VPXORQ  Z3, Z3, Z3
	VPXORQ  Z4, Z4, Z4
	VPXORQ  Z5, Z5, Z5
	VPXORQ  Z6, Z6, Z6
	VPXORQ  Z7, Z7, Z7

coord:
	CMPQ         CX, R15
	JEQ          store
	MOVQ         (R9)(CX*8), AX
	LEAQ         (SI)(AX*8), AX   // row j of the strip
	CMPB         (BX)(CX*1), $1
	JEQ          one
	VBROADCASTSD (R10)(CX*8), Z15 // x_j
	VMULPD       0(AX), Z15, Z8
	VADDPD       Z8, Z0, Z0
	VMULPD       64(AX), Z15, Z9
	VADDPD       Z9, Z1, Z1
	VMULPD       128(AX), Z15, Z10
	VADDPD       Z10, Z2, Z2
	VMULPD       192(AX), Z15, Z11
	VADDPD       Z11, Z3, Z3
	VMULPD       256(AX), Z15, Z12
	VADDPD       Z12, Z4, Z4
	VMULPD       320(AX), Z15, Z13
	VADDPD       Z13, Z5, Z5
	VMULPD       384(AX), Z15, Z14
	VADDPD       Z14, Z6, Z6
	VMULPD       448(AX), Z15, Z8
	VADDPD       Z8, Z7, Z7
	INCQ         CX
	JMP          coord

one: // x_j = 1: add the row
	VADDPD 0(AX), Z0, Z0
	VADDPD 64(AX), Z1, Z1
	VADDPD 128(AX), Z2, Z2
	VADDPD 192(AX), Z3, Z3
	VADDPD 256(AX), Z4, Z4
	VADDPD 320(AX), Z5, Z5
	VADDPD 384(AX), Z6, Z6
	VADDPD 448(AX), Z7, Z7
	INCQ   CX
	JMP    coord

store:
	VMOVUPD Z0, 0(DX)
	VMOVUPD Z1, 64(DX)
	VMOVUPD Z2, 128(DX)
	VMOVUPD Z3, 192(DX)
	VMOVUPD Z4, 256(DX)
	VMOVUPD Z5, 320(DX)
	VMOVUPD Z6, 384(DX)
	VMOVUPD Z7, 448(DX)
	ADDQ    R8, DX
	INCQ    R14
	JMP     input

nextstrip:
	ADDQ $512, DI
	ADDQ $512, SI
	ADDQ $512, phase_base+56(FP)
	DECQ R13
	JMP  strip

done:
	VZEROUPPER
	RET
