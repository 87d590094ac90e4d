package learner

// Tests of the KORS dictionary (kors.go) against dense reference
// computations with gonum: the leverage-score estimate, the sampling
// frequencies, the maintained factor, the cap and the encoding.

import (
	"bytes"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"okstream/learner/kernel"
	"okstream/learner/rng"
	"okstream/learner/state"
)

// korsPoints returns n uniform points in [−1, 1]^d.
func korsPoints(n, d int, seed uint64) [][]float64 {
	src := rng.New(seed)
	out := make([][]float64, n)
	for i := range out {
		x := make([]float64, d)
		for j := range x {
			x[j] = 2*src.Float64() - 1
		}
		out[i] = x
	}
	return out
}

// korsFill inserts the points one by one with probabilities drawn from
// src in [0.05, 1] (so the weights differ), skipping none.
func korsFill(t *testing.T, k *kors, kern *kernel.Kernel, xs [][]float64, src *rng.Source) {
	t.Helper()
	for _, x := range xs {
		kr := kern.Row(make([]float64, k.Len()), k.Points(), x)
		if err := k.Insert(x, kr, kern.Diag(x), 0.05+0.95*src.Float64()); err != nil {
			t.Fatal(err)
		}
	}
}

// korsDense returns S̄ K_II S̄ + γI for the dictionary, by pairwise kernel
// evaluations.
func korsDense(k *kors, kern *kernel.Kernel) *mat.SymDense {
	m := k.Len()
	g := mat.NewSymDense(m, nil)
	s := k.Weights()
	for i := range m {
		for j := i; j < m; j++ {
			v := s[i] * s[j] * kern.Eval(k.Points().Row(i), k.Points().Row(j))
			if i == j {
				v += k.cfg.gamma
			}
			g.SetSym(i, j, v)
		}
	}
	return g
}

// The residual and both probability forms equal dense computations: r from
// (S̄KS̄ + γI)⁻¹, the code's form from the exact ridge leverage score of x
// in the extended weighted matrix K̄ (and from the R code's own expression
// 1 − c̄ᵀ(K̄ + γI)⁻¹c̄), the paper's form from r/γ.
func TestKORSLeverageScoreMatchesDense(t *testing.T) {
	kern := kernel.MustNew(kernel.Gaussian, 0.8, 0, 0)
	for _, w := range []korsWeight{korsInvSqrtP, korsInvP} {
		for _, gamma := range []float64{0.5, 1, 10} {
			cfg := korsConfig{gamma: gamma, beta: 0.7, eps: 0.5, prob: korsProbCode, weight: w}
			k := newKORS(cfg, 3)
			korsFill(t, k, &kern, korsPoints(25, 3, 1), rng.New(2))
			G := korsDense(k, &kern)
			var Ginv mat.Dense
			if err := Ginv.Inverse(G); err != nil {
				t.Fatal(err)
			}
			m := k.Len()
			s := k.Weights()
			for ci, x := range korsPoints(20, 3, 3) {
				kr := kern.Row(make([]float64, m), k.Points(), x)
				kt := mat.NewVecDense(m, nil)
				for i := range m {
					kt.SetVec(i, s[i]*kern.Eval(k.Points().Row(i), x))
				}
				var u mat.VecDense
				u.MulVec(&Ginv, kt)
				rDense := 1 - mat.Dot(kt, &u)
				r := k.Residual(kr, 1)
				if math.Abs(r-rDense) > 1e-12 {
					t.Fatalf("w=%d γ=%v cand %d: residual %v, dense %v", w, gamma, ci, r, rDense)
				}
				// Extended weighted matrix with x at weight 1.
				ext := mat.NewSymDense(m+1, nil)
				for i := range m {
					for j := i; j < m; j++ {
						ext.SetSym(i, j, s[i]*s[j]*kern.Eval(k.Points().Row(i), k.Points().Row(j)))
					}
					ext.SetSym(i, m, kt.AtVec(i))
				}
				ext.SetSym(m, m, 1)
				reg := mat.NewSymDense(m+1, nil)
				reg.AddSym(ext, korsEye(m+1, gamma))
				var regInv mat.Dense
				if err := regInv.Inverse(reg); err != nil {
					t.Fatal(err)
				}
				var lev mat.Dense
				lev.Mul(ext, &regInv)
				tau := lev.At(m, m) // exact ridge leverage score of x in K̄
				c := mat.NewVecDense(m+1, nil)
				for i := 0; i <= m; i++ {
					c.SetVec(i, ext.At(i, m))
				}
				var rc mat.VecDense
				rc.MulVec(&regInv, c)
				codeExpr := (1 - mat.Dot(c, &rc)) / gamma // the R code's tem4/γ
				if math.Abs(codeExpr-tau) > 1e-12 {
					t.Fatalf("R code expression %v != leverage score %v", codeExpr, tau)
				}
				k.cfg.prob = korsProbCode
				if p, want := k.Prob(kr, 1), math.Min(0.7*1.5*tau, 1); math.Abs(p-want) > 1e-12 {
					t.Fatalf("w=%d γ=%v cand %d: code probability %v, dense %v", w, gamma, ci, p, want)
				}
				k.cfg.prob = korsProbPaper
				if p, want := k.Prob(kr, 1), math.Min(0.7*1.5*rDense/gamma, 1); math.Abs(p-want) > 1e-12 {
					t.Fatalf("w=%d γ=%v cand %d: paper probability %v, dense %v", w, gamma, ci, p, want)
				}
				k.cfg.prob = korsProbCode
			}
		}
	}
}

