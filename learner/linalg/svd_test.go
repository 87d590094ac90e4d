package linalg

import (
	"errors"
	"math"
	"testing"

	"okstream/learner/rng"
)

func logspace(hi, lo float64, r int) []float64 {
	s := make([]float64, r)
	for i := range s {
		s[i] = math.Pow(10, hi+(lo-hi)*float64(i)/float64(max(r-1, 1)))
	}
	return s
}

func TestTruncatedSVD_MatchesGonum(t *testing.T) {
	src := rng.New(70)
	ws, wr, wo := worst{name: "singular values"}, worst{name: "reconstruction"}, worst{name: "orthonormality"}
	for _, tc := range []struct {
		m, n, k int
		spec    []float64
	}{
		{30, 20, 5, nil},
		{20, 30, 20, nil},
		{40, 40, 10, logspace(0, -12, 8)}, // rank 8 < k: zero tail, still orthonormal
		{50, 35, 12, logspace(0, -12, 35)},
	} {
		var a []float64
		if tc.spec == nil {
			a = randn(src, tc.m*tc.n)
		} else {
			a = withSpectrum(src, tc.m, tc.n, tc.spec)
		}
		var f TruncSVD
		if err := TruncatedSVD(&f, a, tc.m, tc.n, tc.k); err != nil {
			t.Fatal(err)
		}
		best, s := refBestRankK(t, a, tc.m, tc.n, tc.k)
		for i := range tc.k {
			ws.see(math.Abs(f.S[i]-s[i]) / s[0])
		}
		got := make([]float64, tc.m*tc.n)
		f.Reconstruct(got)
		wr.see(diffFro(got, best) / fro(a))
		wo.see(max(orthErr(f.U, tc.m, tc.k), orthErr(f.V, tc.n, tc.k)))
	}
	ws.report(t, 1e-13)
	wr.report(t, 1e-13)
	wo.report(t, 1e-13)
}

// With rank(A) ≤ k + oversample the range finder captures range(A), so the
// randomized SVD is exact up to rounding, also for a spectrum spanning
// 1 … 1e-12; with a decaying full-rank spectrum it is near-optimal, and the
// result is a deterministic function of the seed.
func TestRandomizedSVD_ExactOnLowRankAndDeterministic(t *testing.T) {
	src := rng.New(71)
	w := worst{name: "RSVD on rank ≤ l (relative reconstruction)"}
	for _, tc := range []struct {
		m, n, k, p, q int
		spec          []float64
	}{
		{60, 40, 8, 4, 0, logspace(0, -1, 10)},
		{40, 60, 10, 5, 1, logspace(0, -12, 12)},
		{100, 100, 30, 10, 2, logspace(1, -3, 30)},
	} {
		a := withSpectrum(src, tc.m, tc.n, tc.spec)
		var f TruncSVD
		if err := RandomizedSVD(&f, a, tc.m, tc.n, tc.k, tc.p, tc.q, rng.New(5)); err != nil {
			t.Fatal(err)
		}
		best, _ := refBestRankK(t, a, tc.m, tc.n, tc.k)
		got := make([]float64, tc.m*tc.n)
		f.Reconstruct(got)
		w.see(diffFro(got, best) / fro(a))
		if e := max(orthErr(f.U, tc.m, tc.k), orthErr(f.V, tc.n, tc.k)); e > 1e-13 {
			t.Errorf("orthonormality %g", e)
		}
		var g TruncSVD
		if err := RandomizedSVD(&g, a, tc.m, tc.n, tc.k, tc.p, tc.q, rng.New(5)); err != nil {
			t.Fatal(err)
		}
		for i := range f.U {
			if f.U[i] != g.U[i] {
				t.Fatal("RSVD not deterministic for a fixed seed")
			}
		}
	}
	w.report(t, 1e-10)

	// Decaying full-rank spectrum σᵢ = 1/i: error within a few % of optimal.
	const m, n, k = 80, 80, 10
	spec := make([]float64, n)
	for i := range spec {
		spec[i] = 1 / float64(i+1)
	}
	a := withSpectrum(src, m, n, spec)
	best, _ := refBestRankK(t, a, m, n, k)
	eBest := diffFro(a, best)
	for _, q := range []int{0, 1, 2} {
		var f TruncSVD
		if err := RandomizedSVD(&f, a, m, n, k, 10, q, rng.New(6)); err != nil {
			t.Fatal(err)
		}
		got := make([]float64, m*n)
		f.Reconstruct(got)
		ratio := diffFro(a, got) / eBest
		t.Logf("σᵢ = 1/i, k=10, p=10, q=%d: error ×%.4f optimal", q, ratio)
		if ratio > 1.5 || ratio < 1-1e-12 {
			t.Errorf("q=%d: ratio %v", q, ratio)
		}
	}
	var f TruncSVD
	bad := randn(src, 16)
	bad[0] = math.NaN()
	if err := RandomizedSVD(&f, bad, 4, 4, 2, 1, 1, rng.New(1)); !errors.Is(err, ErrNotFinite) {
		t.Fatalf("NaN input: %v", err)
	}
}

