package learner

// PKAWV with Nyström projections on a KORS dictionary (pkawv
// basis=nystrom): the paper's §3.2 and Algorithm 2, with its typos
// corrected as docs/algorithms/kernel-awv.md explains (see pkawv.go for the reference and the
// Taylor basis).
//
// Subspace H̃_t = span{κ(x̃, ·) : x̃ ∈ I_t} with the dictionary I_t grown
// online by KORS (kors.go) and never shrunk. For f = Σ_j α_j κ(x̃_j, ·) the
// AWV objective restricted to H̃_t is solved by
//
//	α_t = G_t⁻¹ K_{t,I}ᵀ(Y_{t−1}; 0),  G_t = K_{t,I}ᵀK_{t,I} + λK_II,
//
// the current row included, with the label 0 for it (§3.2). By the
// identity of awv.go, with a = κ(I_t, x_t), G' = G_t − aaᵀ (the Gram matrix
// without the current row) and c_Y = K_{t−1,I}ᵀY_{t−1}:
//
//	ŷ_ridge = aᵀG'⁻¹c_Y,  h = aᵀG'⁻¹a,  ŷ_AWV = ŷ_ridge / (1 + h).
//
// State: the KORS dictionary (points, weights 1/p, its own factor), the
// lower Cholesky factor L of G' (m×m), c_Y (m), the KORS generator, and —
// until the dictionary freezes — the history: past inputs X, labels Y and
// the cached K_{t−1,I} (one column per dictionary point, the listing's KnM).
//
// Round t (Predict and Learn compute the same, Predict without committing):
//
//  1. a = κ(I, x_t) (one Kernel.Row against the dictionary), κ = κ(x_t, x_t).
//  2. KORS (unless frozen): p from the leverage score of x_t (kors.Prob,
//     reusing a), one uniform from the generator; x_t is taken iff u < p.
//  3. If taken, the border of G' for the new column: col = κ(X, x_t) over
//     the history (one Kernel.Row), c = K_{t−1,I}ᵀcol + λa, dd = ‖col‖² +
//     λκ, ρ = L⁻¹c, ρ_mm² = dd − ‖ρ‖², and c_Y's new entry colᵀY; a becomes
//     (a; κ).
//  4. l = L'⁻¹a, g = L'⁻¹c_Y (one pass over L plus the border row),
//     ŷ_ridge = lᵀg, h = ‖l‖², score (awv.go).
//  5. Learn commits: KORS insertion and L ← [[L, 0], [ρᵀ, ρ_mm]], c_Y
//     extended, the cache gains col; then the row: L ← chol(LLᵀ + aaᵀ)
//     (rank-one update), c_Y += y·a, X, Y and the cache gain the event.
//
// Choices and deviations (docs/algorithms/kernel-awv.md):
//   - Algorithm 2's typos and the listing's Y/Yp bug; we read them as:
//     the row of step 6 is κ(I_{t−1}, x_t), the label
//     vector is (Y_{t−1}; 0), the initialisation is empty.
//   - Step order: the paper updates G with the current row first and then
//     borders it with the column over all t rows; we border G' (past rows)
//     first and add the full row (a; κ) after scoring. Both give the same
//     G_t (the row's outer product supplies the missing aκ and κ² terms),
//     and ours lets the score come from G' read-only (§1.6 (a)).
//   - The border is the direct extension (forward solve + new pivot,
//     gonum's ExtendVecSym), not the paper's
//     pad/cholupdate/choldowndate trick, whose downdate is the fragile step.
//   - Near-duplicate guard (the authors' code crashes on
//     cod-rna without one): a drawn point is refused — neither the dictionary
//     nor KORS changes; the draw is consumed — when ρ_mm² ≤ pivot_tol·dd
//     (default 1e-10, relative, squared pivot: the reference keeps points at
//     4.9e-10) or any border quantity is not finite. Our test is on G'
//     (past rows), the paper's would be on G_t; both are ≥ 0 and agree
//     except at the margin. Info().Used then stays put; the count is in the
//     state.
//   - c_Y is maintained incrementally instead of recomputing
//     K_{t,I}ᵀ(Y; 0) every round (the listing's O(t·m)).
//   - KORS order and randomness: KORS runs when x_t is first
//     scored, before the prediction, as in the paper, so x_t can score
//     itself. Predict must not change the state, so it peeks the next
//     uniform (a copy of the generator) and computes the tentative border
//     in scratch; Learn draws the same uniform and commits. A prediction
//     whose label never arrives leaves no trace (the paper would have given
//     it a 0-label row). Rows enter G only with their label.
//   - KORS weights 1/p, used linearly (W K W), as the listing
//     (weight=inv_sqrt_p for the literature's 1/√p); μ (mu) separate
//     from λ, both 1 by default (the listing passes λ as μ); β = 1;
//     KORS probability in the listing's closed form (prob=code, kors.go).
//   - variant=ridge predicts ŷ_ridge with the same order: the listing's
//     Projected-KRR runs KORS after the label, so its new points enter one
//     round later than here.
//   - Memory bound (not in the paper): a new column needs κ(x_s, x_t)
//     for every past s, so the exact algorithm keeps the whole history
//     (X, Y and the t×m cache: O(t(d+m)) memory, which the paper's
//     "O(d_eff²) space" omits). The dictionary freezes at max_points
//     points or after max_history events, whichever comes first; the
//     history is then released and the learner is fixed-subspace PKAWV
//     (Thm. 3 still bounds its regret) with O(m² + md) memory and
//     O(md + m²) time per event. max_history = 0 and max_points = 0 make
//     the growth unbounded (exact Algorithm 2, for offline replays).
//   - Empty dictionary: the score is 0 (KORS takes the first point with
//     p = (1+ε)κ/(κ+μ) = 0.75, so it can stay empty for a few rounds).
//   - Any kernel of package kernel (the paper: Gaussian).
//
// Cost per event: O(md + m²) (three m×m triangular passes and a rank-one
// update); a dictionary addition adds O(t(d + m)). Allocation: none once
// frozen; before, the history grows by amortized doubling (an allocation
// now and then), and additions allocate the new cache column.

