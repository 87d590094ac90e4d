package learner

// The ALD (approximate linear dependence) dictionary shared by AOGD-ALD and
// NONS-ALD.
//
// Reference: J. Li, S. Liao, "Nearly Optimal Algorithms with Sublinear
// Computational Complexity for Online Kernel Regression", ICML 2023, §3.1
// (Eq. 4–5) and §4.3; the condition is Engel, Mannor, Meir (2004). Notes:
// docs/algorithms/regression.md.
//
// With S the dictionary (j points, K_S = L Lᵀ its Gram matrix), the new
// point x has kernel row k = k_S(x), l = L⁻¹k and projection residual
//
//	α_t = κ(x, x) − ‖l‖² = min_β ‖Φ_S β − κ(x, ·)‖²_H        (clipped at 0)
//
// ALD_t holds iff α_t ≤ α; if it fails, x joins the dictionary and L grows
// by the row [lᵀ, √α_t] (the Cholesky form, which we prefer
// over the paper's explicit K_S⁻¹ of §3.1). l is at once the ALD test's by-product,
// the coordinates of the projection Φ_S β* in the orthonormal basis
// Φ_S L⁻ᵀ (AOGD-ALD's primal form, ours) and NONS-ALD's Nyström
// feature vector in the Cholesky basis (NONS-ALD's form=cholesky, ours).
//
// The dictionary depends on the inputs only, never on labels or on the
// model (§3.1's condition involves x only), and this one type makes the decision for both
// learners and all their forms, so AOGD-ALD (before its budget) and
// NONS-ALD build bit-identical dictionaries on the same stream.
//
// Choices (see docs/algorithms/regression.md):
//   - The first point is always added (S = ∅ gives α_t = κ(x, x)), so
//     α = 1 gives a one-point dictionary instead of an empty one.
//   - A point is added whenever ALD fails, whatever the gradient (the
//     authors' code; the dictionary stays label-independent).
//   - A cap ("budget", 0 = none): once the dictionary holds that many
//     points nothing is added any more (NONS-ALD, AOGD-ALD with
//     budget_policy=freeze) — not in the paper, which is unbounded for
//     NONS-ALD and turns into KOGD for AOGD-ALD.
//   - Only normalised kernels (κ(x, x) = 1: Gaussian, Laplacian, Cauchy)
//     are offered, as the theory requires; the formulas keep the
//     κ(x, x) terms anyway.
//
// Memory: the points (j×d) and L (stored in a capacity×capacity buffer)
// start with room for 32 points (or the budget, if smaller) and double
// when full, so growth rounds may allocate; other rounds never do.

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"okstream/learner/kernel"
	"okstream/learner/linalg"
	"okstream/learner/state"
)

// aldDefaultAlpha is the experiments' threshold α = 25/T (both learners;
// the authors' code tests √α_t ≤ 5/√T), capped at 1.
func aldDefaultAlpha(horizon int) float64 { return math.Min(1, 25/float64(horizon)) }

// aldB0 is Theorem 3.2's budget B0 = ⌊(√(d² + 4dT) − d)/2⌋, the positive
// root of B² + dB = dT (floor as in the paper; the authors' code rounds).
// At least 1.
func aldB0(dim, horizon int) int {
	d, T := float64(dim), float64(horizon)
	return max(1, int(math.Floor((math.Sqrt(d*d+4*d*T)-d)/2)))
}

// Parameter docs shared by AOGD-ALD and NONS-ALD.
var (
	docALDKernel = ParamDoc{Name: "kernel", Default: "gaussian", Doc: "gaussian exp(−‖x−y‖²/2σ²), laplacian or cauchy: normalised kernels (κ(x,x) = 1), as the ALD paper's theory requires"}
	docALDSigma  = ParamDoc{Name: "sigma", Default: "1", Doc: "kernel width σ > 0 (the ALD paper hand-tunes it per dataset: 2–16)"}
	docALDAlpha  = ParamDoc{Name: "alpha", Default: "min(1, 25/horizon)", Doc: "ALD threshold α ∈ (0, 1]: x joins the dictionary when its squared projection residual exceeds α (paper experiments: 25/T; theory: 1/T for AOGD-ALD, far smaller for NONS-ALD). Below ~1e-10 the test is at float64 round-off and the dictionary grows to its budget"}
	docALDBudget = ParamDoc{Name: "budget", Default: "⌊(√(d²+4d·horizon) − d)/2⌋", Doc: "dictionary cap B0 (AOGD-ALD Theorem 3.2's rule); 0 = no cap (unbounded memory)"}
)