// The four Moore–Penrose conditions on random (tall, wide, square),
// rank-deficient and ill-conditioned matrices; errors relative to the norms
// involved. For κ up to 1e12 (all singular values above the MATLAB
// tolerance) the conditions hold to O(ε·κ), as for any backward-stable
// pseudo-inverse; the worst case is reported per class.
func TestPinv_MoorePenrose(t *testing.T) {
	src := rng.New(72)
	type class struct {
		name string
		m, n int
		spec []float64 // nil: Gaussian
		rank int       // expected numerical rank
		tol  float64
	}
	classes := []class{
		{"random tall 30×20", 30, 20, nil, 20, 1e-13},
		{"random wide 20×30", 20, 30, nil, 20, 1e-13},
		{"random square 25×25", 25, 25, nil, 25, 1e-11},
		{"rank-deficient 30×20 rank 7", 30, 20, logspace(0, -1, 7), 7, 1e-13},
		{"rank-deficient 20×40 rank 3 + 1e-17 noise", 20, 40, logspace(0, 0, 3), 3, 1e-13},
		{"ill-conditioned 40×30 κ=1e6", 40, 30, logspace(0, -6, 30), 30, 1e-9},
		{"ill-conditioned 40×30 κ=1e12", 40, 30, logspace(0, -12, 30), 30, 1e-3},
		{"FORKS Φ_pm shape 100×20 κ=1e8", 100, 20, logspace(2, -6, 20), 20, 1e-7},
	}
	var work SVDWork
	for _, c := range classes {
		var a []float64
		if c.spec == nil {
			a = randn(src, c.m*c.n)
		} else {
			a = withSpectrum(src, c.m, c.n, c.spec)
			if c.rank < len(c.spec) || c.name[len(c.name)-5:] == "noise" {
				for i := range a {
					a[i] += 1e-17 * src.Normal()
				}
			}
		}
		m, n := c.m, c.n
		x := make([]float64, n*m)
		rank, err := Pinv(x, a, m, n, -1, &work)
		if err != nil {
			t.Fatal(err)
		}
		if rank != c.rank {
			t.Errorf("%s: rank %d, want %d", c.name, rank, c.rank)
		}
		ax := make([]float64, m*m)
		xa := make([]float64, n*n)
		Mul(ax, a, x, m, n, m)
		Mul(xa, x, a, n, m, n)
		axa := make([]float64, m*n)
		xax := make([]float64, n*m)
		Mul(axa, ax, a, m, m, n)
		Mul(xax, xa, x, n, n, m)
		asym := func(s []float64, d int) float64 {
			var e float64
			for i := range d {
				for j := range d {
					e += (s[i*d+j] - s[j*d+i]) * (s[i*d+j] - s[j*d+i])
				}
			}
			return math.Sqrt(e) / fro(s)
		}
		e1, e2 := relErr(axa, a), relErr(xax, x)
		e3, e4 := asym(ax, m), asym(xa, n)
		ref := relErr(x, refPinv(t, a, m, n))
		e := max(e1, e2, e3, e4)
		t.Logf("%-42s rank %2d  AXA=A %.1e  XAX=X %.1e  (AX)ᵀ=AX %.1e  (XA)ᵀ=XA %.1e  vs gonum-pinv %.1e", c.name, rank, e1, e2, e3, e4, ref)
		if e > c.tol || ref > c.tol {
			t.Errorf("%s: Penrose error %.2g, vs reference %.2g (tolerance %.0g)", c.name, e, ref, c.tol)
		}
	}
	// An explicit tolerance truncates; zero and non-finite inputs.
	a := withSpectrum(src, 10, 10, []float64{1, 1e-3, 1e-6})
	x := make([]float64, 100)
	if r, _ := Pinv(x, a, 10, 10, 1e-4, nil); r != 2 {
		t.Errorf("explicit tol: rank %d, want 2", r)
	}
	if r, err := Pinv(x, make([]float64, 100), 10, 10, -1, nil); r != 0 || err != nil || fro(x) != 0 {
		t.Errorf("zero matrix: rank %d, err %v, ‖X‖ %g", r, err, fro(x))
	}
	a[7] = math.Inf(1)
	if _, err := Pinv(x, a, 10, 10, -1, nil); !errors.Is(err, ErrNotFinite) {
		t.Errorf("Inf input: %v", err)
	}
}

