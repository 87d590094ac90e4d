//go:build !amd64 || purego

package kernel

// dot4Run and dot4x4Run do nothing here (they return 0: dot4Finish's Go
// loop does all the work); on amd64 they are AVX2 loops with the same
// operations (dot4_amd64.s).
func dot4Run(s *[4]float64, a, b []float64) int { return 0 }

func dot4x4Run(s *[4][4]float64, a []float64, bs *[4][]float64) int { return 0 }
