package learner

// AOGD-ALD — kernel online gradient descent approximated with the ALD
// dictionary.
//
// Reference: J. Li, S. Liao, "Nearly Optimal Algorithms with Sublinear
// Computational Complexity for Online Kernel Regression", ICML 2023, §3
// (Algorithm 1, Eq. 2–6, Theorem 3.2) and §6 / Appendix A.1 (experiment
// settings: U = 2, α = 25/T, B0 of Theorem 3.2). Notes:
// docs/algorithms/regression.md; authors' code: AOGD-ALD.R of
// github.com/JunfLi-TJU/OKR.
//
// Model: f_t ∈ span{κ(s, ·) : s ∈ S} with S the ALD dictionary (ald.go).
// With g = ℓ'(ŷ, y) = 2(ŷ − y) for the square loss:
//   - ALD holds (α_t ≤ α): f̄ = f − η_t g Φ_S β* (Eq. 6), S unchanged;
//   - ALD fails: f̄ = f − η_t g κ(x, ·) (Eq. 2), x joins S;
//   - f ← min{1, U/‖f̄‖} f̄ (Eq. 3, the ball ‖f‖_H ≤ U);
//   - η_t = U / √(1 + Σ_{τ≤t} ‖∇̂_τ‖²) with ‖∇̂‖² = g²‖Φ_S β*‖² on ALD
//     rounds and g²κ(x, x) otherwise.
//
// Forms (parameter "form"):
//   - primal (default, ours): f(x) = wᵀe(x) in the orthonormal basis
//     e(x) = L⁻¹k_S(x) of span Φ_S (L Lᵀ = K_S). The ALD direction Φ_S β*
//     has coordinates l = L⁻¹k exactly, a new point κ(x, ·) has
//     coordinates (l; √α_t), and ‖f‖ = ‖w‖ exactly (no drifting norm
//     bookkeeping). One O(dj + j²) solve per round gives the
//     prediction, the ALD test and the update.
//   - dual (for checking; Algorithm 1's form, the paper's and the code's):
//     f = Σ a_i κ(s_i, ·) with K_S⁻¹ kept explicitly (block growth),
//     β = K_S⁻¹k, ‖Φ_S β*‖² = kᵀβ, and ‖f‖² tracked incrementally with
//     ⟨f, Φ_S β*⟩ = ⟨f, κ(x, ·)⟩ = ŷ. The add/skip decision is the shared
//     dictionary's (Cholesky) test, so both forms build the same
//     dictionary; everything else is computed from K_S⁻¹. Costs an extra
//     O(j²) per round.
//
// Choices and deviations (docs/algorithms/regression.md):
//   - η_t is computed after the ALD test, since it depends on ∇̂_t
//     (Algorithm 1 lists it before; the authors' code does it after).
//   - B0 = ⌊(√(d² + 4dT) − d)/2⌋ (paper; the code rounds). T is the
//     "horizon" parameter (a stream has no T; okstream eval sets it to the
//     dataset length), and so is α = 25/T by default.
//   - budget_policy. The paper (kogd): once |S| = B0, every later point
//     is stored and updated with the exact gradient (plain KOGD, dual form)
//     — memory and time grow by one point per event without bound. The
//     service default (freeze, not in the paper): once |S| = B0 the
//     dictionary stops growing and every round takes the projected
//     gradient Φ_S β* (as if ALD held), so memory stays O(dB0 + B0²); the
//     regret guarantee of Theorem 3.2 no longer applies after that point.
//     In the paper's experiments J ≪ B0, so both give the same numbers.
//   - A point is added whenever ALD fails, also when g = 0 (the code).
//   - Only normalised kernels (Gaussian, Laplacian, Cauchy), as the theory requires.
//
// Cost per round O(dj + j²) in the ALD phase, no allocation except when
// the dictionary grows (capacity doubling); O(dt) per round and one
// allocation per round now and then in the KOGD phase (budget_policy=kogd).

import (
	"math"

	"okstream/learner/kernel"
)

