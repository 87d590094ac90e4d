package learner

// CON-KONS — PROS-N-KONS without restarts: on a dictionary change the ONS
// state is carried over to the new Nyström embedding.
//
// Reference: D. Calandriello, A. Lazaric, M. Valko, "Efficient second-order
// online kernel learning with adaptive embedding", NIPS 2017, where CON-KONS
// is the empirical variant of PROS-N-KONS; run as a baseline by the ALD paper
// (Li & Liao, ICML 2023, Table 3), whose authors' R code
// (github.com/JunfLi-TJU/OKR, CONS-KONS.R) we follow. Notes:
// docs/algorithms/regression.md; the transition matrix is the ALD paper's Lemma 4.2/4.3 one.
//
// Everything but the transition is PROS-N-KONS (prosnkons.go, core in
// kons.go): the same KORS dictionary, map, ONS step, parameters and
// defaults. When the dictionary grows from I_{j−1} to I_j (maps M_{j−1},
// M_j, M = Λ^{-1/2}Uᵀ), with
//
//	Q = M_j K_{I_j, I_{j−1}} M_{j−1}ᵀ     (r_j × r_{j−1}; QᵀQ = I at full rank)
//
// the code's transition is:
//   - w_j = Q w, where w is the iterate that scored the inserting round,
//     before that round's gradient step (the step is lost for w but kept in
//     A). Since Q maps the old span isometrically into the new one, the
//     prediction function is unchanged: φ_j(x)ᵀQw = φ_{j−1}(x)ᵀw for every
//     x (ALD paper, Lemma 4.3).
//   - A_j = αI + Q(A_{j−1} − αI)Qᵀ (NONS-ALD's Lemma 4.2), except when leaving
//     the first epoch (a one-point dictionary), where the code's stored A
//     still contains its αI, giving A_2 = Q A_1 Qᵀ + αI. The code keeps A
//     explicitly and inverts A + αI with solve(); we keep only A⁻¹ (ons.go)
//     and recover A by inverting it at the transition, then invert the new
//     A, both through a Cholesky factor (O(r³), like the eigendecomposition
//     that precedes them).
//   - The first round after a transition is scored with w_j unprojected
//     (φᵀw_j may exceed C); projection resumes on the round after.
//   - The ONS step uses the updated inverse (the code does; inverse=old is
//     available as for PROS-N-KONS, default new).
//
// Deviations from the paper's one-line description (as the ALD paper §6 summarizes it: A_j =
// Q A_{j−1} Qᵀ and w_j = Q w_{j−1}(s_j − 1)): we implement the code's A
// handling above, which adds αI on the new direction (and, once, on the old
// span) instead of leaving A singular there. Other deviations are those of
// PROS-N-KONS (prosnkons.go: KORS at the end of the round, prob form, round
// 1, eigenvalue truncation). If the eigenvalue truncation drops a direction,
// Q is no longer an isometry and the carried model is the projection of the
// old one; if an inversion fails (it cannot for a positive definite A), the
// epoch restarts as in PROS-N-KONS. The code's loss accounting quirk (round
// 2 counted twice) is not reproduced: eval computes the metrics.
//
// Losses: square (default; the ALD paper's setting) and, as an extension,
// the classification losses of PROS-N-KONS.

import (
	"okstream/learner/linalg"
)

func init() {
	Register(Registration{
		Name:    "con-kons",
		Summary: "CON-KONS: PROS-N-KONS that carries its Newton state over to the new Nyström embedding instead of restarting when the dictionary grows",
		Paper:   "Calandriello, Lazaric, Valko, Efficient second-order online kernel learning with adaptive embedding, NIPS 2017",
		Params: []ParamDoc{
			docKernel, docSigma, docDegree, docCoef0,
			{Name: "loss", Default: "square", Doc: "square (regression, the ALD paper's) or hinge, squared_hinge, logistic (classification)"},
			docKONSAlpha, docKORSGamma, docKORSBeta, docKORSEps, docKONSC, docKONSCurv, docKORSMax, docKORSProb,
			{Name: "inverse", Default: "new", Doc: "ONS step with the updated A_t⁻¹ (new: the paper and the ALD authors' code) or the previous A_{t−1}⁻¹ (old)"},
			docKONSSeed,
		},
		New: func(p *Params, dim int) (Learner, error) {
			k, err := newKONS(p, dim, konsCarry, Square)
			if err != nil {
				return nil, err
			}
			return &ConKons{*k}, nil
		},
	})
}

