package learner

// sketchMap — the machinery FORKS and SkeGD share: Stage 1 (kernel OGD into
// a buffer of B̃ examples), INIT (SJLT sketch S_p, uniform landmark sampling
// S_m, Φ_pm and Φ_pp, one rank-k decomposition of Φ_pp), the explicit
// feature map φ(x) = Zᵀ κ_L(x) with Z = Φ_pm^† V Σ^{1/2}, and the update
// round every ρ Stage-2 events that folds that round's example into the
// sketches and refreshes the decomposition and Z.
//
// References: D. Wen et al., "Fast Second-Order Online Kernel Learning
// through Incremental Matrix Sketching and Decomposition", arXiv
// 2410.11188v2 (IJCAI 2025), §2.2, §3.2–3.4, Alg. 1, App. B.1; X. Zhang and
// S. Liao, "Incremental Randomized Sketching for Online Kernel Learning",
// ICML 2019 (SkeGD). Notes: docs/algorithms/forks-and-baselines.md. The numerical building blocks are learner/linalg's
// (SJLT, SampleColumns, TISVD, TruncatedSymPSD, RandomizedSVD,
// SketchedNystromMap, Pinv); kernel rows come only from kernel.Kernel.Row.
//
// Decisions:
//   - Stage 1 ends when the buffer holds B̃ ("buffer", default 2B)
//     examples; B ("budget") only sizes s_p, s_m and k.
//   - Stage 1 is kernel OGD, f = Σ a_i κ(x_i, x); an example enters the
//     buffer when ℓ'(f, y) ≠ 0 (hinge and squared hinge: y f < 1) with
//     a = −η ℓ'(f, y). Optional NORMA shrinkage a ← (1 − ηλ₁)a every
//     Stage-1 round ("stage1_lambda", default 0 = the paper's plain KOGD).
//   - Only the example that arrives on an update round enters the
//     sketches (μ = B̃ + #update rounds), as the paper's complexity and
//     regret analysis require; the other examples never do.
//   - Landmarks: s_m indices sampled uniformly without replacement from
//     the B̃ buffer at INIT and kept fixed (s_m^new = 0, "landmarks=fixed",
//     default). "landmarks=replace" is an optional variant (ours): after an
//     insertion, with probability s_m/n the new example replaces a uniformly
//     chosen landmark (reservoir sampling over the stored examples), and its
//     Φ_pm column is recomputed exactly as S_pᵀK e_new.
//   - D ("blocks", default 1) SJLT blocks; hash pairs are drawn from the
//     learner's generator when an example is stored (linalg.SJLT).
//   - ρ ("rho") is an absolute event count: update rounds fall at
//     t₀ + jρ, j ≥ 1, where t₀ is the INIT round. Its default is
//     ⌊θ·horizon⌋ (θ = "theta", 0.3), the paper's ρ = ⌊θN⌋ when horizon is
//     the stream length (okstream eval sets horizon = N); see ForksRho.
//   - Decomposition ("decomp"): tisvd (FORKS default) keeps only
//     the rank-k factors of Φ_pp after one exact top-k decomposition at
//     INIT (the paper's one full SVD; Φ_pp is symmetric PSD, so we take
//     its k largest eigenpairs, linalg.TruncatedSymPSD: the same factors,
//     about 4× faster at s_p = 1000, where INIT's full SVD was most of a
//     60k-event run's time) and folds each
//     update in with TISVD in the compact c = 2 form (Φ_pp is not stored:
//     the truncated tail is never recovered, the known bias); svd (SkeGD
//     default; the "standard rank-k SVD" of the paper's Fig. 2) stores Φ_pp
//     (s_p² floats), updates it exactly and recomputes the exact top-k
//     (TruncatedSymPSD) each update round; rsvd does the same with the randomized SVD the SkeGD
//     paper uses (oversampling "rsvd_oversample", power iterations
//     "rsvd_power"). TISVD re-orthonormalizes its factors every
//     "reorth_every" updates (not in the paper: an exact change of basis
//     that removes the slow loss of orthogonality; ≤ 0 disables it).
//   - Z = Φ_pm^† V Σ^{1/2} with an SVD-based pseudo-inverse whose
//     tolerance is MATLAB's max(s_p, s_m)·ε·σ_max unless "pinv_tol" ≥ 0 sets
//     it. Z is part of the state (not recomputed on restore).
//   - No warm start by default: Stage 2 starts from w = 0. "warm=lsq"
//     (an option, ours) fits w by least squares to the Stage-1 model's
//     predictions on the buffer, w = Φ_B^† (K a).
//   - Stored-example cap (ours, not in the paper): by default the set
//     grows by one example per update round, as in the paper (memory
//     O(μd) with μ = B̃ + ⌊(T − t₀)/ρ⌋). With "max_stored" = M > 0, once M
//     examples are stored, an update round replaces the oldest stored
//     non-landmark example (FIFO over the slots) by the new one, keeping
//     that slot's SJLT row (the hash pair is data independent). The
//     sketches are updated exactly for the replacement — Φ_pm += s(ψ_L −
//     ψ_L^old)ᵀ and Φ_pp += Δ₁Δ₂ᵀ with Δ₁ = [s, δa], Δ₂ = [δa + δκ s, s],
//     δa = S_pᵀ(ψ − ψ^old) over the other slots — so the sketch becomes one
//     of a sliding window of the last M − s_m update examples plus the
//     landmarks. Landmarks are never evicted.
//   - Cost and allocation: a regular Stage-2 round is O(s_m d + s_m k + k²)
//     (kernel row against the landmarks, Zᵀκ_L, the learner's step) and
//     never allocates. An update round costs O(μd) for the kernel row
//     against the stored set, O(s_p k² + k³) for TISVD (O(s_p³) for the
//     svd/rsvd modes) and O(s_p s_m²) for Φ_pm^† — the paper's
//     O(μ + s_p k² + s_m s_p k + k³) leaves out that pseudo-inverse, which
//     dominates FORKS' update rounds here (one gonum SVD of the s_p×s_m
//     Φ_pm). Update rounds do not allocate below s_p ≈ 128; above, gonum's
//     blocked LAPACK uses its parallel Dgemm, which allocates a little
//     (linalg's doc). Unbounded growth of the stored set reallocates its
//     storage by doubling (amortized); with max_stored it never does.
//   - Numerical failure of a decomposition (only possible for non-finite
//     input, which the runtime rejects) keeps the previous factors and Z; a
//     failed INIT decomposition leaves all-zero factors (φ = 0) until the
//     next update round.

