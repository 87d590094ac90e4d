package linalg

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/lapack/gonum"

	"okstream/learner/rng"
)

// randSym returns a symmetric n×n matrix with N(0, 1) entries.
func randSym(src *rng.Source, n int) []float64 {
	a := make([]float64, n*n)
	for i := range n {
		for j := i; j < n; j++ {
			v := src.Normal()
			a[i*n+j], a[j*n+i] = v, v
		}
	}
	return a
}

// gramOf is the Gaussian-kernel Gram matrix of the rows of the n×d x.
func gramOf(x []float64, n, d int, sigma float64) []float64 {
	g := make([]float64, n*n)
	for i := range n {
		for j := range n {
			g[i*n+j] = math.Exp(-sqDist(x[i*d:i*d+d], x[j*d:j*d+d]) / (2 * sigma * sigma))
		}
	}
	return g
}

// similar returns Q a Qᵀ for a random orthogonal Q (a dense matrix with the
// spectrum of a).
func similar(src *rng.Source, a []float64, n int) []float64 {
	q := randOrth(src, n, n)
	qa := make([]float64, n*n)
	mulNN(qa, q, a, n, n, n)
	out := make([]float64, n*n)
	for i := range n {
		for j := range n {
			out[i*n+j] = dot(qa[i*n:i*n+n], q[j*n:j*n+n])
		}
	}
	Symmetrize(out, n)
	return out
}

// topKErrs are SymTopK's errors on one matrix, measured against SymEig
// (gonum's full decomposition, Dsytrd + Dorgtr + Dsteqr):
//
//	val:  max_j |vals_j − λ_j| / ‖A‖₂
//	res:  ‖A V − V diag(vals)‖_F / (‖A‖_F √k)
//	orth: ‖VᵀV − I‖_max
//	ey:   |‖A − V Λ Vᵀ‖_F − ‖A − V_k Λ_k V_kᵀ‖_F| / ‖A‖_F with V_k, Λ_k the
//	      top k of the full decomposition (Eckart–Young: both are optimal)
type topKErrs struct{ val, res, orth, ey float64 }

func symTopKErrs(t testing.TB, a []float64, n, k int, w *SymTopKWork) topKErrs {
	t.Helper()
	vals := make([]float64, k)
	vecs := make([]float64, n*k)
	if err := SymTopK(vals, vecs, a, n, k, w); err != nil {
		t.Fatalf("n=%d k=%d: %v", n, k, err)
	}
	for j := 1; j < k; j++ {
		if vals[j] > vals[j-1] {
			t.Fatalf("n=%d k=%d: eigenvalues not descending at %d: %v > %v", n, k, j, vals[j], vals[j-1])
		}
	}
	ref, rvecs, err := SymEig(a, n)
	if err != nil {
		t.Fatal(err)
	}
	anorm := math.Max(math.Abs(ref[0]), math.Abs(ref[n-1]))
	afro := fro(a)
	scale := func(x, s float64) float64 {
		if s > 0 {
			return x / s
		}
		return x
	}
	var e topKErrs
	for j := range k {
		e.val = max(e.val, scale(math.Abs(vals[j]-ref[j]), anorm))
	}
	var res float64
	for i := range n {
		for j := range k {
			var s float64
			for l := range n {
				s += a[i*n+l] * vecs[l*k+j]
			}
			r := s - vecs[i*k+j]*vals[j]
			res += r * r
		}
	}
	e.res = scale(math.Sqrt(res), afro*math.Sqrt(float64(k)))
	e.orth = orthErr(vecs, n, k)
	// ‖A − V diag(w) Vᵀ‖_F over the first k columns of the n×ld v.
	approxErr := func(v []float64, ld int, w []float64) float64 {
		var s float64
		for i := range n {
			for j := range n {
				var acc float64
				for l := range k {
					acc += v[i*ld+l] * w[l] * v[j*ld+l]
				}
				r := a[i*n+j] - acc
				s += r * r
			}
		}
		return math.Sqrt(s)
	}
	// Ours with our eigenvalues against the reference's best rank k.
	e.ey = scale(math.Abs(approxErr(vecs, k, vals)-approxErr(rvecs, n, ref)), afro)
	return e
}

type topKWorst struct{ val, res, orth, ey worst }

