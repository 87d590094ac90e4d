package learner

import (
	"math"
	"testing"

	"okstream/learner/rng"
)

// linearStream draws a linear problem whose two informative features have
// wildly different units (x0 in 1e4, x1 in 1e-4) plus a pure-noise one.
func linearStream(task Task, n int, seed uint64) (xs [][]float64, ys []float64) {
	src := rng.New(seed)
	for range n {
		a, b := 2*src.Float64()-1, 2*src.Float64()-1
		x := []float64{1e4 * a, 1e-4 * b, src.Normal()}
		y := 1.5*a - b + 0.3
		if task == Classification {
			y = math.Copysign(1, y+0.1*src.Normal())
		} else {
			y += 0.1 * src.Normal()
		}
		xs, ys = append(xs, x), append(ys, y)
	}
	return xs, ys
}

// The baseline learns a linear problem on raw features of any units: a low
// mistake rate, and a regression MSE close to the noise variance 0.01
// (the recursive least-squares form, whose penalty is not scale-invariant,
// on standardised features, as auto uses it).
func TestLinearLearnsLinearProblems(t *testing.T) {
	for _, c := range []struct {
		spec string
		task Task
		max  float64
	}{{"linear", Classification, 0.08}, {"linear:loss=square", Regression, 0.0125}, {"linear:loss=square,solver=rls,scale=standard", Regression, 0.0125}} {
		xs, ys := linearStream(c.task, 4000, 3)
		l, err := New(c.spec, 3)
		if err != nil {
			t.Fatal(err)
		}
		var loss float64
		for i := range xs {
			f := l.Learn(xs[i], ys[i])
			if i < 2000 {
				continue // judge the second half
			}
			if c.task == Classification {
				if Mistake(f, ys[i]) {
					loss++
				}
			} else {
				loss += (f - ys[i]) * (f - ys[i])
			}
		}
		loss /= 2000
		t.Logf("%s: %.4f", c.spec, loss)
		if loss > c.max {
			t.Errorf("%s: loss %.4f on the second half, want ≤ %g", c.spec, loss, c.max)
		}
	}
}

// Rescaling a feature does not change the scores (NAG and the
// energy-scaled ridge are invariant to each feature's unit), up to
// rounding.
func TestLinearIsScaleInvariant(t *testing.T) {
	for _, spec := range []string{"linear", "linear:loss=square"} {
		task := Classification
		if spec != "linear" {
			task = Regression
		}
		xs, ys := linearStream(task, 1000, 4)
		a, _ := New(spec, 3)
		b, _ := New(spec, 3)
		scale := []float64{1e-3, 1e5, 7}
		z := make([]float64, 3)
		for i := range xs {
			for j := range z {
				z[j] = xs[i][j] * scale[j]
			}
			fa, fb := a.Learn(xs[i], ys[i]), b.Learn(z, ys[i])
			if math.Abs(fa-fb) > 1e-6*(1+math.Abs(fa)) {
				t.Fatalf("%s event %d: score %v on raw features, %v rescaled", spec, i, fa, fb)
			}
		}
	}
}

// An event with a huge or non-finite value is predicted but not learned.
func TestLinearSkipsHostileEvents(t *testing.T) {
	for _, spec := range []string{"linear", "linear:loss=square", "linear:loss=square,solver=rls"} {
		l, _ := New(spec, 2)
		l.Learn([]float64{1, 2}, 1)
		before, _ := l.MarshalBinary()
		for _, x := range [][]float64{{1e300, 0}, {math.NaN(), 1}, {math.Inf(-1), 0}} {
			l.Learn(x, 1)
		}
		l.Learn([]float64{1, 2}, math.Inf(1))
		after, _ := l.MarshalBinary()
		// Only the update counter (the 8 bytes after the header) differs.
		if len(before) != len(after) {
			t.Fatalf("%s: state length changed", spec)
		}
		if s := l.Predict([]float64{1, 2}); math.IsNaN(s) || math.IsInf(s, 0) {
			t.Fatalf("%s: score %v after hostile events", spec, s)
		}
		r, _ := New(spec, 2)
		r.Learn([]float64{1, 2}, 1)
		if r.Predict([]float64{0.5, -1}) != l.Predict([]float64{0.5, -1}) {
			t.Fatalf("%s: hostile events changed the model", spec)
		}
	}
}

// The recursive least-squares form computes the online ridge solution:
// after every event its weights are (λI + Σx̃x̃ᵀ)⁻¹ Σ y x̃, solved directly.
func TestLinearRLSIsOnlineRidge(t *testing.T) {
	xs, ys := linearStream(Regression, 300, 5)
	l, _ := New("linear:loss=square,solver=rls,lambda=2", 3)
	lin := l.(*Linear)
	n := 4
	g := make([]float64, n*n)
	b := make([]float64, n)
	for i := range n {
		g[i*n+i] = 2
	}
	for i := range xs {
		l.Learn(xs[i], ys[i])
		xt := append(append([]float64(nil), xs[i]...), 1)
		for r := range n {
			for c := range n {
				g[r*n+c] += xt[r] * xt[c]
			}
			b[r] += ys[i] * xt[r]
		}
		if i%50 != 49 {
			continue
		}
		// Solve g w = b by Gaussian elimination (small, well conditioned).
		a := append([]float64(nil), g...)
		w := append([]float64(nil), b...)
		for k := range n {
			for r := k + 1; r < n; r++ {
				f := a[r*n+k] / a[k*n+k]
				for c := k; c < n; c++ {
					a[r*n+c] -= f * a[k*n+c]
				}
				w[r] -= f * w[k]
			}
		}
		for k := n - 1; k >= 0; k-- {
			for c := k + 1; c < n; c++ {
				w[k] -= a[k*n+c] * w[c]
			}
			w[k] /= a[k*n+k]
		}
		for j := range n {
			if math.Abs(w[j]-lin.w[j]) > 1e-8*(1+math.Abs(w[j])) {
				t.Fatalf("after %d events: w[%d] = %v, ridge solution %v", i+1, j, lin.w[j], w[j])
			}
		}
	}
}

// Ridge keeps G = Σ x̃x̃ᵀ as its packed lower triangle, but its state
// writes the whole symmetric matrix, as states did before: the state's G
// is compared with Σ x̃x̃ᵀ summed here from the events (x̃ = (x, 1)), both
// triangles. It fails if the state format changes or if the packed update
// misplaces an entry.
func TestLinearRidgeStateWritesWholeG(t *testing.T) {
	xs, ys := linearStream(Regression, 200, 7)
	l, err := New("linear:loss=square", 3)
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	want := make([]float64, n*n)
	for i, x := range xs {
		l.Learn(x, ys[i])
		xt := append(append([]float64(nil), x...), 1)
		for r := range n {
			for c := range n {
				want[r*n+c] += xt[r] * xt[c]
			}
		}
	}
	data, err := l.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	lin := l.(*Linear)
	d, _ := lin.decoder(data)
	d.F64sN(nil, n) // w
	got := d.F64sN(nil, n*n)
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-12*math.Abs(want[k]) {
			t.Fatalf("state's G[%d][%d] = %v, want Σ x̃x̃ᵀ = %v", k/n, k%n, got[k], want[k])
		}
	}
	// And the state restores to the same model.
	l2, _ := New("linear:loss=square", 3)
	if err := l2.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if p, q := l.Predict(xs[0]), l2.Predict(xs[0]); p != q {
		t.Fatalf("restored model predicts %v, want %v", q, p)
	}
}
