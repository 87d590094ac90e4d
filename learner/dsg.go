package learner

// DSG — doubly stochastic functional gradients.
//
// Reference: B. Dai, B. Xie, N. He, Y. Liang, A. Raj, M.-F. Balcan, L. Song,
// "Scalable Kernel Methods via Doubly Stochastic Gradients", NIPS 2014
// (long version arXiv 1407.5599), Algorithms 1 (train) and 2 (predict), §4
// (mini-batches, O(1/t) steps), §7.1 (synthetic kernel ridge regression).
// Notes: docs/algorithms/doubly-stochastic.md (steps, blocks, lazy scale, averaging and
// the practical choices).
//
// Model: f_t(x) = Σ_{i<K} a_i φ_i(x) with random features φ_i(x) =
// √2 cos(ω_iᵀx + b_i) (or the pair (cos ω_iᵀx, sin ω_iᵀx), features=cossin),
// whose (ω_i, b_i) are regenerated from (seed, i) by kernel.Seeded and never
// stored. Iteration t (one mini-batch of B events) is the paper's step
// f_{t+1} = (1 − γ_t ν) f_t − γ_t (1/B) Σ_m ℓ'(f_t(x_m), y_m) k̂_t(x_m, ·),
// with k̂_t the kernel estimate of a block of r NEW features
// (k̂_t(x,x') = (1/r) Σ_k φ_k(x) φ_k(x')), i.e. the old coefficients shrink
// by (1 − γ_t ν) and the block's coefficients are
// a_k = −γ_t/(B·r) Σ_m ℓ'_m φ_k(x_m) (Algorithm 1 with mini-batches and feature
// blocks, as §4 describes them; B = r = 1 is the paper's Algorithm 1).
// That is update=new. update=all (the default of hinge and logistic, issue
// 42) draws the block the same way but steps every coefficient drawn so
// far and the block's, with the kernel estimated by all K + r features:
// a_i ← (1 − γ_t ν) a_i − γ_t/(B·(K+r)) Σ_m ℓ'_m φ_i(x_m) for i < K + r.
//
// State: the coefficients, the counters (events, iterations, features), the
// lazy scale, the open batch's gradient accumulator, the averaged
// coefficients (predict_with=average) and the state of the generator that
// picks blocks to revisit. Features are never stored: a restore regenerates
// them and reproduces every score bit for bit.
//
// Choices and deviations (docs/algorithms/doubly-stochastic.md):
//   - Streaming mini-batches: the B events of a batch are all scored by f_t,
//     the model at the batch start (predict-then-update holds: a label is
//     used only after its own prediction). Each event's gradient
//     contribution ℓ'_m φ_k(x_m) to the pending block is added to an
//     accumulator when the event arrives, so no event is buffered: the state
//     holds r (or K) accumulator values instead of B inputs, and the update
//     at the B-th event is exactly Algorithm 1B's.
//   - Step size (the paper's theory: γ_t = θ/t with θν ∈ (1,2) ∪ Z+; its
//     experiments report none): γ_t = max(γ_min, γ0 / (1 + (t−1)/t0)^κ), the
//     usual O(1/t) schedule with an offset t0 and an exponent κ added
//     (κ = 1: θ/(t+t0−1) with θ = γ0·t0). Defaults (issue 42,
//     docs/algorithms/dsg-onepass.md): for hinge and logistic (Lipschitz
//     losses, |ℓ'| ≤ 1) θν = 1.5, the middle of the theory's (1, 2), and the
//     offset t0 = θ/γ0 that makes the first step γ0 = B/32 (a step of 1/32
//     per event); with the paper's ν = 1/(100n) that is a constant step over
//     a pass and O(1/t) with the theory's θ after ~t0 iterations. The
//     theory's own θ/t from t = 1 (first steps 1.5/ν, ~5·10^6 on a9a) and
//     the former default γ0 = 1, t0 = 100 (a step that has decayed 6× by the
//     end of a9a) both learn too little in one pass: a9a.t 21.6 % and
//     19.2 % against 15.5–15.7 % (permutation means). With ν ≈ 0 nothing is forgotten, so early
//     large steps add random-feature noise that stays; a constant step
//     weights every batch alike. With update=all (the default) the first
//     step is B/4 instead (1/(4R²) per event, the constant step of
//     averaged SGD, R² = sup k̂(x, x) = 1): the kernel estimate of a step
//     then has variance O(1/(r·t)) instead of O(1/r), which makes the
//     larger step safe, and predict_with=decay_average removes the last
//     iterate's noise (a9a.t 15.0 % against 15.7 % with update=new, the
//     online linear model 15.1 %; docs/algorithms/dsg-onepass.md §1b).
//     update=all is not covered by Theorem 4 as such (its old features
//     are not independent of the model, as the fresh block is): it is
//     random-feature SGD on a set that grows by r features per step.
//     The other losses keep γ0 = 1, t0 = 100 (square loss: a step above ~1 can diverge, k̂(x, x) ≤ 2). κ = 1,
//     γ_min = 0. The paper's θ/t is gamma0=θ,t0=1; then the first
//     shrink factors 1 − θν/t are ≤ 0, which the lazy scale handles (a zero
//     factor wipes the older coefficients exactly, as Lemma 8 notes).
//   - Losses follow the paper's §1.3 table, so square is ½(f−y)² and
//     squared_hinge ½max(0, 1−yf)² (half of loss.go's versions; γ is
//     relative to these). Huber uses threshold delta (paper: 1), the
//     ε-insensitive loss epsilon and the quantile loss tau.
//   - Regularization ν default 1e-5 (the paper's 1/n and 1/(100n)
//     need the unknown stream length; the paper's synthetic run uses 1e-6).
//   - Lazy rescaling (the Pegasos trick): a_i = c·s_i with a
//     global scale c; a step multiplies c by (1 − γ_t ν) and stores new
//     coefficients divided by c; c is folded into s when |c| < 1e-150.
//   - Feature cap (max_features = K_max, default 2^14; not in the
//     paper, which lets the feature count grow with t — its largest runs stop
//     at 2^20 features without saying what happens next). Once K = K_max no
//     feature is drawn any more and after_cap decides what a batch updates:
//     refine (default): every existing coefficient takes the functional step
//     with the kernel estimated by all K features,
//     a_i ← (1 − γ_t ν) a_i − γ_t/(B·K) Σ_m ℓ'_m φ_i(x_m) for i < K, which is
//     random-feature SGD (FOGD-like) warm-started by DSG; it
//     reuses the φ_i(x) computed for the prediction, so it costs O(K) more
//     per event;
//     revisit: one existing block, drawn uniformly at batch start by the
//     model's generator, takes Algorithm 1B's block step again
//     (a_i ← a_i − γ_t/(B·r) Σ_m ℓ'_m φ_i(x_m) for its features), all
//     coefficients shrink — the authors' CUDA code's behaviour.
//     If K_max is not a multiple of r the last block is shorter (its step
//     uses its own size).
//     Per-event cost is therefore O(K·(nnz(x)+1)) prediction work plus, before
//     the cap, O(r·(nnz(x)+1)) for the pending block (skipped when ℓ' = 0),
//     and O(K) per batch for the shrink/averaging: bounded by K_max.
//   - Feature cache (not state): regenerating a feature costs d random
//     draws (logs, square roots, sines) against d multiply-adds for a stored
//     one, so the frequency vectors and phases of the first
//     cache_mb·2^20/(8(d+1)) features are kept in memory once generated
//     (default 256 MB); the rest are regenerated on
//     every use, as in the paper. The cache is coordinate-major in blocks
//     of 512 features (kernel.SeededBlocks): the projections of a block onto
//     the events of a group (up to 64 of one mini-batch; one in Learn and
//     Predict) are a register-blocked sparse product
//     (SeededBlocks.ProjectGroup: strips of 32 features in AVX2 registers,
//     only the non-zero coordinates read, x_j = 1 added without a
//     multiply), then the group's sincos (rng.FastCosSinPairs, stored
//     straight as (cos, sin) pairs) and partial scores four events at a time
//     (kernel.Dot4x4). Cached and regenerated features give the bits of
//     kernel.Project, and every kernel those of its Go loop, so neither the
//     cache nor the kernels (nor the platform) change a score.
//   - Score summation and threads (issue 42): the score is a sum of
//     per-chunk sums (chunks of 512 features, four interleaved accumulators
//     within a chunk, the chunk sums added in chunk order). LearnBatch
//     scores the events of one mini-batch together, chunk by chunk (the
//     mini-batch's model is fixed: predict-then-update holds), and with
//     threads = T splits the chunks into T contiguous ranges scored on T
//     goroutines, one fork and join per run of events; the sums are the
//     same whatever T and whatever the grouping, so the model, every score
//     and the state are bit-identical to one-thread Learn (threads is
//     Local, not state). After the cap with after_cap=refine the group's
//     gradient is added once its scores are known, split over the threads
//     by feature range (each value takes its terms in event order).
//     Learn and Predict split each event's chunks (and refine's gradient)
//     the same way, a fork and join per event: the team (team.go) keeps
//     its workers spinning between jobs, so a fork costs no OS wake-up
//     (with a goroutine and a WaitGroup per fork it measured 0.8× one
//     thread).
//   - Features: cossin (the pair (cos ωᵀx, sin ωᵀx), the authors' code) is
//     the default of hinge and logistic since issue 42 (the other losses
//     keep cos, the paper's Algorithm 1): one sincos gives both values, so the
//     kernel estimate of a block has no random phase and half the
//     variance of 2r cosine features for the same projections; a9a.t
//     15.4–15.6 % against 15.7–16.0 % for cos at a constant step of
//     the same size (one permutation, several learner seeds).
//   - predict_with=decay_average (default with update=all for hinge and
//     logistic): the polynomial-decay average (Shamir & Zhang, ICML 2013),
//     f̄_t = f̄_{t−1} + w_t (f_t − f̄_{t−1}) with w_t = (η+1)/(t+η), η =
//     average_eta = 3; same array and cost as the uniform average below.
//     It lags behind a drifting concept (its window grows with t): use
//     predict_with=last (and gamma_min) on streams that drift.
//   - Averaged solution (predict_with=average): f̂ = (1/t) Σ_{i=2}^{t+1} f_i,
//     the average of the iterates after each of the t updates, kept as one
//     extra coefficient array (O(K) per batch). The paper's
//     f̂_t = (1/t) Σ_{i=1}^{t} f_i counts the initial f_1 = 0 and not the
//     newest iterate: a 1/t shift of weights that does not change the rate.
//     The gradient always uses the last iterate f_t (Algorithm 1); only the
//     reported score changes.
//   - Seeds: feature i (global index, block j = features [j·r, (j+1)·r))
//     comes from its own PCG-DXSM stream rng.Derive(Derive(seed, tag), i)
//     (kernel.Seeded), so any feature is regenerated in O(d) without the
//     ones before it; the paper only asks for "seed i". Frequencies,
//     phases and feature values are bit-identical on every platform (golden
//     tests in package kernel); the learner's own sums are written without
//     fusable multiply-adds too, except the logistic loss (math.Exp) and a
//     κ ∉ {0, ½, 1} (math.Pow), which use the platform's math library.
//   - cache_mb is neither state nor part of the canonical spec (a Local
//     parameter): a checkpoint restores into a learner with any cache size,
//     with bit-identical results (the cache holds exactly the regenerated
//     values).
//   - No intercept (the paper has none). Labels/targets are used as given.