func korsEye(n int, v float64) *mat.SymDense {
	e := mat.NewSymDense(n, nil)
	for i := range n {
		e.SetSym(i, i, v)
	}
	return e
}

// The first point of an empty dictionary has r = κ(x,x) and, at the
// defaults (γ = 1, β = 1, ε = 0.5), p = (1+ε)·1/(1+1) = 0.75.
func TestKORSFirstPointProbability(t *testing.T) {
	k := newKORS(korsConfig{gamma: 1, beta: 1, eps: 0.5, prob: korsProbCode, weight: korsInvP}, 2)
	if p := k.Prob(nil, 1); p != 0.75 {
		t.Fatalf("first-point probability %v, want 0.75", p)
	}
	k.cfg.prob = korsProbPaper
	if p := k.Prob(nil, 1); p != 1 {
		t.Fatalf("paper form: first-point probability %v, want min(1.5, 1) = 1", p)
	}
}

// Inclusion frequencies match the probabilities: for candidates with
// probabilities spread over (0, 1), Sample is run from many seeds, and the
// Pearson chi-square statistic of the take counts (one degree of freedom
// per candidate) stays below its 99.9% quantile. Each Sample consumes
// exactly one Float64.
func TestKORSInclusionFrequencies(t *testing.T) {
	kern := kernel.MustNew(kernel.Gaussian, 0.5, 0, 0)
	k := newKORS(korsConfig{gamma: 1, beta: 1, eps: 0.5, prob: korsProbCode, weight: korsInvSqrtP}, 2)
	korsFill(t, k, &kern, korsPoints(30, 2, 7), rng.New(8))
	const trials = 3000
	var chi2 float64
	var ps []float64
	for _, x := range korsPoints(40, 2, 9) {
		kr := kern.Row(make([]float64, k.Len()), k.Points(), x)
		p := k.Prob(kr, 1)
		if p < 0.02 || p > 0.98 || len(ps) == 10 {
			continue
		}
		ps = append(ps, p)
		takes := 0
		for seed := range uint64(trials) {
			src := rng.New(1000*uint64(len(ps)) + seed)
			ref := rng.New(1000*uint64(len(ps)) + seed)
			got, take := k.Sample(kr, 1, src)
			if got != p {
				t.Fatalf("Sample's p %v != Prob %v", got, p)
			}
			if take {
				takes++
			}
			ref.Float64()
			h1, l1 := src.State()
			h2, l2 := ref.State()
			if h1 != h2 || l1 != l2 {
				t.Fatal("Sample did not consume exactly one Float64")
			}
		}
		e := trials * p
		chi2 += (float64(takes) - e) * (float64(takes) - e) / (e * (1 - p))
	}
	if len(ps) < 6 {
		t.Fatalf("only %d candidates with p in (0.02, 0.98): %v", len(ps), ps)
	}
	// 99.9% quantiles of χ² with 6..10 degrees of freedom.
	q := map[int]float64{6: 22.46, 7: 24.32, 8: 26.12, 9: 27.88, 10: 29.59}[len(ps)]
	if chi2 > q {
		t.Fatalf("chi-square %.2f over %d candidates (p = %v) exceeds the 99.9%% quantile %.2f", chi2, len(ps), ps, q)
	}
	t.Logf("chi-square %.2f, %d dof (p = %.3v)", chi2, len(ps), ps)
}

