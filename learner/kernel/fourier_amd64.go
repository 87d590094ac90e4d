//go:build amd64 && !purego

package kernel

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 loops (tests turn it off to check the SSE2 ones).
var useAVX2 = cpu.X86.HasAVX2

// useAVX512 selects ProjectGroup's AVX-512 strips (tests turn it off to
// check the AVX2 ones).
var useAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX2

// axpy4Run sets p[j] = (((p[j] + x[0]·w0[j]) + x[1]·w1[j]) + x[2]·w2[j]) +
// x[3]·w3[j], each product and sum rounded (no fused multiply-add), for
// j < len(p) rounded down to even, and returns that number: four entries at
// a time in AVX2 where the CPU has it, then two at a time in SSE2
// (fourier_amd64.s; both round each lane like the Go loop, so the bits are
// the same whichever runs). w0…w3 must be at least len(p) long.
func axpy4Run(p, w0, w1, w2, w3 []float64, x *[4]float64) int {
	n := 0
	if useAVX2 {
		n = axpy4Quads(p, w0, w1, w2, w3, x)
	}
	return n + axpy4Pairs(p[n:], w0[n:], w1[n:], w2[n:], w3[n:], x)
}

// axpyRun sets y[j] += a·x[j], the product rounded, for j < len(y) rounded
// down to even, and returns that number (AVX2 then SSE2, like axpy4Run); x
// must be at least len(y) long.
func axpyRun(y, x []float64, a float64) int {
	n := 0
	if useAVX2 {
		n = axpyQuads(y, x, a)
	}
	return n + axpyPairs(y[n:], x[n:], a)
}

// axpy4Pairs is axpy4Run's SSE2 loop, two entries at a time; it returns the
// number done (len(p) rounded down to even).
//
//go:noescape
func axpy4Pairs(p, w0, w1, w2, w3 []float64, x *[4]float64) int

// axpy4Quads is axpy4Run's AVX2 loop, four entries at a time; it returns the
// number done (len(p) rounded down to a multiple of 4). Only for CPUs with
// AVX2.
//
//go:noescape
func axpy4Quads(p, w0, w1, w2, w3 []float64, x *[4]float64) int

// axpyPairs is axpyRun's SSE2 loop.
//
//go:noescape
func axpyPairs(y, x []float64, a float64) int

// axpyQuads is axpyRun's AVX2 loop (only for CPUs with AVX2).
//
//go:noescape
func axpyQuads(y, x []float64, a float64) int
