package learner

// Tests named after the claims and algorithms of Dai et al., "Scalable
// Kernel Methods via Doubly Stochastic Gradients" (NIPS 2014; arXiv
// 1407.5599), for DSG.

import (
	"fmt"
	"math"
	"testing"

	"okstream/dataset"
	"okstream/learner/kernel"
	"okstream/learner/rng"
)

func TestDSGSec71AveragedSolutionConvergesAtOneOverT(t *testing.T) {
	const sigma, nu, B = 0.5, 0.05, 32
	tx, _, _ := dataset.Ridge2D(rng.New(2), 150)
	fstar, err := dataset.Ridge2DOptimum(sigma, nu, 32, tx)
	if err != nil {
		t.Fatal(err)
	}
	spec := fmt.Sprintf("dsg:loss=square,sigma=%g,nu=%g,batch=%d,block=%d,max_features=%d,gamma0=10,t0=4,predict_with=average", sigma, nu, B, B, 300*B)
	l, err := New(spec, 2)
	if err != nil {
		t.Fatal(err)
	}
	train := rng.New(3)
	var ts []int
	var errs []float64
	next := 3.0
	for it := 1; it <= 300; it++ {
		xs, ys, _ := dataset.Ridge2D(train, B)
		for i := range xs {
			l.Learn(xs[i], ys[i])
		}
		if float64(it) >= next-1e-9 || it == 300 {
			var e float64
			for i, x := range tx {
				d := l.Predict(x) - fstar[i]
				e += d * d
			}
			ts = append(ts, it)
			errs = append(errs, e/float64(len(tx)))
			next *= math.Pow(10, 0.25)
		}
	}
	slope := dataset.LogLogSlope(ts, errs, ts[0], ts[len(ts)-1])
	t.Logf("t = %v\n‖f̂_t − f*‖² = %.3g\nfitted slope %.3f", ts, errs, slope)
	if ts[len(ts)-1] < 100*ts[0] {
		t.Fatalf("fit spans %d..%d, less than two decades", ts[0], ts[len(ts)-1])
	}
	if slope < -1.3 || slope > -0.7 {
		t.Fatalf("log-log slope of the averaged solution's error is %.3f, want O(1/t): within [−1.3, −0.7]", slope)
	}
}

// refDSG is a literal transcription of Algorithm 1 with mini-batches and
// feature blocks (Algorithm 1 with §4's mini-batches) and the refine update after the
// cap: coefficients in true scale, the batch buffered, every old
// coefficient shrunk explicitly, and the averaged iterate recomputed from
// its definition. The learner (lazy scale, streaming accumulators, cache)
// must agree with it.
type refDSG struct {
	feat           *kernel.Seeded
	nu, gamma0, t0 float64
	B, r, maxF     int
	all            bool    // update=all: every feature drawn so far takes each step
	eta            float64 // averaging weight (η+1)/(t+η); 0: 1/t
	w              [][]float64
	b              []float64
	a, abar        []float64
	bx             [][]float64
	by             []float64
	t              int
}

func (r *refDSG) phi(i int, x []float64) float64 {
	nz := kernel.NonZero(nil, x)
	return kernel.CosFeature(kernel.Project(r.w[i], x, nz, r.b[i]))
}

func (r *refDSG) eval(coef []float64, x []float64) float64 {
	var s float64
	for i, c := range coef {
		s += c * r.phi(i, x)
	}
	return s
}

