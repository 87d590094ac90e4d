package learner

// PKAWV — Projected Kernel-AWV: the kernel Azoury–Warmuth–Vovk forecaster
// restricted to a low-dimensional subspace of the RKHS, with the Taylor
// basis of the Gaussian kernel (basis=taylor, this file and taylor.go) or a
// Nyström dictionary sampled by KORS (basis=nystrom, pkawvnystrom.go).
//
// Reference: R. Jézéquel, P. Gaillard, A. Rudi, "Efficient online learning
// with kernels for adversarial large scale problems", NeurIPS 2019, Eq. (4),
// §3.1 (Thm. 4), §3.2 (Thm. 6), App. H (Algorithms 1 and 2, the Python
// listing). Notes: docs/algorithms/kernel-awv.md.
//
// Taylor basis (paper §3.1, Algorithm 1): H̃ = span{g_k : |k| ≤ M}, an
// orthonormal family (Q = I), so PKAWV is linear AWV on the explicit
// r = C(M+d, d) features φ(x) = (g_k(x))_k:
//
//	ŷ_t = φ_tᵀ(A + φ_tφ_tᵀ)⁻¹b = φ_tᵀA⁻¹b / (1 + φ_tᵀA⁻¹φ_t),
//	A = λI + Σ_{s<t} φ_sφ_sᵀ,  b = Σ_{s<t} y_sφ_s.
//
// State: the sufficient statistics S = Σφφᵀ (lower triangle) and b, and the
// lower Cholesky factor L of A = λI + S, kept by one rank-one update per
// labelled event (instead of Algorithm 1's A⁻¹). Per event: φ in O(r)
// (taylor.go), l = L⁻¹φ and g = L⁻¹b in one pass (2r²), ŷ_ridge = lᵀg,
// h = ‖l‖², ŷ_AWV = ŷ_ridge/(1+h) (awv.go); commit L ← chol(LLᵀ + φφᵀ)
// (Givens, O(r²)), S += φφᵀ, b += yφ. O(r²) time and memory, flat in t.
//
// Choices and deviations (Taylor; the Nyström ones are in pkawvnystrom.go):
//   - A kept as a Cholesky factor, not as the paper's explicit A⁻¹ updated
//     by Sherman–Morrison (Algorithm 1): the same O(r²) per event, backward
//     stable over 10⁶–10⁷ updates (where Sherman–Morrison drifts), and no
//     periodic re-inversion. Algorithm 1's typo (A_t⁻¹ on the right-hand
//     side of its update) does not arise: the prediction is
//     computed read-only from A_{t−1} by the identity above, and the state
//     changes only in Learn.
//   - S is kept besides L (r² more floats, r²/2 more flops per event) so
//     that the state is literally the additive sufficient statistic: Merge
//     (merge.go) adds S and b of two models and refactors λI + S (O(r³)),
//     which is the model trained on both streams up to rounding.
//   - variant=ridge ("Projected-KRR", the paper's §4) predicts ŷ_ridge;
//     the paper's real-data curves use it, the default is the paper's AWV.
//   - r is refused above max_features (default 2500: 16r² bytes = 100 MB;
//     M = 4 with d = 18 is r = 7315, 0.86 GB). Local: it
//     changes what is accepted, not what is computed.
//   - The Gaussian kernel only (the basis is the Gaussian RKHS's); no
//     clipping unless clip > 0; a non-finite φ or y (never with
//     validated input) leaves the model unchanged.
//   - Sharing across partitions (Sharer, issue 17; docs/sharing.md):
//     S and b are one vector st shared by vecShare in its sum mode. A
//     delta is the exact change of S and b since the last sync; a merge
//     adds the other partitions' changes and refactors λI + S (O(r³)), so
//     every copy is the model of every event merged plus its own since
//     (up to rounding), as with Merge. The sync snapshot is in the state
//     only once merged: a never-shared state's bytes are unchanged.
//     basis=nystrom refuses (its state is not additive; see Merge).
//
// Steady-state Learn and Predict do not allocate (both bases, once the
// Nyström dictionary is frozen; see pkawvnystrom.go).

