package learner

// Tests named after the claims and equations of Wen et al., "Fast
// Second-Order Online Kernel Learning through Incremental Matrix Sketching
// and Decomposition" (arXiv 2410.11188v2), and of our implementation's invariants
// (docs/algorithms/forks-and-baselines.md), checked on the learners' own state
// against references computed here with gonum's mat package from the raw
// ingredients (stored examples, hash pairs, landmarks), not with the
// learner's routines.

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// forksLearnUntil feeds events until cond holds (or the stream ends) and
// returns the number of events fed.
func forksLearnUntil(l Learner, xs [][]float64, ys []float64, from int, cond func() bool) int {
	i := from
	for ; i < len(xs) && !cond(); i++ {
		l.Learn(xs[i], ys[i])
	}
	return i
}

// forksRefSketch recomputes, from the stored examples, the hash pairs and the
// landmarks, the kernel matrix K (n×n), S_p (n×s_p), C_m = K S_m (n×s_m),
// Φ_pm = S_pᵀC_m and Φ_pp = S_pᵀ K S_p with gonum.
type forksRefSketch struct {
	K, S, C, PM, PP *mat.Dense
}

func newForksRefSketch(sk *sketchMap) forksRefSketch {
	n, sp, sm := sk.n(), sk.sp, sk.sm
	K := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			K.Set(i, j, sk.kern.Eval(sk.stored.Row(i), sk.stored.Row(j)))
		}
	}
	S := mat.NewDense(n, sp, nil)
	for i := 0; i < n; i++ {
		for b := 0; b < sk.blocks; b++ {
			c, v := sk.sjlt.Entry(i, b)
			S.Set(i, c, S.At(i, c)+v)
		}
	}
	C := mat.NewDense(n, sm, nil)
	for i := 0; i < n; i++ {
		for j, l := range sk.landmarks {
			C.Set(i, j, K.At(i, l))
		}
	}
	var PM, PP, SK mat.Dense
	PM.Mul(S.T(), C)
	SK.Mul(S.T(), K)
	PP.Mul(&SK, S)
	return forksRefSketch{K, S, C, &PM, &PP}
}

// forksRefPinv is the Moore–Penrose inverse by gonum's SVD with MATLAB's
// tolerance.
func forksRefPinv(t *testing.T, a mat.Matrix) *mat.Dense {
	t.Helper()
	r, c := a.Dims()
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		t.Fatal("gonum SVD failed")
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	s := svd.Values(nil)
	tol := float64(max(r, c)) * 0x1p-52 * s[0]
	out := mat.NewDense(c, r, nil)
	for l, sv := range s {
		if sv <= tol {
			continue
		}
		var o mat.Dense
		o.Outer(1/sv, v.ColView(l), u.ColView(l))
		out.Add(out, &o)
	}
	return out
}

func forksMaxAbsDiff(a, b mat.Matrix) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, math.Inf(1))
}

func forksFeatureRows(sk *sketchMap) *mat.Dense {
	n := sk.n()
	F := mat.NewDense(n, sk.k, nil)
	for i := 0; i < n; i++ {
		F.SetRow(i, sk.features(sk.stored.Row(i)))
	}
	return F
}

// §3.2 Eq. 5 (feature-map identity): on the stored set,
// (C_m Z)(C_m Z)ᵀ = C_m Φ_pm^† (V Σ Vᵀ) Φ_pm^{†ᵀ} C_mᵀ, with C_m, Φ_pm^†
// computed here and V, Σ the learner's current rank-k factors; checked
// right after INIT and after several update rounds, for TISVD and for the
// exact SVD.
func TestForksSec3_2FeatureMapIdentity(t *testing.T) {
	for _, spec := range []string{
		"forks:sigma=1,budget=20,sm=6,k=4,rho=9",
		"forks:sigma=1,budget=20,sm=6,k=4,rho=9,decomp=svd",
		"skegd:sigma=1,budget=20,sm=6,k=4,rho=9,max_stored=50",
	} {
		xs, ys := stream(Classification, 600, 4, 31)
		l, _ := New(spec, 4)
		sk := forksSketchOf(l)
		i := forksLearnUntil(l, xs, ys, 0, func() bool { return sk.ready })
		for _, stop := range []int{0, 3, 20} {
			i = forksLearnUntil(l, xs, ys, i, func() bool { return sk.nUpd >= stop })
			ref := newForksRefSketch(sk)
			v, sig := sk.factors()
			V := mat.NewDense(sk.sp, sk.k, append([]float64(nil), v...))
			var VS, VSV, m0, mid, t1, want mat.Dense
			VS.Mul(V, mat.NewDiagDense(sk.k, append([]float64(nil), sig...)))
			VSV.Mul(&VS, V.T())
			P := forksRefPinv(t, mat.NewDense(sk.sp, sk.sm, append([]float64(nil), sk.phiPM...)))
			m0.Mul(P, &VSV)
			mid.Mul(&m0, P.T())
			t1.Mul(ref.C, &mid)
			want.Mul(&t1, ref.C.T())
			F := forksFeatureRows(sk)
			var got mat.Dense
			got.Mul(F, F.T())
			if d := forksMaxAbsDiff(&got, &want) / math.Max(1, mat.Norm(&want, math.Inf(1))); d > 1e-8 {
				t.Fatalf("%s after %d updates: ‖φφᵀ − C Φ_pm^† VΣVᵀ Φ_pm^†ᵀ Cᵀ‖ = %g (relative)", spec, sk.nUpd, d)
			}
		}
	}
}