import (
	"fmt"
	"math"
	"runtime"
	"slices"

	"okstream/learner/kernel"
	"okstream/learner/rng"
)

func init() {
	Register(Registration{
		Name:    "dsg",
		Summary: "doubly stochastic functional gradients: random features regenerated from seeds, a new feature block per mini-batch, capped",
		Paper:   "Dai et al., Scalable Kernel Methods via Doubly Stochastic Gradients, NIPS 2014",
		Params: []ParamDoc{
			{Name: "kernel", Default: "gaussian", Doc: "gaussian exp(−‖x−y‖²/2σ²), laplacian exp(−‖x−y‖₁/σ), cauchy ∏1/(1+Δ²/σ²), matern (Matérn, length-scale σ)"},
			{Name: "sigma", Default: "1", Doc: "kernel width σ > 0 (Matérn: length-scale)"},
			{Name: "smoothness", Default: "1.5", Doc: "Matérn smoothness ν: 0.5, 1.5 or 2.5", When: "kernel=matern"},
			{Name: "loss", Default: "hinge", Doc: "hinge, squared_hinge, logistic (classification); square (kernel ridge), huber, epsilon_insensitive, quantile (regression); paper §1.3 conventions (½ on square losses)"},
			{Name: "delta", Default: "1", Doc: "Huber threshold (paper: 1)", When: "loss=huber"},
			{Name: "epsilon", Default: "0.1", Doc: "width of the ε-insensitive zone (0: least absolute deviation)", When: "loss=epsilon_insensitive"},
			{Name: "tau", Default: "0.5", Doc: "quantile level τ in (0, 1)", When: "loss=quantile"},
			{Name: "nu", Default: "1e-5", Doc: "regularization ν (paper: 1e-6 synthetic, 1/n, 1/(100n), 5e-4)"},
			{Name: "gamma0", Default: "B/4 (hinge, logistic with update=all: 16 at B = 64), B/32 (hinge, logistic with update=new), 1 (other losses)", Doc: "step size γ0 of γ_t = γ0/(1+(t−1)/t0)^κ, t = mini-batch iterations: the first (largest) step"},
			{Name: "t0", Default: "1.5/(ν·γ0) (hinge, logistic with ν > 0: the paper's θ/(t+t0−1) with θν = 1.5), 100 (otherwise)", Doc: "step-size offset t0 in iterations (t0=1, κ=1: the paper's θ/t with θ = gamma0)"},
			{Name: "kappa", Default: "1", Doc: "step-size decay exponent κ in [0, 1] (1: O(1/t), as the paper's theory)"},
			{Name: "gamma_min", Default: "0", Doc: "floor on γ_t (for drifting streams)"},
			{Name: "batch", Default: "64", Doc: "mini-batch size B: events per iteration (paper 2^6–2^10)"},
			{Name: "block", Default: "256", Doc: "feature block r: new random features per iteration (paper 2^5–2^11)"},
			{Name: "max_features", Default: "16384", Doc: "feature cap K_max; memory and per-event time are bounded by it"},
			{Name: "update", Default: "all (hinge, logistic), new (other losses)", Doc: "which coefficients a step changes: all (every feature drawn so far and the new block, the kernel estimated by all of them: a lower-variance functional step; issue 42) or new (the new block only: the paper's Algorithm 1); a spec naming after_cap but not update means new (the specs of before update existed)", When: "written in the canonical spec only as update=all"},
			{Name: "after_cap", Default: "refine", Doc: "at the cap: refine (SGD on all K features) or revisit (update one random old block)", When: "update=new"},
			{Name: "features", Default: "cossin (hinge, logistic), cos (other losses)", Doc: "cossin: (cos ωᵀx, sin ωᵀx), two coefficients per feature (authors' code: a lower-variance kernel estimate for the same sincos per frequency); cos: √2cos(ωᵀx+b) (paper's Algorithm 1)"},
			{Name: "predict_with", Default: "decay_average (hinge, logistic with update=all), last (otherwise)", Doc: "last: the last iterate f_t; average: the uniform average of the iterates (paper's Fig. 4); decay_average: the polynomial-decay average (Shamir & Zhang, ICML 2013), each step weighing the newest iterate (η+1)/(t+η)"},
			{Name: "average_eta", Default: "3", Doc: "η of predict_with=decay_average (Shamir & Zhang's choice: 3)", When: "predict_with=decay_average"},
			{Name: "threads", Default: "1", Doc: "goroutines that score each event (Learn, Predict: what the pipeline calls) or each group of a mini-batch's events (LearnBatch) and add its gradient (features split in fixed chunks of 512, partial sums added in chunk order: the same bits for any thread count; workers spin up to 100 µs between jobs, so give a partition with threads=T about T free cores; not state, not part of the canonical spec)", Local: true},
			{Name: "cache_mb", Default: "256", Doc: "memory for cached frequency vectors (not state, not part of the canonical spec: changing it keeps checkpoints compatible; 0 = regenerate every feature on every use)", Local: true},
			docSeed,
		},
		New: newDSG,
	})
}

