//go:build !amd64 || purego

package kernel

// axpy4Run and axpyRun do nothing here (they return 0, so the Go loops of
// project and AxpyRounded do all the work); on amd64 they are AVX2 and SSE2
// loops with the same operations (fourier_amd64.go, fourier_amd64.s).
func axpy4Run(p, w0, w1, w2, w3 []float64, x *[4]float64) int { return 0 }

func axpyRun(y, x []float64, a float64) int { return 0 }