func init() {
	Register(Registration{
		Name:    "aogd-ald",
		Summary: "AOGD-ALD: kernel OGD with AdaGrad-norm steps on an ALD dictionary (gradients projected onto the dictionary's span when ALD holds), ball ‖f‖ ≤ U (regression)",
		Paper:   "Li & Liao, Nearly Optimal Algorithms with Sublinear Computational Complexity for Online Kernel Regression, ICML 2023",
		Params: []ParamDoc{
			docALDKernel, docALDSigma, docHorz, docALDAlpha, docALDBudget,
			{Name: "budget_policy", Default: "freeze", Doc: "when the dictionary reaches the budget: freeze (service default, not in the paper: keep the dictionary, always take the projected gradient; memory bounded) or kogd (the paper: continue as plain kernel OGD storing every point; memory grows without bound)"},
			{Name: "u", Default: "2", Doc: "radius U of the ball ‖f‖_H ≤ U and step scale η_t = U/√(1+Σ‖∇̂‖²) (paper experiments: 2; must be ≥ the label bound Y)"},
			{Name: "form", Default: "primal", Doc: "primal (orthonormal Cholesky basis, exact ‖f‖; ours) or dual (explicit K⁻¹ and tracked ‖f‖², the paper's form; for checking)"},
		},
		New: newAOGDALD,
	})
}

// AOGDALD is AOGD-ALD. Build it with New("aogd-ald:...").
type AOGDALD struct {
	base
	dict *aldDict
	u    float64
	kogd bool // budget_policy=kogd
	dual bool // form=dual

	g2 float64   // 1 + Σ‖∇̂‖²
	w  []float64 // primal coordinates (form=primal, ALD phase); len = dictionary size

	// form=dual, and the KOGD phase of either form.
	a     []float64   // coefficients of the dictionary points, then of the KOGD-phase points
	n2    float64     // ‖f‖², tracked incrementally
	inv   *aldInverse // K_S⁻¹ (form=dual, ALD phase)
	full  bool        // KOGD phase (budget reached, budget_policy=kogd)
	extra *kernel.Matrix
	beta  []float64 // scratch: K_S⁻¹k (form=dual)
	krow  []float64 // scratch: kernel row of the KOGD-phase points
}

func newAOGDALD(p *Params, dim int) (Learner, error) {
	kern, alpha, budget := readALD(p, dim)
	policy := p.Enum("budget_policy", "freeze", "freeze", "kogd")
	u := p.Float("u", 2, Positive)
	form := p.Enum("form", "primal", "primal", "dual")
	if err := p.Err(); err != nil {
		return nil, err
	}
	l := &AOGDALD{
		base: newBase(p, dim, Regression),
		dict: newALDDict(kern, alpha, budget, dim),
		u:    u,
		kogd: policy == "kogd",
		dual: form == "dual",
		g2:   1,
	}
	c := aldInitCap(budget)
	if l.dual {
		l.a = make([]float64, 0, c)
		l.inv = &aldInverse{}
		l.beta = make([]float64, c)
	} else {
		l.w = make([]float64, 0, c)
	}
	return l, nil
}

// aldDictionary exposes the dictionary to tests.
func (l *AOGDALD) aldDictionary() *aldDict { return l.dict }

// Predict returns f_t(x).
func (l *AOGDALD) Predict(x []float64) float64 {
	l.checkDim(x)
	if l.full {
		return l.dualScore(x)
	}
	if l.dual {
		return dot(l.a, l.dict.kern.Row(l.dict.k, l.dict.sv, x))
	}
	lt, _ := l.dict.residual(x)
	return dot(l.w, lt)
}

// dualScore is Σ a_i κ(s_i, x) over the dictionary and the KOGD-phase
// points (KOGD phase).
func (l *AOGDALD) dualScore(x []float64) float64 {
	j := l.dict.size()
	f := dot(l.a[:j], l.dict.kern.Row(l.dict.k, l.dict.sv, x))
	if n := l.extra.Len(); n > 0 {
		if cap(l.krow) < n {
			l.krow = make([]float64, 2*n)
		}
		f += dot(l.a[j:], l.dict.kern.Row(l.krow, l.extra, x))
	}
	return f
}

