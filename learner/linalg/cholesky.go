package linalg

// Growing Cholesky factor with rank-one updates and downdates.
//
// Uses: the ALD dictionary (ALD paper §3.1: l = L⁻¹k, α = κ − ‖l‖², append
// [lᵀ, √α]), NONS-ALD's Cholesky basis, PKAWV-Nyström's
// Gram factor and KORS (PKAWV paper §3.2, Algorithm 2: row updates LLᵀ + aaᵀ and the
// direct column extension, which needs no downdate).
//
// Choices: the factor is lower triangular (L Lᵀ = A); the PKAWV listing's upper R
// with RᵀR = G is R = Lᵀ. The update uses Givens rotations on [L v]; the
// downdate uses the LINPACK dchdd approach (solve L p = v, test ‖p‖ < 1,
// then rotations that keep the diagonal positive), which detects an
// indefinite result before touching L. The PKAWV listing's trick (pad,
// update then downdate) is not provided: the direct extension
// (ProjectionResidual + Append) gives the same factor without the fragile
// downdate (docs/algorithms/kernel-awv.md).

import (
	"fmt"
	"math"
)

// Cholesky is a lower-triangular factor L (n×n, positive diagonal) of a
// symmetric positive definite A = L Lᵀ that can grow by one row and column
// at a time. L lives in a capacity×capacity row-major buffer (stride =
// capacity), so Append does not reallocate until n reaches the capacity (it
// then doubles the capacity, copying). The zero value is an empty factor of
// capacity 0; NewCholesky pre-sizes. Not safe for concurrent use.
type Cholesky struct {
	n, stride int
	l         []float64 // stride×stride
	work      []float64 // 3·stride scratch
}

// NewCholesky returns an empty factor with room for capacity rows.
func NewCholesky(capacity int) *Cholesky {
	c := &Cholesky{}
	c.reserve(max(capacity, 0))
	return c
}

func (c *Cholesky) reserve(capacity int) {
	if capacity <= c.stride {
		return
	}
	l := make([]float64, capacity*capacity)
	for i := range c.n {
		copy(l[i*capacity:i*capacity+i+1], c.l[i*c.stride:i*c.stride+i+1])
	}
	c.l, c.stride = l, capacity
	c.work = make([]float64, 3*capacity)
}

// Size returns n.
func (c *Cholesky) Size() int { return c.n }

// Capacity returns the number of rows L can hold without reallocating.
func (c *Cholesky) Capacity() int { return c.stride }

// Reset empties the factor (n = 0), keeping its storage.
func (c *Cholesky) Reset() { c.n = 0 }

// Truncate keeps the leading n×n block of L, which is the factor of the
// leading n×n block of A (e.g. to roll back an Append). Panics unless
// 0 ≤ n ≤ Size().
func (c *Cholesky) Truncate(n int) {
	if n < 0 || n > c.n {
		panic("linalg: Cholesky.Truncate: n out of range")
	}
	c.n = n
}

// At returns L[i][j] (0 above the diagonal). Panics if out of range.
func (c *Cholesky) At(i, j int) float64 {
	if i < 0 || j < 0 || i >= c.n || j >= c.n {
		panic("linalg: Cholesky.At: index out of range")
	}
	if j > i {
		return 0
	}
	return c.l[i*c.stride+j]
}

// Row returns a read-only view of row i of L up to the diagonal (i+1
// entries), valid until the next Append beyond capacity. Use it to store
// the factor; Append the rows back to restore it.
func (c *Cholesky) Row(i int) []float64 {
	if i < 0 || i >= c.n {
		panic("linalg: Cholesky.Row: index out of range")
	}
	return c.l[i*c.stride : i*c.stride+i+1]
}

// LowerTo writes L (n×n, zeros above the diagonal) into the row-major dst.
// Panics if len(dst) < n².
func (c *Cholesky) LowerTo(dst []float64) {
	n := c.n
	if len(dst) < n*n {
		panic("linalg: Cholesky.LowerTo: dst too short")
	}
	for i := range n {
		copy(dst[i*n:i*n+i+1], c.l[i*c.stride:i*c.stride+i+1])
		clear(dst[i*n+i+1 : i*n+n])
	}
}

