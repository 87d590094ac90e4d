package learner

// nogd (multi-class) — NOGD's Nyström feature map with the softmax head.
//
// Reference: J. Lu, S. C. H. Hoi, J. Wang, P. Zhao, Z.-Y. Liu, "Large Scale
// Online Kernel Learning", JMLR 17(47), 2016, Algorithm "NOGD" (binary
// form and its deviations: nogd.go); the multi-class reading is ours, with
// the softmax head of softmax.go (multinomial logistic regression, AdaGrad).
// Notes: docs/algorithms/multiclass-kernels.md.
//
// Phase 1 (multi-class kernel OGD, dual form; dualMulti below): the
// logits are a_k(x) = Σ_i α_{ik} κ(x_i, x), P = softmax(a). An event whose
// softmax gradient g_k = P(k | x) − [k = c] is not all zero is stored with
// α_{ik} = −η g_k, until B events are stored. This is binary NOGD's phase
// 1 with the hinge replaced by the multinomial log loss: the hinge stores
// an event when y f < 1, the log loss's gradient is never zero once two
// classes are known, so phase 1 stores the first B events (the events
// while only one class is known have a zero gradient and are skipped, as
// are binary NOGD's events inside the margin).
// Phase 2 (Nyström features, primal form): with K_B = V Λ Vᵀ, the top-k
// eigenpairs give z(x) = Λ_k^{-1/2} V_kᵀ κ(SV, x) ∈ ℝ^r (r ≤ k), computed
// once per event and shared by every class; warm start w_k = Λ M α_k for
// each class (so w_kᵀz(x) is the Nyström projection of the phase-1 logit,
// as binary NOGD's), bias 0, AdaGrad accumulators 0; then the softmax head
// learns on z.
//
// Choices and deviations:
//   - k defaults to B (binary NOGD's preset=wide): with C classes the
//     paper's k = 0.1B leaves most classes outside the map's span (binary
//     nogd.go, "Class imbalance", cause (1)).
//   - Phase 1 steps with η ("eta", default 1: the margin of one step of
//     binary NOGD's wide preset; the log-loss gradient is bounded by 1 per
//     class); phase 2 with AdaGrad ("head_eta", default 0.5, the linear
//     multi-class model's). Warm start: "warm=false" starts the head at 0.
//   - A class first seen in phase 2 gets a zero head row (softmax.go); one
//     first seen in phase 1 a zero dual row, and the event is stored.
//   - The map M (r×B) is stored in the state, as binary NOGD's.
//   - No loss choice (the multinomial log loss) and no sharing across
//     partitions for the multi-class form.
//
// Cost per event, K classes: phase 1 O(nd + nK) for n ≤ B stored events;
// phase 2 O(Bd + rB) for the map (binary NOGD's) plus O(rK) for the head,
// instead of K× the map for one-vs-rest. Memory: B×d stored events, r×B
// map, K×(r+1)×2 head. Steady state does not allocate.

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"okstream/learner/kernel"
	"okstream/learner/linalg"
	"okstream/learner/state"
)

// dualMulti is multi-class kernel OGD on the log loss, in dual form, over
// up to cap stored events held by the owner (a kernel.Matrix): α is K×cap
// row-major, row k = class k's coefficients over the stored events.
type dualMulti struct {
	cap int
	eta float64
	k   int
	a   []float64 // K×cap
}

// logits writes a_k = α_kᵀ κ[:n] into out[:K] and returns it with the
// largest entry.
func (d *dualMulti) logits(krow, out []float64) ([]float64, float64) {
	out = out[:d.k]
	mx := math.Inf(-1)
	for k := range d.k {
		v := dot(d.a[k*d.cap:k*d.cap+len(krow)], krow)
		out[k] = v
		mx = math.Max(mx, v)
	}
	return out, mx
}

// probs writes P = softmax(a) over the K known classes into p[:K].
func (d *dualMulti) probs(krow, p []float64) []float64 {
	if d.k == 0 {
		return p[:0]
	}
	p, mx := d.logits(krow, p)
	return softmaxInPlace(p, mx)
}

// gradient reports whether the log-loss gradient P − e_c is non-zero, for
// p the pre-update distribution over the classes known before c.
func (d *dualMulti) gradient(p []float64, c int) bool {
	if c >= len(p) {
		return true // a new class: g_c = −1
	}
	for k, v := range p {
		if k == c && v != 1 || k != c && v != 0 {
			return true
		}
	}
	return false
}

