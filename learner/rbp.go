package learner

// RBP — Random Budget Perceptron.
//
// Reference: G. Cavallanti, N. Cesa-Bianchi, C. Gentile, "Tracking the best
// hyperplane with a simple budget perceptron", Machine Learning 69(2–3),
// 2007 (the "randomized budget perceptron"); a baseline of the FORKS paper
// (Wen et al., arXiv 2410.11188v2, Table 1, budget B only). Notes:
// docs/algorithms/forks-and-baselines.md; reference code: the LSOKL toolbox's
// binary/RBP.m (github.com/jingcoco/Online-Kernel-Learning), whose update
// rule this follows.
//
// Model: f(x) = Σ_{i∈SV} a_i κ(x_i, x). On a mistake (y f ≤ 0): if |SV| = B,
// discard one stored example chosen uniformly at random; then store (x, y)
// with coefficient a = y. No other round changes the model.
//
// Choices and deviations:
//   - Mistake rule: y f ≤ 0, i.e. a score of exactly 0 is a mistake, as
//     everywhere in okstream (learner.Mistake). The toolbox predicts
//     sign(0) = +1, so with f = 0 it updates only when y = −1. The two differ
//     on the very first round (empty model) and wherever every kernel value
//     underflows to 0 (σ far too small for the data).
//   - The discarded example's slot is overwritten by the new one instead of
//     shifting the remaining examples (the toolbox deletes and appends). The
//     model is the same set; only the summation order of f differs.
//   - The random index comes from okstream's seeded generator (learner/rng),
//     whose state is part of the marshalled state.
//   - There is no loss parameter: the perceptron is mistake driven. The
//     FORKS paper's "all algorithms are trained using hinge loss" cannot
//     apply to it.

import (
	"okstream/learner/kernel"
)

func init() {
	Register(Registration{
		Name:    "rbp",
		Summary: "random budget perceptron: kernel perceptron that discards a uniformly random support vector when the budget is full",
		Paper:   "Cavallanti, Cesa-Bianchi, Gentile, Tracking the best hyperplane with a simple budget perceptron, Mach. Learn. 2007",
		Params: []ParamDoc{
			docKernel, docSigma, docDegree, docCoef0, docBudget, docSeed,
		},
		New: newRBP,
	})
}

// RBP is the random budget perceptron. Build it with New("rbp:...").
type RBP struct {
	randomBudget
	kern kernel.Kernel
}

func newRBP(p *Params, dim int) (Learner, error) {
	kern := readKernel(p)
	budget := p.Int("budget", 100, InRange(1, 1<<16))
	seed := p.Uint64("seed", 1)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return &RBP{
		randomBudget: newRandomBudget(newBase(p, dim, Classification), dim, budget, seed),
		kern:         kern,
	}, nil
}

// Predict returns f(x).
func (l *RBP) Predict(x []float64) float64 {
	l.checkDim(x)
	return l.set.score(&l.kern, x)
}

// Learn predicts x, applies the perceptron update on a mistake and returns
// the pre-update score.
func (l *RBP) Learn(x []float64, y float64) float64 {
	f := l.Predict(x)
	l.updates++
	if !Mistake(f, y) {
		return f
	}
	if l.set.full() {
		l.set.replace(l.rnd.IntN(l.set.len()), x, y)
	} else {
		l.set.add(x, y)
	}
	return f
}