import (
	"fmt"
	"math"

	"okstream/learner/kernel"
	"okstream/learner/linalg"
	"okstream/learner/rng"
	"okstream/learner/state"
)

// ForksRho returns the update cycle ρ = ⌊θ n⌋ (at least 1) of the FORKS
// paper (Wen et al., §5.1: θ = 0.3 and n = N, the dataset size, for Table 1;
// the regret analysis uses n = T − B). The adversarial experiments (§5.2,
// Tables 2–3) use ρ = ⌊0.005 (N − B)⌋, i.e. ForksRho(0.005, N−B): 24 for
// N = 5,000 and B = 200, 49 for N = 10,000. A stream has no N, so learners
// take ρ as an absolute count ("rho"); this helper computes it from an
// expected stream length.
func ForksRho(theta float64, n int) int {
	r := int(math.Floor(theta * float64(n)))
	return max(r, 1)
}

type decompKind int

const (
	decompTISVD decompKind = iota + 1
	decompSVD
	decompRSVD
)

func (d decompKind) String() string {
	switch d {
	case decompTISVD:
		return "tisvd"
	case decompSVD:
		return "svd"
	case decompRSVD:
		return "rsvd"
	}
	return "?"
}

// sketchOpts is the configuration of a sketchMap.
type sketchOpts struct {
	budget    int // B (nominal)
	buffer    int // B̃
	sp, sm, k int
	blocks    int // D
	rho       int
	maxStored int // 0: unbounded
	decomp    decompKind
	reorth    int // TISVD re-orthonormalization period (<0: never)
	oversmp   int // RSVD oversampling
	power     int // RSVD power iterations
	pinvTol   float64
	replace   bool    // landmarks=replace
	warm      bool    // warm=lsq
	eta       float64 // Stage-1 step
	shrink    float64 // Stage-1 NORMA λ₁ (0: none)
}