// store writes column n (the event just stored) α_{nk} = −η g_k, adding
// class c if new.
func (d *dualMulti) store(n int, p []float64, c int) {
	if c >= d.k {
		d.a = append(d.a, make([]float64, (c+1-d.k)*d.cap)...)
		d.k = c + 1
	}
	for k := range d.k {
		var g float64
		if k < len(p) {
			g = p[k]
		}
		if k == c {
			g -= 1
		}
		d.a[k*d.cap+n] = -d.eta * g
	}
}

func (d *dualMulti) encode(e *state.Encoder) {
	e.Int(d.k)
	e.F64s(d.a)
}

// decodeDualMulti reads a dual model of cap columns; the caller installs
// (k, a) after Done.
func decodeDualMulti(d *state.Decoder, cap int) (k int, a []float64) {
	k = d.IntIn(0, MaxClasses, "classes")
	if !d.Need(k*cap, 8, "dual coefficients") {
		return 0, nil
	}
	a = d.F64s(nil)
	if d.Err() == nil && len(a) != k*cap {
		d.Fail("dual coefficients: %d values for %d classes × %d", len(a), k, cap)
	}
	return k, a
}

// NOGDMulti is multi-class NOGD. Build it with NewMulti("nogd:...").
type NOGDMulti struct {
	base
	kern   kernel.Kernel
	budget int
	k      int
	warm   bool

	sv   *kernel.Matrix
	dual dualMulti
	// Phase 2 (m != nil): rank r ≤ k map and the head.
	r    int
	m    []float64 // r×B: Λ^{-1/2} Vᵀ
	head *softmaxHead
	krow []float64 // scratch, B
	z    []float64 // scratch, r
}

func init() {
	RegisterMulti(MultiRegistration{
		Name:    "nogd",
		Summary: "multi-class NOGD: multi-class kernel OGD (log loss) on the first B events, then their rank-k Nyström map shared by all classes + the softmax head (AdaGrad)",
		Paper:   "Lu et al., Large Scale Online Kernel Learning, JMLR 2016 (NOGD); multi-class head: Bishop 2006 §4.3.4, Duchi et al. 2011",
		Params: []ParamDoc{
			docKernel, docSigma, docDegree, docCoef0, docBudget,
			{Name: "k", Default: "budget", Doc: "rank of the Nyström map, 1 ≤ k ≤ budget (default: every direction the budget spans)"},
			{Name: "eta", Default: "1", Doc: "phase-1 kernel OGD step on the log loss"},
			{Name: "head_eta", Default: "0.5", Doc: "AdaGrad step of the softmax head (phase 2)"},
			{Name: "warm", Default: "true", Doc: "phase 2 starts from the Nyström projection of the phase-1 model (false: from 0)"},
			{Name: "seed", Default: "1", Doc: "accepted and ignored: NOGD draws nothing"},
		},
		New: newNOGDMulti,
	})
}

func newNOGDMulti(p *Params, dim int) (Multi, error) {
	kern := readKernel(p)
	budget := p.Int("budget", 100, InRange(1, 1<<16))
	k := p.Int("k", budget, Positive)
	eta := p.Float("eta", 1, Positive)
	headEta := p.Float("head_eta", 0.5, Positive)
	warm := p.Bool("warm", true)
	p.localUint64("seed", 1)
	if err := p.Err(); err != nil {
		return nil, err
	}
	if k > budget {
		return nil, fmt.Errorf("learner nogd: parameter k: %d must be <= budget (%d)", k, budget)
	}
	return &NOGDMulti{
		base: newBase(p, dim, MultiClass),
		kern: kern, budget: budget, k: k, warm: warm,
		sv:   kernel.NewMatrix(dim, budget),
		dual: dualMulti{cap: budget, eta: eta},
		head: newSoftmaxHead(0, headEta),
		krow: make([]float64, budget),
	}, nil
}

func (l *NOGDMulti) primal() bool { return l.m != nil }

// Classes returns the number of classes learnt so far.
func (l *NOGDMulti) Classes() int {
	if l.primal() {
		return l.head.k
	}
	return l.dual.k
}