func TestMatVecAndMul(t *testing.T) {
	src := rng.New(73)
	a := randn(src, 12)
	x := randn(src, 4)
	y := make([]float64, 3)
	MatVec(y, a, 3, 4, x)
	z := randn(src, 3)
	w := make([]float64, 4)
	MatTVec(w, a, 3, 4, z)
	for i := range 3 {
		if math.Abs(y[i]-dot(a[i*4:i*4+4], x)) > 1e-15 {
			t.Fatal("MatVec")
		}
	}
	for j := range 4 {
		var s float64
		for i := range 3 {
			s += a[i*4+j] * z[i]
		}
		if math.Abs(w[j]-s) > 1e-15 {
			t.Fatal("MatTVec")
		}
	}
	b := randn(src, 8)
	c := make([]float64, 6)
	Mul(c, a, b, 3, 4, 2)
	for i := range 3 {
		for j := range 2 {
			var s float64
			for l := range 4 {
				s += a[i*4+l] * b[l*2+j]
			}
			if math.Abs(c[i*2+j]-s) > 1e-14 {
				t.Fatal("Mul")
			}
		}
	}
	sym := []float64{1, 2, 4, 3}
	Symmetrize(sym, 2)
	if sym[1] != 3 || sym[2] != 3 {
		t.Fatal("Symmetrize")
	}
}

// The dense helpers take gonum's BLAS kernels from length blasMin on and
// plain loops below: both paths agree with a direct sum.
func TestDenseHelpersBothPaths(t *testing.T) {
	src := rng.New(74)
	for _, sz := range [][2]int{{3, 4}, {5, blasMin - 1}, {7, blasMin}, {blasMin + 3, 37}, {64, 5}} {
		m, n := sz[0], sz[1]
		a := randn(src, m*n)
		x, z := randn(src, n), randn(src, m)
		y, w := make([]float64, m), make([]float64, n)
		MatVec(y, a, m, n, x)
		MatTVec(w, a, m, n, z)
		// entry (i, j) of A is a[i*n+j]; of Aᵀ, a[j*n+i].
		for _, c := range []struct {
			name       string
			rows, cols int
			at         func(i, j int) float64
			in, out    []float64
		}{
			{"MatVec", m, n, func(i, j int) float64 { return a[i*n+j] }, x, y},
			{"MatTVec", n, m, func(i, j int) float64 { return a[j*n+i] }, z, w},
		} {
			for i := range c.rows {
				var s float64
				for j := range c.cols {
					s += c.at(i, j) * c.in[j]
				}
				if math.Abs(c.out[i]-s) > 1e-13 {
					t.Fatalf("%s %d×%d entry %d: %g want %g", c.name, m, n, i, c.out[i], s)
				}
			}
		}
		var s float64
		for j := range n {
			s += x[j] * a[j]
		}
		if d := Dot(x, a); math.Abs(d-s) > 1e-13 {
			t.Fatalf("Dot n=%d: %g want %g", n, d, s)
		}
		yy := append([]float64(nil), a[:n]...)
		Axpy(-0.5, x, yy)
		for j := range n {
			if want := a[j] - 0.5*x[j]; math.Abs(yy[j]-want) > 1e-15 {
				t.Fatalf("Axpy n=%d", n)
			}
		}
	}
}

