package linalg

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"

	"okstream/learner/rng"
)

// SymTopKWork is reusable scratch for SymTopK. Its zero value is ready to
// use; it grows to the largest (n, k) seen and is then reused, so repeated
// calls of one size do not allocate. Not safe for concurrent use.
type SymTopKWork struct {
	a              []float64  // n×n: lower triangle of the input, then Dsytrd's reflectors
	d, e, tau      []float64  // T's diagonal (n), off-diagonal (n−1), reflector scalars (n−1)
	ev, ee         []float64  // Dsterf copies of d, e: eigenvalues, ascending within each block
	blk            []int      // first row of each unreduced block of T, then n
	order          []eigPos   // all n eigenvalues of T, descending
	col            []int      // output column of the eigenvalue at row position p, or −1
	grp            []int      // output columns done so far in the current block
	z              []float64  // k×n: eigenvectors of T, one per row
	x              []float64  // inverse-iteration iterate
	ua, ub, uc, ud []float64  // LU of T − λI (dlagtf): U diagonal, U super-diagonals, L multipliers
	piv            []bool     // row interchanges of that LU
	src            rng.Source // starting vectors
	work           []float64  // Dsytrd and Dormqr workspace
	ln, lk, lwork  int        // dims of the cached workspace queries
	q              [1]float64 // workspace-query answer (a field: a local would escape)
}

// eigPos is an eigenvalue of T and its position in the block-ordered
// eigenvalue array ev.
type eigPos struct {
	v float64
	p int
}

// Inverse-iteration constants of LAPACK dstein.
const (
	stMaxIts  = 5    // iterations per eigenvector at most
	stExtra   = 2    // iterations after the stopping criterion is first met
	stOrtol   = 1e-3 // cluster (reorthogonalization) width, relative to ‖T_block‖₁
	stPrec    = 0x1p-52
	stEpsilon = 0x1p-53
	stSfmin   = 0x1p-1022
	stBignum  = 0x1p1022
)

