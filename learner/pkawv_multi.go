package learner

// pkawv (multi-class) — multi-output PKAWV on one-hot targets, with a
// softmax of the C outputs at an online-learned temperature.
//
// Reference: R. Jézéquel, P. Gaillard, A. Rudi, "Efficient online learning
// with kernels for adversarial large scale problems", NeurIPS 2019, Eq. (4)
// and §3.1 (PKAWV on the Taylor basis, Algorithm 1); the multi-output
// reading is ours (below). Binary form and its deviations: pkawv.go; notes:
// docs/algorithms/multiclass-kernels.md.
//
// Derivation. PKAWV on the Taylor features φ(x) ∈ ℝ^r predicts
//
//	ŷ_t = φ_tᵀ(A + φ_tφ_tᵀ)⁻¹b,  A = λI + Σ_{s<t} φ_sφ_sᵀ,  b = Σ_{s<t} y_sφ_s.
//
// With a vector target y_s = e_{c_s} ∈ ℝ^C (one-hot), the square loss
// ‖ŷ − y‖² separates over the outputs, so each output k is the binary
// forecaster with targets [c_s = k]; A does not depend on the labels, so
// every output shares A, and only b_k = Σ_{s<t, c_s = k} φ_s differs. With
// u = A⁻¹φ and h = φᵀu (awv.go's identity):
//
//	ŷ_k = uᵀb_k / (1 + h)   (variant=ridge: uᵀb_k).
//
// The AWV regret bound holds per output (the paper's Thm. 4 for each
// coordinate), so for their sum: the multi-output forecaster's square
// loss is within Σ_k of the binary bounds of the best multi-output
// function of H̃.
//
// Cost per event, r features, K classes: φ (taylor.go), u by two
// triangular solves with the factor L of A (r²), the K scores uᵀb_k (rK);
// learning: the rank-one update of L (Givens, O(r²)) and b_c += φ (r, the
// one-hot target touches one column). So C classes cost binary PKAWV's
// work plus rK, not C× it (the binary form does 2r² in its two solves and
// keeps S = Σφφᵀ for merging, which this form does not: r²/2 less).
//
// Probabilities: P(k | x) = softmax(τ·ŷ)_k, the temperature τ ≥ 0 learnt
// online by projected AdaGrad (Duchi, Hazan & Singer 2011, Fig. 1) on the
// log loss, which is convex in τ: ∂/∂τ[−log P(c | x)] = Σ_k P(k | x) ŷ_k −
// ŷ_c. τ starts at "temp" (default 10: ŷ_k of a well-fit one-hot target
// lies in [0, 1], so τ = 10 is a factor e^10 between a fitted 1 and a
// fitted 0), step "temp_eta", projected onto [0, 1000]. The step uses the
// pre-update distribution; it is skipped while K ≤ 1 and on the event that
// adds a class (the new class had no output). The regression outputs are
// not changed by the calibration: argmax P = argmax ŷ, the multi-output
// AWV's decision.
//
// Choices and deviations:
//   - Taylor basis only (Gaussian kernel): basis=nystrom is refused (its
//     KORS dictionary and history would need their own multi-output
//     form; the dictionary does not depend on the labels, so it could).
//   - S is not kept (no Merge or sharing for the multi-class form).
//   - A new class's b column starts at 0: the forecaster's output for a
//     class never seen is 0, as the binary forecaster's with targets 0.
//   - A non-finite φ (never with validated input) leaves the model
//     unchanged.
//
// Shapes: L r×r (lower), B K×r row-major (row k = b_k). Steady-state
// Learn and PredictProba do not allocate (B grows by one row per new
// class).

import (
	"fmt"
	"math"

	"okstream/learner/linalg"
)

// PKAWVMulti is multi-output PKAWV with a calibrated softmax. Build it with
// NewMulti("pkawv:...").
type PKAWVMulti struct {
	base
	lambda     float64
	ridge      bool
	clip       float64
	basis      *taylorBasis
	r          int
	chol       *linalg.Cholesky // L Lᵀ = λI + Σφφᵀ (r×r)
	k          int              // K
	b          []float64        // K×r
	tau, tauG2 float64          // temperature and its AdaGrad accumulator
	tEta       float64

	phi, l, u, y []float64 // scratch: φ, L⁻¹φ, A⁻¹φ (r); outputs (K)
}

