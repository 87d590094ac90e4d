package learner

import (
	"math"
	"testing"

	"okstream/learner/rng"
)

// taylorNew builds a basis of order M in d dimensions (checking the count).
func taylorNew(t testing.TB, d, order int, sigma float64) *taylorBasis {
	t.Helper()
	r, ok := taylorCount(d, order, 1<<20)
	if !ok {
		t.Fatalf("C(%d+%d, %d) too large", order, d, d)
	}
	return newTaylorBasis(d, order, sigma, r)
}

func taylorPoint(src *rng.Source, d int, scale float64) []float64 {
	x := make([]float64, d)
	for i := range x {
		x[i] = scale * (2*src.Float64() - 1)
	}
	return x
}

// truncatedKernel is the closed form of Σ_{|k|≤M} g_k(x)g_k(x') (paper
// App. D.2): e^{−(‖x‖²+‖x'‖²)/(2σ²)} Σ_{j≤M} (xᵀx'/σ²)^j/j!.
func truncatedKernel(x, y []float64, sigma float64, order int) float64 {
	s := dot(x, y) / (sigma * sigma)
	var sum, term float64 = 0, 1
	for j := 0; j <= order; j++ {
		if j > 0 {
			term *= s / float64(j)
		}
		sum += term
	}
	return math.Exp(-(dot(x, x)+dot(y, y))/(2*sigma*sigma)) * sum
}

// §3.2: r = C(M+d, d), a table (casp d = 9: 55, 220, 715; SUSY
// d = 18, M = 2: the paper's 190), and the refusal above a limit.
func TestTaylorSec32FeatureCount(t *testing.T) {
	table := map[int][4]int{
		5:  {6, 21, 56, 126},
		8:  {9, 45, 165, 495},
		9:  {10, 55, 220, 715},
		18: {19, 190, 1330, 7315},
		22: {23, 276, 2300, 14950},
	}
	for d, want := range table {
		for m := 1; m <= 4; m++ {
			r, ok := taylorCount(d, m, 1<<30)
			if !ok || r != want[m-1] {
				t.Errorf("d = %d, M = %d: r = %d, want %d", d, m, r, want[m-1])
			}
			if d <= 18 { // enumerate (7315 features at most)
				if n := newTaylorBasis(d, m, 1, r).Len(); n != r {
					t.Errorf("d = %d, M = %d: enumerated %d features", d, m, n)
				}
			}
		}
	}
	if _, ok := taylorCount(18, 4, 2500); ok {
		t.Error("r = 7315 accepted under a limit of 2500")
	}
	if _, ok := taylorCount(1000000, 30, 1<<40); ok {
		t.Error("an overflowing count was accepted")
	}
	if _, err := New("pkawv:order=4", 18); err == nil {
		t.Error("pkawv with r = 7315 > max_features = 2500 was built")
	}
	if _, err := New("pkawv:order=3,max_features=1000", 18); err == nil {
		t.Error("pkawv with r = 1330 > max_features = 1000 was built")
	}
	if l, err := New("pkawv:order=3,max_features=1330", 18); err != nil || l.Info().Budget != 1330 {
		t.Errorf("max_features=1330: %v", err)
	}
}

// §3.3: the incremental O(r) evaluator equals the direct formula
// E·∏(x_i/σ)^{k_i}/√(k_i!) for every multi-index, and the multi-indices
// are exactly those of total degree ≤ M, each once, graded by degree.
func TestTaylorSec33IncrementalEqualsDirect(t *testing.T) {
	const d, order, sigma = 4, 5, 1.3
	b := taylorNew(t, d, order, sigma)
	src := rng.New(3)
	seen := map[[d]int]bool{}
	prevDeg := 0
	for i := range b.Len() {
		k := b.multiIndex(i)
		var key [d]int
		deg := 0
		for j, v := range k {
			key[j] = v
			deg += v
		}
		if deg > order || seen[key] || deg < prevDeg {
			t.Fatalf("feature %d: multi-index %v (degree %d after %d) repeated or out of order", i, k, deg, prevDeg)
		}
		seen[key], prevDeg = true, deg
	}
	phi := make([]float64, b.Len())
	for range 20 {
		x := taylorPoint(src, d, 1.5)
		b.Map(phi, x)
		e := math.Exp(-dot(x, x) / (2 * sigma * sigma))
		for i := range b.Len() {
			g := e
			for j, kj := range b.multiIndex(i) {
				f, _ := math.Lgamma(float64(kj + 1))
				g *= math.Pow(x[j]/sigma, float64(kj)) / math.Sqrt(math.Exp(f))
			}
			if math.Abs(phi[i]-g) > 1e-14*math.Max(1, math.Abs(g)) {
				t.Fatalf("feature %d %v: incremental %.17g, direct %.17g", i, b.multiIndex(i), phi[i], g)
			}
		}
	}
}

