package linalg

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"okstream/learner/rng"
)

// refCholesky returns gonum's lower Cholesky factor of the n×n a.
func refCholesky(t testing.TB, a []float64, n int) []float64 {
	var ch mat.Cholesky
	if ok := ch.Factorize(mat.NewSymDense(n, append([]float64(nil), a...))); !ok {
		t.Fatal("gonum Cholesky failed: not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	out := make([]float64, n*n)
	for i := range n {
		for j := 0; j <= i; j++ {
			out[i*n+j] = l.At(i, j)
		}
	}
	return out
}

// gaussGram is the Gaussian-kernel Gram matrix of n random points in ℝ^d
// (width σ), plus ridge·I. Small σ·d spread gives ill-conditioned matrices.
func gaussGram(src *rng.Source, n, d int, sigma, ridge float64) []float64 {
	X := randn(src, n*d)
	K := make([]float64, n*n)
	for i := range n {
		for j := range n {
			K[i*n+j] = math.Exp(-sqDist(X[i*d:i*d+d], X[j*d:j*d+d]) / (2 * sigma * sigma))
		}
		K[i*n+i] += ridge
	}
	return K
}

func choleskyErr(t testing.TB, c *Cholesky, A []float64, n int) float64 {
	got := make([]float64, n*n)
	c.LowerTo(got)
	return relErr(got, refCholesky(t, A, n))
}

// ALD paper §3.1: growing L by forward solve + append [lᵀ, √α] equals gonum's
// Cholesky of the explicit bordered matrix, on well- and ill-conditioned
// kernel matrices (cond up to ~1e10), with capacity growth on the way.
func TestCholesky_AppendMatchesGonum(t *testing.T) {
	src := rng.New(30)
	w := worst{name: "grown L vs gonum (relative)"}
	wa := worst{name: "ALD residual α vs 1/(A⁻¹)ₙₙ"}
	for _, tc := range []struct {
		n     int
		sigma float64
		ridge float64
	}{{60, 1, 1e-3}, {60, 3, 1e-8}, {120, 2, 1e-6}} {
		A := gaussGram(src, tc.n, 3, tc.sigma, tc.ridge)
		c := NewCholesky(tc.n / 3) // forces two capacity doublings
		l := make([]float64, tc.n)
		for j := range tc.n {
			col := make([]float64, j)
			for i := range j {
				col[i] = A[j*tc.n+i]
			}
			alpha := c.ProjectionResidual(l[:j], col, A[j*tc.n+j])
			if err := c.Append(l[:j], math.Sqrt(alpha)); err != nil {
				t.Fatalf("n=%d σ=%v: append %d: α=%v: %v", tc.n, tc.sigma, j, alpha, err)
			}
			if j == tc.n-1 {
				// α = 1/(A⁻¹)_{jj}, the Schur complement.
				inv := refInverse(t, A, tc.n)
				wa.see(math.Abs(alpha-1/inv[j*tc.n+j]) * inv[j*tc.n+j])
			}
		}
		e := choleskyErr(t, c, A, tc.n)
		sv := refSVD(t, A, tc.n, tc.n)
		t.Logf("n=%d σ=%v ridge=%v: cond(A)=%.2g, L relative error %.2g", tc.n, tc.sigma, tc.ridge, sv[0]/sv[tc.n-1], e)
		w.see(e)
	}
	w.report(t, 1e-8)
	wa.report(t, 1e-6)
}

// Solves with L, Lᵀ and A against gonum.
func TestCholesky_Solves(t *testing.T) {
	src := rng.New(31)
	w := worst{name: "solve relative error"}
	for _, n := range []int{1, 7, 50} {
		A := gaussGram(src, n, 4, 1.5, 1e-4)
		var c Cholesky
		if err := c.Factorize(A, n); err != nil {
			t.Fatal(err)
		}
		w.see(choleskyErr(t, &c, A, n))
		b := randn(src, n)
		L := mat.NewTriDense(n, mat.Lower, refCholesky(t, A, n))
		for _, tc := range []struct {
			solve func(dst, b []float64)
			trans bool
			full  bool
		}{{c.SolveL, false, false}, {c.SolveLT, true, false}, {c.SolveVec, false, true}} {
			got := make([]float64, n)
			tc.solve(got, b)
			var want mat.VecDense
			var err error
			switch {
			case tc.full:
				var ch mat.Cholesky
				ch.Factorize(mat.NewSymDense(n, append([]float64(nil), A...)))
				err = ch.SolveVecTo(&want, mat.NewVecDense(n, append([]float64(nil), b...)))
			case tc.trans:
				err = want.SolveVec(L.T(), mat.NewVecDense(n, append([]float64(nil), b...)))
			default:
				err = want.SolveVec(L, mat.NewVecDense(n, append([]float64(nil), b...)))
			}
			if err != nil {
				t.Fatal(err)
			}
			w.see(relErr(got, want.RawVector().Data))
			// In place.
			inPlace := append([]float64(nil), b...)
			tc.solve(inPlace, inPlace)
			for i := range got {
				if inPlace[i] != got[i] {
					t.Fatal("aliased solve differs")
				}
			}
		}
	}
	w.report(t, 1e-8)
	var c Cholesky
	indef := []float64{1, 2, 2, 1}
	if err := c.Factorize(indef, 2); !errors.Is(err, ErrNotPositiveDefinite) || c.Size() != 0 {
		t.Fatalf("indefinite: err %v, size %d", err, c.Size())
	}
}

// PKAWV paper Algorithm 2: rank-one updates LLᵀ + vvᵀ and downdates LLᵀ − vvᵀ
// match gonum's Cholesky of the explicit matrix, over a long sequence.
func TestCholesky_UpdateDowndateMatchGonum(t *testing.T) {
	src := rng.New(32)
	w := worst{name: "updated/downdated L vs gonum (relative)"}
	for _, n := range []int{1, 10, 60} {
		A := gaussGram(src, n, 3, 1, 1e-2)
		var c Cholesky
		if err := c.Factorize(A, n); err != nil {
			t.Fatal(err)
		}
		var added [][]float64
		for step := range 60 {
			if step%3 != 2 || len(added) == 0 {
				v := randn(src, n)
				if err := c.RankOneUpdate(v); err != nil {
					t.Fatal(err)
				}
				addOuter(A, v, v, n, n, 1)
				added = append(added, v)
			} else { // remove an earlier update: A stays PD
				v := added[len(added)-1]
				added = added[:len(added)-1]
				if err := c.RankOneDowndate(v); err != nil {
					t.Fatalf("n=%d step %d: %v", n, step, err)
				}
				for i := range n {
					for j := range n {
						A[i*n+j] -= v[i] * v[j]
					}
				}
			}
			w.see(choleskyErr(t, &c, A, n))
			for i := range n {
				if !(c.At(i, i) > 0) {
					t.Fatal("non-positive diagonal")
				}
			}
		}
	}
	w.report(t, 1e-10)
}

// A downdate whose result is not positive definite fails with an error and
// leaves L exactly as it was (no NaN); so does a singular one.
func TestCholesky_DowndateFailsCleanly(t *testing.T) {
	src := rng.New(33)
	const n = 20
	A := gaussGram(src, n, 3, 1, 1e-2)
	var c Cholesky
	if err := c.Factorize(A, n); err != nil {
		t.Fatal(err)
	}
	before := make([]float64, n*n)
	c.LowerTo(before)
	// v = L e₁·γ: A − vvᵀ = L(I − γ² e₁e₁ᵀ)Lᵀ, indefinite for γ > 1,
	// singular for γ = 1.
	for _, gamma := range []float64{1.5, 1, 1 + 1e-17} {
		v := make([]float64, n)
		for i := range n {
			v[i] = gamma * c.At(i, 0)
		}
		if err := c.RankOneDowndate(v); !errors.Is(err, ErrNotPositiveDefinite) {
			t.Fatalf("γ=%v: err = %v", gamma, err)
		}
		after := make([]float64, n*n)
		c.LowerTo(after)
		for i := range after {
			if after[i] != before[i] {
				t.Fatalf("γ=%v: L changed by a failed downdate", gamma)
			}
		}
	}
	v := randn(src, n)
	v[3] = math.Inf(-1)
	if err := c.RankOneDowndate(v); !errors.Is(err, ErrNotFinite) {
		t.Fatalf("Inf: err = %v", err)
	}
	if err := c.RankOneUpdate(v); !errors.Is(err, ErrNotFinite) {
		t.Fatalf("Inf update: err = %v", err)
	}
	// Append with a non-positive pivot is refused too.
	if err := c.Append(make([]float64, n), 0); !errors.Is(err, ErrNotPositiveDefinite) || c.Size() != n {
		t.Fatalf("Append(0): err %v, size %d", err, c.Size())
	}
}

// The per-event paths do not allocate below capacity.
func TestCholesky_DoesNotAllocate(t *testing.T) {
	src := rng.New(34)
	const n = 100
	A := gaussGram(src, n+1, 3, 1, 1e-3)
	c := NewCholesky(n + 1)
	sub := make([]float64, n*n)
	for i := range n {
		copy(sub[i*n:i*n+n], A[i*(n+1):i*(n+1)+n])
	}
	if err := c.Factorize(sub, n); err != nil {
		t.Fatal(err)
	}
	k := make([]float64, n)
	for i := range n {
		k[i] = A[n*(n+1)+i]
	}
	l := make([]float64, n)
	v := randn(src, n)
	allocs := testing.AllocsPerRun(50, func() {
		alpha := c.ProjectionResidual(l, k, A[n*(n+1)+n])
		if err := c.Append(l, math.Sqrt(alpha)); err != nil {
			t.Fatal(err)
		}
		c.Truncate(n)
		_ = c.RankOneUpdate(v)
		_ = c.RankOneDowndate(v)
		c.SolveVec(l, k)
	})
	if allocs != 0 {
		t.Errorf("%v allocations", allocs)
	}
}