// Factorize sets L to the Cholesky factor of the n×n row-major a (only the
// lower triangle is read), growing the capacity if needed. Cost O(n³/3).
// Returns ErrNotPositiveDefinite or ErrNotFinite (the factor is then empty)
// if a pivot is not positive or not finite. Panics if len(a) < n².
func (c *Cholesky) Factorize(a []float64, n int) error {
	if len(a) < n*n {
		panic(fmt.Sprintf("linalg: Cholesky.Factorize: len(a)=%d < %d²", len(a), n))
	}
	c.reserve(n)
	c.n = 0
	for i := range n {
		row := c.l[i*c.stride : i*c.stride+i+1]
		for j := 0; j <= i; j++ {
			s := a[i*n+j]
			lj := c.l[j*c.stride : j*c.stride+j]
			s -= dot(lj, row[:j])
			if j < i {
				row[j] = s / c.l[j*c.stride+j]
				continue
			}
			if math.IsNaN(s) || math.IsInf(s, 0) {
				return ErrNotFinite
			}
			if s <= 0 {
				return ErrNotPositiveDefinite
			}
			row[i] = math.Sqrt(s)
		}
	}
	c.n = n
	return nil
}

// SolveL solves L x = b by forward substitution and writes x into dst
// (dst may alias b). Both have length n. Cost O(n²); no allocation.
// Panics on a shape mismatch.
func (c *Cholesky) SolveL(dst, b []float64) {
	n := c.n
	if len(dst) != n || len(b) != n {
		panic(fmt.Sprintf("linalg: Cholesky.SolveL: len(dst)=%d, len(b)=%d, n=%d", len(dst), len(b), n))
	}
	for i := range n {
		row := c.l[i*c.stride : i*c.stride+i+1]
		dst[i] = (b[i] - dot(row[:i], dst[:i])) / row[i]
	}
}

// SolveLT solves Lᵀ x = b by back substitution and writes x into dst
// (dst may alias b). Both have length n. Cost O(n²); no allocation.
// Panics on a shape mismatch.
func (c *Cholesky) SolveLT(dst, b []float64) {
	n := c.n
	if len(dst) != n || len(b) != n {
		panic(fmt.Sprintf("linalg: Cholesky.SolveLT: len(dst)=%d, len(b)=%d, n=%d", len(dst), len(b), n))
	}
	copy(dst, b)
	// Column-oriented: once x_i is known, remove its contribution L[i][j]x_i
	// from the equations j < i, which reads row i of L contiguously.
	for i := n - 1; i >= 0; i-- {
		row := c.l[i*c.stride : i*c.stride+i+1]
		xi := dst[i] / row[i]
		dst[i] = xi
		axpy(-xi, row[:i], dst[:i])
	}
}

// SolveVec solves A x = L Lᵀ x = b and writes x into dst (dst may alias
// b). Cost O(n²); no allocation. Panics on a shape mismatch.
func (c *Cholesky) SolveVec(dst, b []float64) {
	c.SolveL(dst, b)
	c.SolveLT(dst, dst)
}

// ProjectionResidual computes l = L⁻¹k into dst (length n) and returns
// kxx − ‖l‖², the Schur complement of A in [[A, k], [kᵀ, kxx]]. For a
// kernel Gram matrix this is ALD's projection residual α_t (ALD paper
// §3.1) and PKAWV-Nyström's ρ_mm² (pkawvnystrom.go); l is NONS-ALD's feature vector.
// The bordered matrix is positive definite iff the result is > 0; append
// with Append(dst, √residual). The result is not clipped (round-off can
// make it slightly negative; ALD clips at 0). Cost O(n²); no allocation.
// Panics on a shape mismatch.
func (c *Cholesky) ProjectionResidual(dst, k []float64, kxx float64) float64 {
	c.SolveL(dst, k)
	return kxx - dot(dst, dst)
}

// Append grows L by the row [rowᵀ, diag] (row has n entries), so that the
// factored matrix becomes [[A, L row], [(L row)ᵀ, ‖row‖² + diag²]]
// (the ALD dictionary's growth). With row = L⁻¹k and diag = √(kxx − ‖row‖²) this is the
// factor of [[A, k], [kᵀ, kxx]]. Returns ErrNotPositiveDefinite if diag is
// not > 0, or ErrNotFinite; the factor is then unchanged. No allocation
// while n < Capacity(). Panics if len(row) ≠ n.
func (c *Cholesky) Append(row []float64, diag float64) error {
	n := c.n
	if len(row) != n {
		panic(fmt.Sprintf("linalg: Cholesky.Append: len(row)=%d, n=%d", len(row), n))
	}
	if math.IsNaN(diag) || math.IsInf(diag, 0) || !allFinite(row) {
		return ErrNotFinite
	}
	if !(diag > 0) {
		return ErrNotPositiveDefinite
	}
	if n == c.stride {
		c.reserve(max(2*c.stride, 4))
	}
	dst := c.l[n*c.stride : n*c.stride+n+1]
	copy(dst, row)
	dst[n] = diag
	c.n++
	return nil
}

