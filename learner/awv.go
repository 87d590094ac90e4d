package learner

// Shared parts of the Azoury–Warmuth–Vovk forecasters: exact Kernel-AWV
// (kawv.go) and PKAWV with its Taylor and Nyström bases (pkawv.go,
// pkawvnystrom.go). PKAWV paper Eqs. 3–4; notes: docs/algorithms/kernel-awv.md.
//
// The identity all three rest on (ours, checked by
// TestPKAWVSec16ReadOnlyPredictionEqualsAlgorithm1 and
// TestKAWVSec21CholeskyEqualsBorderedInverse): with A the regularized Gram matrix of
// the past rounds, b the matching right-hand side, φ the current input's
// feature vector, u = A⁻¹φ and h = φᵀu,
//
//	ŷ_AWV = φᵀ(A + φφᵀ)⁻¹b = φᵀA⁻¹b / (1 + h) = ŷ_ridge / (1 + h),
//
// so the AWV prediction is computed read-only from the state of the past
// rounds, and the state changes only when the label arrives. With A = LLᵀ
// (lower Cholesky factor), l = L⁻¹φ and g = L⁻¹b: ŷ_ridge = lᵀg and
// h = ‖l‖², two forward substitutions.

import (
	"fmt"
	"math"

	"okstream/learner/linalg"
	"okstream/learner/state"
)

// Parameter docs shared by kawv and pkawv.
var (
	docAWVLambda  = ParamDoc{Name: "lambda", Default: "1", Doc: "regularization λ > 0 (the paper's experiments: 1)"}
	docAWVVariant = ParamDoc{Name: "variant", Default: "awv", Doc: "awv: the paper's forecaster, ridge with the extra penalty f(x_t)² (= ridge/(1+h_t)); ridge: kernel ridge regression / Projected-KRR, which the paper's real-data curves use (same sign, so the same classification error)"}
	docAWVClip    = ParamDoc{Name: "clip", Default: "0", Doc: "if > 0, scores are clipped to [−clip, clip] (never increases the square loss when |y| ≤ clip; not part of the paper's algorithm, which needs no bound on y); 0 = no clipping"}
	docAWVTask    = ParamDoc{Name: "task", Default: "regression", Doc: "regression or classification (labels ±1, decision sign(score)): only what the learner reports as its task; the model is the same square-loss forecaster (the paper's classification experiments)"}
	docAWVSigma   = ParamDoc{Name: "sigma", Default: "1", Doc: "kernel width σ > 0 (the paper: 1, except 4 on SUSY)", When: "shift-invariant kernel"}
)

// awvOpts are the options common to the AWV learners.
type awvOpts struct {
	lambda float64
	ridge  bool    // variant=ridge
	clip   float64 // 0: none
	task   Task
}

func readAWVOpts(p *Params) awvOpts {
	o := awvOpts{
		lambda: p.Float("lambda", 1, Positive),
		ridge:  p.Enum("variant", "awv", "awv", "ridge") == "ridge",
		clip:   p.Float("clip", 0, NonNegative),
		task:   Regression,
	}
	if p.Enum("task", "regression", "regression", "classification") == "classification" {
		o.task = Classification
	}
	return o
}

// score turns the ridge prediction and the leverage h = φᵀA⁻¹φ into the
// reported score: ridge/(1+h) for AWV, ridge for the ridge variant, clipped
// if configured. A non-finite h (never, with finite inputs) gives ridge.
func (o *awvOpts) score(ridge, h float64) float64 {
	f := ridge
	if !o.ridge && h > 0 && !math.IsInf(h, 0) {
		f = ridge / (1 + h)
	}
	if o.clip > 0 {
		f = math.Max(-o.clip, math.Min(o.clip, f))
	}
	return f
}

// awvSolve2 solves L l = a and L g = c (L the n×n factor of chol, n =
// len(a) = len(c)) in one pass over L, writes l and g into dl, dg and
// returns lᵀg and ‖l‖². Cost 2n² flops; no allocation.
func awvSolve2(chol *linalg.Cholesky, dl, dg, a, c []float64) (lg, ll float64) {
	n := chol.Size()
	if len(a) != n || len(c) != n || len(dl) < n || len(dg) < n {
		panic(fmt.Sprintf("learner: awvSolve2: factor %d, vectors %d, %d", n, len(a), len(c)))
	}
	dl, dg = dl[:n], dg[:n]
	for i := range n {
		row := chol.Row(i)
		var sa, sc float64
		for j, v := range row[:i] {
			sa += v * dl[j]
			sc += v * dg[j]
		}
		li := (a[i] - sa) / row[i]
		gi := (c[i] - sc) / row[i]
		dl[i], dg[i] = li, gi
		lg += li * gi
		ll += li * li
	}
	return lg, ll
}

// encodeFactor appends the rows of a Cholesky factor (row i has i+1
// entries), so that decodeFactor rebuilds it bit for bit.
func encodeFactor(e *state.Encoder, c *linalg.Cholesky) {
	n := c.Size()
	e.Int(n)
	for i := range n {
		e.F64s(c.Row(i))
	}
}

// decodeFactor reads a factor written by encodeFactor into a new Cholesky
// of capacity at least capacity. It refuses more than maxN rows, rows that
// are not all present (checked before the factor is allocated), a
// non-positive or non-finite diagonal and a non-finite entry (recording the
// problem in d and returning nil).
func decodeFactor(d *state.Decoder, maxN, capacity int) *linalg.Cholesky {
	n := d.IntIn(0, maxN, "factor rows")
	if d.Err() != nil || !d.Need(triangleBytes(n), 1, "factor") {
		return nil
	}
	c := linalg.NewCholesky(max(n, capacity))
	row := make([]float64, 0, n)
	for i := range n {
		row = d.F64sN(row[:0], i+1)
		if d.Err() != nil {
			return nil
		}
		if err := c.Append(row[:i], row[i]); err != nil {
			d.Fail("factor row %d: %v", i, err)
			return nil
		}
	}
	return c
}

// triangleBytes is the encoded size of the n rows of a lower-triangular
// factor written as length-prefixed float slices (row i has i+1 entries):
// what a decoder must find present before it sizes an n×n factor.
func triangleBytes(n int) int { return 8*(n*(n+1)/2) + 4*n }

// allFiniteVec reports whether every entry of v is finite.
func allFiniteVec(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