// Parameter docs shared by FORKS and SkeGD.
var (
	docSkBudget = ParamDoc{Name: "budget", Default: "100", Doc: "nominal budget B; sizes the buffer (2B), s_p (B), s_m (0.2 s_p) and k (0.1B). The paper: 50 if N ≤ 10,000, else 100; 200 in the adversarial games"}
	docSkBuffer = ParamDoc{Name: "buffer", Default: "2×budget", Doc: "buffer size B̃: Stage 1 (kernel OGD) ends when this many examples with non-zero loss are stored"}
	docSkSp     = ParamDoc{Name: "sp", Default: "budget", Doc: "SJLT sketch size s_p (Φ_pp is s_p×s_p), k ≤ s_p ≤ buffer; the paper: B (0.75B in the adversarial games)"}
	docSkSm     = ParamDoc{Name: "sm", Default: "0.2×sp", Doc: "number of landmarks s_m (sampled columns), 1 ≤ s_m ≤ s_p"}
	docSkK      = ParamDoc{Name: "k", Default: "0.1×budget", Doc: "rank k of the decomposition = dimension of the feature map, 1 ≤ k ≤ s_p"}
	docSkBlocks = ParamDoc{Name: "blocks", Default: "1", Doc: "SJLT blocks D (the paper's d = 1: a CountSketch); must divide s_p"}
	docSkRho    = ParamDoc{Name: "rho", Default: "⌊theta×horizon⌋", Doc: "update cycle ρ: the sketches and the decomposition are updated with the example of every ρ-th Stage-2 event (absolute count; the paper: ⌊0.3N⌋, adversarial ⌊0.005(N−B)⌋)"}
	docSkTheta  = ParamDoc{Name: "theta", Default: "0.3", Doc: "θ of the default ρ = ⌊θ·horizon⌋ (ignored when rho is set)"}
	docSkHorz   = ParamDoc{Name: "horizon", Default: "10000", Doc: "expected stream length T, used only for the default ρ and, with the square loss, the default η (okstream eval sets it to the dataset length)"}
	docSkMax    = ParamDoc{Name: "max_stored", Default: "0 (unbounded)", Doc: "cap M on stored examples (0: grow by one per update round, as the paper); at the cap an update round replaces the oldest stored non-landmark example (M ≥ buffer, M > sm)"}
	docSkLand   = ParamDoc{Name: "landmarks", Default: "fixed", Doc: "fixed (sampled once at INIT) or replace (a new stored example replaces a random landmark with probability s_m/n)"}
	docSkReorth = ParamDoc{Name: "reorth_every", Default: "100", Doc: "re-orthonormalize the TISVD factors every this many updates (≤ 0: never)", When: "decomp=tisvd"}
	docSkOver   = ParamDoc{Name: "rsvd_oversample", Default: "10", Doc: "randomized SVD oversampling", When: "decomp=rsvd"}
	docSkPower  = ParamDoc{Name: "rsvd_power", Default: "1", Doc: "randomized SVD power iterations", When: "decomp=rsvd"}
	docSkPinv   = ParamDoc{Name: "pinv_tol", Default: "-1 (MATLAB's max(s_p,s_m)·ε·σ_max)", Doc: "singular values of Φ_pm ≤ pinv_tol are treated as 0 in Φ_pm^†; negative: the default"}
	docSkS1Lam  = ParamDoc{Name: "stage1_lambda", Default: "0", Doc: "NORMA shrinkage λ₁ in Stage 1: a ← (1 − ηλ₁)a every round (0: the paper's plain kernel OGD)"}
	docSkWarm   = ParamDoc{Name: "warm", Default: "none", Doc: "Stage-2 start: none (w = 0, the paper) or lsq (least-squares fit of w to the Stage-1 model's predictions on the buffer)"}
)

// readSketch reads the parameters shared by FORKS and SkeGD. It must be
// called after the loss is known (the Stage-1 step depends on it). wide
// selects FORKS' preset=wide defaults s_m = round(0.5 s_p) and k = s_m
// instead of the paper's s_m = 0.2 s_p and k = 0.1B (explicit values win).
// hingeEta is the default step of the hinge loss (readEtaHinge), defWarm
// the default of "warm".
func readSketch(p *Params, loss Loss, defDecomp decompKind, wide bool, hingeEta float64, defWarm string) sketchOpts {
	var o sketchOpts
	o.budget = p.Int("budget", 100, InRange(1, 1<<16))
	o.buffer = p.Int("buffer", 2*o.budget, InRange(1, 1<<20))
	o.sp = p.Int("sp", o.budget, InRange(1, 1<<14))
	smFrac := 0.2
	if wide {
		smFrac = 0.5
	}
	o.sm = p.Int("sm", max(1, int(math.Round(smFrac*float64(o.sp)))), InRange(1, 1<<14))
	defK := max(1, int(math.Round(0.1*float64(o.budget))))
	if wide {
		defK = o.sm
	}
	o.k = p.Int("k", defK, InRange(1, 1<<14))
	o.blocks = p.Int("blocks", 1, InRange(1, 1<<10))
	horizon := p.Int("horizon", 10000, Positive)
	theta := p.Float("theta", 0.3, Positive)
	o.rho = p.Int("rho", ForksRho(theta, horizon), InRange(1, 1<<53))
	o.maxStored = p.Int("max_stored", 0, InRange(0, 1<<30))
	o.replace = p.Enum("landmarks", "fixed", "fixed", "replace") == "replace"
	switch p.Enum("decomp", defDecomp.String(), "tisvd", "svd", "rsvd") {
	case "tisvd":
		o.decomp = decompTISVD
	case "svd":
		o.decomp = decompSVD
	default:
		o.decomp = decompRSVD
	}
	o.reorth = p.Int("reorth_every", linalg.DefaultReorthEvery, InRange(-1, 1<<30))
	o.oversmp = p.Int("rsvd_oversample", 10, InRange(0, 1<<14))
	o.power = p.Int("rsvd_power", 1, InRange(0, 100))
	o.pinvTol = p.Float("pinv_tol", -1)
	o.shrink = p.Float("stage1_lambda", 0, NonNegative)
	o.warm = p.Enum("warm", defWarm, "none", "lsq") == "lsq"
	o.eta = readEtaHinge(p, loss, hingeEta)
	return o
}

