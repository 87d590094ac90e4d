package linalg

// TISVD — truncated incremental SVD.
//
// Reference: D. Wen et al., "Fast Second-Order Online Kernel Learning
// Through Incremental Matrix Sketching and Decomposition" (arXiv
// 2410.11188v2), §3.3 Eqs. 6–9 and App. B.2 Algorithm 2; notes:
// docs/algorithms/forks-and-baselines.md.
//
// Deviations from the paper and choices, with reasons:
//   - Orthogonal bases P, Q of the projected updates (Alg. 2 line 3) are
//     built by modified Gram–Schmidt against the current singular vectors
//     and the already accepted update directions, run twice (a third pass
//     when the second removed more than half of the remaining norm: the
//     Kahan–Parlett "twice is enough" test), and an update column whose
//     remaining norm is ≤ DropTol × its original norm is dropped as
//     dependent. The paper's full QR would give columns outside the
//     complement when the update is rank deficient, which the paper's own
//     c = 3 form always is (duplicate Δ₁ columns, parallel Δ₂ columns).
//   - The core is ((k+r₁)×(k+r₂)) with r₁, r₂ ≤ c the numerical ranks, not
//     always (k+c)×(k+c).
//   - Cost is O((m+n)k² + k³) per update for c ≪ k (the rotation of step 6
//     is (m×(k+r))·((k+r)×k)), not Remark 1's O(s_p k + k³).
//   - Optional periodic re-orthonormalization (not in the paper): U = Q_U R_U,
//     V = Q_V R_V by MGS twice, then an SVD of the k×k R_U Σ R_Vᵀ; this is an
//     exact change of basis (not a truncation), so it removes the slow
//     loss of orthogonality without changing the represented matrix.
//   - The matrix may be rectangular (m×n); FORKS uses m = n = s_p.

import (
	"errors"
	"fmt"
	"math"
)

// DefaultDropTol is the default relative tolerance below which a projected
// update column is treated as dependent (TISVDOptions.DropTol).
const DefaultDropTol = 1e-12

// DefaultReorthEvery is the default re-orthonormalization period
// (TISVDOptions.ReorthEvery).
const DefaultReorthEvery = 100

// ErrLostOrthogonality is returned by TISVD.Reorthonormalize (and by an
// Update that triggers it) when a singular-vector matrix has numerically
// dependent columns, which only happens if the state was corrupted (for
// example, restored from inconsistent factors). The state is unchanged.
var ErrLostOrthogonality = errors.New("linalg: TISVD singular vectors are numerically dependent")

// TISVDOptions configures a TISVD. The zero value selects every default.
type TISVDOptions struct {
	// DropTol: a column of Δ₁ (Δ₂) whose component orthogonal to span(U)
	// (span(V)) and to the earlier accepted columns has norm ≤
	// DropTol·‖column‖ is treated as dependent and dropped. Dropping
	// perturbs the update by at most DropTol·Σ_l ‖Δ₁[:,l]‖·‖Δ₂[:,l]‖.
	// A value ≤ 0 selects DefaultDropTol (1e-12).
	DropTol float64
	// ReorthEvery: re-orthonormalize U and V after every ReorthEvery
	// updates (see Reorthonormalize). 0 selects DefaultReorthEvery (100);
	// a negative value disables it.
	ReorthEvery int
	// MaxCols: number of update columns c the scratch is sized for up
	// front. Larger updates are accepted; the scratch then grows once.
	// 0 selects 3 (the paper's c = 3 form).
	MaxCols int
}

// TISVD maintains a rank-k SVD M ≈ U diag(Σ) Vᵀ of an m×n matrix (U m×k,
// V n×k with orthonormal columns, Σ ≥ 0 descending) under low-rank updates
// M ← M + Δ₁Δ₂ᵀ, re-truncating to rank k after each update (§3.3).
//
// Guarantee (exactness): each Update returns, up to rounding, the best
// rank-k approximation of (current state + Δ₁Δ₂ᵀ), because that matrix
// equals [U P] H [V Q]ᵀ exactly with orthonormal [U P], [V Q]. In
// particular, if the true matrix has rank ≤ k at every step, TISVD tracks
// it exactly; otherwise the tail discarded at earlier truncations is never
// recovered (an inherent bias of truncation, not a rounding effect). The
// only approximation added is DropTol (see TISVDOptions).
//
// Cost per Update with c update columns: O((m+n)k(k+c) + (k+c)³) time —
// modified Gram–Schmidt O((m+n)kc), core SVD O((k+c)³), rotation
// O((m+n)(k+c)k) — and O((m+n)(k+c) + (k+c)²) memory, all allocated by
// NewTISVD: no Update with c ≤ MaxCols, and no Reorthonormalize, allocates
// (verified for k + c up to 103; for k + c > 128 gonum's blocked dgesvd may
// use its parallel Dgemm, which allocates a little). Not safe for
// concurrent use.
type TISVD struct {
	f           TruncSVD
	m, n, k     int
	dropTol     float64
	reorthEvery int
	count       int
	ready       bool // Init or SetFactors has been called

	cmax   int
	x      []float64 // max(m, n)
	p, q   []float64 // cmax×m, cmax×n: accepted complement directions (rows)
	g1, g2 []float64 // (k+cmax)×cmax coefficients
	h      []float64 // (k+cmax)×(k+cmax) core
	vk     []float64 // (k+cmax)×k: right core vectors, transposed
	u2, v2 []float64 // m×k, n×k: double buffers
	ru, rv []float64 // k×k: R factors of Reorthonormalize
	svd    SVDWork   // core SVDs
	svdR   SVDWork   // re-orthonormalization SVDs
}

