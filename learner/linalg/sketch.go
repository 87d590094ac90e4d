package linalg

// Sketches of a growing kernel matrix: the sparse Johnson–Lindenstrauss
// transform S_p in streaming form, uniform column sampling S_m, the batch
// products Φ_pm = S_pᵀ K S_m and Φ_pp = S_pᵀ K S_p, their incremental
// maintenance when an example is appended, and the sketched Nyström map
// Z = Φ_pm^† V Σ^{1/2}.
//
// Reference: Wen et al. (arXiv 2410.11188v2) §2.2, §3.2 Eqs. 1–5, App. B.1
// Eqs. 11–12, and Zhang & Liao (ICML 2019) for SkeGD; notes:
// docs/algorithms/forks-and-baselines.md.
//
// Choices and deviations:
//   - Streaming form (§2.2): each row's D (bucket, sign) pairs are
//     drawn from the caller's *rng.Source when the row is added and stored,
//     instead of hash functions; this is equivalent in distribution and
//     makes the sketch a pure function of the seed and the insertion order.
//   - Landmarks are fixed (s_m^new = 0; our choice). The paper's
//     general Eq. 4 with a non-zero s_m^new row would make a landmark column
//     the sum of two kernel columns; the replacement variant is supported
//     instead (see SJLT.Insert).
//   - The Φ_pp update is returned in the compact c = 2 form
//     Δ₁ = [s, a], Δ₂ = [a + κs, s] rather than the paper's c = 3 form,
//     which has a duplicate and a parallel column (App. B.1 Eq. 12).

import (
	"errors"
	"fmt"
	"math"

	"okstream/learner/rng"
)

// SJLT is the sparse Johnson–Lindenstrauss transform S_p (a CountSketch when
// D = 1) in streaming form: an n×s_p matrix, one row per stored example,
// whose row i has exactly D non-zeros ±1/√D, one in each of D blocks of
// s_p/D consecutive columns (§2.2). Rows are added with AddRow (or
// Insert) and never change afterwards. Row storage is pre-sized to a
// capacity, so adding rows up to it does not allocate. Not safe for
// concurrent use.
type SJLT struct {
	sp, d, bsize int
	scale        float64 // 1/√D
	cols         []int32 // n·D global column indices, row-major
	signs        []int8  // n·D signs ±1
}

// NewSJLT returns an empty s_p-column SJLT with D blocks and storage for
// capacity rows. Panics unless s_p ≥ 1, 1 ≤ D and D divides s_p.
func NewSJLT(sp, blocks, capacity int) *SJLT {
	if sp < 1 || blocks < 1 || sp%blocks != 0 {
		panic(fmt.Sprintf("linalg: NewSJLT: s_p=%d must be a positive multiple of D=%d", sp, blocks))
	}
	return &SJLT{
		sp: sp, d: blocks, bsize: sp / blocks,
		scale: 1 / math.Sqrt(float64(blocks)),
		cols:  make([]int32, 0, capacity*blocks),
		signs: make([]int8, 0, capacity*blocks),
	}
}

// Rows returns the number of rows n (stored examples).
func (s *SJLT) Rows() int { return len(s.cols) / s.d }

// Cols returns s_p.
func (s *SJLT) Cols() int { return s.sp }

// Blocks returns D.
func (s *SJLT) Blocks() int { return s.d }

// AddRow appends a row and returns its index. For each block b = 0..D−1 in
// order it draws the bucket src.IntN(s_p/D) and then the sign src.Sign();
// this draw order is part of the determinism contract. No allocation below
// the capacity.
func (s *SJLT) AddRow(src *rng.Source) int {
	for b := range s.d {
		col := b*s.bsize + src.IntN(s.bsize)
		s.cols = append(s.cols, int32(col))
		s.signs = append(s.signs, int8(src.Sign()))
	}
	return s.Rows() - 1
}

// Entry returns the column and value (±1/√D) of the non-zero of row i in
// block b. Panics if i or b is out of range.
func (s *SJLT) Entry(i, b int) (col int, val float64) {
	if b < 0 || b >= s.d {
		panic("linalg: SJLT.Entry: block out of range")
	}
	return int(s.cols[i*s.d+b]), float64(s.signs[i*s.d+b]) * s.scale
}

// Hashes returns read-only views of the stored pairs, n·D each, row-major:
// the global column index and the sign (±1) of every non-zero. Together
// with (s_p, D) they are the complete state, e.g. for a checkpoint.
func (s *SJLT) Hashes() (cols []int32, signs []int8) { return s.cols, s.signs }

// ErrBadSketch is returned by SJLT.Restore for pairs that cannot come from
// an s_p-column, D-block SJLT.
var ErrBadSketch = errors.New("linalg: invalid SJLT hash pairs")

