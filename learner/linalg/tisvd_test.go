package linalg

import (
	"errors"
	"math"
	"runtime"
	"testing"

	"okstream/learner/rng"
)

// Tests of TISVD's exactness and of the FORKS paper's Fig. 4 (App. B.3),
// and the cases (a)–(f) of the linalg brief. Errors are relative: singular
// values |σ̂ᵢ − σᵢ| / σ₁ (the accuracy an SVD can promise), reconstructions
// ‖ÛΣ̂V̂ᵀ − M‖_F / ‖M‖_F (singular vectors are sign-ambiguous, so they are
// not compared directly).

const tisvdTol = 1e-8

// checkAgainst compares the TISVD state with the matrix want (m×n), whose
// best rank-k approximation the state should be. It returns the singular
// value error (relative to σ₁), the reconstruction error relative to ‖want‖
// and the orthonormality error of U and V.
func checkAgainst(t testing.TB, ts *TISVD, want []float64) (sErr, rErr, oErr float64) {
	m, n, k := ts.Dims()
	f := ts.Factors()
	best, ref := refBestRankK(t, want, m, n, k)
	for i := range k {
		sErr = max(sErr, math.Abs(f.S[i]-ref[i])/ref[0])
	}
	got := make([]float64, m*n)
	f.Reconstruct(got)
	rErr = diffFro(got, best) / fro(want)
	oErr = max(orthErr(f.U, m, k), orthErr(f.V, n, k))
	return
}

func randDelta(src *rng.Source, m, n, c int, scale float64) (d1, d2 []float64) {
	d1 = randn(src, m*c)
	d2 = randn(src, n*c)
	for i := range d1 {
		d1[i] *= scale
	}
	return
}

// (a) M of exact rank r ≤ k − 2 (then rank ≤ k throughout): TISVD equals
// the exact SVD of M + Δ₁Δ₂ᵀ after every update.
func TestTISVD_ExactWhenNoTruncation(t *testing.T) {
	src := rng.New(1)
	ws, wr, wo := worst{name: "singular values"}, worst{name: "reconstruction"}, worst{name: "orthonormality"}
	for _, tc := range []struct{ m, n, r, k, c, steps int }{
		{20, 20, 3, 5, 2, 1},
		{50, 50, 5, 7, 2, 1},
		{50, 50, 4, 14, 2, 5},   // rank 4 → 14 over five c = 2 updates
		{60, 40, 2, 14, 3, 4},   // rectangular, c = 3
		{30, 70, 6, 10, 1, 4},   // wide, c = 1
		{100, 100, 1, 30, 3, 9}, // Fig. 4 shape, rank 1 → 28
	} {
		s := make([]float64, tc.r)
		for i := range s {
			s[i] = 1 + 9*src.Float64()
		}
		M := withSpectrum(src, tc.m, tc.n, s)
		ts := NewTISVD(tc.m, tc.n, tc.k, TISVDOptions{})
		if err := ts.Init(M); err != nil {
			t.Fatal(err)
		}
		for range tc.steps {
			d1, d2 := randDelta(src, tc.m, tc.n, tc.c, 1)
			if err := ts.Update(d1, d2, tc.c); err != nil {
				t.Fatal(err)
			}
			addOuter(M, d1, d2, tc.m, tc.n, tc.c)
			a, b, o := checkAgainst(t, ts, M)
			ws.see(a)
			wr.see(b)
			wo.see(o)
		}
	}
	ws.report(t, tisvdTol)
	wr.report(t, tisvdTol)
	wo.report(t, 1e-12)
}

