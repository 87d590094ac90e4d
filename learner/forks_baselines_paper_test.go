package learner

// Tests of the budgeted kernel-expansion baselines of the FORKS paper's
// Table 1 (RBP, BPA-S, BOGD, Projectron; docs/algorithms/forks-and-baselines.md): each test
// checks an algorithm's defining rule on small streams against a direct
// reference computation written here (pairwise kernel sums, a 1-D numerical
// minimisation, gonum's inverse), not against the learner's own formulas.

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"okstream/learner/rng"
)

func init() {
	addContractSpecs(
		"rbp:sigma=0.5,budget=100",
		"rbp:kernel=laplacian,sigma=1,budget=40",
		"bpas:sigma=0.7,budget=100",
		"bpas:kernel=polynomial,degree=2,budget=60,c=0.5",
		"bogd:sigma=0.4,budget=100",
		"bogd:sigma=0.4,budget=100,clip=coef,loss=logistic",
		"projectron:sigma=0.7,budget=100",
		"projectron:kernel=polynomial,degree=2,budget=40", // feature space of dim 21: the δ² ≤ ε guard takes over
	)
}

// fbSV is a reference copy of a support-vector set: rows and coefficients.
type fbSV struct {
	rows [][]float64
	a    []float64
}

func fbSnapshot(s *budgetSV) fbSV {
	var r fbSV
	for i := 0; i < s.len(); i++ {
		r.rows = append(r.rows, slices.Clone(s.sv.Row(i)))
	}
	r.a = slices.Clone(s.a)
	return r
}

// score is Σ a_i κ(x_i, x) by pairwise kernel evaluations.
func (r fbSV) score(l Learner, x []float64) float64 {
	k := fbKernel(l)
	var f float64
	for i, row := range r.rows {
		f += r.a[i] * k.Eval(row, x)
	}
	return f
}

// find returns the index of the row equal to x, or −1.
func (r fbSV) find(x []float64) int {
	for i, row := range r.rows {
		if slices.Equal(row, x) {
			return i
		}
	}
	return -1
}

func (r fbSV) remove(i int) fbSV {
	r.rows = slices.Delete(slices.Clone(r.rows), i, i+1)
	r.a = slices.Delete(slices.Clone(r.a), i, i+1)
	return r
}

func fbKernel(l Learner) *kernelOf {
	switch v := l.(type) {
	case *RBP:
		return &kernelOf{v.kern.Eval, v.kern.Diag}
	case *BPAS:
		return &kernelOf{v.kern.Eval, v.kern.Diag}
	case *BOGD:
		return &kernelOf{v.kern.Eval, v.kern.Diag}
	case *Projectron:
		return &kernelOf{v.kern.Eval, v.kern.Diag}
	}
	panic("not a budgeted baseline")
}

type kernelOf struct {
	Eval func(x, y []float64) float64
	Diag func(x []float64) float64
}

func fbSet(l Learner) *budgetSV {
	switch v := l.(type) {
	case *RBP:
		return &v.set
	case *BPAS:
		return &v.set
	case *BOGD:
		return &v.set
	case *Projectron:
		return &v.set
	}
	panic("not a budgeted baseline")
}

// checkSameSet fails unless the learner's set equals ref as a set of
// (row, coefficient) pairs, coefficients within a relative 1e-12.
func checkSameSet(t *testing.T, event int, got fbSV, ref fbSV) {
	t.Helper()
	if len(got.rows) != len(ref.rows) {
		t.Fatalf("event %d: %d stored examples, reference %d", event, len(got.rows), len(ref.rows))
	}
	for i, row := range ref.rows {
		j := got.find(row)
		if j < 0 {
			t.Fatalf("event %d: reference example %d not stored", event, i)
		}
		if d := math.Abs(got.a[j] - ref.a[i]); d > 1e-12*math.Max(1, math.Abs(ref.a[i])) {
			t.Fatalf("event %d: coefficient %v, reference %v", event, got.a[j], ref.a[i])
		}
	}
}

// removed returns the index in before of the one example that is no longer
// stored in after (−1 if none, and a failure if more than one).
func removed(t *testing.T, event int, before, after fbSV) int {
	t.Helper()
	out := -1
	for i, row := range before.rows {
		if after.find(row) < 0 {
			if out >= 0 {
				t.Fatalf("event %d: more than one example removed", event)
			}
			out = i
		}
	}
	return out
}

