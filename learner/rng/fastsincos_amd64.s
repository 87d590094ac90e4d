//go:build amd64 && !purego

#include "textflag.h"

// fastSincosPairs: FastSincos's fast path (fastsincos.go: Cody–Waite
// reduction x = k·π/256 + r, table of sin(kπ/256), Taylor polynomials in
// r) on two arguments at a time, one per SSE2 lane. Each line below is one
// operation of the scalar code, in its order; MULPD, ADDPD and SUBPD round
// each lane like MULSD, ADDSD and SUBSD (no fused multiply-add exists in
// SSE2), so every lane has the scalar code's bits (TestFastSincosSliceBits).
// Where the scalar code writes a + b the code may compute b + a: IEEE 754
// addition and multiplication are commutative.
//
// A pair is taken only when both arguments are in the fast path,
// 0 < |x| < 2²⁰: as unsigned integers, u = bits(x)<<1 (the sign dropped)
// must satisfy u − 1 < 2·bits(2²⁰) − 1 (u = 0 wraps around; NaN and ±Inf
// encode above 2²⁰).

// func fastSincosPairs(sin, cos, x []float64) int
TEXT ·fastSincosPairs(SB), NOSPLIT, $0-80
	MOVQ sin_base+0(FP), DI
	MOVQ cos_base+24(FP), SI
	MOVQ x_base+48(FP), DX
	MOVQ x_len+56(FP), CX
	LEAQ ·fsSin(SB), R8
	LEAQ ·fsPairs(SB), R9
	MOVQ $0x825fffffffffffff, BX // 2·bits(2²⁰) − 1
	XORQ AX, AX                  // j

loop:
	LEAQ 2(AX), R10
	CMPQ R10, CX
	JGT  done
	MOVQ (DX)(AX*8), R10
	SHLQ $1, R10
	SUBQ $1, R10
	CMPQ R10, BX
	JCC  done                    // unsigned ≥: not in the fast path
	MOVQ 8(DX)(AX*8), R11
	SHLQ $1, R11
	SUBQ $1, R11
	CMPQ R11, BX
	JCC  done

	MOVUPD (DX)(AX*8), X0        // x
	MOVUPD 0(R9), X1
	MULPD  X0, X1                // x·(256/π)
	MOVUPD 16(R9), X2
	ADDPD  X2, X1                // t = x·(256/π) + magic
	MOVAPD X1, X3
	SUBPD  X2, X3                // kf = t − magic
	MOVUPD 32(R9), X4
	MULPD  X3, X4                // kf·hA
	SUBPD  X4, X0                // x − kf·hA
	MOVUPD 48(R9), X4
	MULPD  X3, X4                // kf·hB
	SUBPD  X4, X0                // (x − kf·hA) − kf·hB
	MOVUPD 64(R9), X4
	MULPD  X3, X4                // kf·hC
	SUBPD  X4, X0                // r

	// k = bits(t); S = fsSin[k&511], C = fsSin[(k+128)&511].
	MOVQ   X1, R10
	PSHUFD $0xee, X1, X1
	MOVQ   X1, R11
	LEAQ   128(R10), R12
	LEAQ   128(R11), R13
	ANDQ   $511, R10
	ANDQ   $511, R11
	ANDQ   $511, R12
	ANDQ   $511, R13
	MOVSD  (R8)(R10*8), X6
	MOVHPD (R8)(R11*8), X6       // S
	MOVSD  (R8)(R12*8), X7
	MOVHPD (R8)(R13*8), X7       // C

	MOVAPD X0, X1
	MULPD  X0, X1                // r2 = r·r

	// sr = r + (r·r2)·(S1 + r2·S2)
	MOVUPD 96(R9), X2
	MULPD  X1, X2                // r2·S2
	MOVUPD 80(R9), X3
	ADDPD  X3, X2                // S1 + r2·S2
	MOVAPD X0, X3
	MULPD  X1, X3                // r·r2
	MULPD  X3, X2                // (r·r2)·(S1 + r2·S2)
	ADDPD  X0, X2                // sr

	// cm = r2·(C1 + r2·(C2 + r2·C3))
	MOVUPD 144(R9), X3
	MULPD  X1, X3                // r2·C3
	MOVUPD 128(R9), X4
	ADDPD  X4, X3                // C2 + r2·C3
	MULPD  X1, X3                // r2·(C2 + r2·C3)
	MOVUPD 112(R9), X4
	ADDPD  X4, X3                // C1 + r2·(C2 + r2·C3)
	MULPD  X1, X3                // cm

	// sin = S + (C·sr + S·cm)
	MOVAPD X7, X4
	MULPD  X2, X4                // C·sr
	MOVAPD X6, X5
	MULPD  X3, X5                // S·cm
	ADDPD  X5, X4                // C·sr + S·cm
	ADDPD  X6, X4                // sin

	// cos = C + (C·cm − S·sr)
	MOVAPD X7, X5
	MULPD  X3, X5                // C·cm
	MULPD  X2, X6                // S·sr
	SUBPD  X6, X5                // C·cm − S·sr
	ADDPD  X7, X5                // cos

	MOVUPD X4, (DI)(AX*8)
	MOVUPD X5, (SI)(AX*8)
	ADDQ   $2, AX
	JMP    loop