import (
	"fmt"
	"math"
	"slices"

	"okstream/learner/linalg"
	"okstream/learner/state"
)

func init() {
	Register(Registration{
		Name:    "pkawv",
		Summary: "PKAWV: Kernel-AWV projected on the Taylor basis of the Gaussian kernel (r = C(M+d, d) features, O(r²) per event, mergeable and shareable across partitions) or on a KORS-sampled Nyström dictionary (regression)",
		Paper:   "Jézéquel, Gaillard, Rudi, Efficient online learning with kernels for adversarial large scale problems, NeurIPS 2019",
		Params: []ParamDoc{
			{Name: "basis", Default: "taylor", Doc: "taylor (Gaussian kernel's Taylor features, §3.1) or nystrom (KORS dictionary, §3.2)"},
			docAWVLambda, docAWVVariant, docAWVClip, docAWVTask,
			{Name: "kernel", Default: "gaussian", Doc: "basis=taylor: gaussian only; basis=nystrom: any kernel (" + docKernel.Doc + ")"},
			docAWVSigma,
			{Name: "degree", Default: "2", Doc: "polynomial degree", When: "basis=nystrom, kernel=polynomial"},
			{Name: "coef0", Default: "1", Doc: "polynomial offset c ≥ 0", When: "basis=nystrom, kernel=polynomial"},
			{Name: "order", Default: "2", Doc: "Taylor order M (0..30): features of total degree ≤ M, r = C(M+d, d) (the paper: M ∈ {2, 3, 4}; 55, 220, 715 features on casp)", When: "basis=taylor"},
			{Name: "max_features", Default: "2500", Doc: "refuse a Taylor basis with more features (memory 16r² bytes)", When: "basis=taylor", Local: true},
			{Name: "mu", Default: "1", Doc: "KORS ridge μ > 0 of the leverage scores (the paper: μ = λ = 1; kors γ)", When: "basis=nystrom"},
			{Name: "beta", Default: "1", Doc: "KORS oversampling β > 0 (the paper's experiments: 1; its theory: 12 log(n/δ))", When: "basis=nystrom"},
			{Name: "eps", Default: "0.5", Doc: "KORS accuracy ε ≥ 0 (the paper: 0.5)", When: "basis=nystrom"},
			{Name: "prob", Default: "code", Doc: "KORS probability: code = min(β(1+ε) r/(μ+r), 1), what the paper's listing computes; paper = min(β(1+ε) r/μ, 1)", When: "basis=nystrom"},
			{Name: "weight", Default: "inv_p", Doc: "weight of a KORS point drawn with probability p: inv_p (1/p, the paper's listing) or inv_sqrt_p (1/√p, the KORS literature)", When: "basis=nystrom"},
			{Name: "max_points", Default: "500", Doc: "dictionary cap; at the cap the dictionary freezes (fixed-subspace PKAWV, Thm. 3) and the history is released; 0 = unbounded", When: "basis=nystrom"},
			{Name: "max_history", Default: "20000", Doc: "past events kept to build new dictionary columns (memory 8·H·(d+1+m) bytes); after H events the dictionary freezes; 0 = unbounded (offline replays: exact Algorithm 2)", When: "basis=nystrom"},
			{Name: "pivot_tol", Default: "1e-10", Doc: "refuse a dictionary point whose new Cholesky pivot² is ≤ pivot_tol × its diagonal (near-duplicates)", When: "basis=nystrom"},
			{Name: "seed", Default: "1", Doc: "random seed of the KORS draws (basis=taylor accepts and ignores it: it draws nothing, and the seed is not part of its identity)", When: "basis=nystrom"},
		},
		New: newPKAWV,
	})
}