// check validates the relations between the sketch sizes.
func (o *sketchOpts) check(name string) error {
	switch {
	case o.sp > o.buffer:
		return fmt.Errorf("learner %s: parameter sp: %d must be <= buffer (%d)", name, o.sp, o.buffer)
	case o.sm > o.sp:
		return fmt.Errorf("learner %s: parameter sm: %d must be <= sp (%d)", name, o.sm, o.sp)
	case o.k > o.sp:
		return fmt.Errorf("learner %s: parameter k: %d must be <= sp (%d)", name, o.k, o.sp)
	case o.sp%o.blocks != 0:
		return fmt.Errorf("learner %s: parameter blocks: %d must divide sp (%d)", name, o.blocks, o.sp)
	case o.maxStored > 0 && (o.maxStored < o.buffer || o.maxStored <= o.sm):
		return fmt.Errorf("learner %s: parameter max_stored: %d must be 0 or >= buffer (%d) and > sm (%d)", name, o.maxStored, o.buffer, o.sm)
	case o.eta*o.shrink >= 1:
		return fmt.Errorf("learner %s: parameter stage1_lambda: η·λ₁ = %g must be < 1", name, o.eta*o.shrink)
	}
	return nil
}

// sketchMap is the shared two-stage state. Stage 1 until ready; then the
// sketches of the stored examples X_S and the feature map.
type sketchMap struct {
	sketchOpts
	kern kernel.Kernel
	dim  int
	rnd  *rng.Source

	stored *kernel.Matrix // Stage 1: the buffer; Stage 2: X_S (n rows)
	coef   []float64      // Stage-1 coefficients (empty in Stage 2)
	ready  bool           // Stage 2

	sjlt      *linalg.SJLT   // S_p, one row per stored example
	landmarks []int          // s_m slot indices into stored
	lmx       *kernel.Matrix // X_L = stored rows at landmarks
	phiPM     []float64      // s_p×s_m
	phiPP     []float64      // s_p×s_p (decomp svd/rsvd only)
	tisvd     *linalg.TISVD  // decomp tisvd
	trunc     linalg.TruncSVD
	symWork   linalg.SymTopKWork // decomp=svd: scratch of the exact top-k
	z         []float64          // s_m×k
	rounds    int                // Stage-2 rounds since INIT
	nUpd      int                // update rounds done
	evict     int                // next slot considered for replacement (max_stored)

	// scratch
	krow, psi, psi2 []float64 // stored-length kernel rows
	kl, phi         []float64 // s_m, k
	av, av2         []float64 // s_p
	d1, d2          []float64 // s_p×2
	work            linalg.SVDWork
	w0              []float64 // warm start computed by INIT (consumed at once)

	// deferInit (FORKS shared=true): Stage 1 never runs INIT by itself and
	// the buffer may hold more than B̃ examples; INIT and update rounds
	// happen only when the owner calls initSketch/update (at sync points).
	deferInit bool
}

func newSketchMap(o sketchOpts, kern kernel.Kernel, dim int, seed uint64) *sketchMap {
	s := &sketchMap{sketchOpts: o, kern: kern, dim: dim, rnd: rng.New(seed)}
	c := s.capRows()
	s.stored = kernel.NewMatrix(dim, c)
	s.coef = make([]float64, 0, o.buffer)
	s.krow = make([]float64, o.buffer)
	s.kl = make([]float64, o.sm)
	s.phi = make([]float64, o.k)
	return s
}

// capRows is the initial row capacity of the stored set.
func (s *sketchMap) capRows() int {
	if s.maxStored > 0 {
		return s.maxStored
	}
	return s.buffer + max(64, s.buffer/2)
}

// n returns the number of stored examples.
func (s *sketchMap) n() int { return s.stored.Len() }

// score1 is the Stage-1 kernel OGD score Σ a_i κ(x_i, x).
func (s *sketchMap) score1(x []float64) float64 {
	if len(s.coef) == 0 {
		return 0
	}
	return dot(s.coef, s.kern.Row(rows(&s.krow, s.n()), s.stored, x))
}

// learn1 applies the Stage-1 update for loss derivative g (the example is
// stored when g ≠ 0) and runs INIT when the buffer becomes full; it reports
// whether it did.
func (s *sketchMap) learn1(x []float64, g float64) bool {
	if s.shrink > 0 {
		c := 1 - s.eta*s.shrink
		for i := range s.coef {
			s.coef[i] *= c
		}
	}
	if g == 0 {
		return false
	}
	s.stored.Append(x)
	s.coef = append(s.coef, -s.eta*g)
	if s.n() < s.buffer || s.deferInit {
		return false
	}
	s.initSketch()
	return true
}