// On PSD matrices TruncatedSymPSD gives the best rank-k approximation, as
// the full SVD does: same values, same reconstruction, orthonormal U = V,
// also when the rank is below k (duplicate points).
func TestTruncatedSymPSD_MatchesTruncatedSVD(t *testing.T) {
	src := rng.New(75)
	for _, tc := range []struct{ n, d, k, dup int }{{40, 3, 4, 1}, {120, 5, 12, 1}, {90, 2, 30, 3}} {
		pts := randn(src, (tc.n/tc.dup)*tc.d)
		x := make([]float64, 0, tc.n*tc.d)
		for len(x) < tc.n*tc.d {
			x = append(x, pts...)
		}
		a := gramOf(x[:tc.n*tc.d], tc.n, tc.d, 1.5)
		var f, g TruncSVD
		if err := TruncatedSymPSD(&f, a, tc.n, tc.k, nil); err != nil {
			t.Fatal(err)
		}
		if err := TruncatedSVD(&g, a, tc.n, tc.n, tc.k); err != nil {
			t.Fatal(err)
		}
		for i := range tc.k {
			if math.Abs(f.S[i]-g.S[i]) > 1e-12*g.S[0] {
				t.Errorf("n=%d k=%d: value %d: %g, SVD %g", tc.n, tc.k, i, f.S[i], g.S[i])
			}
		}
		rf, rg := make([]float64, tc.n*tc.n), make([]float64, tc.n*tc.n)
		f.Reconstruct(rf)
		g.Reconstruct(rg)
		if e := diffFro(rf, rg) / fro(a); e > 1e-10 {
			t.Errorf("n=%d k=%d: reconstructions differ by %.2g (relative)", tc.n, tc.k, e)
		}
		if e := orthErr(f.V, tc.n, tc.k); e > 1e-12 {
			t.Errorf("n=%d k=%d: VᵀV − I = %.2g", tc.n, tc.k, e)
		}
		for i := range f.U {
			if f.U[i] != f.V[i] {
				t.Fatalf("U ≠ V")
			}
		}
	}
}

// PinvApply(A, B) equals Pinv(A)·B: tall, square, wide and rank-deficient
// A (rank below min(m, n), where the tolerance decides), k below and above
// n; same rank; no allocation on a warmed-up work for small sizes.
func TestPinvApply_MatchesPinvTimesB(t *testing.T) {
	src := rng.New(76)
	for _, tc := range []struct{ m, n, k, rank int }{
		{30, 8, 5, 8}, {30, 8, 12, 8}, {40, 12, 6, 5}, {12, 12, 4, 12}, {9, 14, 3, 9}, {100, 20, 10, 20},
	} {
		a := randn(src, tc.m*tc.n)
		if tc.rank < min(tc.m, tc.n) {
			l, r := randn(src, tc.m*tc.rank), randn(src, tc.rank*tc.n)
			Mul(a, l, r, tc.m, tc.rank, tc.n)
		}
		b := randn(src, tc.m*tc.k)
		pinv := make([]float64, tc.n*tc.m)
		r1, err := Pinv(pinv, a, tc.m, tc.n, -1, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, tc.n*tc.k)
		Mul(want, pinv, b, tc.n, tc.m, tc.k)
		got := make([]float64, tc.n*tc.k)
		var w SVDWork
		r2, err := PinvApply(got, a, tc.m, tc.n, b, tc.k, -1, &w)
		if err != nil {
			t.Fatal(err)
		}
		if r1 != r2 || r2 != tc.rank {
			t.Errorf("%+v: rank %d, Pinv's %d", tc, r2, r1)
		}
		if e := diffFro(got, want) / fro(want); e > 1e-10 {
			t.Errorf("%+v: ‖PinvApply − Pinv·B‖/‖Pinv·B‖ = %.2g", tc, e)
		}
		if tc.m*tc.n <= 400 {
			if n := testing.AllocsPerRun(5, func() { _, _ = PinvApply(got, a, tc.m, tc.n, b, tc.k, -1, &w) }); n != 0 {
				t.Errorf("%+v: %v allocations per call", tc, n)
			}
		}
	}
	bad := randn(src, 12)
	bad[3] = math.NaN()
	if _, err := PinvApply(make([]float64, 6), bad, 4, 3, randn(src, 8), 2, -1, nil); err != ErrNotFinite {
		t.Fatalf("NaN input: %v", err)
	}
}