// RankOneUpdate replaces L by the factor of L Lᵀ + v vᵀ (the
// KORS/PKAWV row update of Algorithm 2). v (length n) is not modified. Uses n Givens
// rotations on [L v] (rotation k zeroes v_k against L[k][k]); backward
// stable; the diagonal stays positive. Cost O(n²), row by row (contiguous
// access); no allocation. Returns ErrNotFinite (L unchanged) if v is not
// finite. Panics if len(v) ≠ n.
func (c *Cholesky) RankOneUpdate(v []float64) error {
	n := c.n
	if len(v) != n {
		panic(fmt.Sprintf("linalg: Cholesky.RankOneUpdate: len(v)=%d, n=%d", len(v), n))
	}
	if !allFinite(v) {
		return ErrNotFinite
	}
	st := c.stride
	cs, sn := c.work[:n], c.work[st:st+n]
	// Row i meets rotations 0..i−1 (fixed by the rows above it) in order,
	// carrying the running entry w of v; its diagonal then defines
	// rotation i.
	for i := range n {
		row := c.l[i*st : i*st+i+1]
		w := v[i]
		for k := range i {
			lik := row[k]
			row[k] = cs[k]*lik + sn[k]*w
			w = cs[k]*w - sn[k]*lik
		}
		if w == 0 {
			cs[i], sn[i] = 1, 0
			continue
		}
		lii := row[i]
		r := math.Hypot(lii, w)
		cs[i], sn[i] = lii/r, w/r
		row[i] = r
	}
	return nil
}

// RankOneDowndate replaces L by the factor of L Lᵀ − v vᵀ. v (length n) is
// not modified. It first solves L p = v: L Lᵀ − v vᵀ = L (I − p pᵀ) Lᵀ is
// positive definite iff ‖p‖ < 1. If ρ² = 1 − ‖p‖² ≤ n·ε (not numerically
// positive definite) it returns ErrNotPositiveDefinite, and ErrNotFinite for
// a non-finite v; L is unchanged in both cases (no NaN is ever written).
// Otherwise n Givens rotations that zero p against ρ (LINPACK dchdd) give a
// factor with positive diagonal; the relative accuracy degrades like
// 1/ρ² as the result approaches singularity. Cost O(n²), row by row; no
// allocation. Panics if len(v) ≠ n.
func (c *Cholesky) RankOneDowndate(v []float64) error {
	n := c.n
	if len(v) != n {
		panic(fmt.Sprintf("linalg: Cholesky.RankOneDowndate: len(v)=%d, n=%d", len(v), n))
	}
	if !allFinite(v) {
		return ErrNotFinite
	}
	st := c.stride
	p := c.work[:n]
	cs, sn := c.work[st:st+n], c.work[2*st:2*st+n]
	c.SolveL(p, v)
	pn := nrm2(p)
	rho2 := (1 - pn) * (1 + pn)
	if !(rho2 > float64(max(n, 1))*eps) {
		return ErrNotPositiveDefinite
	}
	// Rotation i (i = n−1 … 0) acts in the plane (p_i, t), t starting at ρ,
	// and zeroes p_i; it does not depend on L. Applied to column i of L
	// together with a work row w (initially 0) — L̃[:,i] = c·L[:,i] − s·w,
	// w ← s·L[:,i] + c·w — it makes [L̃ w] equal [L 0] times an orthogonal
	// matrix with w = v, so L̃ L̃ᵀ = L Lᵀ − v vᵀ, and L̃[i][i] = c·L[i][i] > 0
	// because w_i = 0 at that point. Row j meets rotations j, j−1, …, 0.
	t := math.Sqrt(rho2)
	for i := n - 1; i >= 0; i-- {
		r := math.Hypot(t, p[i])
		cs[i], sn[i] = t/r, p[i]/r
		t = r
	}
	for j := range n {
		row := c.l[j*st : j*st+j+1]
		var w float64
		for i := j; i >= 0; i-- {
			lji := row[i]
			row[i] = cs[i]*lji - sn[i]*w
			w = sn[i]*lji + cs[i]*w
		}
	}
	return nil
}

// LogDet returns log det A = 2 Σ log L[i][i].
func (c *Cholesky) LogDet() float64 {
	var s float64
	for i := range c.n {
		s += math.Log(c.l[i*c.stride+i])
	}
	return 2 * s
}