// PKAWV is projected Kernel-AWV. Build it with New("pkawv:...").
type PKAWV struct {
	base
	awvOpts
	chol *linalg.Cholesky // Taylor: L Lᵀ = λI + S (r×r); Nyström: L Lᵀ = G (m×m)
	c    []float64        // Taylor: b = Σyφ (r); Nyström: c_Y = K_{t−1,I}ᵀY (m)

	// basis=taylor
	basis *taylorBasis
	r     int
	sum   []float64 // S = Σφφᵀ, packed lower triangle: row i at tri(i), i+1 values
	phi   []float64 // scratch: φ(x)
	st    []float64 // S and b in one backing vector (sum, c are its parts), for sharing
	sh    vecShare  // sharing across partitions (Sharer), over st

	// basis=nystrom
	ny *pkawvNystrom

	lv, gv []float64 // scratch: L⁻¹φ, L⁻¹c
}

func newPKAWV(p *Params, dim int) (Learner, error) {
	basis := p.Enum("basis", "taylor", "taylor", "nystrom")
	o := readAWVOpts(p)
	if basis == "nystrom" {
		return newPKAWVNystrom(p, dim, o)
	}
	kern := readKernel(p, "gaussian")
	order := p.Int("order", 2, InRange(0, taylorMaxOrder))
	p.localUint64("seed", 1) // accepted (eval sets one for every run) and ignored: Taylor draws nothing
	maxFeat := p.LocalInt("max_features", 2500, InRange(1, 20000))
	if err := p.Err(); err != nil {
		return nil, err
	}
	r, ok := taylorCount(dim, order, maxFeat)
	if !ok {
		return nil, fmt.Errorf("learner pkawv: the Taylor basis of order %d in %d dimensions has C(%d+%d, %d) > max_features = %d features (memory 16r² bytes): lower the order or raise max_features", order, dim, order, dim, dim, maxFeat)
	}
	l := &PKAWV{
		base:    newBase(p, dim, o.task),
		awvOpts: o,
		basis:   newTaylorBasis(dim, order, kern.Sigma, r),
		r:       r,
		st:      make([]float64, tri(r)+r),
		phi:     make([]float64, r),
		lv:      make([]float64, r),
		gv:      make([]float64, r),
	}
	l.sum, l.c = l.st[:tri(r):tri(r)], l.st[tri(r):]
	chol, err := ridgeFactor(r, l.lambda)
	if err != nil {
		return nil, fmt.Errorf("learner pkawv: %v", err)
	}
	l.chol = chol
	return l, nil
}