// After many sampled insertions (and growth beyond the initial capacity)
// the maintained factor L satisfies L Lᵀ = S̄K_IIS̄ + γI, and its inverse
// equals W = (S̄K_IIS̄ + γI)⁻¹ computed densely.
func TestKORSFactorMatchesDense(t *testing.T) {
	kern := kernel.MustNew(kernel.Gaussian, 1, 0, 0)
	for _, w := range []korsWeight{korsInvSqrtP, korsInvP} {
		k := newKORS(korsConfig{gamma: 0.5, beta: 1, eps: 0.5, prob: korsProbCode, weight: w}, 4)
		src := rng.New(11)
		for _, x := range korsPoints(1500, 4, 12) {
			kr := kern.Row(make([]float64, k.Len()), k.Points(), x)
			if p, take := k.Sample(kr, 1, src); take {
				if err := k.Insert(x, kr, 1, p); err != nil {
					t.Fatal(err)
				}
			}
		}
		m := k.Len()
		if m < 100 {
			t.Fatalf("only %d insertions", m)
		}
		G := korsDense(k, &kern)
		L := mat.NewDense(m, m, nil)
		for i := range m {
			for j := 0; j <= i; j++ {
				L.Set(i, j, k.chol.At(i, j))
			}
		}
		var LLt mat.Dense
		LLt.Mul(L, L.T())
		if d := korsMaxAbsDiff(&LLt, G); d > 1e-10*mat.Norm(G, math.Inf(1)) {
			t.Fatalf("weights %d: ‖LLᵀ − (S̄KS̄+γI)‖ = %g after %d insertions", w, d, m)
		}
		var W, Linv, WL mat.Dense
		if err := W.Inverse(G); err != nil {
			t.Fatal(err)
		}
		if err := Linv.Inverse(L); err != nil {
			t.Fatal(err)
		}
		WL.Mul(Linv.T(), &Linv)
		if d := korsMaxAbsDiff(&WL, &W); d > 1e-8*mat.Norm(&W, math.Inf(1)) {
			t.Fatalf("weights %d: inverse from the factor differs from W by %g", w, d)
		}
		t.Logf("weights %d: %d points, ‖LLᵀ − G‖ = %.2g", w, m, korsMaxAbsDiff(&LLt, G))
	}
}

func korsMaxAbsDiff(a, b mat.Matrix) float64 {
	r, c := a.Dims()
	var d float64
	for i := range r {
		for j := range c {
			d = math.Max(d, math.Abs(a.At(i, j)-b.At(i, j)))
		}
	}
	return d
}

// The cap is respected: the dictionary stops at max points; a full
// dictionary's Sample neither scores nor draws, and Insert refuses.
func TestKORSCap(t *testing.T) {
	kern := kernel.MustNew(kernel.Gaussian, 0.3, 0, 0)
	k := newKORS(korsConfig{gamma: 1, beta: 1, eps: 0.5, max: 12, prob: korsProbPaper, weight: korsInvSqrtP}, 3)
	src := rng.New(3)
	full := 0
	for _, x := range korsPoints(500, 3, 4) {
		kr := kern.Row(make([]float64, k.Len()), k.Points(), x)
		h, l := src.State()
		p, take := k.Sample(kr, 1, src)
		if k.Full() {
			full++
			h2, l2 := src.State()
			if take || p != 0 || h != h2 || l != l2 {
				t.Fatal("a full dictionary sampled or drew")
			}
			if k.Insert(x, kr, 1, 1) == nil {
				t.Fatal("Insert into a full dictionary succeeded")
			}
		}
		if take {
			if err := k.Insert(x, kr, 1, p); err != nil {
				t.Fatal(err)
			}
		}
		if k.Len() > 12 {
			t.Fatalf("dictionary of %d points, cap 12", k.Len())
		}
	}
	if full < 400 {
		t.Fatalf("cap reached only for the last %d points", full)
	}
}

