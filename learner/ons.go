package learner

// ons is the Online Newton Step with the generalized (slab) projection, the
// second-order update shared by FORKS (Wen et al., arXiv 2410.11188v2, §3.4
// Eq. 10), PROS-N-KONS and CON-KONS (Calandriello, Lazaric, Valko, NIPS
// 2017) and NONS-ALD (Li & Liao, ICML 2023, §4):
//
//	A_t = αI + Σ_{i≤t} s_i g_i g_iᵀ        (kept as A⁻¹, Sherman–Morrison)
//	v_{t+1} = w_t − A_t⁻¹ g_t              (A_t includes g_t; see update)
//	w_{t+1} = v_{t+1} − h(φᵀv)/(φᵀA⁻¹φ) · A⁻¹φ,  h(z) = sign(z)·max(|z|−C, 0)
//
// The projection is the A-norm projection of v onto the slab |φᵀw| ≤ C for
// the feature vector φ of the next example; it is done lazily when that
// example arrives (predict), which is exactly equivalent and lets φ be
// computed once. The prediction is φᵀw = clip(φᵀv, −C, C). With C ≤ 0 there
// is no projection (w = v).
//
// Shapes: k ≤ kmax is the current dimension; v, w are k-vectors; A⁻¹ is k×k
// row-major in ainv[:k*k]. The methods do not allocate except grow.
//
// Numerics: Sherman–Morrison's relative error grows like ε times the
// factor by which A⁻¹ has shrunk since the last reset (see linalg); the
// learners using ons reset or stay short enough for this to be negligible,
// and the contract tests check restore-exactness, not accuracy.

import (
	"fmt"

	"okstream/learner/linalg"
	"okstream/learner/state"
)

type ons struct {
	k, kmax int
	alpha   float64 // A = αI after a reset
	c       float64 // slab level C (≤ 0: no projection)
	v       []float64
	w       []float64
	ainv    []float64
	u, g    []float64 // scratch
}

func newONS(kmax int, alpha, c float64) *ons {
	o := &ons{kmax: kmax, alpha: alpha, c: c,
		v: make([]float64, kmax), w: make([]float64, kmax), ainv: make([]float64, kmax*kmax),
		u: make([]float64, kmax), g: make([]float64, kmax)}
	o.reset(0)
	return o
}

// reset sets the dimension to k, v = w = 0 and A⁻¹ = I/α.
func (o *ons) reset(k int) {
	if k > o.kmax {
		panic(fmt.Sprintf("learner: ons.reset(%d) above capacity %d", k, o.kmax))
	}
	o.k = k
	clear(o.v)
	clear(o.w)
	clear(o.ainv)
	for i := 0; i < k; i++ {
		o.ainv[i*k+i] = 1 / o.alpha
	}
}

// grow appends a coordinate: v ← (v; 0) and A ← blockdiag(A, d), i.e.
// A⁻¹ ← blockdiag(A⁻¹, 1/d). It re-lays A⁻¹ out in O(k²) and grows the
// capacity if needed.
func (o *ons) grow(d float64) {
	k := o.k
	if k+1 > o.kmax {
		nk := max(2*o.kmax, 4)
		nv := make([]float64, nk)
		copy(nv, o.v[:k])
		o.v, o.w, o.u, o.g = nv, make([]float64, nk), make([]float64, nk), make([]float64, nk)
		na := make([]float64, nk*nk)
		copy(na, o.ainv[:k*k])
		o.ainv, o.kmax = na, nk
	}
	// Re-stride rows from k to k+1, last row first (in place).
	for i := k - 1; i >= 0; i-- {
		copy(o.ainv[i*(k+1):i*(k+1)+k], o.ainv[i*k:i*k+k])
		o.ainv[i*(k+1)+k] = 0
	}
	for j := 0; j < k; j++ {
		o.ainv[k*(k+1)+j] = 0
	}
	o.ainv[k*(k+1)+k] = 1 / d
	o.v[k] = 0
	o.k = k + 1
}

// predict computes w = PROJ(v, φ) (kept for update) and returns the score
// φᵀw, which equals clip(φᵀv, −C, C).
func (o *ons) predict(phi []float64) float64 {
	k := o.k
	if o.c <= 0 {
		copy(o.w[:k], o.v[:k])
		return dot(phi[:k], o.v[:k])
	}
	z, _ := linalg.SlabProject(o.w[:k], o.v[:k], o.ainv[:k*k], k, phi[:k], o.c, o.u[:k])
	return linalg.Clip(z, o.c)
}

// update takes the step for the example whose features predict last saw:
// g = d·φ + λ·w (d = ℓ'(f, y)); A⁻¹ ← (A + s ggᵀ)⁻¹; v = w − A⁻¹g with the
// updated inverse (newInverse, the papers' A_t) or the previous one (the
// PROS-N-KONS and NONS-ALD authors' code). When g = 0 nothing changes but
// v = w (the projection is kept).
func (o *ons) update(phi []float64, d, lambda, s float64, newInverse bool) error {
	k := o.k
	g := o.g[:k]
	w := o.w[:k]
	zero := true
	for i := range g {
		g[i] = d*phi[i] + lambda*w[i]
		if g[i] != 0 {
			zero = false
		}
	}
	copy(o.v[:k], w)
	if zero {
		return nil
	}
	u := o.u[:k]
	h, err := linalg.ShermanMorrison(o.ainv[:k*k], k, s, g, u) // u = A_old⁻¹ g
	if err != nil {
		return err
	}
	scale := 1.0
	if newInverse {
		scale = 1 / (1 + s*h) // A_new⁻¹ g = A_old⁻¹ g / (1 + s gᵀA_old⁻¹g)
	}
	for i := range u {
		o.v[i] -= scale * u[i]
	}
	return nil
}

// encode/decode the state (dimension, v, A⁻¹; w is recomputed by predict).
func (o *ons) encode(e *state.Encoder) {
	e.Int(o.k)
	e.F64s(o.v[:o.k])
	e.F64s(o.ainv[:o.k*o.k])
}

func (o *ons) decode(d *state.Decoder) {
	k := d.IntIn(0, 1<<16, "ons dimension")
	if d.Err() != nil || !d.Need(k*(k+1)+1, 8, "ons state") {
		return
	}
	v := d.F64sN(nil, k)
	a := d.F64sN(nil, k*k)
	if d.Err() != nil {
		return
	}
	if k > o.kmax {
		*o = *newONS(k, o.alpha, o.c)
	}
	o.k = k
	copy(o.v, v)
	copy(o.ainv, a)
}