import (
	"math"

	"okstream/learner/kernel"
	"okstream/learner/linalg"
	"okstream/learner/rng"
)

// pkawvNystrom is the Nyström part of a PKAWV learner.
type pkawvNystrom struct {
	kern     kernel.Kernel
	dict     *kors
	rnd      *rng.Source
	maxHist  int     // 0: unbounded
	pivotTol float64 // relative squared-pivot guard
	frozen   bool    // no more additions; history released
	rejected uint64  // drawn points refused by the guard

	hist *kernel.Matrix // past inputs (until frozen)
	ys   []float64      // past labels
	knm  [][]float64    // knm[j][s] = κ(x_s, x̃_j) for s < len(ys)

	peek rng.Source // scratch: Predict's copy of the generator
	krow []float64  // scratch: κ(I, x), then κ
	col  []float64  // scratch: κ(X, x)
	rho  []float64  // scratch: border row ρ
}

// nyRound is what nyPrepare found for one input.
type nyRound struct {
	m        int     // dictionary size before the round
	take     bool    // x joins the dictionary (drawn and accepted)
	refused  bool    // drawn but refused by the guard
	p        float64 // KORS probability (if drawn)
	kxx      float64 // κ(x, x)
	cy       float64 // colᵀY, the new entry of c_Y
	pivot    float64 // ρ_mm
	lg, ll   float64 // ŷ_ridge and h
	nhistory int     // history length when col was computed
}

func newPKAWVNystrom(p *Params, dim int, o awvOpts) (Learner, error) {
	kern := readKernel(p)
	cfg := korsConfig{
		gamma:  p.Float("mu", 1, Positive),
		beta:   p.Float("beta", 1, Positive),
		eps:    p.Float("eps", 0.5, NonNegative),
		max:    p.Int("max_points", 500, InRange(0, 1<<16)),
		prob:   korsProbCode,
		weight: korsInvP,
	}
	if p.Enum("prob", "code", "code", "paper") == "paper" {
		cfg.prob = korsProbPaper
	}
	if p.Enum("weight", "inv_p", "inv_p", "inv_sqrt_p") == "inv_sqrt_p" {
		cfg.weight = korsInvSqrtP
	}
	maxHist := p.Int("max_history", 20000, InRange(0, 1<<40))
	tol := p.Float("pivot_tol", 1e-10, InRange(0, 1))
	seed := p.Uint64("seed", 1)
	if err := p.Err(); err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := 16
	ny := &pkawvNystrom{
		kern:     kern,
		dict:     newKORS(cfg, dim),
		rnd:      rng.New(seed),
		maxHist:  maxHist,
		pivotTol: tol,
		hist:     kernel.NewMatrix(dim, 64),
		ys:       make([]float64, 0, 64),
		krow:     make([]float64, c+1),
		col:      make([]float64, 64),
		rho:      make([]float64, c),
	}
	return &PKAWV{
		base:    newBase(p, dim, o.task),
		awvOpts: o,
		chol:    linalg.NewCholesky(c),
		c:       make([]float64, 0, c),
		ny:      ny,
		lv:      make([]float64, c),
		gv:      make([]float64, c),
	}, nil
}

