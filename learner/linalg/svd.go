package linalg

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"

	"okstream/learner/rng"
)

// ErrNoConvergence is returned when gonum's SVD (LAPACK dgesvd: bidiagonal
// QR iteration) does not converge. It is rare and means the input is
// pathological (in practice: not finite); the destination is left unchanged
// by the routines that say so.
var ErrNoConvergence = errors.New("linalg: SVD or eigendecomposition did not converge")

// ErrNotFinite is returned when an input holds NaN or ±Inf. Routines that
// return it leave their destination or receiver unchanged.
var ErrNotFinite = errors.New("linalg: input is not finite")

// SVDWork is reusable scratch for the SVD-based routines (Pinv,
// SketchedNystromMap; TruncSVD and TISVD hold their own). Its zero value is
// ready to use; it grows to the largest problem seen and is then reused, so
// repeated calls of the same size do not allocate. Not safe for concurrent
// use.
type SVDWork struct {
	a, u, vt, s, work []float64
	pinv              []float64  // Pinv result scratch (PinvApply with m < n)
	qr, bq, r         []float64  // PinvApply: QR of a, QᵀB, R
	tau               []float64  // Householder scalars (RandomizedSVD)
	lm, ln, lwork     int        // dims of the cached workspace query
	q                 [1]float64 // workspace-query answer (a field: a local would escape)
}

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}

// thin computes the thin SVD a = u·diag(s)·vt of the m×n row-major a (a is
// copied, not modified). With p = min(m, n): u is m×p, s has p values in
// descending order, vt is p×n, all row-major views into w valid until the
// next call. Uses LAPACK dgesvd (gonum): backward stable, singular values
// accurate to O(ε‖a‖₂) absolutely.
func (w *SVDWork) thin(a []float64, m, n int) (u, s, vt []float64, ok bool) {
	w.reserve(m, n)
	p := min(m, n)
	copy(w.a, a[:m*n])
	ok = lapack64.Gesvd(lapack.SVDStore, lapack.SVDStore,
		blas64.General{Rows: m, Cols: n, Stride: max(1, n), Data: w.a},
		blas64.General{Rows: m, Cols: p, Stride: max(1, p), Data: w.u},
		blas64.General{Rows: p, Cols: n, Stride: max(1, n), Data: w.vt},
		w.s, w.work, w.lwork)
	return w.u, w.s, w.vt, ok
}

// reserve sizes the buffers for a thin SVD of an m×n matrix (workspace
// query included), so that a later thin(m, n) does not allocate.
func (w *SVDWork) reserve(m, n int) {
	p := min(m, n)
	w.a = grow(w.a, m*n)
	w.u = grow(w.u, m*p)
	w.vt = grow(w.vt, p*n)
	w.s = grow(w.s, p)
	if w.lm != m || w.ln != n || w.lwork == 0 {
		lapack64.Gesvd(lapack.SVDStore, lapack.SVDStore,
			blas64.General{Rows: m, Cols: n, Stride: max(1, n), Data: w.a},
			blas64.General{Rows: m, Cols: p, Stride: max(1, p), Data: w.u},
			blas64.General{Rows: p, Cols: n, Stride: max(1, n), Data: w.vt},
			w.s, w.q[:], -1)
		w.lm, w.ln = m, n
		w.lwork = max(int(w.q[0]), 5*p+max(m, n), 1)
	}
	w.work = grow(w.work, w.lwork)
}

// orthonormalize replaces the m×l row-major y (m ≥ l) by an m×l matrix with
// orthonormal columns spanning (at least) range(y): Householder QR
// (dgeqrf + dorgqr). Householder Q is orthonormal even when y is rank
// deficient.
func (w *SVDWork) orthonormalize(y []float64, m, l int) {
	g := blas64.General{Rows: m, Cols: l, Stride: l, Data: y}
	w.tau = grow(w.tau, l)
	lapack64.Geqrf(g, w.tau, w.q[:], -1)
	lw := max(int(w.q[0]), l, 1)
	lapack64.Orgqr(g, w.tau, w.q[:], -1)
	lw = max(lw, int(w.q[0]))
	w.work = grow(w.work, max(lw, len(w.work)))
	lapack64.Geqrf(g, w.tau, w.work, len(w.work))
	lapack64.Orgqr(g, w.tau, w.work, len(w.work))
}