// §3.2 Eq. 2–3 with no truncation: with k = s_p the features reproduce the
// sketched Nyström approximation K̂ = C_m Φ_pm^† Φ_pp Φ_pm^{†ᵀ} C_mᵀ of the
// kernel matrix of all stored examples, where Φ_pm and Φ_pp are computed
// here in batch from the stored examples — so the incremental sketches,
// TISVD and Z agree with the paper's closed form after many updates.
func TestForksSec3_2SketchedNystromNoTruncation(t *testing.T) {
	for _, spec := range []string{
		"forks:sigma=1,budget=20,sm=8,k=20,rho=5",
		"forks:sigma=1,budget=20,sm=8,k=20,rho=5,blocks=2",
	} {
		xs, ys := stream(Classification, 400, 4, 32)
		l, _ := New(spec, 4)
		sk := forksSketchOf(l)
		forksLearnUntil(l, xs, ys, 0, func() bool { return sk.nUpd >= 40 })
		ref := newForksRefSketch(sk)
		P := forksRefPinv(t, ref.PM)
		var m0, mid, t1, want mat.Dense
		m0.Mul(P, ref.PP)
		mid.Mul(&m0, P.T())
		t1.Mul(ref.C, &mid)
		want.Mul(&t1, ref.C.T())
		F := forksFeatureRows(sk)
		var got mat.Dense
		got.Mul(F, F.T())
		if d := forksMaxAbsDiff(&got, &want) / mat.Norm(&want, math.Inf(1)); d > 1e-7 {
			t.Fatalf("%s: after %d updates (n = %d) features give K̂ with relative error %g", spec, sk.nUpd, sk.n(), d)
		}
	}
}

// §3.3 / App. B.2 (TISVD) with k = s_p, no truncation: after INIT and
// dozens of update rounds, the TISVD state U Σ Vᵀ equals Φ_pp = S_pᵀ K S_p
// of the incrementally built stored set (recomputed here in batch), and Σ
// equals its singular values; Φ_pm equals S_pᵀ K S_m. Also on the
// max_stored replacement path (App. B.1's update with the evicted example's
// contribution removed), which must keep the sketches exact.
func TestForksSec3_3TISVDEqualsSVDOfIncrementalSketch(t *testing.T) {
	for _, spec := range []string{
		"forks:sigma=1,budget=16,sm=5,k=16,rho=4",
		"forks:sigma=1,budget=16,sm=5,k=16,rho=4,max_stored=40,landmarks=replace",
		"forks:sigma=1,budget=16,sp=16,sm=4,k=16,blocks=4,rho=3,max_stored=32",
	} {
		xs, ys := stream(Classification, 600, 4, 33)
		l, _ := New(spec, 4)
		sk := forksSketchOf(l)
		forksLearnUntil(l, xs, ys, 0, func() bool { return sk.nUpd >= 60 })
		ref := newForksRefSketch(sk)
		if d := forksMaxAbsDiff(mat.NewDense(sk.sp, sk.sm, sk.phiPM), ref.PM); d > 1e-10 {
			t.Fatalf("%s: Φ_pm differs from S_pᵀKS_m by %g", spec, d)
		}
		f := sk.tisvd.Factors()
		rec := make([]float64, sk.sp*sk.sp)
		f.Reconstruct(rec)
		scale := mat.Norm(ref.PP, math.Inf(1))
		if d := forksMaxAbsDiff(mat.NewDense(sk.sp, sk.sp, rec), ref.PP) / scale; d > 1e-10 {
			t.Fatalf("%s: after %d TISVD updates UΣVᵀ differs from the batch Φ_pp by %g (relative)", spec, sk.tisvd.Updates(), d)
		}
		var svd mat.SVD
		svd.Factorize(ref.PP, mat.SVDNone)
		for i, s := range svd.Values(nil) {
			if math.Abs(s-f.S[i]) > 1e-10*scale {
				t.Fatalf("%s: singular value %d: TISVD %v, SVD %v", spec, i, f.S[i], s)
			}
		}
		if sk.maxStored > 0 && sk.n() != sk.maxStored {
			t.Fatalf("%s: %d stored examples, cap %d", spec, sk.n(), sk.maxStored)
		}
	}
}