func (r *refDSG) learn(x []float64, y float64) (last, avg float64) {
	last, avg = r.eval(r.a, x), r.eval(r.abar, x)
	r.bx = append(r.bx, x)
	r.by = append(r.by, last-y) // ℓ'(f_t(x), y) for ½(f−y)²
	if len(r.bx) < r.B {
		return
	}
	r.t++
	g := r.gamma0 / (1 + float64(r.t-1)/r.t0)
	K := len(r.a)
	if r.all { // a new block (while K < K_max), then one step on all features
		for k := K; k < min(K+r.r, r.maxF); k++ {
			w := make([]float64, r.feat.Dim())
			r.b = append(r.b, r.feat.Frequency(w, uint64(k)))
			r.w = append(r.w, w)
			r.a = append(r.a, 0)
			r.abar = append(r.abar, 0)
		}
		n := len(r.a)
		for i := range r.a {
			var s float64
			for m, xm := range r.bx {
				s += r.by[m] * r.phi(i, xm)
			}
			r.a[i] = (1-g*r.nu)*r.a[i] - g/float64(r.B*n)*s
		}
	} else if K < r.maxF {
		for i := range r.a { // step 6: shrink old coefficients
			r.a[i] *= 1 - g*r.nu
		}
		for k := 0; k < min(r.r, r.maxF-K); k++ { // steps 3–5: a new block
			w := make([]float64, r.feat.Dim())
			r.b = append(r.b, r.feat.Frequency(w, uint64(K+k)))
			r.w = append(r.w, w)
			var s float64
			for m, xm := range r.bx {
				s += r.by[m] * r.phi(K+k, xm)
			}
			r.a = append(r.a, -g/float64(r.B*min(r.r, r.maxF-K))*s)
			r.abar = append(r.abar, 0)
		}
	} else { // refine: the functional step with all K features
		for i := range r.a {
			var s float64
			for m, xm := range r.bx {
				s += r.by[m] * r.phi(i, xm)
			}
			r.a[i] = (1-g*r.nu)*r.a[i] - g/float64(r.B*K)*s
		}
	}
	wt := 1 / float64(r.t)
	if r.eta > 0 {
		wt = (r.eta + 1) / (float64(r.t) + r.eta)
	}
	for i := range r.abar {
		r.abar[i] += (r.a[i] - r.abar[i]) * wt
	}
	r.bx, r.by = r.bx[:0], r.by[:0]
	return
}

// Algorithm 1 (steps 3–6) and Algorithm 2 with mini-batches and feature
// blocks: the learner's scores, last iterate and averaged, agree with the
// literal transcription to round-off, before and after the feature cap.
func TestDSGAlgorithm1MatchesLiteralTranscription(t *testing.T) {
	xs, ys := stream(Regression, 900, 3, 21)
	l := dsgOf(t, "dsg:loss=square,sigma=0.8,nu=0.01,batch=5,block=7,max_features=100,gamma0=1.5,t0=20,predict_with=average", 3)
	feat, _ := kernel.NewSeeded(kernel.FamilyGaussian, 0.8, 0, 3, 1)
	ref := &refDSG{feat: feat, nu: 0.01, gamma0: 1.5, t0: 20, B: 5, r: 7, maxF: 100}
	matchRefDSG(t, l, ref, xs, ys)
}

// matchRefDSG streams xs through an averaging DSG and its literal
// transcription and fails at the first score (last iterate or average)
// that differs beyond round-off, or if the run did not reach the cap of
// 100 features and refine for 150 iterations.
func matchRefDSG(t *testing.T, l *DSG, ref *refDSG, xs [][]float64, ys []float64) {
	t.Helper()
	for i := range xs {
		avg := l.Predict(xs[i]) // an averaging predict_with
		l.average = false
		last := l.Predict(xs[i])
		l.average = true
		rl, ra := ref.learn(xs[i], ys[i])
		if got := l.Learn(xs[i], ys[i]); got != avg {
			t.Fatalf("event %d: Learn %v, Predict %v", i, got, avg)
		}
		if math.Abs(last-rl) > 1e-10*math.Max(1, math.Abs(rl)) || math.Abs(avg-ra) > 1e-10*math.Max(1, math.Abs(ra)) {
			t.Fatalf("event %d (K=%d): learner f=%v f̂=%v, literal transcription: f=%v f̂=%v", i, l.nf, last, avg, rl, ra)
		}
	}
	if l.nf != 100 || ref.t < 150 {
		t.Fatalf("cap not reached and refined: K=%d, iterations %d", l.nf, ref.t)
	}
}

