//go:build amd64 && !purego

#include "textflag.h"

// Dot4's AVX2 loops (dot4.go): the four interleaved sums s_0…s_3 are the
// four lanes of a register, each taking a[i]·b[i] for its i ≡ k (mod 4) in
// order; VMULPD and VADDPD round each lane like MULSD and ADDSD and no fused
// instruction is used, so the bits are the Go loop's (TestDot4Bits).

// func dot4Quads(s *[4]float64, a, b []float64) int
TEXT ·dot4Quads(SB), NOSPLIT, $0-64
	MOVQ    s+0(FP), DI
	MOVQ    a_base+8(FP), SI
	MOVQ    a_len+16(FP), CX
	MOVQ    b_base+32(FP), DX
	ANDQ    $-4, CX
	VMOVUPD (DI), Y0
	XORQ    AX, AX

loop:
	CMPQ    AX, CX
	JGE     done
	VMOVUPD (SI)(AX*8), Y1
	VMULPD  (DX)(AX*8), Y1, Y1 // a·b
	VADDPD  Y1, Y0, Y0         // s + a·b
	ADDQ    $4, AX
	JMP     loop

done:
	VMOVUPD Y0, (DI)
	VZEROUPPER
	MOVQ    CX, ret+56(FP)
	RET

// func dot4x4Quads(s *[4][4]float64, a []float64, bs *[4][]float64) int
TEXT ·dot4x4Quads(SB), NOSPLIT, $0-48
	MOVQ    s+0(FP), DI
	MOVQ    a_base+8(FP), SI
	MOVQ    a_len+16(FP), CX
	MOVQ    bs+32(FP), DX
	MOVQ    0(DX), R8            // b_0
	MOVQ    24(DX), R9           // b_1
	MOVQ    48(DX), R10          // b_2
	MOVQ    72(DX), R11          // b_3
	ANDQ    $-4, CX
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	XORQ    AX, AX

loop4:
	CMPQ    AX, CX
	JGE     done4
	VMOVUPD (SI)(AX*8), Y4       // a
	VMULPD  (R8)(AX*8), Y4, Y5
	VADDPD  Y5, Y0, Y0           // s_0 + a·b_0
	VMULPD  (R9)(AX*8), Y4, Y6
	VADDPD  Y6, Y1, Y1
	VMULPD  (R10)(AX*8), Y4, Y7
	VADDPD  Y7, Y2, Y2
	VMULPD  (R11)(AX*8), Y4, Y8
	VADDPD  Y8, Y3, Y3
	ADDQ    $4, AX
	JMP     loop4

done4:
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VZEROUPPER
	MOVQ    CX, ret+40(FP)
	RET