// initSketch is INIT (Algorithm 1, §3.2): hash pairs for the buffer, landmarks,
// Φ_pm, Φ_pp, the first decomposition (exact top-k, or RSVD), and Z.
// Random draws, in this order: the SJLT rows of the buffer examples, the
// landmarks, then (decomp=rsvd) the RSVD test matrix.
func (s *sketchMap) initSketch() {
	n := s.n()
	s.sjlt = linalg.NewSJLT(s.sp, s.blocks, s.capRows())
	for range n {
		s.sjlt.AddRow(s.rnd)
	}
	K := s.kern.Gram(make([]float64, n*n), s.stored)
	s.landmarks = linalg.SampleColumns(s.rnd, n, s.sm)
	s.lmx = kernel.NewMatrix(s.dim, s.sm)
	for _, i := range s.landmarks {
		s.lmx.Append(s.stored.Row(i))
	}
	s.phiPM = make([]float64, s.sp*s.sm)
	s.sjlt.SketchPM(s.phiPM, K, n, s.landmarks)
	pp := make([]float64, s.sp*s.sp)
	s.sjlt.SketchPP(pp, K, n)
	s.z = make([]float64, s.sm*s.k)
	s.allocScratch()
	var err error
	switch s.decomp {
	case decompTISVD:
		s.tisvd = linalg.NewTISVD(s.sp, s.sp, s.k, linalg.TISVDOptions{ReorthEvery: s.reorthOpt(), MaxCols: 2})
		var f linalg.TruncSVD // a temporary: the tridiagonalization scratch is O(s_p²)
		if err = linalg.TruncatedSymPSD(&f, pp, s.sp, s.k, nil); err != nil {
			s.tisvd.SetFactors(zeroFactors(s.sp, s.k))
		} else {
			s.tisvd.SetFactors(&f)
		}
	default:
		s.phiPP = pp
		if err = s.decompose(); err != nil {
			s.trunc.CopyFrom(zeroFactors(s.sp, s.k))
		}
	}
	s.refreshZ()
	if s.warm {
		s.w0 = s.warmStart(K)
	}
	s.coef = s.coef[:0]
	s.ready = true
	s.rounds, s.nUpd, s.evict = 0, 0, 0
}

func (s *sketchMap) reorthOpt() int {
	if s.reorth <= 0 {
		return -1 // 0 would select the linalg default
	}
	return s.reorth
}

// zeroFactors is a rank-k factorization of the zero s_p×s_p matrix (with
// orthonormal U = V = the first k unit vectors).
func zeroFactors(sp, k int) *linalg.TruncSVD {
	f := &linalg.TruncSVD{Rows: sp, Cols: sp, Rank: k, U: make([]float64, sp*k), S: make([]float64, k), V: make([]float64, sp*k)}
	for j := range k {
		f.U[j*k+j] = 1
		f.V[j*k+j] = 1
	}
	return f
}

// allocScratch sizes the Stage-2 scratch.
func (s *sketchMap) allocScratch() {
	c := max(s.capRows(), s.n())
	s.psi = make([]float64, c)
	s.psi2 = make([]float64, c)
	s.av = make([]float64, s.sp)
	s.av2 = make([]float64, s.sp)
	s.d1 = make([]float64, 2*s.sp)
	s.d2 = make([]float64, 2*s.sp)
}

// rows returns the first n entries of a stored-length scratch vector,
// growing it (amortized) when the stored set has outgrown it.
func rows(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, 2*n)
	}
	return (*buf)[:n]
}

// decompose recomputes the rank-k factors of the stored Φ_pp (decomp svd or
// rsvd).
func (s *sketchMap) decompose() error {
	if s.decomp == decompRSVD {
		return linalg.RandomizedSVD(&s.trunc, s.phiPP, s.sp, s.sp, s.k, s.oversmp, s.power, s.rnd)
	}
	return linalg.TruncatedSymPSD(&s.trunc, s.phiPP, s.sp, s.k, &s.symWork)
}

// factors returns the current V (s_p×k) and Σ (k) of Φ_pp.
func (s *sketchMap) factors() (v, sig []float64) {
	if s.decomp == decompTISVD {
		f := s.tisvd.Factors()
		return f.V, f.S
	}
	return s.trunc.V, s.trunc.S
}

// refreshZ recomputes Z = Φ_pm^† V Σ^{1/2}; on numerical failure Z is kept.
func (s *sketchMap) refreshZ() {
	v, sig := s.factors()
	_, _ = linalg.SketchedNystromMap(s.z, s.phiPM, s.sp, s.sm, v, sig, s.k, s.pinvTol, &s.work)
}

// features computes φ(x) = Zᵀ κ_L(x) into the scratch and returns it.
func (s *sketchMap) features(x []float64) []float64 {
	kl := s.kern.Row(s.kl, s.lmx, x)
	linalg.MatTVec(s.phi, s.z, s.sm, s.k, kl)
	return s.phi
}

// nextIsUpdate reports whether the next Stage-2 round is an update round.
func (s *sketchMap) nextIsUpdate() bool { return (s.rounds+1)%s.rho == 0 }

// update is the update round (Algorithm 1, App. B.1): fold x into the sketches (append, or
// replace the oldest non-landmark slot at the max_stored cap), update the
// decomposition and recompute Z. Random draws: the new SJLT row (append
// only), then the landmark-replacement draws (landmarks=replace), then the
// RSVD test matrix (decomp=rsvd).
func (s *sketchMap) update(x []float64) {
	if s.maxStored > 0 && s.n() >= s.maxStored {
		s.replaceSlot(x)
	} else {
		s.insert(x)
	}
	var err error
	switch s.decomp {
	case decompTISVD:
		// A failed update leaves the factors unchanged, except for a failed
		// periodic re-orthonormalization (corrupt state only), after which
		// the update stays applied; either way Z follows the factors.
		err = s.tisvd.Update(s.d1, s.d2, 2)
	default:
		sp := s.sp
		for i := range sp {
			row := s.phiPP[i*sp : i*sp+sp]
			a0, a1 := s.d1[2*i], s.d1[2*i+1]
			for j := range sp {
				row[j] += a0*s.d2[2*j] + a1*s.d2[2*j+1]
			}
		}
		err = s.decompose()
	}
	if err == nil || s.decomp == decompTISVD {
		// svd/rsvd: a failed decomposition leaves its factors unspecified,
		// so Z is kept; TISVD's factors are always a valid state.
		s.refreshZ()
	}
	s.nUpd++
}

