package learner

// DSG-GP — the Gaussian-process posterior mean and variance by doubly
// stochastic functional gradients.
//
// Reference: B. Dai, B. Xie, N. He, Y. Liang, A. Raj, M.-F. Balcan, L. Song,
// "Scalable Kernel Methods via Doubly Stochastic Gradients", NIPS 2014
// (long version arXiv 1407.5599), §4 "Gaussian Process Regression"
// (eqs. 9–10 and the θ_ij recursion), Appendix D (its derivation), §7.2 and
// Fig. 5 (the experiment: okstream reproduce dsg-gp). Notes:
// docs/algorithms/dsg-gp.md.
//
// Model. Data (x_i, y_i), i = 1..n, y = f(x) + ε, ε ~ N(0, σ²),
// f ~ GP(0, k). The posterior at x* is N(m(x*), s²(x*)) with (eq. 9)
//
//	m(x*)  = k*ᵀ(K + σ²I)⁻¹y,
//	s²(x*) = k(x*, x*) − k*ᵀ(K + σ²I)⁻¹k*.
//
// Mean: the minimizer of (1/n)Σ ½(f(x_i) − y_i)² + (λ/2)‖f‖²_H with
// λ = σ²/n, i.e. kernel ridge regression: DSG's Algorithm 1 with the
// square loss (learner/dsg.go), f = Σ_i α_i φ_{ω_i}(·).
//
// Variance: k*ᵀ(K+σ²I)⁻¹k* = ⟨k(x*,·), 𝒜 k(x*,·)⟩ with
// 𝒜 = 𝒞(𝒞 + (σ²/n)I)⁻¹, 𝒞 = (1/n)Σ_i k(x_i,·)⊗k(x_i,·) (eq. 10), the
// minimizer of R(𝒜) = (1/2n)Σ_i ‖k(x_i,·) − 𝒜k(x_i,·)‖² + (σ²/2n)‖𝒜‖²_HS.
// Its doubly stochastic iterate is 𝒜̂ = Σ_{i≤j} θ_ij φ_{ω_i}(·)⊗φ_{ω'_j}(·)
// with two independent feature draws ω, ω' per step, updated (§4, App. D)
//
//	θ_ij ← (1 − (σ²/n)γ_t) θ_ij                                   i ≤ j < t
//	θ_it  = −γ_t Σ_{j=i}^{t−1} θ_ij φ_{ω'_j}(x_t) φ_{ω'_t}(x_t)    i < t
//	θ_tt  =  γ_t φ_{ω_t}(x_t) φ_{ω'_t}(x_t)
//
// (right-hand sides use the θ before the step), and the variance is read
// as s²_t(x*) = k(x*, x*) − 𝒜̂(x*, x*), 𝒜̂(a, b) = Σ θ_ij φ_{ω_i}(a)φ_{ω'_j}(b).
//
// Mini-batches and feature blocks (the paper's experiment: batch 64, feature
// block 512; §4 allows both without printing the block update). With a
// batch {x_b}, b = 1..B, and blocks of r features (ω_{t,1..r}, ω'_{t,1..r})
// the kernel estimates are k̂_t(x,·) = (1/r)Σ_k φ_{ω_{t,k}}(x)φ_{ω_{t,k}}(·)
// (and k̂'_t with ω'), Ĉ_t = (1/B)Σ_b k̂_t(x_b,·)⊗k̂'_t(x_b,·), and θ is a
// block-upper-triangular matrix Θ over the K features of each side:
//
//	u_b        = Θ φ'(x_b)                          (K values, old Θ)
//	Θ[i, new_l] = −γ_t/(B r)  Σ_b u_b[i] φ'_{new_l}(x_b)          i < K
//	Θ[new_k, new_l] = γ_t/(B r²) Σ_b φ_{new_k}(x_b) φ'_{new_l}(x_b)
//	Θ[:K, :K] ← (1 − λγ_t) Θ[:K, :K]
//
// which is the recursion above for B = r = 1. The mean's block step is
// dsg.go's: α_new,k = −γ_t/(B r) Σ_b (f_t(x_b) − y_b) φ_{new_k}(x_b), old α
// shrink by (1 − λγ_t).
//
// Features: the Gaussian kernel's random-phase features √2cos(ωᵀx + b)
// (Algorithm 1's), regenerated from seeds with kernel.Seeded (three
// independent streams: the mean's ω, the variance's ω and ω'), cached in
// kernel.SeededBlocks up to the caps, as dsg.go does.
//
// Deviations, and why:
//   - λ = σ²/n for the mean, not the paper's ν = 2σ²: the paper's value
//     matches a sum Σ(f(x_i) − y_i)² + σ²‖f‖²; under its own problem (1)
//     (an expectation, and the §1.3 square loss ½(u − y)²) the posterior
//     mean is the minimizer only for ν = σ²/n — the same σ²/n that eq. 10
//     and the variance objective use.
//   - Caps (not in the paper, which lets both grow with t): the mean stops
//     drawing features at MaxFeatures and the variance operator at
//     MaxVarFeatures; Θ is held as a dense MaxVarFeatures² array (8·K²
//     bytes: 8 MiB at 2^10), so memory is bounded. At its cap a part is
//     frozen (later steps leave it unchanged; Step reports it): the paper
//     has no rule past "t", and a refit of the whole dense Θ (dsg.go's
//     "refine") would cost O(B·K²) per step for no use in §7.2, whose runs
//     end at the cap.
//   - The variance operator's block r_v (VarBlock) is set apart from the
//     mean's r: Θ costs O(K²) memory and O(B·K²) work per step, so at the
//     paper's r = 512 a 2-core budget allows a handful of steps; §7.2's
//     reproduction uses a smaller r_v (docs/algorithms/dsg-gp.md).
//   - Step size γ_t = γ0/(1 + (t−1)/t0) (dsg.go's schedule, κ = 1), one for
//     the mean (Gamma0, T0) and one for the variance operator (VarGamma0,
//     VarT0): the operator's step multiplies Θ by kernel estimates from
//     only r_v features, whose noise makes it diverge at steps the mean
//     (r = 512) takes in its stride. The paper reports no step.
//   - The data set is finite (the posterior is conditioned on it): the
//     caller draws the mini-batches from it (uniformly, as the paper's
//     expectation over the empirical distribution) and gives n.
//
// Not a registered streaming learner: it needs n, the two parts are
// frozen at their caps, and it has no Marshal (the state is the
// coefficients α, Θ and the counters; a checkpoint is not implemented).
// Determinism: the same configuration and batches give the same bits on
// one platform; the products of Θ use gonum's Dgemm, whose sums run in a
// fixed order whatever the thread count (each output block is summed by
// one goroutine), but gonum's kernels are not pinned against fused
// multiply-adds across platforms as kernel.Seeded's features are.

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"okstream/learner/kernel"
	"okstream/learner/rng"
)