// (b) The paper's c = 3 form Δ₁ = [s, a, s], Δ₂ = [a, s, κs] (duplicate
// and parallel columns, App. B.1 Eq. 12): the rank-revealing
// orthogonalization keeps exactly two directions on each side, and the
// result equals both the exact SVD and the compact c = 2 form.
func TestTISVD_PaperC3FormDuplicateColumns(t *testing.T) {
	src := rng.New(2)
	const sp, r, k = 40, 4, 12
	ws, wr, wc := worst{name: "singular values"}, worst{name: "reconstruction"}, worst{name: "c=3 vs c=2 form"}
	g := randn(src, sp*r)
	M := make([]float64, sp*sp) // symmetric PSD of rank r, like Φ_pp
	for i := range sp {
		for j := range sp {
			M[i*sp+j] = dot(g[i*r:i*r+r], g[j*r:j*r+r])
		}
	}
	t3 := NewTISVD(sp, sp, k, TISVDOptions{})
	t2 := NewTISVD(sp, sp, k, TISVDOptions{})
	if err := t3.Init(M); err != nil {
		t.Fatal(err)
	}
	t2.SetFactors(t3.Factors())
	for step := range 4 {
		s := make([]float64, sp)
		s[src.IntN(sp)] = src.Sign() // a CountSketch row (D = 1)
		a := randn(src, sp)
		kappa := 1.0
		d1 := make([]float64, sp*3)
		d2 := make([]float64, sp*3)
		c1 := make([]float64, sp*2)
		c2 := make([]float64, sp*2)
		for i := range sp {
			d1[i*3], d1[i*3+1], d1[i*3+2] = s[i], a[i], s[i]
			d2[i*3], d2[i*3+1], d2[i*3+2] = a[i], s[i], kappa*s[i]
			c1[i*2], c1[i*2+1] = s[i], a[i]
			c2[i*2], c2[i*2+1] = a[i]+kappa*s[i], s[i]
		}
		// The orthogonalization finds rank 2 on both sides.
		if r1 := t3.complement(d1, sp, 3, t3.f.U, t3.p, t3.g1); r1 != 2 {
			t.Fatalf("step %d: rank of projected Δ₁ = %d, want 2", step, r1)
		}
		if r2 := t3.complement(d2, sp, 3, t3.f.V, t3.q, t3.g2); r2 != 2 {
			t.Fatalf("step %d: rank of projected Δ₂ = %d, want 2", step, r2)
		}
		if err := t3.Update(d1, d2, 3); err != nil {
			t.Fatal(err)
		}
		if err := t2.Update(c1, c2, 2); err != nil {
			t.Fatal(err)
		}
		addOuter(M, d1, d2, sp, sp, 3)
		a1, b1, _ := checkAgainst(t, t3, M)
		ws.see(a1)
		wr.see(b1)
		x3 := make([]float64, sp*sp)
		x2 := make([]float64, sp*sp)
		t3.Factors().Reconstruct(x3)
		t2.Factors().Reconstruct(x2)
		wc.see(relErr(x3, x2))
	}
	ws.report(t, tisvdTol)
	wr.report(t, tisvdTol)
	wc.report(t, tisvdTol)
}

// (c) Updates entirely inside span(U), span(V): no complement direction is
// kept (r₁ = r₂ = 0) and the result is exact, even when the matrix itself
// is full rank (the state is then the best rank-k of state + update, which
// has rank k). Also a zero update and a mixed update (one column inside,
// one outside).
func TestTISVD_UpdateInsideSpan(t *testing.T) {
	src := rng.New(3)
	const m, n, r, k = 45, 35, 6, 8
	ws, wr := worst{name: "singular values"}, worst{name: "reconstruction"}
	s := make([]float64, r)
	for i := range s {
		s[i] = float64(r - i)
	}
	M := withSpectrum(src, m, n, s)
	ts := NewTISVD(m, n, k, TISVDOptions{})
	if err := ts.Init(M); err != nil {
		t.Fatal(err)
	}
	for step := range 6 {
		f := ts.Factors()
		const c = 2
		x := randn(src, k*c)
		y := randn(src, k*c)
		d1 := make([]float64, m*c)
		d2 := make([]float64, n*c)
		Mul(d1, f.U, x, m, k, c) // Δ₁ = U X ∈ span(U)
		Mul(d2, f.V, y, n, k, c) // Δ₂ = V Y ∈ span(V)
		if step == 4 {
			clear(d1) // zero update
		}
		if step == 5 { // mixed: column 1 of Δ₁ leaves span(U)
			for i := range m {
				d1[i*c+1] += src.Normal()
			}
		}
		r1 := ts.complement(d1, m, c, f.U, ts.p, ts.g1)
		r2 := ts.complement(d2, n, c, f.V, ts.q, ts.g2)
		wantR1 := 0
		if step == 5 {
			wantR1 = 1
		}
		if r1 != wantR1 || r2 != 0 {
			t.Fatalf("step %d: complement ranks %d, %d; want %d, 0", step, r1, r2, wantR1)
		}
		if err := ts.Update(d1, d2, c); err != nil {
			t.Fatal(err)
		}
		addOuter(M, d1, d2, m, n, c)
		a, b, _ := checkAgainst(t, ts, M)
		ws.see(a)
		wr.see(b)
	}
	ws.report(t, tisvdTol)
	wr.report(t, tisvdTol)
}