// Restore replaces the rows by copies of the pairs returned by Hashes. It
// returns ErrBadSketch (sketch unchanged) if the lengths differ, are not a
// multiple of D, or a pair lies outside its block or has a sign other than
// ±1.
func (s *SJLT) Restore(cols []int32, signs []int8) error {
	if len(cols) != len(signs) || len(cols)%s.d != 0 {
		return ErrBadSketch
	}
	for i, c := range cols {
		b := i % s.d
		if int(c) < b*s.bsize || int(c) >= (b+1)*s.bsize || (signs[i] != 1 && signs[i] != -1) {
			return ErrBadSketch
		}
	}
	s.cols = append(s.cols[:0], cols...)
	s.signs = append(s.signs[:0], signs...)
	return nil
}

// Truncate keeps the first n rows (e.g. to roll back an insertion). Panics
// unless 0 ≤ n ≤ Rows().
func (s *SJLT) Truncate(n int) {
	if n < 0 || n > s.Rows() {
		panic("linalg: SJLT.Truncate: n out of range")
	}
	s.cols = s.cols[:n*s.d]
	s.signs = s.signs[:n*s.d]
}

// RowTo writes row i of S_p (an s_p-vector, the paper's s_p^new for the
// newest row) into dst. Panics if len(dst) ≠ s_p or i is out of range.
func (s *SJLT) RowTo(dst []float64, i int) {
	if len(dst) != s.sp || i < 0 || i >= s.Rows() {
		panic("linalg: SJLT.RowTo: bad shape or row")
	}
	clear(dst)
	for b := range s.d {
		c, v := s.Entry(i, b)
		dst[c] += v
	}
}

// MulTVec computes dst = S_pᵀ x for an n-vector x (n = Rows()); dst has
// s_p entries. With x = ψ, the new example's kernel row against the stored
// examples, this is the paper's a. Cost O(nD + s_p); no allocation. Panics
// on a shape mismatch.
func (s *SJLT) MulTVec(dst, x []float64) {
	if len(dst) != s.sp || len(x) != s.Rows() {
		panic(fmt.Sprintf("linalg: SJLT.MulTVec: len(dst)=%d (want %d), len(x)=%d (want %d)", len(dst), s.sp, len(x), s.Rows()))
	}
	clear(dst)
	for i, xv := range x {
		for b := range s.d {
			j := i*s.d + b
			dst[s.cols[j]] += float64(s.signs[j]) * s.scale * xv
		}
	}
}

// SketchPM writes Φ_pm = S_pᵀ K S_m (s_p×s_m, row-major) into dst, where K
// is the n×n row-major kernel matrix of the n = Rows() stored examples and
// S_m selects the columns landmarks (s_m = len(landmarks), each in [0, n)).
// Cost O(n s_m D + s_p s_m); no allocation. Panics on a shape mismatch.
func (s *SJLT) SketchPM(dst, k []float64, n int, landmarks []int) {
	sm := len(landmarks)
	if n != s.Rows() || len(k) < n*n || len(dst) < s.sp*sm {
		panic(fmt.Sprintf("linalg: SJLT.SketchPM: n=%d (rows %d), len(K)=%d, len(dst)=%d (want %d×%d)", n, s.Rows(), len(k), len(dst), s.sp, sm))
	}
	clear(dst[:s.sp*sm])
	for i := range n {
		krow := k[i*n : i*n+n]
		for b := range s.d {
			c, v := s.Entry(i, b)
			drow := dst[c*sm : c*sm+sm]
			for j, l := range landmarks {
				drow[j] += v * krow[l]
			}
		}
	}
}

// SketchPP writes Φ_pp = S_pᵀ K S_p (s_p×s_p, row-major) into dst, where K
// is the n×n row-major kernel matrix of the n = Rows() stored examples.
// Cost O(n²D² + s_p²); no allocation. Panics on a shape mismatch.
func (s *SJLT) SketchPP(dst, k []float64, n int) {
	sp := s.sp
	if n != s.Rows() || len(k) < n*n || len(dst) < sp*sp {
		panic(fmt.Sprintf("linalg: SJLT.SketchPP: n=%d (rows %d), len(K)=%d, len(dst)=%d (want %d²)", n, s.Rows(), len(k), len(dst), sp))
	}
	clear(dst[:sp*sp])
	for i := range n {
		krow := k[i*n : i*n+n]
		for b := range s.d {
			ci, vi := s.Entry(i, b)
			drow := dst[ci*sp : ci*sp+sp]
			for j, kij := range krow {
				for b2 := range s.d {
					q := j*s.d + b2
					drow[s.cols[q]] += vi * float64(s.signs[q]) * s.scale * kij
				}
			}
		}
	}
}