// Eq. 10 (generalized projection): at every Stage-2 round the score is
// φᵀw = clip(φᵀv, −C, C) for the projected w the learner keeps, and w is
// the A-norm projection of v onto the slab: moving w along any direction
// that stays in the slab does not get closer to v in the A-norm.
func TestForksEq10ProjectionProperty(t *testing.T) {
	for _, spec := range []string{"forks:sigma=1,budget=20,sm=6,k=5,rho=40", "forks:sigma=1,budget=20,sm=6,k=5,rho=40,c=0.3"} {
		xs, ys := stream(Classification, 500, 4, 34)
		l, _ := New(spec, 4)
		f := l.(*FORKS)
		i := forksLearnUntil(l, xs, ys, 0, func() bool { return f.sk.ready })
		projected := 0
		for ; i < len(xs); i++ {
			k := f.sk.k
			score := f.Predict(xs[i])
			phi := f.sk.phi[:k]
			v, w := f.ons.v[:k], f.ons.w[:k]
			z := dot(phi, v)
			want := math.Max(-f.c, math.Min(f.c, z))
			if got := dot(phi, w); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(z)) || math.Abs(score-want) > 1e-12 {
				t.Fatalf("event %d: φᵀw = %v, score %v, clip(φᵀv) = %v", i, got, score, want)
			}
			if math.Abs(z) > f.c {
				projected++
				Ainv := mat.NewDense(k, k, append([]float64(nil), f.ons.ainv[:k*k]...))
				var Ad mat.Dense
				if err := Ad.Inverse(Ainv); err != nil {
					t.Fatal(err)
				}
				anorm := func(x []float64) float64 {
					d := make([]float64, k)
					for j := range d {
						d[j] = x[j] - v[j]
					}
					dv := mat.NewVecDense(k, d)
					return mat.Inner(dv, &Ad, dv)
				}
				base := anorm(w)
				// Directions within the face φᵀw = ±C, and into the slab.
				for trial := 0; trial < 20; trial++ {
					dir := make([]float64, k)
					for j := range dir {
						dir[j] = math.Sin(float64(7*trial + 3*j + 1))
					}
					p := dot(dir, phi) / dot(phi, phi)
					for j := range dir {
						dir[j] -= p * phi[j] // tangent to the face
					}
					if trial%2 == 1 {
						for j := range dir {
							dir[j] -= math.Copysign(0.1, z) * phi[j] // into the slab
						}
					}
					for _, step := range []float64{1e-3, 1e-2} {
						x := make([]float64, k)
						for j := range x {
							x[j] = w[j] + step*dir[j]
						}
						if math.Abs(dot(phi, x)) > f.c+1e-12 {
							continue
						}
						if anorm(x) < base*(1-1e-9)-1e-15 {
							t.Fatalf("event %d: a feasible point is A-closer to v than the projection", i)
						}
					}
				}
			}
			l.Learn(xs[i], ys[i])
		}
		if projected == 0 {
			t.Fatalf("%s: the projection never fired", spec)
		}
	}
}