const pkawvMaxTemp = 1000

func init() {
	RegisterMulti(MultiRegistration{
		Name:    "pkawv",
		Summary: "multi-output PKAWV on one-hot targets (Taylor basis of the Gaussian kernel): one shared A = λI + Σφφᵀ, one b per class, O(r² + rK) per event; probabilities by a softmax at an online-learned temperature",
		Paper:   "Jézéquel, Gaillard, Rudi, NeurIPS 2019, Eq. (4), §3.1 (multi-output reading ours); Duchi et al. 2011 (AdaGrad for the temperature)",
		Params: []ParamDoc{
			{Name: "basis", Default: "taylor", Doc: "taylor only (basis=nystrom has no multi-class form)"},
			docAWVLambda, docAWVVariant,
			{Name: "clip", Default: "0", Doc: "if > 0, each output ŷ_k is clipped to [−clip, clip] before the softmax"},
			{Name: "kernel", Default: "gaussian", Doc: "gaussian only"},
			docAWVSigma,
			{Name: "order", Default: "2", Doc: "Taylor order M (0..30): r = C(M+d, d) features"},
			{Name: "max_features", Default: "2500", Doc: "refuse a Taylor basis with more features (memory 8r² bytes)", Local: true},
			{Name: "temp", Default: "10", Doc: "initial softmax temperature τ₀ ≥ 0 on the outputs"},
			{Name: "temp_eta", Default: "1", Doc: "AdaGrad step of the temperature (log loss)"},
			{Name: "seed", Default: "1", Doc: "accepted and ignored: the Taylor basis draws nothing"},
		},
		New: newPKAWVMulti,
	})
}

func newPKAWVMulti(p *Params, dim int) (Multi, error) {
	if p.Enum("basis", "taylor", "taylor", "nystrom") == "nystrom" && p.Err() == nil {
		return nil, fmt.Errorf("learner pkawv: basis=nystrom has no multi-class form (use basis=taylor)")
	}
	lambda := p.Float("lambda", 1, Positive)
	ridge := p.Enum("variant", "awv", "awv", "ridge") == "ridge"
	clip := p.Float("clip", 0, NonNegative)
	kern := readKernel(p, "gaussian")
	order := p.Int("order", 2, InRange(0, taylorMaxOrder))
	maxFeat := p.LocalInt("max_features", 2500, InRange(1, 20000))
	tau0 := p.Float("temp", 10, InRange(0, pkawvMaxTemp))
	tEta := p.Float("temp_eta", 1, Positive)
	p.localUint64("seed", 1)
	if err := p.Err(); err != nil {
		return nil, err
	}
	r, ok := taylorCount(dim, order, maxFeat)
	if !ok {
		return nil, fmt.Errorf("learner pkawv: the Taylor basis of order %d in %d dimensions has more than max_features = %d features: lower the order or raise max_features", order, dim, maxFeat)
	}
	chol, err := ridgeFactor(r, lambda)
	if err != nil {
		return nil, fmt.Errorf("learner pkawv: %v", err)
	}
	return &PKAWVMulti{
		base:   newBase(p, dim, MultiClass),
		lambda: lambda, ridge: ridge, clip: clip,
		basis: newTaylorBasis(dim, order, kern.Sigma, r),
		r:     r, chol: chol,
		tau: tau0, tEta: tEta,
		phi: make([]float64, r), l: make([]float64, r), u: make([]float64, r),
	}, nil
}

// Classes returns the number of classes learnt so far.
func (m *PKAWVMulti) Classes() int { return m.k }