// DSGGPConfig configures a DSGGP.
type DSGGPConfig struct {
	Dim            int     // input dimension d
	Sigma          float64 // Gaussian kernel width: k(x,y) = exp(−‖x−y‖²/(2σ_k²))
	Noise          float64 // likelihood noise variance σ² > 0
	N              int     // training-set size n (λ = σ²/n)
	Block          int     // r: new mean features per step
	VarBlock       int     // r_v: new variance features per side per step
	MaxFeatures    int     // the mean's feature cap
	MaxVarFeatures int     // the variance operator's feature cap K_v (Θ: 8·K_v² bytes)
	Gamma0         float64 // first step γ0 > 0
	T0             float64 // step offset t0 > 0: γ_t = γ0/(1 + (t−1)/t0)
	VarGamma0      float64 // the variance operator's γ0 (0: Gamma0)
	VarT0          float64 // the variance operator's t0 (0: T0)
	// Average makes Posterior answer with the averaged iterates
	// (1/t)Σ_{s≤t} of the coefficients and of Θ (Polyak–Ruppert), as the
	// paper's §7.1 (Fig. 4) reports f̂_t; it costs a second Θ.
	Average bool
	Seed    uint64
}

// DSGGP approximates a Gaussian-process posterior's mean and variance by
// doubly stochastic gradients (Dai et al. 2014, §4). Build it with
// NewDSGGP, feed it mini-batches with Step, query it with Posterior.
type DSGGP struct {
	c      DSGGPConfig
	lambda float64
	fm     *kernel.SeededBlocks // the mean's ω
	fv     *kernel.SeededBlocks // the variance's ω
	fw     *kernel.SeededBlocks // the variance's ω'
	kern   *kernel.Seeded

	t     uint64
	alpha []float64 // the mean's coefficients, len = its feature count
	kv    int       // the variance operator's features per side
	theta []float64 // K_v × K_v row-major (stride MaxVarFeatures): Θ[i,j], zero below the block diagonal
	// With Average: the averages over the iterates so far (a feature's
	// coefficient counts as 0 in the iterates before it was drawn).
	alphaAvg, thetaAvg []float64

	// Scratch.
	w   []float64
	nz  []int
	phi []float64 // one input's features
	acc []float64
	pw  []float64 // B × K_v: φ'(x_b) (row-major, stride K_v+r_v)
	pv  []float64 // B × r_v: φ_new(x_b)
	u   []float64 // B × K_v
}

