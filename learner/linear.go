package learner

// linear — an online linear baseline on the raw features, scale-free so
// that it needs no tuning per file (the yardstick of `okstream reproduce
// auto-vs-grid`). The input is x̃ = (x, 1) (an intercept).
//
// Classification (loss=logistic, the default; hinge and squared_hinge are
// accepted): online logistic regression by the normalized adaptive
// gradient NAG (Ross, Mineiro & Langford, "Normalized Online Learning",
// UAI 2013, Algorithm 1 — Vowpal Wabbit's default update): with s_j the
// largest |x̃_j| seen, G_j = Σ g_j², N = Σ_t Σ_j x̃_tj²/s_j² and t the
// number of updates,
//
//	on a new largest |x_j|: w_j ← w_j·s_j²/x_j², s_j ← |x_j|;
//	g = ℓ'(wᵀx̃, y)·x̃,  G_j += g_j²,  w_j −= η·√(t/N)·g_j/(s_j·√G_j),
//
// η = 0.5 (VW's default rate). Every quantity is invariant to the unit of
// each feature (x_j → c·x_j gives w_j → w_j/c and the same scores), so the
// baseline needs no scaling and no tuning per file. One departure: the
// rescaling of w_j on a new largest |x_j| is done after the prediction of
// that event (NAG does it before), so that Learn returns Predict's score.
//
// Regression (loss=square): ridge regression recomputed after every event
// (recursive least squares in closed form) with a penalty scaled per
// coordinate,
//
//	w_t = argmin_w Σ_{s≤t} (wᵀx̃_s − y_s)² + λ Σ_j S_j w_j²,  S_j = Σ_s x̃_sj²,
//
// i.e. w = (G + λ·diag G)⁻¹ b with G = Σ x̃x̃ᵀ, b = Σ y x̃. Penalising each
// coordinate by its own energy makes the solution invariant to the unit of
// every feature (and equivariant in the label's): there is nothing to tune
// to a file's scales. λ = 1e-3 (close to least squares, and it bounds the
// condition number of the Jacobi-scaled system by about (d+1)/λ). The solve
// is done on the Jacobi-scaled matrix D^-½GD^-½ + λI (Cholesky), so features
// in thousands and in thousandths are handled alike. A coordinate never
// seen non-zero gets weight 0. The prediction is clipped to the range of
// the labels learnt so far: while t is below about d the least-squares
// solution extrapolates wildly (on cpusmall unscaled, without the clip, the
// first 800 events' MSE is 12× the mean predictor's), and a linear model
// has no business predicting outside the labels it has seen.
//
// Regression with solver=rls: recursive least squares (online ridge with a
// fixed penalty, the Vovk–Azoury–Warmuth forecaster's weights without the
// current input in the matrix): P = (λI + Σ x̃x̃ᵀ)⁻¹ is kept by
// Sherman–Morrison, w ← w + P x̃ (y − wᵀx̃)/(1 + x̃ᵀP x̃) and
// P ← P − (P x̃)(P x̃)ᵀ/(1 + x̃ᵀP x̃), in O(d²) per event instead of a
// refactorisation. A fixed penalty is not scale-invariant, so this form
// is for inputs already standardised (auto's linear member sees the
// self-tuning wrapper's standardised features divided by σ̂, and takes
// λ = 1/(2d), the unit penalty of standardised coordinates: auto.go's
// autoLinearLambda). Regret: the online
// ridge's square loss is within O(d·Y²·ln(1 + T·X²/(λd))) of the best
// linear predictor in hindsight (Vovk 2001; Azoury & Warmuth 2001; up to
// the current-input term and the label-range clip) for inputs with
// ‖x̃‖ ≤ X and labels |y| ≤ Y. P stays exactly symmetric (the rank-one
// term is symmetric in floating point); an update whose denominator is
// not a finite positive number (P no longer positive definite after
// round-off) is skipped.
//
// Random Fourier features (features=D > 0): the input is first mapped
// through the seeded random Fourier map of the Gaussian kernel of width
// sigma (package kernel's Fourier, Rahimi & Recht 2007, scale 1/√D so that
// ‖z(x)‖ = 1 and z(x)ᵀz(y) ≈ κ(x, y)), and the model above is fitted on
// x̃ = (z(x), 1): d is then 2D. With loss=square and solver=rls this is
// online kernel ridge regression in the span of the D features (the
// Kernel-AWV idea of Jézéquel, Gaillard & Rudi, COLT 2019, on a random
// rather than a Nyström basis): its regret against the best predictor
// θᵀz(·) of that span is the RLS bound above with d = 2D+1 and X² = 2,
// O(D·Y²·ln(1 + T/(λD))), at O(D²) per event and 8·(2D+1)² bytes. The
// frequencies are regenerated from seed (not stored); the map costs O(dD)
// per event and allocates nothing.
//
// Cost per event: O(d) for classification; O(d²) to accumulate G and
// O(d³/3) to refactor for regression (d = 40: about 25k flops), so the
// refit form is for low-dimensional streams (solver=rls: O(d²)). State: w,
// s, G_j, N and t (classification); G, b and w (regression; P and w with
// solver=rls), all marshalled. G is symmetric: it is kept (and updated,
// and shared) as its lower triangle, packed by rows; the state writes it
// whole, as before.
//
// Forgetting (forget=H > 0; absent or 0: off, and the model, its state
// and its canonical spec are bit for bit what they were without the
// option). Every accumulated statistic is discounted by β = 1 − 1/H per
// learned event, so the model weighs an event k events old by β^k (a
// horizon of about H events) and its steps stop shrinking on an endless
// stream:
//
//   - NAG: G_j ← β·G_j + g_j² for every j (also where g_j = 0), N ← β·N +
//     Σ_j x̃_j²/s_j², t ← β·t + 1. G_j levels off at about H·E[g_j²] and
//     t at H, so the step η·√(t/N)·g_j/(s_j·√G_j) levels off at about
//     η/(s_j·√H) times g_j/RMS(g_j), where plain AdaGrad's decays like
//     1/√t. This is RMSProp's second-moment average (Tieleman & Hinton,
//     COURSERA Neural Networks lecture 6.5, 2012; the exponential moving
//     average of Adam, Kingma & Ba, ICLR 2015, without the first moment
//     and without the bias correction) on NAG's normalised step. Deviations:
//     G is a discounted sum, not an average (the same update with rate
//     η/√H); the bias correction is not needed because t is discounted
//     alike (early steps are AdaGrad's, then they level off); s_j, the
//     largest |x̃_j| seen, is not forgotten (a feature whose range shrinks
//     keeps its old unit: the step stays scale-invariant). No regret bound
//     is claimed: AdaGrad's O(√T) bound (Duchi, Hazan & Singer 2011)
//     needs G_j non-decreasing; a discounted G trades it for tracking.
//   - refit: G ← β·G + x̃x̃ᵀ, b ← β·b + y·x̃ (exponentially weighted least
//     squares with the scale-invariant penalty λ·diag G, which decays with
//     G: the Jacobi-scaled system keeps its condition bound (d+1)/λ). A
//     forgetting model cannot share (its statistics do not add up across
//     partitions): ShareDelta refuses.
//   - rls: recursive least squares with exponential forgetting factor β
//     (Haykin, Adaptive Filter Theory, 4th ed., 2002, §9.4–9.6):
//     k = P x̃/(β + x̃ᵀP x̃), w ← w + k·(y − wᵀx̃), P ← (P − k·(P x̃)ᵀ)/β,
//     i.e. w minimises Σ_s β^(t−s)(wᵀx̃_s − y_s)² plus the penalty. Plain
//     forgetting also discounts the penalty λI, so P grows like β^−t in
//     every direction the inputs do not excite (the classical blow-up of
//     RLS with forgetting). Deviation (a "leaky" RLS, regularised
//     exponential forgetting in the manner of Salgado, Goodwin & Middleton,
//     Int. J. Control 47(2), 1988): the penalty is renewed one coordinate
//     per event, the cycle's coordinate i = (event − 1) mod n receiving
//     c·e_ie_iᵀ with c = (1 − β)·λ·n by a second Sherman–Morrison update
//     (P ← P − c·P e_i(P e_i)ᵀ/(1 + c·P_ii), w ← w − c·w_i·P e_i/(1 +
//     c·P_ii)). The penalty then never falls below λ·β^(n−1)·I, so P ⪯
//     β^(1−n)/λ·I (≤ e/λ for H ≥ n): P stays bounded however poor the
//     excitation. The spec must have H ≥ n (d+1, or 2D+1 with features):
//     a shorter horizon cannot determine n weights. Cost: twice plain RLS.
//     An event predicted but not learned (non-finite input) still uses up
//     its coordinate's turn, which only delays that coordinate's renewal.
//
// Robustness: an event whose update would put a non-finite number into the
// state (a feature or label of magnitude ≥ 1e150, or non-finite) is
// predicted but not learned; the model is unchanged by it.