// TruncSVD is a rank-k factorization A ≈ U diag(S) Vᵀ of an m×n matrix:
// U is m×k and V is n×k, both row-major with orthonormal columns, and S holds
// k singular values in descending order, all ≥ 0. It is the destination of
// TruncatedSVD and RandomizedSVD and the state of TISVD. Rows, Cols and Rank
// give m, n and k. The slices are reused across calls, so a TruncSVD kept by
// a learner does not reallocate once it has reached its size.
type TruncSVD struct {
	Rows, Cols, Rank int
	U, S, V          []float64

	work SVDWork
	y, z []float64 // RandomizedSVD and TruncatedSymPSD scratch
}

// Reset sizes f for an m×n matrix of rank k, reusing its storage. The
// contents of U, S and V are unspecified afterwards. Panics unless
// 1 ≤ k ≤ min(m, n).
func (f *TruncSVD) Reset(m, n, k int) {
	if k < 1 || k > min(m, n) {
		panic(fmt.Sprintf("linalg: TruncSVD: rank %d outside [1, min(%d, %d)]", k, m, n))
	}
	f.Rows, f.Cols, f.Rank = m, n, k
	f.U = grow(f.U, m*k)
	f.S = grow(f.S, k)
	f.V = grow(f.V, n*k)
}

// CopyFrom makes f an independent copy of g (reusing f's storage).
func (f *TruncSVD) CopyFrom(g *TruncSVD) {
	f.Reset(g.Rows, g.Cols, g.Rank)
	copy(f.U, g.U)
	copy(f.S, g.S)
	copy(f.V, g.V)
}

// Reconstruct writes U diag(S) Vᵀ into the m×n row-major dst. Cost O(mnk);
// no allocation. Panics if len(dst) < m·n.
func (f *TruncSVD) Reconstruct(dst []float64) {
	m, n, k := f.Rows, f.Cols, f.Rank
	if len(dst) < m*n {
		panic(fmt.Sprintf("linalg: TruncSVD.Reconstruct: len(dst)=%d < %d×%d", len(dst), m, n))
	}
	for i := range m {
		drow := dst[i*n : i*n+n]
		clear(drow)
		urow := f.U[i*k : i*k+k]
		for j := range n {
			vrow := f.V[j*k : j*k+k]
			var s float64
			for l, uv := range urow {
				s += uv * f.S[l] * vrow[l]
			}
			drow[j] = s
		}
	}
}

// setFromThin stores the top k triplets of a thin SVD (u m×p, s p, vt p×n).
func (f *TruncSVD) setFromThin(u, s, vt []float64, m, n, p, k int) {
	f.Reset(m, n, k)
	for i := range m {
		copy(f.U[i*k:i*k+k], u[i*p:i*p+k])
	}
	copy(f.S, s[:k])
	for l := range k {
		for j := range n {
			f.V[j*k+l] = vt[l*n+j]
		}
	}
}

// TruncatedSVD writes into dst the best rank-k approximation (Eckart–Young,
// in Frobenius and spectral norm) of the m×n row-major a, computed from a
// full thin SVD (gonum LAPACK dgesvd). a is not modified. Singular values
// are accurate to O(ε‖a‖₂) absolutely; singular vectors are determined up
// to sign (and up to rotation within clusters of equal singular values).
// If rank(a) < k, the trailing singular values are 0 and their vectors are
// still orthonormal.
//
// Cost O(mn·min(m,n)); scratch lives in dst and is reused. Panics on a shape
// mismatch or unless 1 ≤ k ≤ min(m, n); returns ErrNotFinite or
// ErrNoConvergence (dst unchanged) on numerical failure.
func TruncatedSVD(dst *TruncSVD, a []float64, m, n, k int) error {
	if len(a) < m*n {
		panic(fmt.Sprintf("linalg: TruncatedSVD: len(a)=%d < %d×%d", len(a), m, n))
	}
	if k < 1 || k > min(m, n) {
		panic(fmt.Sprintf("linalg: TruncatedSVD: rank %d outside [1, min(%d, %d)]", k, m, n))
	}
	if !allFinite(a[:m*n]) {
		return ErrNotFinite
	}
	u, s, vt, ok := dst.work.thin(a, m, n)
	if !ok {
		return ErrNoConvergence
	}
	dst.setFromThin(u, s, vt, m, n, min(m, n), k)
	return nil
}