// NewTISVD returns a TISVD for m×n matrices of rank k with all scratch
// allocated. Call Init or SetFactors before Update. Panics unless
// 1 ≤ k ≤ min(m, n).
func NewTISVD(m, n, k int, opt TISVDOptions) *TISVD {
	if k < 1 || k > min(m, n) {
		panic(fmt.Sprintf("linalg: NewTISVD: rank %d outside [1, min(%d, %d)]", k, m, n))
	}
	t := &TISVD{m: m, n: n, k: k, dropTol: opt.DropTol, reorthEvery: opt.ReorthEvery}
	if t.dropTol <= 0 {
		t.dropTol = DefaultDropTol
	}
	if t.reorthEvery == 0 {
		t.reorthEvery = DefaultReorthEvery
	}
	c := opt.MaxCols
	if c <= 0 {
		c = 3
	}
	t.f.Reset(m, n, k)
	t.svdR.reserve(k, k)
	t.x = make([]float64, max(m, n))
	t.u2 = make([]float64, m*k)
	t.v2 = make([]float64, n*k)
	t.ru = make([]float64, k*k)
	t.rv = make([]float64, k*k)
	t.growCols(c)
	return t
}

func (t *TISVD) growCols(c int) {
	if c <= t.cmax {
		return
	}
	t.cmax = c
	k := t.k
	t.p = make([]float64, c*t.m)
	t.q = make([]float64, c*t.n)
	t.g1 = make([]float64, (k+c)*c)
	t.g2 = make([]float64, (k+c)*c)
	t.h = make([]float64, (k+c)*(k+c))
	t.vk = make([]float64, (k+c)*k)
	t.svd.reserve(k+c, k+c)
	t.svd.reserve(k+min(c, 2), k+min(c, 2)) // the usual FORKS core; leaves the query cached
}

// Dims returns m, n and k.
func (t *TISVD) Dims() (m, n, k int) { return t.m, t.n, t.k }

// Factors returns the current state as a read-only view: U (m×k), S (k),
// V (n×k). The slices change (buffers are swapped) at the next Update,
// Init, SetFactors or Reorthonormalize; copy them (TruncSVD.CopyFrom) to
// keep them.
func (t *TISVD) Factors() *TruncSVD { return &t.f }

// Updates returns the number of successful Updates since Init or SetFactors
// (or the value set by SetUpdates); it drives the re-orthonormalization
// period, so a checkpoint must store it for an exact restore.
func (t *TISVD) Updates() int { return t.count }

// SetUpdates sets the update counter (restore from a checkpoint).
func (t *TISVD) SetUpdates(n int) { t.count = n }

// Init sets the state to the top-k SVD of the m×n row-major a, from one full
// SVD (App. B.2, initialization; O(mn·min(m,n)) time, and O(mn)
// temporary memory that is released afterwards), and resets the update
// counter. Returns ErrNotFinite or
// ErrNoConvergence with the state unchanged. Panics if len(a) < m·n.
func (t *TISVD) Init(a []float64) error {
	// A temporary: the O(mn) workspace of the full SVD must not stay in the
	// TISVD, whose memory is O((m+n)k + k²).
	var tmp TruncSVD
	if err := TruncatedSVD(&tmp, a, t.m, t.n, t.k); err != nil {
		return err
	}
	t.f.CopyFrom(&tmp)
	t.count = 0
	t.ready = true
	return nil
}