done:
	MOVQ AX, ret+72(FP)
	RET

// func fastSincosQuads(sin, cos, x []float64, pairs bool) int
//
// fastSincosPairs's loop four arguments at a time in AVX2 registers (VEX
// encodings of the same operations: VMULPD, VADDPD and VSUBPD round each
// lane like their SSE2 forms, and no fused instruction is used), for CPUs
// with AVX2 (fastsincos_amd64.go checks). With pairs, the values go to
// sin interleaved, cos x[j] at 2j and sin x[j] at 2j+1 (VUNPCKLPD,
// VUNPCKHPD and VPERM2F128 only move them), and cos is not used.
TEXT ·fastSincosQuads(SB), NOSPLIT, $0-88
	MOVQ         sin_base+0(FP), DI
	MOVQ         cos_base+24(FP), SI
	MOVQ         x_base+48(FP), DX
	MOVQ         x_len+56(FP), CX
	MOVBLZX      pairs+72(FP), R15
	VPBROADCASTQ fsQuadChk<>+96(SB), Y15 // 2⁶³ − 1
	LEAQ         ·fsSin(SB), R8
	LEAQ         ·fsPairs(SB), R9
	VBROADCASTSD 0(R9), Y8               // 256/π
	VBROADCASTSD 16(R9), Y9              // magic
	VBROADCASTSD 32(R9), Y10             // hA
	VBROADCASTSD 48(R9), Y11             // hB
	VBROADCASTSD 64(R9), Y12             // hC
	VBROADCASTSD 80(R9), Y13             // S1
	VBROADCASTSD 96(R9), Y14             // S2
	XORQ         AX, AX

