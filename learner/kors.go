package learner

// KORS — Kernel Online Row Sampling: an adaptive Nyström dictionary chosen
// online by approximate ridge leverage scores.
//
// Reference: D. Calandriello, A. Lazaric, M. Valko, "Second-order kernel
// online convex optimization with adaptive sketching", ICML 2017, and
// "Efficient second-order online kernel learning with adaptive embedding",
// NIPS 2017 (PROS-N-KONS), which both build their dictionaries with it.
// Notes: docs/algorithms/regression.md (as the ALD authors' R code runs it for PROS-N-KONS
// and CON-KONS) and docs/algorithms/kernel-awv.md (as PKAWV's Nyström variant, PKAWV
// paper §3.2, runs it). kors is not a Learner: it is the dictionary component those
// learners share.
//
// State: dictionary points x̃_1..x̃_m (a kernel.Matrix, so the owner computes
// its kernel row κ(I, x) once with Kernel.Row and passes it here), weights
// s_i > 0, and the lower Cholesky factor L of G = S̄ K_II S̄ + γI, where
// S̄ = diag(s) (G ⪰ γI, so L always exists and needs no guard).
//
// Round (the owner decides when: the ALD code runs it at the end of a round,
// after the update, so a new point is used from the next round on; PKAWV's
// code runs it before predicting):
//
//  1. residual r = κ(x,x) − k̃ᵀ G⁻¹ k̃ with k̃ = S̄ κ(I, x), clipped at 0
//     (one forward solve with L, O(m²));
//  2. probability, prob=code (default): p = min(β(1+ε) r/(γ + r), 1);
//     prob=paper: p = min(β(1+ε) r/γ, 1);
//  3. one draw u = rnd.Float64() from the owner's generator; x is taken iff
//     u < p;
//  4. if taken: append x with weight s = 1/√p (weight=inv_sqrt_p: the
//     literature's convention and the ALD code's) or s = 1/p (inv_p:
//     PKAWV's code), and extend L by the bordered row
//     (s·L⁻¹k̃, √(γ + s²r)), O(m²), no refactorization.
//
// What the ALD authors' R code computes (PROS-N-KONS.R, CONS-KONS.R): it
// appends x_t to the weighted dictionary at weight 1, extends
// (S̄K S̄ + γI)⁻¹ by a bordered inverse to (K̄ + γI)⁻¹, and takes
// τ = 1 − c̄ᵀ(K̄ + γI)⁻¹c̄ with c̄ = (S̄k; 1) the last column of K̄ (κ(x,x) = 1
// hard-coded), then p = min(β(1+ε)τ/γ, 1). By the Schur complement,
// eᵀ(K̄ + γI)⁻¹e = 1/(γ + r), so τ = γ·eᵀK̄(K̄ + γI)⁻¹e = γ r/(γ + r): the code's
// p is β(1+ε) times the exact ridge leverage score r/(γ + r) of x_t in the
// extended weighted matrix — prob=code. PKAWV's code computes the same
// quantity ((1+ε)e/(e + μ), its App. H.2 listing). prob=paper is the estimate
// (1+ε)r/γ as KORS is usually written (the original text was not
// available to check): an upper bound of the leverage score
// that is larger when r is not ≪ γ, so it samples more. We default to the
// code's form: both reference codes use it, and the ALD paper's Table 3
// numbers come from it.
//
// Cap: with max > 0 the dictionary stops growing at max points (the FORKS
// paper's budgeted PROS-N-KONS on KuaiRec, B_max = 100; PKAWV's m_max). Once
// full, Sample neither computes the score nor draws, so a capped dictionary
// costs nothing per round.
//
// Determinism: the only randomness is one Float64 per Sample call on an
// uncapped dictionary, from the owner's *rng.Source, whose state the owner
// marshals. encode/decode store the points, the weights and L itself (not
// refactorized on restore), so a restored dictionary is bit-identical.
//
// Allocation: Residual, Prob, Sample and Insert below the capacity do not
// allocate; Insert beyond it grows the storage (amortized doubling).

