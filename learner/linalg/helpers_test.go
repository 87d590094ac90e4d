package linalg

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"okstream/learner/rng"
)

// Dense references, all through gonum's mat (an independent code path from
// the routines under test).

func randn(src *rng.Source, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = src.Normal()
	}
	return x
}

// randOrth returns an m×k row-major matrix with orthonormal columns.
func randOrth(src *rng.Source, m, k int) []float64 {
	var qr mat.QR
	qr.Factorize(mat.NewDense(m, k, randn(src, m*k)))
	var q mat.Dense
	qr.QTo(&q)
	out := make([]float64, m*k)
	for i := range m {
		for j := range k {
			out[i*k+j] = q.At(i, j)
		}
	}
	return out
}

// withSpectrum returns U diag(s) Vᵀ (m×n) with random orthonormal U, V.
func withSpectrum(src *rng.Source, m, n int, s []float64) []float64 {
	r := len(s)
	u := randOrth(src, m, r)
	v := randOrth(src, n, r)
	a := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var acc float64
			for l := range r {
				acc += u[i*r+l] * s[l] * v[j*r+l]
			}
			a[i*n+j] = acc
		}
	}
	return a
}

// refSVD returns the singular values (descending) of the m×n a.
func refSVD(t testing.TB, a []float64, m, n int) []float64 {
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(m, n, append([]float64(nil), a...)), mat.SVDThin) {
		t.Fatal("gonum SVD failed")
	}
	return svd.Values(nil)
}

// refBestRankK returns the best rank-k approximation of a (gonum full SVD)
// and the singular values.
func refBestRankK(t testing.TB, a []float64, m, n, k int) ([]float64, []float64) {
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(m, n, append([]float64(nil), a...)), mat.SVDThin) {
		t.Fatal("gonum SVD failed")
	}
	s := svd.Values(nil)
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var acc float64
			for l := range k {
				acc += u.At(i, l) * s[l] * v.At(j, l)
			}
			out[i*n+j] = acc
		}
	}
	return out, s
}

func fro(a []float64) float64 {
	var s float64
	for _, v := range a {
		s += v * v
	}
	return math.Sqrt(s)
}

func diffFro(a, b []float64) float64 {
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return math.Sqrt(s)
}

// relErr is ‖a − b‖_F / ‖b‖_F (or the absolute error if b = 0).
func relErr(a, b []float64) float64 {
	d := diffFro(a, b)
	if n := fro(b); n > 0 {
		return d / n
	}
	return d
}

// orthErr is ‖QᵀQ − I‖_max for the m×k row-major q.
func orthErr(q []float64, m, k int) float64 {
	var worst float64
	for a := range k {
		for b := range k {
			var s float64
			for i := range m {
				s += q[i*k+a] * q[i*k+b]
			}
			if a == b {
				s--
			}
			worst = max(worst, math.Abs(s))
		}
	}
	return worst
}

// addOuter performs a += d1 d2ᵀ with d1 m×c and d2 n×c row-major.
func addOuter(a, d1, d2 []float64, m, n, c int) {
	for i := range m {
		for j := range n {
			var s float64
			for l := range c {
				s += d1[i*c+l] * d2[j*c+l]
			}
			a[i*n+j] += s
		}
	}
}

// worst tracks and reports the largest error of a named check.
type worst struct {
	name string
	v    float64
}

func (w *worst) see(v float64) { w.v = max(w.v, v) }

func (w *worst) report(t *testing.T, tol float64) {
	t.Helper()
	t.Logf("%s: worst %.3g (tolerance %.0g)", w.name, w.v, tol)
	if !(w.v <= tol) {
		t.Errorf("%s: worst error %.3g exceeds %.0g", w.name, w.v, tol)
	}
}
