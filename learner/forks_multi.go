package learner

// forks (multi-class) — FORKS' sketched Nyström map shared by all classes,
// with the softmax head.
//
// Reference: D. Wen, X. Zhang, Z. Wei, C. Hou, S. Li, W. Zhang, "Fast
// Second-Order Online Kernel Learning through Incremental Matrix Sketching
// and Decomposition", arXiv 2410.11188v2 (IJCAI 2025): §3.2 Eqs. 1–5 (the
// sketched map φ(x) = Zᵀκ_L(x)), §3.3 Eqs. 6–9 (TISVD), §3.4 Alg. 1 (two
// stages, update rounds every ρ, reset). Binary form, its machinery
// (sketchMap, sketchmap.go) and deviations: forks.go; the multi-class
// reading is ours. Notes: docs/algorithms/multiclass-kernels.md.
//
// Stage 1: multi-class kernel OGD on the log loss (dualMulti, nogd_multi.go)
// over the sketch's buffer: an event with a non-zero softmax gradient is
// stored (every event once two classes are known: the log loss's
// counterpart of Alg. 1's "ℓ_t ≠ 0"). On the round the buffer holds B̃
// events, INIT (sketchMap.initSketch: SJLT S_p, s_m landmarks, Φ_pm,
// Φ_pp, top-k decomposition, Z) builds the map; the head starts from the
// least-squares fit of each class's Stage-1 logits on the buffer,
// w_k = Φ_B^† K_B α_k ("warm=lsq", binary FORKS' option; "warm=none": from
// 0, Alg. 1) and takes its step on the INIT event in the new space, as
// binary FORKS.
// Stage 2: every event computes φ(x) once (O(s_m d + s_m k)); the softmax
// head (softmax.go: K×(k+1) weights, AdaGrad) predicts and learns on it.
// Every ρ-th Stage-2 event is an update round: the event is predicted with
// the model as it stands, folded into the sketches, TISVD and Z refreshed
// (sketchMap.update); then the head is carried into the new map by the
// least-squares change of basis on the stored examples, M = P_new^† P_old,
// w_k' = M w_k, biases and AdaGrad accumulators kept ("update_head=
// transfer", the change of basis binary shared FORKS uses, forks_share.go)
// — or reset to 0 ("update_head=reset": Alg. 1 line 12's reset of the ONS
// state, the classes kept) — and steps on the event in the new map.
//
// Defaults: warm=lsq and update_head=transfer, not the paper's (from 0,
// reset), because the paper's reset discards what the head has learnt
// every ρ events, and a multi-class head with K×k weights relearns slowly.
// Letter, first 4,000 events of one permutation, standardised on the first
// 300, σ = 3, B = 200 (s_p = 200, s_m = k = 100), progressive accuracy
// (%) / log loss: paper (none, reset) 61.10 / 1.715; lsq, reset 62.90 /
// 1.613; none, transfer (accumulators reset) 63.70 / 1.579; lsq, transfer
// 66.92 / 1.444 (accumulators kept; 65.75 / 1.471 with them reset); no
// update round at all (ρ = ∞) 66.95 / 1.444. With ρ = 300 (12 update
// rounds): lsq + reset 37.95 / 2.604, lsq + transfer 66.80 / 1.444. Linear
// multinomial 63.38 / 1.518, class prior 4.50 / 3.468.
//
// Why the softmax head and not FORKS' Online Newton Step per class. The
// multinomial loss's Hessian in the K×k weights is (diag P − PPᵀ) ⊗ φφᵀ;
// K independent ONS heads (ons.go, one k×k inverse each, Sherman–Morrison
// O(k²) per class per event) cost O(K k²) per event against the map's
// O(s_m d + s_m k) and the softmax head's O(K k). Measured (go test
// -bench MultiCost; C = 10 classes, d = 50, k = s_m = 50): one ONS step at
// k = 50 (FeatureONS) takes 0.82 µs, so ten per-class ONS heads would add
// 8.2 µs per event to multi-class FORKS' whole 3.6 µs (map + softmax head;
// binary FORKS at the same map, logistic loss: 2.5 µs): 3.3× the cost at
// C = 10 and about 7× at C = 26 (letter), for a head whose per-class
// curvature ignores the coupling between classes anyway. A
// shared-curvature ONS (one A = αI + Σ s φφᵀ for every class, the
// Kronecker factor of the Hessian above, step A⁻¹φ once for all classes:
// O(k² + Kk)) is the cheap second-order alternative; not done.
//
// Choices and deviations:
//   - Defaults are binary FORKS' preset=wide (s_m = 0.5 s_p, k = s_m: with
//     C classes the paper's k = 0.1B = 10 directions cannot separate them)
//     and a Stage-1 step η = 1 (the margin of one step, forks.go); no
//     slab C (the softmax head's log loss is Lipschitz in the logits:
//     forks.go "Class imbalance" (1)), no λ, α, σ_i, η_i (they are the
//     ONS's).
//   - stage1_lambda > 0 is refused (the dual model is the multi-class one).
//   - Update rounds allocate (the change of basis: O(n k) floats).
//   - No sharing across partitions for the multi-class form.
//
// Cost per event: Stage 1 O(nd + nK); Stage 2 O(s_m d + s_m k) for φ (the
// binary map's cost) plus O(Kk) for the head; update rounds as binary
// FORKS'. Steady state does not allocate.