// Learn predicts x, takes the AOGD-ALD step on (x, y) and returns the
// pre-update score.
func (l *AOGDALD) Learn(x []float64, y float64) float64 {
	l.checkDim(x)
	l.updates++
	switch {
	case l.full:
		return l.learnKOGD(x, y)
	case l.dual:
		return l.learnDual(x, y)
	}
	d := l.dict
	lt, at := d.residual(x)
	f := dot(l.w, lt)
	g := 2 * (f - y)
	if d.admits(at) && d.add(x, lt, at) {
		// Exact gradient g κ(x, ·), coordinates (l; √α_t) in the grown
		// basis; ‖κ(x, ·)‖² = κ(x, x).
		l.g2 += g * g * d.kern.Diag(x)
		eta := l.u / math.Sqrt(l.g2)
		axpy(-eta*g, lt, l.w)
		l.w = append(l.w, -eta*g*math.Sqrt(at))
	} else {
		// Projected gradient g Φ_S β*, coordinates l.
		l.g2 += g * g * dot(lt, lt)
		eta := l.u / math.Sqrt(l.g2)
		axpy(-eta*g, lt, l.w)
	}
	if nw := dot(l.w, l.w); nw > l.u*l.u {
		s := l.u / math.Sqrt(nw)
		for i := range l.w {
			l.w[i] *= s
		}
	}
	l.maybeKOGD()
	return f
}

// learnDual is the round of form=dual in the ALD phase (Algorithm 1).
func (l *AOGDALD) learnDual(x []float64, y float64) float64 {
	d := l.dict
	lt, at := d.residual(x) // the shared add/skip decision
	j := d.size()
	k := d.k[:j]
	f := dot(l.a, k)
	g := 2 * (f - y)
	beta := l.inv.apply(l.beta, k)
	q := dot(k, beta) // ‖Φ_S β*‖² = kᵀK⁻¹k
	if d.admits(at) && d.add(x, lt, at) {
		kxx := d.kern.Diag(x)
		l.g2 += g * g * kxx
		eta := l.u / math.Sqrt(l.g2)
		l.n2 += -2*eta*g*f + eta*eta*g*g*kxx // ⟨f, κ(x, ·)⟩ = ŷ
		schur := kxx - q
		if !(schur > 0) {
			schur = at // round-off guard; at > α > 0 for an admitted point
		}
		l.inv.border(beta, schur)
		l.a = append(l.a, -eta*g)
		if len(l.beta) < j+1 {
			l.beta = make([]float64, 2*(j+1))
		}
	} else {
		l.g2 += g * g * q
		eta := l.u / math.Sqrt(l.g2)
		l.n2 += -2*eta*g*f + eta*eta*g*g*q // ⟨f, Φ_S β*⟩ = aᵀK_S β* = aᵀk = ŷ
		axpy(-eta*g, beta, l.a)
	}
	l.projectDual()
	l.maybeKOGD()
	return f
}

// learnKOGD is a round of the KOGD phase (budget_policy=kogd after the
// budget): exact gradient, every point stored.
func (l *AOGDALD) learnKOGD(x []float64, y float64) float64 {
	f := l.dualScore(x)
	g := 2 * (f - y)
	kxx := l.dict.kern.Diag(x)
	l.g2 += g * g * kxx
	eta := l.u / math.Sqrt(l.g2)
	l.n2 += -2*eta*g*f + eta*eta*g*g*kxx
	l.extra.Append(x)
	l.a = append(l.a, -eta*g)
	l.projectDual()
	return f
}

// projectDual rescales a onto the ball when the tracked ‖f‖² exceeds U².
func (l *AOGDALD) projectDual() {
	if l.n2 > l.u*l.u {
		s := l.u / math.Sqrt(l.n2)
		for i := range l.a {
			l.a[i] *= s
		}
		l.n2 = l.u * l.u
	}
}

