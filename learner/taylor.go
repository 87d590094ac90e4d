package learner

// Taylor features of the Gaussian kernel: PKAWV's fixed, data-independent
// basis (basis=taylor in pkawv.go).
//
// Reference: R. Jézéquel, P. Gaillard, A. Rudi, "Efficient online learning
// with kernels for adversarial large scale problems", NeurIPS 2019, §3.1
// (Eq. 6) and App. D.2, F.2–F.3 (Lemmas 11–13). Notes:
// docs/algorithms/kernel-awv.md.
//
// For a multi-index k ∈ ℕ₀^d with |k| = k_1 + … + k_d ≤ M,
//
//	g_k(x) = exp(−‖x‖²/(2σ²)) · ∏_i (x_i/σ)^{k_i} / √(k_i!)
//
// The g_k are orthonormal in the Gaussian RKHS (Lemma 11, so the Gram matrix
// Q of the basis is the identity and the embedding needs no Q^{-1/2}), and
// Σ_{|k|≤M} g_k(x)g_k(x') = e^{−(‖x‖²+‖x'‖²)/(2σ²)} Σ_{j≤M} (xᵀx'/σ²)^j/j!,
// the order-M Taylor truncation of the Gaussian kernel (Lemma 12), whose
// error is at most (R/σ)^{2M+2}/(M+1)! on the ball ‖x‖, ‖x'‖ ≤ R (Lemma 13).
// There are r = C(M+d, d) of them (the paper's "(1+x_1+…+x_d)^d"
// means exponent M).
//
// Choices:
//   - Multi-index basis, not the paper's Python tensor form
//     (Σ_k d^k entries, each g_k spread over multinomial copies): both
//     induce the same truncated kernel through an isometry, so AWV/ridge
//     predictions are identical (awv.go; checked by
//     TestPKAWVSec16TensorFeaturesGiveSamePredictions), and the multi-index
//     form is r = 55 instead of 91 features on casp at M = 2.
//   - Evaluation in O(r): the features are enumerated once,
//     graded by degree and lexicographic within a degree (combinations with
//     replacement i_1 ≤ … ≤ i_j); feature k stores its parent (the tuple
//     without its last index), the appended coordinate i and the multiplier
//     1/(σ√c) with c the new multiplicity of i, since √(c!) = √((c−1)!)·√c.
//     Then f_0 = 1, f_k = f_parent · x_i · mult_k, and everything is scaled
//     by E = exp(−‖x‖²/(2σ²)) at the end. The order is fixed (it is part of
//     the serialized state's meaning); it never changes predictions.
//   - Numerical care: the monomials are computed without E and
//     scaled once. If ‖x‖²/(2σ²) > 600, E < e^{−600} and, since
//     Σ_k g_k(x)² = e^{−q}Σ_{j≤M} q^j/j! with q = ‖x‖²/σ² ≥ 1200, every
//     feature underflows for M ≤ 30 (the largest order accepted): the map
//     returns exact zeros instead of computing 0·(huge monomial). With
//     inputs scaled to [−1, 1]^d (the paper's), E ≥ e^{−d/(2σ²)}, far from
//     that regime.

import (
	"fmt"
	"math"
)

// taylorMaxOrder is the largest Taylor order accepted (see the
// underflow argument above).
const taylorMaxOrder = 30

// taylorCount returns r = C(M+d, d), or ok = false if it exceeds limit.
func taylorCount(d, order, limit int) (r int, ok bool) {
	// After step k, r = C(d+k, k): exact in integers at every step, and
	// increasing in k, so the first step above the limit decides.
	r = 1
	for k := 1; k <= order; k++ {
		if r > math.MaxInt/(d+k) {
			return 0, false
		}
		r = r * (d + k) / k
		if r > limit {
			return 0, false
		}
	}
	return r, true
}

// taylorBasis is the multi-index Taylor basis of order M in d dimensions.
// It is immutable after construction; Map writes into the caller's buffer.
type taylorBasis struct {
	dim, order int
	sigma      float64
	inv2s2     float64   // 1/(2σ²)
	parent     []int32   // r; parent[0] = −1
	coord      []int32   // r; appended coordinate (−1 for the constant)
	mult       []float64 // r; 1/(σ√c)
}

// newTaylorBasis enumerates the r = C(M+d, d) features (O(r) time and
// memory). The caller has checked r with taylorCount.
func newTaylorBasis(dim, order int, sigma float64, r int) *taylorBasis {
	b := &taylorBasis{
		dim: dim, order: order, sigma: sigma,
		inv2s2: 1 / (2 * sigma * sigma),
		parent: make([]int32, 1, r),
		coord:  make([]int32, 1, r),
		mult:   make([]float64, 1, r),
	}
	b.parent[0], b.coord[0], b.mult[0] = -1, -1, 1
	run := make([]int32, 1, r) // multiplicity of the last coordinate
	// Degree j's features are the extensions of degree j−1's, in order.
	lo, hi := 0, 1
	for j := 1; j <= order; j++ {
		for p := lo; p < hi; p++ {
			first := int32(0)
			if p > 0 {
				first = b.coord[p]
			}
			for i := first; i < int32(dim); i++ {
				c := int32(1)
				if p > 0 && b.coord[p] == i {
					c = run[p] + 1
				}
				b.parent = append(b.parent, int32(p))
				b.coord = append(b.coord, i)
				b.mult = append(b.mult, 1/(sigma*math.Sqrt(float64(c))))
				run = append(run, c)
			}
		}
		lo, hi = hi, len(b.parent)
	}
	if len(b.parent) != r {
		panic(fmt.Sprintf("learner: taylor basis enumerated %d features, want C(%d+%d, %d) = %d", len(b.parent), order, dim, dim, r))
	}
	return b
}

// Len returns r.
func (b *taylorBasis) Len() int { return len(b.parent) }

// Map writes φ(x) = (g_k(x))_k into dst[:r] and returns it. Cost O(r + d);
// no allocation. Panics if len(x) ≠ d or len(dst) < r.
func (b *taylorBasis) Map(dst, x []float64) []float64 {
	if len(x) != b.dim {
		panic("learner: taylor basis: input of wrong dimension")
	}
	r := len(b.parent)
	dst = dst[:r]
	q := dot(x, x) * b.inv2s2
	if q > 600 {
		clear(dst) // every feature underflows (see the file comment)
		return dst
	}
	dst[0] = 1
	for k := 1; k < r; k++ {
		dst[k] = dst[b.parent[k]] * x[b.coord[k]] * b.mult[k]
	}
	e := math.Exp(-q)
	for k := range dst {
		dst[k] *= e
	}
	return dst
}

// multiIndex returns the multi-index k of feature i (for tests and docs).
func (b *taylorBasis) multiIndex(i int) []int {
	k := make([]int, b.dim)
	for ; i > 0; i = int(b.parent[i]) {
		k[b.coord[i]]++
	}
	return k
}
