package learner

// NONS-ALD — Nyström online Newton step on the ALD dictionary.
//
// Reference: J. Li, S. Liao, "Nearly Optimal Algorithms with Sublinear
// Computational Complexity for Online Kernel Regression", ICML 2023, §4
// (§4.2 Nyström map, §4.3 ALD column selection, §4.4 Algorithm 3 with the
// epochs T_j, Eq. 8 projection, Lemma 4.2 / 4.3 epoch transitions,
// Theorem 4.6 η = 1/(4(U²+Y²))) and §6 / Appendix A.1 (experiments: U = 1,
// Y = 1, α = 25/T, μ ∈ {1, 5, 15}). Notes: docs/algorithms/regression.md;
// authors' code: NONS-ALD.R of github.com/JunfLi-TJU/OKR.
//
// Model: within epoch T_j (dictionary S(j) fixed) ONS in ℝʲ on the
// Nyström features φ_j(x) = M_j k_S(x), M_jᵀM_j = K_S⁻¹:
//
//	ŷ_t = w_tᵀφ_j(x_t),  ∇ = 2(ŷ_t − y_t) φ_j(x_t)
//	A ← A + η∇∇ᵀ,  w̃ = w − A⁻¹∇,  w_{t+1} = argmin_{|wᵀφ_j(x_{t+1})| ≤ U} ‖w − w̃‖_A
//
// with A = μI at the start. When x_t fails the ALD test it joins the
// dictionary and the state is carried into ℝ^{j+1} (no restart):
// A ← μI + Q(A − μI)Qᵀ (Lemma 4.2), w ← Qw (Lemma 4.3) with
// Q = M_{j+1} K_{S(j+1),S(j)} M_jᵀ, using the iterate already projected
// onto the slab of x_t with the old features (Eq. 12).
//
// Forms (parameter "form"; the same predictions, §4.2):
//   - cholesky (default): M = L⁻¹. Then Q = [I; 0], so the transition is
//     zero-padding — A⁻¹ ← blockdiag(A⁻¹, 1/μ), w ← (w; 0) (ons.grow) —
//     and the new point's features are (l; √α_t) from the ALD test itself.
//     O(dj + j²) every round, growth rounds included; A is never formed.
//   - svd (the paper's form, for checking): M = Σ^{-1/2}Uᵀ from the
//     eigendecomposition of K_S, recomputed at every growth, with the
//     literal Q, the Lemma 4.2/4.3 transitions on an explicit A, and A⁻¹
//     re-inverted (O(j³) per growth, as the paper and the code).
//
// Choices and deviations (docs/algorithms/regression.md):
//   - Every round predicts and updates; a growth round uses the grown
//     dictionary (§4.3–4.4, the proofs and the code), not Algorithm 3 as
//     printed (which skips growth rounds).
//   - The projection (8) for round t needs x_{t+1}; it is done lazily
//     when x_{t+1} arrives, before any growth, with the old features
//     (exactly the code's order and what Lemma 4.3 needs). A label-free
//     Predict returns clip(w̃ᵀφ_j(x), −U, U), the same number, without
//     touching the state (growth leaves the prediction unchanged).
//   - N3 (parameter "inverse"): new (default, the paper: w̃ = w − A_t⁻¹∇
//     with the updated A) or old (the authors' code: the previous inverse
//     on ALD-holding rounds, the updated one on growth rounds, where the
//     code re-solves).
//   - N2 (parameter "compat_r_code"): by default round 1 is a normal round
//     (φ_1(x_1) = 1, the epoch semantics); compat_r_code=true predicts 0
//     without an update on round 1 as the code does, and makes
//     inverse=old the default. N8 (the code skips the last update) is
//     irrelevant in a stream.
//   - η = 1/(4(U² + Y²)) with Y configurable (default 1: targets in
//     [0, 1]); the code hard-codes Y = 1.
//   - α = 25/horizon by default (the experiments), settable.
//   - Dictionary cap "budget" (not in the paper, whose dictionary is
//     unbounded): by default B0 = ⌊(√(d²+4dT) − d)/2⌋, AOGD-ALD's rule, so
//     memory stays O(dB0 + B0²) and both ALD learners keep identical
//     dictionaries by default. At the cap nothing is added any more and
//     the features are the projection φ_j(x) even where ALD fails (the
//     residual bound of Lemma G.1 then no longer holds). budget=0 is the
//     paper's unbounded dictionary. In the paper's experiments J ≪ B0.
//   - Only normalised kernels. A⁻¹ stays exactly symmetric (the
//     Sherman–Morrison update is symmetric).
//
// Memory O(dJ + J²) (the svd form stores K_S, M and A besides). Rounds
// without growth do not allocate; growth rounds may (capacity doubling;
// the svd form allocates its O(j²) transition matrices every growth).