// TruncatedSymPSD writes into dst the best rank-k approximation of the
// symmetric positive semi-definite n×n row-major a (only the upper triangle
// is read; a is not modified) from its k largest eigenpairs (SymTopK): U = V
// = the eigenvectors, S = the eigenvalues, descending, with negative ones
// (round-off on a PSD matrix) set to 0. For a PSD matrix this is the same
// factorization TruncatedSVD computes (up to signs and rotations within
// clusters of equal values) at about a fifth of the cost: SymTopK is one
// tridiagonal reduction plus O(n²k), where the full SVD accumulates all n
// singular vectors (n = 1000, k = 100: 0.55 s against 2.1–3.7 s). FORKS'
// and SkeGD's Φ_pp = S_pᵀ K S_p is PSD by construction. For an indefinite
// matrix the result is not the best rank-k approximation (that needs the
// largest |λ|); use TruncatedSVD.
//
// work may be nil (scratch is then allocated). Panics unless 1 ≤ k ≤ n or
// on a short a; returns ErrNotFinite or ErrNoConvergence with dst
// unchanged.
func TruncatedSymPSD(dst *TruncSVD, a []float64, n, k int, work *SymTopKWork) error {
	if len(a) < n*n {
		panic(fmt.Sprintf("linalg: TruncatedSymPSD: len(a)=%d < %d²", len(a), n))
	}
	if k < 1 || k > n {
		panic(fmt.Sprintf("linalg: TruncatedSymPSD: rank %d outside [1, %d]", k, n))
	}
	if work == nil {
		work = new(SymTopKWork)
	}
	vals := grow(dst.z, k)
	vecs := grow(dst.y, n*k)
	dst.z, dst.y = vals, vecs
	if err := SymTopK(vals, vecs, a, n, k, work); err != nil {
		return err
	}
	dst.Reset(n, n, k)
	for j := range k {
		dst.S[j] = max(vals[j], 0)
	}
	copy(dst.U, vecs[:n*k])
	copy(dst.V, vecs[:n*k])
	return nil
}

// RandomizedSVD writes into dst a rank-k approximation of the m×n row-major
// a by the randomized range finder of Halko, Martinsson & Tropp (2011,
// Alg. 4.4 + 5.1), the decomposition SkeGD uses (FORKS paper App. B.3):
//
//	l := min(k + oversample, min(m, n));  Ω n×l with i.i.d. N(0,1) entries
//	Y := orth(A Ω);  repeat powerIters times: Y := orth(A orth(Aᵀ Y))
//	B := Yᵀ A (l×n) = Ũ Σ Ṽᵀ;  U := Y Ũ[:, :k], S := Σ[:k], V := Ṽ[:, :k]
//
// orth is a Householder QR, so U and V have orthonormal columns even for a
// rank-deficient a. Ω is drawn from src in row-major order with
// src.Normal(), so the result is a deterministic function of (a, k,
// oversample, powerIters, the state of src). If rank(a) ≤ l the result is
// exact up to rounding; otherwise the error is near-optimal in expectation
// (HMT Thm 10.6), improving with powerIters (1–2 is typical).
//
// Cost O(mnl·(1 + 2·powerIters) + (m+n)l²); scratch lives in dst and is
// reused. Panics unless 1 ≤ k ≤ min(m, n), oversample ≥ 0, powerIters ≥ 0
// and len(a) ≥ m·n; returns ErrNotFinite or ErrNoConvergence (dst unchanged
// except for scratch) on numerical failure.
func RandomizedSVD(dst *TruncSVD, a []float64, m, n, k, oversample, powerIters int, src *rng.Source) error {
	if len(a) < m*n {
		panic(fmt.Sprintf("linalg: RandomizedSVD: len(a)=%d < %d×%d", len(a), m, n))
	}
	if k < 1 || k > min(m, n) || oversample < 0 || powerIters < 0 {
		panic(fmt.Sprintf("linalg: RandomizedSVD: k=%d (m=%d, n=%d), oversample=%d, powerIters=%d", k, m, n, oversample, powerIters))
	}
	if !allFinite(a[:m*n]) {
		return ErrNotFinite
	}
	l := min(k+oversample, min(m, n))
	w := &dst.work
	dst.z = grow(dst.z, n*l)
	for i := range dst.z {
		dst.z[i] = src.Normal()
	}
	dst.y = grow(dst.y, m*l)
	mulNN(dst.y, a, dst.z, m, n, l) // Y = A Ω
	w.orthonormalize(dst.y, m, l)
	for range powerIters {
		mulTN(dst.z, a, dst.y, m, n, l) // Z = Aᵀ Y
		w.orthonormalize(dst.z, n, l)
		mulNN(dst.y, a, dst.z, m, n, l) // Y = A Z
		w.orthonormalize(dst.y, m, l)
	}
	// B = Yᵀ A (l×n), stored in dst.z (n·l ≥ l·n entries).
	mulTN(dst.z, dst.y, a, m, l, n)
	ub, s, vt, ok := w.thin(dst.z, l, n)
	if !ok {
		return ErrNoConvergence
	}
	dst.Reset(m, n, k)
	for i := range m {
		yrow := dst.y[i*l : i*l+l]
		urow := dst.U[i*k : i*k+k]
		clear(urow)
		for t, yv := range yrow {
			axpy(yv, ub[t*l:t*l+k], urow)
		}
	}
	copy(dst.S, s[:k])
	for c := range k {
		for j := range n {
			dst.V[j*k+c] = vt[c*n+j]
		}
	}
	return nil
}

