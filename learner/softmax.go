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
// Row mode (newSoftmaxHeadRows): one AdaGrad accumulator per class row
// instead of per coordinate — AdaGrad-Norm (Streeter & McMahan, "Less
// Regret via Online Conditioning", 2010; Ward, Wu & Bottou, JMLR 21, 2020):
// G_k ← G_k + g_k²(‖φ‖² + 1), [w_k; b_k] ← [w_k; b_k] − η g_k [φ; 1]/√(δ + G_k).
// It is online gradient descent with the adaptive step η/√G_k on each
// class's block, whose regret is O(‖u‖·√(Σ_t ‖∇_t‖²)) against any u (the
// scalar case of Duchi et al. 2011, Thm. 5, and of Streeter & McMahan's
// bound), and it needs no per-coordinate square root or division: a step is
// one axpy per class, so a head on 2D Fourier features costs about 2·K·2D
// multiply-adds per event (BenchmarkFOGDMulti). It is meant for features
// that share one scale (Fourier features, |φ_j| ≤ s), where a per-coordinate
// step buys nothing; per-coordinate AdaGrad is for raw or standardised
// inputs (linear). The row mode is invariant to a global rescaling of φ
// except for the bias column, and a first step moves the logits of the same
// φ by about η·√(‖φ‖² + 1): η is in units of logits.
//
// Numerics: the softmax subtracts the largest logit before exp (no
// overflow for any finite logits); products that feed the state are
// rounded explicitly (float64(a*b)), so no fused multiply-add makes bits
// platform-dependent.
//
// Shapes: w is K×(D+1) row-major, row k = [w_k (D); b_k]; g2 is K×(D+1)
// (per coordinate) or K (row mode).

import (
	"math"

	"okstream/learner/state"
)

type softmaxHead struct {
	d    int       // D: features (the bias is column D)
	k    int       // K: classes
	eta  float64   // AdaGrad η
	rows bool      // one accumulator per class (AdaGrad-Norm) instead of per coordinate
	w    []float64 // K×(D+1)
	g2   []float64 // K×(D+1) (rows: K): Σ of squared gradients
	a    []float64 // scratch: logits, capacity ≥ K
}

func newSoftmaxHead(d int, eta float64) *softmaxHead {
	return &softmaxHead{d: d, eta: eta}
}

// newSoftmaxHeadRows is the head in row mode (AdaGrad-Norm per class, see
// above).
func newSoftmaxHeadRows(d int, eta float64) *softmaxHead {
	return &softmaxHead{d: d, eta: eta, rows: true}
}

// g2Len is the length of the accumulators of one class.
func (h *softmaxHead) g2Len() int {
	if h.rows {
		return 1
	}
	return h.d + 1
}

// row returns class k's weights (D+1).
func (h *softmaxHead) row(k int) []float64 { n := h.d + 1; return h.w[k*n : (k+1)*n] }

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
	if h.rows {
		h.learnRows(phi, p[:old], c)
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
		w[h.d] -= h.eta * g / math.Sqrt(1e-8+g2[h.d])
	}
}

// learnRows is learn in row mode: per class one accumulator
// G_k += g_k²(‖φ‖²+1) and one axpy. ‖φ‖² is summed once, in index order.
func (h *softmaxHead) learnRows(phi, p []float64, c int) {
	n := h.d + 1
	phi = phi[:h.d]
	nn := 1.0 // ‖φ‖² + 1 (the bias)
	for _, v := range phi {
		nn += float64(v * v)
	}
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
		h.g2[k] += float64(float64(g*g) * nn)
		a := -h.eta * g / math.Sqrt(1e-8+h.g2[k])
		w := h.w[k*n : (k+1)*n]
		for j, v := range phi {
			w[j] += float64(a * v)
		}
		w[h.d] += a
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
	if !h.rows {
		return decodeSoftmax(d, h.d)
	}
	k = d.IntIn(0, MaxClasses, "classes")
	n := k * (h.d + 1)
	if !d.Need(n+k, 8, "softmax head") {
		return 0, nil, nil
	}
	return k, d.F64sN(nil, n), d.F64sN(nil, k)
}

func (h *softmaxHead) set(k int, w, g2 []float64) { h.k, h.w, h.g2 = k, w, g2 }

func (h *softmaxHead) bytes() int { return 8 * (len(h.w) + len(h.g2)) }