import (
	"fmt"

	"okstream/learner/linalg"
)

// FORKSMulti is multi-class FORKS. Build it with NewMulti("forks:...").
type FORKSMulti struct {
	base
	sk      *sketchMap
	dual    dualMulti // Stage 1
	head    *softmaxHead
	headEta float64
	warm    bool      // warm=lsq: fit the head to the Stage-1 logits at INIT
	xfer    bool      // update_head=transfer
	kl      []float64 // scratch: Stage-1 kernel row, capacity B̃
}

func init() {
	RegisterMulti(MultiRegistration{
		Name:    "forks",
		Summary: "multi-class FORKS: multi-class kernel OGD (log loss) into the buffer, then the sketched Nyström map (incremental sketches + TISVD) shared by all classes + the softmax head (AdaGrad), carried over update rounds by a change of basis",
		Paper:   "Wen et al., arXiv 2410.11188v2 (IJCAI 2025), §3.2–3.4, Alg. 1; multi-class head: Bishop 2006 §4.3.4, Duchi et al. 2011",
		Params: []ParamDoc{
			docKernel, docSigma, docDegree, docCoef0,
			docSkBudget, docSkBuffer, docSkSp,
			{Name: "sm", Default: "0.5×sp", Doc: docSkSm.Doc},
			{Name: "k", Default: "sm", Doc: docSkK.Doc + "; the map's rank is at most sm"},
			docSkBlocks, docSkRho, docSkTheta, docSkHorz, docSkMax, docSkLand,
			{Name: "decomp", Default: "tisvd", Doc: "decomposition of Φ_pp: tisvd, svd or rsvd (as binary forks)"},
			docSkReorth, docSkOver, docSkPower, docSkPinv,
			{Name: "eta", Default: "1", Doc: "Stage-1 kernel OGD step on the log loss"},
			{Name: "stage1_lambda", Default: "0", Doc: "must be 0 (no multi-class form)"},
			{Name: "warm", Default: "lsq", Doc: "Stage-2 start: none (head at 0, the paper) or lsq (each class's weights fitted by least squares to its Stage-1 logits on the buffer)"},
			{Name: "head_eta", Default: "0.5", Doc: "AdaGrad step of the softmax head (Stage 2)"},
			{Name: "update_head", Default: "transfer", Doc: "the head on update rounds: transfer (weights carried into the new map by the least-squares change of basis on the stored examples, accumulators kept) or reset (weights and accumulators 0, the paper's reset of the ONS state)"},
			docSeed,
		},
		New: newFORKSMulti,
	})
}

