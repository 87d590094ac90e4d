package linalg

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"okstream/learner/rng"
)

func refInverse(t testing.TB, a []float64, n int) []float64 {
	var inv mat.Dense
	if err := inv.Inverse(mat.NewDense(n, n, append([]float64(nil), a...))); err != nil {
		t.Fatal(err)
	}
	return append([]float64(nil), inv.RawMatrix().Data...)
}

func identity(n int, scale float64) []float64 {
	a := make([]float64, n*n)
	for i := range n {
		a[i*n+i] = scale
	}
	return a
}

// Sherman–Morrison against a direct inverse after
// 1000 random updates A ← A + s g gᵀ from A = αI (α = 0.01, s = 0.5, the
// paper's ONS values), for k = 5 … 50, with gradients whose sizes span
// 1e-2 … 1e2. Also checks h = gᵀA⁻¹g, the new A⁻¹g = u/(1+sh), and exact
// symmetry.
func TestShermanMorrison_MatchesDirectInverse(t *testing.T) {
	src := rng.New(20)
	w := worst{name: "‖A⁻¹_SM − inv(A)‖_F / ‖inv(A)‖_F after 1000 updates"}
	wh := worst{name: "h and new A⁻¹g (relative)"}
	for _, k := range []int{5, 10, 20, 50} {
		const alpha, s = 0.01, 0.5
		A := identity(k, alpha)
		ainv := identity(k, 1/alpha)
		u := make([]float64, k)
		for step := range 1000 {
			g := randn(src, k)
			scale := math.Pow(10, float64(step%5)-2)
			for i := range g {
				g[i] *= scale
			}
			var ref []float64
			if step%250 == 0 {
				ref = refInverse(t, A, k)
			}
			h, err := ShermanMorrison(ainv, k, s, g, u)
			if err != nil {
				t.Fatal(err)
			}
			for i := range k {
				for j := range k {
					A[i*k+j] += s * g[i] * g[j]
				}
			}
			if ref != nil {
				refU := make([]float64, k)
				MatVec(refU, ref, k, k, g)
				wh.see(math.Abs(h-dot(g, refU)) / dot(g, refU))
				newInv := refInverse(t, A, k)
				MatVec(refU, newInv, k, k, g)
				got := make([]float64, k)
				for i := range k {
					got[i] = u[i] / (1 + s*h)
				}
				wh.see(relErr(got, refU))
			}
		}
		e := relErr(ainv, refInverse(t, A, k))
		sv := refSVD(t, A, k, k)
		// SM's absolute error stays near ε·‖A₀⁻¹‖ while A⁻¹ shrinks from
		// 1/α by the "shrink" factor, so the relative error grows like
		// ε·shrink, whatever the final condition number.
		t.Logf("k=%d: cond(A)=%.2g, shrink ‖A₀⁻¹‖/‖A⁻¹‖=%.2g, relative error %.2g (ε·shrink=%.2g)",
			k, sv[0]/sv[k-1], sv[k-1]/alpha, e, eps*sv[k-1]/alpha)
		w.see(e)
		for i := range k {
			for j := range k {
				if ainv[i*k+j] != ainv[j*k+i] {
					t.Fatalf("k=%d: A⁻¹ not exactly symmetric at (%d,%d)", k, i, j)
				}
			}
		}
	}
	w.report(t, 1e-9)
	wh.report(t, 1e-9)
}

// A downdate (s < 0) that would make A indefinite is refused, A⁻¹ intact;
// non-finite input too.
func TestShermanMorrison_RejectsIndefiniteAndNonFinite(t *testing.T) {
	const k = 4
	ainv := identity(k, 1) // A = I
	u := make([]float64, k)
	g := []float64{1, 0, 0, 0}
	// A − 1·e₁e₁ᵀ is singular; A − 2·e₁e₁ᵀ is indefinite.
	for _, s := range []float64{-1, -2} {
		if _, err := ShermanMorrison(ainv, k, s, g, u); !errors.Is(err, ErrNotPositiveDefinite) {
			t.Fatalf("s=%v: err = %v", s, err)
		}
	}
	if _, err := ShermanMorrison(ainv, k, 1, []float64{math.NaN(), 0, 0, 0}, u); !errors.Is(err, ErrNotFinite) {
		t.Fatalf("NaN: err = %v", err)
	}
	for i := range k * k {
		want := 0.0
		if i%(k+1) == 0 {
			want = 1
		}
		if ainv[i] != want {
			t.Fatal("A⁻¹ changed by a refused update")
		}
	}
	// A legal downdate is applied: (I − 0.5 e₁e₁ᵀ)⁻¹ has 2 at (0,0).
	if _, err := ShermanMorrison(ainv, k, -0.5, g, u); err != nil || math.Abs(ainv[0]-2) > 1e-15 {
		t.Fatalf("downdate: err %v, A⁻¹[0]=%v", err, ainv[0])
	}
}

