//go:build amd64 && !purego

package kernel

// dot4Run advances Dot4's four sums s over a[:n], b[:n] with n = len(a)
// rounded down to a multiple of 4, and returns n: the four sums are the
// lanes of one AVX2 register (dot4_amd64.s) where the CPU has it (useAVX2,
// fourier_amd64.go); it does nothing and returns 0 otherwise. len(b) ≥
// len(a).
func dot4Run(s *[4]float64, a, b []float64) int {
	if !useAVX2 {
		return 0
	}
	return dot4Quads(s, a, b)
}

// dot4x4Run is dot4Run for four b's at once (s[k] the sums of b_k).
func dot4x4Run(s *[4][4]float64, a []float64, bs *[4][]float64) int {
	if !useAVX2 {
		return 0
	}
	return dot4x4Quads(s, a, bs)
}

// dot4Quads is dot4Run's AVX2 loop (VMULPD, VADDPD: each lane rounded like
// MULSD and ADDSD, no fused instruction). Only for CPUs with AVX2.
//
//go:noescape
func dot4Quads(s *[4]float64, a, b []float64) int

// dot4x4Quads is dot4x4Run's AVX2 loop: one a load, four products and
// four sums per four entries. Only for CPUs with AVX2; each bs[k] must be
// at least len(a) long.
//
//go:noescape
func dot4x4Quads(s *[4][4]float64, a []float64, bs *[4][]float64) int