type dsgLoss int

const (
	dsgHinge dsgLoss = iota + 1
	dsgSquaredHinge
	dsgLogistic
	dsgSquare
	dsgHuber
	dsgEpsilon
	dsgQuantile
)

var dsgLossNames = []string{"hinge", "squared_hinge", "logistic", "square", "huber", "epsilon_insensitive", "quantile"}

// DSG is the doubly stochastic functional gradient learner. Build it with
// New("dsg:...").
type DSG struct {
	base
	feat    *kernel.Seeded
	loss    dsgLoss
	lossPar float64 // delta, epsilon or tau
	nu      float64
	gamma0  float64
	t0      float64
	kappa   float64
	gmin    float64
	batch   int
	block   int
	maxF    int
	revisit bool
	all     bool // update=all: every feature drawn so far takes each step
	stride  int  // coefficients per feature: 1 (cos) or 2 (cossin)
	average bool
	avgEta  float64 // predict_with=decay_average: η of the weight (η+1)/(t+η); 0: the uniform average
	cacheN  int     // features whose frequencies may be cached

	// State.
	iters   uint64    // completed iterations t
	inBatch int       // events of the open batch
	nf      int       // features K in the model
	scale   float64   // lazy scale c: a = c·coef
	coef    []float64 // nf·stride stored coefficients
	avg     []float64 // nf·stride averaged coefficients (true scale), if average
	accLo   int       // features [accLo, accHi) receive the open batch's gradient
	accHi   int
	acc     []float64  // (accHi−accLo)·stride: Σ_m ℓ'_m φ_i(x_m)
	src     rng.Source // picks the block to revisit

	// Not state.
	cache   *kernel.SeededBlocks // frequency cache, coordinate-major blocks of dsgChunk features
	threads int                  // goroutines that score an event's chunks
	work    []dsgWorker          // per-thread scratch
	part    []float64            // per-chunk partial scores of the last iterate
	partA   []float64            // per-chunk partial scores of the average
	phi     []float64            // scratch: feature values of the current input
	nz      []int                // scratch: non-zero coordinates of the current input
	nzs     [][]int              // LearnBatch: non-zero coordinates of a group's events
	partG   []float64            // LearnBatch: partial scores, event e chunk c at e·nc+c
	partGA  []float64            // LearnBatch: the same for the average
	phiG    []float64            // LearnBatch after the cap (refine): the group's feature values, event-major
	gs      []float64            // LearnBatch after the cap (refine): the group's loss derivatives
	grp     kernel.SparseGroup   // the group's inputs for ProjectGroup (LearnBatch; one event in Learn, Predict)
	one     [1][]float64         // Learn, Predict: the group of one
	team    *team                // the goroutines of threads > 1, started on first use
	job     dsgJob               // the current fork's work (runJob)
	doJob   func(int)            // l.runJob, bound once
}