// SetFactors copies f into the state (for a state restored from a
// checkpoint, or one computed elsewhere, e.g. by RandomizedSVD) and resets
// the update counter. f's U and V must have orthonormal columns; this is not
// checked. Panics unless f is m×n of rank k.
func (t *TISVD) SetFactors(f *TruncSVD) {
	if f.Rows != t.m || f.Cols != t.n || f.Rank != t.k || len(f.U) < t.m*t.k || len(f.V) < t.n*t.k || len(f.S) < t.k {
		panic(fmt.Sprintf("linalg: TISVD.SetFactors: factors %d×%d rank %d, want %d×%d rank %d", f.Rows, f.Cols, f.Rank, t.m, t.n, t.k))
	}
	t.f.CopyFrom(f)
	t.count = 0
	t.ready = true
}

// Update applies M ← M + Δ₁Δ₂ᵀ and re-truncates to rank k (§3.3,
// App. B.2 Alg. 2), where d1 is m×c and d2 is n×c, row-major. Columns may be
// zero, duplicated, parallel or inside span(U)/span(V): dependent columns
// are detected and dropped (TISVDOptions.DropTol). FORKS' update of Φ_pp
// uses the compact c = 2 form Δ₁ = [s, a], Δ₂ = [a + κs, s] (SJLT.Insert).
//
// Returns ErrNotFinite or ErrNoConvergence with the state unchanged. If the
// update succeeded but the periodic Reorthonormalize that follows it fails
// (only possible for a corrupted state), the update stays applied and the
// returned error wraps ErrLostOrthogonality or ErrNoConvergence. Panics on a
// shape mismatch, c < 1, or before Init/SetFactors.
func (t *TISVD) Update(d1, d2 []float64, c int) error {
	m, n, k := t.m, t.n, t.k
	if !t.ready {
		panic("linalg: TISVD.Update before Init or SetFactors")
	}
	if c < 1 || len(d1) < m*c || len(d2) < n*c {
		panic(fmt.Sprintf("linalg: TISVD.Update: c=%d, len(d1)=%d (want %d×c), len(d2)=%d (want %d×c)", c, len(d1), m, len(d2), n))
	}
	if !allFinite(d1[:m*c]) || !allFinite(d2[:n*c]) {
		return ErrNotFinite
	}
	t.growCols(c)

	// Steps 1–3: Δ₁ = U M₁ + P R₁ and Δ₂ = V N₁ + Q R₂ with orthonormal
	// [U P], [V Q]; g1 = [M₁; R₁] ((k+r₁)×c), g2 = [N₁; R₂] ((k+r₂)×c).
	r1 := t.complement(d1, m, c, t.f.U, t.p, t.g1)
	r2 := t.complement(d2, n, c, t.f.V, t.q, t.g2)

	// Step 4: H = [diag(Σ) 0; 0 0] + g1 g2ᵀ.
	p, q := k+r1, k+r2
	h := t.h[:p*q]
	for i := range p {
		hrow := h[i*q : i*q+q]
		gi := t.g1[i*c : i*c+c]
		for j := range q {
			hrow[j] = dot(gi, t.g2[j*c:j*c+c])
		}
		if i < k {
			hrow[i] += t.f.S[i]
		}
	}

	// Step 5: SVD of the core, keep the top k.
	uh, sh, vth, ok := t.svd.thin(h, p, q)
	if !ok {
		return ErrNoConvergence
	}
	pm := min(p, q)

	// Step 6: U ← [U P] Ũ_k, V ← [V Q] Ṽ_k, into the double buffers.
	rotate(t.u2, t.f.U, t.p, m, k, r1, uh, pm)
	vk := t.vk[:q*k]
	for j := range q {
		for l := range k {
			vk[j*k+l] = vth[l*q+j]
		}
	}
	rotate(t.v2, t.f.V, t.q, n, k, r2, vk, k)
	t.f.U, t.u2 = t.u2, t.f.U
	t.f.V, t.v2 = t.v2, t.f.V
	copy(t.f.S, sh[:k])
	t.count++
	if t.reorthEvery > 0 && t.count%t.reorthEvery == 0 {
		if err := t.Reorthonormalize(); err != nil {
			return fmt.Errorf("linalg: TISVD update applied, but its periodic re-orthonormalization failed: %w", err)
		}
	}
	return nil
}

