package learner

// Platt — online Platt scaling of a binary classifier's score.
//
// Reference: J. Platt, "Probabilistic outputs for support vector machines
// and comparisons to regularized likelihood methods", in Advances in Large
// Margin Classifiers, MIT Press, 1999, §2.1 (the sigmoid p = 1/(1 +
// exp(A·f + B)); we write p = σ(A·f + B), so A > 0 here). Platt fits A, B
// by batch maximum likelihood on held-out scores; online, we take one
// normalised gradient step on the log loss per label (below), the
// deviation that makes it a constant-memory, deterministic streaming
// calibrator. It is shared by package eval (its measures; eval.Platt is an
// alias) and by the one-vs-rest multi-class wrapper (ovr.go).

import "math"

// PlattEta is the step of the online Platt calibration.
const PlattEta = 0.05

// Platt is an online Platt calibration of a classifier's score s:
// p = σ(A·s + B), starting at A = 1, B = 0 (so a logistic margin is taken
// at its word), updated after each label by one step of normalised
// gradient descent on the log loss:
//
//	g = p − y01,  A ← A − η·g·s/(1 + s²),  B ← B − η·g/(1 + s²)
//
// The 1/(1 + s²) normalisation makes the change of A·s + B exactly −η·g
// whatever the score's scale (kernel scores can be in the hundreds), so
// the fixed step PlattEta is stable for every learner; the price is a slow
// adaptation to scores far from 1 in magnitude. It is deterministic and
// O(1) per event, and the zero value is not ready: use NewPlatt.
type Platt struct{ A, B float64 }

// NewPlatt returns the calibration's starting point (A = 1, B = 0).
func NewPlatt() Platt { return Platt{A: 1} }

// Prob is the calibrated probability of y = +1 for score s (0.5 for a
// non-finite score: no information).
func (c *Platt) Prob(s float64) float64 {
	if !finiteF(s) {
		return 0.5
	}
	return sigmoid(c.A*s + c.B)
}

// Update takes one step with score s, its probability p (from Prob, before
// the label was known) and label y (±1). A non-finite score is skipped.
func (c *Platt) Update(s, p, y float64) {
	if !finiteF(s) {
		return
	}
	var y01 float64
	if y > 0 {
		y01 = 1
	}
	g := p - y01
	n := 1 + s*s
	c.A -= PlattEta * g * s / n
	c.B -= PlattEta * g / n
}

// sigmoid is 1/(1 + e^(−z)), computed without overflow for any z.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

func finiteF(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