// SymTopK writes into vals (length ≥ k) the k algebraically largest
// eigenvalues of the symmetric n×n row-major a, in descending order, and
// into vecs (n×k row-major, length ≥ n·k) orthonormal eigenvectors: column j
// belongs to vals[j]. Only the upper triangle of a is read (as in SymEig);
// a is not modified. 1 ≤ k ≤ n.
//
// Method (LAPACK's dsyevx path with gonum's building blocks): Householder
// reduction QᵀAQ = T to tridiagonal form (gonum Dsytrd, lower storage);
// T is split where an off-diagonal is negligible (dstebz's test) and the
// eigenvalues of every block come from gonum Dsterf (Pal–Walker–Kahan QL/QR,
// no vectors); the k largest get eigenvectors of T by inverse iteration as
// in LAPACK dstein (tridiagonal LU with partial pivoting, tiny pivots
// perturbed, at most 5 iterations, modified Gram–Schmidt against the vectors
// of the same block whose eigenvalues lie within 10⁻³·‖T_block‖₁, applied
// twice when it cancels much); the vectors are then back-transformed by Q
// (gonum Dormqr). Finally each column of vecs is given the sign that makes
// its largest-magnitude entry (the first, on ties) positive.
//
// Guarantees: eigenvalues are those of a matrix within O(ε‖A‖) of A, so they
// are accurate to O(ε‖A‖₂) absolutely (as SymEig's); the residual
// ‖A V − V diag(vals)‖ is O(ε‖A‖) up to a modest factor of n, and VᵀV = I to
// working precision also for repeated or clustered eigenvalues (rank-
// deficient Gram matrices, duplicate points). As with any eigensolver, an
// eigenvector is determined only up to sign, and within a cluster of
// (nearly) equal eigenvalues only the spanned subspace is; in particular,
// when vals[k−1] equals the (k+1)-th eigenvalue, which of the tied vectors
// are returned is arbitrary, but the rank-k approximation V diag(vals) Vᵀ
// is still a best one. The starting vector for column j is the uniform
// [−1, 1) stream of rng.New(j), so the result is a deterministic function of
// a and k (bit-identical on one platform).
//
// Cost: 4/3·n³ flops for the reduction, which dominates (over 90% of the
// time at n = 1000, k = 100); O(n²) for the eigenvalues; O(nk) for inverse
// iteration plus O(n·c²) per cluster of c computed eigenvectors (at most
// O(nk²)); 2n²k for the back-transformation. SymEig and TruncatedSVD also
// form and rotate all n vectors, several n³ more: at n = 1000, k = 100
// SymTopK is about 3× faster than SymEig on a kernel Gram matrix and 5× on
// a random one (BenchmarkSymTopK, BenchmarkSymTopKReference). work may be
// nil (scratch is then allocated); with a reused work, repeated calls of one
// size do not allocate, with the caveat of the package doc: for n above
// about 192, or n and k both above 64, the blocked back-transformation
// (Dormqr) reaches gonum's parallel Dgemm, which allocates a little (the
// results stay deterministic).
//
// Panics unless 1 ≤ k ≤ n, len(a) ≥ n², len(vals) ≥ k and len(vecs) ≥ n·k.
// Returns ErrNotFinite if any of the n² entries of a is NaN or ±Inf, and
// ErrNoConvergence if Dsterf fails or inverse iteration does not meet
// dstein's stopping criterion (neither is expected for finite input); vals
// and vecs are unchanged then. A matrix whose largest entry is above 2⁴⁰⁰ or
// below 2⁻⁴⁰⁰ is scaled by a power of two first (exact; the eigenvalues are
// scaled back), so the result does not depend on the magnitude of A, except
// that, as in LAPACK dstebz, off-diagonals of T below 2⁻⁵¹¹ count as zero.
func SymTopK(vals, vecs, a []float64, n, k int, work *SymTopKWork) error {
	if k < 1 || k > n {
		panic(fmt.Sprintf("linalg: SymTopK: k=%d outside [1, n=%d]", k, n))
	}
	if len(a) < n*n || len(vals) < k || len(vecs) < n*k {
		panic(fmt.Sprintf("linalg: SymTopK: len(a)=%d, len(vals)=%d, len(vecs)=%d for n=%d, k=%d", len(a), len(vals), len(vecs), n, k))
	}
	if !allFinite(a[:n*n]) {
		return ErrNotFinite
	}
	w := work
	if w == nil {
		w = new(SymTopKWork)
	}
	w.reserve(n, k)
	impl := gonum.Implementation{}

	// Lower triangle of the scratch := upper triangle of a (transposed).
	amax := 0.0
	for i := range n {
		row := w.a[i*n : i*n+i+1]
		for j := range row {
			row[j] = a[j*n+i]
			amax = max(amax, math.Abs(row[j]))
		}
	}
	// A matrix of extreme magnitude (largest entry outside [2⁻⁴⁰⁰, 2⁴⁰⁰];
	// never a kernel matrix, but a corrupt or hostile state can hold one) is
	// scaled by a power of two into [½, 1) first, exactly, and its
	// eigenvalues scaled back: the reduction, Dsterf and inverse iteration
	// then never meet overflow or the scaling branch of Dsterf that panics
	// in gonum v0.17 (see dsterf). Other matrices are untouched.
	shift := 0
	if amax > 0x1p400 || amax < 0x1p-400 && amax > 0 {
		_, exp := math.Frexp(amax)
		shift = -exp
		for i := range n {
			row := w.a[i*n : i*n+i+1]
			for j := range row {
				row[j] = math.Ldexp(row[j], shift)
			}
		}
	}
	impl.Dsytrd(blas.Lower, n, w.a, n, w.d, w.e, w.tau, w.work, w.lwork)
	if err := w.eigenvalues(n, k); err != nil {
		return err
	}
	if err := w.inverseIteration(n); err != nil {
		return err
	}

	for j := range k {
		vals[j] = math.Ldexp(w.order[j].v, -shift)
	}
	for i := range n {
		row := vecs[i*k : i*k+k]
		for j := range row {
			row[j] = w.z[j*n+i]
		}
	}
	// vecs := Q·vecs with Q = H_0 H_1 ⋯ H_{n−2}: the reflectors of Dsytrd
	// (lower) are those of a QR factorization of A[1:n, 0:n−1] acting on
	// rows 1..n−1 (LAPACK dormtr).
	if n > 1 {
		impl.Dormqr(blas.Left, blas.NoTrans, n-1, k, n-1, w.a[n:], n, w.tau[:n-1], vecs[k:n*k], k, w.work, w.lwork)
	}
	for j := range k {
		big, at := -1.0, 0
		for i := range n {
			if v := math.Abs(vecs[i*k+j]); v > big {
				big, at = v, i
			}
		}
		if vecs[at*k+j] < 0 {
			for i := range n {
				vecs[i*k+j] = -vecs[i*k+j]
			}
		}
	}
	return nil
}

