package linalg

import (
	"fmt"

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