// NewDSGGP returns an empty posterior approximation (the prior: mean 0,
// variance k(x, x)).
func NewDSGGP(c DSGGPConfig) (*DSGGP, error) {
	switch {
	case c.Dim <= 0:
		return nil, fmt.Errorf("dsg-gp: Dim %d must be > 0", c.Dim)
	case !(c.Noise > 0) || math.IsInf(c.Noise, 0):
		return nil, fmt.Errorf("dsg-gp: Noise %v must be positive and finite", c.Noise)
	case c.N <= 0:
		return nil, fmt.Errorf("dsg-gp: N %d must be > 0", c.N)
	case c.Block <= 0 || c.VarBlock <= 0:
		return nil, fmt.Errorf("dsg-gp: Block %d and VarBlock %d must be > 0", c.Block, c.VarBlock)
	case c.MaxFeatures < c.Block || c.MaxVarFeatures < c.VarBlock:
		return nil, fmt.Errorf("dsg-gp: caps (%d, %d) must be >= the blocks (%d, %d)", c.MaxFeatures, c.MaxVarFeatures, c.Block, c.VarBlock)
	case c.MaxVarFeatures > 1<<14:
		return nil, fmt.Errorf("dsg-gp: MaxVarFeatures %d > 2^14 (Θ would take %d MiB)", c.MaxVarFeatures, 8*c.MaxVarFeatures*c.MaxVarFeatures>>20)
	case !(c.Gamma0 > 0) || !(c.T0 > 0) || math.IsInf(c.Gamma0, 0) || math.IsInf(c.T0, 0):
		return nil, fmt.Errorf("dsg-gp: Gamma0 %v and T0 %v must be positive and finite", c.Gamma0, c.T0)
	}
	seeded := func(stream uint64) (*kernel.Seeded, error) {
		return kernel.NewSeeded(kernel.FamilyGaussian, c.Sigma, 0, c.Dim, rng.Derive(c.Seed, stream))
	}
	sm, err := seeded(0x6701)
	if err != nil {
		return nil, err
	}
	sv, _ := seeded(0x6702)
	sw, _ := seeded(0x6703)
	if c.VarGamma0 == 0 {
		c.VarGamma0 = c.Gamma0
	}
	if c.VarT0 == 0 {
		c.VarT0 = c.T0
	}
	if !(c.VarGamma0 > 0) || !(c.VarT0 > 0) || math.IsInf(c.VarGamma0, 0) || math.IsInf(c.VarT0, 0) {
		return nil, fmt.Errorf("dsg-gp: VarGamma0 %v and VarT0 %v must be positive and finite", c.VarGamma0, c.VarT0)
	}
	g := &DSGGP{
		c:      c,
		lambda: c.Noise / float64(c.N),
		fm:     kernel.NewSeededBlocks(sm, dsgChunk, c.MaxFeatures),
		fv:     kernel.NewSeededBlocks(sv, dsgChunk, c.MaxVarFeatures),
		fw:     kernel.NewSeededBlocks(sw, dsgChunk, c.MaxVarFeatures),
		kern:   sm,
		theta:  make([]float64, c.MaxVarFeatures*c.MaxVarFeatures),
		w:      make([]float64, c.Dim),
		nz:     make([]int, 0, c.Dim),
		phi:    make([]float64, max(dsgChunk, c.Block)),
		acc:    make([]float64, c.Block),
	}
	if c.Average {
		g.thetaAvg = make([]float64, len(g.theta))
	}
	return g, nil
}

// Iterations returns the number of steps taken.
func (g *DSGGP) Iterations() uint64 { return g.t }

// Features returns the feature counts of the mean and of each side of the
// variance operator.
func (g *DSGGP) Features() (mean, variance int) { return len(g.alpha), g.kv }

// Lambda returns the regularization σ²/n of both objectives.
func (g *DSGGP) Lambda() float64 { return g.lambda }