import (
	"math"

	"okstream/learner/linalg"
)

func init() {
	Register(Registration{
		Name:    "nons-ald",
		Summary: "NONS-ALD: online Newton step on Nyström features of an ALD dictionary, slab projection |f(x)| ≤ U, epoch transitions of Lemmas 4.2/4.3 instead of restarts (regression)",
		Paper:   "Li & Liao, Nearly Optimal Algorithms with Sublinear Computational Complexity for Online Kernel Regression, ICML 2023",
		Params: []ParamDoc{
			docALDKernel, docALDSigma, docHorz, docALDAlpha,
			{Name: "budget", Default: "⌊(√(d²+4d·horizon) − d)/2⌋", Doc: "dictionary cap (not in the paper; AOGD-ALD's B0 rule so both keep the same dictionary); at the cap the dictionary is frozen; 0 = no cap (the paper; unbounded memory)"},
			{Name: "mu", Default: "1", Doc: "regularisation μ > 0: A starts at μI and each new coordinate enters with μ (paper grid {1, 5, 15})"},
			{Name: "u", Default: "1", Doc: "slab bound U: predictions are clipped to [−U, U] (paper: 1; must be ≥ Y)"},
			{Name: "y", Default: "1", Doc: "label bound Y = max |y| (targets in [0, 1] give 1); with U sets the ONS weight η = 1/(4(U²+Y²))"},
			{Name: "inverse", Default: "new (old with compat_r_code=true)", Doc: "new: ONS step with the updated A⁻¹ (paper); old: the previous A⁻¹ on ALD-holding rounds (the authors' R code)"},
			{Name: "compat_r_code", Default: "false", Doc: "reproduce the authors' R code: no update on round 1 (and inverse=old by default)"},
			{Name: "form", Default: "cholesky", Doc: "cholesky (M = L⁻¹, zero-padding transitions, O(dj + j²) per round) or svd (the paper's Σ^{-1/2}Uᵀ map with literal Q transitions, O(j³) per growth; for checking)"},
		},
		New: newNONSALD,
	})
}

// NONSALD is NONS-ALD. Build it with New("nons-ald:...").
type NONSALD struct {
	base
	dict   *aldDict
	o      *ons // v = w̃ (pending projection), A⁻¹
	mu     float64
	u      float64
	eta    float64
	newInv bool
	compat bool
	svd    bool
	phi    []float64 // scratch: features (len ≥ j+1)

	// form=svd: all j×j row-major.
	gram []float64 // K_S
	m    []float64 // Σ^{-1/2}Uᵀ
	amat []float64 // A
}

func newNONSALD(p *Params, dim int) (Learner, error) {
	kern, alpha, budget := readALD(p, dim)
	mu := p.Float("mu", 1, Positive)
	u := p.Float("u", 1, Positive)
	y := p.Float("y", 1, NonNegative)
	compat := p.Bool("compat_r_code", false)
	defInv := "new"
	if compat {
		defInv = "old"
	}
	inv := p.Enum("inverse", defInv, "new", "old")
	form := p.Enum("form", "cholesky", "cholesky", "svd")
	if err := p.Err(); err != nil {
		return nil, err
	}
	c := aldInitCap(budget)
	return &NONSALD{
		base:   newBase(p, dim, Regression),
		dict:   newALDDict(kern, alpha, budget, dim),
		o:      newONS(c, mu, u),
		mu:     mu,
		u:      u,
		eta:    1 / (4 * (u*u + y*y)),
		newInv: inv == "new",
		compat: compat,
		svd:    form == "svd",
		phi:    make([]float64, c+1),
	}, nil
}

// aldDictionary exposes the dictionary to tests.
func (l *NONSALD) aldDictionary() *aldDict { return l.dict }

// features returns φ_j(x) for the current dictionary, after the ALD test
// has left k_S(x) in dict.k and L⁻¹k in lt.
func (l *NONSALD) features(lt []float64) []float64 {
	if !l.svd {
		return lt
	}
	j := l.dict.size()
	phi := l.phi[:j]
	linalg.MatVec(phi, l.m[:j*j], j, j, l.dict.k[:j])
	return phi
}