func newFORKSMulti(p *Params, dim int) (Multi, error) {
	kern := readKernel(p)
	o := readSketch(p, Hinge, decompTISVD, true, 1, "lsq")
	headEta := p.Float("head_eta", 0.5, Positive)
	xfer := p.Enum("update_head", "transfer", "transfer", "reset") == "transfer"
	seed := p.Uint64("seed", 1)
	if err := p.Err(); err != nil {
		return nil, err
	}
	if err := o.check("forks"); err != nil {
		return nil, err
	}
	if o.shrink > 0 {
		return nil, fmt.Errorf("learner forks: parameter stage1_lambda: has no multi-class form (leave it at 0)")
	}
	warm := o.warm
	o.warm = false // the sketch's own warm start fits its binary coefficients; the head's is warmHead
	return &FORKSMulti{
		base:    newBase(p, dim, MultiClass),
		sk:      newSketchMap(o, kern, dim, seed),
		dual:    dualMulti{cap: o.buffer, eta: o.eta},
		head:    newSoftmaxHead(o.k, headEta),
		headEta: headEta,
		warm:    warm,
		xfer:    xfer,
		kl:      make([]float64, o.buffer),
	}, nil
}

// Classes returns the number of classes learnt so far.
func (l *FORKSMulti) Classes() int {
	if l.sk.ready {
		return l.head.k
	}
	return l.dual.k
}

// PredictProba writes the class distribution of x into p[:K] (Stage 2:
// leaving φ(x) in the sketch's scratch).
func (l *FORKSMulti) PredictProba(x, p []float64) []float64 {
	l.checkDim(x)
	sk := l.sk
	if !sk.ready {
		return l.dual.probs(sk.kern.Row(l.kl[:sk.n()], sk.stored, x), p)
	}
	return l.head.probs(sk.features(x), p)
}

// LearnClass predicts x, learns class c and returns the pre-update
// distribution.
func (l *FORKSMulti) LearnClass(x []float64, c int, p []float64) []float64 {
	if c < 0 || c > l.Classes() || c >= MaxClasses {
		panic("learner: class index out of range")
	}
	p = l.PredictProba(x, p)
	l.updates++
	sk := l.sk
	if !sk.ready {
		if !l.dual.gradient(p, c) {
			return p
		}
		l.dual.store(sk.n(), p, c)
		if sk.learn1(x, 1) { // stores x (its binary coefficient is unused); INIT ran
			l.head = newSoftmaxHead(sk.k, l.headEta)
			l.head.grow(l.dual.k)
			if l.warm {
				l.warmHead()
			}
			l.dual.k, l.dual.a = 0, nil
			l.freshStep(x, c)
		}
		return p
	}
	upd := sk.nextIsUpdate()
	sk.rounds++
	if upd {
		var old, po []float64
		if l.xfer {
			old, po = l.storedFeatures()
		}
		sk.update(x)
		h := newSoftmaxHead(sk.k, l.headEta)
		h.grow(l.head.k)
		if l.xfer {
			l.transferHead(h, old, po)
		}
		l.head = h
		l.freshStep(x, c)
		return p
	}
	l.head.learn(sk.phi, p, c)
	return p
}

// freshStep takes the head's step on (x, c) in the current map (after INIT
// or an update round), from the head's own prediction there.
func (l *FORKSMulti) freshStep(x []float64, c int) {
	phi := l.sk.features(x)
	q := rows(&l.kl, l.head.k)
	q = l.head.probs(phi, q)
	l.head.learn(phi, q, c)
}

// warmHead (warm=lsq, at INIT) sets each class's weights to the
// least-squares fit w_k = Φ_B^† (K_B α_k) of its Stage-1 logits on the
// buffer (sketchMap.storedPinv; K_B the buffer's Gram matrix, O(n²d) once);
// the biases stay 0. If the pseudo-inverse fails the head stays at 0.
func (l *FORKSMulti) warmHead() {
	sk, n := l.sk, l.sk.n()
	pinv := sk.storedPinv()
	if pinv == nil {
		return
	}
	gram := sk.kern.Gram(make([]float64, n*n), sk.stored)
	f := make([]float64, n)
	for k := range l.dual.k {
		linalg.MatVec(f, gram, n, n, l.dual.a[k*l.dual.cap:k*l.dual.cap+n])
		linalg.MatVec(l.head.row(k)[:sk.k], pinv, sk.k, n, f)
	}
}

