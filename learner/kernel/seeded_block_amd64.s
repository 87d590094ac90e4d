//go:build amd64 && !purego

#include "textflag.h"

// func projectRows4AVX2(dst, w0, w1, w2, w3 *float64, n int, x0, x1, x2, x3 float64)
TEXT ·projectRows4AVX2(SB), NOSPLIT, $0-80
	MOVQ         dst+0(FP), DI
	MOVQ         w0+8(FP), R8
	MOVQ         w1+16(FP), R9
	MOVQ         w2+24(FP), R10
	MOVQ         w3+32(FP), R11
	MOVQ         n+40(FP), CX
	VBROADCASTSD x0+48(FP), Y4
	VBROADCASTSD x1+56(FP), Y5
	VBROADCASTSD x2+64(FP), Y6
	VBROADCASTSD x3+72(FP), Y7
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-4, DX

loop4:
	CMPQ    AX, DX
	JGE     tail
	VMOVUPD (DI)(AX*8), Y0
	VMULPD  (R8)(AX*8), Y4, Y1
	VADDPD  Y1, Y0, Y0
	VMULPD  (R9)(AX*8), Y5, Y2
	VADDPD  Y2, Y0, Y0
	VMULPD  (R10)(AX*8), Y6, Y3
	VADDPD  Y3, Y0, Y0
	VMULPD  (R11)(AX*8), Y7, Y1
	VADDPD  Y1, Y0, Y0
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     loop4

tail:
	CMPQ   AX, CX
	JGE    done
	VMOVSD (DI)(AX*8), X0
	VMULSD (R8)(AX*8), X4, X1
	VADDSD X1, X0, X0
	VMULSD (R9)(AX*8), X5, X2
	VADDSD X2, X0, X0
	VMULSD (R10)(AX*8), X6, X3
	VADDSD X3, X0, X0
	VMULSD (R11)(AX*8), X7, X1
	VADDSD X1, X0, X0
	VMOVSD X0, (DI)(AX*8)
	INCQ   AX
	JMP    tail

done:
	VZEROUPPER
	RET

// func cpuidAVX2() (eax1ecx, eax7ebx uint32)
TEXT ·cpuidAVX2(SB), NOSPLIT, $0-8
	MOVL $1, AX
	XORL CX, CX
	CPUID
	MOVL CX, eax1ecx+0(FP)
	MOVL $7, AX
	XORL CX, CX
	CPUID
	MOVL BX, eax7ebx+4(FP)
	RET

// func xgetbvLow() uint32
TEXT ·xgetbvLow(SB), NOSPLIT, $0-4
	XORL CX, CX
	XGETBV
	MOVL AX, ret+0(FP)
	RET