// update=all (issue 42: every feature drawn so far, the new block
// included, takes each step with the kernel estimated by all of them) and
// the polynomial-decay average (predict_with=decay_average): the learner
// agrees with the literal transcription to round-off, before and after the
// cap.
func TestDSGUpdateAllMatchesLiteralTranscription(t *testing.T) {
	xs, ys := stream(Regression, 900, 3, 23)
	l := dsgOf(t, "dsg:loss=square,update=all,sigma=0.8,nu=0.01,batch=5,block=7,max_features=100,gamma0=1.5,t0=20,predict_with=decay_average,average_eta=2", 3)
	feat, _ := kernel.NewSeeded(kernel.FamilyGaussian, 0.8, 0, 3, 1)
	ref := &refDSG{feat: feat, nu: 0.01, gamma0: 1.5, t0: 20, B: 5, r: 7, maxF: 100, all: true, eta: 2}
	matchRefDSG(t, l, ref, xs, ys)
}

// Eq. 7 and §2.3: with the paper's step γ_t = θ/t and θν = 1, the shrink
// factors telescope, a_t^i = −γ_i ∏_{j>i}(1−γ_jν) = −θ/t, so every block's
// coefficients at iteration t are its coefficients at creation times i/t
// (all past doubly stochastic gradients weigh the same). The first shrink
// factor is exactly 0, which the lazy scale must survive.
func TestDSGEq7PaperStepGivesUniformWeights(t *testing.T) {
	xs, ys := stream(Regression, 200, 2, 22)
	l := dsgOf(t, "dsg:loss=square,sigma=1,nu=0.25,gamma0=4,t0=1,batch=4,block=3,max_features=300", 2)
	var created [][]float64
	for i := range xs {
		l.Learn(xs[i], ys[i])
		if l.inBatch == 0 {
			it := int(l.iters)
			blk := make([]float64, 3)
			for k := range blk {
				blk[k] = l.scale * l.coef[3*(it-1)+k]
			}
			created = append(created, blk)
			for j, c := range created {
				for k := range c {
					want := c[k] * float64(j+1) / float64(it)
					if got := l.scale * l.coef[3*j+k]; math.Abs(got-want) > 1e-12*math.Abs(want) {
						t.Fatalf("iteration %d: block %d coefficient %v, want %v (created %v × %d/%d)", it, j+1, got, want, c[k], j+1, it)
					}
				}
			}
		}
	}
	if len(created) != 50 {
		t.Fatalf("%d iterations", len(created))
	}
}

// §1.3 table: ℓ'(u, y) of every loss, in the paper's conventions.
func TestDSGSec13LossDerivatives(t *testing.T) {
	cases := []struct {
		spec    string
		u, y, d float64
	}{
		{"loss=hinge", 0.5, 1, -1}, {"loss=hinge", 1, 1, 0}, {"loss=hinge", -2, -1, 0}, {"loss=hinge", 0.3, -1, 1},
		{"loss=squared_hinge", 0.5, 1, -0.5}, {"loss=squared_hinge", 2, 1, 0}, {"loss=squared_hinge", 0.5, -1, 1.5},
		{"loss=logistic", 0, 1, -0.5}, {"loss=logistic", 2, -1, 1 / (1 + math.Exp(-2))},
		{"loss=square", 1.5, 1, 0.5},
		{"loss=huber", 1.5, 1, 0.5}, {"loss=huber", 3, 1, 1}, {"loss=huber", -3, 1, -1}, {"loss=huber,delta=2", 4, 1, 2},
		{"loss=epsilon_insensitive,epsilon=0.1", 1.05, 1, 0}, {"loss=epsilon_insensitive,epsilon=0.1", 1.2, 1, 1}, {"loss=epsilon_insensitive,epsilon=0", 0.9, 1, -1},
		{"loss=quantile,tau=0.9", 2, 1, 0.1}, {"loss=quantile,tau=0.9", 0, 1, -0.9},
	}
	for _, c := range cases {
		l := dsgOf(t, "dsg:"+c.spec, 2)
		if got := l.deriv(c.u, c.y); math.Abs(got-c.d) > 1e-15 {
			t.Errorf("%s: ℓ'(%v, %v) = %v, want %v", c.spec, c.u, c.y, got, c.d)
		}
	}
}

