package learner

// kons is the shared core of PROS-N-KONS (prosnkons.go) and CON-KONS
// (conkons.go): an online Newton step with slab projection on the Nyström
// embedding of a KORS dictionary (Calandriello, Lazaric, Valko, NIPS 2017).
// The two learners differ only in what happens to the ONS state when the
// dictionary changes (the epoch transition): PROS-N-KONS restarts
// (w = 0, A = αI), CON-KONS carries w and A over to the new embedding.
// Everything else — the kernel row, the embedding, the ONS step, KORS, the
// state encoding — is here, once. See the two files for the algorithms,
// their references and their deviations.
//
// Round t (the order of the ALD authors' R code, PROS-N-KONS.R):
//
//  1. k = κ(I, x_t) (one Kernel.Row against the dictionary), φ = M k with
//     M = Λ^{-1/2}Uᵀ from K_II = UΛUᵀ (the current epoch's map);
//  2. score f = φᵀw with w the slab projection of the pending iterate v
//     (lazy ONS, ons.go; CON-KONS skips it right after a transition);
//  3. if y is given: g = ℓ'(f, y)·φ, A ← A + (σ/2) g gᵀ, v = w − A⁻¹g (the
//     updated A, or the previous one with inverse=old);
//  4. KORS on x_t with the same kernel row (kors.go); if x_t is taken, a new
//     epoch starts: the map is rebuilt from the eigendecomposition of the
//     new K_II and the ONS state is restarted or carried over.
//
// Round 1 puts x_1 into the empty dictionary with weight 1 and scores 0
// without an update, as the code does.
//
// The epoch change is done at the end of the round that inserts (the code
// does it at the start of the next round; nothing happens in between, so
// the arithmetic is the same), which keeps Predict pure: an unlabelled
// event after an insertion is scored with the new epoch's model, exactly
// what the next Learn will return. Epoch changes cost O(n³ + n²d) and
// allocate (the eigendecomposition, the new map); rounds within an epoch
// cost O(nd + n²) and do not allocate.

import (
	"okstream/learner/kernel"
	"okstream/learner/linalg"
	"okstream/learner/rng"
)

// konsMode is the epoch transition.
type konsMode int

const (
	konsRestart konsMode = iota + 1 // PROS-N-KONS: w = 0, A = αI
	konsCarry                       // CON-KONS: w and A mapped to the new embedding
)

// Parameter docs shared by PROS-N-KONS and CON-KONS.
var (
	docKONSAlpha = ParamDoc{Name: "alpha", Default: "5", Doc: "ONS regularizer α > 0: A = αI at a restart (PROS-N-KONS: every epoch; CON-KONS: the first, then α on each new direction) (ALD paper grid {1, 5, 15}; its Table 3 rows use 5)"}
	docKONSC     = ParamDoc{Name: "c", Default: "1", Doc: "slab level C > 0: w is projected onto |φᵀw| ≤ C before each prediction (ALD paper: 1)"}
	docKONSCurv  = ParamDoc{Name: "curv", Default: "1/(8c²)", Doc: "curvature σ > 0 of the ONS: A ← A + (σ/2) g gᵀ (the ALD authors' code: σ = 1/(8C²), weight 1/16)"}
	docKONSSeed  = ParamDoc{Name: "seed", Default: "1", Doc: "random seed of the KORS draws"}
)

// kons is the PROS-N-KONS / CON-KONS learner state.
type kons struct {
	base
	kern   kernel.Kernel
	loss   Loss
	mode   konsMode
	alpha  float64
	c      float64
	curv   float64 // σ; the A-update weight is σ/2
	newInv bool
	dict   *kors
	rnd    *rng.Source

	// Epoch state: the map of the current dictionary (n = dict.Len() points)
	// and the ONS in its r dimensions.
	r   int       // rank of the map, ≤ n
	m   []float64 // r×n row-major, Λ^{-1/2}Uᵀ
	ons *ons
	raw bool // CON-KONS: the next score is φᵀv, without projection

	krow []float64 // scratch, ≥ n
	phi  []float64 // scratch, ≥ r
}

// newKONS reads the parameters common to both learners and builds the core.
func newKONS(p *Params, dim int, mode konsMode, defLoss Loss) (*kons, error) {
	kern := readKernel(p)
	loss := p.Loss(defLoss)
	alpha := p.Float("alpha", 5, Positive)
	c := p.Float("c", 1, Positive)
	curv := p.Float("curv", 1/(8*c*c), Positive)
	inv := p.Enum("inverse", "new", "new", "old")
	cfg := readKORS(p, korsInvSqrtP)
	seed := p.Uint64("seed", 1)
	if err := p.Err(); err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	k := cfg.max
	if k == 0 {
		k = 16
	}
	return &kons{
		base:   newBase(p, dim, loss.Task()),
		kern:   kern,
		loss:   loss,
		mode:   mode,
		alpha:  alpha,
		c:      c,
		curv:   curv,
		newInv: inv == "new",
		dict:   newKORS(cfg, dim),
		rnd:    rng.New(seed),
		ons:    newONS(k, alpha, c),
		krow:   make([]float64, k),
		phi:    make([]float64, k),
	}, nil
}