import (
	"errors"
	"fmt"
	"math"

	"okstream/learner/kernel"
	"okstream/learner/linalg"

	"okstream/learner/state"
)

func init() {
	Register(Registration{
		Name:    "linear",
		Summary: "online linear baseline on raw features: logistic regression by normalized AdaGrad (NAG, as Vowpal Wabbit; classification), scale-invariant ridge/RLS (regression); nothing to tune per file",
		Paper:   "Ross, Mineiro & Langford, Normalized Online Learning, UAI 2013 (NAG); ridge/recursive least squares",
		Params: []ParamDoc{
			{Name: "loss", Default: "logistic", Doc: "logistic, hinge, squared_hinge (NAG) or square (ridge regression)"},
			{Name: "eta", Default: "0.5", Doc: "NAG rate η (the step of coordinate j is η·√(t/N)/(s_j·√Σg_j²), see the learner's comment)", When: "classification loss"},
			{Name: "solver", Default: "refit", Doc: "refit: ridge with the scale-invariant penalty, refactorised every event (O(d³)); rls: recursive least squares with penalty λ·I (O(d²); for standardised inputs, as auto's linear member)", When: "loss=square"},
			{Name: "features", Default: "0", Doc: "0: the raw features; D > 0: fit on D random Fourier features of the Gaussian kernel of width sigma (2D-dim map, ‖z‖ = 1; with solver=rls: online kernel ridge in the features' span, O(D²) per event)", When: "given (absent: raw features)"},
			{Name: "sigma", Default: "1", Doc: "Gaussian kernel width of the Fourier map", When: "features > 0"},
			{Name: "seed", Default: "1", Doc: "seed of the Fourier frequencies (regenerated, not stored)", When: "features > 0"},
			{Name: "forget", Default: "0", Doc: "horizon H of exponential forgetting: every statistic (NAG's Σg_j², N and t; ridge's G and b; RLS's inverse) is discounted by 1 − 1/H per event, so steps level off instead of decaying like 1/√t (RMSProp-style for NAG; RLS with forgetting factor, the penalty renewed so that P stays bounded); 0: off (the canonical spec is then unchanged); ≥ 1, and ≥ the model's dimension n for solver=rls", When: "given (absent: off)"},
			{Name: "lambda", Default: "0.001 (solver=rls: 1)", Doc: "ridge penalty relative to each coordinate's energy Σx_j² (scale-invariant; solver=rls: the fixed penalty λ‖w‖²)", When: "loss=square"},
		},
		New: newLinear,
	})
}