// RBP (Cavallanti et al. 2007): the model changes only on mistakes (y f ≤
// 0); a mistake stores (x, y); with a full budget exactly one old example
// is discarded first; the budget is never exceeded.
func TestRBPPerceptronUpdateWithRandomDiscard(t *testing.T) {
	xs, ys := stream(Classification, 800, 4, 21)
	l, _ := New("rbp:sigma=0.6,budget=15", 4)
	ref := fbSV{}
	fulls := 0
	for i := range xs {
		want := ref.score(l, xs[i])
		f := l.Learn(xs[i], ys[i])
		if math.Abs(f-want) > 1e-12 {
			t.Fatalf("event %d: score %v, reference %v", i, f, want)
		}
		got := fbSnapshot(fbSet(l))
		if ys[i]*want <= 0 {
			if len(ref.rows) == 15 {
				r := removed(t, i, ref, got)
				if r < 0 {
					t.Fatalf("event %d: full budget but nothing discarded", i)
				}
				ref = ref.remove(r)
				fulls++
			}
			ref.rows = append(ref.rows, slices.Clone(xs[i]))
			ref.a = append(ref.a, ys[i])
		}
		checkSameSet(t, i, got, ref)
		if l.Info().Used > 15 {
			t.Fatalf("event %d: %d stored, budget 15", i, l.Info().Used)
		}
	}
	if fulls < 50 {
		t.Fatalf("only %d discards; the test does not exercise the full budget", fulls)
	}
}

// checkUniformDiscard drives l with labels opposite to its prediction (every
// round is a mistake and, for BOGD, a loss round), and checks with a
// chi-square test that the discarded example is uniform over the stored
// ones: the removals are binned by the age rank of the discarded example
// (0 = most recently stored), which does not depend on how the learner lays
// out its storage.
func checkUniformDiscard(t *testing.T, spec string, budget int) {
	t.Helper()
	l, err := New(spec, 2)
	if err != nil {
		t.Fatal(err)
	}
	src := rng.New(5)
	born := map[[2]float64]int{}
	counts := make([]float64, budget)
	n := 0
	for i := 0; n < 400*budget; i++ {
		x := []float64{src.Float64(), src.Float64()}
		y := 1.0
		if f := l.Predict(x); f > 0 {
			y = -1
		}
		before := fbSnapshot(fbSet(l))
		l.Learn(x, y)
		after := fbSnapshot(fbSet(l))
		born[[2]float64{x[0], x[1]}] = i
		if len(before.rows) < budget {
			continue
		}
		r := removed(t, i, before, after)
		if r < 0 {
			t.Fatalf("event %d: no example discarded on a full-budget update", i)
		}
		// Age rank of the discarded example among the stored ones.
		b := born[[2]float64{before.rows[r][0], before.rows[r][1]}]
		rank := 0
		for _, row := range before.rows {
			if born[[2]float64{row[0], row[1]}] > b {
				rank++
			}
		}
		counts[rank]++
		n++
	}
	exp := float64(n) / float64(budget)
	var chi2 float64
	for _, c := range counts {
		chi2 += (c - exp) * (c - exp) / exp
	}
	// χ² with budget−1 = 9 degrees of freedom: P(χ² > 27.88) = 0.001.
	t.Logf("%s: χ² = %.2f over %d discards (9 d.o.f.; 0.1%% critical value 27.88)", spec, chi2, n)
	if chi2 > 27.88 {
		t.Fatalf("discards not uniform over the stored examples: χ² = %.2f, counts %v", chi2, counts)
	}
}

// RBP §3 (and BOGD's uniform sampling): the discarded example is chosen
// uniformly at random among the stored ones.
func TestRBPDiscardIsUniform(t *testing.T) { checkUniformDiscard(t, "rbp:sigma=0.3,budget=10", 10) }

func TestBOGDDiscardIsUniform(t *testing.T) {
	checkUniformDiscard(t, "bogd:sigma=0.3,budget=10,seed=7", 10)
}

