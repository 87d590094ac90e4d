package learner

// softmaxHead — the one multi-class head of okstream: multinomial logistic
// regression (softmax cross-entropy) on a feature vector φ that the learner
// computes once per event, one weight row per class.
//
// Model: P(k | x) = exp(a_k) / Σ_j exp(a_j), a_k = w_kᵀφ + b_k, for the K
// classes seen so far. Loss: −log P(c | x). Its gradient in a_k is
// g_k = P(k | x) − [k = c] (Bishop, Pattern Recognition and Machine
// Learning, 2006, §4.3.4, Eq. 4.109), so a step costs O(K·D) for D
// features: the same per-class cost as a binary head, which is what makes
// multi-class FOGD with C classes cost about C× the head of binary FOGD and
// not C× its feature map.
//
// Step: per-coordinate AdaGrad (Duchi, Hazan & Singer, JMLR 12, 2011,
// Fig. 1, diagonal form): w_kj ← w_kj − η g_k φ_j / √(δ + Σ (g_k φ_j)²),
// the same for b_k with φ_j = 1, δ = 1e-8 (only to avoid 0/0). AdaGrad
// needs no horizon and no decay schedule, and its regret bound holds for
// any sequence of bounded convex losses (ibid., Thm. 5); a fixed η in the
// units of standardised (or Fourier, |φ_j| ≤ 1) features is what `eta`
// sets. A new class's row starts at zero with zero accumulators.
//
// Column mode (newSoftmaxHeadCols): one AdaGrad accumulator per feature,
// shared by the classes: G_j ← G_j + φ_j²·Σ_k g_k², w_kj ← w_kj −
// g_k·η φ_j/√(δ + G_j) (bias: φ_D = 1). It is AdaGrad over the family of
// preconditioners diag(h) ⊗ I_K (one scale per feature, the same for
// every class), which has AdaGrad's regret bound for that family (Gupta,
// Koren & Singer, "A Unified Approach to Adaptive Regularization in Online
// and Stochastic Optimization", 2017, §3: O(√(Σ_j G_j,T)·max‖w_j‖) for
// the best fixed weights), and it needs D square roots per event instead of
// K·D: a step is the vector r_j = η φ_j/√G_j and one axpy per class, so
// multi-class FOGD with C = 10 costs under 2× binary FOGD
// (BenchmarkFOGDMulti; per coordinate it is 4.5×). Per-class scalar steps
// (AdaGrad-Norm) were measured too: as cheap, but 4 points below on
// letter (docs/algorithms/multiclass.md). Meant for features that share a
// scale (Fourier features); linear keeps per-coordinate steps.
// Lazy refresh: the step η/√(δ + G_j) is recomputed only when G_j has
// grown by more than 2 % since its last refresh (colsRefresh), so that
// after the first events almost no square root or division is taken. The
// step in use is then between the exact one and 1/√1.02 (≈ 0.99) of it and
// never increases, the two properties AdaGrad's analysis uses (a
// non-decreasing preconditioner within a constant factor of the exact
// one: the regret bound grows by at most that factor, ≈ 1 %).
//
// Numerics: the softmax subtracts the largest logit before exp (no
// overflow for any finite logits); products that feed the state are
// rounded explicitly (float64(a*b)), so no fused multiply-add makes bits
// platform-dependent.
//
// Shapes: w is K×(D+1) row-major, row k = [w_k (D); b_k]; g2 is K×(D+1)
// (per coordinate) or 3×(D+1) (column mode: G, G at the last refresh, the
// step in use).

import (
	"math"

	"okstream/learner/state"
)