func newTopKWorst() *topKWorst {
	return &topKWorst{
		val:  worst{name: "eigenvalues vs SymEig, / ‖A‖₂"},
		res:  worst{name: "‖AV − VΛ‖_F / (‖A‖_F √k)"},
		orth: worst{name: "‖VᵀV − I‖_max"},
		ey:   worst{name: "rank-k error vs full decomposition, / ‖A‖_F"},
	}
}

func (w *topKWorst) see(e topKErrs) {
	w.val.see(e.val)
	w.res.see(e.res)
	w.orth.see(e.orth)
	w.ey.see(e.ey)
}

func (w *topKWorst) report(t *testing.T) {
	t.Helper()
	w.val.report(t, 1e-10)
	w.res.report(t, 1e-9)
	w.orth.report(t, 1e-10)
	w.ey.report(t, 1e-9)
}

func ksFor(n int) []int {
	ks := []int{1}
	if k := n / 10; k > 1 {
		ks = append(ks, k)
	}
	if n > 1 {
		ks = append(ks, n)
	}
	return ks
}

// Random symmetric (indefinite) matrices: eigenvalues, residuals,
// orthonormality and the rank-k error against gonum's full decomposition.
// One SymTopKWork is reused across all sizes (growing and shrinking).
func TestSymTopK_MatchesSymEig(t *testing.T) {
	src := rng.New(70)
	w := newTopKWorst()
	var work SymTopKWork
	for _, n := range []int{1, 2, 5, 50, 200} {
		for rep := range 3 {
			a := randSym(src, n)
			if rep == 2 {
				for i := range a {
					a[i] *= 1e-5 // scale invariance of the tolerances
				}
			}
			for _, k := range ksFor(n) {
				w.see(symTopKErrs(t, a, n, k, &work))
			}
		}
	}
	w.report(t)
}

// PSD Gaussian-kernel Gram matrices: well and badly conditioned (σ large:
// eigenvalues fall to round-off long before k), rank deficient through
// duplicate points, and with exactly repeated eigenvalues (points on a
// regular polygon give a circulant Gram matrix, eigenvalues in pairs; the
// polygon with every point twice adds an exact null space).
func TestSymTopK_GaussianGram(t *testing.T) {
	src := rng.New(71)
	w := newTopKWorst()
	var work SymTopKWork
	type tc struct {
		name string
		n    int
		g    []float64
	}
	var cases []tc
	for _, sigma := range []float64{0.5, 1, 5, 20} {
		cases = append(cases, tc{fmt.Sprintf("random σ=%g", sigma), 150, gaussGram(src, 150, 3, sigma, 0)})
	}
	// 160 points drawn (with repetition) from 40 distinct ones: rank ≤ 40.
	pool := randn(src, 40*3)
	x := make([]float64, 160*3)
	for i := range 160 {
		p := src.IntN(40)
		copy(x[i*3:i*3+3], pool[p*3:p*3+3])
	}
	cases = append(cases, tc{"duplicates 160 of 40", 160, gramOf(x, 160, 3, 1)})
	// 25 points, each exactly 4 times in a row: rank 25, 75 zero eigenvalues.
	x = make([]float64, 100*2)
	for i := range 25 {
		p := randn(src, 2)
		for r := range 4 {
			copy(x[(4*i+r)*2:], p)
		}
	}
	cases = append(cases, tc{"each point 4×", 100, gramOf(x, 100, 2, 1)})
	for _, m := range []int{64, 100} {
		poly := make([]float64, 2*m)
		for i := range m {
			s, c := math.Sincos(2 * math.Pi * float64(i) / float64(m))
			poly[2*i], poly[2*i+1] = c, s
		}
		cases = append(cases, tc{fmt.Sprintf("%d-gon", m), m, gramOf(poly, m, 2, 0.3)})
		cases = append(cases, tc{fmt.Sprintf("%d-gon σ=2", m), m, gramOf(poly, m, 2, 2)})
		twice := make([]float64, 4*m)
		copy(twice, poly)
		copy(twice[2*m:], poly)
		cases = append(cases, tc{fmt.Sprintf("%d-gon twice", m), 2 * m, gramOf(twice, 2*m, 2, 0.5)})
	}
	for _, c := range cases {
		for _, k := range []int{1, c.n / 10, c.n / 3, c.n / 2, c.n} {
			e := symTopKErrs(t, c.g, c.n, k, &work)
			if e.orth > 1e-10 || e.res > 1e-9 || e.ey > 1e-9 || e.val > 1e-10 {
				t.Logf("%s n=%d k=%d: %+v", c.name, c.n, k, e)
			}
			w.see(e)
		}
	}
	w.report(t)
}