// bpasQ is the BPA-S objective of replacing stored example r by (x, β):
// ½‖f' − f‖² + C·hinge(f'(x)), with f' = f − a_r κ(x_r, ·) + β κ(x, ·),
// evaluated from its definition.
func bpasQ(k *kernelOf, ref fbSV, r int, x []float64, y, beta, c float64) float64 {
	ar, xr := ref.a[r], ref.rows[r]
	dist := ar*ar*k.Diag(xr) + beta*beta*k.Diag(x) - 2*ar*beta*k.Eval(xr, x)
	var f2 float64
	for i, row := range ref.rows {
		if i != r {
			f2 += ref.a[i] * k.Eval(row, x)
		}
	}
	f2 += beta * k.Diag(x)
	return 0.5*dist + c*math.Max(0, 1-y*f2)
}

// goldenMin minimises a convex function of one variable on [lo, hi].
func goldenMin(q func(float64) float64, lo, hi float64) float64 {
	g := (math.Sqrt(5) - 1) / 2
	a, b := lo, hi
	for range 120 {
		c, d := b-g*(b-a), a+g*(b-a)
		if q(c) < q(d) {
			b = d
		} else {
			a = c
		}
	}
	return (a + b) / 2
}

// BPA-S (Wang & Vucetic 2010, §3): below the budget a loss round stores
// (x, τ y) with τ = min(C, ℓ/κ(x, x)); at the budget it replaces the stored
// example r whose replacement minimises Q_r = ½‖f' − f‖² + C ℓ(f'(x)) over
// r and over the new coefficient β. The reference minimises Q over β
// numerically for every r; the Gaussian and a polynomial kernel (κ(x, x) ≠ 1)
// are both checked.
func TestBPASReplacesMinimumQr(t *testing.T) {
	for _, spec := range []string{"bpas:sigma=0.8,budget=12,c=0.7", "bpas:kernel=polynomial,degree=2,coef0=0.5,budget=12,c=0.3"} {
		t.Run(spec, func(t *testing.T) {
			xs, ys := stream(Classification, 400, 3, 22)
			l, _ := New(spec, 3)
			c := l.(*BPAS).c
			k := fbKernel(l)
			replaced := 0
			for i := range xs {
				x, y := xs[i], ys[i]
				ref := fbSnapshot(fbSet(l))
				f := l.Learn(x, y)
				if want := ref.score(l, x); math.Abs(f-want) > 1e-10*math.Max(1, math.Abs(want)) {
					t.Fatalf("event %d: score %v, reference %v", i, f, want)
				}
				got := fbSnapshot(fbSet(l))
				loss := math.Max(0, 1-y*f)
				switch {
				case loss == 0:
					checkSameSet(t, i, got, ref)
				case len(ref.rows) < 12:
					ref.rows = append(ref.rows, x)
					ref.a = append(ref.a, math.Min(c, loss/k.Diag(x))*y)
					checkSameSet(t, i, got, ref)
				default:
					best := math.Inf(1)
					qmin := make([]float64, len(ref.rows))
					bmin := make([]float64, len(ref.rows))
					for r := range ref.rows {
						q := func(b float64) float64 { return bpasQ(k, ref, r, x, y, b, c) }
						bmin[r] = goldenMin(q, -50, 50)
						qmin[r] = q(bmin[r])
						best = math.Min(best, qmin[r])
					}
					r := removed(t, i, ref, got)
					if r < 0 {
						t.Fatalf("event %d: full budget, loss %v, nothing replaced", i, loss)
					}
					j := got.find(x)
					if qmin[r] > best+1e-9 {
						t.Fatalf("event %d: replaced r=%d with Q %v, but the minimum over r is %v", i, r, qmin[r], best)
					}
					if math.Abs(got.a[j]-bmin[r]) > 1e-6 {
						t.Fatalf("event %d: new coefficient %v, numerical argmin over β %v", i, got.a[j], bmin[r])
					}
					ref.rows[r], ref.a[r] = x, got.a[j]
					checkSameSet(t, i, got, ref)
					replaced++
				}
			}
			if replaced < 30 {
				t.Fatalf("only %d replacements", replaced)
			}
		})
	}
}

