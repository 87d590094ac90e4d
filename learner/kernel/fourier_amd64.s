//go:build amd64 && !purego

#include "textflag.h"

// The multiply-add loops of Fourier's projection and of AxpyRounded
// (fourier.go), two entries at a time, one per SSE2 lane. MULPD and ADDPD
// round each lane like MULSD and ADDSD (SSE2 has no fused multiply-add), and
// the sums are formed in the Go code's order, so the bits are the Go loops'
// (TestFourierAsmBits).

// func axpy4Pairs(p, w0, w1, w2, w3 []float64, x *[4]float64) int
TEXT ·axpy4Pairs(SB), NOSPLIT, $0-136
	MOVQ     p_base+0(FP), DI
	MOVQ     p_len+8(FP), CX
	MOVQ     w0_base+24(FP), R8
	MOVQ     w1_base+48(FP), R9
	MOVQ     w2_base+72(FP), R10
	MOVQ     w3_base+96(FP), R11
	MOVQ     x+120(FP), DX
	MOVSD    0(DX), X8
	UNPCKLPD X8, X8              // x[0] in both lanes
	MOVSD    8(DX), X9
	UNPCKLPD X9, X9
	MOVSD    16(DX), X10
	UNPCKLPD X10, X10
	MOVSD    24(DX), X11
	UNPCKLPD X11, X11
	XORQ     AX, AX

loop4:
	LEAQ   2(AX), BX
	CMPQ   BX, CX
	JGT    done4
	MOVUPD (DI)(AX*8), X0
	MOVUPD (R8)(AX*8), X1
	MULPD  X8, X1
	ADDPD  X1, X0                // p + x0·w0
	MOVUPD (R9)(AX*8), X2
	MULPD  X9, X2
	ADDPD  X2, X0                // … + x1·w1
	MOVUPD (R10)(AX*8), X3
	MULPD  X10, X3
	ADDPD  X3, X0                // … + x2·w2
	MOVUPD (R11)(AX*8), X4
	MULPD  X11, X4
	ADDPD  X4, X0                // … + x3·w3
	MOVUPD X0, (DI)(AX*8)
	MOVQ   BX, AX
	JMP    loop4

done4:
	MOVQ AX, ret+128(FP)
	RET

// func axpyPairs(y, x []float64, a float64) int
TEXT ·axpyPairs(SB), NOSPLIT, $0-64
	MOVQ     y_base+0(FP), DI
	MOVQ     y_len+8(FP), CX
	MOVQ     x_base+24(FP), SI
	MOVSD    a+48(FP), X8
	UNPCKLPD X8, X8
	XORQ     AX, AX

loop1:
	LEAQ   2(AX), BX
	CMPQ   BX, CX
	JGT    done1
	MOVUPD (SI)(AX*8), X1
	MULPD  X8, X1
	MOVUPD (DI)(AX*8), X0
	ADDPD  X1, X0                // y + a·x
	MOVUPD X0, (DI)(AX*8)
	MOVQ   BX, AX
	JMP    loop1

done1:
	MOVQ AX, ret+56(FP)
	RET

// func axpy4Quads(p, w0, w1, w2, w3 []float64, x *[4]float64) int
//
// axpy4Pairs four entries at a time in AVX2 registers (VMULPD and VADDPD
// round each lane like MULSD and ADDSD; no fused instruction is used).
TEXT ·axpy4Quads(SB), NOSPLIT, $0-136
	MOVQ         p_base+0(FP), DI
	MOVQ         p_len+8(FP), CX
	MOVQ         w0_base+24(FP), R8
	MOVQ         w1_base+48(FP), R9
	MOVQ         w2_base+72(FP), R10
	MOVQ         w3_base+96(FP), R11
	MOVQ         x+120(FP), DX
	VBROADCASTSD 0(DX), Y8
	VBROADCASTSD 8(DX), Y9
	VBROADCASTSD 16(DX), Y10
	VBROADCASTSD 24(DX), Y11
	XORQ         AX, AX

quad4:
	LEAQ    4(AX), BX
	CMPQ    BX, CX
	JGT     quad4done
	VMOVUPD (DI)(AX*8), Y0
	VMULPD  (R8)(AX*8), Y8, Y1
	VADDPD  Y1, Y0, Y0         // p + x0·w0
	VMULPD  (R9)(AX*8), Y9, Y2
	VADDPD  Y2, Y0, Y0         // … + x1·w1
	VMULPD  (R10)(AX*8), Y10, Y3
	VADDPD  Y3, Y0, Y0         // … + x2·w2
	VMULPD  (R11)(AX*8), Y11, Y4
	VADDPD  Y4, Y0, Y0         // … + x3·w3
	VMOVUPD Y0, (DI)(AX*8)
	MOVQ    BX, AX
	JMP     quad4

quad4done:
	VZEROUPPER
	MOVQ AX, ret+128(FP)
	RET

// func axpyQuads(y, x []float64, a float64) int
//
// axpyPairs four entries at a time in AVX2 registers.
TEXT ·axpyQuads(SB), NOSPLIT, $0-64
	MOVQ         y_base+0(FP), DI
	MOVQ         y_len+8(FP), CX
	MOVQ         x_base+24(FP), SI
	VBROADCASTSD a+48(FP), Y8
	XORQ         AX, AX

quad1:
	LEAQ    4(AX), BX
	CMPQ    BX, CX
	JGT     quad1done
	VMULPD  (SI)(AX*8), Y8, Y1
	VADDPD  (DI)(AX*8), Y1, Y0 // y + a·x
	VMOVUPD Y0, (DI)(AX*8)
	MOVQ    BX, AX
	JMP     quad1

quad1done:
	VZEROUPPER
	MOVQ AX, ret+56(FP)
	RET