// PinvTol returns the default pseudo-inverse tolerance of an m×n matrix with
// largest singular value smax: max(m, n)·ε·smax, as in MATLAB's pinv and
// NumPy's default rcond.
func PinvTol(m, n int, smax float64) float64 {
	return float64(max(m, n)) * 0x1p-52 * smax
}

// Pinv writes into the n×m row-major dst the Moore–Penrose pseudo-inverse
// of the m×n row-major a, through a thin SVD a = U Σ Vᵀ:
// dst = V Σ⁺ Uᵀ, where singular values ≤ tol are treated as 0. A negative
// tol selects the default PinvTol(m, n, σ_max). It returns the numerical
// rank (the number of singular values > tol).
//
// Guarantees: for the computed rank r, dst is the exact pseudo-inverse of
// the rank-r truncation of a (up to rounding), so the four Penrose
// conditions A X A = A, X A X = X, (AX)ᵀ = AX, (XA)ᵀ = XA hold to
// O(ε·κ_r) relative accuracy, κ_r = σ_max/σ_r ≤ 1/(max(m,n)·ε) with the
// default tol. a and dst must not overlap.
//
// Cost O(mn·min(m,n)). work may be nil (scratch is then allocated); with a
// reused work, repeated calls of one size do not allocate. Panics on a shape
// mismatch; returns ErrNotFinite or ErrNoConvergence (dst unchanged) on
// numerical failure.
func Pinv(dst, a []float64, m, n int, tol float64, work *SVDWork) (rank int, err error) {
	if len(a) < m*n || len(dst) < n*m {
		panic(fmt.Sprintf("linalg: Pinv: len(a)=%d, len(dst)=%d for %d×%d", len(a), len(dst), m, n))
	}
	if m == 0 || n == 0 {
		return 0, nil
	}
	if !allFinite(a[:m*n]) {
		return 0, ErrNotFinite
	}
	if work == nil {
		work = new(SVDWork)
	}
	u, s, vt, ok := work.thin(a, m, n)
	if !ok {
		return 0, ErrNoConvergence
	}
	p := min(m, n)
	if tol < 0 {
		tol = PinvTol(m, n, s[0])
	}
	for rank < p && s[rank] > tol {
		rank++
	}
	// dst[i][j] = Σ_l vt[l][i] · u[j][l] / s[l]. Scale the rows of vt in
	// place (vt is scratch), then accumulate row by row.
	for l := range rank {
		inv := 1 / s[l]
		row := vt[l*n : l*n+n]
		for i := range row {
			row[i] *= inv
		}
	}
	for i := range n {
		drow := dst[i*m : i*m+m]
		for j := range m {
			urow := u[j*p : j*p+rank]
			var acc float64
			for l, uv := range urow {
				acc += vt[l*n+i] * uv
			}
			drow[j] = acc
		}
	}
	return rank, nil
}

