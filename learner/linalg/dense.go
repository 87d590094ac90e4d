package linalg

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	gonumblas "gonum.org/v1/gonum/blas/gonum"
)

// Dense helpers shared by the routines of this package and by learners.
// Vectors and rows of at least blasMin entries go to gonum's BLAS level 1
// and 2 (Ddot, Daxpy, Dgemv, Dger: single-threaded assembly kernels on
// amd64, 2–4× faster than a Go loop, which is latency-bound on one
// accumulator); shorter ones stay in plain loops, where the call overhead
// would dominate. Nothing here uses BLAS level 3 (gonum's Dgemm goes
// parallel, starts goroutines and allocates), so the helpers never allocate
// and give the same bits for the same inputs on a given platform.

// MatVec computes dst = A x for the m×n row-major a and the n-vector x.
// dst has length m and must not overlap x. A symmetric matrix stored in full
// (both triangles, as ShermanMorrison keeps it) is multiplied with MatVec.
// Cost O(mn); no allocation. Panics on a shape mismatch.
func MatVec(dst, a []float64, m, n int, x []float64) {
	if len(a) < m*n || len(x) != n || len(dst) != m {
		panic(fmt.Sprintf("linalg: MatVec: shapes a %d (want %d×%d), x %d, dst %d", len(a), m, n, len(x), len(dst)))
	}
	if n >= blasMin && m > 0 {
		blasImpl.Dgemv(blas.NoTrans, m, n, 1, a, n, x, 1, 0, dst, 1)
		return
	}
	for i := range m {
		row := a[i*n : i*n+n]
		var s float64
		for j, v := range row {
			s += v * x[j]
		}
		dst[i] = s
	}
}

// MatTVec computes dst = Aᵀ x for the m×n row-major a and the m-vector x.
// dst has length n and must not overlap x. (FORKS' feature map φ = Zᵀκ_L is
// MatTVec with Z s_m×k.) Cost O(mn); no allocation. Panics on a shape
// mismatch.
func MatTVec(dst, a []float64, m, n int, x []float64) {
	if len(a) < m*n || len(x) != m || len(dst) != n {
		panic(fmt.Sprintf("linalg: MatTVec: shapes a %d (want %d×%d), x %d, dst %d", len(a), m, n, len(x), len(dst)))
	}
	if n >= blasMin && m > 0 {
		blasImpl.Dgemv(blas.Trans, m, n, 1, a, n, x, 1, 0, dst, 1)
		return
	}
	clear(dst)
	for i := range m {
		xi := x[i]
		if xi == 0 {
			continue
		}
		row := a[i*n : i*n+n]
		for j, v := range row {
			dst[j] += xi * v
		}
	}
}

// Symmetrize replaces the n×n row-major a by (A + Aᵀ)/2 in place. Cost
// O(n²). Panics if len(a) < n².
func Symmetrize(a []float64, n int) {
	if len(a) < n*n {
		panic(fmt.Sprintf("linalg: Symmetrize: len(a)=%d < %d²", len(a), n))
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			v := 0.5 * (a[i*n+j] + a[j*n+i])
			a[i*n+j] = v
			a[j*n+i] = v
		}
	}
}

// Mul computes dst = A B for the m×p row-major a and the p×n row-major b;
// dst is m×n and must not overlap a or b. Cost O(mpn); no allocation.
// Panics on a shape mismatch.
func Mul(dst, a, b []float64, m, p, n int) {
	if len(a) < m*p || len(b) < p*n || len(dst) < m*n {
		panic(fmt.Sprintf("linalg: Mul: shapes a %d (want %d×%d), b %d (want %d×%d), dst %d", len(a), m, p, len(b), p, n, len(dst)))
	}
	mulNN(dst, a, b, m, p, n)
}

// mulNN: dst (m×n) = a (m×p) · b (p×n), all row-major, no checks.
func mulNN(dst, a, b []float64, m, p, n int) {
	for i := range m {
		drow := dst[i*n : i*n+n]
		clear(drow)
		arow := a[i*p : i*p+p]
		for t, av := range arow {
			if av == 0 {
				continue
			}
			axpy(av, b[t*n:t*n+n], drow)
		}
	}
}

// mulTN: dst (m×n) = aᵀ · b with a p×m and b p×n, all row-major, no checks.
func mulTN(dst, a, b []float64, p, m, n int) {
	clear(dst[:m*n])
	for t := range p {
		arow := a[t*m : t*m+m]
		brow := b[t*n : t*n+n]
		for i, av := range arow {
			if av == 0 {
				continue
			}
			axpy(av, brow, dst[i*n:i*n+n])
		}
	}
}

// blasMin is the vector length from which the helpers call gonum's BLAS
// kernels instead of a Go loop (measured: below it the call overhead
// dominates; BenchmarkShermanMorrison, BenchmarkForksRegularRound).
const blasMin = 8

// blasImpl is gonum's pure-Go/assembly BLAS, called directly (not through
// blas64's global, which another package could replace).
var blasImpl gonumblas.Implementation

// Dot returns aᵀb over len(a) entries (b must be at least as long). No
// allocation; deterministic on a platform. Learners use it (not a loop of
// their own) so that every score is the same floating-point expression.
func Dot(a, b []float64) float64 { return dot(a, b) }

// Axpy computes y += alpha·x over len(x) entries (y at least as long).
func Axpy(alpha float64, x, y []float64) { axpy(alpha, x, y) }

func dot(a, b []float64) float64 {
	if len(a) >= blasMin {
		return blasImpl.Ddot(len(a), a, 1, b[:len(a)], 1)
	}
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func axpy(alpha float64, x, y []float64) {
	if len(x) >= blasMin {
		blasImpl.Daxpy(len(x), alpha, x, 1, y[:len(x)], 1)
		return
	}
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

func nrm2(x []float64) float64 {
	// Scaled sum of squares: no overflow or harmful underflow for any finite
	// input (the LAPACK dnrm2 recurrence).
	var scale, ssq float64 = 0, 1
	for _, v := range x {
		if v == 0 {
			continue
		}
		av := math.Abs(v)
		if scale < av {
			r := scale / av
			ssq = 1 + ssq*r*r
			scale = av
		} else {
			r := av / scale
			ssq += r * r
		}
	}
	return scale * math.Sqrt(ssq)
}

func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