import (
	"fmt"
	"math"

	"okstream/learner/kernel"
	"okstream/learner/linalg"
	"okstream/learner/rng"
	"okstream/learner/state"
)

// korsProb selects the sampling-probability form.
type korsProb int

const (
	// korsProbCode is p = min(β(1+ε) r/(γ+r), 1), what the ALD authors' R code
	// (and PKAWV's code) computes.
	korsProbCode korsProb = iota + 1
	// korsProbPaper is p = min(β(1+ε) r/γ, 1), the usual KORS estimate.
	korsProbPaper
)

func (p korsProb) String() string {
	if p == korsProbPaper {
		return "paper"
	}
	return "code"
}

// korsWeight selects the weight of an inserted point.
type korsWeight int

const (
	// korsInvSqrtP stores s = 1/√p, used as S̄KS̄ (the KORS/Nyström
	// literature and the ALD code's PROS-N-KONS/CON-KONS).
	korsInvSqrtP korsWeight = iota + 1
	// korsInvP stores s = 1/p (PKAWV's code, App. H.2 of its paper).
	korsInvP
)

// korsConfig configures a KORS dictionary.
type korsConfig struct {
	gamma  float64 // ridge γ > 0 (PKAWV's μ): larger γ, smaller dictionary
	beta   float64 // oversampling β > 0
	eps    float64 // accuracy ε ≥ 0
	max    int     // cap on the dictionary size; 0 = unbounded
	prob   korsProb
	weight korsWeight
}

func (c korsConfig) validate() error {
	switch {
	case !(c.gamma > 0) || math.IsInf(c.gamma, 0):
		return fmt.Errorf("kors: gamma must be a positive finite number, got %v", c.gamma)
	case !(c.beta > 0) || math.IsInf(c.beta, 0):
		return fmt.Errorf("kors: beta must be a positive finite number, got %v", c.beta)
	case !(c.eps >= 0) || math.IsInf(c.eps, 0):
		return fmt.Errorf("kors: eps must be a non-negative finite number, got %v", c.eps)
	case c.max < 0:
		return fmt.Errorf("kors: cap must be >= 0, got %d", c.max)
	case c.prob != korsProbCode && c.prob != korsProbPaper:
		return fmt.Errorf("kors: unknown probability form %d", int(c.prob))
	case c.weight != korsInvSqrtP && c.weight != korsInvP:
		return fmt.Errorf("kors: unknown weight form %d", int(c.weight))
	}
	return nil
}

// Parameter docs of the KORS dictionary, shared by its users.
var (
	docKORSGamma = ParamDoc{Name: "gamma", Default: "1", Doc: "KORS ridge γ > 0 of the leverage scores; larger γ gives a smaller dictionary (ALD paper grid {0.5, 1, 5, 10})"}
	docKORSBeta  = ParamDoc{Name: "beta", Default: "1", Doc: "KORS oversampling β > 0 (the papers' experiments: 1)"}
	docKORSEps   = ParamDoc{Name: "eps", Default: "0.5", Doc: "KORS accuracy ε ≥ 0 (the papers' experiments: 0.5)"}
	docKORSMax   = ParamDoc{Name: "bmax", Default: "0", Doc: "dictionary cap B_max: KORS stops inserting at this size (FORKS paper's budgeted variant: 100); 0 = unbounded (grows like d_eff(γ)·log T: set it for unbounded streams)"}
	docKORSProb  = ParamDoc{Name: "prob", Default: "code", Doc: "KORS probability: code = min(β(1+ε) r/(γ+r), 1), what the ALD and PKAWV authors' code computes; paper = min(β(1+ε) r/γ, 1), the usual KORS estimate (samples more)"}
)