// maybeKOGD enters the KOGD phase once the dictionary reaches the budget
// under budget_policy=kogd (Algorithm 1, line 5). The primal form converts
// its coordinates to dual coefficients a = L⁻ᵀw, with ‖f‖² = ‖w‖².
func (l *AOGDALD) maybeKOGD() {
	d := l.dict
	if !l.kogd || d.budget == 0 || d.size() < d.budget {
		return
	}
	if !l.dual {
		l.a = make([]float64, len(l.w), 2*len(l.w)+16)
		d.chol.SolveLT(l.a, l.w)
		l.n2 = dot(l.w, l.w)
		l.w = l.w[:0]
	}
	l.inv = nil
	l.full = true
	l.extra = kernel.NewMatrix(d.sv.Dim(), 64)
	l.krow = make([]float64, 64)
}

// MarshalBinary encodes the dictionary, the step accumulator and the model
// (w, or a and ‖f‖² with K⁻¹ and the KOGD-phase points).
func (l *AOGDALD) MarshalBinary() ([]byte, error) {
	j := l.dict.size()
	e := l.encoder(8 * (j*l.dim + j*j + len(l.a) + len(l.w) + 16))
	l.dict.encode(e)
	e.F64(l.g2)
	e.Bool(l.full)
	e.F64s(l.w)
	e.F64s(l.a)
	e.F64(l.n2)
	if l.inv != nil {
		e.F64s(l.inv.m[:l.inv.n*l.inv.n])
	} else {
		e.F64s(nil)
	}
	if l.full {
		e.F64s(l.extra.Data())
	}
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured AOGD-ALD;
// on error the learner is unchanged.
func (l *AOGDALD) UnmarshalBinary(data []byte) error {
	d, updates := l.decoder(data)
	dict := l.dict.decode(d)
	g2 := d.F64()
	full := d.Bool()
	w := d.F64s(nil)
	a := d.F64s(nil)
	n2 := d.F64()
	inv := d.F64s(nil)
	var extra []float64
	if full {
		extra = d.F64s(nil)
	}
	if err := d.Done(); err != nil {
		return err
	}
	j := dict.size() // dict is non-nil: decode returns nil only with an error
	nx := len(extra) / l.dim
	bad := len(extra)%l.dim != 0 || !(g2 >= 1)
	switch {
	case full:
		bad = bad || !l.kogd || len(w) != 0 || len(inv) != 0 || len(a) != j+nx || j != l.dict.budget
	case l.dual:
		bad = bad || len(w) != 0 || len(a) != j || len(inv) != j*j
	default:
		bad = bad || len(w) != j || len(a) != 0 || len(inv) != 0
	}
	if bad {
		d.Fail("aogd-ald: inconsistent state (dictionary %d, w %d, a %d, K⁻¹ %d, KOGD points %d values)", j, len(w), len(a), len(inv), len(extra))
		return d.Err()
	}
	c := max(2*j, aldInitCap(l.dict.budget))
	l.dict, l.g2, l.full, l.n2, l.updates = dict, g2, full, n2, updates
	l.w, l.a, l.inv, l.extra, l.krow = nil, nil, nil, nil, nil
	switch {
	case full:
		l.a = append(make([]float64, 0, 2*len(a)+16), a...)
		l.extra = kernel.NewMatrix(l.dim, max(64, 2*nx))
		if err := l.extra.SetData(extra); err != nil {
			return err
		}
		l.krow = make([]float64, max(64, 2*nx))
	case l.dual:
		l.a = append(make([]float64, 0, c), a...)
		l.inv = &aldInverse{n: j, m: make([]float64, c*c)}
		copy(l.inv.m, inv)
		l.beta = make([]float64, c+1)
	default:
		l.w = append(make([]float64, 0, c), w...)
	}
	return nil
}

// Info reports the dictionary budget B0 and the number of stored points
// (dictionary plus KOGD-phase points).
func (l *AOGDALD) Info() Info {
	used := l.dict.size()
	bytes := l.dict.bytes() + 8*(cap(l.w)+cap(l.a)+len(l.beta)+len(l.krow))
	if l.inv != nil {
		bytes += 8 * len(l.inv.m)
	}
	if l.full {
		used += l.extra.Len()
		bytes += l.extra.Bytes()
	}
	return l.info(l.dict.budget, used, bytes)
}