quad:
	LEAQ 4(AX), R10
	CMPQ R10, CX
	JGT  quaddone

	// The fast-path test of the four arguments at once: u − 1 <
	// 2·bits(2²⁰) − 1 unsigned, with u = bits(x)<<1, is (u − 1) ⊕ 2⁶³ =
	// u + (2⁶³ − 1) below (2·bits(2²⁰) − 1) ⊕ 2⁶³ signed (VPCMPGTQ).
	VMOVUPD  (DX)(AX*8), Y0 // x
	VPSLLQ   $1, Y0, Y2
	VPADDQ   Y15, Y2, Y2    // u + (2⁶³ − 1)
	VPCMPGTQ fsQuadChk<>+0(SB), Y2, Y2 // ≥ the bound: not in the fast path
	VPTEST   Y2, Y2
	JNE      quaddone

	VMULPD  Y8, Y0, Y1     // x·(256/π)
	VADDPD  Y9, Y1, Y1     // t = x·(256/π) + magic
	VSUBPD  Y9, Y1, Y3     // kf = t − magic
	VMULPD  Y10, Y3, Y4    // kf·hA
	VSUBPD  Y4, Y0, Y0     // x − kf·hA
	VMULPD  Y11, Y3, Y4    // kf·hB
	VSUBPD  Y4, Y0, Y0     // (x − kf·hA) − kf·hB
	VMULPD  Y12, Y3, Y4    // kf·hC
	VSUBPD  Y4, Y0, Y0     // r

	// k = bits(t); S = fsSin[k&511] into Y6, C = fsSin[(k+128)&511]
	// into Y7: the indices in vector registers, two gathers (they only
	// move table entries).
	VPAND      fsQuadChk<>+32(SB), Y1, Y1 // k & 511
	VPADDQ     fsQuadChk<>+64(SB), Y1, Y2 // + 128
	VPAND      fsQuadChk<>+32(SB), Y2, Y2 // (k + 128) & 511
	VPCMPEQQ   Y3, Y3, Y3                 // all lanes
	VGATHERQPD Y3, (R8)(Y1*8), Y6         // S
	VPCMPEQQ   Y3, Y3, Y3
	VGATHERQPD Y3, (R8)(Y2*8), Y7         // C

	VMULPD Y0, Y0, Y1 // r2 = r·r

	// sr = r + (r·r2)·(S1 + r2·S2)
	VMULPD Y14, Y1, Y2 // r2·S2
	VADDPD Y13, Y2, Y2 // S1 + r2·S2
	VMULPD Y1, Y0, Y4  // r·r2
	VMULPD Y4, Y2, Y2  // (r·r2)·(S1 + r2·S2)
	VADDPD Y0, Y2, Y2  // sr

	// cm = r2·(C1 + r2·(C2 + r2·C3))
	VBROADCASTSD 144(R9), Y3
	VMULPD       Y1, Y3, Y3 // r2·C3
	VBROADCASTSD 128(R9), Y4
	VADDPD       Y4, Y3, Y3 // C2 + r2·C3
	VMULPD       Y1, Y3, Y3 // r2·(C2 + r2·C3)
	VBROADCASTSD 112(R9), Y4
	VADDPD       Y4, Y3, Y3 // C1 + r2·(C2 + r2·C3)
	VMULPD       Y1, Y3, Y3 // cm

	// sin = S + (C·sr + S·cm)
	VMULPD Y2, Y7, Y4 // C·sr
	VMULPD Y3, Y6, Y5 // S·cm
	VADDPD Y5, Y4, Y4 // C·sr + S·cm
	VADDPD Y6, Y4, Y4 // sin

	// cos = C + (C·cm − S·sr)
	VMULPD Y3, Y7, Y5 // C·cm
	VMULPD Y2, Y6, Y6 // S·sr
	VSUBPD Y6, Y5, Y5 // C·cm − S·sr
	VADDPD Y7, Y5, Y5 // cos

	TESTQ   R15, R15
	JNE     interleave
	VMOVUPD Y4, (DI)(AX*8)
	VMOVUPD Y5, (SI)(AX*8)
	ADDQ    $4, AX
	JMP     quad

interleave:
	VUNPCKLPD  Y4, Y5, Y6       // cos0 sin0 | cos2 sin2
	VUNPCKHPD  Y4, Y5, Y7       // cos1 sin1 | cos3 sin3
	VPERM2F128 $0x20, Y7, Y6, Y0 // cos0 sin0 cos1 sin1
	VPERM2F128 $0x31, Y7, Y6, Y1 // cos2 sin2 cos3 sin3
	MOVQ       AX, R14
	SHLQ       $4, R14          // 16 bytes per argument
	VMOVUPD    Y0, (DI)(R14*1)
	VMOVUPD    Y1, 32(DI)(R14*1)
	ADDQ       $4, AX
	JMP        quad

quaddone:
	VZEROUPPER
	MOVQ AX, ret+80(FP)
	RET

// fastSincosQuads's integer constants: the fast-path bound
// (2·bits(2²⁰) − 1) ⊕ 2⁶³ − 1 = 0x025ffffffffffffe, the index mask 511 and
// the quarter period 128 (four lanes each), and 2⁶³ − 1.
DATA fsQuadChk<>+0(SB)/8, $0x025ffffffffffffe
DATA fsQuadChk<>+8(SB)/8, $0x025ffffffffffffe
DATA fsQuadChk<>+16(SB)/8, $0x025ffffffffffffe
DATA fsQuadChk<>+24(SB)/8, $0x025ffffffffffffe
DATA fsQuadChk<>+32(SB)/8, $511
DATA fsQuadChk<>+40(SB)/8, $511
DATA fsQuadChk<>+48(SB)/8, $511
DATA fsQuadChk<>+56(SB)/8, $511
DATA fsQuadChk<>+64(SB)/8, $128
DATA fsQuadChk<>+72(SB)/8, $128
DATA fsQuadChk<>+80(SB)/8, $128
DATA fsQuadChk<>+88(SB)/8, $128
DATA fsQuadChk<>+96(SB)/8, $0x7fffffffffffffff
GLOBL fsQuadChk<>(SB), RODATA|NOPTR, $104