// nyPrepare runs steps 1–4 of the round for x, drawing the KORS uniform
// from src (the generator in Learn, a copy in Predict). It writes only
// scratch: a in krow, col, ρ in rho, L⁻¹a and L⁻¹c_Y in lv, gv.
func (l *PKAWV) nyPrepare(x []float64, src *rng.Source) nyRound {
	ny := l.ny
	m := ny.dict.Len()
	a := l.ny.kern.Row(ny.krow, ny.dict.Points(), x)
	rd := nyRound{m: m, kxx: ny.kern.Diag(x)}
	if !ny.frozen && !ny.dict.Full() {
		p := ny.dict.Prob(a, rd.kxx)
		if ny.dict.Draw(p, src) {
			rd.take, rd.p = true, p
		}
	}
	if rd.take {
		nh := len(ny.ys)
		rd.nhistory = nh
		col := ny.kern.Row(ny.col, ny.hist, x)
		rho := ny.rho[:m]
		for j := range m {
			rho[j] = dot(ny.knm[j], col) + l.lambda*a[j]
		}
		dd := dot(col, col) + l.lambda*rd.kxx
		rd.cy = dot(col, ny.ys)
		if m > 0 {
			l.chol.SolveL(rho, rho)
		}
		piv2 := dd - dot(rho, rho)
		ok := piv2 > ny.pivotTol*dd && !math.IsInf(dd, 0) && !math.IsNaN(rd.cy) && !math.IsInf(rd.cy, 0) && allFiniteVec(rho)
		if ok {
			rd.pivot = math.Sqrt(piv2)
		} else {
			rd.take, rd.refused = false, true
		}
	}
	if m > 0 {
		rd.lg, rd.ll = awvSolve2(l.chol, l.lv, l.gv, a, l.c)
	}
	if rd.take {
		rho := ny.rho[:m]
		lm := (rd.kxx - dot(rho, l.lv[:m])) / rd.pivot
		gm := (rd.cy - dot(rho, l.gv[:m])) / rd.pivot
		rd.lg += lm * gm
		rd.ll += lm * lm
	}
	return rd
}

func (l *PKAWV) nyPredict(x []float64) float64 {
	l.ny.peek = *l.ny.rnd
	rd := l.nyPrepare(x, &l.ny.peek)
	return l.score(rd.lg, rd.ll)
}

func (l *PKAWV) nyLearn(x []float64, y float64) float64 {
	ny := l.ny
	rd := l.nyPrepare(x, ny.rnd)
	f := l.score(rd.lg, rd.ll)
	if rd.refused {
		ny.rejected++
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return f // nothing learnt (the runtime rejects such labels)
	}
	m := rd.m
	if rd.take {
		if ny.dict.Insert(x, ny.krow[:m], rd.kxx, rd.p) != nil {
			rd.take = false
			ny.rejected++
		} else {
			// Cannot fail: the pivot is positive and everything finite.
			if err := l.chol.Append(ny.rho[:m], rd.pivot); err != nil {
				panic("learner pkawv: border extension after validation: " + err.Error())
			}
			l.c = append(l.c, rd.cy)
			ny.knm = append(ny.knm, append(make([]float64, 0, 2*rd.nhistory+16), ny.col[:rd.nhistory]...))
			ny.krow[m] = rd.kxx
			m++
		}
	}
	a := ny.krow[:m]
	if l.chol.RankOneUpdate(a) != nil {
		l.nyScratch()
		return f // non-finite row (never with finite input): row not learnt
	}
	axpy(y, a, l.c)
	if !ny.frozen {
		ny.hist.Append(x)
		ny.ys = append(ny.ys, y)
		for j, v := range a {
			ny.knm[j] = append(ny.knm[j], v)
		}
		if ny.dict.Full() || (ny.maxHist > 0 && len(ny.ys) >= ny.maxHist) {
			ny.freeze()
		}
	}
	l.nyScratch()
	return f
}

// freeze stops the dictionary's growth and releases the history.
func (ny *pkawvNystrom) freeze() {
	ny.frozen = true
	ny.hist, ny.ys, ny.knm, ny.col = nil, nil, nil, nil
}