// Gamma returns the step sizes of step t ≥ 1 of the mean and of the
// variance operator.
func (g *DSGGP) Gamma(t uint64) (mean, variance float64) {
	return g.c.Gamma0 / (1 + float64(t-1)/g.c.T0), g.c.VarGamma0 / (1 + float64(t-1)/g.c.VarT0)
}

// cosFeatures writes √2cos(ω_iᵀx + b_i) for features [lo, hi) of c into
// out[:hi−lo] (g.nz holds x's non-zero coordinates).
func (g *DSGGP) cosFeatures(c *kernel.SeededBlocks, out, x []float64, lo, hi int) []float64 {
	p := c.Project(out, g.w, x, g.nz, lo, hi, true)
	for i, v := range p {
		p[i] = kernel.CosFeature(v)
	}
	return p
}

// mean returns f(x) = Σ α_i φ_i(x) (g.nz set for x) for the coefficients
// alpha (g.alpha: the iterate f_t), summed per chunk of dsgChunk features.
func (g *DSGGP) mean(alpha, x []float64) float64 {
	var s float64
	for lo := 0; lo < len(alpha); lo += dsgChunk {
		hi := min(lo+dsgChunk, len(alpha))
		s += dot4(alpha[lo:hi], g.cosFeatures(g.fm, g.phi, x, lo, hi))
	}
	return s
}

// Step takes one doubly stochastic step on the mini-batch (xs, ys): a new
// feature block for the mean and one for each side of the variance
// operator, unless a part is at its cap (then that part is unchanged). It
// returns whether anything changed. It panics on an empty batch or inputs
// of the wrong dimension.
func (g *DSGGP) Step(xs [][]float64, ys []float64) bool {
	B := len(xs)
	if B == 0 || len(ys) != B {
		panic(fmt.Sprintf("dsg-gp: Step needs a non-empty batch with one target per input (%d inputs, %d targets)", B, len(ys)))
	}
	for _, x := range xs {
		if len(x) != g.c.Dim {
			panic(fmt.Sprintf("dsg-gp: input of dimension %d, want %d", len(x), g.c.Dim))
		}
	}
	nm := min(g.c.Block, g.c.MaxFeatures-len(g.alpha))
	nv := min(g.c.VarBlock, g.c.MaxVarFeatures-g.kv)
	if nm <= 0 && nv <= 0 {
		return false
	}
	g.t++
	gamma, gammaV := g.Gamma(g.t)
	if nm > 0 {
		shrink := 1 - g.lambda*gamma
		k := len(g.alpha)
		g.fm.Grow(k + nm)
		acc := g.acc[:nm]
		clear(acc)
		for b, x := range xs {
			g.nz = kernel.NonZero(g.nz, x)
			r := g.mean(g.alpha, x) - ys[b] // ℓ'(f, y) of ½(f − y)²
			phi := g.cosFeatures(g.fm, g.phi, x, k, k+nm)
			kernel.AxpyRounded(r, phi, acc)
		}
		for i := range g.alpha {
			g.alpha[i] *= shrink
		}
		step := -gamma / float64(B*nm)
		for _, a := range acc {
			g.alpha = append(g.alpha, step*a)
		}
	}
	if nv > 0 {
		g.varStep(xs, gammaV, 1-g.lambda*gammaV, nv)
	}
	if g.c.Average {
		g.average()
	}
	return true
}

// average folds the iterate after step t into the averages:
// avg ← avg + (x_t − avg)/t.
func (g *DSGGP) average() {
	inv := 1 / float64(g.t)
	for len(g.alphaAvg) < len(g.alpha) {
		g.alphaAvg = append(g.alphaAvg, 0)
	}
	for i, a := range g.alpha {
		g.alphaAvg[i] += (a - g.alphaAvg[i]) * inv
	}
	K, ld := g.kv, g.c.MaxVarFeatures
	for i := 0; i < K; i++ {
		row, avg := g.theta[i*ld:i*ld+K], g.thetaAvg[i*ld:i*ld+K]
		for j := i / g.c.VarBlock * g.c.VarBlock; j < K; j++ {
			avg[j] += (row[j] - avg[j]) * inv
		}
	}
}