// Insert appends a new example to the sketches (§3.2 Eq. 4 and App. B.1
// Eqs. 11–12, fixed landmarks). Inputs: psi, the new example's kernel
// row against the n = Rows() stored examples (ψ_i = κ(x, x_i)); kxx =
// κ(x, x); landmarks, the s_m landmark indices into the stored examples.
// Insert then, in this order:
//
//  1. computes a = S_pᵀ ψ over the n old rows;
//  2. draws the new row s (AddRow: the only use of src);
//  3. updates phiPM (s_p×s_m, row-major) in place: Φ_pm += s ψ_Lᵀ with
//     ψ_L = ψ[landmarks] (the D rows selected by s change);
//  4. writes the compact TISVD inputs for Φ_pp⁺ = Φ_pp + s aᵀ + a sᵀ + κ s sᵀ
//     into d1 and d2 (s_p×2, row-major): Δ₁ = [s, a], Δ₂ = [a + κs, s], so
//     that Φ_pp⁺ = Φ_pp + Δ₁Δ₂ᵀ (pass them to TISVD.Update with c = 2).
//
// It returns the new row's index n. To replace landmark j by the new
// example instead of keeping the landmarks fixed (an
// optional variant, ours), copy column 0 of d2 (a + κs = S_p⁺ᵀ K⁺ e_{n}) into
// column j of phiPM after Insert and set landmarks[j] = n.
//
// Cost O(nD + s_p + D s_m); no allocation while Rows() < capacity.
// landmarks and phiPM may be nil when s_m = 0. Panics on a shape mismatch.
func (s *SJLT) Insert(src *rng.Source, psi []float64, kxx float64, landmarks []int, phiPM, d1, d2 []float64) int {
	sp, sm := s.sp, len(landmarks)
	if len(psi) != s.Rows() || len(phiPM) < sp*sm || len(d1) != 2*sp || len(d2) != 2*sp {
		panic(fmt.Sprintf("linalg: SJLT.Insert: len(psi)=%d (rows %d), len(phiPM)=%d (want %d×%d), len(d1)=%d, len(d2)=%d (want %d×2)", len(psi), s.Rows(), len(phiPM), sp, sm, len(d1), len(d2), sp))
	}
	clear(d1)
	for i, v := range psi { // a into column 1 of Δ₁
		for b := range s.d {
			j := i*s.d + b
			d1[2*int(s.cols[j])+1] += float64(s.signs[j]) * s.scale * v
		}
	}
	row := s.AddRow(src)
	for b := range s.d { // s into column 0 of Δ₁ (blocks are disjoint)
		c, v := s.Entry(row, b)
		d1[2*c] = v
		prow := phiPM[c*sm : c*sm+sm]
		for j, l := range landmarks {
			prow[j] += v * psi[l]
		}
	}
	for i := range sp {
		si, ai := d1[2*i], d1[2*i+1]
		d2[2*i] = ai + kxx*si
		d2[2*i+1] = si
	}
	return row
}

// SampleColumns returns s_m distinct indices drawn uniformly without
// replacement from 0..n−1, in the order drawn (rng.Source.Sample): the
// column-sampling matrix S_m, whose column j is e_{L_j} (§2.2).
// Allocates its result (an initialization-time routine). Panics unless
// 0 ≤ s_m ≤ n.
func SampleColumns(src *rng.Source, n, sm int) []int {
	return src.Sample(n, sm)
}

// SketchedNystromMap writes the feature-map coefficients
// Z = Φ_pm^† V diag(√σ) (s_m×k, row-major) into z, where phiPM is s_p×s_m,
// v is s_p×k with the rank-k right singular vectors of Φ_pp and sigma its k
// singular values (Eq. 5; used by FORKS and SkeGD). The
// feature of x is then φ(x) = Zᵀ κ_L(x) (MatTVec). Singular values of
// Φ_pm ≤ tol are treated as 0 (tol < 0: PinvTol default); negative sigma
// entries are clamped to 0. Returns the numerical rank of Φ_pm.
//
// Φ_pm^† is applied, never formed (PinvApply: QR of Φ_pm, SVD of the
// s_m×s_m R). Cost O(s_p s_m² + s_p s_m k + s_m³) for s_p ≥ s_m. work may be nil (allocates);
// with a reused work, repeated calls do not allocate. Panics on a shape
// mismatch; returns ErrNotFinite or ErrNoConvergence (z unchanged).
func SketchedNystromMap(z, phiPM []float64, sp, sm int, v, sigma []float64, k int, tol float64, work *SVDWork) (rank int, err error) {
	if len(phiPM) < sp*sm || len(v) < sp*k || len(sigma) < k || len(z) < sm*k {
		panic(fmt.Sprintf("linalg: SketchedNystromMap: len(phiPM)=%d (%d×%d), len(v)=%d (%d×%d), len(sigma)=%d, len(z)=%d (%d×%d)", len(phiPM), sp, sm, len(v), sp, k, len(sigma), len(z), sm, k))
	}
	if work == nil {
		work = new(SVDWork)
	}
	rank, err = PinvApply(z, phiPM, sp, sm, v, k, tol, work)
	if err != nil {
		return 0, err
	}
	for i := range sm {
		for j := range k {
			z[i*k+j] *= sqrtNonNeg(sigma[j])
		}
	}
	return rank, nil
}
