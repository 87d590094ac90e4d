package rng

// FastSincos: the portable sine and cosine with which random Fourier features
// are evaluated (FOGD's map, DSG's features, every caller of kernel.Fourier
// and kernel.CosFeature).
//
// Algorithm. x = k·h + r with h = π/256 and |r| ≤ h/2 (plus rounding):
//
//   - k = round(x·256/π) by the 1.5·2⁵² trick (adding and subtracting the
//     constant rounds to the nearest integer; the low bits of the sum's
//     encoding are k mod 2⁵¹), and r = ((x − k·hA) − k·hB) − k·hC with a
//     Cody–Waite split h ≈ hA + hB + hC (hA has 26 significant bits, hB 23,
//     so k·hA and k·hB are exact for |k| < 2²⁷ and x − k·hA is exact by
//     Sterbenz's lemma);
//   - sin r = r + r³(−1/6 + r²/120) and cos r − 1 = r²(−1/2 + r²(1/24 −
//     r²/720)) (Taylor; on |r| ≤ π/512 the omitted terms are below
//     1.1·10⁻¹⁷·|r| for sin r, 0.05 ulp, and 5·10⁻²³ for cos r);
//   - sin x = S + (C·sin r + S·(cos r − 1)), cos x = C + (C·(cos r − 1) −
//     S·sin r), where S = sin(kh), C = cos(kh) come from a 512-entry table of
//     correctly rounded values (fastsincos_table.go, generated and checked by
//     TestFastSincosTable against a math/big reference; sin(0) and sin(π) are
//     exactly 0, sin(π/2) exactly 1).
//
// Arguments with |x| ≥ 2²⁰ take a slow path to the same k and r: Payne–Hanek
// reduction (integer arithmetic on the bits of 4/π, with the table and digit
// selection of Go's math/trig_reduce.go, BSD licence) read in units of
// π/256, then the same table and polynomials. NaN and ±Inf give NaN, NaN;
// FastSincos(±0) = (±0, 1).
//
// Accuracy (TestFastSincosAccuracy, against a math/big evaluation of sin and
// cos of the exact binary value of x, with π from Machin's formula to 1400
// bits and Taylor series at 256 bits): at most 2.28 ulp over 60,000 random
// arguments spread from 10⁻³⁰⁰ to 10³⁰⁰ (the test's bound is 2.5 ulp; the
// largest errors are where the result is just below a table value sin(kπ/256),
// whose own rounding then weighs up to one ulp of the result). The golden
// table's 127 arguments are within the same bound. Near the zeros of sin and
// cos at large |x| the error is better stated absolutely: the fast path's
// reduction has an absolute error below 2⁻⁸⁶ (|k|·2⁻¹¹⁴ for the truncated
// split of h, plus roundings), so a result within 2⁻⁵⁰ of 0 at |x| near 2²⁰
// can be off by more than 2.5 ulp; for random features, whose phases are
// uniform, such arguments do not matter.
//
// Portability: every product is wrapped in an explicit float64 conversion,
// which the Go specification says rounds and so prevents the compiler from
// fusing it into an FMA (arm64, ppc64le, s390x, riscv64 would otherwise fuse
// x*y+z). The routine therefore performs the same sequence of correctly
// rounded IEEE 754 operations on every platform and gives the same bits
// everywhere. TestFeatureCodeNoFMA (package kernel) disassembles an arm64
// build and checks that no fused instruction appears, TestFastSincosGolden
// pins the bits, and CI runs the golden tests on arm64 under qemu-user.
// (math.FMA would be portable too, since it is exactly rounded everywhere,
// and saves operations; but with Go's default GOAMD64=v1 each use is a
// runtime CPU-feature branch (and a slow software fallback on CPUs without
// FMA3): the FMA version measured 3.70 ns against 3.41 ns per call at v1,
// 3.00 ns against 3.42 ns only when built with GOAMD64=v3.)
//
// Speed: 3.4–3.7 ns per call on a 2-core AMD EPYC, against 8.3 ns for
// Sincos and 6 ns for math.Sincos (amd64, where math.Sincos is pure Go too).
//
// Slices (issue 41): FastSincosSlice evaluates a slice with the same bits
// and no call per element. On amd64 its fast path is assembly
// (fastsincos_amd64.s): four arguments at a time in AVX2 where the CPU has
// it, else two in SSE2 (GOAMD64=v1), each lane performing this file's
// operations in their order with the same rounding (packed MULPD, ADDPD,
// SUBPD and their VEX forms; no fused multiply-add); elsewhere, and with
// the purego build tag, it is a Go loop (fastsincos_generic.go). Measured
// on a 2-core Intel Xeon (Sapphire Rapids class, virtualised), 400 values
// drawn as FOGD's projections: 1.3 ns per value in AVX2, 1.9 ns in SSE2,
// 3.8 ns in the Go loop, 4.4 ns per FastSincos call and 13 ns per
// math.Sincos call (random arguments mispredict its octant branches);
// BenchmarkFOGDLearnVsSincos in package learner. TestFastSincosSliceBits
// checks the bits against FastSincos (golden arguments, NaN, ±Inf, both
// paths at every position), TestFastSincosSliceSSE2 the SSE2 loop alone.
//
// Sincos (portable.go) stays as it is, with its own bits: it is part of the
// samplers (Normal's Box–Muller, the Laplacian kernel's tan), so changing it
// would change every random frequency and every synthetic data set drawn
// from a seed.