// varStep is the variance operator's block step with nv new features per
// side.
func (g *DSGGP) varStep(xs [][]float64, gamma, shrink float64, nv int) {
	B, K, ld := len(xs), g.kv, g.c.MaxVarFeatures
	g.fv.Grow(K + nv)
	g.fw.Grow(K + nv)
	lw := K + nv
	g.pw = dsgGPGrow(g.pw, B*lw)
	g.pv = dsgGPGrow(g.pv, B*nv)
	for b, x := range xs {
		g.nz = kernel.NonZero(g.nz, x)
		g.cosFeatures(g.fw, g.pw[b*lw:(b+1)*lw], x, 0, lw)
		g.cosFeatures(g.fv, g.pv[b*nv:(b+1)*nv], x, K, K+nv)
	}
	bl := blas64.Implementation()
	if K > 0 {
		// U (B×K) = Φ'_old (B×K) · Θᵀ: u_b[i] = Σ_j Θ[i,j] φ'_j(x_b).
		g.u = dsgGPGrow(g.u, B*K)
		bl.Dgemm(blas.NoTrans, blas.Trans, B, K, K, 1, g.pw, lw, g.theta, ld, 0, g.u, K)
		// Θ[:K, K:K+nv] = −γ/(B·nv) Uᵀ Φ'_new.
		bl.Dgemm(blas.Trans, blas.NoTrans, K, nv, B, -gamma/float64(B*nv), g.u, K, g.pw[K:], lw, 0, g.theta[K:], ld)
		for i := 0; i < K; i++ {
			row := g.theta[i*ld : i*ld+K]
			for j := i / g.c.VarBlock * g.c.VarBlock; j < K; j++ { // zero left of the diagonal block
				row[j] *= shrink
			}
		}
	}
	// Θ[K:K+nv, K:K+nv] = γ/(B·nv²) Φ_newᵀ Φ'_new.
	bl.Dgemm(blas.Trans, blas.NoTrans, nv, nv, B, gamma/float64(B*nv*nv), g.pv, nv, g.pw[K:], lw, 0, g.theta[K*ld+K:], ld)
	g.kv = K + nv
}

// dsgGPGrow returns s with length n, reallocated with twice the room when
// its capacity is short (amortized: the scratch grows with the features).
func dsgGPGrow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n, 2*n)
	}
	return s[:n]
}

// dsgGPChunk is the number of query points whose features Posterior holds
// at once.
const dsgGPChunk = 128

// Posterior writes the current estimates of the posterior mean m_t(x) and
// variance s²_t(x) = k(x, x) − 𝒜̂_t(x, x) at each x of xs into mean[i] and
// variance[i] (either may be nil); with Average, of the averaged iterates. The variance estimate is not clipped: it
// can be negative while the iterate is far from 𝒜. Cost: O(len(xs)·K)
// feature evaluations and O(len(xs)·K_v²) for the variance.
func (g *DSGGP) Posterior(mean, variance []float64, xs [][]float64) {
	for i, x := range xs {
		if len(x) != g.c.Dim {
			panic(fmt.Sprintf("dsg-gp: input of dimension %d, want %d", len(x), g.c.Dim))
		}
		if mean != nil {
			g.nz = kernel.NonZero(g.nz, x)
			alpha := g.alpha
			if g.c.Average {
				alpha = g.alphaAvg
			}
			mean[i] = g.mean(alpha, x)
		}
	}
	if variance == nil {
		return
	}
	K, ld := g.kv, g.c.MaxVarFeatures
	if K == 0 {
		for i, x := range xs {
			variance[i] = g.kern.Eval(x, x)
		}
		return
	}
	theta := g.theta
	if g.c.Average {
		theta = g.thetaAvg
	}
	bl := blas64.Implementation()
	for lo := 0; lo < len(xs); lo += dsgGPChunk {
		hi := min(lo+dsgGPChunk, len(xs))
		m := hi - lo
		pv := make([]float64, m*K)
		pw := make([]float64, m*K)
		h := make([]float64, m*K)
		for s := 0; s < m; s++ {
			x := xs[lo+s]
			g.nz = kernel.NonZero(g.nz, x)
			g.cosFeatures(g.fv, pv[s*K:(s+1)*K], x, 0, K)
			g.cosFeatures(g.fw, pw[s*K:(s+1)*K], x, 0, K)
		}
		// H (m×K) = Φ (m×K) · Θ; 𝒜̂(x_s, x_s) = Σ_j H[s,j] φ'_j(x_s).
		bl.Dgemm(blas.NoTrans, blas.NoTrans, m, K, K, 1, pv, K, theta, ld, 0, h, K)
		for s := 0; s < m; s++ {
			x := xs[lo+s]
			variance[lo+s] = g.kern.Eval(x, x) - dot4(h[s*K:(s+1)*K], pw[s*K:(s+1)*K])
		}
	}
}