// Exactly repeated top eigenvalues: identity, zero, a block diagonal of
// identical blocks (every eigenvalue four times, T splits), and a dense
// matrix with a 5-fold top eigenvalue (cut by k = 3 inside the cluster).
func TestSymTopK_RepeatedTopEigenvalue(t *testing.T) {
	src := rng.New(72)
	w := newTopKWorst()
	var work SymTopKWork

	check := func(name string, a []float64, n int, ks []int) {
		for _, k := range ks {
			e := symTopKErrs(t, a, n, k, &work)
			if e.orth > 1e-10 {
				t.Errorf("%s k=%d: ‖VᵀV − I‖ = %.3g", name, k, e.orth)
			}
			w.see(e)
		}
	}
	check("identity", identity(30, 1), 30, []int{1, 5, 30})
	check("2·identity", identity(7, 2), 7, []int{3, 7})
	check("zero", make([]float64, 20*20), 20, []int{1, 20})

	const nb, bs = 4, 8
	blk := gaussGram(src, bs, 2, 1, 0.1)
	bd := make([]float64, nb*bs*nb*bs)
	for b := range nb {
		for i := range bs {
			for j := range bs {
				bd[(b*bs+i)*nb*bs+b*bs+j] = blk[i*bs+j]
			}
		}
	}
	check("block diagonal", bd, nb*bs, []int{1, 4, 6, 10, nb * bs})
	check("block diagonal, rotated", similar(src, bd, nb*bs), nb*bs, []int{4, 6, 10})

	const n = 60
	spec := make([]float64, n*n)
	for i := range n {
		switch {
		case i < 5:
			spec[i*n+i] = 3
		case i < 40:
			spec[i*n+i] = 1 / float64(i)
		}
	}
	dense := similar(src, spec, n)
	check("5-fold top, rotated", dense, n, []int{1, 3, 5, 8, 45, n})
	w.report(t)
}

// Glued Wilkinson matrices (W₂₁⁺ blocks glued by δ = 1e-10): eigenvalue
// pairs agree to ~1e-14 within a block and the gluing creates clusters of
// near-identical eigenvalues across blocks, the classic hard case for
// inverse iteration. Also a graded diagonal-dominant tridiagonal.
func TestSymTopK_HardTridiagonals(t *testing.T) {
	src := rng.New(73)
	w := newTopKWorst()
	var work SymTopKWork
	const m, copies = 21, 5
	const n = m * copies
	glued := make([]float64, n*n)
	for c := range copies {
		for i := range m {
			p := c*m + i
			glued[p*n+p] = math.Abs(float64(10 - i))
			if p+1 < n {
				off := 1.0
				if i == m-1 {
					off = 1e-10
				}
				glued[p*n+p+1], glued[(p+1)*n+p] = off, off
			}
		}
	}
	graded := make([]float64, 80*80)
	for i := range 80 {
		graded[i*80+i] = math.Pow(10, -float64(i)/8)
		if i+1 < 80 {
			v := 0.5 * math.Pow(10, -float64(i)/8)
			graded[i*80+i+1], graded[(i+1)*80+i] = v, v
		}
	}
	for _, c := range []struct {
		name string
		n    int
		a    []float64
	}{
		{"glued Wilkinson", n, glued},
		{"glued Wilkinson, rotated", n, similar(src, glued, n)},
		{"graded", 80, graded},
		{"graded, rotated", 80, similar(src, graded, 80)},
	} {
		for _, k := range []int{1, 2, 10, 20, c.n / 2, c.n} {
			e := symTopKErrs(t, c.a, c.n, k, &work)
			if e.orth > 1e-10 || e.res > 1e-9 {
				t.Logf("%s k=%d: %+v", c.name, k, e)
			}
			w.see(e)
		}
	}
	w.report(t)
}