// BOGD (Zhao et al. 2012, as in the LSOKL toolbox): on y f ≤ 1 below the
// budget, a ← (1−ηλ)a and store (x, ηy); at the budget discard one example,
// a ← B(1−ηλ)/(B−1)·a, store (x, ηy), then bound by ηγ (clip=scale: the
// whole vector times min(1, ηγ/max|a|); clip=coef: each |a_i| ≤ ηγ);
// otherwise a ← (1−ηλ)a. η = 0.5, γ = 1.2, B = 5 make the bound bite.
func TestBOGDRescaleAndClip(t *testing.T) {
	const eta, lambda, gamma, B = 0.5, 0.01, 1.2, 5
	for _, clip := range []string{"scale", "coef"} {
		t.Run(clip, func(t *testing.T) {
			xs, ys := stream(Classification, 600, 3, 23)
			l, _ := New("bogd:sigma=0.5,budget=5,eta=0.5,lambda=0.01,gamma=1.2,clip="+clip, 3)
			ref := fbSV{}
			clipped := 0
			for i := range xs {
				x, y := xs[i], ys[i]
				want := ref.score(l, x)
				f := l.Learn(x, y)
				if math.Abs(f-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Fatalf("event %d: score %v, reference %v", i, f, want)
				}
				got := fbSnapshot(fbSet(l))
				switch {
				case y*want > 1:
					for j := range ref.a {
						ref.a[j] *= 1 - eta*lambda
					}
				case len(ref.rows) < B:
					for j := range ref.a {
						ref.a[j] *= 1 - eta*lambda
					}
					ref.rows = append(ref.rows, x)
					ref.a = append(ref.a, eta*y)
				default:
					r := removed(t, i, ref, got)
					if r < 0 {
						t.Fatal("full budget but nothing discarded")
					}
					ref = ref.remove(r)
					for j := range ref.a {
						ref.a[j] *= B * (1 - eta*lambda) / (B - 1)
					}
					ref.rows = append(ref.rows, x)
					ref.a = append(ref.a, eta*y)
					var m float64
					for _, v := range ref.a {
						m = math.Max(m, math.Abs(v))
					}
					if m > eta*gamma {
						clipped++
						for j, v := range ref.a {
							if clip == "scale" {
								ref.a[j] = v * (eta * gamma / m)
							} else {
								ref.a[j] = math.Max(-eta*gamma, math.Min(eta*gamma, v))
							}
						}
					}
				}
				checkSameSet(t, i, got, ref)
				for _, v := range got.a {
					if math.Abs(v) > eta*gamma*(1+1e-15) {
						t.Fatalf("event %d: coefficient %v exceeds ηγ = %v", i, v, eta*gamma)
					}
				}
			}
			if clipped < 20 {
				t.Fatalf("the bound applied only %d times", clipped)
			}
		})
	}
}

