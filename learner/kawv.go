package learner

// Kernel-AWV — the exact kernelized Azoury–Warmuth–Vovk forecaster
// ("non-linear ridge regression"), O(t²) per round: the reference that
// PKAWV's approximations are tested against, for short streams.
//
// Reference: R. Jézéquel, P. Gaillard, A. Rudi, "Efficient online learning
// with kernels for adversarial large scale problems", NeurIPS 2019, Eq. (3)
// and Prop. 1 (regret λ‖f‖² + B² Σ_k log(1 + λ_k(K_nn)/λ)). Notes:
// docs/algorithms/kernel-awv.md.
//
// Model: f̂_t = argmin_f Σ_{s<t}(y_s − f(x_s))² + λ‖f‖² + f(x_t)²; by the
// representer theorem ŷ_t = λ·ŷ_KRR/s_t (awv.go's identity) with
//
//	ŷ_KRR = k_tᵀ(K_{t−1} + λI)⁻¹Y_{t−1},   s_t = κ(x_t, x_t) + λ − k_tᵀ(K_{t−1} + λI)⁻¹k_t,
//
// k_t = (κ(x_s, x_t))_{s<t}. The variant=ridge learner predicts ŷ_KRR (exact
// online kernel ridge regression, the "KRR" curve of the paper's real-data
// figures).
//
// State: the lower Cholesky factor L of K_{t−1} + λI, γ = L⁻¹Y_{t−1}, the
// points and labels. Round t: k_t (one Kernel.Row), l = L⁻¹k_t (one forward
// substitution, O(t²)), s_t = κ + λ − ‖l‖², ŷ_KRR = lᵀγ. Commit: append the
// row [lᵀ, √s_t] to L and (y_t − lᵀγ)/√s_t to γ, O(t).
//
// Choices and deviations:
//   - Cholesky form instead of the authors' code's
//     bordered inverse Kinv = (K + λI)⁻¹: the same O(t²) per round with one
//     triangular solve instead of a matrix–vector product plus an O(t²)
//     rank-one update of Kinv, and backward stable (the bordered inverse
//     accumulates rounding). The bordered-inverse form and its fast
//     form λkᵀβ/s are the test oracles (TestKAWVSec21CholeskyEqualsBorderedInverse).
//   - Prediction is read-only (awv.go): Predict never changes the
//     state; Learn commits after scoring. No clipping (the paper
//     needs no bound B) unless clip > 0.
//   - Hard cap (not in the paper): memory is O(t²) and time O(t²) per round,
//     O(n³) in total, so the learner stores at most max_points points
//     (default 2000: a 32 MB factor, a few ms per event). Past the cap it
//     stops learning: Learn still scores with the model of the first
//     max_points labelled events and counts the event in Info().Updates,
//     but ignores the label. That is not Kernel-AWV any more, so the cap is
//     a guard, not an approximation: use PKAWV (Taylor or Nyström) for long
//     streams. Info().Used = Budget tells when it is reached.
//   - s_t ≥ λ in exact arithmetic (κ − k_tᵀ(K + λI)⁻¹k_t ≥ 0); round-off
//     below λ is clamped to λ, so the factor's new pivot √s_t ≥ √λ > 0 and
//     no near-duplicate guard is needed.
//   - Any kernel of package kernel (the paper: Gaussian, σ = 1).
//
// Cost per round O(td + t²), no allocation except when the storage grows
// (capacity doubling) and none past the cap. Memory 8(t² + t(d + 2)) bytes.
// Merge (merge.go) appends another model's points in its order: the result
// is bit for bit the model trained on both streams one after the other.

import (
	"fmt"
	"math"

	"okstream/learner/kernel"
	"okstream/learner/linalg"
)

func init() {
	Register(Registration{
		Name:    "kawv",
		Summary: "exact Kernel-AWV (kernel Azoury–Warmuth–Vovk forecaster; or exact online kernel ridge regression), O(t²) per event, at most max_points points (regression)",
		Paper:   "Jézéquel, Gaillard, Rudi, Efficient online learning with kernels for adversarial large scale problems, NeurIPS 2019",
		Params: []ParamDoc{
			docKernel, docAWVSigma, docDegree, docCoef0,
			docAWVLambda, docAWVVariant, docAWVClip, docAWVTask,
			{Name: "max_points", Default: "2000", Doc: "hard cap on the stored points (1..16384): memory 8·max_points² bytes for the factor, O(t²) time per event; past it the model stops learning (labels are ignored, scores continue)"},
		},
		New: newKAWV,
	})
}

// KAWV is exact Kernel-AWV. Build it with New("kawv:...").
type KAWV struct {
	base
	awvOpts
	kern    kernel.Kernel
	maxPts  int
	pts     *kernel.Matrix   // x_1..x_n
	ys      []float64        // y_1..y_n (for Merge)
	gamma   []float64        // L⁻¹Y
	chol    *linalg.Cholesky // L Lᵀ = K + λI
	ignored uint64           // labels ignored past the cap

	krow, l []float64 // scratch: κ(X, x), L⁻¹κ(X, x)
}

func newKAWV(p *Params, dim int) (Learner, error) {
	kern := readKernel(p)
	o := readAWVOpts(p)
	maxPts := p.Int("max_points", 2000, InRange(1, 16384))
	if err := p.Err(); err != nil {
		return nil, err
	}
	c := min(maxPts, 64)
	return &KAWV{
		base:    newBase(p, dim, o.task),
		awvOpts: o,
		kern:    kern,
		maxPts:  maxPts,
		pts:     kernel.NewMatrix(dim, c),
		ys:      make([]float64, 0, c),
		gamma:   make([]float64, 0, c),
		chol:    linalg.NewCholesky(c),
		krow:    make([]float64, c),
		l:       make([]float64, c),
	}, nil
}