import (
	"math"
	"math/bits"
)

const (
	fsInvH  = 0x1.45f306dc9c883p+6  // 256/π
	fsHA    = 0x1.921fb58p-7        // π/256: leading 26 bits
	fsHB    = -0x1.dde974p-34       // next 23 bits
	fsHC    = 0x1.1a62633145c07p-61 // π/256 − hA − hB, rounded
	fsH     = 0x1.921fb54442d18p-7  // π/256, rounded
	fsMagic = 0x1.8p52              // 1.5·2⁵²: x + magic − magic rounds x to an integer
	fsMax   = 1 << 20               // fast-path bound: |k| < 2²⁷

	fsS1 = -1.0 / 6
	fsS2 = 1.0 / 120
	fsC1 = -0.5
	fsC2 = 1.0 / 24
	fsC3 = -1.0 / 720
)

// FastSincos returns sin(x) and cos(x), with the same bits on every platform;
// see the file comment for the algorithm, accuracy and portability.
func FastSincos(x float64) (sin, cos float64) {
	// x = k·π/256 + r (k mod 512 is all that matters), then the kernel.
	var k uint64
	var r float64
	neg := false // slow path only: reduced |x|, so sin changes sign at the end
	if math.Abs(x) < fsMax && x != 0 {
		t := float64(x*fsInvH) + fsMagic
		kf := t - fsMagic
		r = (x - float64(kf*fsHA)) - float64(kf*fsHB)
		r -= float64(kf * fsHC)
		k = math.Float64bits(t)
	} else {
		switch {
		case x == 0:
			return x, 1
		case math.IsNaN(x) || math.IsInf(x, 0):
			return math.NaN(), math.NaN()
		}
		neg = x < 0
		k, r = payneHanek(math.Abs(x))
	}
	r2 := float64(r * r)
	sr := r + float64(float64(r*r2)*(fsS1+float64(r2*fsS2)))
	cm := float64(r2 * (fsC1 + float64(r2*(fsC2+float64(r2*fsC3)))))
	S := fsSin[k&511]
	C := fsSin[(k+128)&511]
	sin = S + (float64(C*sr) + float64(S*cm))
	cos = C + (float64(C*cm) - float64(S*sr))
	if neg {
		sin = -sin
	}
	return sin, cos
}

// FastSincosSlice sets sin[j], cos[j] = FastSincos(x[j]) for j < len(x),
// with the same bits (TestFastSincosSliceBits); sin and cos must have at
// least len(x) elements (it panics otherwise), and sin (or cos) may be x
// itself (other overlaps are not supported). The fast path runs without a
// call per element (fastSincosRun: on amd64 four arguments at a time in
// AVX2 registers where the CPU has them, else two in SSE2,
// fastsincos_amd64.s; elsewhere a Go loop, fastsincos_generic.go); an
// argument the fast path does not take (|x| ≥ 2²⁰, ±0, NaN, ±Inf) goes
// through FastSincos. It does not allocate.
func FastSincosSlice(sin, cos, x []float64) {
	sin, cos = sin[:len(x)], cos[:len(x)]
	for j := 0; j < len(x); {
		j += fastSincosRun(sin[j:], cos[j:], x[j:])
		if j < len(x) {
			sin[j], cos[j] = FastSincos(x[j])
			j++
		}
	}
}

// FastCosSinPairs sets cs[2j], cs[2j+1] = cos x[j], sin x[j] for
// j < len(x), interleaved (the layout of a pair of random features), with
// FastSincos's bits (TestFastCosSinPairsBits): on amd64 with AVX2 four
// arguments at a time (FastSincosSlice's AVX2 loop, its values stored
// interleaved), elsewhere and for the arguments the fast path does not take
// one FastSincos call each. cs must have at least 2·len(x) elements (it
// panics otherwise) and must not overlap x. It does not allocate.
func FastCosSinPairs(cs, x []float64) {
	cs = cs[:2*len(x)]
	for j := 0; j < len(x); {
		j += fastCosSinRun(cs[2*j:], x[j:])
		if j < len(x) {
			cs[2*j+1], cs[2*j] = FastSincos(x[j])
			j++
		}
	}
}

