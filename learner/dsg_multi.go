package learner

// dsg (multi-class) — doubly stochastic functional gradients for
// multi-class kernel logistic regression.
//
// Reference: B. Dai, B. Xie, N. He, Y. Liang, A. Raj, M.-F. Balcan, L. Song,
// "Scalable Kernel Methods via Doubly Stochastic Gradients", NIPS 2014,
// §4 ("Kernel Logistic Regression", multi-class paragraph): the loss
// ℓ(u, y) = −Σ_c δ_c(y) u_c + log Σ_c exp(u_c) over C functions
// f^c(x) = Σ_i α_i^c φ_{ω_i}(x) that share the random features, with the
// update
//
//	α_i^c = γ_i (δ_c(y_i) − exp f^c(x_i) / Σ_c' exp f^c'(x_i)) φ_{ω_i}(x_i),
//	α_j^c = (1 − γ_i ν) α_j^c for j < i,
//
// i.e. binary DSG's Algorithm 1 with the scalar ℓ' replaced by the
// softmax gradient g_c = P(c | x) − δ_c(y) per class. The paper uses it for
// its headline experiments (§7.4: MNIST 8M, CIFAR 10, ImageNet).
// Notes: docs/algorithms/multiclass.md and
// docs/algorithms/doubly-stochastic.md.
//
// Implementation: everything but the coefficients is binary DSG's
// (dsg.go), reused from an embedded *DSG built from the same parameters:
// the feature generator (kernel.Seeded, features regenerated from
// (seed, i), the frequency cache), the step schedule
// γ_t = max(γ_min, γ0/(1 + (t−1)/t0)^κ), streaming mini-batches of B
// events with a block of r new features per iteration, the lazy scale
// (a_i^c = c·s_i^c; one shrink factor for all classes), the feature cap
// K_max with after_cap=refine|revisit, and the generator that picks the
// block to revisit. Every deviation of dsg.go's comment holds here (the
// O(1/t) schedule with offset t0, ν default 1e-5, the cap on stored
// features for bounded memory on an endless stream, streaming batches with
// a gradient accumulator instead of buffered events). The probabilities are
// the softmax of the scores (softmax.go's softmaxInPlace: the same
// numerics as the head).
//
// Multi-class specifics and deviations:
//   - No loss parameter (the loss is the softmax's) and no
//     predict_with=average (the last iterate only).
//   - update=new (Algorithm 1) by default; update=all (binary DSG's issue-42
//     update: every coefficient drawn so far takes each step) is accepted
//     but not the default here: without an averaged iterate its gain is
//     smaller and the multi-class defaults were chosen for update=new
//     (docs/algorithms/dsg-onepass.md §1b). update=new is not written in
//     the canonical spec, so states of before restore.
//   - Defaults γ0 = 30, B = 16, r = 64 (binary: 1, 64, 256): at the binary
//     defaults the model takes one small step per 64 events and learns
//     little in 10⁴ events (letter, 20,000 events: 48.1 % against 70.0 %;
//     mnist, 10,000: 47.5 % against 78.2 %; docs/algorithms/multiclass.md).
//     γ0 ∈ {1, 10, 30, 100} and B ∈ {4, 16, 64} were tried on a 3,000-event
//     letter subsample; the paper's experiments report no step size.
//   - Classes grow online: a new class's coefficients start at 0 for every
//     feature (the same score as a class never learnt), at O(K·features)
//     once per new class.
//
// Shapes: coef holds nf·stride rows of K coefficients (feature-major:
// coefficient j of class k at j·K + k), acc (accHi − accLo)·stride rows of
// K. Per event: O(nf·(nnz(x) + K)) to score (features regenerated or
// cached, one row of K per feature) plus O(r·(nnz(x) + K)) for the pending
// block; bounded by K_max. Nothing is allocated per event in steady state.

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"okstream/learner/kernel"
)

func init() {
	bin := registry["dsg"] // dsg.go's init runs first (file order)
	if bin == nil {
		panic("learner: dsg_multi.go needs dsg.go's registration")
	}
	var params []ParamDoc
	for _, d := range bin.Params {
		switch d.Name {
		case "loss", "delta", "epsilon", "tau", "predict_with", "average_eta":
			continue
		}
		if v, ok := dsgMultiDefaults[d.Name]; ok {
			d.Default = v + " (multi-class; binary: " + d.Default + ")"
		}
		params = append(params, d)
	}
	RegisterMulti(MultiRegistration{
		Name:    "dsg",
		Summary: "doubly stochastic functional gradients, multi-class kernel logistic regression (paper §4): C functions sharing the random features",
		Paper:   "Dai et al., Scalable Kernel Methods via Doubly Stochastic Gradients, NIPS 2014, §4",
		Params:  params,
		New:     newDSGMulti,
	})
}

