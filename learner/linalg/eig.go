package linalg

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// SymEig computes the eigendecomposition A = V diag(vals) Vᵀ of the symmetric
// n×n matrix a (row-major; only the upper triangle is read; a is not
// modified). Eigenvalues are returned in descending order; vecs is n×n
// row-major with eigenvector j in column j. The result is deterministic
// (gonum's LAPACK port, no randomness); the signs of eigenvectors are
// whatever that algorithm produces.
func SymEig(a []float64, n int) (vals, vecs []float64, err error) {
	if len(a) < n*n {
		panic(fmt.Sprintf("linalg: SymEig: len(a)=%d < n²=%d", len(a), n*n))
	}
	if n == 0 {
		return nil, nil, nil
	}
	sym := mat.NewSymDense(n, append([]float64(nil), a[:n*n]...))
	var es mat.EigenSym
	if ok := es.Factorize(sym, true); !ok {
		return nil, nil, fmt.Errorf("linalg: symmetric eigendecomposition of a %d×%d matrix did not converge", n, n)
	}
	asc := es.Values(nil)
	var v mat.Dense
	es.VectorsTo(&v)
	vals = make([]float64, n)
	vecs = make([]float64, n*n)
	for j := 0; j < n; j++ {
		src := n - 1 - j
		vals[j] = asc[src]
		for i := 0; i < n; i++ {
			vecs[i*n+j] = v.At(i, src)
		}
	}
	return vals, vecs, nil
}

// NystromMap computes a rank-r Nyström feature map from the n×n PSD Gram
// matrix gram (row-major) of a set of points: with gram = V Λ Vᵀ, it keeps
// the r ≤ kmax largest eigenvalues that exceed n·ε·λ_max (smaller ones
// would be divided by ~0; duplicate points and round-off produce them) and
// returns M = Λ_r^{-1/2} V_rᵀ (r×n, row-major), so that z(x) = M κ(points, x)
// gives z(x_i)ᵀz(x_j) = gram_ij on the span, and the kept eigenvalues
// (descending). r = 0 (nil map) when the matrix is zero or the
// eigendecomposition fails. Cost O(n³) (one SymEig).
func NystromMap(gram []float64, n, kmax int) (r int, m, vals []float64) {
	vals, vecs, err := SymEig(gram, n)
	if err != nil || n == 0 {
		return 0, nil, nil
	}
	tol := float64(n) * 0x1p-52 * math.Max(vals[0], 0)
	for r < kmax && r < n && vals[r] > tol {
		r++
	}
	m = make([]float64, r*n)
	for j := 0; j < r; j++ {
		is := 1 / math.Sqrt(vals[j])
		for i := 0; i < n; i++ {
			m[j*n+i] = is * vecs[i*n+j]
		}
	}
	return r, m, vals[:r]
}