func newDSG(p *Params, dim int) (Learner, error) {
	famName := p.Enum("kernel", "gaussian", kernel.FamilyNames()...)
	sigma := p.Float("sigma", 1, Positive)
	var smooth float64
	if famName == "matern" {
		smooth = p.Float("smoothness", 1.5, func(v float64) (bool, string) {
			return v == 0.5 || v == 1.5 || v == 2.5, "0.5, 1.5 or 2.5"
		})
	}
	lossName := p.Enum("loss", "hinge", dsgLossNames...)
	var loss dsgLoss
	for i, n := range dsgLossNames {
		if n == lossName {
			loss = dsgLoss(i + 1)
		}
	}
	var lossPar float64
	switch loss {
	case dsgHuber:
		lossPar = p.Float("delta", 1, Positive)
	case dsgEpsilon:
		lossPar = p.Float("epsilon", 0.1, NonNegative)
	case dsgQuantile:
		lossPar = p.Float("tau", 0.5, func(v float64) (bool, string) { return v > 0 && v < 1, "in (0, 1)" })
	}
	nu := p.Float("nu", 1e-5, NonNegative)
	batch := p.Int("batch", 64, InRange(1, 1<<20))
	// Default steps (docs/algorithms/dsg-onepass.md): for the Lipschitz
	// classification losses the paper's θ/(t+t0−1) with θν = 1.5 (its
	// theory's θν ∈ (1, 2)) and the offset that makes the first step
	// γ0 = B·dsgEta; the smooth and regression losses keep γ0 = 1, t0 = 100.
	lipschitz := loss == dsgHinge || loss == dsgLogistic
	// update (issue 42): all for the Lipschitz classification losses, new
	// (Algorithm 1) for the others. A spec that names after_cap but not
	// update is a canonical spec from before update existed (every
	// parameter named): it means update=new and keeps its canonical form,
	// so its checkpoints restore.
	updateDef := "new"
	if lipschitz {
		updateDef = "all"
	}
	update := "new"
	if !p.Has("after_cap") || p.Has("update") {
		update = p.LocalEnum("update", updateDef, "all", "new")
	}
	all := update == "all"
	if all { // in the canonical spec only as update=all: new is Algorithm 1, the spec's meaning before update existed
		delete(p.local, "update")
		p.resolved["update"] = "all"
	}
	gamma0Def, t0Def := 1.0, 100.0
	switch {
	case lipschitz && all:
		gamma0Def = float64(batch) * dsgEtaAll
	case lipschitz:
		gamma0Def = float64(batch) * dsgEta
	}
	gamma0 := p.Float("gamma0", gamma0Def, Positive)
	if lipschitz && nu > 0 {
		t0Def = dsgTheta / (nu * gamma0)
	}
	t0 := p.Float("t0", t0Def, Positive)
	kappa := p.Float("kappa", 1, InRange(0, 1))
	gmin := p.Float("gamma_min", 0, NonNegative)
	block := p.Int("block", 256, InRange(1, 1<<20))
	maxF := p.Int("max_features", 1<<14, InRange(1, 1<<26))
	policy := "refine"
	if !all {
		policy = p.Enum("after_cap", "refine", "refine", "revisit")
	} else if p.Has("after_cap") {
		p.fail("after_cap", "applies to update=new only (with update=all every feature takes every step, before the cap and after it)")
	}
	formDef := "cos"
	if lipschitz {
		formDef = "cossin"
	}
	form := p.Enum("features", formDef, "cos", "cossin")
	predDef := "last"
	if lipschitz && all {
		predDef = "decay_average"
	}
	predWith := p.Enum("predict_with", predDef, "last", "average", "decay_average")
	var avgEta float64
	if predWith == "decay_average" {
		avgEta = p.Float("average_eta", 3, Positive)
	}
	cacheMB := p.LocalFloat("cache_mb", 256, NonNegative)
	threads := p.LocalInt("threads", 1, InRange(1, 256))
	seed := p.Uint64("seed", 1)
	if err := p.Err(); err != nil {
		return nil, err
	}
	if maxF < block {
		return nil, fmt.Errorf("learner dsg: parameter max_features: %d must be >= block (%d)", maxF, block)
	}
	fam, err := kernel.ParseFamily(famName)
	if err != nil {
		return nil, err
	}
	feat, err := kernel.NewSeeded(fam, sigma, smooth, dim, seed)
	if err != nil {
		return nil, err
	}
	task := Classification
	if loss >= dsgSquare {
		task = Regression
	}
	stride := 1
	if form == "cossin" {
		stride = 2
	}
	cacheN := int(math.Min(cacheMB*(1<<20)/float64(8*(dim+1)), float64(maxF)))
	l := &DSG{
		base:    newBase(p, dim, task),
		feat:    feat,
		loss:    loss,
		lossPar: lossPar,
		nu:      nu,
		gamma0:  gamma0,
		t0:      t0,
		kappa:   kappa,
		gmin:    gmin,
		batch:   batch,
		block:   block,
		maxF:    maxF,
		revisit: policy == "revisit",
		all:     all,
		stride:  stride,
		average: predWith != "last",
		avgEta:  avgEta,
		cacheN:  cacheN,
		scale:   1,
		nz:      make([]int, 0, dim),
		cache:   kernel.NewSeededBlocks(feat, dsgChunk, cacheN),
		threads: threads,
	}
	l.work = make([]dsgWorker, l.threads)
	for i := range l.work {
		l.work[i] = dsgWorker{w: make([]float64, dim), p: make([]float64, dsgChunk), phi: make([]float64, 4*dsgChunk*stride)}
	}
	l.src.Seed(rng.Derive(seed, 0xd5a7))
	return l, nil
}

// deriv returns ∂ℓ/∂f at (f, y) in the paper's conventions (§1.3).
func (l *DSG) deriv(f, y float64) float64 {
	switch l.loss {
	case dsgHinge:
		if y*f < 1 {
			return -y
		}
		return 0
	case dsgSquaredHinge:
		if m := 1 - float64(y*f); m > 0 {
			return -y * m
		}
		return 0
	case dsgLogistic:
		z := y * f
		if z > 0 {
			e := math.Exp(-z)
			return -y * e / (1 + e)
		}
		return -y / (1 + math.Exp(z))
	case dsgSquare:
		return f - y
	case dsgHuber:
		r := f - y
		if r > l.lossPar {
			return l.lossPar
		}
		if r < -l.lossPar {
			return -l.lossPar
		}
		return r
	case dsgEpsilon:
		r := f - y
		if r > l.lossPar {
			return 1
		}
		if r < -l.lossPar {
			return -1
		}
		return 0
	case dsgQuantile:
		if f >= y {
			return 1 - l.lossPar
		}
		return -l.lossPar
	}
	panic("learner dsg: unknown loss")
}

