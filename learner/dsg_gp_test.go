package learner

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"okstream/dataset"
	"okstream/learner/kernel"
	"okstream/learner/rng"
)

// TestDSGGPMatchesPaperRecursion checks the block implementation at
// B = r = r_v = 1 against the paper's scalar recursions written out
// directly (§4: Algorithm 1 with the square loss for the mean; the θ_ij
// updates for the variance operator), with the same regenerated features.
func TestDSGGPMatchesPaperRecursion(t *testing.T) {
	const T = 24
	c := DSGGPConfig{Dim: 2, Sigma: 1.3, Noise: 0.1, N: 50, Block: 1, VarBlock: 1, MaxFeatures: T, MaxVarFeatures: T,
		Gamma0: 0.8, T0: 5, VarGamma0: 0.6, VarT0: 7, Seed: 11}
	g, err := NewDSGGP(c)
	if err != nil {
		t.Fatal(err)
	}
	xs, ys, _ := dataset.Ridge2D(rng.New(5), T)
	g.fm.Grow(T)
	g.fv.Grow(T)
	g.fw.Grow(T)
	feat := func(cache *kernel.SeededBlocks, x []float64, i int) float64 {
		out := make([]float64, 1)
		g.nz = kernel.NonZero(g.nz, x)
		return g.cosFeatures(cache, out, x, i, i+1)[0]
	}
	lambda := c.Noise / float64(c.N)
	var alpha []float64
	theta := make([][]float64, T) // θ[i][j], i ≤ j
	for i := range theta {
		theta[i] = make([]float64, T)
	}
	for s := 0; s < T; s++ { // step t = s+1 on (x_t, y_t)
		x, y := xs[s], ys[s]
		gm, gv := g.Gamma(uint64(s + 1))
		var f float64
		for i, a := range alpha {
			f += a * feat(g.fm, x, i)
		}
		for i := range alpha {
			alpha[i] *= 1 - lambda*gm
		}
		alpha = append(alpha, -gm*(f-y)*feat(g.fm, x, s))
		col := make([]float64, s)
		for i := 0; i < s; i++ {
			var u float64
			for j := i; j < s; j++ {
				u += theta[i][j] * feat(g.fw, x, j)
			}
			col[i] = -gv * u * feat(g.fw, x, s)
		}
		for i := 0; i < s; i++ {
			for j := i; j < s; j++ {
				theta[i][j] *= 1 - lambda*gv
			}
			theta[i][s] = col[i]
		}
		theta[s][s] = gv * feat(g.fv, x, s) * feat(g.fw, x, s)
		g.Step(xs[s:s+1], ys[s:s+1])
	}
	if g.Step(xs[:1], ys[:1]) {
		t.Fatal("Step changed a model at both caps")
	}
	q, _, _ := dataset.Ridge2D(rng.New(6), 5)
	mean, variance := make([]float64, len(q)), make([]float64, len(q))
	g.Posterior(mean, variance, q)
	for k, x := range q {
		var m, a float64
		for i := range alpha {
			m += alpha[i] * feat(g.fm, x, i)
			for j := i; j < T; j++ {
				a += theta[i][j] * feat(g.fv, x, i) * feat(g.fw, x, j)
			}
		}
		if math.Abs(mean[k]-m) > 1e-12*(1+math.Abs(m)) {
			t.Errorf("point %d: mean %v, paper's recursion %v", k, mean[k], m)
		}
		if v := 1 - a; math.Abs(variance[k]-v) > 1e-12*(1+math.Abs(v)) {
			t.Errorf("point %d: variance %v, paper's recursion %v", k, variance[k], v)
		}
	}
}

// dsgGPExact returns the GP posterior mean and variance (eq. 9) by a
// direct inverse.
func dsgGPExact(t *testing.T, sigma, noise float64, xs [][]float64, ys []float64, q [][]float64) (m, v []float64) {
	k := kernel.MustNew(kernel.Gaussian, sigma, 0, 0)
	n := len(xs)
	K := mat.NewDense(n, n, nil)
	for i := range xs {
		for j := range xs {
			K.Set(i, j, k.Eval(xs[i], xs[j]))
		}
		K.Set(i, i, K.At(i, i)+noise)
	}
	var inv mat.Dense
	if err := inv.Inverse(K); err != nil {
		t.Fatal(err)
	}
	for _, x := range q {
		ks := make([]float64, n)
		for i := range xs {
			ks[i] = k.Eval(x, xs[i])
		}
		kv := mat.NewVecDense(n, ks)
		var w mat.VecDense
		w.MulVec(&inv, kv)
		m = append(m, mat.Dot(&w, mat.NewVecDense(n, ys)))
		v = append(v, 1-mat.Dot(&w, kv))
	}
	return m, v
}