// ridgeFactor is the Cholesky factor of A = λI (r×r): L = √λ I, built row
// by row (O(r²), not a factorization).
func ridgeFactor(r int, lambda float64) (*linalg.Cholesky, error) {
	c := linalg.NewCholesky(r)
	zero := make([]float64, r)
	for i := range r {
		if err := c.Append(zero[:i], math.Sqrt(lambda)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// tri is the offset of row i of a packed lower triangle (and tri(r) its
// length for r rows).
func tri(i int) int { return i * (i + 1) / 2 }

// taylorFactor returns the Cholesky factor of λI + S for the packed lower
// triangle sum, or nil if it is not numerically positive definite
// (never for a sum of outer products of finite vectors).
func (l *PKAWV) taylorFactor(sum []float64) *linalg.Cholesky {
	r := l.r
	a := make([]float64, r*r)
	for i := range r {
		copy(a[i*r:i*r+i+1], sum[tri(i):tri(i+1)])
		a[i*r+i] += l.lambda
	}
	c := linalg.NewCholesky(r)
	if c.Factorize(a, r) != nil {
		return nil
	}
	return c
}

// localUint64 is Uint64 for a parameter that does not change what the
// learner computes: validated, but left out of the canonical spec (see
// ParamDoc.Local).
func (p *Params) localUint64(key string, def uint64) uint64 {
	v := p.Uint64(key, def)
	if s, ok := p.resolved[key]; ok {
		delete(p.resolved, key)
		p.local[key] = s
	}
	return v
}

// Predict returns the AWV (or ridge) score of x. Read-only.
func (l *PKAWV) Predict(x []float64) float64 {
	l.checkDim(x)
	if l.ny != nil {
		return l.nyPredict(x)
	}
	phi := l.basis.Map(l.phi, x)
	lg, ll := awvSolve2(l.chol, l.lv, l.gv, phi, l.c)
	return l.score(lg, ll)
}

// Learn scores x, adds (x, y) to the model and returns the pre-update
// score.
func (l *PKAWV) Learn(x []float64, y float64) float64 {
	l.checkDim(x)
	l.updates++
	if l.ny != nil {
		return l.nyLearn(x, y)
	}
	phi := l.basis.Map(l.phi, x)
	lg, ll := awvSolve2(l.chol, l.lv, l.gv, phi, l.c)
	f := l.score(lg, ll)
	if math.IsNaN(y) || math.IsInf(y, 0) || l.chol.RankOneUpdate(phi) != nil {
		return f // non-finite input or label: nothing learnt
	}
	for i, v := range phi {
		axpy(v, phi[:i+1], l.sum[tri(i):tri(i+1)])
	}
	axpy(y, phi, l.c)
	return f
}

// Merge adds other's sufficient statistics to this model's (see Merger):
// S ← S + S_o, b ← b + b_o, L ← chol(λI + S) (O(r³)), Updates summed. The
// result is the model trained on both models' data, up to floating-point
// rounding (the sums are taken in another order). It refuses a model of
// another spec or dimension, and the Nyström basis.
func (l *PKAWV) Merge(other Learner) error {
	if l.ny != nil {
		return fmt.Errorf("learner pkawv: %s", errNystromShare)
	}
	if err := l.mergeCompatible(other); err != nil {
		return err
	}
	o, ok := other.(*PKAWV)
	if !ok || o.ny != nil || o.r != l.r {
		return fmt.Errorf("learner pkawv: cannot merge a %T with another basis", other)
	}
	sum := make([]float64, len(l.sum))
	for k, v := range l.sum {
		sum[k] = v + o.sum[k]
	}
	chol := l.taylorFactor(sum)
	if chol == nil {
		return fmt.Errorf("learner pkawv: merged matrix λI + S is not positive definite (non-finite state?)")
	}
	for i := range l.c {
		l.c[i] += o.c[i]
	}
	copy(l.sum, sum)
	l.chol = chol
	l.updates += o.updates
	return nil
}

// errNystromShare is why basis=nystrom refuses to share (and to merge).
const errNystromShare = "basis=nystrom cannot be merged or shared across partitions: its state is not additive — the KORS dictionary is drawn online, and the Gram factor G = K_{t,I}ᵀK_{t,I} + λK_II couples every past point with every dictionary point, so two models trained apart lack the cross terms κ(x_a, x̃_b) (and each other's histories) a merged model needs; use basis=taylor, whose state A = λI + Σφφᵀ, b = Σyφ is"

// ShareDelta (Sharer; basis=taylor only) encodes the change of the
// sufficient statistics S = Σφφᵀ and b = Σyφ since the last sync, exact
// float64s (vecShare's sum mode). basis=nystrom refuses with an error (see
// Merge), and the runtime then refuses to share it.
func (l *PKAWV) ShareDelta() ([]byte, error) {
	if l.ny != nil {
		return nil, fmt.Errorf("learner pkawv: %s", errNystromShare)
	}
	return l.sh.delta(&l.base, l.st), nil
}

// ShareMerge (Sharer; basis=taylor only) adds the other partitions'
// changes of S and b to this copy's and refactors L = chol(λI + S) (O(r³),
// as Merge): λ is added once, to the merged sum, never per copy, so the
// merged copy is the model trained on every event merged plus its own
// since, up to rounding (the sums are taken in another order and the
// factor is computed afresh instead of by rank-one updates). What stays per
// copy: the update counter (Info's events learnt by this copy) and the
// scratch; the basis, λ, the variant and clip are the spec's, identical in
// every copy. If the merged λI + S is not positive definite (non-finite
// deltas) the merge is refused with an error wrapping state.ErrCorrupt and
// the copy is left unchanged. basis=nystrom refuses (see Merge).
func (l *PKAWV) ShareMerge(deltas []SharedDelta) error {
	if l.ny != nil {
		return fmt.Errorf("learner pkawv: %s", errNystromShare)
	}
	m, err := l.sh.sumAll(&l.base, len(l.st), deltas, l.sh.scratch)
	if err != nil {
		return err
	}
	l.sh.scratch = m
	return l.ShareApply(deltas, m)
}

// ShareMix (Mixer; basis=taylor only) is Σ_q of the deltas' ΔS and Δb,
// summed from zero in the order given (the same for every copy).
func (l *PKAWV) ShareMix(deltas []SharedDelta) ([]float64, error) {
	if l.ny != nil {
		return nil, fmt.Errorf("learner pkawv: %s", errNystromShare)
	}
	return l.sh.sumAll(&l.base, len(l.st), deltas, nil)
}

// ShareApply (Mixer) is ShareMerge with ShareMix's result precomputed:
// only the own delta is decoded; then the refactor, and the same refusal.
func (l *PKAWV) ShareApply(deltas []SharedDelta, mix []float64) error {
	if l.ny != nil {
		return fmt.Errorf("learner pkawv: %s", errNystromShare)
	}
	trial := l.sh // merged into a copy first: the copy stays unchanged on a refusal
	trial.snap = slices.Clone(l.sh.snap)
	st := slices.Clone(l.st)
	if err := trial.sumApply(&l.base, st, deltas, mix); err != nil {
		return err
	}
	chol := l.taylorFactor(st[:tri(l.r)])
	if chol == nil {
		return fmt.Errorf("learner pkawv: shared deltas make λI + S not positive definite (non-finite statistics): %w", state.ErrCorrupt)
	}
	copy(l.st, st)
	l.sh, l.chol = trial, chol
	return nil
}

// MarshalBinary encodes the state: Taylor: S (lower triangle), b and the
// factor; Nyström: see nyEncode.
func (l *PKAWV) MarshalBinary() ([]byte, error) {
	if l.ny != nil {
		return l.nyMarshal()
	}
	r := l.r
	e := l.encoder(8 * (r*(r+1) + r + 4*r + 8))
	for i := range r {
		e.F64s(l.sum[tri(i):tri(i+1)])
	}
	e.F64s(l.c)
	encodeFactor(e, l.chol)
	l.sh.encode(e)
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured learner;
// on error the learner is unchanged.
func (l *PKAWV) UnmarshalBinary(data []byte) error {
	if l.ny != nil {
		return l.nyUnmarshal(data)
	}
	d, updates := l.decoder(data)
	r := l.r
	sum := make([]float64, tri(r))
	for i := range r {
		row := d.F64sN(nil, i+1)
		if d.Err() != nil {
			break
		}
		copy(sum[tri(i):], row)
	}
	c := d.F64sN(nil, r)
	chol := decodeFactor(d, r, r)
	sh := decodeVecShare(d, tri(r)+r)
	if d.Err() == nil && (chol.Size() != r || !allFiniteVec(sum) || !allFiniteVec(c)) {
		d.Fail("pkawv: inconsistent Taylor state (factor of %d rows for %d features, or non-finite statistics)", chol.Size(), r)
	}
	if err := d.Done(); err != nil {
		return err
	}
	copy(l.sum, sum)
	copy(l.c, c)
	l.chol, l.updates = chol, updates
	l.sh.set(sh)
	return nil
}

// Info reports the number of features (Taylor) or the dictionary cap and
// size (Nyström).
func (l *PKAWV) Info() Info {
	if l.ny != nil {
		return l.nyInfo()
	}
	r := l.r
	return l.info(r, r, 8*(r*r+tri(r)+6*r)+24*r)
}