// Multi-class DSG with update=all (§4's softmax gradient, every feature
// drawn so far and the new block taking each step): the class
// probabilities agree with a literal transcription to round-off, classes
// appearing online included, before and after the cap.
func TestDSGMultiUpdateAllMatchesLiteralTranscription(t *testing.T) {
	const dim, n, B, r, maxF = 3, 600, 4, 3, 45
	const gamma0, t0, nu = 0.7, 10.0, 0.01
	m, err := NewMulti(fmt.Sprintf("dsg:sigma=1,batch=%d,block=%d,max_features=%d,update=all,gamma0=%v,t0=%v,nu=%v,features=cos", B, r, maxF, gamma0, t0, nu), dim)
	if err != nil {
		t.Fatal(err)
	}
	feat, _ := kernel.NewSeeded(kernel.FamilyGaussian, 1, 0, dim, 1)
	ref := &refDSG{feat: feat}
	var a [][]float64 // a[j][c], true scale
	k := 0            // classes seen
	var bx [][]float64
	var bg [][]float64
	it := 0
	src := rng.New(5)
	for i := range n {
		x := []float64{src.Normal(), src.Normal(), src.Normal()}
		c := int(math.Abs(x[0]+0.5*x[1])*1.5) % 3
		if i < 40 {
			c = min(c, 1) // class 2 first appears later
		}
		c = min(c, k) // a new class takes the next index
		// reference: softmax over the classes seen before the event
		p := make([]float64, k)
		for j := range a {
			v := ref.phi(j, x)
			for cc := range k {
				p[cc] += a[j][cc] * v
			}
		}
		mx := math.Inf(-1)
		for _, v := range p {
			mx = math.Max(mx, v)
		}
		var z float64
		for cc := range p {
			p[cc] = math.Exp(p[cc] - mx)
			z += p[cc]
		}
		for cc := range p {
			p[cc] /= z
		}
		got := m.LearnClass(x, c, make([]float64, 3))
		if len(got) != len(p) {
			t.Fatalf("event %d: %d probabilities, want %d", i, len(got), len(p))
		}
		for cc := range p {
			if math.Abs(got[cc]-p[cc]) > 1e-10 {
				t.Fatalf("event %d (K=%d): P(%d) = %v, literal transcription %v", i, len(a), cc, got[cc], p[cc])
			}
		}
		k = max(k, c+1)
		g := make([]float64, 3)
		copy(g, p)
		g[c] -= 1
		bx, bg = append(bx, x), append(bg, g)
		if len(bx) < B {
			continue
		}
		it++
		gm := gamma0 / (1 + float64(it-1)/t0)
		for j, hi := len(a), min(len(a)+r, maxF); j < hi; j++ {
			w := make([]float64, dim)
			ref.b = append(ref.b, feat.Frequency(w, uint64(j)))
			ref.w = append(ref.w, w)
			a = append(a, make([]float64, 3))
		}
		for j := range a {
			for cc := range 3 {
				var s float64
				for e, xe := range bx {
					s += bg[e][cc] * ref.phi(j, xe)
				}
				a[j][cc] = (1-gm*nu)*a[j][cc] - gm/float64(B*len(a))*s
			}
		}
		bx, bg = bx[:0], bg[:0]
	}
	if len(a) != maxF || it < 2*maxF/r {
		t.Fatalf("cap not reached: K=%d, iterations %d", len(a), it)
	}
}