// round computes l = L⁻¹k (into l.l), s and the KRR prediction lᵀγ for x.
func (l *KAWV) round(x []float64) (krr, s float64) {
	l.checkDim(x)
	n := l.pts.Len()
	k := l.kern.Row(l.krow, l.pts, x)
	kxx := l.kern.Diag(x)
	if n == 0 {
		return 0, kxx + l.lambda
	}
	lt := l.l[:n]
	s = l.chol.ProjectionResidual(lt, k, kxx+l.lambda)
	if !(s >= l.lambda) { // round-off (or NaN from a non-finite input)
		s = l.lambda
	}
	return dot(lt, l.gamma), s
}

// Predict returns ŷ = λ·ŷ_KRR/s (AWV) or ŷ_KRR (ridge). Read-only.
func (l *KAWV) Predict(x []float64) float64 {
	krr, s := l.round(x)
	return l.score(krr, (s-l.lambda)/l.lambda)
}

// Learn scores x, then adds (x, y) to the model unless the cap is reached,
// and returns the pre-update score.
func (l *KAWV) Learn(x []float64, y float64) float64 {
	krr, s := l.round(x)
	f := l.score(krr, (s-l.lambda)/l.lambda)
	l.updates++
	l.add(x, y, krr, s)
	return f
}

// add commits (x, y) with the quantities of round (l.l holds L⁻¹k).
func (l *KAWV) add(x []float64, y, krr, s float64) {
	n := l.pts.Len()
	if n >= l.maxPts {
		l.ignored++
		return
	}
	rs := math.Sqrt(s)
	g := (y - krr) / rs
	if math.IsNaN(g) || math.IsInf(g, 0) || l.chol.Append(l.l[:n], rs) != nil {
		l.ignored++ // a non-finite input or label (the runtime rejects those)
		return
	}
	l.pts.Append(x)
	l.ys = append(l.ys, y)
	l.gamma = append(l.gamma, g)
	if n+1 > len(l.krow) {
		c := min(2*(n+1), l.maxPts)
		l.krow, l.l = make([]float64, c), make([]float64, c)
	}
}

// Merge appends other's points, in other's order, as if this model had
// learnt them after its own (see Merger). It refuses a model of another
// spec or dimension, models that ignored labels past their cap (they are
// not the model of all their data) and a merged size above max_points.
// Cost O(n_other·(n + n_other)²).
func (l *KAWV) Merge(other Learner) error {
	if err := l.mergeCompatible(other); err != nil {
		return err
	}
	o, ok := other.(*KAWV)
	if !ok {
		return fmt.Errorf("learner kawv: cannot merge a %T", other)
	}
	if l.ignored > 0 || o.ignored > 0 {
		return fmt.Errorf("learner kawv: cannot merge models that ignored labels (past max_points, or non-finite: %d and %d ignored): they are not the models of all their data", l.ignored, o.ignored)
	}
	n, no := l.pts.Len(), o.pts.Len()
	if n+no > l.maxPts {
		return fmt.Errorf("learner kawv: merged model would hold %d points, max_points is %d", n+no, l.maxPts)
	}
	// Copy first: other may be l itself.
	xs := append([]float64(nil), o.pts.Data()...)
	ys := append([]float64(nil), o.ys...)
	updates := o.updates
	for i := range no {
		x := xs[i*l.dim : (i+1)*l.dim]
		krr, s := l.round(x)
		l.add(x, ys[i], krr, s)
	}
	l.updates += updates
	return nil
}

// MarshalBinary encodes the points, labels, γ, the factor L and the
// counters.
func (l *KAWV) MarshalBinary() ([]byte, error) {
	n := l.pts.Len()
	e := l.encoder(8 * (n*(n+1)/2 + n*(l.dim+3) + 8))
	e.U64(l.ignored)
	e.F64s(l.pts.Data())
	e.F64s(l.ys)
	e.F64s(l.gamma)
	encodeFactor(e, l.chol)
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured learner;
// on error the learner is unchanged.
func (l *KAWV) UnmarshalBinary(data []byte) error {
	d, updates := l.decoder(data)
	ignored := d.U64()
	xs := d.F64s(nil)
	n := len(xs) / l.dim
	if d.Err() == nil && (len(xs)%l.dim != 0 || n > l.maxPts) {
		d.Fail("kawv: %d input values for dimension %d (cap %d points)", len(xs), l.dim, l.maxPts)
	}
	ys := d.F64sN(nil, n)
	gamma := d.F64sN(nil, n)
	c := min(max(2*n, 64), l.maxPts)
	chol := decodeFactor(d, n, c)
	if d.Err() == nil && chol.Size() != n {
		d.Fail("kawv: %d points, factor of %d rows", n, chol.Size())
	}
	if err := d.Done(); err != nil {
		return err
	}
	pts := kernel.NewMatrix(l.dim, c)
	if err := pts.SetData(xs); err != nil {
		return err
	}
	l.pts, l.chol, l.updates, l.ignored = pts, chol, updates, ignored
	l.ys = append(make([]float64, 0, c), ys...)
	l.gamma = append(make([]float64, 0, c), gamma...)
	l.krow, l.l = make([]float64, max(c, 1)), make([]float64, max(c, 1))
	return nil
}

// Info reports max_points as the budget and the stored points as use.
func (l *KAWV) Info() Info {
	c := l.chol.Capacity()
	return l.info(l.maxPts, l.pts.Len(), l.pts.Bytes()+8*(c*c+3*c+cap(l.ys)+cap(l.gamma)+len(l.krow)+len(l.l)))
}