// complement runs modified Gram–Schmidt with re-orthogonalization on the c
// columns of the rows×c row-major d against the rows×k orthonormal b and
// the directions accepted so far. Accepted unit directions are stored as
// rows of out (r×rows); g ((k+c)×c, row-major) receives the coefficients:
// d[:,l] = b g[:k,l] + outᵀ g[k:k+r,l] (+ a dropped residual of norm
// ≤ dropTol·‖d[:,l]‖). Returns r.
func (t *TISVD) complement(d []float64, rows, c int, b, out, g []float64) int {
	k := t.k
	clear(g[:(k+c)*c])
	x := t.x[:rows]
	r := 0
	for l := range c {
		for i := range rows {
			x[i] = d[i*c+l]
		}
		nu0 := nrm2(x)
		if nu0 == 0 {
			continue
		}
		before, after := nu0, nu0
		for pass := range 3 {
			for j := range k {
				var s float64
				for i, xv := range x {
					s += b[i*k+j] * xv
				}
				if s == 0 {
					continue
				}
				g[j*c+l] += s
				for i := range x {
					x[i] -= s * b[i*k+j]
				}
			}
			for a := range r {
				pa := out[a*rows : a*rows+rows]
				s := dot(pa, x)
				g[(k+a)*c+l] += s
				axpy(-s, pa, x)
			}
			after = nrm2(x)
			if after <= t.dropTol*nu0 {
				break // dependent; more passes cannot make it independent
			}
			if pass >= 1 && after > 0.5*before {
				break // twice is enough: x is orthogonal to working precision
			}
			before = after
		}
		if after <= t.dropTol*nu0 {
			continue
		}
		pr := out[r*rows : r*rows+rows]
		inv := 1 / after
		for i, xv := range x {
			pr[i] = xv * inv
		}
		g[(k+r)*c+l] = after
		r++
	}
	return r
}

// rotate computes dst (rows×k) = [b  extᵀ] · w[:, :k], where b is rows×k,
// ext holds r directions as rows (r×rows), and w is (k+r)×ldw row-major.
func rotate(dst, b, ext []float64, rows, k, r int, w []float64, ldw int) {
	for i := range rows {
		drow := dst[i*k : i*k+k]
		clear(drow)
		brow := b[i*k : i*k+k]
		for j, bv := range brow {
			if bv != 0 {
				axpy(bv, w[j*ldw:j*ldw+k], drow)
			}
		}
		for a := range r {
			if ev := ext[a*rows+i]; ev != 0 {
				axpy(ev, w[(k+a)*ldw:(k+a)*ldw+k], drow)
			}
		}
	}
}

// Reorthonormalize restores the orthonormality of U and V to working
// precision without changing the represented matrix (beyond rounding):
// U = Q_U R_U and V = Q_V R_V by modified Gram–Schmidt run twice, then the
// k×k core R_U diag(Σ) R_Vᵀ = Ũ Σ̃ Ṽᵀ by SVD, and U ← Q_U Ũ, V ← Q_V Ṽ,
// Σ ← Σ̃. Update calls it every ReorthEvery updates. Cost
// O((m+n)k² + k³). Returns ErrLostOrthogonality or ErrNoConvergence with the
// state unchanged.
func (t *TISVD) Reorthonormalize() error {
	m, n, k := t.m, t.n, t.k
	copy(t.u2, t.f.U)
	copy(t.v2, t.f.V)
	if !mgsColumns(t.u2, m, k, t.ru) || !mgsColumns(t.v2, n, k, t.rv) {
		return ErrLostOrthogonality
	}
	// C = R_U diag(Σ) R_Vᵀ (k×k), R upper triangular.
	cm := t.h[:k*k]
	for i := range k {
		for j := range k {
			var s float64
			for l := max(i, j); l < k; l++ {
				s += t.ru[i*k+l] * t.f.S[l] * t.rv[j*k+l]
			}
			cm[i*k+j] = s
		}
	}
	uc, sc, vtc, ok := t.svdR.thin(cm, k, k)
	if !ok {
		return ErrNoConvergence
	}
	rotate(t.f.U, t.u2, nil, m, k, 0, uc, k)
	vk := t.vk[:k*k]
	for j := range k {
		for l := range k {
			vk[j*k+l] = vtc[l*k+j]
		}
	}
	rotate(t.f.V, t.v2, nil, n, k, 0, vk, k)
	copy(t.f.S, sc)
	return nil
}

// mgsColumns orthonormalizes the k columns of the m×k row-major a in place
// by modified Gram–Schmidt run twice, writing the k×k upper-triangular r
// with a_in = a_out · r. Returns false (a partly overwritten) if a column is
// numerically dependent on the previous ones.
func mgsColumns(a []float64, m, k int, r []float64) bool {
	clear(r[:k*k])
	for j := range k {
		var nu0 float64
		for i := range m {
			nu0 = math.Hypot(nu0, a[i*k+j])
		}
		for range 2 {
			for p := range j {
				var s float64
				for i := range m {
					s += a[i*k+p] * a[i*k+j]
				}
				r[p*k+j] += s
				for i := range m {
					a[i*k+j] -= s * a[i*k+p]
				}
			}
		}
		var nu float64
		for i := range m {
			nu = math.Hypot(nu, a[i*k+j])
		}
		if !(nu > 1e-8*nu0) || nu == 0 {
			return false
		}
		r[j*k+j] = nu
		inv := 1 / nu
		for i := range m {
			a[i*k+j] *= inv
		}
	}
	return true
}