// gamma returns the step size of iteration t ≥ 1.
func (l *DSG) gamma(t uint64) float64 {
	u := 1 + float64(t-1)/l.t0
	var g float64
	switch l.kappa {
	case 1:
		g = l.gamma0 / u
	case 0.5:
		g = l.gamma0 / math.Sqrt(u)
	case 0:
		g = l.gamma0
	default:
		g = l.gamma0 / math.Pow(u, l.kappa)
	}
	return math.Max(g, l.gmin)
}

// dsgTheta is θν of the default step schedule of the Lipschitz
// classification losses: the middle of the paper's (1, 2).
const dsgTheta = 1.5

// dsgEta is the default step per event of the Lipschitz classification
// losses, γ0/B: a violating event adds η·ℓ'·k̂(x, ·) to f (measured on
// a9a, docs/algorithms/dsg-onepass.md).
const dsgEta = 1.0 / 32

// dsgEtaAll is dsgEta with update=all: 1/4, the constant step 1/(4R²) of
// averaged SGD (Bach & Moulines, NIPS 2013) with R² = sup k̂(x, x) = 1 for
// the cossin features of a shift-invariant kernel (k(x, x) = 1).
const dsgEtaAll = 1.0 / 4

// dsgChunk is the number of features scored as one unit: the frequency
// cache's block, the unit of work of a thread, and the unit of the score's
// summation (a sum per chunk with four interleaved accumulators, the chunk
// sums added in chunk order), which is what makes the score's bits
// independent of the thread count.
const dsgChunk = 512

// dsgWorker is one thread's scratch.
type dsgWorker struct {
	w   []float64          // a regenerated frequency vector (features beyond the cache)
	p   []float64          // projections of a chunk (cossin)
	phi []float64          // feature values of a chunk for four events (LearnBatch)
	pg  []float64          // projections of a chunk for a group of events, event e at e·dsgChunk (LearnBatch)
	one kernel.SparseGroup // evalInto's group of one
}

// ensureCache caches the frequencies of features up to n (within the cache
// budget) and sizes the scratch for n features.
func (l *DSG) ensureCache(n int) {
	l.cache.Grow(n)
	if need := n * l.stride; len(l.phi) < need {
		l.phi = append(l.phi, make([]float64, need-len(l.phi))...)
	}
	if nc := (n + dsgChunk - 1) / dsgChunk; len(l.part) < nc {
		l.part = append(l.part, make([]float64, nc-len(l.part))...)
		l.partA = append(l.partA, make([]float64, nc-len(l.partA))...)
	}
}

// features writes the values of features [lo, hi) at x (non-zero
// coordinates l.nz) into l.phi[lo·stride : hi·stride], with the first
// worker's scratch.
func (l *DSG) features(x []float64, lo, hi int) { l.evalFeatures(&l.work[0], x, lo, hi) }

// evalFeatures is features with a given worker's scratch.
func (l *DSG) evalFeatures(wk *dsgWorker, x []float64, lo, hi int) {
	l.evalInto(wk, x, l.nz, lo, hi, l.phi[lo*l.stride:hi*l.stride])
}

// evalInto writes the values of features [lo, hi) at x (non-zero
// coordinates nz) into out ((hi−lo)·stride values): the projections of the
// cached blocks (kernel.SeededBlocks.ProjectGroup with a group of one), or
// of regenerated frequencies beyond the cache, then √2cos, or cos and sin.
func (l *DSG) evalInto(wk *dsgWorker, x []float64, nz []int, lo, hi int, out []float64) {
	wk.one.Reset(l.cache.Block())
	wk.one.Add(x, nz)
	for base := lo; lo < hi; {
		end := min(hi, (lo/dsgChunk+1)*dsgChunk)
		if l.stride == 1 {
			p := out[lo-base : end-base]
			l.cache.ProjectGroup(p, len(p), wk.w, &wk.one, lo, end, true)
			for i, v := range p {
				p[i] = kernel.CosFeature(v)
			}
		} else { // the pair (cos ωᵀx, sin ωᵀx) has no phase
			p := wk.p[:end-lo]
			l.cache.ProjectGroup(p, len(p), wk.w, &wk.one, lo, end, false)
			rng.FastCosSinPairs(out[2*(lo-base):2*(end-base)], p) // FastSincos's bits, no call per value
		}
		lo = end
	}
}

// dot4 returns Σ a_i·b_i with four interleaved accumulators (i mod 4),
// every product rounded, added as (s0+s1)+(s2+s3): kernel.Dot4 (AVX2 on
// amd64, the same bits).
func dot4(a, b []float64) float64 { return kernel.Dot4(a, b) }

// scores evaluates all nf features at x into l.phi (scoreGroup with a
// group of one) and returns the last
// iterate's score f_t(x) and the reported score (f_t(x), or the averaged
// model's with predict_with=average): the chunk sums added in chunk order,
// as LearnBatch adds them. With threads = T > 1 the chunks are split over
// the learner's team (same bits): a fork and join per event, which the
// team's spinning workers make cheap (with a goroutine and a WaitGroup per
// fork it measured 0.8× one thread, BenchmarkDSGA9a, issue 42).
func (l *DSG) scores(x []float64) (f, reported float64) {
	nc := (l.nf + dsgChunk - 1) / dsgChunk
	l.grp.Reset(l.cache.Block()) // a group of one: scoreGroup's kernels
	l.grp.Add(x, l.nz)
	l.one[0] = x
	phi := l.phi[:l.nf*l.stride]
	if T := min(l.threads, nc); T > 1 {
		l.job = dsgJob{kind: dsgJobScore, T: T, nc: nc, group: l.one[:], keep: phi, part: l.part, partA: l.partA}
		l.fork()
	} else {
		l.scoreGroup(&l.work[0], l.one[:], nc, 0, nc, phi, l.part, l.partA)
	}
	var sf, sa float64
	for c := range nc {
		sf += l.part[c]
	}
	f = float64(l.scale * sf)
	if !l.average {
		return f, f
	}
	for c := range nc {
		sa += l.partA[c]
	}
	return f, sa
}

// Predict returns the score of x: f_t(x), or f̂_t(x) with
// predict_with=average.
func (l *DSG) Predict(x []float64) float64 {
	l.checkDim(x)
	if l.nf == 0 {
		return 0
	}
	l.ensureCache(l.nf)
	l.nz = kernel.NonZero(l.nz, x)
	_, r := l.scores(x)
	return r
}