// BOGD defaults (LSOKL toolbox): η = 0.2, γ = 10, λ = 1/T² with T the
// horizon, hinge loss, toolbox clipping.
func TestBOGDDefaults(t *testing.T) {
	l, err := New("bogd:sigma=1,horizon=1000", 3)
	if err != nil {
		t.Fatal(err)
	}
	const want = "bogd:budget=100,clip=scale,eta=0.2,gamma=10,horizon=1000,kernel=gaussian,lambda=1e-06,loss=hinge,seed=1,sigma=1"
	if got := l.Info().Spec; got != want {
		t.Fatalf("spec %s\nwant %s", got, want)
	}
	for _, bad := range []string{"bogd:budget=1", "bogd:loss=square", "bogd:clip=none", "bogd:lambda=-1"} {
		if _, err := New(bad, 3); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// gramInverse returns the inverse of the Gram matrix of rows (gonum).
func gramInverse(t *testing.T, k *kernelOf, rows [][]float64) *mat.Dense {
	t.Helper()
	n := len(rows)
	g := mat.NewDense(n, n, nil)
	for i := range rows {
		for j := range rows {
			g.Set(i, j, k.Eval(rows[i], rows[j]))
		}
	}
	var inv mat.Dense
	if err := inv.Inverse(g); err != nil {
		t.Fatalf("gonum inverse of the %d×%d Gram matrix: %v", n, n, err)
	}
	return &inv
}

// Projectron (Orabona et al. 2008, §3; LSOKL's budgeted form): the kept
// inverse equals gonum's inverse of the Gram matrix; on a mistake with
// δ² = κ(x,x) − kᵀK⁻¹k > ε and room, (x, y) is stored; otherwise (full, or
// δ² ≤ ε) the coefficients move by y K⁻¹k, the projection of φ(x) onto the
// stored span.
func TestProjectronProjectsOntoStoredSpan(t *testing.T) {
	xs, ys := stream(Classification, 500, 4, 24)
	l, _ := New("projectron:sigma=0.8,budget=20", 4)
	p := l.(*Projectron)
	k := fbKernel(l)
	projections := 0
	for i := range xs {
		x, y := xs[i], ys[i]
		ref := fbSnapshot(&p.set)
		want := ref.score(l, x)
		f := l.Learn(x, y)
		if math.Abs(f-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Fatalf("event %d: score %v, reference %v", i, f, want)
		}
		got := fbSnapshot(&p.set)
		if y*want > 0 {
			checkSameSet(t, i, got, ref)
			continue
		}
		n := len(ref.rows)
		var d []float64
		delta2 := k.Diag(x)
		if n > 0 {
			inv := gramInverse(t, k, ref.rows)
			kv := mat.NewVecDense(n, nil)
			for j, row := range ref.rows {
				kv.SetVec(j, k.Eval(row, x))
			}
			var dv mat.VecDense
			dv.MulVec(inv, kv)
			d = dv.RawVector().Data
			delta2 -= mat.Dot(kv, &dv)
		}
		if n < 20 && delta2 > p.eps {
			ref.rows = append(ref.rows, x)
			ref.a = append(ref.a, y)
			checkSameSet(t, i, got, ref)
		} else {
			projections++
			if len(got.rows) != n {
				t.Fatalf("event %d: projection round stored an example", i)
			}
			for j := range ref.a {
				if w := ref.a[j] + y*d[j]; math.Abs(got.a[j]-w) > 1e-7*math.Max(1, math.Abs(w)) {
					t.Fatalf("event %d: coefficient %d is %v, reference a + y K⁻¹k = %v", i, j, got.a[j], w)
				}
			}
		}
		// The grown Cholesky factor reproduces the Gram matrix: L Lᵀ = K.
		m := len(got.rows)
		if p.chol.Size() != m {
			t.Fatalf("event %d: factor of order %d for %d stored examples", i, p.chol.Size(), m)
		}
		lo := make([]float64, m*m)
		p.chol.LowerTo(lo)
		for r := 0; r < m; r++ {
			for c := 0; c < m; c++ {
				var llt float64
				for q := 0; q < m; q++ {
					llt += lo[r*m+q] * lo[c*m+q]
				}
				if want := k.Eval(got.rows[r], got.rows[c]); math.Abs(llt-want) > 1e-10 {
					t.Fatalf("event %d: (L Lᵀ)[%d,%d] = %v, K = %v", i, r, c, llt, want)
				}
			}
		}
	}
	if projections < 30 || p.set.len() != 20 {
		t.Fatalf("%d projections, %d stored: the full-budget phase was not exercised", projections, p.set.len())
	}
}

// Projectron, duplicates: the LSOKL toolbox divides by δ = 0 when a stored
// example recurs and its coefficients become NaN (w7a has many duplicate
// rows). With the δ² ≤ ε rule a recurring example is projected, i.e. its
// stored copy's coefficient moves, and nothing becomes NaN or infinite.
func TestProjectronDuplicatesAreProjected(t *testing.T) {
	pool, _ := stream(Classification, 15, 5, 25)
	run := func(spec string) *Projectron {
		src := rng.New(25)
		l, _ := New(spec, 5)
		for i := 0; i < 3000; i++ {
			l.Learn(pool[src.IntN(len(pool))], src.Sign()) // noisy labels: mistakes keep coming
		}
		return l.(*Projectron)
	}
	p := run("projectron:sigma=1,budget=40")
	if p.set.len() > len(pool) {
		t.Fatalf("%d stored examples from %d distinct inputs", p.set.len(), len(pool))
	}
	minDiag := func(p *Projectron) float64 { // the smallest δ of a stored example
		m := math.Inf(1)
		for i := 0; i < p.chol.Size(); i++ {
			m = math.Min(m, p.chol.At(i, i))
		}
		return m
	}
	for _, v := range p.set.a {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("non-finite coefficient %v", v)
		}
	}
	// With ε = 0 only an exactly zero δ² is caught; round-off leaves a
	// recurring example with a tiny positive δ², so it is stored again with
	// a near-zero pivot — the toolbox's failure (K⁻¹ explodes) in a milder
	// form. This is why the default ε is not 0. (Logged, not asserted: it
	// depends on round-off.)
	p0 := run("projectron:sigma=1,budget=40,eps=0")
	t.Logf("15 distinct inputs: eps=1e-8 stores %d (smallest pivot δ %.3g); eps=0 stores %d (smallest pivot δ %.3g)",
		p.set.len(), minDiag(p), p0.set.len(), minDiag(p0))
	// Hand-checkable: x, then x again with the other label. The first round
	// stores (x, +1); the second is a mistake (f = 1, y = −1) with
	// d* = K⁻¹k = 1/1 · 1 = 1 and δ² = 1 − 1·1 = 0, so it projects:
	// a = 1 + (−1)·1 = 0.
	l, _ := New("projectron:sigma=1,budget=5", 2)
	x := []float64{0.3, -0.2}
	l.Learn(x, 1)
	if f := l.Learn(x, -1); f != 1 {
		t.Fatalf("score %v, want 1", f)
	}
	p = l.(*Projectron)
	if p.set.len() != 1 || p.set.a[0] != 0 {
		t.Fatalf("after the duplicate: %d stored, coefficients %v; want 1 stored, [0]", p.set.len(), p.set.a)
	}
}

// Projectron with a linear kernel in ℝ³: once three independent examples
// are stored they span the feature space, δ² ≈ 0 for every later input, and
// the model never stores a fourth, whatever the budget.
func TestProjectronStopsGrowingWhenSpanIsFull(t *testing.T) {
	xs, ys := stream(Classification, 500, 3, 26)
	l, _ := New("projectron:kernel=linear,budget=50", 3)
	for i := range xs {
		l.Learn(xs[i], ys[i])
	}
	if u := l.Info().Used; u != 3 {
		t.Fatalf("%d stored examples with a linear kernel in 3 dimensions, want 3", u)
	}
}

// BPA-S, hand-checkable: Gaussian kernel, B = 1, C = 1. Round 1 (f = 0,
// ℓ = 1) stores (x1, +1). Round 2 at x2 with κ(x1, x2) = e^{-1/2}, label −1:
// f = e^{-1/2}, ℓ = 1 + e^{-1/2} > C, so τ = 1 and the only candidate gives
// β = 1·e^{-1/2} − 1: x2 replaces x1 with coefficient e^{-1/2} − 1.
func TestBPASHandExample(t *testing.T) {
	l, _ := New("bpas:sigma=1,budget=1", 1)
	l.Learn([]float64{0}, 1)
	f := l.Learn([]float64{1}, -1)
	e := math.Exp(-0.5)
	if math.Abs(f-e) > 1e-15 {
		t.Fatalf("score %v, want e^{-1/2}", f)
	}
	s := fbSet(l)
	if s.len() != 1 || s.sv.Row(0)[0] != 1 || math.Abs(s.a[0]-(e-1)) > 1e-15 {
		t.Fatalf("stored %v with %v, want [1] with %v", s.sv.Data(), s.a, e-1)
	}
}

// BOGD, hand-checkable: B = 2, η = 0.5, λ = 0, γ = 1 (ηγ = 0.5), and
// inputs far apart (κ ≈ 0). Rounds 1–2 store (x1, 0.5), (x2, −0.5). Round 3
// (y f = 0 ≤ 1) discards one, rescales the other by B/(B−1) = 2 to ±1,
// stores (x3, 0.5), and clip=scale multiplies both by 0.5/1: the survivor
// ends at ±0.5 and the new one at 0.25.
func TestBOGDHandExample(t *testing.T) {
	l, _ := New("bogd:sigma=0.01,budget=2,eta=0.5,lambda=0,gamma=1", 1)
	l.Learn([]float64{0}, 1)
	l.Learn([]float64{10}, -1)
	l.Learn([]float64{20}, 1)
	s := fbSnapshot(fbSet(l))
	j := s.find([]float64{20})
	if len(s.rows) != 2 || j < 0 || s.a[j] != 0.25 || math.Abs(s.a[1-j]) != 0.5 {
		t.Fatalf("stored %v with %v; want x3 = 20 with 0.25 and a survivor with ±0.5", s.rows, s.a)
	}
}