// Predict returns clip(w̃ᵀφ_j(x), −U, U) — the prediction Learn would
// make, whether or not x would grow the dictionary (Lemma 4.3).
func (l *NONSALD) Predict(x []float64) float64 {
	l.checkDim(x)
	lt, _ := l.dict.residual(x)
	phi := l.features(lt)
	return linalg.Clip(dot(phi, l.o.v[:l.o.k]), l.u)
}

// Learn predicts x, runs the NONS-ALD round on (x, y) (lazy projection,
// ALD test, epoch transition, ONS step) and returns the pre-update score.
func (l *NONSALD) Learn(x []float64, y float64) float64 {
	l.checkDim(x)
	first := l.updates == 0
	l.updates++
	d := l.dict
	o := l.o
	lt, at := d.residual(x)
	phi := l.features(lt)
	// Projection (8) of the pending w̃ onto the slab of x_t, with the old
	// features and A_j(t−1)⁻¹; f = clip(w̃ᵀφ) is the prediction.
	f := o.predict(phi)
	grew := false
	if d.admits(at) {
		if l.svd {
			if grew = l.growSVD(x, lt, at); grew {
				phi = l.phi[:o.k]
			}
		} else if d.add(x, lt, at) {
			// Lemma 4.3 starts from the projected iterate; in the Cholesky
			// basis Q = [I; 0]: w ← (w; 0), A⁻¹ ← blockdiag(A⁻¹, 1/μ).
			j := o.k
			copy(o.v[:j], o.w[:j])
			o.grow(l.mu)
			if len(l.phi) < j+2 {
				l.phi = make([]float64, 2*(j+2))
			}
			phi = l.phi[:j+1]
			copy(phi, lt)
			phi[j] = math.Sqrt(at)
			grew = true
		}
		if grew {
			// Sets o.w for the step; the prediction is unchanged by the
			// transition (|(w;0)ᵀφ_new| = |f| ≤ U), f is kept as computed.
			o.predict(phi)
		}
	}
	if l.compat && first {
		return f // the authors' code: round 1 predicts 0 and does not learn
	}
	g := 2 * (f - y)
	if err := o.update(phi, g, 0, l.eta, l.newInv || grew); err == nil && l.svd && g != 0 {
		// The explicit A of the paper's form: A += η g² φφᵀ.
		j := o.k
		s := l.eta * g * g
		for r := 0; r < j; r++ {
			row := l.amat[r*j : r*j+j]
			pr := s * phi[r]
			for c := range row {
				row[c] += pr * phi[c]
			}
		}
	}
	return f
}

