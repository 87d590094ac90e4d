//go:build !amd64 || purego

package rng

import "math"

// fastSincosRun is FastSincos's fast path over x[0], x[1], … up to the
// first argument it does not take (|x| ≥ 2²⁰, ±0, NaN, ±Inf) or the end,
// writing sin and cos (at least len(x) long); it returns the number done.
// The operations and their order are FastSincos's, term for term (a change
// to one must be made to the other, and to fastsincos_amd64.s), so the bits
// are the same (TestFastSincosSliceBits; TestFeatureCodeNoFMA checks the
// arm64 code for fused multiply-adds).
func fastSincosRun(sin, cos, x []float64) int {
	sin, cos = sin[:len(x)], cos[:len(x)]
	for j, v := range x {
		if !(math.Abs(v) < fsMax && v != 0) {
			return j
		}
		t := float64(v*fsInvH) + fsMagic
		kf := t - fsMagic
		r := (v - float64(kf*fsHA)) - float64(kf*fsHB)
		r -= float64(kf * fsHC)
		k := math.Float64bits(t)
		r2 := float64(r * r)
		sr := r + float64(float64(r*r2)*(fsS1+float64(r2*fsS2)))
		cm := float64(r2 * (fsC1 + float64(r2*(fsC2+float64(r2*fsC3)))))
		S := fsSin[k&511]
		C := fsSin[(k+128)&511]
		sin[j] = S + (float64(C*sr) + float64(S*cm))
		cos[j] = C + (float64(C*cm) - float64(S*sr))
	}
	return len(x)
}

// fastCosSinRun does nothing here (it returns 0: FastCosSinPairs's scalar
// loop does the work, with the same bits); on amd64 it is the AVX2 loop.
func fastCosSinRun(cs, x []float64) int { return 0 }