// PredictProba writes the class distribution of x into p[:K]; it leaves
// κ(SV, x) in krow and, in phase 2, z(x) in z.
func (l *NOGDMulti) PredictProba(x, p []float64) []float64 {
	l.checkDim(x)
	n := l.sv.Len()
	kr := l.kern.Row(l.krow[:n], l.sv, x)
	if !l.primal() {
		return l.dual.probs(kr, p)
	}
	if l.r > 0 {
		blas64.Implementation().Dgemv(blas.NoTrans, l.r, l.budget, 1, l.m, l.budget, kr, 1, 0, l.z, 1)
	}
	return l.head.probs(l.z, p)
}

// LearnClass predicts x, learns class c and returns the pre-update
// distribution.
func (l *NOGDMulti) LearnClass(x []float64, c int, p []float64) []float64 {
	if c < 0 || c > l.Classes() || c >= MaxClasses {
		panic("learner: class index out of range")
	}
	p = l.PredictProba(x, p)
	l.updates++
	if l.primal() {
		l.head.learn(l.z, p, c)
		return p
	}
	if !l.dual.gradient(p, c) {
		return p
	}
	n := l.sv.Len()
	l.sv.Append(x)
	l.dual.store(n, p, c)
	if l.sv.Len() == l.budget {
		l.buildMap()
	}
	return p
}

// buildMap computes the rank-k Nyström map of the B stored events and
// starts the head at the projection of the dual model (warm) or at 0. A
// zero Gram matrix or a failed eigensolver gives rank 0: the head then
// learns class frequencies only (never with a Gaussian kernel).
func (l *NOGDMulti) buildMap() {
	B := l.budget
	gram := l.kern.Gram(make([]float64, B*B), l.sv)
	r, m, vals := linalg.NystromMap(gram, B, l.k)
	if m == nil {
		m = []float64{}
	}
	h := newSoftmaxHead(r, l.head.eta)
	h.grow(l.dual.k)
	if l.warm {
		for k := range l.dual.k {
			w, a := h.row(k), l.dual.a[k*B:(k+1)*B]
			for j := range r {
				w[j] = vals[j] * dot(m[j*B:(j+1)*B], a)
			}
		}
	}
	l.r, l.m, l.head = r, m, h
	l.z = make([]float64, r)
	l.dual.k, l.dual.a = 0, nil
}

// MarshalBinary encodes the stored events and either the dual model
// (phase 1) or the map and the head (phase 2).
func (l *NOGDMulti) MarshalBinary() ([]byte, error) {
	e := l.encoder(8*(len(l.sv.Data())+len(l.m)+len(l.dual.a)) + l.head.bytes() + 64)
	e.F64s(l.sv.Data())
	e.Bool(l.primal())
	if l.primal() {
		e.Int(l.r)
		e.F64s(l.m)
		l.head.encode(e)
	} else {
		l.dual.encode(e)
	}
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured learner;
// on error the learner is unchanged.
func (l *NOGDMulti) UnmarshalBinary(data []byte) error {
	d, updates := l.decoder(data)
	svData := d.F64s(nil)
	primal := d.Bool()
	var r, k int
	var m, w, g2, a []float64
	if primal {
		r = d.IntIn(0, l.k, "nogd rank")
		m = d.F64sN(nil, r*l.budget)
		k, w, g2 = decodeSoftmax(d, r)
	} else {
		k, a = decodeDualMulti(d, l.budget)
	}
	n := len(svData) / l.dim
	if d.Err() == nil && (len(svData)%l.dim != 0 || n > l.budget || (primal && n != l.budget) || (!primal && n == l.budget)) {
		d.Fail("nogd multi: inconsistent state (%d stored values)", len(svData))
	}
	if err := d.Done(); err != nil {
		return err
	}
	if err := l.sv.SetData(svData); err != nil {
		return err
	}
	l.updates = updates
	if primal {
		if m == nil {
			m = []float64{}
		}
		h := newSoftmaxHead(r, l.head.eta)
		h.set(k, w, g2)
		l.r, l.m, l.head, l.z = r, m, h, make([]float64, r)
		l.dual.k, l.dual.a = 0, nil
	} else {
		l.r, l.m, l.z = 0, nil, nil
		l.head = newSoftmaxHead(0, l.head.eta)
		l.dual.k, l.dual.a = k, a
	}
	return nil
}

// Info reports the budget B and the number of stored events.
func (l *NOGDMulti) Info() Info {
	return l.info(l.budget, l.sv.Len(), l.sv.Bytes()+8*(len(l.m)+len(l.dual.a)+len(l.krow)+len(l.z))+l.head.bytes())
}