// growSVD is the paper's transition (Lemmas 4.2–4.3, the code's growth
// branch): extend K_S, eigendecompose it, form M_new = Σ^{-1/2}Uᵀ and
// Q = M_new K_{S(j+1),S(j)} M_oldᵀ, set A = μI + Q(A − μI)Qᵀ, w = Qw
// (projected iterate), A⁻¹ by a fresh inversion, and leave
// φ_{j+1}(x) = M_new k_{S(j+1)}(x) in l.phi. It reports false (state
// unchanged, no growth) if the new Gram matrix is numerically singular.
func (l *NONSALD) growSVD(x, lt []float64, at float64) bool {
	d := l.dict
	o := l.o
	jo := o.k
	jn := jo + 1
	kxx := d.kern.Diag(x)
	kold := d.k[:jo]
	gram := make([]float64, jn*jn)
	for i := 0; i < jo; i++ {
		copy(gram[i*jn:i*jn+jo], l.gram[i*jo:i*jo+jo])
		gram[i*jn+jo] = kold[i]
		gram[jo*jn+i] = kold[i]
	}
	gram[jo*jn+jo] = kxx
	vals, vecs, err := linalg.SymEig(gram, jn)
	if err != nil || !(vals[jn-1] > 0) {
		return false
	}
	mnew := make([]float64, jn*jn)
	for r := 0; r < jn; r++ {
		s := 1 / math.Sqrt(vals[r])
		for i := 0; i < jn; i++ {
			mnew[r*jn+i] = s * vecs[i*jn+r]
		}
	}
	// Q = M_new · K[:, :jo] · M_oldᵀ  (jn×jo).
	kmo := make([]float64, jn*jo) // K[:, :jo] M_oldᵀ
	for i := 0; i < jn; i++ {
		gi := gram[i*jn : i*jn+jo]
		for c := 0; c < jo; c++ {
			kmo[i*jo+c] = dot(gi, l.m[c*jo:c*jo+jo])
		}
	}
	q := make([]float64, jn*jo)
	linalg.Mul(q, mnew, kmo, jn, jn, jo)
	// A_new = μI + Q (A − μI) Qᵀ.
	b := make([]float64, jo*jo)
	copy(b, l.amat[:jo*jo])
	for i := 0; i < jo; i++ {
		b[i*jo+i] -= l.mu
	}
	qb := make([]float64, jn*jo)
	linalg.Mul(qb, q, b, jn, jo, jo)
	anew := make([]float64, jn*jn)
	for i := 0; i < jn; i++ {
		for c := 0; c < jn; c++ {
			anew[i*jn+c] = dot(qb[i*jo:i*jo+jo], q[c*jo:c*jo+jo])
		}
		anew[i*jn+i] += l.mu
	}
	linalg.Symmetrize(anew, jn)
	// A_new⁻¹ by Cholesky, column by column.
	ch := linalg.NewCholesky(jn)
	if err := ch.Factorize(anew, jn); err != nil {
		return false
	}
	ainv := make([]float64, jn*jn)
	col := make([]float64, jn)
	for c := 0; c < jn; c++ {
		clear(col)
		col[c] = 1
		ch.SolveVec(col, col)
		for i := 0; i < jn; i++ {
			ainv[i*jn+c] = col[i]
		}
	}
	linalg.Symmetrize(ainv, jn)
	// w_new = Q w (the iterate projected with the old features).
	wnew := make([]float64, jn)
	linalg.MatVec(wnew, q, jn, jo, o.w[:jo])
	// Commit.
	if !d.add(x, lt, at) {
		return false
	}
	o.grow(l.mu) // capacity and dimension jn; contents replaced below
	copy(o.v[:jn], wnew)
	copy(o.ainv[:jn*jn], ainv)
	l.gram, l.m, l.amat = gram, mnew, anew
	if len(l.phi) < jn+1 {
		l.phi = make([]float64, 2*(jn+1))
	}
	knew := d.k[:jn]
	knew[jo] = kxx
	linalg.MatVec(l.phi[:jn], mnew, jn, jn, knew)
	return true
}

// MarshalBinary encodes the dictionary and the ONS state (w̃, A⁻¹), and
// for form=svd also K_S, the map M and A.
func (l *NONSALD) MarshalBinary() ([]byte, error) {
	j := l.dict.size()
	e := l.encoder(8 * (j*l.dim + 5*j*j + 2*j + 16))
	l.dict.encode(e)
	l.o.encode(e)
	if l.svd {
		e.F64s(l.gram)
		e.F64s(l.m)
		e.F64s(l.amat)
	}
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured NONS-ALD;
// on error the learner is unchanged.
func (l *NONSALD) UnmarshalBinary(data []byte) error {
	d, updates := l.decoder(data)
	dict := l.dict.decode(d)
	o := newONS(1, l.mu, l.u)
	o.decode(d)
	var gram, m, amat []float64
	if l.svd {
		gram = d.F64s(nil)
		m = d.F64s(nil)
		amat = d.F64s(nil)
	}
	if err := d.Done(); err != nil {
		return err
	}
	j := dict.size()
	if o.k != j || (l.svd && (len(gram) != j*j || len(m) != j*j || len(amat) != j*j)) {
		d.Fail("nons-ald: inconsistent state (dictionary %d, ONS dimension %d)", j, o.k)
		return d.Err()
	}
	if c := max(2*j, aldInitCap(l.dict.budget)); o.kmax < c {
		big := newONS(c, l.mu, l.u)
		big.k = j
		copy(big.v, o.v[:j])
		copy(big.ainv, o.ainv[:j*j])
		o = big
	}
	l.dict, l.o, l.updates = dict, o, updates
	l.phi = make([]float64, o.kmax+1)
	if l.svd {
		l.gram, l.m, l.amat = gram, m, amat
	}
	return nil
}

// Info reports the dictionary cap and size.
func (l *NONSALD) Info() Info {
	k := l.o.kmax
	bytes := l.dict.bytes() + 8*(k*k+4*k+len(l.phi)+len(l.gram)+len(l.m)+len(l.amat))
	return l.info(l.dict.budget, l.dict.size(), bytes)
}