// Learn scores x with the model of the current batch, adds the event's
// gradient to the batch accumulator, closes the batch (one DSG iteration)
// at its B-th event, and returns the pre-update score.
func (l *DSG) Learn(x []float64, y float64) float64 {
	l.checkDim(x)
	if l.inBatch == 0 {
		l.openBatch()
	}
	l.ensureCache(max(l.nf, l.accHi))
	l.nz = kernel.NonZero(l.nz, x)
	f, reported := l.scores(x)
	if g := l.deriv(f, y); g != 0 {
		if l.accHi > l.nf { // the pending new block
			l.features(x, l.nf, l.accHi)
		}
		s := l.stride
		phi := l.phi[l.accLo*s : l.accHi*s]
		if n, T := len(l.acc), min(l.threads, (l.accHi-l.accLo)/dsgChunk); T > 1 {
			// refine: the whole model's gradient, split by feature range
			// (element-wise: the same bits for any split)
			l.job = dsgJob{kind: dsgJobAxpy, T: T, n: n, g: g, keep: phi}
			l.fork()
		} else {
			kernel.AxpyRounded(g, phi, l.acc) // acc += g·φ, each product rounded
		}
	}
	l.inBatch++
	l.updates++
	if l.inBatch == l.batch {
		l.step()
	}
	return reported
}

// dsgGroupValues bounds the feature values LearnBatch keeps for a group of
// events after the cap with after_cap=refine (every feature takes the
// batch's gradient, so the values of all K features of every event of the
// group are kept until the group's scores are known): 2^22 values, 32 MiB;
// a longer run of events is scored in several groups.
const dsgGroupValues = 1 << 22

// dsgGroupEvents bounds the events LearnBatch scores together (a longer
// run of one mini-batch is scored in several groups, with the same bits):
// each thread keeps the projections of one chunk for the group,
// dsgGroupEvents·dsgChunk values (256 KiB, within L2).
const dsgGroupEvents = 64

// LearnBatch is Learn for xs[0], xs[1], … in order: it writes the
// pre-update scores into scores and leaves the state that the sequence of
// Learn calls leaves, bit for bit. It scores each run of events that fall
// in one mini-batch together (the model is the same for all of them): one
// pass over the cached frequency blocks per run instead of one per event,
// and with threads > 1 one fork and join per run instead of one per event
// (two after the cap with after_cap=refine: the scores, then the gradient
// of every feature). Runs longer than 64 events (dsgGroupEvents) are split.
// With threads = 1 it allocates nothing in steady state; with threads = T >
// 1 each fork starts T−1 goroutines (one small allocation each, i.e. per
// mini-batch, not per event). len(scores) must be ≥ len(xs) = len(ys).
func (l *DSG) LearnBatch(xs [][]float64, ys []float64, scores []float64) {
	scores = scores[:len(xs)]
	ys = ys[:len(xs)]
	for s := 0; s < len(xs); {
		if l.inBatch == 0 {
			l.openBatch()
		}
		m := min(len(xs)-s, l.batch-l.inBatch, dsgGroupEvents)
		// refine, or update=all: every existing feature takes the
		// gradient, so every value is kept (update=all before the cap adds
		// the new block's values event by event, below)
		keep := l.accLo == 0 && l.nf > 0 && l.accHi >= l.nf
		if keep {
			m = max(1, min(m, dsgGroupValues/(l.nf*l.stride)))
		}
		group := xs[s : s+m]
		l.ensureCache(max(l.nf, l.accHi))
		for len(l.nzs) < len(group) {
			l.nzs = append(l.nzs, make([]int, 0, l.dim))
		}
		l.grp.Reset(l.cache.Block())
		for e, x := range group {
			l.checkDim(x)
			l.nzs[e] = kernel.NonZero(l.nzs[e], x)
			l.grp.Add(x, l.nzs[e])
		}
		nc := (l.nf + dsgChunk - 1) / dsgChunk
		if need := len(group) * nc; len(l.partG) < need {
			l.partG = make([]float64, need)
			l.partGA = make([]float64, need)
		}
		l.phiG = l.phiG[:0]
		if keep {
			if len(l.gs) < len(group) {
				l.gs = make([]float64, dsgGroupEvents)
			}
			if need := len(group) * l.nf * l.stride; cap(l.phiG) < need {
				// room for the group at the cap (update=all grows the
				// model every batch: no new, zeroed array per batch)
				l.phiG = make([]float64, need, max(need, min(dsgGroupValues, dsgGroupEvents*l.maxF*l.stride)))
			}
			l.phiG = l.phiG[:len(group)*l.nf*l.stride]
		}
		if T := min(l.threads, nc); T > 1 {
			l.job = dsgJob{kind: dsgJobScore, T: T, nc: nc, group: group, keep: l.phiG, part: l.partG, partA: l.partGA}
			l.fork()
		} else {
			l.scoreGroup(&l.work[0], group, nc, 0, nc, l.phiG, l.partG, l.partGA)
		}
		for e, x := range group {
			var sf, sa float64
			for _, v := range l.partG[e*nc : (e+1)*nc] {
				sf += v
			}
			f := float64(l.scale * sf)
			reported := f
			if l.average {
				for _, v := range l.partGA[e*nc : (e+1)*nc] {
					sa += v
				}
				reported = sa
			}
			g := l.deriv(f, ys[s+e])
			if keep {
				l.gs[e] = g                   // accumulated below, chunk by chunk
				if g != 0 && l.accHi > l.nf { // update=all: the new block
					st := l.stride
					l.nz = append(l.nz[:0], l.nzs[e]...)
					l.features(x, l.nf, l.accHi)
					kernel.AxpyRounded(g, l.phi[l.nf*st:l.accHi*st], l.acc[l.nf*st:])
				}
			} else if g != 0 {
				st := l.stride
				l.nz = append(l.nz[:0], l.nzs[e]...)
				l.features(x, l.accLo, l.accHi)
				kernel.AxpyRounded(g, l.phi[l.accLo*st:l.accHi*st], l.acc) // acc += g·φ, each product rounded
			}
			scores[s+e] = reported
			l.inBatch++
			l.updates++
		}
		if keep { // refine: every feature takes the group's gradient
			if T := min(l.threads, nc); T > 1 {
				l.job = dsgJob{kind: dsgJobAccumulate, T: T, nc: nc, n: len(group)}
				l.fork()
			} else {
				l.accumulateGroup(len(group), 0, nc)
			}
		}
		if l.inBatch == l.batch {
			l.step()
		}
		s += len(group)
	}
}