// payneHanek returns k and r with |x| ≡ k·π/256 + r (mod 2π), |r| ≤ π/512,
// for |x| ≥ 2²⁰ (any finite x ≥ 2⁻³⁰ works). It is Payne–Hanek reduction
// with the table and digit selection of Go's math.trigReduce: the 53-bit
// mantissa of x times 192 bits of 4/π, kept modulo 8 as a 128-bit fixed-point
// number (3 integer bits, 125 fraction bits: exact to about 2⁻¹²⁰), read in
// units of π/256 (9 integer bits), rounded to the nearest k; the fraction is
// converted to a double-double and multiplied by π/256 with exact partial
// products, so r is correct to about half an ulp. Integer arithmetic plus
// explicitly rounded products: portable.
func payneHanek(x float64) (k uint64, r float64) {
	const (
		shift = 52
		mask  = 0x7ff
		bias  = 1023
	)
	ix := math.Float64bits(x)
	exp := int(ix>>shift&mask) - bias - shift
	ix &^= mask << shift
	ix |= 1 << shift
	digit, bitshift := uint(exp+61)/64, uint(exp+61)%64
	z0 := (fsPi4[digit] << bitshift) | (fsPi4[digit+1] >> (64 - bitshift))
	z1 := (fsPi4[digit+1] << bitshift) | (fsPi4[digit+2] >> (64 - bitshift))
	z2 := (fsPi4[digit+2] << bitshift) | (fsPi4[digit+3] >> (64 - bitshift))
	z2hi, _ := bits.Mul64(z2, ix)
	z1hi, z1lo := bits.Mul64(z1, ix)
	z0lo := z0 * ix
	lo, c := bits.Add64(z1lo, z2hi, 0)
	hi, _ := bits.Add64(z0lo, z1hi, c)
	// hi:lo = frac(x·4/π / 8)·2¹²⁸ = frac(x·256/π / 512)·2¹²⁸: the top 9
	// bits are k mod 512, the other 119 the fraction f ∈ [0, 1) of a step.
	k = hi >> 55
	fh, fl := hi<<9|lo>>55, lo<<9
	neg := fh>>63 == 1 // f ≥ ½: round k up, r = (f − 1)·h < 0
	if neg {
		k++
		fl, c = bits.Sub64(0, fl, 0)
		fh, _ = bits.Sub64(0, fh, c)
	}
	// |f| = (fh:fl)/2¹²⁸ ≤ ½; normalise and split into 26 + 53 bits.
	lz := uint(bits.LeadingZeros64(fh))
	if fh == 0 {
		lz = 64 + uint(bits.LeadingZeros64(fl))
		fh, fl = fl, 0
		if fh == 0 {
			return k, 0
		}
		fh <<= lz - 64
	} else if lz > 0 {
		fh, fl = fh<<lz|fl>>(64-lz), fl<<lz
	}
	// f = (fh/2⁶⁴ + fl/2¹²⁸)·2⁻ˡᶻ with fh ≥ 2⁶³.
	scale := math.Float64frombits(uint64(bias-26-int(lz)) << shift) // 2^(−26−lz)
	fHi := float64(float64(fh>>38) * scale)                         // 26 bits, exact
	fLo := float64(float64((fh&(1<<38-1))<<15|fl>>49) * float64(scale*0x1p-53))
	r = float64(fHi*fsHA) + (float64(fHi*(fsHB+fsHC)) + float64(fLo*fsH))
	if neg {
		r = -r
	}
	return k, r
}

// fsPi4 holds the binary digits of 4/π (Go's math.mPi4).
var fsPi4 = [...]uint64{
	0x0000000000000001,
	0x45f306dc9c882a53,
	0xf84eafa3ea69bb81,
	0xb6c52b3278872083,
	0xfca2c757bd778ac3,
	0x6e48dc74849ba5c0,
	0x0c925dd413a32439,
	0xfc3bd63962534e7d,
	0xd1046bea5d768909,
	0xd338e04d68befc82,
	0x7323ac7306a673e9,
	0x3908bf177bf25076,
	0x3ff12fffbc0b301f,
	0xde5e2316b414da3e,
	0xda6cfd9e4f96136e,
	0x9e8c7ecd3cbfd45a,
	0xea4f758fd7cbe2f6,
	0x7a0e73ef14a525d4,
	0xd7f6bf623f1aba10,
	0xac06608df8f6d757,
}
