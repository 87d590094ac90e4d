//go:build !amd64 || purego

package kernel

// axpy4Pairs and axpyPairs do nothing here (they return 0, so the Go loops
// of project and AxpyRounded do all the work); on amd64 they are SSE2 loops
// with the same operations (fourier_amd64.s).
func axpy4Pairs(p, w0, w1, w2, w3 []float64, x *[4]float64) int { return 0 }

func axpyPairs(y, x []float64, a float64) int { return 0 }