// readKORS reads gamma, beta, eps, bmax and prob with the documented
// defaults; the weight form is the caller's (fixed by its algorithm).
func readKORS(p *Params, weight korsWeight) korsConfig {
	c := korsConfig{
		gamma:  p.Float("gamma", 1, Positive),
		beta:   p.Float("beta", 1, Positive),
		eps:    p.Float("eps", 0.5, NonNegative),
		max:    p.Int("bmax", 0, InRange(0, 1<<16)),
		weight: weight,
	}
	c.prob = korsProbCode
	if p.Enum("prob", "code", "code", "paper") == "paper" {
		c.prob = korsProbPaper
	}
	return c
}

// kors is a KORS dictionary. Not safe for concurrent use.
type kors struct {
	cfg  korsConfig
	pts  *kernel.Matrix   // dictionary points, m×d
	s    []float64        // weights s_i, m
	chol *linalg.Cholesky // L Lᵀ = S̄ K_II S̄ + γI
	kt   []float64        // scratch: S̄κ(I, x)
	l    []float64        // scratch: L⁻¹k̃
}

// newKORS returns an empty dictionary for dim-dimensional points; cfg must
// be valid (validate). Storage is sized for the cap, or for 16 points when
// unbounded.
func newKORS(cfg korsConfig, dim int) *kors {
	c := cfg.max
	if c == 0 {
		c = 16
	}
	return &kors{
		cfg:  cfg,
		pts:  kernel.NewMatrix(dim, c),
		s:    make([]float64, 0, c),
		chol: linalg.NewCholesky(c),
		kt:   make([]float64, c),
		l:    make([]float64, c),
	}
}

// Len returns the dictionary size m.
func (k *kors) Len() int { return k.pts.Len() }

// Full reports whether the cap is reached (never, when unbounded).
func (k *kors) Full() bool { return k.cfg.max > 0 && k.pts.Len() >= k.cfg.max }

// Points returns the dictionary points (read-only), to compute kernel rows
// against with Kernel.Row.
func (k *kors) Points() *kernel.Matrix { return k.pts }

// Weights returns the weights s_i (read-only).
func (k *kors) Weights() []float64 { return k.s }

// Residual returns r = κ(x,x) − k̃ᵀ(S̄K_IIS̄ + γI)⁻¹k̃ ≥ 0 with k̃ = S̄·krow,
// where krow = κ(I, x) (length Len()) and kxx = κ(x, x). It leaves L⁻¹k̃ in
// the scratch l. Cost O(m²); no allocation. Panics if len(krow) ≠ Len().
func (k *kors) Residual(krow []float64, kxx float64) float64 {
	m := k.pts.Len()
	if len(krow) != m {
		panic(fmt.Sprintf("learner: kors.Residual with %d kernel values, dictionary of %d", len(krow), m))
	}
	kt, l := k.kt[:m], k.l[:m]
	for i, v := range krow {
		kt[i] = k.s[i] * v
	}
	return math.Max(0, k.chol.ProjectionResidual(l, kt, kxx))
}

// prob maps a residual to the sampling probability of the configured form.
func (k *kors) prob(r float64) float64 {
	c := k.cfg
	var p float64
	if c.prob == korsProbPaper {
		p = c.beta * (1 + c.eps) * r / c.gamma
	} else {
		p = c.beta * (1 + c.eps) * r / (c.gamma + r)
	}
	if !(p > 0) { // 0, or NaN from a non-finite row
		return 0
	}
	return math.Min(p, 1)
}

// Prob returns the probability with which x (kernel row krow = κ(I, x),
// kxx = κ(x, x)) would be inserted. Cost O(m²); no allocation.
func (k *kors) Prob(krow []float64, kxx float64) float64 {
	return k.prob(k.Residual(krow, kxx))
}

// Draw makes the Bernoulli(p) draw with one Float64 from rnd.
func (k *kors) Draw(p float64, rnd *rng.Source) bool { return rnd.Float64() < p }

// Sample decides whether x should be inserted: on a full dictionary it
// returns (0, false) without drawing; otherwise it computes p (Prob) and
// draws once from rnd. It does not insert (see Insert), so that an owner
// with its own factorization can refuse a point first. No allocation.
func (k *kors) Sample(krow []float64, kxx float64, rnd *rng.Source) (p float64, take bool) {
	if k.Full() {
		return 0, false
	}
	p = k.Prob(krow, kxx)
	return p, k.Draw(p, rnd)
}