// insert appends x as a new stored example (SJLT.Insert: Φ_pm updated, the
// TISVD inputs Δ₁, Δ₂ left in d1, d2).
func (s *sketchMap) insert(x []float64) {
	n := s.n()
	psi := s.kern.Row(rows(&s.psi, n), s.stored, x)
	kxx := s.kern.Diag(x)
	row := s.sjlt.Insert(s.rnd, psi, kxx, s.landmarks, s.phiPM, s.d1, s.d2)
	s.stored.Append(x)
	if s.replace && s.rnd.Float64()*float64(n+1) < float64(s.sm) {
		j := s.rnd.IntN(s.sm)
		for i := range s.sp {
			s.phiPM[i*s.sm+j] = s.d2[2*i] // a + κs = S_pᵀ K e_new
		}
		s.landmarks[j] = row
		s.lmx.Set(j, x)
	}
}

// isLandmark reports whether stored slot i is a landmark.
func (s *sketchMap) isLandmark(i int) bool {
	for _, l := range s.landmarks {
		if l == i {
			return true
		}
	}
	return false
}

// replaceSlot replaces the oldest stored non-landmark example by x (see the
// max_stored decision above), updating Φ_pm and leaving Δ₁, Δ₂ in d1, d2.
func (s *sketchMap) replaceSlot(x []float64) {
	n, sp, sm := s.n(), s.sp, s.sm
	i := s.evict % n
	for s.isLandmark(i) {
		i = (i + 1) % n
	}
	old := s.stored.Row(i)
	psiO := s.kern.Row(rows(&s.psi2, n), s.stored, old)
	psiN := s.kern.Row(rows(&s.psi, n), s.stored, x)
	psiO[i], psiN[i] = 0, 0
	dk := s.kern.Diag(x) - s.kern.Diag(old)
	s.sjlt.MulTVec(s.av, psiN)  // a_new over the other slots
	s.sjlt.MulTVec(s.av2, psiO) // a_old
	clear(s.d1)
	for b := range s.blocks {
		c, v := s.sjlt.Entry(i, b)
		s.d1[2*c] = v
		prow := s.phiPM[c*sm : c*sm+sm]
		for j, l := range s.landmarks {
			prow[j] += v * (psiN[l] - psiO[l])
		}
	}
	for j := range sp {
		sj := s.d1[2*j]
		da := s.av[j] - s.av2[j]
		s.d1[2*j+1] = da
		s.d2[2*j] = da + dk*sj
		s.d2[2*j+1] = sj
	}
	s.stored.Set(i, x)
	if s.replace && s.rnd.Float64()*float64(n) < float64(sm) {
		j := s.rnd.IntN(sm)
		kxx := s.kern.Diag(x)
		for r := range sp {
			s.phiPM[r*sm+j] = s.av[r] + kxx*s.d1[2*r] // S_pᵀ K e_i after the replacement
		}
		s.landmarks[j] = i
		s.lmx.Set(j, x)
	}
	s.evict = (i + 1) % n
}

// warmStart returns w = Φ_B^† f₁, the least-squares fit of the feature
// weights to the Stage-1 model's predictions f₁ = K a on the buffer.
func (s *sketchMap) warmStart(K []float64) []float64 {
	n, k := s.n(), s.k
	f1 := make([]float64, n)
	linalg.MatVec(f1, K, n, n, s.coef)
	w := make([]float64, k)
	pinv := s.storedPinv()
	if pinv == nil {
		return w
	}
	linalg.MatVec(w, pinv, k, n, f1)
	return w
}

// storedPinv returns Φ_S^† (k×n), the pseudo-inverse of the features of
// the n stored examples (rows φ(x_i)ᵀ), or nil if it fails: w = Φ_S^† f is
// the least-squares fit of the feature weights to values f on them.
func (s *sketchMap) storedPinv() []float64 {
	n, k := s.n(), s.k
	phiB := make([]float64, n*k)
	for i := range n {
		copy(phiB[i*k:i*k+k], s.features(s.stored.Row(i)))
	}
	pinv := make([]float64, k*n)
	if _, err := linalg.Pinv(pinv, phiB, n, k, -1, nil); err != nil {
		return nil
	}
	return pinv
}