// §3.4 / Alg. 1 (update cycle): the sketches and the decomposition are
// updated exactly at t₀ + jρ, j ≥ 1, where t₀ is the INIT round (counting
// Stage-2 rounds from INIT), one example per update round (μ = B̃ +
// #updates), and only then.
func TestForksSec3_4UpdateRoundSchedule(t *testing.T) {
	for _, spec := range []string{
		"forks:sigma=1,budget=20,sm=6,k=4,rho=17",
		"forks:sigma=1,budget=20,sm=6,k=4,rho=17,literal=true",
		"skegd:sigma=1,budget=20,sm=6,k=4,rho=23",
	} {
		xs, ys := stream(Classification, 900, 4, 35)
		initAt, ups := forksPhaseEvents(t, spec, xs, ys)
		l, _ := New(spec, 4)
		rho := forksSketchOf(l).rho
		if initAt < 0 {
			t.Fatalf("%s: no INIT", spec)
		}
		want := (len(xs) - 1 - initAt) / rho
		if len(ups) != want {
			t.Fatalf("%s: %d update rounds, want %d", spec, len(ups), want)
		}
		for j, u := range ups {
			if u != initAt+(j+1)*rho {
				t.Fatalf("%s: update round %d at event %d, want t₀ + %d·ρ = %d", spec, j+1, u, j+1, initAt+(j+1)*rho)
			}
		}
		// μ = B̃ + #updates stored examples.
		for i := range xs {
			l.Learn(xs[i], ys[i])
		}
		sk := forksSketchOf(l)
		if sk.n() != sk.buffer+len(ups) || sk.sjlt.Rows() != sk.n() {
			t.Fatalf("%s: %d stored examples (%d sketch rows), want B̃ + %d = %d", spec, sk.n(), sk.sjlt.Rows(), len(ups), sk.buffer+len(ups))
		}
	}
}

// §3.4 (reset step) and our reading of the update round's order: it
// predicts with the model as it stands (literal=false) or with the reset model, 0 (literal=true);
// afterwards the ONS state is exactly one step from the reset (w = 0,
// A = αI) on the round's example in the new map: A⁻¹ = (αI + s ggᵀ)⁻¹ with
// g = ℓ'(0, y)φ_new (λw = 0) and v = −A⁻¹g. The same holds at INIT.
func TestForksSec3_4ResetSemantics(t *testing.T) {
	for _, literal := range []bool{false, true} {
		spec := "forks:sigma=1,budget=20,sm=6,k=4,rho=13"
		if literal {
			spec += ",literal=true"
		}
		xs, ys := stream(Classification, 400, 4, 36)
		l, _ := New(spec, 4)
		f := l.(*FORKS)
		sk := f.sk
		checked := 0
		for i := range xs {
			wasReady := sk.ready
			upd := wasReady && sk.nextIsUpdate()
			pred := f.Predict(xs[i])
			var before float64
			if upd {
				// The pre-update model's own score of x.
				before = f.ons.predict(sk.features(xs[i]))
			}
			score := f.Learn(xs[i], ys[i])
			if score != pred {
				t.Fatalf("event %d: Learn returned %v, Predict said %v", i, score, pred)
			}
			if !upd && (wasReady || !sk.ready) {
				continue
			}
			if upd && literal && score != 0 {
				t.Fatalf("event %d: literal update round scored %v, want 0", i, score)
			}
			if upd && !literal && score != before {
				t.Fatalf("event %d: update round scored %v, the pre-update model gives %v", i, score, before)
			}
			k := sk.k
			phi := append([]float64(nil), sk.features(xs[i])...)
			d := f.loss.Deriv(0, ys[i])
			g := mat.NewVecDense(k, nil)
			for j := range phi {
				g.SetVec(j, d*phi[j])
			}
			A := mat.NewDense(k, k, nil)
			for j := 0; j < k; j++ {
				A.Set(j, j, f.alpha)
			}
			var ggT mat.Dense
			ggT.Outer(f.onsSigma+f.onsEta, g, g)
			A.Add(A, &ggT)
			var Ainv mat.Dense
			if err := Ainv.Inverse(A); err != nil {
				t.Fatal(err)
			}
			var v mat.VecDense
			v.MulVec(&Ainv, g)
			v.ScaleVec(-1, &v)
			for a := 0; a < k; a++ {
				if math.Abs(f.ons.v[a]-v.AtVec(a)) > 1e-9*math.Max(1, math.Abs(v.AtVec(a))) {
					t.Fatalf("event %d: v[%d] = %v after the reset step, want %v", i, a, f.ons.v[a], v.AtVec(a))
				}
				for b := 0; b < k; b++ {
					if math.Abs(f.ons.ainv[a*k+b]-Ainv.At(a, b)) > 1e-9*math.Max(1, math.Abs(Ainv.At(a, b))) {
						t.Fatalf("event %d: A⁻¹[%d,%d] = %v after the reset step, want %v", i, a, b, f.ons.ainv[a*k+b], Ainv.At(a, b))
					}
				}
			}
			checked++
		}
		if checked < 10 {
			t.Fatalf("literal=%v: only %d reset rounds checked", literal, checked)
		}
	}
}