// nyScratch sizes the scratch buffers for the next round: dictionary
// vectors for m+1 entries, col for the history (doubling).
func (l *PKAWV) nyScratch() {
	ny := l.ny
	m := ny.dict.Len()
	if len(ny.krow) < m+1 {
		n := 2 * (m + 1)
		ny.krow, ny.rho = make([]float64, n), make([]float64, n)
		l.lv, l.gv = make([]float64, n), make([]float64, n)
	}
	if !ny.frozen && len(ny.col) < len(ny.ys) {
		ny.col = make([]float64, 2*len(ny.ys))
	}
}

// nyMarshal encodes the dictionary, the generator, the factor of G', c_Y
// and (until frozen) the history and the cache.
func (l *PKAWV) nyMarshal() ([]byte, error) {
	ny := l.ny
	m, nh := ny.dict.Len(), len(ny.ys)
	e := l.encoder(8 * (m*(m+1) + m*(l.dim+2) + nh*(l.dim+1+m) + 16))
	ny.dict.encode(e)
	encodeRNG(e, ny.rnd)
	e.Bool(ny.frozen)
	e.U64(ny.rejected)
	encodeFactor(e, l.chol)
	e.F64s(l.c)
	if !ny.frozen {
		e.F64s(ny.hist.Data())
		e.F64s(ny.ys)
		for _, c := range ny.knm {
			e.F64s(c)
		}
	}
	return e.Bytes(), nil
}

// nyUnmarshal restores a state of an identically configured learner; on
// error the learner is unchanged.
func (l *PKAWV) nyUnmarshal(data []byte) error {
	ny := l.ny
	d, updates := l.decoder(data)
	dict := decodeKORS(d, ny.dict.cfg, l.dim)
	hi, lo := d.U64(), d.U64()
	frozen := d.Bool()
	rejected := d.U64()
	m := 0
	if dict != nil {
		m = dict.Len()
	}
	chol := decodeFactor(d, m, max(16, 2*m))
	c := d.F64sN(nil, m)
	var xs, ys []float64
	var knm [][]float64
	if !frozen {
		xs = d.F64s(nil)
		nh := len(xs) / l.dim
		if d.Err() == nil && (len(xs)%l.dim != 0 || (ny.maxHist > 0 && nh > ny.maxHist)) {
			d.Fail("pkawv: history of %d values for dimension %d (cap %d events)", len(xs), l.dim, ny.maxHist)
		}
		ys = d.F64sN(nil, nh)
		for range m {
			if d.Err() != nil {
				break
			}
			knm = append(knm, d.F64sN(nil, nh))
		}
	}
	if d.Err() == nil && (chol.Size() != m || !allFiniteVec(c)) {
		d.Fail("pkawv: inconsistent Nyström state (dictionary %d points, factor of %d rows)", m, chol.Size())
	}
	if err := d.Done(); err != nil {
		return err
	}
	var hist *kernel.Matrix
	if !frozen {
		hist = kernel.NewMatrix(l.dim, max(64, 2*len(ys)))
		if err := hist.SetData(xs); err != nil {
			return err
		}
		for j := range knm {
			knm[j] = append(make([]float64, 0, 2*len(ys)+16), knm[j]...)
		}
		ys = append(make([]float64, 0, max(64, 2*len(ys))), ys...)
	}
	ny.dict, ny.frozen, ny.rejected = dict, frozen, rejected
	ny.rnd.Restore(hi, lo)
	ny.hist, ny.ys, ny.knm = hist, ys, knm
	l.chol, l.c, l.updates = chol, append(make([]float64, 0, max(16, 2*m)), c...), updates
	ny.krow, ny.rho, l.lv, l.gv = nil, nil, nil, nil
	ny.col = nil
	if !frozen {
		ny.col = make([]float64, max(64, 2*len(ys)))
	}
	l.nyScratch()
	return nil
}

// nyInfo reports max_points (0: unbounded) and the dictionary size.
func (l *PKAWV) nyInfo() Info {
	ny := l.ny
	c := l.chol.Capacity()
	bytes := ny.dict.Bytes() + 8*(c*c+3*c+cap(l.c)+len(l.lv)+len(l.gv)+len(ny.krow)+len(ny.rho)+len(ny.col)+cap(ny.ys))
	if ny.hist != nil {
		bytes += ny.hist.Bytes()
	}
	for _, k := range ny.knm {
		bytes += 8 * cap(k)
	}
	return l.info(ny.dict.cfg.max, ny.dict.Len(), bytes)
}