// Predict returns the score of x under the current epoch's model.
func (l *kons) Predict(x []float64) float64 {
	l.checkDim(x)
	n := l.dict.Len()
	if n == 0 {
		return 0
	}
	kr := l.kern.Row(l.krow, l.dict.Points(), x)
	phi := l.phi[:l.r]
	linalg.MatVec(phi, l.m, l.r, n, kr)
	if l.raw {
		return l.ons.konsPredictRaw(phi)
	}
	return l.ons.predict(phi)
}

// Learn scores x, takes the ONS step with label y, runs KORS on x (a new
// epoch if x is taken) and returns the pre-update score.
func (l *kons) Learn(x []float64, y float64) float64 {
	f := l.Predict(x) // leaves κ(I, x) in krow, φ(x) in phi, the projected w in ons.w
	l.updates++
	kxx := l.kern.Diag(x)
	n := l.dict.Len()
	if n == 0 {
		if l.dict.Insert(x, l.krow[:0], kxx, 1) == nil {
			l.newEpoch()
		}
		return f
	}
	l.raw = false
	// A failed step (a non-finite gradient) leaves the model at w.
	_ = l.ons.update(l.phi[:l.r], l.loss.Deriv(f, y), 0, l.curv/2, l.newInv)
	if p, take := l.dict.Sample(l.krow[:n], kxx, l.rnd); take {
		if l.dict.Insert(x, l.krow[:n], kxx, p) == nil {
			l.newEpoch()
		}
	}
	return f
}

// newEpoch rebuilds the map for the grown dictionary and restarts or
// carries the ONS state. It allocates.
func (l *kons) newEpoch() {
	n := l.dict.Len()
	gram := l.kern.Gram(make([]float64, n*n), l.dict.Points())
	oldR, oldM := l.r, l.m
	l.r, l.m = nystromMapAll(gram, n)
	if cap(l.krow) < n {
		l.krow = make([]float64, 2*n)
	}
	if len(l.phi) < l.r {
		l.phi = make([]float64, 2*l.r)
	}
	if l.mode == konsCarry && n > 1 && l.carry(gram, n, oldM, oldR) {
		return
	}
	l.ons.konsEnsure(l.r)
	l.ons.reset(l.r)
	l.raw = false
}

// konsEnsure grows the ONS capacity to at least k (allocating; epoch changes
// only). The state is kept.
func (o *ons) konsEnsure(k int) {
	if k <= o.kmax {
		return
	}
	n := newONS(max(k, 2*o.kmax), o.alpha, o.c)
	n.k = o.k
	copy(n.v, o.v[:o.k])
	copy(n.ainv, o.ainv[:o.k*o.k])
	*o = *n
}

// konsSet installs dimension k, the pending iterate v (k) and A⁻¹ (k×k),
// growing the capacity if needed.
func (o *ons) konsSet(k int, v, ainv []float64) {
	o.konsEnsure(k)
	o.k = k
	copy(o.v, v[:k])
	copy(o.ainv, ainv[:k*k])
}

// konsPredictRaw scores φᵀv without the slab projection (w = v): CON-KONS's
// first round after a transition.
func (o *ons) konsPredictRaw(phi []float64) float64 {
	k := o.k
	copy(o.w[:k], o.v[:k])
	return dot(phi[:k], o.v[:k])
}

// MarshalBinary encodes the dictionary (points, weights, KORS factor), the
// map, the ONS state, the transition flag and the generator.
func (l *kons) MarshalBinary() ([]byte, error) {
	n, d := l.dict.Len(), l.dim
	e := l.encoder(8 * (n*d + n*(n+1)/2 + 2*n + len(l.m) + l.r*l.r + l.r + 8))
	l.dict.encode(e)
	e.Int(l.r)
	e.F64s(l.m)
	l.ons.encode(e)
	e.Bool(l.raw)
	encodeRNG(e, l.rnd)
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured learner;
// on error the learner is unchanged.
func (l *kons) UnmarshalBinary(data []byte) error {
	d, updates := l.decoder(data)
	dict := decodeKORS(d, l.dict.cfg, l.dim)
	n := 0
	if dict != nil {
		n = dict.Len()
	}
	r := d.IntIn(0, n, "map rank") // 0 after any error: never sizes anything
	m := d.F64sN(nil, r*n)
	if d.Err() != nil {
		return d.Err()
	}
	o := newONS(max(r, 1), l.alpha, l.c)
	o.decode(d)
	if d.Err() == nil && o.k != r {
		d.Fail("ons dimension %d, map rank %d", o.k, r)
	}
	raw := d.Bool()
	hi, lo := d.U64(), d.U64()
	if err := d.Done(); err != nil {
		return err
	}
	l.dict, l.r, l.m, l.ons, l.raw = dict, r, m, o, raw
	l.krow = make([]float64, max(n, cap(l.krow)))
	l.phi = make([]float64, max(r, len(l.phi)))
	l.rnd.Restore(hi, lo)
	l.updates = updates
	return nil
}

// Info reports the dictionary cap B_max (0: unbounded) and size.
func (l *kons) Info() Info {
	bytes := l.dict.Bytes() + 8*(len(l.m)+l.ons.kmax*l.ons.kmax+4*l.ons.kmax+cap(l.krow)+len(l.phi))
	return l.info(l.dict.cfg.max, l.dict.Len(), bytes)
}

// nystromMapAll is the full-rank (all eigenvalues above round-off) Nyström
// map of the dictionary's Gram matrix.
func nystromMapAll(gram []float64, n int) (int, []float64) {
	r, m, _ := linalg.NystromMap(gram, n, n)
	return r, m
}