type softmaxHead struct {
	d    int       // D: features (the bias is column D)
	k    int       // K: classes
	eta  float64   // AdaGrad η
	etaB float64   // the bias's η (0: eta); auto's linear member, whose features are scaled by 1/σ̂ and its eta by σ̂, keeps the bias's step (auto_multi.go)
	cols bool      // one accumulator per feature, shared by the classes
	r    []float64 // scratch (cols): φ_j·cinv_j
	w    []float64 // K×(D+1)
	g2   []float64 // K×(D+1): Σ of squared gradients; cols: 3×(D+1), [G; G at the last refresh; step η/√G in use]
}

func newSoftmaxHead(d int, eta float64) *softmaxHead {
	return &softmaxHead{d: d, eta: eta}
}

// newSoftmaxHeadCols is the head in column mode (see above).
func newSoftmaxHeadCols(d int, eta float64) *softmaxHead {
	return &softmaxHead{d: d, eta: eta, cols: true, g2: make([]float64, 3*(d+1)), r: make([]float64, d+1)}
}

// g2Len is the length of the accumulators of one class.
func (h *softmaxHead) g2Len() int {
	if h.cols {
		return 0
	}
	return h.d + 1
}

// row returns class k's weights (D+1).
func (h *softmaxHead) row(k int) []float64 { n := h.d + 1; return h.w[k*n : (k+1)*n] }

// biasEta is the bias column's step.
func (h *softmaxHead) biasEta() float64 {
	if h.etaB > 0 {
		return h.etaB
	}
	return h.eta
}

// grow adds classes up to k (k ≤ MaxClasses).
func (h *softmaxHead) grow(k int) {
	if k <= h.k {
		return
	}
	if k > MaxClasses {
		panic("learner: more than MaxClasses classes")
	}
	n := h.d + 1
	h.w = append(h.w, make([]float64, (k-h.k)*n)...)
	h.g2 = append(h.g2, make([]float64, (k-h.k)*h.g2Len())...)
	h.k = k
}

// probs writes the softmax of the logits for φ into p[:K] and returns it.
func (h *softmaxHead) probs(phi, p []float64) []float64 {
	p = p[:h.k]
	if h.k == 0 {
		return p
	}
	n := h.d + 1
	mx := math.Inf(-1)
	for k := range h.k {
		r := h.w[k*n : (k+1)*n]
		a := dot(r[:h.d], phi[:h.d]) + r[h.d]
		p[k] = a
		if a > mx {
			mx = a
		}
	}
	return softmaxInPlace(p, mx)
}

// softmaxInPlace turns logits p (largest mx) into probabilities: exp(p_k −
// mx) normalised, summed in index order. A NaN logit makes every entry NaN
// (the caller's non-finite guard sees it).
func softmaxInPlace(p []float64, mx float64) []float64 {
	if math.IsInf(mx, 1) || math.IsNaN(mx) {
		for k := range p {
			p[k] = math.NaN()
		}
		return p
	}
	var s float64
	for k, a := range p {
		e := math.Exp(a - mx)
		p[k] = e
		s += e
	}
	for k := range p {
		p[k] /= s
	}
	return p
}

// learn takes the AdaGrad step for label c on φ, given p = the
// distribution probs returned for φ (over the K before c was added; a class
// c ≥ K is added first, with probability 0).
func (h *softmaxHead) learn(phi, p []float64, c int) {
	old := len(p)
	h.grow(c + 1)
	n := h.d + 1
	if h.cols {
		h.learnCols(phi, p[:old], c)
		return
	}
	for k := range h.k {
		var pk float64
		if k < old {
			pk = p[k]
		}
		g := pk
		if k == c {
			g -= 1
		}
		if g == 0 {
			continue
		}
		w, g2 := h.w[k*n:(k+1)*n], h.g2[k*n:(k+1)*n]
		for j, v := range phi[:h.d] {
			gj := float64(g * v)
			if gj == 0 {
				continue
			}
			g2[j] += float64(gj * gj)
			w[j] -= h.eta * gj / math.Sqrt(1e-8+g2[j])
		}
		g2[h.d] += float64(g * g)
		w[h.d] -= h.biasEta() * g / math.Sqrt(1e-8+g2[h.d])
	}
}