// sqrtNonNeg is √max(x, 0): singular values are ≥ 0 but a caller-provided Σ
// might carry −0 or rounding noise.
// PinvApply writes into the n×k row-major dst the product A^†B of the
// Moore–Penrose pseudo-inverse of the m×n row-major a and the m×k row-major
// b, with Pinv's tolerance (tol < 0: PinvTol), and returns the numerical
// rank. It never forms A^†. For m ≥ n (FORKS' tall Φ_pm, s_p × s_m) it
// factors A = QR (Householder), forms QᵀB (first n rows) without forming
// Q, takes the SVD R = U S Vᵀ of the n×n R (the singular values of A) and
// returns V S^† (Uᵀ QᵀB): the same product as Pinv(a)·b in exact
// arithmetic, backward stable, at O(mn² + mnk + n³) with the O(n³) part on
// an n×n matrix (s_p = 1000, s_m = 200, k = 100: 3–4× faster than Pinv
// then Mul). For m < n it falls back to Pinv then a product.
//
// work may be nil (scratch is then allocated); with a reused work it does
// not allocate once warmed up (with the package's caveat on gonum's
// parallel Dgemm for large matrices). Panics on short slices; returns
// ErrNotFinite or ErrNoConvergence with dst unchanged.
func PinvApply(dst, a []float64, m, n int, b []float64, k int, tol float64, work *SVDWork) (rank int, err error) {
	if len(a) < m*n || len(b) < m*k || len(dst) < n*k {
		panic(fmt.Sprintf("linalg: PinvApply: len(a)=%d (%d×%d), len(b)=%d (%d×%d), len(dst)=%d (%d×%d)", len(a), m, n, len(b), m, k, len(dst), n, k))
	}
	if work == nil {
		work = new(SVDWork)
	}
	if m < n {
		work.pinv = grow(work.pinv, n*m)
		if rank, err = Pinv(work.pinv, a, m, n, tol, work); err != nil {
			return 0, err
		}
		mulNN(dst, work.pinv, b, n, m, k)
		return rank, nil
	}
	if n == 0 || k == 0 {
		return 0, nil
	}
	if !allFinite(a[:m*n]) || !allFinite(b[:m*k]) {
		return 0, ErrNotFinite
	}
	w := work
	w.qr = grow(w.qr, m*n)
	copy(w.qr, a[:m*n])
	w.bq = grow(w.bq, m*k)
	copy(w.bq, b[:m*k])
	w.tau = grow(w.tau, n)
	qa := blas64.General{Rows: m, Cols: n, Stride: n, Data: w.qr}
	qb := blas64.General{Rows: m, Cols: k, Stride: k, Data: w.bq}
	lapack64.Geqrf(qa, w.tau, w.q[:], -1)
	lw := max(int(w.q[0]), n, 1)
	lapack64.Ormqr(blas.Left, blas.Trans, qa, w.tau, qb, w.q[:], -1)
	lw = max(lw, int(w.q[0]), k)
	w.work = grow(w.work, max(lw, len(w.work)))
	lapack64.Geqrf(qa, w.tau, w.work, len(w.work))
	lapack64.Ormqr(blas.Left, blas.Trans, qa, w.tau, qb, w.work, len(w.work)) // rows 0..n−1 of qb: (QᵀB)[:n]
	w.r = grow(w.r, n*n)
	for i := range n {
		row := w.r[i*n : i*n+n]
		clear(row[:i])
		copy(row[i:], w.qr[i*n+i:i*n+n])
	}
	u, sv, vt, ok := w.thin(w.r, n, n)
	if !ok {
		return 0, ErrNoConvergence
	}
	if tol < 0 {
		tol = PinvTol(m, n, sv[0])
	}
	for rank < n && sv[rank] > tol {
		rank++
	}
	// t = S^{-1} Uᵀ (QᵀB)[:n] (n×k; rows ≥ rank unused), then
	// dst = V_r t_r = vt[:rank]ᵀ t[:rank].
	w.pinv = grow(w.pinv, n*k)
	t := w.pinv[:n*k]
	mulTN(t, u, w.bq[:n*k], n, n, k)
	for l := range rank {
		inv := 1 / sv[l]
		row := t[l*k : l*k+k]
		for c := range row {
			row[c] *= inv
		}
	}
	mulTN(dst, vt, t, rank, n, k)
	return rank, nil
}

func sqrtNonNeg(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return math.Sqrt(x)
}