// sketchStep returns the compact FORKS deltas Δ₁ = [s, a], Δ₂ = [a + κs, s]
// (sp×2) for a CountSketch row s and a vector a.
func sketchDeltas(s, a []float64, kappa float64) (d1, d2 []float64) {
	sp := len(s)
	d1 = make([]float64, sp*2)
	d2 = make([]float64, sp*2)
	for i := range sp {
		d1[i*2], d1[i*2+1] = s[i], a[i]
		d2[i*2], d2[i*2+1] = a[i]+kappa*s[i], s[i]
	}
	return
}

// (d) A long sequence of symmetric rank-2 updates of the FORKS sketch kind,
// with k large enough that nothing is truncated: (i) k = s_p, the sketch of
// a real Gaussian kernel matrix fed one example at a time (500 inserts);
// (ii) k < s_p with updates confined to a fixed subspace of dimension k − 2.
// Compared after every 50 updates with the dense SVD of the accumulated
// matrix.
func TestTISVD_LongSketchSequenceNoTruncation(t *testing.T) {
	ws, wr, wo := worst{name: "singular values"}, worst{name: "reconstruction"}, worst{name: "orthonormality"}

	// (i) Φ_pp = S_pᵀ K S_p of a Gaussian kernel, grown by 500 inserts.
	{
		src := rng.New(4)
		const sp, d, n0, steps = 40, 5, 80, 500
		X := randn(src, (n0+steps)*d)
		kern := func(i, j int) float64 {
			return math.Exp(-0.5 * sqDist(X[i*d:i*d+d], X[j*d:j*d+d]))
		}
		sk := NewSJLT(sp, 1, n0+steps)
		for range n0 {
			sk.AddRow(src)
		}
		K := make([]float64, n0*n0)
		for i := range n0 {
			for j := range n0 {
				K[i*n0+j] = kern(i, j)
			}
		}
		phi := make([]float64, sp*sp)
		sk.SketchPP(phi, K, n0)
		ts := NewTISVD(sp, sp, sp, TISVDOptions{})
		if err := ts.Init(phi); err != nil {
			t.Fatal(err)
		}
		d1 := make([]float64, sp*2)
		d2 := make([]float64, sp*2)
		for step := range steps {
			nn := n0 + step
			psi := make([]float64, nn)
			for i := range psi {
				psi[i] = kern(nn, i)
			}
			sk.Insert(src, psi, kern(nn, nn), nil, nil, d1, d2)
			if err := ts.Update(d1, d2, 2); err != nil {
				t.Fatal(err)
			}
			addOuter(phi, d1, d2, sp, sp, 2)
			if (step+1)%50 == 0 {
				a, b, o := checkAgainst(t, ts, phi)
				ws.see(a)
				wr.see(b)
				wo.see(o)
			}
		}
	}

	// (ii) k = 22 < s_p = 60, rank ≤ 20 throughout.
	{
		src := rng.New(5)
		const sp, r, k, steps = 60, 20, 22, 500
		W := randOrth(src, sp, r)
		g := randn(src, r*r)
		M := make([]float64, sp*sp)
		inW := func(coef []float64) []float64 {
			v := make([]float64, sp)
			MatVec(v, W, sp, r, coef)
			return v
		}
		for i := range r {
			col := inW(g[i*r : i*r+r])
			addOuter(M, col, col, sp, sp, 1)
		}
		ts := NewTISVD(sp, sp, k, TISVDOptions{})
		if err := ts.Init(M); err != nil {
			t.Fatal(err)
		}
		for step := range steps {
			s := inW(randn(src, r))
			a := inW(randn(src, r))
			d1, d2 := sketchDeltas(s, a, 1)
			if err := ts.Update(d1, d2, 2); err != nil {
				t.Fatal(err)
			}
			addOuter(M, d1, d2, sp, sp, 2)
			if (step+1)%50 == 0 {
				a, b, o := checkAgainst(t, ts, M)
				ws.see(a)
				wr.see(b)
				wo.see(o)
			}
		}
	}
	ws.report(t, tisvdTol)
	wr.report(t, tisvdTol)
	wo.report(t, 1e-12)
}