// weightOf returns the weight of a point inserted with probability p.
func (k *kors) weightOf(p float64) float64 {
	if k.cfg.weight == korsInvP {
		return 1 / p
	}
	return 1 / math.Sqrt(p)
}

// Insert appends x (kernel row krow = κ(I, x) against the current
// dictionary, kxx = κ(x, x)) with the weight of probability p (p = 1 gives
// weight 1: the ALD code's forced first point) and extends L by its
// bordered row. It returns an error, changing nothing, if the dictionary is
// full, p is not in (0, 1] or the row is not finite. Cost O(m² + d); no
// allocation below the capacity.
func (k *kors) Insert(x, krow []float64, kxx, p float64) error {
	if k.Full() {
		return fmt.Errorf("learner: kors: dictionary full (%d points)", k.cfg.max)
	}
	if !(p > 0 && p <= 1) {
		return fmt.Errorf("learner: kors: insertion probability %v outside (0, 1]", p)
	}
	s := k.weightOf(p)
	r := k.Residual(krow, kxx) // l = L⁻¹k̃
	m := k.pts.Len()
	l := k.l[:m]
	for i := range l {
		l[i] *= s // border column s·k̃ of G: row s·L⁻¹k̃
	}
	if err := k.chol.Append(l, math.Sqrt(k.cfg.gamma+s*s*r)); err != nil {
		return fmt.Errorf("learner: kors: %w", err)
	}
	k.pts.Append(x)
	k.s = append(k.s, s)
	if m+1 > len(k.kt) {
		n := 2 * (m + 1)
		k.kt, k.l = make([]float64, n), make([]float64, n)
	}
	return nil
}

// Bytes is the memory held by the dictionary.
func (k *kors) Bytes() int {
	c := k.chol.Capacity()
	return k.pts.Bytes() + 8*(cap(k.s)+c*c+3*c+len(k.kt)+len(k.l))
}

// encode appends the dictionary: points, weights and the rows of L.
func (k *kors) encode(e *state.Encoder) {
	m := k.pts.Len()
	e.Int(m)
	e.F64s(k.pts.Data())
	e.F64s(k.s)
	for i := range m {
		e.F64s(k.chol.Row(i))
	}
}

// decodeKORS reads a dictionary written by encode into a new kors with
// configuration cfg (the receiver of a failed decode is never touched: the
// owner installs the result only when the whole state decoded). On a
// malformed state it records the problem in d and returns nil.
func decodeKORS(d *state.Decoder, cfg korsConfig, dim int) *kors {
	hi := 1 << 16
	if cfg.max > 0 {
		hi = cfg.max
	}
	m := d.IntIn(0, hi, "kors dictionary size")
	// Points, weights and the rows of L must all be present before the
	// factor (m² floats) is sized from m.
	if d.Err() != nil || !d.Need(8*(m*dim+m)+triangleBytes(m), 1, "kors dictionary") {
		return nil
	}
	pts := d.F64sN(nil, m*dim)
	s := d.F64sN(nil, m)
	if d.Err() != nil {
		return nil
	}
	k := newKORS(cfg, dim)
	if m > cap(k.s) {
		k.pts = kernel.NewMatrix(dim, m)
		k.chol = linalg.NewCholesky(m)
		k.kt, k.l = make([]float64, 2*m), make([]float64, 2*m)
	}
	row := make([]float64, m)
	for i := range m {
		row = d.F64sN(row[:0], i+1)
		if d.Err() != nil {
			return nil
		}
		if !(s[i] > 0) || math.IsInf(s[i], 0) {
			d.Fail("kors weight %v", s[i])
			return nil
		}
		if err := k.chol.Append(row[:i], row[i]); err != nil {
			d.Fail("kors factor row %d: %v", i, err)
			return nil
		}
		k.pts.Append(pts[i*dim : (i+1)*dim])
	}
	k.s = append(k.s, s...)
	return k
}