// Only the upper triangle is read, a is not modified, and the output is a
// deterministic function of the input: bit-identical with a fresh, a reused
// and a nil work.
func TestSymTopK_UpperOnlyUnmodifiedDeterministic(t *testing.T) {
	src := rng.New(74)
	for _, n := range []int{1, 3, 40, 130} {
		a := gaussGram(src, n, 3, 1, 0)
		orig := append([]float64(nil), a...)
		k := max(1, n/4)
		run := func(a []float64, w *SymTopKWork) ([]float64, []float64) {
			vals := make([]float64, k)
			vecs := make([]float64, n*k)
			if err := SymTopK(vals, vecs, a, n, k, w); err != nil {
				t.Fatal(err)
			}
			return vals, vecs
		}
		var work SymTopKWork
		v0, z0 := run(a, &work)
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(orig[i]) {
				t.Fatalf("n=%d: a[%d] modified", n, i)
			}
		}
		v1, z1 := run(a, &work)
		v2, z2 := run(a, nil)
		junk := append([]float64(nil), a...)
		for i := range n {
			for j := range i {
				junk[i*n+j] = 1e3 * src.Normal() // strictly lower: ignored
			}
		}
		v3, z3 := run(junk, new(SymTopKWork))
		for r, got := range [][2][]float64{{v1, z1}, {v2, z2}, {v3, z3}} {
			for i := range v0 {
				if math.Float64bits(got[0][i]) != math.Float64bits(v0[i]) {
					t.Fatalf("n=%d run %d: vals[%d] %v != %v", n, r+1, i, got[0][i], v0[i])
				}
			}
			for i := range z0 {
				if math.Float64bits(got[1][i]) != math.Float64bits(z0[i]) {
					t.Fatalf("n=%d run %d: vecs[%d] %v != %v", n, r+1, i, got[1][i], z0[i])
				}
			}
		}
	}
}

// NaN or ±Inf anywhere in a (even in the unread lower triangle) gives
// ErrNotFinite with vals and vecs untouched.
func TestSymTopK_NotFinite(t *testing.T) {
	src := rng.New(75)
	const n, k = 12, 3
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, at := range [][2]int{{0, 0}, {2, 7}, {7, 2}, {n - 1, n - 1}} {
			a := randSym(src, n)
			a[at[0]*n+at[1]] = bad
			vals := []float64{7, 7, 7}
			vecs := make([]float64, n*k)
			for i := range vecs {
				vecs[i] = 7
			}
			err := SymTopK(vals, vecs, a, n, k, nil)
			if !errors.Is(err, ErrNotFinite) {
				t.Fatalf("%v at %v: err = %v, want ErrNotFinite", bad, at, err)
			}
			for _, v := range append(vals, vecs...) {
				if v != 7 {
					t.Fatalf("%v at %v: destination modified", bad, at)
				}
			}
		}
	}
}

func TestSymTopK_PanicsOnShape(t *testing.T) {
	a := identity(4, 1)
	for _, c := range []struct {
		name       string
		vals, vecs []float64
		a          []float64
		n, k       int
	}{
		{"k=0", make([]float64, 1), make([]float64, 4), a, 4, 0},
		{"k>n", make([]float64, 5), make([]float64, 20), a, 4, 5},
		{"short a", make([]float64, 2), make([]float64, 8), a[:15], 4, 2},
		{"short vals", make([]float64, 1), make([]float64, 8), a, 4, 2},
		{"short vecs", make([]float64, 2), make([]float64, 7), a, 4, 2},
		{"n=0", make([]float64, 1), make([]float64, 1), nil, 0, 1},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", c.name)
				}
			}()
			_ = SymTopK(c.vals, c.vecs, c.a, c.n, c.k, nil)
		}()
	}
}