// outputs computes φ(x) (scratch phi), u = A⁻¹φ and the K outputs ŷ_k into
// the scratch y, and returns them.
func (m *PKAWVMulti) outputs(x []float64) []float64 {
	phi := m.basis.Map(m.phi, x)
	m.chol.SolveL(m.l, phi)
	h := dot(m.l, m.l)
	m.chol.SolveLT(m.u, m.l)
	m.y = rows(&m.y, m.k)
	o := awvOpts{lambda: m.lambda, ridge: m.ridge, clip: m.clip}
	for k := range m.k {
		m.y[k] = o.score(dot(m.u, m.b[k*m.r:(k+1)*m.r]), h)
	}
	return m.y
}

// softmaxT writes softmax(τ·y) into p[:len(y)].
func (m *PKAWVMulti) softmaxT(y, p []float64) []float64 {
	p = p[:len(y)]
	mx := math.Inf(-1)
	for k, v := range y {
		p[k] = float64(m.tau * v)
		mx = math.Max(mx, p[k])
	}
	if len(p) == 0 {
		return p
	}
	return softmaxInPlace(p, mx)
}

// PredictProba writes softmax(τ·ŷ(x)) into p[:K].
func (m *PKAWVMulti) PredictProba(x, p []float64) []float64 {
	m.checkDim(x)
	return m.softmaxT(m.outputs(x), p)
}

// LearnClass predicts x, steps the temperature, and adds (φ(x), e_c) to
// the shared factor and to class c's b.
func (m *PKAWVMulti) LearnClass(x []float64, c int, p []float64) []float64 {
	m.checkDim(x)
	if c < 0 || c > m.k || c >= MaxClasses {
		panic("learner: class index out of range")
	}
	y := m.outputs(x)
	p = m.softmaxT(y, p)
	m.updates++
	if c < m.k && m.k > 1 {
		var g float64 // ∂(−log p_c)/∂τ = Σ p_k ŷ_k − ŷ_c
		for k, v := range y {
			g += float64(p[k] * v)
		}
		g -= y[c]
		if finiteF(g) && g != 0 {
			m.tauG2 += float64(g * g)
			m.tau = math.Min(pkawvMaxTemp, math.Max(0, m.tau-m.tEta*g/math.Sqrt(1e-8+m.tauG2)))
		}
	}
	if !allFiniteVec(m.phi) || m.chol.RankOneUpdate(m.phi) != nil {
		return p // non-finite input: nothing learnt
	}
	if c == m.k {
		m.b = append(m.b, make([]float64, m.r)...)
		m.k++
	}
	axpy(1, m.phi, m.b[c*m.r:(c+1)*m.r])
	return p
}

// MarshalBinary encodes the factor, K, B and the temperature.
func (m *PKAWVMulti) MarshalBinary() ([]byte, error) {
	e := m.encoder(triangleBytes(m.r) + 8*(len(m.b)+4))
	encodeFactor(e, m.chol)
	e.Int(m.k)
	e.F64s(m.b)
	e.F64(m.tau)
	e.F64(m.tauG2)
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured learner;
// on error the learner is unchanged.
func (m *PKAWVMulti) UnmarshalBinary(data []byte) error {
	d, updates := m.decoder(data)
	chol := decodeFactor(d, m.r, m.r)
	k := d.IntIn(0, MaxClasses, "classes")
	var b []float64
	if d.Need(k*m.r, 8, "pkawv outputs") {
		b = d.F64sN(nil, k*m.r)
	}
	tau, g2 := d.F64(), d.F64()
	if d.Err() == nil && (chol.Size() != m.r || !allFiniteVec(b) || !(tau >= 0 && tau <= pkawvMaxTemp) || !(g2 >= 0) || math.IsInf(g2, 0)) {
		d.Fail("pkawv multi: inconsistent state (factor of %d rows for %d features, non-finite outputs or temperature %v)", chol.Size(), m.r, tau)
	}
	if err := d.Done(); err != nil {
		return err
	}
	m.chol, m.k, m.b, m.tau, m.tauG2, m.updates = chol, k, b, tau, g2, updates
	return nil
}

// Info reports the number of features r as budget and use.
func (m *PKAWVMulti) Info() Info {
	return m.info(m.r, m.r, 8*(m.r*m.r+len(m.b)+4*m.r+cap(m.y)))
}