func sqDist(a, b []float64) float64 {
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}

// (e) Ill-conditioned inputs: singular values spanning 1 … 1e-12, updates
// of very different sizes (including ones below the smallest singular
// value and ones almost inside the current subspace).
func TestTISVD_IllConditioned(t *testing.T) {
	src := rng.New(6)
	ws, wr := worst{name: "singular values"}, worst{name: "reconstruction"}
	for _, tc := range []struct{ m, n, r, k int }{{50, 50, 13, 20}, {80, 60, 25, 40}} {
		s := make([]float64, tc.r)
		for i := range s {
			s[i] = math.Pow(10, -12*float64(i)/float64(tc.r-1))
		}
		M := withSpectrum(src, tc.m, tc.n, s)
		ts := NewTISVD(tc.m, tc.n, tc.k, TISVDOptions{ReorthEvery: 2})
		if err := ts.Init(M); err != nil {
			t.Fatal(err)
		}
		for step, scale := range []float64{1e-13, 1e-6, 1, 1e-10} {
			const c = 2
			d1, d2 := randDelta(src, tc.m, tc.n, c, scale)
			if step == 3 {
				// Almost inside span(U): U X plus a 1e-11 relative
				// component outside.
				f := ts.Factors()
				x := randn(src, tc.k*c)
				Mul(d1, f.U, x, tc.m, tc.k, c)
				for i := range d1 {
					d1[i] += 1e-11 * src.Normal()
				}
			}
			if err := ts.Update(d1, d2, c); err != nil {
				t.Fatal(err)
			}
			addOuter(M, d1, d2, tc.m, tc.n, c)
			a, b, _ := checkAgainst(t, ts, M)
			ws.see(a)
			wr.see(b)
		}
	}
	ws.report(t, tisvdTol)
	wr.report(t, tisvdTol)
}

// When the matrix is not low rank, each Update returns the best rank-k
// approximation of (state + update): compare with gonum's truncated SVD of
// that matrix.
func TestTISVD_BestRankKOfStatePlusUpdate(t *testing.T) {
	src := rng.New(7)
	ws, wr := worst{name: "singular values"}, worst{name: "reconstruction"}
	for _, tc := range []struct {
		m, n, k, c int
		illCond    bool
	}{{40, 30, 10, 3, false}, {100, 100, 30, 3, false}, {50, 50, 5, 2, false}, {60, 50, 20, 2, true}} {
		ts := NewTISVD(tc.m, tc.n, tc.k, TISVDOptions{})
		a := randn(src, tc.m*tc.n)
		scale := 1.0
		if tc.illCond { // σ spanning 1 … 1e-12, updates of size 1e-6
			a = withSpectrum(src, tc.m, tc.n, logspace(0, -12, tc.n))
			scale = 1e-6
		}
		if err := ts.Init(a); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			state := make([]float64, tc.m*tc.n)
			ts.Factors().Reconstruct(state)
			d1, d2 := randDelta(src, tc.m, tc.n, tc.c, scale)
			addOuter(state, d1, d2, tc.m, tc.n, tc.c)
			if err := ts.Update(d1, d2, tc.c); err != nil {
				t.Fatal(err)
			}
			a, b, _ := checkAgainst(t, ts, state)
			ws.see(a)
			wr.see(b)
		}
	}
	ws.report(t, tisvdTol)
	wr.report(t, tisvdTol)
}

// fig4 runs the setting of the FORKS paper's Fig. 4 (App. B.3): A 100×100 Gaussian, updates
// A ← A + BᵀC with B, C 3×100 Gaussian, k = 30. It returns the true matrix
// and the TISVD.
func fig4(t testing.TB, updates int) ([]float64, *TISVD) {
	src := rng.New(8)
	const n, m, k = 100, 3, 30
	A := randn(src, n*n)
	ts := NewTISVD(n, n, k, TISVDOptions{})
	if err := ts.Init(A); err != nil {
		t.Fatal(err)
	}
	for range updates {
		d1, d2 := randDelta(src, n, n, m, 1)
		if err := ts.Update(d1, d2, m); err != nil {
			t.Fatal(err)
		}
		addOuter(A, d1, d2, n, n, m)
	}
	return A, ts
}