// encode/decode round-trips exactly and the decoded dictionary continues
// identically; a truncated or over-cap state is refused.
func TestKORSEncodeDecode(t *testing.T) {
	kern := kernel.MustNew(kernel.Gaussian, 0.7, 0, 0)
	cfg := korsConfig{gamma: 1, beta: 1, eps: 0.5, prob: korsProbCode, weight: korsInvSqrtP}
	a := newKORS(cfg, 3)
	srcA := rng.New(5)
	xs := korsPoints(600, 3, 6)
	step := func(k *kors, src *rng.Source, x []float64) {
		kr := kern.Row(make([]float64, k.Len()), k.Points(), x)
		if p, take := k.Sample(kr, 1, src); take {
			if err := k.Insert(x, kr, 1, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, x := range xs[:300] {
		step(a, srcA, x)
	}
	e := state.NewEncoder(0)
	a.encode(e)
	enc := e.Bytes()
	m0 := a.Len()
	d := state.NewDecoder(enc)
	b := decodeKORS(d, cfg, 3)
	if err := d.Done(); err != nil || b == nil {
		t.Fatalf("decode: %v", err)
	}
	e2 := state.NewEncoder(0)
	b.encode(e2)
	if !bytes.Equal(enc, e2.Bytes()) {
		t.Fatal("re-encoded dictionary differs")
	}
	h, l := srcA.State()
	srcB := rng.New(0)
	srcB.Restore(h, l)
	for _, x := range xs[300:] {
		step(a, srcA, x)
		step(b, srcB, x)
	}
	ea, eb := state.NewEncoder(0), state.NewEncoder(0)
	a.encode(ea)
	b.encode(eb)
	if !bytes.Equal(ea.Bytes(), eb.Bytes()) {
		t.Fatal("decoded dictionary continued differently")
	}
	for _, n := range []int{len(enc) - 1, len(enc) / 2, 5} {
		d := state.NewDecoder(enc[:n])
		if k := decodeKORS(d, cfg, 3); k != nil && d.Done() == nil {
			t.Fatalf("truncated state (%d of %d bytes) accepted", n, len(enc))
		}
	}
	capped := cfg
	capped.max = m0 - 1
	if k := decodeKORS(state.NewDecoder(enc), capped, 3); k != nil {
		t.Fatal("state above the cap accepted")
	}
}

// An inserted point gets weight 1/√p (inv_sqrt_p, the ALD code) or 1/p
// (inv_p, PKAWV's code); p = 1 gives weight 1.
func TestKORSInsertionWeights(t *testing.T) {
	kern := kernel.MustNew(kernel.Gaussian, 1, 0, 0)
	for _, c := range []struct {
		w    korsWeight
		want func(p float64) float64
	}{{korsInvSqrtP, func(p float64) float64 { return 1 / math.Sqrt(p) }}, {korsInvP, func(p float64) float64 { return 1 / p }}} {
		k := newKORS(korsConfig{gamma: 1, beta: 1, eps: 0.5, prob: korsProbCode, weight: c.w}, 2)
		for i, x := range korsPoints(5, 2, 13) {
			p := []float64{1, 0.25, 0.5, 0.1, 0.8}[i]
			if err := k.Insert(x, kern.Row(make([]float64, k.Len()), k.Points(), x), 1, p); err != nil {
				t.Fatal(err)
			}
			if got := k.Weights()[i]; math.Abs(got-c.want(p)) > 1e-15*c.want(p) {
				t.Fatalf("weights %d: p = %v gave weight %v, want %v", c.w, p, got, c.want(p))
			}
		}
		if k.Insert(korsPoints(1, 2, 14)[0], make([]float64, 5), 1, 0) == nil {
			t.Fatal("Insert with p = 0 succeeded")
		}
	}
}