// scoreGroup writes the partial scores of chunks [c0, c1) for every event
// e of group into part[e·nc+c] (and partA), and with keep non-empty the
// feature values into it (event e's at e·nf·stride): chunk by chunk, the projections of all the group's
// events onto a chunk in one register-blocked pass over its frequency
// block (kernel.SeededBlocks.ProjectGroup, the bits of evalInto's
// Project), then each event's feature values and partial scores.
func (l *DSG) scoreGroup(wk *dsgWorker, group [][]float64, nc, c0, c1 int, keep, part, partA []float64) {
	s := l.stride
	n := l.nf * s
	if need := len(group) * dsgChunk; len(wk.pg) < need {
		wk.pg = make([]float64, need)
	}
	for c := c0; c < c1; c++ {
		lo, hi := c*dsgChunk, min((c+1)*dsgChunk, l.nf)
		m := (hi - lo) * s
		coef := l.coef[lo*s : hi*s]
		l.cache.ProjectGroup(wk.pg, dsgChunk, wk.w, &l.grp, lo, hi, s == 1)
		for e0 := 0; e0 < len(group); e0 += 4 { // four events' dot products together
			ne := min(4, len(group)-e0)
			var phis [4][]float64
			for k := range ne {
				e := e0 + k
				phi := wk.phi[k*m : (k+1)*m]
				if len(keep) > 0 {
					phi = keep[e*n+lo*s : e*n+hi*s]
				}
				p := wk.pg[e*dsgChunk : e*dsgChunk+hi-lo]
				if s == 1 {
					for i, v := range p {
						phi[i] = kernel.CosFeature(v)
					}
				} else {
					rng.FastCosSinPairs(phi, p)
				}
				phis[k] = phi
			}
			l.dots(part[e0*nc+c:], nc, coef, &phis, ne)
			if l.average {
				l.dots(partA[e0*nc+c:], nc, l.avg[lo*s:hi*s], &phis, ne)
			}
		}
	}
}

// dots sets dst[k·stride] = dot4(a, phis[k]) for k < n ≤ 4: four at once
// (kernel.Dot4x4, dot4's bits) when n = 4.
func (l *DSG) dots(dst []float64, stride int, a []float64, phis *[4][]float64, n int) {
	if n < 4 {
		for k := range n {
			dst[k*stride] = dot4(a, phis[k])
		}
		return
	}
	var out [4]float64
	kernel.Dot4x4(&out, a, phis[0], phis[1], phis[2], phis[3])
	for k, v := range out {
		dst[k*stride] = v
	}
}

// accumulateGroup adds g_e·φ_e(x_e) (l.gs, l.phiG) to the accumulator
// for the first ne events of a refine group, over the features of chunks
// [c0, c1): event by event in order (each event's values streamed once;
// going chunk by chunk instead measured 3.5 µs/event slower, the
// accumulator fits L2 anyway), so every accumulator value takes its terms
// in event order, as Learn adds them: the same bits for any chunk range
// and thread count.
func (l *DSG) accumulateGroup(ne, c0, c1 int) {
	st := l.stride
	n := l.nf * st
	lo, hi := c0*dsgChunk*st, min(c1*dsgChunk, l.nf)*st
	if lo >= hi {
		return
	}
	acc := l.acc[lo:hi]
	for e, g := range l.gs[:ne] {
		if g != 0 {
			kernel.AxpyRounded(g, l.phiG[e*n+lo:e*n+hi], acc) // acc += g·φ, each product rounded
		}
	}
}

// dsgJob is the work of one fork, described in fields so that a fork
// allocates nothing (a closure per event would escape to the team).
type dsgJob struct {
	kind  int
	T     int         // goroutines taking part (≤ threads; the others return)
	nc    int         // chunks (score, accumulate)
	n     int         // events (accumulate) or values (axpy)
	g     float64     // the loss derivative (axpy)
	group [][]float64 // the events (score)
	keep  []float64   // where the feature values go (score) or come from (axpy)
	part  []float64   // partial scores (score)
	partA []float64
}

const (
	dsgJobScore      = iota // scoreGroup over chunk range t
	dsgJobAccumulate        // accumulateGroup over chunk range t
	dsgJobAxpy              // acc += g·keep over value range t (Learn's refine gradient)
)

// fork runs l.job on the learner's team (started on first use, stopped
// by a runtime cleanup when the learner is dropped): goroutine t does
// range t of T, each range the same whatever T, so the bits are.
func (l *DSG) fork() {
	if l.team == nil {
		l.team = newTeam(l.threads)
		l.doJob = l.runJob // bound once: forks allocate nothing
		runtime.AddCleanup(l, (*team).close, l.team)
	}
	l.team.run(l.doJob)
	l.job = dsgJob{} // keep no reference to the caller's events
}

// runJob is goroutine t's share of l.job.
func (l *DSG) runJob(t int) {
	j := &l.job
	T := j.T
	if t >= T {
		return
	}
	switch j.kind {
	case dsgJobScore:
		l.scoreGroup(&l.work[t], j.group, j.nc, t*j.nc/T, (t+1)*j.nc/T, j.keep, j.part, j.partA)
	case dsgJobAccumulate:
		l.accumulateGroup(j.n, t*j.nc/T, (t+1)*j.nc/T)
	case dsgJobAxpy:
		lo, hi := t*j.n/T, (t+1)*j.n/T
		kernel.AxpyRounded(j.g, j.keep[lo:hi], l.acc[lo:hi])
	}
}

// openBatch chooses which features the batch's gradient goes to: with
// update=all every feature and, before the cap, a new block; with
// update=new a new block before the cap, all features (refine) or one
// random block (revisit) after it.
func (l *DSG) openBatch() {
	switch {
	case l.all:
		l.accLo, l.accHi = 0, l.nf+min(l.block, l.maxF-l.nf)
	case l.nf < l.maxF:
		l.accLo, l.accHi = l.nf, l.nf+min(l.block, l.maxF-l.nf)
	case l.revisit:
		nb := (l.nf + l.block - 1) / l.block
		l.accLo = l.src.IntN(nb) * l.block
		l.accHi = min(l.accLo+l.block, l.nf)
	default:
		l.accLo, l.accHi = 0, l.nf
	}
	n := (l.accHi - l.accLo) * l.stride
	if cap(l.acc) < n {
		l.acc = make([]float64, n, max(n, l.block*l.stride))
	}
	l.acc = l.acc[:n]
	clear(l.acc)
}