// (f) After many updates the TISVD error
// ‖A − UΣVᵀ‖_F exceeds the best rank-k error ‖A − [A]_k‖_F; the ratio is
// the bias of repeated truncation (reported, bounded loosely). A
// randomized SVD of the final matrix is shown for comparison.
func TestTISVD_Fig4TruncationError(t *testing.T) {
	const n, k = 100, 30
	for _, T := range []int{10, 100, 500} {
		A, ts := fig4(t, T)
		best, _ := refBestRankK(t, A, n, n, k)
		got := make([]float64, n*n)
		ts.Factors().Reconstruct(got)
		eBest := diffFro(A, best)
		eTI := diffFro(A, got)
		var rs TruncSVD
		if err := RandomizedSVD(&rs, A, n, n, k, 10, 2, rng.New(9)); err != nil {
			t.Fatal(err)
		}
		rs.Reconstruct(got)
		eRS := diffFro(A, got)
		t.Logf("Fig.4 after %4d updates: ‖A‖_F=%.4g  best rank-30 error %.4g (%.3f of ‖A‖)  TISVD %.4g (×%.4f best)  RSVD(p=10,q=2) %.4g (×%.4f best)",
			T, fro(A), eBest, eBest/fro(A), eTI, eTI/eBest, eRS, eRS/eBest)
		if eTI < eBest*(1-1e-10) || eTI > 2*eBest || math.IsNaN(eTI) {
			t.Errorf("after %d updates TISVD error %.4g vs best %.4g", T, eTI, eBest)
		}
	}
}

func TestTISVD_ReorthonormalizeKeepsMatrix(t *testing.T) {
	src := rng.New(10)
	const m, n, k = 30, 25, 8
	ts := NewTISVD(m, n, k, TISVDOptions{ReorthEvery: -1})
	if err := ts.Init(randn(src, m*n)); err != nil {
		t.Fatal(err)
	}
	// Spoil orthonormality slightly (as long drift would) but keep the
	// represented matrix as the reference.
	f := ts.Factors()
	for i := range f.U {
		f.U[i] *= 1 + 1e-7*src.Normal()
	}
	before := make([]float64, m*n)
	f.Reconstruct(before)
	if err := ts.Reorthonormalize(); err != nil {
		t.Fatal(err)
	}
	after := make([]float64, m*n)
	ts.Factors().Reconstruct(after)
	if e := relErr(after, before); e > 1e-13 {
		t.Errorf("matrix changed by %.3g", e)
	}
	if e := max(orthErr(f.U, m, k), orthErr(ts.Factors().V, n, k)); e > 1e-14 {
		t.Errorf("orthonormality error %.3g after Reorthonormalize", e)
	}
	// A dependent U is refused without changing the state.
	for i := range m {
		f.U[i*k+1] = f.U[i*k]
	}
	saved := append([]float64(nil), f.U...)
	if err := ts.Reorthonormalize(); !errors.Is(err, ErrLostOrthogonality) {
		t.Fatalf("err = %v, want ErrLostOrthogonality", err)
	}
	for i := range saved {
		if ts.Factors().U[i] != saved[i] {
			t.Fatal("state changed by a failed Reorthonormalize")
		}
	}
}

func TestTISVD_RejectsNonFinite(t *testing.T) {
	src := rng.New(11)
	ts := NewTISVD(10, 10, 3, TISVDOptions{})
	if err := ts.Init(randn(src, 100)); err != nil {
		t.Fatal(err)
	}
	var saved TruncSVD
	saved.CopyFrom(ts.Factors())
	d1, d2 := randDelta(src, 10, 10, 2, 1)
	d2[5] = math.NaN()
	if err := ts.Update(d1, d2, 2); !errors.Is(err, ErrNotFinite) {
		t.Fatalf("err = %v", err)
	}
	bad := randn(src, 100)
	bad[3] = math.Inf(1)
	if err := ts.Init(bad); !errors.Is(err, ErrNotFinite) {
		t.Fatalf("Init err = %v", err)
	}
	f := ts.Factors()
	for i := range f.U {
		if f.U[i] != saved.U[i] || f.V[i] != saved.V[i] {
			t.Fatal("state changed")
		}
	}
	if ts.Updates() != 0 {
		t.Fatal("failed update counted")
	}
}

