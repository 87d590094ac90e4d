//go:build amd64 && !purego

package kernel

// axpy4Pairs sets p[j] = (((p[j] + x[0]·w0[j]) + x[1]·w1[j]) + x[2]·w2[j]) +
// x[3]·w3[j], each product and sum rounded (SSE2: MULPD, ADDPD; no fused
// multiply-add), for j < len(p) two at a time (fourier_amd64.s); it returns
// the number done (len(p) rounded down to even). w0…w3 must be at least
// len(p) long.
//
//go:noescape
func axpy4Pairs(p, w0, w1, w2, w3 []float64, x *[4]float64) int

// axpyPairs sets y[j] += a·x[j], the product rounded, for j < len(y) two at
// a time and returns the number done (even); x must be at least len(y) long.
//
//go:noescape
func axpyPairs(y, x []float64, a float64) int