func TestShermanMorrison_DoesNotAllocate(t *testing.T) {
	const k = 30
	src := rng.New(21)
	ainv := identity(k, 100)
	g := randn(src, k)
	u := make([]float64, k)
	if a := testing.AllocsPerRun(100, func() { _, _ = ShermanMorrison(ainv, k, 0.5, g, u) }); a != 0 {
		t.Errorf("%v allocations", a)
	}
}

// FORKS paper Eq. 10: φᵀ PROJ(v, φ) = clip(φᵀv, ±C), and the projection
// is the A-norm minimizer over the slab: compared with a brute-force
// minimization in 2-D (the minimizer lies on the face φᵀw = sign(z)·C, a
// line, searched densely and then refined).
func TestSlabProject_ClipsAndMinimizesANorm(t *testing.T) {
	src := rng.New(22)
	for trial := range 200 {
		const k = 2
		b := randn(src, 4)
		A := []float64{b[0]*b[0] + b[1]*b[1] + 0.1, b[0]*b[2] + b[1]*b[3], 0, b[2]*b[2] + b[3]*b[3] + 0.1}
		A[2] = A[1]
		ainv := refInverse(t, A, k)
		v := randn(src, k)
		for i := range v {
			v[i] *= 3
		}
		phi := randn(src, k)
		C := 0.5 * src.Float64()
		w := make([]float64, k)
		u := make([]float64, k)
		z, projected := SlabProject(w, v, ainv, k, phi, C, u)
		if z != dot(phi, v) {
			t.Fatal("z ≠ φᵀv")
		}
		if got, want := dot(phi, w), Clip(z, C); math.Abs(got-want) > 1e-12*(1+math.Abs(z)) {
			t.Fatalf("trial %d: φᵀw = %v, want clip = %v", trial, got, want)
		}
		if projected != (math.Abs(z) > C) {
			t.Fatalf("trial %d: projected = %v with |z|=%v, C=%v", trial, projected, math.Abs(z), C)
		}
		if !projected {
			continue
		}
		anorm := func(x []float64) float64 {
			d := []float64{x[0] - v[0], x[1] - v[1]}
			return d[0]*(A[0]*d[0]+A[1]*d[1]) + d[1]*(A[2]*d[0]+A[3]*d[1])
		}
		// Points on the face φᵀx = target: x = x0 + τ·φ⊥.
		target := math.Copysign(C, z)
		pn := phi[0]*phi[0] + phi[1]*phi[1]
		x0 := []float64{phi[0] * target / pn, phi[1] * target / pn}
		perp := []float64{-phi[1], phi[0]}
		best, bestTau := math.Inf(1), 0.0
		for i := -20000; i <= 20000; i++ {
			tau := float64(i) * 1e-3
			x := []float64{x0[0] + tau*perp[0], x0[1] + tau*perp[1]}
			if e := anorm(x); e < best {
				best, bestTau = e, tau
			}
		}
		for step := 1e-3; step > 1e-12; step /= 2 { // refine
			for _, tau := range []float64{bestTau - step, bestTau + step} {
				x := []float64{x0[0] + tau*perp[0], x0[1] + tau*perp[1]}
				if e := anorm(x); e < best {
					best, bestTau = e, tau
				}
			}
		}
		if got := anorm(w); got > best*(1+1e-9)+1e-12 {
			t.Fatalf("trial %d: ‖w−v‖²_A = %.12g, brute force %.12g", trial, got, best)
		}
	}
	// Degenerate φ = 0 and C = +Inf leave v unchanged.
	v := []float64{1, 2}
	w := make([]float64, 2)
	if _, p := SlabProject(w, v, identity(2, 1), 2, []float64{0, 0}, 0, make([]float64, 2)); p || w[0] != 1 || w[1] != 2 {
		t.Fatal("φ = 0 changed v")
	}
	if _, p := SlabProject(w, v, identity(2, 1), 2, []float64{5, 5}, math.Inf(1), make([]float64, 2)); p {
		t.Fatal("C = +Inf projected")
	}
}