// colsRefresh is the growth of G_j that refreshes its step (column mode).
const colsRefresh = 1.02

// learnCols is learn in column mode (see above): the shared scale
// Σ_k g_k² (summed in class order), the step vector r, one axpy per class.
func (h *softmaxHead) learnCols(phi, p []float64, c int) {
	n := h.d + 1
	phi = phi[:h.d]
	var ss float64
	for k := range h.k {
		var g float64
		if k < len(p) {
			g = p[k]
		}
		if k == c {
			g -= 1
		}
		ss += float64(g * g)
	}
	m := len(phi) + 1
	r := h.r[:m]
	g2, ref, inv := h.g2[:m], h.g2[m:2*m], h.g2[2*m:3*m]
	for j, v := range phi {
		gj := g2[j] + float64(float64(v*v)*ss)
		g2[j] = gj
		if gj > float64(colsRefresh*ref[j]) { // (ref = 0: the first non-zero G)
			ref[j] = gj
			inv[j] = h.eta / math.Sqrt(1e-8+gj)
		}
		r[j] = float64(v * inv[j])
	}
	gj := g2[h.d] + ss
	g2[h.d] = gj
	if gj > float64(colsRefresh*ref[h.d]) {
		ref[h.d] = gj
		inv[h.d] = h.biasEta() / math.Sqrt(1e-8+gj)
	}
	r[h.d] = inv[h.d]
	for k := range h.k {
		var g float64
		if k < len(p) {
			g = p[k]
		}
		if k == c {
			g -= 1
		}
		if g == 0 {
			continue
		}
		subScaled(h.w[k*n:(k+1)*n], r, g)
	}
}

// subScaled sets w −= g·r (len(w) = len(r)) with every product rounded
// explicitly (no fused multiply-add on any platform), four entries per
// pass.
func subScaled(w, r []float64, g float64) {
	w = w[:len(r)]
	j := 0
	for ; j+4 <= len(r); j += 4 {
		w0, w1, w2, w3 := w[j]-float64(g*r[j]), w[j+1]-float64(g*r[j+1]), w[j+2]-float64(g*r[j+2]), w[j+3]-float64(g*r[j+3])
		w[j], w[j+1], w[j+2], w[j+3] = w0, w1, w2, w3
	}
	for ; j < len(r); j++ {
		w[j] -= float64(g * r[j])
	}
}

// encode writes K and the rows.
func (h *softmaxHead) encode(e *state.Encoder) {
	e.Int(h.k)
	e.F64s(h.w)
	e.F64s(h.g2)
}

// decodeSoftmax reads a head of D features written by encode; the caller
// installs it with set after d.Done().
func decodeSoftmax(d *state.Decoder, features int) (k int, w, g2 []float64) {
	k = d.IntIn(0, MaxClasses, "classes")
	n := k * (features + 1)
	if !d.Need(2*n, 8, "softmax head") {
		return 0, nil, nil
	}
	return k, d.F64sN(nil, n), d.F64sN(nil, n)
}

// decode reads a state written by encode of a head configured like h (its
// D and mode); the caller installs it with set after d.Done().
func (h *softmaxHead) decode(d *state.Decoder) (k int, w, g2 []float64) {
	if !h.cols {
		return decodeSoftmax(d, h.d)
	}
	k = d.IntIn(0, MaxClasses, "classes")
	n := k * (h.d + 1)
	if !d.Need(n+3*(h.d+1), 8, "softmax head") {
		return 0, nil, nil
	}
	return k, d.F64sN(nil, n), d.F64sN(nil, 3*(h.d+1))
}

func (h *softmaxHead) set(k int, w, g2 []float64) { h.k, h.w, h.g2 = k, w, g2 }

func (h *softmaxHead) bytes() int { return 8 * (len(h.w) + len(h.g2)) }