// step closes the batch: iteration t = iters+1 of Algorithm 1B.
func (l *DSG) step() {
	t := l.iters + 1
	g := l.gamma(t)
	c := l.scale * (1 - float64(g*l.nu))
	if math.Abs(c) < 1e-150 { // fold the scale in (exact zeros when 1 − γν = 0)
		for i := range l.coef {
			l.coef[i] *= c
		}
		c = 1
	}
	// Step on the accumulated features, normalized by the number of
	// features in the kernel estimate (r new ones, all K when refining,
	// K + r with update=all before the cap).
	count := l.accHi - l.accLo
	factor := -g / (float64(l.batch) * float64(count) * c)
	l.coef = addStep(l.coef, l.acc, l.accLo, l.accHi, l.nf, l.stride, factor)
	if l.accHi > l.nf { // a new block
		if l.average {
			l.avg = append(l.avg, make([]float64, (l.accHi-l.nf)*l.stride)...)
		}
		l.nf = l.accHi
	}
	l.scale = c
	l.iters = t
	if l.average {
		inv := 1 / float64(t)
		if l.avgEta > 0 {
			inv = (l.avgEta + 1) / (float64(t) + l.avgEta)
		}
		for i, a := range l.avg {
			l.avg[i] = a + float64((float64(c*l.coef[i])-a)*inv)
		}
	}
	l.inBatch = 0
	l.accLo, l.accHi = 0, 0
	l.acc = l.acc[:0]
}

// addStep adds factor·acc to the stored coefficients of features
// [lo, hi), w values per feature (binary and multi-class DSG's step): the
// values of existing features (below nf) in place, a new block's (from nf
// to hi) appended. It returns coef.
func addStep(coef, acc []float64, lo, hi, nf, w int, factor float64) []float64 {
	old := (min(hi, nf) - lo) * w // values of existing features
	if old > 0 {
		dst := coef[lo*w : lo*w+old]
		for i, a := range acc[:old] {
			dst[i] += float64(factor * a)
		}
	}
	for _, a := range acc[old:] {
		coef = append(coef, float64(factor*a))
	}
	return coef
}

// MarshalBinary encodes the coefficients, counters, lazy scale, open batch
// and generator state (the features are regenerated from the seed).
func (l *DSG) MarshalBinary() ([]byte, error) {
	e := l.encoder(8*(len(l.coef)+len(l.avg)+len(l.acc)) + 96)
	e.U64(l.iters)
	e.Int(l.inBatch)
	e.Int(l.nf)
	e.F64(l.scale)
	e.F64s(l.coef)
	e.F64s(l.avg)
	e.Int(l.accLo)
	e.Int(l.accHi)
	e.F64s(l.acc)
	hi, lo := l.src.State()
	e.U64(hi)
	e.U64(lo)
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured DSG; on
// error the learner is unchanged.
func (l *DSG) UnmarshalBinary(data []byte) error {
	d, updates := l.decoder(data)
	iters := d.U64()
	inBatch := d.Int()
	nf := d.Int()
	scale := d.F64()
	var coef, avg, acc []float64
	if d.Err() == nil && (nf < 0 || nf > l.maxF || (nf%l.block != 0 && nf != l.maxF)) {
		d.Fail("dsg feature count %d invalid (block %d, cap %d)", nf, l.block, l.maxF)
	}
	if d.Err() == nil && (inBatch < 0 || inBatch >= l.batch) {
		d.Fail("dsg batch position %d outside [0, %d)", inBatch, l.batch)
	}
	if d.Err() == nil && (scale == 0 || math.IsNaN(scale) || math.IsInf(scale, 0)) {
		d.Fail("dsg scale %v", scale)
	}
	coef = d.F64sN(nil, nf*l.stride)
	nAvg := 0
	if l.average {
		nAvg = nf * l.stride
	}
	avg = d.F64sN(nil, nAvg)
	accLo, accHi := d.Int(), d.Int()
	if d.Err() == nil && !l.validAcc(inBatch, nf, accLo, accHi) {
		d.Fail("dsg accumulator range [%d, %d) invalid", accLo, accHi)
	}
	acc = d.F64sN(nil, max(0, accHi-accLo)*l.stride)
	hi, lo := d.U64(), d.U64()
	if err := d.Done(); err != nil {
		return err
	}
	l.updates = updates
	l.iters, l.inBatch, l.nf, l.scale = iters, inBatch, nf, scale
	l.coef = append(l.coef[:0], coef...)
	l.avg = append(l.avg[:0], avg...)
	l.accLo, l.accHi = accLo, accHi
	l.acc = append(l.acc[:0], acc...)
	l.src.Restore(hi, lo)
	return nil
}

// validAcc checks an accumulator range against the batch rules.
func (l *DSG) validAcc(inBatch, nf, lo, hi int) bool {
	if inBatch == 0 {
		return lo == 0 && hi == 0
	}
	switch {
	case l.all:
		return lo == 0 && hi == nf+min(l.block, l.maxF-nf)
	case nf < l.maxF:
		return lo == nf && hi == nf+min(l.block, l.maxF-nf)
	case l.revisit:
		return lo >= 0 && lo < nf && lo%l.block == 0 && hi == min(lo+l.block, nf)
	default:
		return lo == 0 && hi == nf
	}
}

// Info reports the feature cap as the budget and K as its use; Bytes
// counts the coefficients, accumulator, scratch and the frequency cache.
func (l *DSG) Info() Info {
	bytes := 8 * (cap(l.coef) + cap(l.avg) + cap(l.acc) + cap(l.phi) + cap(l.part) + cap(l.partA) + cap(l.nz) + l.threads*(l.dim+dsgChunk))
	bytes += l.cache.Bytes() + 8*(cap(l.partG)+cap(l.partGA)+cap(l.phiG)+cap(l.gs)+len(l.nzs)*l.dim)
	for i := range l.work {
		bytes += 8 * cap(l.work[i].pg)
	}
	return l.info(l.maxF, l.nf, bytes)
}

// MedianTrickSigma is the median trick's kernel width as the DSG paper's
// experiments use it (Dai et al., NIPS 2014, §7): the median Euclidean
// distance between rows i and i+1 of the first n+1 rows (n pairs of
// consecutive rows, not all n(n−1)/2: O(n·d) on any file). It needs at
// least two rows.
func MedianTrickSigma(xs [][]float64, n int) float64 {
	n = min(n, len(xs)-1)
	ds := make([]float64, n)
	for i := range n {
		var s float64
		for j, v := range xs[i] {
			d := v - xs[i+1][j]
			s += d * d
		}
		ds[i] = math.Sqrt(s)
	}
	slices.Sort(ds)
	return ds[n/2]
}