// reserve sizes the scratch for SymTopK(n, k), workspace queries included.
func (w *SymTopKWork) reserve(n, k int) {
	w.a = grow(w.a, n*n)
	w.d = grow(w.d, n)
	w.e = grow(w.e, n)
	w.tau = grow(w.tau, n)
	w.ev = grow(w.ev, n)
	w.ee = grow(w.ee, n)
	w.x = grow(w.x, n)
	w.ua = grow(w.ua, n)
	w.ub = grow(w.ub, n)
	w.uc = grow(w.uc, n)
	w.ud = grow(w.ud, n)
	w.z = grow(w.z, k*n)
	if cap(w.blk) < n+1 {
		w.blk = make([]int, 0, n+1)
	}
	if cap(w.order) < n {
		w.order = make([]eigPos, n)
	}
	w.order = w.order[:n]
	if cap(w.col) < n {
		w.col = make([]int, n)
	}
	w.col = w.col[:n]
	if cap(w.grp) < k {
		w.grp = make([]int, 0, k)
	}
	if cap(w.piv) < n {
		w.piv = make([]bool, n)
	}
	w.piv = w.piv[:n]
	if w.ln != n || w.lk != k || w.lwork == 0 {
		impl := gonum.Implementation{}
		impl.Dsytrd(blas.Lower, n, w.a, n, w.d, w.e, w.tau, w.q[:], -1)
		lw := int(w.q[0])
		if n > 1 {
			impl.Dormqr(blas.Left, blas.NoTrans, n-1, k, n-1, w.a, n, w.tau[:n-1], w.z, k, w.q[:], -1)
			lw = max(lw, int(w.q[0]))
		}
		w.ln, w.lk, w.lwork = n, k, max(lw, k, 1)
	}
	w.work = grow(w.work, w.lwork)
}