// ConKons is CON-KONS. Build it with New("con-kons:...").
type ConKons struct {
	kons
}

// carry is CON-KONS's transition from the previous epoch (map oldM,
// oldR×(n−1); the ONS in oldR dimensions, its w the iterate that scored this
// round) to the new map l.m (l.r×n) of the grown dictionary, whose kernel
// matrix is gram (n×n). It reports false, changing nothing in the ONS, if
// an inversion fails.
func (l *kons) carry(gram []float64, n int, oldM []float64, oldR int) bool {
	oldN, r, o := n-1, l.r, l.ons
	// Q = M_new · K[:, :oldN] · M_oldᵀ.
	km := make([]float64, n*oldR) // K[:, :oldN] M_oldᵀ, n×oldR
	for i := range n {
		ki := gram[i*n : i*n+oldN]
		for j := range oldR {
			km[i*oldR+j] = dot(ki, oldM[j*oldN:(j+1)*oldN])
		}
	}
	q := make([]float64, r*oldR)
	linalg.Mul(q, l.m, km, r, n, oldR)

	// A_st = A − αI (A itself when leaving the first epoch), A_new = Q A_st Qᵀ + αI.
	ast, err := konsSPDInverse(o.ainv[:oldR*oldR], oldR)
	if err != nil {
		return false
	}
	if oldN > 1 {
		for i := range oldR {
			ast[i*oldR+i] -= l.alpha
		}
	}
	qa := make([]float64, r*oldR)
	linalg.Mul(qa, q, ast, r, oldR, oldR)
	anew := make([]float64, r*r)
	for i := range r {
		for j := range r {
			anew[i*r+j] = dot(qa[i*oldR:(i+1)*oldR], q[j*oldR:(j+1)*oldR])
		}
		anew[i*r+i] += l.alpha
	}
	linalg.Symmetrize(anew, r)
	ainv, err := konsSPDInverse(anew, r)
	if err != nil {
		return false
	}
	v := make([]float64, r)
	linalg.MatVec(v, q, r, oldR, o.w[:oldR])
	o.konsSet(r, v, ainv)
	l.raw = true
	return true
}

// konsSPDInverse returns the inverse of the symmetric positive definite n×n
// row-major a (lower triangle read) through its Cholesky factor, exactly
// symmetric. It allocates.
func konsSPDInverse(a []float64, n int) ([]float64, error) {
	var w spdInvWork
	return w.inverse(make([]float64, n*n), a, n)
}

// spdInvWork is konsSPDInverse's scratch, for callers that invert at every
// sync point (the same operations in the same order: the same bits).
type spdInvWork struct {
	c   *linalg.Cholesky
	col []float64
}

// inverse writes A⁻¹ of the n×n SPD a into inv (n×n) and returns it.
func (w *spdInvWork) inverse(inv, a []float64, n int) ([]float64, error) {
	if w.c == nil {
		w.c = linalg.NewCholesky(n)
	}
	if err := w.c.Factorize(a, n); err != nil {
		return nil, err
	}
	if cap(w.col) < n {
		w.col = make([]float64, n)
	}
	col := w.col[:n]
	for j := range n {
		clear(col)
		col[j] = 1
		w.c.SolveVec(col, col)
		for i := range n {
			inv[i*n+j] = col[i]
		}
	}
	linalg.Symmetrize(inv, n)
	return inv, nil
}