// DSGMulti is multi-class DSG. Build it with NewMulti("dsg:...").
type DSGMulti struct {
	base
	d *DSG // configuration and feature machinery (its own coefficients unused)

	// State.
	k       int
	iters   uint64
	inBatch int
	nf      int
	scale   float64
	coef    []float64 // nf·stride × K
	accLo   int
	accHi   int
	acc     []float64 // (accHi−accLo)·stride × K
	// (the revisit generator is d.src)

	g []float64 // scratch: K gradients
}

// dsgMultiDefaults are the multi-class defaults that differ from binary
// DSG's (see the file comment).
var dsgMultiDefaults = map[string]string{"gamma0": "30", "t0": "100", "batch": "16", "block": "64", "features": "cos", "update": "new"}

func newDSGMulti(p *Params, dim int) (Multi, error) {
	for _, k := range []string{"loss", "predict_with"} {
		if p.Has(k) {
			return nil, fmt.Errorf("learner dsg: parameter %s: not for multi-class (the loss is the softmax's, the prediction the last iterate's)", k)
		}
	}
	raw := maps.Clone(p.raw) // (the caller's map is not written)
	for k, v := range dsgMultiDefaults {
		if _, set := raw[k]; !set {
			raw[k] = v
		}
	}
	raw["predict_with"] = "last"
	p.raw = raw
	inner, err := newDSG(p, dim)
	if err != nil {
		return nil, err
	}
	delete(p.resolved, "loss") // read with their defaults; not part of the multi-class spec
	delete(p.resolved, "predict_with")
	delete(p.raw, "predict_with")
	d := inner.(*DSG)
	return &DSGMulti{base: newBase(p, dim, MultiClass), d: d, scale: 1}, nil
}

// Classes returns K.
func (l *DSGMulti) Classes() int { return l.k }

// grow adds classes up to k: every row of coef and acc gets zero columns.
func (l *DSGMulti) grow(k int) {
	if k <= l.k {
		return
	}
	if k > MaxClasses {
		panic("learner dsg: more than MaxClasses classes")
	}
	widen := func(a []float64) []float64 {
		rows := len(a) / l.k
		out := make([]float64, rows*k, max(rows*k, cap(a)))
		for r := 0; r < rows; r++ {
			copy(out[r*k:r*k+l.k], a[r*l.k:(r+1)*l.k])
		}
		return out
	}
	if l.k == 0 { // no rows yet hold coefficients of any class
		l.coef = make([]float64, l.nf*l.d.stride*k)
		l.acc = make([]float64, (l.accHi-l.accLo)*l.d.stride*k)
	} else {
		l.coef = widen(l.coef)
		l.acc = widen(l.acc)
	}
	l.k = k
	if cap(l.g) < k {
		l.g = make([]float64, k, k+8)
	}
	l.g = l.g[:k]
}

// scores writes the softmax of the scores f^c(x) into p[:K] from the
// feature values in d.phi.
func (l *DSGMulti) scores(p []float64) []float64 {
	p = p[:l.k]
	clear(p)
	if l.k == 0 {
		return p
	}
	k := l.k
	n := l.nf * l.d.stride
	for j, v := range l.d.phi[:n] {
		row := l.coef[j*k : (j+1)*k]
		for c, a := range row {
			p[c] += float64(a * v)
		}
	}
	mx := math.Inf(-1)
	for c := range p {
		p[c] = float64(l.scale * p[c])
		if p[c] > mx {
			mx = p[c]
		}
	}
	return softmaxInPlace(p, mx)
}

// PredictProba writes the class distribution of x into p.
func (l *DSGMulti) PredictProba(x, p []float64) []float64 {
	l.checkDim(x)
	d := l.d
	if l.nf > 0 && l.k > 0 {
		d.ensureCache(l.nf)
		d.nz = kernel.NonZero(d.nz, x)
		d.features(x, 0, l.nf)
	}
	return l.scores(p)
}

// LearnClass scores x with the batch's model, adds the event's softmax
// gradient to the batch accumulator, closes the batch at its B-th event,
// and returns the pre-update distribution.
func (l *DSGMulti) LearnClass(x []float64, c int, p []float64) []float64 {
	l.checkDim(x)
	if c < 0 || c > l.k || c >= MaxClasses {
		panic("learner dsg: class index out of range")
	}
	d := l.d
	if l.inBatch == 0 {
		l.openBatch()
	}
	d.ensureCache(max(l.nf, l.accHi))
	d.nz = kernel.NonZero(d.nz, x)
	d.features(x, 0, l.nf)
	p = l.scores(p)
	old := len(p)
	l.grow(c + 1)
	k := l.k
	for j := range l.g {
		var pj float64
		if j < old {
			pj = p[j]
		}
		l.g[j] = pj
	}
	l.g[c] -= 1
	if l.accHi > l.nf { // the pending new block
		d.features(x, l.nf, l.accHi)
	}
	s := d.stride
	for j, v := range d.phi[l.accLo*s : l.accHi*s] {
		if v == 0 {
			continue
		}
		row := l.acc[j*k : (j+1)*k]
		for cc, g := range l.g {
			row[cc] += float64(g * v)
		}
	}
	l.inBatch++
	l.updates++
	if l.inBatch == d.batch {
		l.step()
	}
	return p
}