// bytes is the approximate memory of the state.
func (s *sketchMap) bytes() int {
	b := s.stored.Bytes() + 8*(cap(s.coef)+cap(s.krow)+cap(s.psi)+cap(s.psi2)+len(s.kl)+len(s.phi))
	if !s.ready {
		return b
	}
	cols, signs := s.sjlt.Hashes()
	b += 4*cap(cols) + cap(signs) + 8*len(s.landmarks) + s.lmx.Bytes()
	b += 8 * (len(s.phiPM) + len(s.phiPP) + len(s.z) + len(s.av) + len(s.av2) + len(s.d1) + len(s.d2))
	if s.tisvd != nil {
		b += 8 * (4*s.sp*s.k + s.k)
	} else {
		b += 8 * (len(s.trunc.U) + len(s.trunc.V) + len(s.trunc.S))
	}
	return b
}

// encode appends the state: stage, stored rows, then Stage-1 coefficients
// or the Stage-2 sketches, factors, Z and counters; finally the generator.
func (s *sketchMap) encode(e *state.Encoder) {
	e.Bool(s.ready)
	e.F64s(s.stored.Data())
	if !s.ready {
		e.F64s(s.coef)
	} else {
		cols, signs := s.sjlt.Hashes()
		ci := make([]int, len(cols))
		for i, c := range cols {
			ci[i] = int(c)
		}
		si := make([]int, len(signs))
		for i, v := range signs {
			si[i] = int(v)
		}
		e.Ints(ci)
		e.Ints(si)
		e.Ints(s.landmarks)
		e.F64s(s.phiPM)
		if s.decomp == decompTISVD {
			f := s.tisvd.Factors()
			e.F64s(f.U)
			e.F64s(f.S)
			e.F64s(f.V)
			e.Int(s.tisvd.Updates())
		} else {
			e.F64s(s.phiPP)
		}
		e.F64s(s.z)
		e.Int(s.rounds)
		e.Int(s.nUpd)
		e.Int(s.evict)
	}
	encodeRNG(e, s.rnd)
}

// sketchState is a decoded and validated, not yet installed, state.
type sketchState struct {
	ready             bool
	rows, coef        []float64
	sjlt              *linalg.SJLT
	landmarks         []int
	phiPM, phiPP, z   []float64
	u, sig, v         []float64
	tisvdCount        int
	rounds, nUpd, evt int
	hi, lo            uint64
}

// decode reads what encode wrote; problems are reported through d.
func (s *sketchMap) decode(d *state.Decoder) sketchState {
	var st sketchState
	st.ready = d.Bool()
	st.rows = d.F64s(nil)
	if d.Err() == nil && len(st.rows)%s.dim != 0 {
		d.Fail("stored examples: %d values for dimension %d", len(st.rows), s.dim)
	}
	n := len(st.rows) / s.dim
	if !st.ready {
		st.coef = d.F64s(nil)
		if d.Err() == nil && (len(st.coef) != n || (n >= s.buffer && !s.deferInit)) {
			d.Fail("stage 1: %d stored examples, %d coefficients, buffer %d", n, len(st.coef), s.buffer)
		}
	} else {
		if d.Err() == nil && (n < s.buffer || (s.maxStored > 0 && n > s.maxStored)) {
			d.Fail("stage 2: %d stored examples (buffer %d, max_stored %d)", n, s.buffer, s.maxStored)
		}
		ci := d.Ints(nil)
		si := d.Ints(nil)
		if d.Err() == nil {
			if len(ci) != n*s.blocks || len(si) != len(ci) {
				d.Fail("sketch: %d hash pairs for %d stored examples and %d blocks", len(ci), n, s.blocks)
			} else {
				cols := make([]int32, len(ci))
				signs := make([]int8, len(si))
				for i := range ci {
					if ci[i] < 0 || ci[i] >= s.sp || (si[i] != 1 && si[i] != -1) {
						d.Fail("sketch: invalid hash pair (%d, %d)", ci[i], si[i])
						break
					}
					cols[i], signs[i] = int32(ci[i]), int8(si[i])
				}
				st.sjlt = linalg.NewSJLT(s.sp, s.blocks, max(s.capRows(), n))
				if d.Err() == nil && st.sjlt.Restore(cols, signs) != nil {
					d.Fail("sketch: hash pairs outside their blocks")
				}
			}
		}
		st.landmarks = d.Ints(nil)
		if d.Err() == nil {
			seen := map[int]bool{}
			if len(st.landmarks) != s.sm {
				d.Fail("%d landmarks, want %d", len(st.landmarks), s.sm)
			}
			for _, l := range st.landmarks {
				if l < 0 || l >= n || seen[l] {
					d.Fail("landmark index %d invalid for %d stored examples", l, n)
					break
				}
				seen[l] = true
			}
		}
		st.phiPM = d.F64sN(nil, s.sp*s.sm)
		if s.decomp == decompTISVD {
			st.u = d.F64sN(nil, s.sp*s.k)
			st.sig = d.F64sN(nil, s.k)
			st.v = d.F64sN(nil, s.sp*s.k)
			st.tisvdCount = d.Int()
			if d.Err() == nil && st.tisvdCount < 0 {
				d.Fail("TISVD update count %d", st.tisvdCount)
			}
		} else {
			st.phiPP = d.F64sN(nil, s.sp*s.sp)
		}
		st.z = d.F64sN(nil, s.sm*s.k)
		st.rounds, st.nUpd, st.evt = d.Int(), d.Int(), d.Int()
		if d.Err() == nil && (st.rounds < 0 || st.nUpd < 0 || st.evt < 0 || st.evt >= n) {
			d.Fail("counters (%d, %d, %d) invalid", st.rounds, st.nUpd, st.evt)
		}
	}
	st.hi, st.lo = d.U64(), d.U64()
	return st
}