// readALD reads kernel, sigma, horizon, alpha and budget.
func readALD(p *Params, dim int) (kern kernel.Kernel, alpha float64, budget int) {
	kern = readKernel(p, "gaussian", "laplacian", "cauchy")
	T := p.Int("horizon", 10000, Positive)
	alpha = p.Float("alpha", aldDefaultAlpha(T), Positive, InRange(0, 1))
	budget = p.Int("budget", aldB0(dim, T), InRange(0, 1<<16))
	return kern, alpha, budget
}

// aldDict is the ALD dictionary: the points and the Cholesky factor of
// their Gram matrix.
type aldDict struct {
	kern   kernel.Kernel
	thr    float64 // α
	budget int     // cap on the size; 0 = none
	sv     *kernel.Matrix
	chol   *linalg.Cholesky
	k, l   []float64 // scratch: k_S(x) and L⁻¹k of the last residual call (len ≥ size+1)
}

func aldInitCap(budget int) int {
	if budget > 0 && budget < 32 {
		return budget
	}
	return 32
}

func newALDDict(kern kernel.Kernel, thr float64, budget, dim int) *aldDict {
	c := aldInitCap(budget)
	return &aldDict{
		kern: kern, thr: thr, budget: budget,
		sv:   kernel.NewMatrix(dim, c),
		chol: linalg.NewCholesky(c),
		k:    make([]float64, c+1),
		l:    make([]float64, c+1),
	}
}

// size returns the number j of dictionary points.
func (d *aldDict) size() int { return d.sv.Len() }

// residual computes k = k_S(x) (left in d.k[:j]) and l = L⁻¹k (returned,
// length j, aliasing d.l) and returns α_t = max(0, κ(x, x) − ‖l‖²).
// O(dj + j²); no allocation.
func (d *aldDict) residual(x []float64) (l []float64, alphaT float64) {
	j := d.sv.Len()
	k := d.kern.Row(d.k, d.sv, x)
	l = d.l[:j]
	r := d.chol.ProjectionResidual(l, k, d.kern.Diag(x))
	return l, math.Max(r, 0)
}

// admits reports whether a point with residual alphaT joins the dictionary:
// always into an empty one, else when ALD fails (α_t > α) and the cap is
// not reached.
func (d *aldDict) admits(alphaT float64) bool {
	j := d.sv.Len()
	if j == 0 {
		return true
	}
	return alphaT > d.thr && (d.budget == 0 || j < d.budget)
}

// add appends x, whose residual call returned l and alphaT, growing L by
// [lᵀ, √α_t]. It reports false (and changes nothing) if the factor refuses
// the row (α_t not > 0 or non-finite values; not reachable with finite
// inputs, since an admitted point has α_t > α > 0). The scratch keeps its
// contents: d.k[:j] and d.l[:j] still hold k and l afterwards. May
// allocate (capacity doubling).
func (d *aldDict) add(x, l []float64, alphaT float64) bool {
	if err := d.chol.Append(l, math.Sqrt(alphaT)); err != nil {
		return false
	}
	d.sv.Append(x)
	if need := d.sv.Len() + 1; len(d.k) < need {
		n := max(2*len(d.k), need)
		nk, nl := make([]float64, n), make([]float64, n)
		copy(nk, d.k)
		copy(nl, d.l)
		d.k, d.l = nk, nl
	}
	return true
}

// bytes is the memory held by the dictionary.
func (d *aldDict) bytes() int {
	c := d.chol.Capacity()
	return d.sv.Bytes() + 8*(c*c+3*c+len(d.k)+len(d.l))
}