// dsgGPRun feeds g steps mini-batches drawn uniformly from (xs, ys) and
// returns the RMS errors of the mean and the variance against (m, v) after
// each step listed in at.
func dsgGPErrors(g *DSGGP, xs [][]float64, ys []float64, q [][]float64, m, v []float64, B int, at []int, seed uint64) (em, ev []float64) {
	draw := rng.New(seed)
	bx, by := make([][]float64, B), make([]float64, B)
	mt, vt := make([]float64, len(q)), make([]float64, len(q))
	k := 0
	for s := 1; k < len(at); s++ {
		for b := range bx {
			i := draw.IntN(len(xs))
			bx[b], by[b] = xs[i], ys[i]
		}
		g.Step(bx, by)
		if s != at[k] {
			continue
		}
		k++
		g.Posterior(mt, vt, q)
		var sm, sv float64
		for i := range q {
			sm += (mt[i] - m[i]) * (mt[i] - m[i])
			sv += (vt[i] - v[i]) * (vt[i] - v[i])
		}
		em = append(em, math.Sqrt(sm/float64(len(q))))
		ev = append(ev, math.Sqrt(sv/float64(len(q))))
	}
	return em, ev
}

// TestDSGGPErrorsFall: on a small instance (64 training points) DSG's
// posterior mean and variance approach the closed form: the errors after
// 2^7 steps are well below those after 2^3.
func TestDSGGPErrorsFall(t *testing.T) {
	xs, ys, _ := dataset.Ridge2D(rng.New(21), 64)
	q, _, _ := dataset.Ridge2D(rng.New(22), 32)
	const sigma, noise = 1.5, 0.1
	m, v := dsgGPExact(t, sigma, noise, xs, ys, q)
	g, err := NewDSGGP(DSGGPConfig{Dim: 2, Sigma: sigma, Noise: noise, N: len(xs), Block: 64, VarBlock: 8,
		MaxFeatures: 1 << 14, MaxVarFeatures: 1 << 10, Gamma0: 2, T0: 100, VarGamma0: 1, VarT0: 100, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	em, ev := dsgGPErrors(g, xs, ys, q, m, v, 16, []int{1 << 3, 1 << 7}, 4)
	t.Logf("mean error %.4g → %.4g, variance error %.4g → %.4g (RMS of m %.3g)", em[0], em[1], ev[0], ev[1], rms(m))
	if !(em[1] < 0.5*em[0]) {
		t.Errorf("mean error at 2^7 steps %.4g not below half of that at 2^3 (%.4g)", em[1], em[0])
	}
	if !(ev[1] < 0.5*ev[0]) {
		t.Errorf("variance error at 2^7 steps %.4g not below half of that at 2^3 (%.4g)", ev[1], ev[0])
	}
}

func rms(a []float64) float64 {
	var s float64
	for _, x := range a {
		s += x * x
	}
	return math.Sqrt(s / float64(len(a)))
}

// TestDSGGPDeterministic: the same configuration and batches give the same
// bits; another seed gives other features.
func TestDSGGPDeterministic(t *testing.T) {
	xs, ys, _ := dataset.Ridge2D(rng.New(31), 200)
	q, _, _ := dataset.Ridge2D(rng.New(32), 10)
	run := func(seed uint64) ([]float64, []float64) {
		g, err := NewDSGGP(DSGGPConfig{Dim: 2, Sigma: 1, Noise: 0.1, N: len(xs), Block: 32, VarBlock: 8,
			MaxFeatures: 1 << 10, MaxVarFeatures: 1 << 8, Gamma0: 1, T0: 50, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for s := 0; s+16 <= len(xs); s += 16 {
			g.Step(xs[s:s+16], ys[s:s+16])
		}
		m, v := make([]float64, len(q)), make([]float64, len(q))
		g.Posterior(m, v, q)
		return m, v
	}
	m1, v1 := run(7)
	m2, v2 := run(7)
	m3, v3 := run(8)
	same := func(a, b []float64) bool {
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				return false
			}
		}
		return true
	}
	if !same(m1, m2) || !same(v1, v2) {
		t.Error("same seed and batches, different posterior estimates")
	}
	if same(m1, m3) || same(v1, v3) {
		t.Error("different seeds, identical estimates")
	}
}

// TestDSGGPConfigErrors: invalid configurations are refused, not panicked on.
func TestDSGGPConfigErrors(t *testing.T) {
	ok := DSGGPConfig{Dim: 2, Sigma: 1, Noise: 0.1, N: 10, Block: 4, VarBlock: 4, MaxFeatures: 8, MaxVarFeatures: 8, Gamma0: 1, T0: 1}
	if _, err := NewDSGGP(ok); err != nil {
		t.Fatal(err)
	}
	for _, mod := range []func(*DSGGPConfig){
		func(c *DSGGPConfig) { c.Dim = 0 },
		func(c *DSGGPConfig) { c.Sigma = 0 },
		func(c *DSGGPConfig) { c.Noise = math.NaN() },
		func(c *DSGGPConfig) { c.N = 0 },
		func(c *DSGGPConfig) { c.VarBlock = 0 },
		func(c *DSGGPConfig) { c.MaxVarFeatures = 2 },
		func(c *DSGGPConfig) { c.MaxVarFeatures = 1 << 15 },
		func(c *DSGGPConfig) { c.Gamma0 = math.Inf(1) },
		func(c *DSGGPConfig) { c.VarT0 = -1 },
	} {
		c := ok
		mod(&c)
		if _, err := NewDSGGP(c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

// TestDSGGPAverageIsTheMeanOfTheIterates: the estimates are linear in the
// coefficients and in Θ, so the averaged model's posterior at step T must
// be the mean of the last iterates' posteriors at steps 1..T (run in
// lockstep on the same batches), up to rounding; and Average must not
// change the iterates themselves.
func TestDSGGPAverageIsTheMeanOfTheIterates(t *testing.T) {
	const T, B = 20, 8
	c := DSGGPConfig{Dim: 2, Sigma: 1.1, Noise: 0.1, N: 100, Block: 16, VarBlock: 4, MaxFeatures: 16 * T, MaxVarFeatures: 48,
		Gamma0: 0.5, T0: 10, Seed: 3}
	last, err := NewDSGGP(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Average = true
	avg, err := NewDSGGP(c)
	if err != nil {
		t.Fatal(err)
	}
	xs, ys, _ := dataset.Ridge2D(rng.New(9), 100)
	test, _, _ := dataset.Ridge2D(rng.New(10), 30)
	sumM, sumV := make([]float64, len(test)), make([]float64, len(test))
	m, v := make([]float64, len(test)), make([]float64, len(test))
	draw := rng.New(4)
	for s := 1; s <= T; s++ {
		bx, by := make([][]float64, B), make([]float64, B)
		for b := range bx {
			i := draw.IntN(len(xs))
			bx[b], by[b] = xs[i], ys[i]
		}
		last.Step(bx, by)
		avg.Step(bx, by)
		last.Posterior(m, v, test)
		for i := range test {
			sumM[i] += m[i]
			sumV[i] += v[i]
		}
	}
	for i := range last.alpha {
		if last.alpha[i] != avg.alpha[i] {
			t.Fatalf("Average changed the iterate: α[%d] = %v, want %v", i, avg.alpha[i], last.alpha[i])
		}
	}
	avg.Posterior(m, v, test)
	for i, z := range test {
		k := avg.kern.Eval(z, z)
		wantM, wantV := sumM[i]/T, sumV[i]/T // s² = k − 𝒜̂: the mean of s²_t is k − the mean of 𝒜̂_t
		if math.Abs(m[i]-wantM) > 1e-9*(1+math.Abs(wantM)) || math.Abs(v[i]-wantV) > 1e-9*(1+math.Abs(k)) {
			t.Fatalf("point %d: averaged posterior (%v, %v), mean of the iterates' (%v, %v)", i, m[i], v[i], wantM, wantV)
		}
	}
	last.Posterior(m, nil, test)
	if math.Abs(m[0]-sumM[0]/T) < 1e-6 {
		t.Fatalf("the last iterate's mean equals the average (%v): the test cannot tell them apart", m[0])
	}
}
