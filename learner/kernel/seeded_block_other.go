//go:build !amd64 || purego

package kernel

var useAVX2 = false

func projectRows4AVX2(dst, w0, w1, w2, w3 *float64, n int, x0, x1, x2, x3 float64) {
	panic("kernel: no AVX2 kernel on this platform")
}
