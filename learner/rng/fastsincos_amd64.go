//go:build amd64 && !purego

package rng

// fastSincosRun is FastSincos's fast path over x[0], x[1], … two arguments
// at a time (fastsincos_amd64.s: SSE2, part of GOAMD64=v1, with the scalar
// code's operations in its order, each lane rounded like the scalar code),
// up to the first pair with an argument the fast path does not take
// (|x| ≥ 2²⁰, ±0, NaN, ±Inf) or fewer than two left; it returns the number
// done (even). sin and cos must be at least len(x) long (FastSincosSlice
// reslices them).
//
//go:noescape
func fastSincosRun(sin, cos, x []float64) int

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
