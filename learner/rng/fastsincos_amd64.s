//go:build amd64 && !purego

#include "textflag.h"

// fastSincosRun: FastSincos's fast path (fastsincos.go: Cody–Waite
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

// func fastSincosRun(sin, cos, x []float64) int
TEXT ·fastSincosRun(SB), NOSPLIT, $0-80
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