// linearLimit bounds the magnitude of what linear learns from (see the
// file comment): its square stays far below the float64 range.
const linearLimit = 1e150

// Linear is the online linear baseline (see the file comment).
type Linear struct {
	base
	loss   Loss
	eta    float64
	lambda float64
	n      int       // d+1 (intercept last)
	w      []float64 // n
	g2     []float64 // classification: Σ g_j²
	smax   []float64 // classification: largest |x̃_j| seen
	norm   float64   // classification: N = Σ_t Σ_j x̃_tj²/s_j²
	steps  float64   // classification: t, the number of updates taken
	gram   []float64 // regression: G, its lower triangle packed by rows (row i at tri(i), i+1 values)
	pinv   []float64 // regression, solver=rls: P = (λI + Σx̃x̃ᵀ)⁻¹, n×n row-major
	b      []float64 // regression: Σ y x̃
	ylo    float64   // regression: the smallest and largest label learnt
	yhi    float64
	ranged bool      // regression: a label has been learnt
	st     []float64 // regression: G (packed) and b in one backing vector (gram, b are its parts)
	sh     vecShare  // regression: sharing across partitions (Sharer), over st
	xt     []float64 // scratch: x̃
	a      []float64 // scratch: the scaled system
	r      []float64 // scratch
	chol   *linalg.Cholesky
	rff    *kernel.Fourier // features > 0: the input map (nil: raw features)
	forget float64         // forget=H (0: off)
	beta   float64         // 1 − 1/H: the discount per learned event (1: off)
	u      []float64       // scratch, solver=rls with forgetting: P e_i
}