// encode writes the points and the rows of L (L is stored, not recomputed,
// so that a restored dictionary is bit-identical).
func (d *aldDict) encode(e *state.Encoder) {
	e.F64s(d.sv.Data())
	n := d.size()
	e.Int(n)
	for i := 0; i < n; i++ {
		e.F64s(d.chol.Row(i))
	}
}

// decodeALDDict reads a dictionary written by encode into a new aldDict
// configured like d. Errors are recorded in dec (and nil returned).
func (d *aldDict) decode(dec *state.Decoder) *aldDict {
	dim := d.sv.Dim()
	pts := dec.F64s(nil)
	hi := 1 << 16
	if d.budget > 0 {
		hi = d.budget
	}
	n := dec.IntIn(0, hi, "ald dictionary size")
	if dec.Err() != nil {
		return nil
	}
	if len(pts) != n*dim {
		dec.Fail("ald dictionary of %d points (%d values, dimension %d, budget %d)", n, len(pts), dim, d.budget)
		return nil
	}
	if !dec.Need(triangleBytes(n), 1, "ald dictionary factor") {
		return nil
	}
	out := newALDDict(d.kern, d.thr, d.budget, dim)
	if n >= out.chol.Capacity() { // room to grow without reallocating at once
		c := 2 * n
		if d.budget > 0 {
			c = min(c, d.budget)
		}
		c = max(c, n)
		out = &aldDict{kern: d.kern, thr: d.thr, budget: d.budget, sv: kernel.NewMatrix(dim, c),
			chol: linalg.NewCholesky(c), k: make([]float64, c+1), l: make([]float64, c+1)}
	}
	for i := 0; i < n; i++ {
		row := dec.F64sN(nil, i+1)
		if dec.Err() != nil {
			return nil
		}
		if err := out.chol.Append(row[:i], row[i]); err != nil {
			dec.Fail("ald dictionary factor row %d: %v", i, err)
			return nil
		}
	}
	if err := out.sv.SetData(pts); err != nil {
		dec.Fail("ald dictionary points: %v", err)
		return nil
	}
	return out
}

// aldInverse is the explicit inverse K_S⁻¹ of the dictionary's Gram matrix
// grown by the block (Schur complement) formula — the
// paper's and the authors' code's form, used by AOGD-ALD's form=dual for
// checking. n×n row-major in m[:n*n]; capacity doubles when needed.
type aldInverse struct {
	n int
	m []float64
}

// apply writes K⁻¹v into dst[:n] and returns it (len(v) = n).
func (p *aldInverse) apply(dst, v []float64) []float64 {
	n := p.n
	if len(v) != n {
		panic(fmt.Sprintf("learner: ALD inverse of order %d applied to a vector of length %d", n, len(v)))
	}
	dst = dst[:n]
	if n > 0 {
		blas64.Implementation().Dgemv(blas.NoTrans, n, n, 1, p.m, n, v, 1, 0, dst, 1)
	}
	return dst
}

// border grows K⁻¹ for a new point with β = K⁻¹k (length n) and Schur
// complement a = κ(x, x) − kᵀβ > 0:
//
//	K⁻¹ ← [[K⁻¹ + ββᵀ/a, −β/a], [−βᵀ/a, 1/a]].
//
// beta must not alias p.m. May allocate (capacity doubling).
func (p *aldInverse) border(beta []float64, a float64) {
	n := p.n
	m := n + 1
	if m*m > len(p.m) {
		c := max(2*n, 8)
		nm := make([]float64, c*c)
		copy(nm, p.m[:n*n])
		p.m = nm
	}
	for i := n - 1; i >= 0; i-- {
		copy(p.m[i*m:i*m+n], p.m[i*n:(i+1)*n])
	}
	s := 1 / a
	for i := 0; i < n; i++ {
		row := p.m[i*m : (i+1)*m]
		bi := beta[i] * s
		for j := 0; j < n; j++ {
			row[j] += bi * beta[j]
		}
		row[n] = -bi
	}
	last := p.m[n*m : (n+1)*m]
	for j := 0; j < n; j++ {
		last[j] = -beta[j] * s
	}
	last[n] = s
	p.n = m
}