// A warmed-up work makes SymTopK allocation-free. Sizes stay below gonum's
// parallel Dgemm (reached by the blocked back-transformation once n−1 > 192,
// or n−1 and k both > 64), which allocates a little.
func TestSymTopK_NoAllocation(t *testing.T) {
	src := rng.New(76)
	for _, c := range []struct{ n, k int }{{1, 1}, {10, 3}, {60, 6}, {60, 60}, {150, 15}, {190, 40}} {
		a := gaussGram(src, c.n, 3, 1, 0)
		vals := make([]float64, c.k)
		vecs := make([]float64, c.n*c.k)
		var work SymTopKWork
		if err := SymTopK(vals, vecs, a, c.n, c.k, &work); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(10, func() {
			if err := SymTopK(vals, vecs, a, c.n, c.k, &work); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("n=%d k=%d: %v allocations per call", c.n, c.k, allocs)
		}
	}
}

// benchMatrices are the benchmark inputs: a Gaussian-kernel Gram matrix
// (d = 3, σ = 1, ridge 1e-6; fast-decaying spectrum, the intended use) and a
// random symmetric one (N(0, 1) entries; a spread-out spectrum, on which the
// full decompositions' QR iterations are slower).
func benchMatrices(n int) []struct {
	name string
	a    []float64
} {
	return []struct {
		name string
		a    []float64
	}{
		{"gram", gaussGram(rng.New(9), n, 3, 1, 1e-6)},
		{"random", randSym(rng.New(10), n)},
	}
}

// BenchmarkSymTopK: the top k = n/10 eigenpairs. Compare with
// BenchmarkSymTopKReference (the full decompositions used before: SymEig
// and TruncatedSVD) on the same matrices:
//
//	go test -run '^$' -bench SymTopK -benchmem ./learner/linalg/
func BenchmarkSymTopK(b *testing.B) {
	for _, n := range []int{100, 200, 500, 1000} {
		k := n / 10
		for _, m := range benchMatrices(n) {
			b.Run(fmt.Sprintf("%s/n=%d,k=%d", m.name, n, k), func(b *testing.B) {
				vals := make([]float64, k)
				vecs := make([]float64, n*k)
				var work SymTopKWork
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := SymTopK(vals, vecs, m.a, n, k, &work); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSymTopKReference: the same problems through the full
// decompositions, SymEig (gonum EigenSym: Dsytrd, Dorgtr, Dsteqr) and
// TruncatedSVD (Dgesvd) truncated to k = n/10.
func BenchmarkSymTopKReference(b *testing.B) {
	for _, n := range []int{100, 200, 500, 1000} {
		k := n / 10
		for _, m := range benchMatrices(n) {
			b.Run(fmt.Sprintf("SymEig/%s/n=%d", m.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, _, err := SymEig(m.a, n); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("TruncatedSVD/%s/n=%d,k=%d", m.name, n, k), func(b *testing.B) {
				var f TruncSVD
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if err := TruncatedSVD(&f, m.a, n, n, k); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// SymTopK on matrices of extreme magnitude (entries from 2⁻¹⁰⁰⁰ to 2⁹⁰⁰,
// where gonum's Dsterf would rescale a block and, in gonum v0.17, panic in
// Dlascl, and inverse iteration would overflow): the eigenvalues are those
// of the unscaled matrix times the power-of-two scale.
func TestSymTopKExtremeScale(t *testing.T) {
	src := rng.New(59)
	const n, k = 12, 4
	a := randSym(src, n)
	vals, vecs := make([]float64, k), make([]float64, n*k)
	if err := SymTopK(vals, vecs, a, n, k, nil); err != nil {
		t.Fatal(err)
	}
	for _, exp := range []int{900, 800, 700, 600, 520, -420, -600, -900, -1000} {
		b := make([]float64, len(a))
		for i, v := range a {
			b[i] = math.Ldexp(v, exp)
		}
		got, gv := make([]float64, k), make([]float64, n*k)
		if err := SymTopK(got, gv, b, n, k, nil); err != nil {
			t.Errorf("2^%d: %v", exp, err)
			continue
		}
		for j := range k {
			want := math.Ldexp(vals[j], exp)
			if d := math.Abs(got[j]-want) / math.Abs(want); !(d < 1e-12) {
				t.Errorf("2^%d: eigenvalue %d = %g, want %g (relative error %.2g)", exp, j, got[j], want, d)
			}
		}
	}
}

// dsterf on one block of extreme magnitude, which gonum's Dsterf alone
// cannot take (it panics in Dlascl): the eigenvalues are those of the same
// block at unit scale, scaled back.
func TestDsterfExtremeBlock(t *testing.T) {
	d0, e0 := []float64{3, 1, 2, 5}, []float64{0.5, 0.25, 0.75}
	impl := gonum.Implementation{}
	want := slices.Clone(d0)
	if !impl.Dsterf(4, want, slices.Clone(e0)) {
		t.Fatal("reference Dsterf failed")
	}
	for _, exp := range []int{1000, 600, -500, -1000} {
		d, e := slices.Clone(d0), slices.Clone(e0)
		for i := range d {
			d[i] = math.Ldexp(d[i], exp)
		}
		for i := range e {
			e[i] = math.Ldexp(e[i], exp)
		}
		if !dsterf(impl, d, e) {
			t.Fatalf("2^%d: no convergence", exp)
		}
		for i := range d {
			if w := math.Ldexp(want[i], exp); math.Abs(d[i]-w) > 1e-14*math.Abs(w) {
				t.Errorf("2^%d: eigenvalue %d = %g, want %g", exp, i, d[i], w)
			}
		}
	}
}