// install replaces the contents with a decoded state (which must have come
// through decode without error).
func (s *sketchMap) install(st sketchState) {
	if err := s.stored.SetData(st.rows); err != nil {
		panic(fmt.Sprintf("learner: sketchMap.install after validation: %v", err))
	}
	s.rnd.Restore(st.hi, st.lo)
	s.ready = st.ready
	s.w0 = nil
	if !st.ready {
		s.coef = append(s.coef[:0], st.coef...)
		s.sjlt, s.landmarks, s.lmx, s.phiPM, s.phiPP, s.z, s.tisvd = nil, nil, nil, nil, nil, nil, nil
		s.rounds, s.nUpd, s.evict = 0, 0, 0
		return
	}
	s.coef = s.coef[:0]
	s.sjlt = st.sjlt
	s.landmarks = st.landmarks
	s.lmx = kernel.NewMatrix(s.dim, s.sm)
	for _, i := range s.landmarks {
		s.lmx.Append(s.stored.Row(i))
	}
	s.phiPM = st.phiPM
	s.z = st.z
	if s.decomp == decompTISVD {
		s.tisvd = linalg.NewTISVD(s.sp, s.sp, s.k, linalg.TISVDOptions{ReorthEvery: s.reorthOpt(), MaxCols: 2})
		s.tisvd.SetFactors(&linalg.TruncSVD{Rows: s.sp, Cols: s.sp, Rank: s.k, U: st.u, S: st.sig, V: st.v})
		s.tisvd.SetUpdates(st.tisvdCount)
		s.phiPP = nil
	} else {
		s.phiPP = st.phiPP
		s.trunc.Reset(s.sp, s.sp, s.k)
	}
	s.rounds, s.nUpd, s.evict = st.rounds, st.nUpd, st.evt
	s.allocScratch()
}

// installCopy is install(st) for a Stage-2 state that stays shared,
// read-only, with other maps of the same spec (the basis cache of shared
// FORKS copies, forks_basiscache.go, installs one state in every copy of a
// process at each INIT and update round): every part is copied into this
// map's own buffers, reused when they are large enough, so that nothing of
// st is aliased and an install allocates nothing in the steady state. The
// state is the one install(st) would leave; only the scratch's capacity may
// differ. st must have come through decode without error.
func (s *sketchMap) installCopy(st *sketchState) {
	if !st.ready {
		panic("learner: sketchMap.installCopy of a Stage-1 state")
	}
	if err := s.stored.SetData(st.rows); err != nil {
		panic(fmt.Sprintf("learner: sketchMap.installCopy after validation: %v", err))
	}
	n := s.n()
	s.rnd.Restore(st.hi, st.lo)
	s.ready, s.w0 = true, nil
	s.coef = s.coef[:0]
	if s.sjlt == nil {
		s.sjlt = linalg.NewSJLT(s.sp, s.blocks, max(s.capRows(), n))
	}
	if err := s.sjlt.Restore(st.sjlt.Hashes()); err != nil {
		panic(fmt.Sprintf("learner: sketchMap.installCopy after validation: %v", err))
	}
	s.landmarks = append(s.landmarks[:0], st.landmarks...)
	if s.lmx == nil {
		s.lmx = kernel.NewMatrix(s.dim, s.sm)
	}
	s.lmx.Reset()
	for _, i := range s.landmarks {
		s.lmx.Append(s.stored.Row(i))
	}
	s.phiPM = append(s.phiPM[:0], st.phiPM...)
	s.z = append(s.z[:0], st.z...)
	if s.decomp == decompTISVD {
		if s.tisvd == nil {
			s.tisvd = linalg.NewTISVD(s.sp, s.sp, s.k, linalg.TISVDOptions{ReorthEvery: s.reorthOpt(), MaxCols: 2})
		}
		s.tisvd.SetFactors(&linalg.TruncSVD{Rows: s.sp, Cols: s.sp, Rank: s.k, U: st.u, S: st.sig, V: st.v}) // copies
		s.tisvd.SetUpdates(st.tisvdCount)
		s.phiPP = nil
	} else {
		s.phiPP = append(s.phiPP[:0], st.phiPP...)
		s.trunc.Reset(s.sp, s.sp, s.k)
	}
	s.rounds, s.nUpd, s.evict = st.rounds, st.nUpd, st.evt
	if c := max(s.capRows(), n); cap(s.psi) < c || cap(s.psi2) < c || len(s.av) != s.sp {
		s.allocScratch()
	}
}
