package kernel

// Dot4 returns Σ a_i·b_i (len(b) ≥ len(a), or it panics) summed with four
// interleaved accumulators: s_k takes the products of the entries
// i ≡ k (mod 4) below the last multiple of 4 in order, s_0 then the
// remaining ones, and the result is (s_0 + s_1) + (s_2 + s_3), every
// product rounded (no fused multiply-add). The bits are the same on every
// platform: on amd64 the four accumulators are the lanes of one AVX2
// register where the CPU has it (dot4_amd64.s), the same operations.
func Dot4(a, b []float64) float64 {
	b = b[:len(a)]
	var s [4]float64
	n := dot4Run(&s, a, b)
	return dot4Finish(&s, a[n:], b[n:])
}

// Dot4x4 sets out[k] = Dot4(a, b_k) for k < 4, with Dot4's bits: the four
// dot products advance together (on amd64 with AVX2 in four registers),
// so their sixteen addition chains overlap instead of waiting on one
// another's latency. Each b_k must be at least len(a) long, or it panics.
func Dot4x4(out *[4]float64, a, b0, b1, b2, b3 []float64) {
	bs := [4][]float64{b0[:len(a)], b1[:len(a)], b2[:len(a)], b3[:len(a)]}
	var s [4][4]float64
	n := dot4x4Run(&s, a, &bs)
	for k := range out {
		out[k] = dot4Finish(&s[k], a[n:], bs[k][n:])
	}
}

// dot4Finish continues Dot4's sums s from a multiple of 4 (where a run
// stopped, or 0): four entries at a time into s_0…s_3, the last one to three
// into s_0, and returns (s_0 + s_1) + (s_2 + s_3).
func dot4Finish(s *[4]float64, a, b []float64) float64 {
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s[0] += float64(a[i] * b[i])
		s[1] += float64(a[i+1] * b[i+1])
		s[2] += float64(a[i+2] * b[i+2])
		s[3] += float64(a[i+3] * b[i+3])
	}
	for ; i < len(a); i++ {
		s[0] += float64(a[i] * b[i])
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}