func newLinear(p *Params, dim int) (Learner, error) {
	loss := p.Loss(Logistic)
	eta := p.Float("eta", 0.5, Positive)
	rls := loss == Square && p.Enum("solver", "refit", "refit", "rls") == "rls"
	lambda := p.Float("lambda", map[bool]float64{false: 1e-3, true: 1}[rls], Positive)
	var nf int
	if p.Has("features") { // absent: the canonical spec of the plain model is unchanged
		nf = p.Int("features", 0, InRange(0, 1<<12))
	}
	var sigma float64
	var seed uint64
	if nf > 0 {
		sigma = p.Float("sigma", 1, Positive)
		seed = p.Uint64("seed", 1)
	} else if p.Has("seed") {
		// Accepted without features (the harnesses give every learner a
		// seed); the raw-feature model draws nothing from it.
		seed = p.Uint64("seed", 1)
	}
	var forget float64
	if p.Has("forget") { // absent: the canonical spec of the plain model is unchanged
		forget = p.Float("forget", 0, NonNegative, func(v float64) (bool, string) { return v == 0 || v >= 1 && v <= 1e15, "0 (off) or in [1, 1e15]" })
		if forget == 0 {
			// forget=0 is the plain model: accepted, left out of the
			// canonical spec (as LocalFloat does), so its states are the
			// plain model's.
			delete(p.resolved, "forget")
			p.local["forget"] = "0"
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	n := dim + 1
	if nf > 0 {
		n = 2*nf + 1
	}
	if rls && forget > 0 && forget < float64(n) {
		return nil, fmt.Errorf("learner linear: parameter forget: %s must be 0 or at least the model's dimension %d with solver=rls (a shorter horizon cannot determine %d weights, and the penalty renewal bound needs it)", FormatNumber(forget), n, n)
	}
	var rff *kernel.Fourier
	if nf > 0 {
		var err error
		if rff, err = kernel.NewFourier(kernel.Gaussian, sigma, dim, nf, 1/math.Sqrt(float64(nf)), seed); err != nil {
			return nil, err
		}
	}
	l := &Linear{base: newBase(p, dim, loss.Task()), loss: loss, eta: eta, lambda: lambda, n: n,
		w: make([]float64, n), xt: make([]float64, n), rff: rff, forget: forget, beta: 1}
	if forget > 0 {
		l.beta = 1 - 1/forget
	}
	switch {
	case loss == Square && rls:
		l.pinv, l.r = make([]float64, n*n), make([]float64, n)
		if forget > 0 {
			l.u = make([]float64, n)
		}
		for i := range n {
			l.pinv[i*n+i] = 1 / lambda
		}
	case loss == Square:
		l.st = make([]float64, tri(n)+n) // G's lower triangle and b, one vector for sharing (vecShare)
		l.gram, l.b = l.st[:tri(n):tri(n)], l.st[tri(n):]
		l.a, l.r = make([]float64, n*n), make([]float64, n)
		l.chol = linalg.NewCholesky(n)
	default:
		l.g2, l.smax = make([]float64, n), make([]float64, n)
	}
	return l, nil
}

func (l *Linear) extend(x []float64) []float64 {
	l.checkDim(x)
	if l.rff != nil {
		l.rff.Map(l.xt[:l.n-1], x)
	} else {
		copy(l.xt, x)
	}
	l.xt[l.n-1] = 1
	return l.xt
}

// Predict returns wᵀx̃.
func (l *Linear) Predict(x []float64) float64 { return l.clip(dot(l.w, l.extend(x))) }

// Probability is the logistic model's probability σ(score) that y = +1
// (eval's measures use it instead of a calibration); ok is false for the
// other losses, whose scores are not log-odds.
func (l *Linear) Probability(score float64) (p float64, ok bool) {
	if l.loss != Logistic {
		return 0, false
	}
	if score >= 0 {
		return 1 / (1 + math.Exp(-score)), true
	}
	e := math.Exp(score)
	return e / (1 + e), true
}

// clip limits a regression score to the range of the labels learnt.
func (l *Linear) clip(f float64) float64 {
	if l.loss != Square || !l.ranged {
		return f
	}
	return math.Min(math.Max(f, l.ylo), l.yhi)
}

func finiteBelow(v []float64, lim float64) bool {
	for _, z := range v {
		if !(math.Abs(z) < lim) {
			return false
		}
	}
	return true
}

// Learn predicts x, then takes the AdaGrad step or refits the ridge model.
func (l *Linear) Learn(x []float64, y float64) float64 {
	xt := l.extend(x)
	f := l.clip(dot(l.w, xt))
	l.updates++
	if !finiteBelow(xt, linearLimit) || !(math.Abs(y) < linearLimit) {
		return f
	}
	if l.loss != Square {
		l.stepNAG(xt, f, y)
		return f
	}
	if !l.ranged {
		l.ylo, l.yhi, l.ranged = y, y, true
	}
	l.ylo, l.yhi = math.Min(l.ylo, y), math.Max(l.yhi, y)
	if l.pinv != nil {
		l.stepRLS(xt, y)
		return f
	}
	if l.beta < 1 {
		for i := range l.st {
			l.st[i] *= l.beta // G and b
		}
	}
	for i, vi := range xt {
		if vi == 0 {
			continue
		}
		axpy(vi, xt[:i+1], l.gram[tri(i):tri(i+1)]) // G's row i up to the diagonal
		l.b[i] += y * vi
	}
	l.refit()
	return f
}

// stepNAG takes NAG's step for the event x̃ with score f and label y (see
// the file comment).
func (l *Linear) stepNAG(xt []float64, f, y float64) {
	for j, v := range xt {
		if a := math.Abs(v); a > l.smax[j] {
			if l.smax[j] > 0 {
				r := l.smax[j] / a
				l.w[j] *= r * r
			}
			l.smax[j] = a
		}
	}
	if l.beta < 1 {
		l.norm *= l.beta
		l.steps *= l.beta
		for j := range l.g2 {
			l.g2[j] *= l.beta
		}
	}
	for j, v := range xt {
		if l.smax[j] > 0 {
			r := v / l.smax[j]
			l.norm += r * r
		}
	}
	l.steps++
	d := l.loss.Deriv(f, y)
	if d == 0 || math.IsNaN(d) || l.norm == 0 {
		return
	}
	rate := l.eta * math.Sqrt(l.steps/l.norm)
	for j, v := range xt {
		g := d * v
		if g == 0 {
			continue
		}
		l.g2[j] += g * g
		if l.g2[j] == 0 {
			continue // g² underflowed: no step (√G_j would be 0)
		}
		l.w[j] -= rate * g / (l.smax[j] * math.Sqrt(l.g2[j]))
	}
}

// stepRLS is the recursive least-squares update (see the file comment).
func (l *Linear) stepRLS(xt []float64, y float64) {
	n, px := l.n, l.r
	for i := range n {
		px[i] = dot(l.pinv[i*n:i*n+n], xt)
	}
	den := l.beta + dot(xt, px)
	if !(den > 0) || math.IsInf(den, 0) {
		return
	}
	g := (y - dot(l.w, xt)) / den
	axpy(g, px, l.w)
	if l.beta == 1 {
		for i := range n {
			axpy(-px[i]/den, px, l.pinv[i*n:i*n+n])
		}
		return
	}
	// Forgetting: P ← (P − P x̃ (P x̃)ᵀ/den)/β, then the penalty's renewal
	// on the cycle's coordinate (see the file comment). Both updates are
	// computed on the lower triangle and mirrored, so P stays exactly
	// symmetric: the division by β < 1 would otherwise amplify the
	// rounding's antisymmetric part like β^−t (measured: P indefinite
	// within 10⁵ events at H = 50).
	inv := 1 / l.beta
	l.symUpdate(px, 1/den, inv)
	c := (1 - l.beta) * l.lambda * float64(n)
	k := int((l.updates - 1) % uint64(n))
	u := l.u
	copy(u, l.pinv[k*n:k*n+n]) // P e_k (P is symmetric)
	den = 1 + c*u[k]
	if !(den > 0) || math.IsInf(den, 0) {
		return
	}
	axpy(-c*l.w[k]/den, u, l.w)
	l.symUpdate(u, c/den, 1)
}

// symUpdate sets P ← (P − a·v vᵀ)·m on the lower triangle, each entry
// from the product v_i·v_j (the same bits for (i, j) and (j, i)), and
// mirrors it to the upper one: P stays exactly symmetric.
func (l *Linear) symUpdate(v []float64, a, m float64) {
	n := l.n
	for i := range n {
		row := l.pinv[i*n : i*n+i+1]
		for j := range row {
			e := (row[j] - a*(v[i]*v[j])) * m
			row[j] = e
			l.pinv[j*n+i] = e
		}
	}
}

// refit sets w = (G + λ diag G)⁻¹ b through the Jacobi-scaled system
// (D^-½ G D^-½ + λI) u = D^-½ b, w = D^-½ u; coordinates with G_jj = 0 get
// w_j = 0. If the factorisation fails (it cannot for a finite G: the scaled
// matrix is positive definite), w is left as it was.
func (l *Linear) refit() {
	n := l.n
	for i := range n {
		l.r[i] = 0
		if gii := l.gram[tri(i)+i]; gii > 0 {
			l.r[i] = 1 / math.Sqrt(gii)
		}
	}
	for i := range n {
		for j := 0; j <= i; j++ {
			v := l.gram[tri(i)+j] * l.r[i] * l.r[j]
			if i == j {
				v = 1 + l.lambda
				if l.r[i] == 0 {
					v = 1
				}
			}
			l.a[i*n+j] = v
		}
	}
	if err := l.chol.Factorize(l.a, n); err != nil {
		return
	}
	u := l.xt // scratch (the input copy is no longer needed)
	for i := range n {
		u[i] = l.b[i] * l.r[i]
	}
	l.chol.SolveVec(u, u)
	for i := range n {
		l.w[i] = u[i] * l.r[i]
	}
}

// unpack returns the symmetric n×n matrix (row-major) whose lower triangle
// is g (packed by rows, as l.gram), followed by tail: the state's format
// for G, which stores the whole matrix (states written before G was kept
// packed restore unchanged).
func (l *Linear) unpack(g, tail []float64) []float64 {
	n := l.n
	out := make([]float64, n*n, n*n+len(tail))
	for i := range n {
		for j := 0; j <= i; j++ {
			out[i*n+j], out[j*n+i] = g[tri(i)+j], g[tri(i)+j]
		}
	}
	return append(out, tail...)
}

// pack is unpack's inverse: the lower triangle of the n×n row-major m
// (packed by rows), followed by tail, or nil if m is not exactly symmetric
// (G always is: x_i·x_j and x_j·x_i are the same product in floating
// point, so a state whose G is not was corrupted).
func (l *Linear) pack(m, tail []float64) []float64 {
	n := l.n
	out := make([]float64, 0, tri(n)+len(tail))
	for i := range n {
		for j := range i {
			if math.Float64bits(m[i*n+j]) != math.Float64bits(m[j*n+i]) {
				return nil
			}
		}
		out = append(out, m[i*n:i*n+i+1]...)
	}
	return append(out, tail...)
}

// MarshalBinary writes w and the accumulated statistics.
func (l *Linear) MarshalBinary() ([]byte, error) {
	e := l.encoder(8 * (len(l.w) + len(l.g2) + len(l.gram) + len(l.pinv) + len(l.b) + 4))
	e.F64s(l.w)
	if l.loss == Square {
		if l.pinv != nil {
			e.F64s(l.pinv)
		} else {
			e.F64s(l.unpack(l.gram, nil))
			e.F64s(l.b)
		}
		e.Bool(l.ranged)
		e.F64(l.ylo)
		e.F64(l.yhi)
		l.sh.encodeMapped(e, func(st []float64) []float64 { return l.unpack(st[:tri(l.n)], st[tri(l.n):]) })
	} else {
		e.F64s(l.g2)
		e.F64s(l.smax)
		e.F64(l.norm)
		e.F64(l.steps)
	}
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of the same spec and dimension; on an
// error the learner is unchanged.
func (l *Linear) UnmarshalBinary(data []byte) error {
	d, updates := l.decoder(data)
	w := d.F64sN(nil, l.n)
	var g2, smax, gram, pinv, b []float64
	var norm, steps, ylo, yhi float64
	var ranged bool
	var sh vecShare
	if l.loss == Square {
		if l.pinv != nil {
			pinv = d.F64sN(nil, l.n*l.n)
		} else {
			if gram = d.F64sN(nil, l.n*l.n); len(gram) == l.n*l.n {
				if gram = l.pack(gram, nil); gram == nil {
					d.Fail("G is not symmetric")
				}
			}
			b = d.F64sN(nil, l.n)
		}
		ranged, ylo, yhi = d.Bool(), d.F64(), d.F64()
		if l.st != nil {
			if sh = decodeVecShare(d, l.n*l.n+l.n); sh.shared && len(sh.snap) == l.n*l.n+l.n {
				if sh.snap = l.pack(sh.snap[:l.n*l.n], sh.snap[l.n*l.n:]); sh.snap == nil {
					d.Fail("shared snapshot of G is not symmetric")
				}
			}
		}
	} else {
		g2 = d.F64sN(nil, l.n)
		smax = d.F64sN(nil, l.n)
		norm, steps = d.F64(), d.F64()
	}
	if err := d.Done(); err != nil {
		return err
	}
	if ylo > yhi {
		return fmt.Errorf("learner linear: label range [%v, %v] is empty: %w", ylo, yhi, state.ErrCorrupt)
	}
	for _, v := range [][]float64{w, g2, smax, gram, pinv, b, {norm, steps, ylo, yhi}} {
		if !finiteBelow(v, math.Inf(1)) {
			return fmt.Errorf("learner linear: state holds a non-finite number: %w", state.ErrCorrupt)
		}
	}
	if err := l.checkNAG(g2, smax, norm, steps); err != nil {
		return err
	}
	l.updates = updates
	copy(l.w, w)
	copy(l.g2, g2)
	copy(l.smax, smax)
	l.norm, l.steps = norm, steps
	l.ranged, l.ylo, l.yhi = ranged, ylo, yhi
	copy(l.gram, gram)
	copy(l.pinv, pinv)
	copy(l.b, b)
	l.sh.set(sh)
	return nil
}

// checkNAG refuses NAG statistics that no stream can produce: a negative
// Σg_j², s_j, N or t; N > n·t (each event adds at most n to N, since
// |x̃_j| ≤ s_j, and 1 to t; a relative slack of 1e-9 covers rounding); or,
// with forgetting, t > H (t = Σ_k β^k < H). Such a state would make the
// step of the next event unbounded or not a number.
func (l *Linear) checkNAG(g2, smax []float64, norm, steps float64) error {
	if l.loss == Square {
		return nil
	}
	for _, v := range [][]float64{g2, smax, {norm, steps}} {
		for _, z := range v {
			if z < 0 {
				return fmt.Errorf("learner linear: state holds a negative accumulator %v: %w", z, state.ErrCorrupt)
			}
		}
	}
	if norm > float64(l.n)*steps*(1+1e-9) {
		return fmt.Errorf("learner linear: state's N = %v exceeds n·t = %d·%v: %w", norm, l.n, steps, state.ErrCorrupt)
	}
	if l.forget > 0 && steps > l.forget*(1+1e-9) {
		return fmt.Errorf("learner linear: state's discounted count t = %v exceeds the horizon %v: %w", steps, l.forget, state.ErrCorrupt)
	}
	return nil
}

// ShareDelta (Sharer; regression only) encodes the change of the ridge
// statistics G = Σ x̃x̃ᵀ (its lower triangle, as it is kept: G is
// symmetric) and b = Σ y x̃ since the last sync, exact float64s:
// 8·(n(n+1)/2 + n) bytes for n = d+1. NAG's
// per-coordinate state (classification) has no exact merge: a
// classification model refuses with an error.
func (l *Linear) ShareDelta() ([]byte, error) {
	if l.st == nil || l.beta < 1 {
		return nil, fmt.Errorf("learner linear: only loss=square without rls and without forget (ridge regression, whose statistics G and b add up; rls keeps their inverse; forgetting discounts them) can be shared across partitions")
	}
	return l.sh.delta(&l.base, l.st), nil
}

// ShareMerge (Sharer; regression only) adds the other partitions' changes
// of G and b (sufficient statistics: the merged model is the ridge fit of
// every event merged, in closed form) and refits. The prediction clip stays
// at the range of the labels this copy learnt itself.
func (l *Linear) ShareMerge(deltas []SharedDelta) error {
	if l.st == nil || l.beta < 1 {
		return errLinearNotShared
	}
	if err := l.sh.merge(&l.base, l.st, deltas); err != nil {
		return err
	}
	l.refit()
	return nil
}

// errLinearNotShared refuses a merge into a linear model that cannot share
// (ShareDelta says why).
var errLinearNotShared = errors.New("learner linear: only loss=square without rls and without forget can be shared across partitions")

// ShareMix (Mixer; regression only) is Σ_q of the deltas' ΔG and Δb,
// summed from zero in the order given (the same for every copy).
func (l *Linear) ShareMix(deltas []SharedDelta) ([]float64, error) {
	if l.st == nil || l.beta < 1 {
		return nil, errLinearNotShared
	}
	return l.sh.sumAll(&l.base, len(l.st), deltas, nil)
}

// ShareApply (Mixer) is ShareMerge with ShareMix's result precomputed:
// only the own delta is decoded.
func (l *Linear) ShareApply(deltas []SharedDelta, mix []float64) error {
	if l.st == nil || l.beta < 1 {
		return errLinearNotShared
	}
	if err := l.sh.sumApply(&l.base, l.st, deltas, mix); err != nil {
		return err
	}
	l.refit()
	return nil
}

// Info reports the learner (no budget; Bytes is the state's floats).
func (l *Linear) Info() Info {
	return l.info(0, 0, 8*(len(l.w)+len(l.g2)+len(l.smax)+len(l.gram)+len(l.pinv)+len(l.b)+2))
}