// Lemma 12: Σ_k g_k(x)g_k(x') is the closed-form truncated kernel.
func TestTaylorLemma12TruncatedKernel(t *testing.T) {
	src := rng.New(4)
	for _, c := range []struct {
		d, order int
		sigma    float64
	}{{3, 0, 1}, {3, 4, 1}, {5, 3, 0.8}, {9, 2, 1}, {9, 3, 1}, {2, 12, 2}} {
		b := taylorNew(t, c.d, c.order, c.sigma)
		p, q := make([]float64, b.Len()), make([]float64, b.Len())
		for range 10 {
			x, y := taylorPoint(src, c.d, 1), taylorPoint(src, c.d, 1)
			got := dot(b.Map(p, x), b.Map(q, y))
			want := truncatedKernel(x, y, c.sigma, c.order)
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("d = %d, M = %d, σ = %g: Σ g g' = %.15g, closed form %.15g", c.d, c.order, c.sigma, got, want)
			}
		}
	}
}

// Lemma 13: on the ball ‖x‖, ‖x'‖ ≤ R, |k(x, x') − k_M(x, x')| ≤
// (R/σ)^{2M+2}/(M+1)!, so the feature inner products converge to the
// Gaussian kernel as M grows; the worst error over the sample decreases
// with M and is below 1e-9 at M = 16 for R/σ = 1.5.
func TestTaylorLemma13ConvergesToGaussian(t *testing.T) {
	const d, sigma, R = 3, 1.0, 1.5
	src := rng.New(5)
	var xs [][]float64
	for len(xs) < 40 {
		x := taylorPoint(src, d, R)
		if n := math.Sqrt(dot(x, x)); n <= R {
			xs = append(xs, x)
		}
	}
	xs = append(xs, []float64{R, 0, 0}, []float64{0, R, 0}) // on the sphere: the largest xᵀx'
	prev := math.Inf(1)
	for m := 0; m <= 16; m++ {
		b := taylorNew(t, d, m, sigma)
		phis := make([][]float64, len(xs))
		for i, x := range xs {
			phis[i] = b.Map(make([]float64, b.Len()), x)
		}
		lf, _ := math.Lgamma(float64(m + 2))
		bound := math.Exp(float64(2*m+2)*math.Log(R/sigma) - lf)
		var worst float64
		for i := range xs {
			for j := range xs {
				d2 := 0.0
				for k := range xs[i] {
					d2 += (xs[i][k] - xs[j][k]) * (xs[i][k] - xs[j][k])
				}
				err := math.Abs(math.Exp(-d2/(2*sigma*sigma)) - dot(phis[i], phis[j]))
				worst = math.Max(worst, err)
			}
		}
		if worst > bound*(1+1e-9)+1e-15 {
			t.Errorf("M = %d: error %.3g above Lemma 13's bound %.3g", m, worst, bound)
		}
		if !(worst < prev) && worst > 1e-15 {
			t.Errorf("M = %d: error %.3g did not decrease (M−1: %.3g)", m, worst, prev)
		}
		prev = worst
	}
	if prev > 1e-9 {
		t.Errorf("M = 16: error %.3g", prev)
	}
}

// §3.5: the approximation at a corner of [−1, 1]^d,
// k_M(x, x) = e^{−d/σ²} Σ_{j≤M} (d/σ²)^j/j! (true value 1), to 4 digits. With σ = 1 and d ≥ 8, M = 2 is far from
// the Gaussian kernel.
func TestTaylorSec35CornerValues(t *testing.T) {
	for _, c := range []struct {
		d     int
		sigma float64
		want  [3]float64 // M = 2, 3, 4
		tol   float64
	}{
		{5, 1, [3]float64{0.125, 0.265, 0.44}, 0.005},
		{8, 1, [3]float64{0.014, 0.042, 0.10}, 0.005},
		{18, 4, [3]float64{0.90, 0.97, 0.994}, 0.005},
	} {
		x := make([]float64, c.d)
		for i := range x {
			x[i] = 1
		}
		for i, m := range []int{2, 3, 4} {
			b := taylorNew(t, c.d, m, c.sigma)
			phi := b.Map(make([]float64, b.Len()), x)
			if got := dot(phi, phi); math.Abs(got-c.want[i]) > c.tol {
				t.Errorf("d = %d, σ = %g, M = %d: k_M(x, x) = %.4f, spec %.3g", c.d, c.sigma, m, got, c.want[i])
			}
		}
	}
}

// §3.5: for ‖x‖²/(2σ²) > 600 every feature underflows; the map returns
// exact zeros (not NaN from 0·∞) and the learner stays finite.
func TestTaylorSec35UnderflowGivesZeros(t *testing.T) {
	b := taylorNew(t, 3, 30, 1)
	phi := b.Map(make([]float64, b.Len()), []float64{30, 30, 30}) // q = 1350
	for i, v := range phi {
		if v != 0 {
			t.Fatalf("feature %d = %v", i, v)
		}
	}
	l, _ := New("pkawv:order=3", 3)
	l.Learn([]float64{0.1, 0.2, 0.3}, 1)
	l.Learn([]float64{1e200, -1e200, 3}, 1)
	if f := l.Predict([]float64{0.1, 0.2, 0.3}); math.IsNaN(f) || math.IsInf(f, 0) {
		t.Fatalf("score %v after a huge input", f)
	}
}
