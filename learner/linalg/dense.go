package linalg

import (
	"fmt"
	"math"
)

// Dense helpers shared by the routines of this package and by learners.
// They are plain loops (no gonum BLAS level 3, whose parallel path starts
// goroutines and allocates), so they never allocate and give the same bits
// for the same inputs on a given platform.

// MatVec computes dst = A x for the m×n row-major a and the n-vector x.
// dst has length m and must not overlap x. A symmetric matrix stored in full
// (both triangles, as ShermanMorrison keeps it) is multiplied with MatVec.
// Cost O(mn); no allocation. Panics on a shape mismatch.
func MatVec(dst, a []float64, m, n int, x []float64) {
	if len(a) < m*n || len(x) != n || len(dst) != m {
		panic(fmt.Sprintf("linalg: MatVec: shapes a %d (want %d×%d), x %d, dst %d", len(a), m, n, len(x), len(dst)))
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
			brow := b[t*n : t*n+n]
			for j, bv := range brow {
				drow[j] += av * bv
			}
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
			drow := dst[i*n : i*n+n]
			for j, bv := range brow {
				drow[j] += av * bv
			}
		}
	}
}

func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func axpy(alpha float64, x, y []float64) {
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