// dsterf is gonum's Dsterf on one unreduced block (d: n, e: n−1), made safe
// for blocks of extreme magnitude. Dsterf rescales a block whose largest
// entry is above √(1/safmin)/3 (about 4e153) or below √safmin/ε² (about
// 1e-122) with Dlascl, and in gonum v0.17 that call passes the block's full
// length as the leading dimension of a one-column matrix, so it panics
// ("insufficient length of a") whenever it runs on a block of two or more
// rows (found by FuzzUnmarshal: a FORKS state with entries near 1e289). Such
// a block is scaled here by a power of two into [½, 1) first (exact, unless
// entries below 2⁻¹⁰²² of the largest one underflow, which does not change
// the eigenvalues at working precision), so that Dsterf's own rescaling
// never runs, and the eigenvalues are scaled back. Blocks within range, all
// that finite learning ever produces, take exactly the code path they took
// before. Our splitting test is at least as strict as Dsterf's (2⁻⁵² ≥ ε),
// so the block Dsterf sees has no split of its own to rescale separately;
// any other panic inside Dsterf is reported as no convergence.
func dsterf(impl gonum.Implementation, d, e []float64) (ok bool) {
	const (
		ssfmax = 0x1p511 / 3         // √(1/safmin)/3, safmin = 2⁻¹⁰²²
		ssfmin = 0x1p-511 / 0x1p-106 // √safmin/ε², ε = 2⁻⁵³
	)
	anorm := 0.0
	for _, v := range d {
		anorm = max(anorm, math.Abs(v))
	}
	for _, v := range e {
		anorm = max(anorm, math.Abs(v))
	}
	shift := 0 // the block is scaled by 2^shift
	if anorm > ssfmax || anorm < ssfmin && anorm > 0 {
		_, exp := math.Frexp(anorm) // anorm = f·2^exp, f ∈ [½, 1)
		shift = -exp
		for i := range d {
			d[i] = math.Ldexp(d[i], shift)
		}
		for i := range e {
			e[i] = math.Ldexp(e[i], shift)
		}
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	ok = impl.Dsterf(len(d), d, e)
	if ok && shift != 0 {
		for i := range d {
			d[i] = math.Ldexp(d[i], -shift)
		}
	}
	return ok
}

// eigenvalues splits T into unreduced blocks, computes every block's
// eigenvalues into ev (ascending within the block), sorts all of them into
// order (descending) and marks the top k in col.
func (w *SymTopKWork) eigenvalues(n, k int) error {
	d, e := w.d[:n], w.e[:max(n-1, 0)]
	// dstebz's splitting test, |e_i|² ≤ ulp²·|d_i d_{i+1}| + safmin, in a
	// form that cannot overflow.
	w.blk = append(w.blk[:0], 0)
	for i, ei := range e {
		ae := math.Abs(ei)
		if ae <= stPrec*math.Sqrt(math.Abs(d[i]))*math.Sqrt(math.Abs(d[i+1])) || ae < 0x1p-511 {
			w.blk = append(w.blk, i+1)
		}
	}
	w.blk = append(w.blk, n)
	copy(w.ev, d)
	copy(w.ee, e)
	impl := gonum.Implementation{}
	for b := 0; b+1 < len(w.blk); b++ {
		lo, hi := w.blk[b], w.blk[b+1]
		if hi-lo > 1 && !dsterf(impl, w.ev[lo:hi], w.ee[lo:hi-1]) {
			return ErrNoConvergence
		}
	}
	for p := range n {
		w.order[p] = eigPos{w.ev[p], p}
	}
	// Descending; ties by position, later first, so that the k selected
	// eigenvalues of each block are the top of its ascending list.
	slices.SortFunc(w.order, func(x, y eigPos) int {
		switch {
		case x.v > y.v:
			return -1
		case x.v < y.v:
			return 1
		}
		return y.p - x.p
	})
	for p := range w.col {
		w.col[p] = -1
	}
	for j := range k {
		w.col[w.order[j].p] = j
	}
	return nil
}

// inverseIteration computes into the rows of z the eigenvectors of T for
// the k selected eigenvalues, block by block, as LAPACK dstein does (with
// the eigenvalues of a block taken in descending order).
func (w *SymTopKWork) inverseIteration(n int) error {
	for b := 0; b+1 < len(w.blk); b++ {
		lo, hi := w.blk[b], w.blk[b+1]
		m := hi - lo
		for p := hi - 1; p >= lo && w.col[p] >= 0; p-- {
			clear(w.z[w.col[p]*n : w.col[p]*n+n])
		}
		if w.col[hi-1] < 0 {
			continue
		}
		if m == 1 {
			w.z[w.col[lo]*n+lo] = 1
			continue
		}
		d, e := w.d[lo:hi], w.e[lo:hi-1]
		onenrm := math.Max(math.Abs(d[0])+math.Abs(e[0]), math.Abs(d[m-1])+math.Abs(e[m-2]))
		for i := 1; i < m-1; i++ {
			onenrm = math.Max(onenrm, math.Abs(d[i])+math.Abs(e[i-1])+math.Abs(e[i]))
		}
		ortol := stOrtol * onenrm
		dtpcrt := math.Sqrt(0.1 / float64(m))

		w.grp = w.grp[:0]
		gp := 0 // w.grp[gp:] is the current cluster
		var xjm float64
		for p := hi - 1; p >= lo && w.col[p] >= 0; p-- {
			j := w.col[p]
			xj := w.ev[p]
			if len(w.grp) > 0 {
				// Separate the shifts of (nearly) equal eigenvalues.
				if pertol := 10 * math.Abs(stPrec*xj); xjm-xj < pertol {
					xj = xjm - pertol
				}
				if math.Abs(xj-xjm) > ortol {
					gp = len(w.grp)
				}
			}
			x := w.x[:m]
			w.src.Seed(uint64(j))
			for i := range x {
				x[i] = 2*w.src.Float64() - 1
			}
			ua, ub, uc, ud, piv := w.ua[:m], w.ub[:m-1], w.uc[:m-1], w.ud[:m], w.piv[:m-1]
			copy(ua, d)
			copy(ub, e)
			copy(uc, e)
			lagtf(ua, ub, uc, ud, piv, xj)
			tol := math.Abs(ua[0])
			for i := 1; i < m; i++ {
				tol = max(tol, math.Abs(ua[i]), math.Abs(ub[i-1]))
				if i >= 2 {
					tol = max(tol, math.Abs(ud[i-2]))
				}
			}
			if tol *= stEpsilon; tol == 0 {
				tol = stEpsilon
			}
			cluster := w.grp[gp:]
			converged := false
			for its, nrmchk := 0, 0; its < stMaxIts; its++ {
				big := maxAbs(x)
				if big == 0 { // everything was in the span of the cluster: restart
					for i := range x {
						x[i] = 2*w.src.Float64() - 1
					}
					big = maxAbs(x)
				}
				scl := float64(m) * onenrm * math.Max(stPrec, math.Abs(ua[m-1])) / big
				for i := range x {
					x[i] *= scl
				}
				lagts(ua, ub, uc, ud, piv, x, tol)
				if len(cluster) > 0 {
					// Modified Gram–Schmidt against the cluster, repeated
					// once if it cancelled more than half the norm.
					for pass := 0; pass < 2; pass++ {
						before := dot(x, x)
						for _, c := range cluster {
							zc := w.z[c*n+lo : c*n+hi]
							axpy(-dot(x, zc), zc, x)
						}
						if !(dot(x, x) < before/2) {
							break
						}
					}
				}
				nrm := maxAbs(x)
				if !(nrm <= math.MaxFloat64) { // overflow or NaN
					return ErrNoConvergence
				}
				if nrm < dtpcrt {
					continue
				}
				if nrmchk++; nrmchk < stExtra+1 {
					continue
				}
				converged = true
				break
			}
			if !converged {
				return ErrNoConvergence
			}
			s := 1 / nrm2(x)
			zj := w.z[j*n+lo : j*n+hi]
			for i, v := range x {
				zj[i] = s * v
			}
			w.grp = append(w.grp, j)
			xjm = xj
		}
	}
	return nil
}

func maxAbs(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}

// lagtf is LAPACK dlagtf: the factorization T − λI = P L U of the m×m
// tridiagonal T with diagonal a, super-diagonal b and sub-diagonal c, by
// Gaussian elimination with partial pivoting and implicit row scaling. On
// return a holds U's diagonal, b its first and d (m−2) its second
// super-diagonal, c the multipliers of L and piv the interchanges.
func lagtf(a, b, c, d []float64, piv []bool, lambda float64) {
	m := len(a)
	a[0] -= lambda
	if m == 1 {
		return
	}
	scale1 := math.Abs(a[0]) + math.Abs(b[0])
	for k := 0; k < m-1; k++ {
		a[k+1] -= lambda
		scale2 := math.Abs(c[k]) + math.Abs(a[k+1])
		if k < m-2 {
			scale2 += math.Abs(b[k+1])
		}
		var piv1 float64
		if a[k] != 0 {
			piv1 = math.Abs(a[k]) / scale1
		}
		switch {
		case c[k] == 0:
			piv[k] = false
			scale1 = scale2
			if k < m-2 {
				d[k] = 0
			}
		case math.Abs(c[k])/scale2 <= piv1:
			piv[k] = false
			scale1 = scale2
			c[k] /= a[k]
			a[k+1] -= c[k] * b[k]
			if k < m-2 {
				d[k] = 0
			}
		default:
			piv[k] = true
			mult := a[k] / c[k]
			a[k] = c[k]
			temp := a[k+1]
			a[k+1] = b[k] - mult*temp
			if k < m-2 {
				d[k] = b[k+1]
				b[k+1] = -mult * d[k]
			}
			b[k] = temp
			c[k] = mult
		}
	}
}

// lagts is LAPACK dlagts with job = −1: it overwrites y with the solution of
// (T − λI) x = y from lagtf's factorization, perturbing a diagonal element
// of U by multiples of tol where the division would overflow (in particular
// a zero pivot).
func lagts(a, b, c, d []float64, piv []bool, y []float64, tol float64) {
	m := len(a)
	for k := 1; k < m; k++ {
		if !piv[k-1] {
			y[k] -= c[k-1] * y[k-1]
		} else {
			yk := y[k]
			y[k-1], y[k] = yk, y[k-1]-c[k-1]*yk
		}
	}
	for k := m - 1; k >= 0; k-- {
		temp := y[k]
		switch {
		case k <= m-3:
			temp = y[k] - b[k]*y[k+1] - d[k]*y[k+2]
		case k == m-2:
			temp = y[k] - b[k]*y[k+1]
		}
		ak := a[k]
		pert := math.Copysign(tol, ak)
		for {
			absak := math.Abs(ak)
			if absak < 1 {
				if absak < stSfmin {
					if absak == 0 || math.Abs(temp)*stSfmin > absak {
						ak += pert
						pert *= 2
						continue
					}
					temp *= stBignum
					ak *= stBignum
				} else if math.Abs(temp) > absak*stBignum {
					ak += pert
					pert *= 2
					continue
				}
			}
			break
		}
		y[k] = temp / ak
	}
}