// storedFeatures returns a copy of the stored examples (n×d) and their
// features in the current map (n×k), before an update round.
func (l *FORKSMulti) storedFeatures() (rows, phi []float64) {
	sk, n, k := l.sk, l.sk.n(), l.sk.k
	rows = append([]float64(nil), sk.stored.Data()...)
	phi = make([]float64, n*k)
	for i := range n {
		copy(phi[i*k:i*k+k], sk.features(rows[i*l.dim:(i+1)*l.dim]))
	}
	return rows, phi
}

// transferHead (update_head=transfer) carries the head's weights into the
// new map: with P_o and P_n the old and new features of the same stored
// examples (n×k), M = P_n^† P_o (k×k) is the least-squares fit
// φ_oldᵀ ≈ φ_newᵀ M, so w_k' = M w_k keeps the logits on them (binary
// shared FORKS' change of basis, forks_share.go). Biases and AdaGrad
// accumulators are kept (the accumulators are per coordinate of another
// basis, but of the same scale: measured better than restarting them, see
// the file's comment). If the pseudo-inverse fails h stays at 0 (the
// reset). Cost O(n(s_m d + s_m k) + nk² + Kk²) per update round.
func (l *FORKSMulti) transferHead(h *softmaxHead, rows, po []float64) {
	sk, k := l.sk, l.sk.k
	n := len(po) / k
	pn := make([]float64, n*k)
	for i := range n {
		copy(pn[i*k:i*k+k], sk.features(rows[i*l.dim:(i+1)*l.dim]))
	}
	zp := make([]float64, k*n)
	if _, err := linalg.Pinv(zp, pn, n, k, -1, nil); err != nil {
		return
	}
	m := make([]float64, k*k)
	linalg.Mul(m, zp, po, k, n, k)
	for c := range l.head.k {
		src, dst := l.head.row(c), h.row(c)
		linalg.MatVec(dst[:k], m, k, k, src[:k])
		dst[k] = src[k]
		copy(h.g2[c*(k+1):(c+1)*(k+1)], l.head.g2[c*(k+1):(c+1)*(k+1)])
	}
}

// MarshalBinary encodes the sketch state, then the dual model (Stage 1)
// or the head (Stage 2).
func (l *FORKSMulti) MarshalBinary() ([]byte, error) {
	e := l.encoder(l.sk.bytes() + 8*len(l.dual.a) + l.head.bytes() + 64)
	l.sk.encode(e)
	if l.sk.ready {
		l.head.encode(e)
	} else {
		l.dual.encode(e)
	}
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured learner;
// on error the learner is unchanged.
func (l *FORKSMulti) UnmarshalBinary(data []byte) error {
	d, updates := l.decoder(data)
	st := l.sk.decode(d)
	var k int
	var w, g2, a []float64
	if st.ready {
		k, w, g2 = decodeSoftmax(d, l.sk.k)
	} else {
		k, a = decodeDualMulti(d, l.sk.buffer)
	}
	if err := d.Done(); err != nil {
		return err
	}
	l.sk.install(st)
	l.updates = updates
	l.head = newSoftmaxHead(l.sk.k, l.headEta)
	if st.ready {
		l.head.set(k, w, g2)
		l.dual.k, l.dual.a = 0, nil
	} else {
		l.dual.k, l.dual.a = k, a
	}
	return nil
}

// Info reports the nominal budget B and the number of stored events.
func (l *FORKSMulti) Info() Info {
	return l.info(l.sk.budget, l.sk.n(), l.sk.bytes()+8*(len(l.dual.a)+cap(l.kl))+l.head.bytes())
}