// §3.4 Stage 1 (KOGD) with the §5 buffer of B̃ = 2B: until the buffer holds B̃
// examples the score is Σ a_i κ(x_i, x) with a_i = −η ℓ'(f, y) for exactly
// the examples with non-zero loss derivative, and INIT runs on the round
// the B̃-th one is stored.
func TestForksSec3_4StageOneIsKernelOGD(t *testing.T) {
	for _, spec := range []string{"forks:sigma=1,budget=15,sm=5,k=3", "skegd:sigma=1,budget=15,sm=5,k=3,loss=squared_hinge,eta=0.3"} {
		xs, ys := stream(Classification, 300, 4, 37)
		l, _ := New(spec, 4)
		sk := forksSketchOf(l)
		var rows [][]float64
		var coef []float64
		for i := range xs {
			var want float64
			for j, r := range rows {
				want += coef[j] * sk.kern.Eval(r, xs[i])
			}
			got := l.Learn(xs[i], ys[i])
			if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Fatalf("%s event %d: Stage-1 score %v, kernel OGD %v", spec, i, got, want)
			}
			loss := Hinge
			if f, ok := l.(*SkeGD); ok {
				loss = f.loss
			}
			if g := loss.Deriv(got, ys[i]); g != 0 {
				rows = append(rows, xs[i])
				coef = append(coef, -sk.eta*g)
			}
			if len(rows) == sk.buffer {
				if !sk.ready || sk.n() != sk.buffer {
					t.Fatalf("%s: buffer full at event %d but no INIT", spec, i)
				}
				return
			}
			if sk.ready {
				t.Fatalf("%s: INIT at event %d with %d buffered examples, want %d", spec, i, len(rows), sk.buffer)
			}
		}
		t.Fatalf("%s: buffer never filled", spec)
	}
}

// ForksRho: ρ = ⌊θN⌋ (§5.1) and the adversarial ⌊0.005(N − B)⌋ (§5.2).
func TestForksRho(t *testing.T) {
	for _, c := range []struct {
		theta float64
		n     int
		want  int
	}{
		{0.3, 1000, 300}, {0.3, 1243, 372}, {0.3, 59535, 17860}, {0.005, 5000 - 200, 24}, {0.005, 10000 - 200, 49}, {0.3, 1, 1},
	} {
		if got := ForksRho(c.theta, c.n); got != c.want {
			t.Errorf("ForksRho(%v, %d) = %d, want %d", c.theta, c.n, got, c.want)
		}
	}
	l, _ := New("forks:sigma=1,budget=50,horizon=1243", 3)
	if got := forksSketchOf(l).rho; got != 372 {
		t.Fatalf("default ρ with horizon 1243 = %d, want ⌊0.3·1243⌋ = 372", got)
	}
}

// §5 defaults: B̃ = 2B, s_p = B, s_m = 0.2 s_p, k = 0.1B, D = 1, α = 0.01,
// σ_i = 0.5, η_i = 0, η = 0.2, C = 1, hinge loss, and λ = 0 (Eq. 10 as
// written; forks.go [9]); SkeGD the same
// sketch settings with the exact SVD and no reset.
func TestForksSec5Defaults(t *testing.T) {
	l, _ := New("forks:sigma=1,budget=50", 3)
	f := l.(*FORKS)
	o := f.sk.sketchOpts
	if o.buffer != 100 || o.sp != 50 || o.sm != 10 || o.k != 5 || o.blocks != 1 || o.decomp != decompTISVD || o.eta != 0.2 || o.maxStored != 0 {
		t.Fatalf("sketch defaults %+v", o)
	}
	if f.alpha != 0.01 || f.onsSigma != 0.5 || f.onsEta != 0 || f.lambda != 0 || f.c != 1 || f.loss != Hinge || !f.newInv || f.literal {
		t.Fatalf("FORKS defaults %+v", f)
	}
	s, _ := New("skegd:sigma=1,budget=200,sp=150", 3)
	g := s.(*SkeGD)
	if o := g.sk.sketchOpts; o.buffer != 400 || o.sp != 150 || o.sm != 30 || o.k != 20 || o.decomp != decompSVD || g.carry != "keep" || g.lambda != 0.01 {
		t.Fatalf("SkeGD defaults %+v carry %s", o, g.carry)
	}
}
