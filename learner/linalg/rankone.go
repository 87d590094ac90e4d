package linalg

// Rank-one inverse updates and the generalized (A-norm) projection of the
// Online Newton Step, shared by FORKS, PROS-N-KONS, SkeGD-style second-order
// baselines and NONS-ALD (FORKS paper §3.4 Eq. 10; ALD paper §4.4).

import (
	"errors"
	"fmt"
	"math"
)

// ErrNotPositiveDefinite is returned when an update or factorization would
// produce (or was given) a matrix that is not numerically positive
// definite. The routine's destination or receiver is left unchanged.
var ErrNotPositiveDefinite = errors.New("linalg: matrix is not positive definite")

const eps = 0x1p-52

// ShermanMorrison replaces ainv = A⁻¹ (k×k, row-major, symmetric positive
// definite, both triangles stored) by (A + s·g gᵀ)⁻¹ in place:
//
//	u := A⁻¹g;  h := gᵀu;  A⁻¹ ← A⁻¹ − (s / (1 + s·h)) u uᵀ
//
// u (length k, caller-provided scratch) receives the old A⁻¹g (to within
// 2 ulp when k ≥ blasMin) and h = gᵀA⁻¹g is returned; the new inverse applied to g is u / (1 + s·h), which the ONS
// step v = w − A⁻¹g needs (FORKS paper Eq. 10).
//
// Guarantees: every entry (i, j) and (j, i) is updated by the same floating
// point expression, so an exactly symmetric ainv stays exactly symmetric
// (a periodic symmetrization is built in; Symmetrize is
// there for matrices from elsewhere). Positive definiteness is preserved for
// s ≥ 0; for s < 0 (a downdate) the update is refused with
// ErrNotPositiveDefinite, ainv unchanged, when 1 + s·h ≤ 4ε(1 + |s·h|),
// i.e. when A + s g gᵀ is not numerically positive definite. Non-finite g or
// s give ErrNotFinite, ainv unchanged.
//
// Cost O(k²) (one matrix–vector product, one rank-one update); no
// allocation. Panics on a shape mismatch.
func ShermanMorrison(ainv []float64, k int, s float64, g, u []float64) (h float64, err error) {
	if len(ainv) < k*k || len(g) != k || len(u) != k {
		panic(fmt.Sprintf("linalg: ShermanMorrison: len(ainv)=%d (want %d²), len(g)=%d, len(u)=%d", len(ainv), k, len(g), len(u)))
	}
	MatVec(u, ainv[:k*k], k, k, g)
	h = dot(g, u)
	sh := s * h
	if math.IsNaN(sh) || math.IsInf(sh, 0) || !allFinite(u) {
		return h, ErrNotFinite
	}
	den := 1 + sh
	if den <= 4*eps*(1+math.Abs(sh)) {
		return h, ErrNotPositiveDefinite
	}
	c := s / den
	if k >= blasMin && c != 0 {
		// A⁻¹ −= c u uᵀ as −sign(c)·(r u)(r u)ᵀ with r = √|c|: Dger forms
		// each entry from (±r u_i)(r u_j), the same product for (i, j) and
		// (j, i), so symmetry stays exact. u is scaled back afterwards (to
		// within 2 ulp of A⁻¹g).
		r := math.Sqrt(math.Abs(c))
		blasImpl.Dscal(k, r, u, 1)
		blasImpl.Dger(k, k, -math.Copysign(1, c), u, 1, u, 1, ainv, k)
		blasImpl.Dscal(k, 1/r, u, 1)
		return h, nil
	}
	for i := range k {
		ui := u[i]
		row := ainv[i*k : i*k+k]
		for j, uj := range u {
			row[j] -= c * (ui * uj)
		}
	}
	return h, nil
}

// SlabProject writes into w the A-norm projection of v onto the slab
// {w : |φᵀw| ≤ c} — PROJ(v, φ) of the FORKS paper's Eq. 10, the generalized
// projection of PROS-N-KONS and FORKS:
//
//	z := φᵀv;  if |z| ≤ c: w = v
//	else:      w = v − (sign(z)(|z| − c) / (φᵀA⁻¹φ)) A⁻¹φ
//
// ainv is A⁻¹ (k×k, row-major, symmetric positive definite, both
// triangles), v, phi and w are k-vectors (w may alias v), u is k-vector
// scratch that holds A⁻¹φ on return when projected is true. It returns
// z = φᵀv; the projected prediction is φᵀw = clip(z, −c, c) exactly in
// exact arithmetic (to rounding in floating point), so callers should use
// clip(z) rather than recompute φᵀw. If φᵀA⁻¹φ ≤ 1e-300 (φ ≈ 0) w = v.
// c = +Inf disables the projection.
//
// Guarantee: w minimizes ‖w − v‖_A = √((w−v)ᵀA(w−v)) over the slab (the
// slab constraint is one linear inequality, so the minimizer moves v along
// A⁻¹φ until it meets the nearer face). Cost O(k) when |z| ≤ c, else O(k²);
// no allocation. Panics on a shape mismatch or if c < 0 or c is NaN.
func SlabProject(w, v, ainv []float64, k int, phi []float64, c float64, u []float64) (z float64, projected bool) {
	if len(ainv) < k*k || len(v) != k || len(w) != k || len(phi) != k || len(u) != k {
		panic(fmt.Sprintf("linalg: SlabProject: len(ainv)=%d (want %d²), len(v)=%d, len(w)=%d, len(phi)=%d, len(u)=%d", len(ainv), k, len(v), len(w), len(phi), len(u)))
	}
	if !(c >= 0) {
		panic("linalg: SlabProject: c must be ≥ 0")
	}
	z = dot(phi, v)
	if math.Abs(z) <= c {
		copy(w, v)
		return z, false
	}
	MatVec(u, ainv[:k*k], k, k, phi)
	q := dot(phi, u)
	if !(q > 1e-300) {
		copy(w, v)
		return z, false
	}
	step := math.Copysign(math.Abs(z)-c, z) / q
	for i := range w {
		w[i] = v[i] - step*u[i]
	}
	return z, true
}

// Clip returns z clipped to [−c, c] (the prediction after SlabProject).
func Clip(z, c float64) float64 {
	return math.Max(-c, math.Min(c, z))
}