// openBatch: dsg.go's rule (a new block before the cap; all features or
// one random block after it), run on the inner DSG with this model's
// feature count.
func (l *DSGMulti) openBatch() {
	d := l.d
	d.nf = l.nf
	d.openBatch()
	l.accLo, l.accHi = d.accLo, d.accHi
	n := (l.accHi - l.accLo) * d.stride * l.k
	if cap(l.acc) < n {
		l.acc = make([]float64, n, max(n, d.block*d.stride*max(l.k, 1)))
	}
	l.acc = l.acc[:n]
	clear(l.acc)
}

// step closes the batch: iteration t = iters+1 of Algorithm 1 with
// mini-batches and feature blocks (dsg.go's step, one coefficient per
// class).
func (l *DSGMulti) step() {
	d := l.d
	t := l.iters + 1
	g := d.gamma(t)
	c := l.scale * (1 - float64(g*d.nu))
	if math.Abs(c) < 1e-150 { // fold the scale in (exact zeros when 1 − γν = 0)
		for i := range l.coef {
			l.coef[i] *= c
		}
		c = 1
	}
	count := l.accHi - l.accLo
	factor := -g / (float64(d.batch) * float64(count) * c)
	l.coef = addStep(l.coef, l.acc, l.accLo, l.accHi, l.nf, d.stride*l.k, factor)
	l.nf = max(l.nf, l.accHi)
	l.scale = c
	l.iters = t
	l.inBatch = 0
	l.accLo, l.accHi = 0, 0
	l.acc = l.acc[:0]
	d.nf = l.nf
}

// MarshalBinary encodes K, the counters, lazy scale, coefficients, open
// batch and the revisit generator (the features are regenerated).
func (l *DSGMulti) MarshalBinary() ([]byte, error) {
	e := l.encoder(8*(len(l.coef)+len(l.acc)) + 96)
	e.Int(l.k)
	e.U64(l.iters)
	e.Int(l.inBatch)
	e.Int(l.nf)
	e.F64(l.scale)
	e.F64s(l.coef)
	e.Int(l.accLo)
	e.Int(l.accHi)
	e.F64s(l.acc)
	hi, lo := l.d.src.State()
	e.U64(hi)
	e.U64(lo)
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured learner;
// on error it is unchanged.
func (l *DSGMulti) UnmarshalBinary(data []byte) error {
	dd := l.d
	d, updates := l.decoder(data)
	k := d.IntIn(0, MaxClasses, "classes")
	iters := d.U64()
	inBatch := d.Int()
	nf := d.Int()
	scale := d.F64()
	if d.Err() == nil && (nf < 0 || nf > dd.maxF || (nf%dd.block != 0 && nf != dd.maxF)) {
		d.Fail("dsg feature count %d invalid (block %d, cap %d)", nf, dd.block, dd.maxF)
	}
	if d.Err() == nil && (inBatch < 0 || inBatch >= dd.batch) {
		d.Fail("dsg batch position %d outside [0, %d)", inBatch, dd.batch)
	}
	if d.Err() == nil && (scale == 0 || math.IsNaN(scale) || math.IsInf(scale, 0)) {
		d.Fail("dsg scale %v", scale)
	}
	if d.Err() != nil {
		return d.Err()
	}
	coef := d.F64sN(nil, nf*dd.stride*k)
	accLo, accHi := d.Int(), d.Int()
	if d.Err() == nil && !dd.validAcc(inBatch, nf, accLo, accHi) {
		d.Fail("dsg accumulator range [%d, %d) invalid", accLo, accHi)
	}
	if d.Err() != nil {
		return d.Err()
	}
	acc := d.F64sN(nil, (accHi-accLo)*dd.stride*k)
	hi, lo := d.U64(), d.U64()
	if err := d.Done(); err != nil {
		return err
	}
	l.updates = updates
	l.k, l.iters, l.inBatch, l.nf, l.scale = k, iters, inBatch, nf, scale
	l.coef, l.acc = slices.Clip(coef), acc
	l.accLo, l.accHi = accLo, accHi
	l.g = make([]float64, k, k+8)
	dd.nf = nf
	dd.src.Restore(hi, lo)
	return nil
}

// Info reports the feature cap as the budget and the features in the
// model as the use.
func (l *DSGMulti) Info() Info {
	d := l.d
	bytes := d.cache.Bytes() + 8*(cap(l.coef)+cap(l.acc)+cap(d.phi)+cap(d.nz)+len(d.work)*(d.dim+dsgChunk)+cap(l.g))
	return l.info(d.maxF, l.nf, bytes)
}
