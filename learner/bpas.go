package learner

// BPA-S — Budgeted Passive-Aggressive, simple variant.
//
// Reference: Z. Wang, S. Vucetic, "Online Passive-Aggressive Algorithms on a
// Budget", AISTATS 2010, §3 (BPA-S); a baseline of the FORKS paper (Wen et
// al., arXiv 2410.11188v2, Table 1, budget B only). Notes:
// docs/algorithms/forks-and-baselines.md; reference code: the LSOKL toolbox's
// binary/BPAs.m (github.com/jingcoco/Online-Kernel-Learning).
//
// Model: f(x) = Σ_{i∈SV} a_i κ(x_i, x), hinge loss ℓ = max(0, 1 − y f).
// On a round with ℓ > 0, with k_xx = κ(x, x) and τ = min(C, ℓ / k_xx):
//   - |SV| < B: store (x, τ y) (PA-I).
//   - |SV| = B: for every stored r, with k_r = κ(x_r, x), the candidate that
//     removes r and adds x with the coefficient that keeps f(x) as PA-I
//     would set it,
//     β_r = a_r k_r / k_xx + τ y,
//     costs Q_r = ½‖a_r φ(x_r) − β_r φ(x)‖² + C·max(0, 1 − y(f − a_r k_r + β_r k_xx))
//     = ½(a_r² κ(x_r, x_r) + β_r² k_xx − 2 a_r β_r k_r) + C·max(0, …).
//     The stored example r* with the smallest Q_r (the first one on ties) is
//     replaced by (x, β_{r*}).
//
// Choices and deviations:
//   - κ(x, x) and κ(x_r, x_r) come from the kernel (cached per stored
//     example), as in the paper. The toolbox hard-codes both as 1, which is
//     what every shift-invariant kernel (the Gaussian included) gives, so the
//     two agree there.
//   - A round whose example has κ(x, x) = 0 (e.g. the zero vector under a
//     linear kernel) changes nothing: its feature vector is 0, so no
//     coefficient on it can reduce the loss (and τ would be ℓ/0).
//   - Candidates are the B stored examples, as in the toolbox; the new
//     example itself is never the one discarded.
//   - The replaced example keeps its slot (the toolbox does the same).
//   - There is no loss parameter: PA-I is defined by the hinge loss. C is
//     the parameter "c" (default 1, the toolbox's C_BPAs; the FORKS paper
//     states none).

import (
	"math"

	"okstream/learner/kernel"
)

func init() {
	Register(Registration{
		Name:    "bpas",
		Summary: "budgeted passive-aggressive (simple): PA-I that, when the budget is full, replaces the support vector whose removal costs least",
		Paper:   "Wang & Vucetic, Online Passive-Aggressive Algorithms on a Budget, AISTATS 2010",
		Params: []ParamDoc{
			docKernel, docSigma, docDegree, docCoef0, docBudget,
			{Name: "c", Default: "1", Doc: "PA-I aggressiveness C > 0 (the LSOKL toolbox's default; the FORKS paper states none)"},
		},
		New: newBPAS,
	})
}

// BPAS is the simple budgeted passive-aggressive learner. Build it with
// New("bpas:...").
type BPAS struct {
	base
	kern   kernel.Kernel
	budget int
	c      float64
	set    budgetSV
	kdiag  []float64 // κ(x_i, x_i) of the stored examples, in sync with set
}

func newBPAS(p *Params, dim int) (Learner, error) {
	kern := readKernel(p)
	budget := p.Int("budget", 100, InRange(1, 1<<16))
	c := p.Float("c", 1, Positive)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return &BPAS{
		base:   newBase(p, dim, Classification),
		kern:   kern,
		budget: budget,
		c:      c,
		set:    newBudgetSV(dim, budget),
		kdiag:  make([]float64, 0, budget),
	}, nil
}

// Predict returns f(x).
func (l *BPAS) Predict(x []float64) float64 {
	l.checkDim(x)
	return l.set.score(&l.kern, x)
}

// Learn predicts x, applies the BPA-S update and returns the pre-update
// score.
func (l *BPAS) Learn(x []float64, y float64) float64 {
	f := l.Predict(x) // leaves κ(SV, x) in l.set.row()
	l.updates++
	loss := 1 - y*f
	if !(loss > 0) {
		return f
	}
	kxx := l.kern.Diag(x)
	if !(kxx > 0) {
		return f
	}
	tau := math.Min(l.c, loss/kxx)
	if !l.set.full() {
		l.set.add(x, tau*y)
		l.kdiag = append(l.kdiag, kxx)
		return f
	}
	r, beta := bpasChoose(l.set.a, l.set.row(), l.kdiag, f, y, kxx, tau, l.c)
	l.set.replace(r, x, beta)
	l.kdiag[r] = kxx
	return f
}

// bpasChoose returns the stored example r* that minimises Q_r and the
// coefficient β_{r*} the new example gets in its place. a, k and kdiag are
// the coefficients, κ(x_r, x) and κ(x_r, x_r) of the stored examples; f is
// the current score, y the label, kxx = κ(x, x) and tau the PA-I step.
func bpasChoose(a, k, kdiag []float64, f, y, kxx, tau, c float64) (best int, beta float64) {
	bestQ := math.Inf(1)
	for r, ar := range a {
		kr := k[r]
		b := ar*kr/kxx + tau*y
		dist := ar*ar*kdiag[r] + b*b*kxx - 2*ar*b*kr
		q := 0.5*dist + c*math.Max(0, 1-y*(f-ar*kr+b*kxx))
		if q < bestQ {
			bestQ, best, beta = q, r, b
		}
	}
	return best, beta
}

// MarshalBinary encodes the support vectors and their coefficients (the
// cached κ(x_i, x_i) are recomputed on restore).
func (l *BPAS) MarshalBinary() ([]byte, error) {
	e := l.encoder(8*(len(l.set.sv.Data())+l.set.len()) + 16)
	l.set.encode(e)
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured BPAS.
func (l *BPAS) UnmarshalBinary(data []byte) error {
	d, updates := l.decoder(data)
	st := decodeBudgetSV(d, l.dim, l.budget)
	if err := d.Done(); err != nil {
		return err
	}
	l.set.install(st)
	l.kdiag = l.kdiag[:0]
	for i := 0; i < l.set.len(); i++ {
		l.kdiag = append(l.kdiag, l.kern.Diag(l.set.sv.Row(i)))
	}
	l.updates = updates
	return nil
}

// Info reports the budget B and the number of stored examples.
func (l *BPAS) Info() Info {
	return l.info(l.budget, l.set.len(), l.set.bytes()+8*cap(l.kdiag))
}