// Same inputs ⇒ bit-identical state, also across a SetFactors/SetUpdates
// restore in the middle (what a checkpoint does).
func TestTISVD_DeterministicAndRestorable(t *testing.T) {
	run := func(restoreAt int) *TISVD {
		src := rng.New(12)
		ts := NewTISVD(30, 30, 6, TISVDOptions{ReorthEvery: 7})
		if err := ts.Init(randn(src, 900)); err != nil {
			t.Fatal(err)
		}
		for step := range 25 {
			if step == restoreAt {
				var saved TruncSVD
				saved.CopyFrom(ts.Factors())
				count := ts.Updates()
				ts = NewTISVD(30, 30, 6, TISVDOptions{ReorthEvery: 7})
				ts.SetFactors(&saved)
				ts.SetUpdates(count)
			}
			d1, d2 := randDelta(src, 30, 30, 2, 1)
			if err := ts.Update(d1, d2, 2); err != nil {
				t.Fatal(err)
			}
		}
		return ts
	}
	a, b := run(-1), run(11)
	fa, fb := a.Factors(), b.Factors()
	for i := range fa.U {
		if fa.U[i] != fb.U[i] || fa.V[i] != fb.V[i] {
			t.Fatal("not bit-identical after restore")
		}
	}
	for i := range fa.S {
		if fa.S[i] != fb.S[i] {
			t.Fatal("singular values not bit-identical")
		}
	}
}

// Steady-state Updates (including the periodic re-orthonormalization) do
// not allocate.
func TestTISVD_UpdateDoesNotAllocate(t *testing.T) {
	src := rng.New(13)
	for _, tc := range []struct{ sp, k, c int }{{50, 5, 2}, {100, 30, 3}, {400, 40, 2}} {
		ts := NewTISVD(tc.sp, tc.sp, tc.k, TISVDOptions{ReorthEvery: 3})
		if err := ts.Init(randn(src, tc.sp*tc.sp)); err != nil {
			t.Fatal(err)
		}
		d1, d2 := randDelta(src, tc.sp, tc.sp, tc.c, 1)
		for range 3 {
			if err := ts.Update(d1, d2, tc.c); err != nil {
				t.Fatal(err)
			}
		}
		allocs := testing.AllocsPerRun(20, func() {
			if err := ts.Update(d1, d2, tc.c); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("s_p=%d k=%d: %.1f allocations per Update", tc.sp, tc.k, allocs)
		}
	}
}

// mallocs counts heap allocations made by f (including its first call).
func mallocs(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.Mallocs - a.Mallocs
}

// NewTISVD pre-sizes everything, so even the first Updates (c = 2 and the
// paper's c = 3) and the first re-orthonormalization do not allocate, for
// cores up to (k+c) = 102.
func TestTISVD_FirstUpdatesDoNotAllocate(t *testing.T) {
	src := rng.New(14)
	for _, tc := range []struct{ sp, k int }{{50, 5}, {100, 30}, {400, 40}, {300, 100}} {
		ts := NewTISVD(tc.sp, tc.sp, tc.k, TISVDOptions{ReorthEvery: 2})
		if err := ts.Init(randn(src, tc.sp*tc.sp)); err != nil {
			t.Fatal(err)
		}
		d1, d2 := randDelta(src, tc.sp, tc.sp, 3, 1)
		e1, e2 := randDelta(src, tc.sp, tc.sp, 2, 1)
		n := mallocs(func() {
			for range 2 {
				if err := ts.Update(e1, e2, 2); err != nil {
					t.Fatal(err)
				}
				if err := ts.Update(d1, d2, 3); err != nil {
					t.Fatal(err)
				}
			}
		})
		if n != 0 {
			t.Errorf("s_p=%d k=%d: %d allocations in the first four Updates", tc.sp, tc.k, n)
		}
	}
}
