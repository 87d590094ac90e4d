//go:build amd64 && !purego

package rng

import "golang.org/x/sys/cpu"

// fastSincosRun is FastSincos's fast path over x[0], x[1], … up to the
// first argument it does not take (|x| ≥ 2²⁰, ±0, NaN, ±Inf) or the end
// (give or take one: it may stop at the first of a pair), writing sin and
// cos (at least len(x) long; FastSincosSlice reslices them), and returns
// the number done: four arguments at a time in AVX2 where the CPU has it,
// then two at a time in SSE2 (part of GOAMD64=v1). Both loops
// (fastsincos_amd64.s) perform the scalar code's operations in its order,
// each lane rounded like the scalar code, so the bits are FastSincos's
// whichever runs (TestFastSincosSliceBits runs both).
func fastSincosRun(sin, cos, x []float64) int {
	n := 0
	if useAVX2 {
		n = fastSincosQuads(sin, cos, x, false)
	}
	return n + fastSincosPairs(sin[n:], cos[n:], x[n:])
}

// fastCosSinRun is fastSincosRun writing cs[2j] = cos x[j], cs[2j+1] =
// sin x[j] (cs at least 2·len(x) long): the AVX2 loop where the CPU has it
// (the same bits), none otherwise (it returns 0, and FastCosSinPairs's
// scalar loop does the rest).
func fastCosSinRun(cs, x []float64) int {
	if !useAVX2 {
		return 0
	}
	return fastSincosQuads(cs, cs, x, true)
}

// useAVX2 selects fastSincosQuads (tests turn it off to check the SSE2 loop).
var useAVX2 = cpu.X86.HasAVX2

// fastSincosPairs is fastSincosRun's SSE2 loop: two arguments at a time up
// to the first pair with an argument the fast path does not take or fewer
// than two left; it returns the number done (even).
//
//go:noescape
func fastSincosPairs(sin, cos, x []float64) int

// fastSincosQuads is fastSincosRun's AVX2 loop: four arguments at a time up
// to the first quadruple with an argument the fast path does not take or
// fewer than four left; it returns the number done (a multiple of 4). With
// pairs it writes sin[2j] = cos x[j] and sin[2j+1] = sin x[j] instead (sin
// at least 2·len(x) long; cos unused): fastCosSinRun. Only for CPUs with
// AVX2.
//
//go:noescape
func fastSincosQuads(sin, cos, x []float64, pairs bool) int

// fsPairs holds the fast path's constants, each twice (one per lane), in
// the order fastsincos_amd64.s reads them.
//
//lint:ignore U1000 read by fastsincos_amd64.s
var fsPairs = [...]float64{
	fsInvH, fsInvH, // 0
	fsMagic, fsMagic, // 16
	fsHA, fsHA, // 32
	fsHB, fsHB, // 48
	fsHC, fsHC, // 64
	fsS1, fsS1, // 80
	fsS2, fsS2, // 96
	fsC1, fsC1, // 112
	fsC2, fsC2, // 128
	fsC3, fsC3, // 144
}
