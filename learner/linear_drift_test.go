package learner

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"testing"

	"okstream/learner/rng"
	"okstream/learner/state"
)

// linearGolden hashes the scores and the final state of each plain spec on
// linearStream(task, 3000, 7), as computed by linear.go before the forget
// option existed (commit f0aa6b0). The option off must leave them bit for
// bit, whether absent or given as forget=0.
var linearGolden = []struct {
	spec string
	task Task
	hash string
}{
	{"linear", Classification, "82aa33530847d0dd929fa675c3c85d8ffc40648580130e2cd90b0f905469a325"},
	{"linear:loss=hinge", Classification, "152aff98d2bb61187a973d6e0316af2216164fbc9174387e580de8cf9ee5e9dc"},
	{"linear:features=8,sigma=2", Classification, "f0e68f53f00b0bb9fa017a2393df4d907d2968584623f8f9d901ea8b8b7f9b88"},
	{"linear:loss=square", Regression, "fc34ce925a7e76cc1be3052ba1d4ab0d85b14bc3aa44a2b4fc2b776a39875b9a"},
	{"linear:loss=square,solver=rls,lambda=0.5", Regression, "7abb35099f46206a8efd08e54979dd874c7320f6fe7c4a713d716b20862e4adf"},
	{"linear:loss=square,solver=rls,features=4,sigma=2,seed=3", Regression, "d92268b2611e78f3847761c845c3bc8839f8a50f9e52a5cd5762f95cd4de0fff"},
}

func linearRunHash(t *testing.T, spec string, task Task) (string, Info) {
	t.Helper()
	xs, ys := linearStream(task, 3000, 7)
	l, err := New(spec, 3)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for i := range xs {
		fmt.Fprintf(h, "%x;", l.Learn(xs[i], ys[i]))
	}
	b, err := l.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	h.Write(b)
	return fmt.Sprintf("%x", h.Sum(nil)), l.Info()
}

// The option off is the model of before, bit for bit (scores and state),
// and forget=0 has the plain model's canonical spec (its states are the
// plain model's: they restore into each other).
func TestLinearForgetOffIsBitIdentical(t *testing.T) {
	for _, g := range linearGolden {
		got, info := linearRunHash(t, g.spec, g.task)
		if got != g.hash {
			t.Errorf("%s: scores+state hash %s, want the pre-forget %s", g.spec, got, g.hash)
		}
		with := g.spec + ",forget=0"
		if g.spec == "linear" {
			with = "linear:forget=0"
		}
		got0, info0 := linearRunHash(t, with, g.task)
		if got0 != g.hash {
			t.Errorf("%s: hash %s, want the plain model's %s", with, got0, g.hash)
		}
		if info0.Spec != info.Spec {
			t.Errorf("%s: canonical spec %q, want the plain model's %q", with, info0.Spec, info.Spec)
		}
	}
}

// NAG with forgetting on two events, against the update rule worked out by
// hand (file comment of linear.go): H = 4, β = 3/4, η = 0.5, logistic loss,
// d = 1 so x̃ = (x, 1).
func TestLinearForgetTwoStepsByHand(t *testing.T) {
	l, err := New("linear:forget=4", 1)
	if err != nil {
		t.Fatal(err)
	}
	lin := l.(*Linear)
	sigmoid := func(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

	// Event 1: x = 2, y = +1, score 0. s = (2, 1); N = 0·β + (1 + 1) = 2;
	// t = 1; ℓ' = −σ(0) = −½, g = (−1, −½), G = (1, ¼);
	// rate = ½·√(1/2); w₀ = rate·1/(2·1) = rate/2, w₁ = rate·½/(1·½) = rate.
	if f := l.Learn([]float64{2}, 1); f != 0 {
		t.Fatalf("first score %v, want 0", f)
	}
	r1 := 0.5 * math.Sqrt(1.0/2)
	w0, w1 := r1/2, r1
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-15*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %.17g, want %.17g", what, got, want)
		}
	}
	near("w0 after event 1", lin.w[0], w0)
	near("w1 after event 1", lin.w[1], w1)

	// Event 2: x = −1, y = −1: score f = −w₀ + w₁; s unchanged;
	// N = ¾·2 + (¼ + 1) = 2.75; t = ¾·1 + 1 = 1.75; ℓ' = σ(f), g = (−σ, σ);
	// G = (¾·1 + σ², ¾·¼ + σ²); rate = ½·√(1.75/2.75);
	// w₀ −= rate·(−σ)/(2·√G₀), w₁ −= rate·σ/√G₁.
	f := -w0 + w1
	if got := l.Learn([]float64{-1}, -1); math.Abs(got-f) > 1e-15 {
		t.Fatalf("second score %v, want %v", got, f)
	}
	s := sigmoid(f)
	r2 := 0.5 * math.Sqrt(1.75/2.75)
	near("N", lin.norm, 2.75)
	near("t", lin.steps, 1.75)
	near("G0", lin.g2[0], 0.75+s*s)
	near("G1", lin.g2[1], 0.1875+s*s)
	near("w0 after event 2", lin.w[0], w0+r2*s/(2*math.Sqrt(0.75+s*s)))
	near("w1 after event 2", lin.w[1], w1-r2*s/math.Sqrt(0.1875+s*s))
}

// solveSmall solves A x = b (n×n row-major, Gaussian elimination with
// partial pivoting): the tests' independent reference.
func solveSmall(a []float64, b []float64) []float64 {
	n := len(b)
	a, b = append([]float64(nil), a...), append([]float64(nil), b...)
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r*n+c]) > math.Abs(a[p*n+c]) {
				p = r
			}
		}
		for k := range n {
			a[c*n+k], a[p*n+k] = a[p*n+k], a[c*n+k]
		}
		b[c], b[p] = b[p], b[c]
		for r := c + 1; r < n; r++ {
			m := a[r*n+c] / a[c*n+c]
			for k := c; k < n; k++ {
				a[r*n+k] -= m * a[c*n+k]
			}
			b[r] -= m * b[c]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for k := r + 1; k < n; k++ {
			s -= a[r*n+k] * x[k]
		}
		x[r] = s / a[r*n+r]
	}
	return x
}

// RLS with forgetting keeps w = A⁻¹b for A = Σ_s β^(t−s) x̃x̃ᵀ + R_t and
// b = Σ_s β^(t−s) y_s x̃_s, where the penalty R_t is diagonal: λβ^t plus
// c·β^(t−s) for every event s whose cycle coordinate (s − 1) mod n is j.
// The reference solves that system directly; and forgetting refit is the
// exponentially weighted ridge with the discounted energy penalty.
func TestLinearForgetMatchesDirectSolve(t *testing.T) {
	const d, H, lambda = 2, 10.0, 0.5
	n := d + 1
	beta := 1 - 1/H
	c := (1 - beta) * lambda * float64(n)
	src := rng.New(9)
	rls, err := New(fmt.Sprintf("linear:loss=square,solver=rls,lambda=%g,forget=%g", lambda, H), d)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := New(fmt.Sprintf("linear:loss=square,forget=%g", H), d)
	if err != nil {
		t.Fatal(err)
	}
	G := make([]float64, n*n)
	b := make([]float64, n)
	R := make([]float64, n)
	for j := range R {
		R[j] = lambda
	}
	for s := 1; s <= 60; s++ {
		x := []float64{src.Normal(), 3 * src.Normal()}
		if s > 30 {
			x[1] = 0 // the second feature stops: RLS without renewal would blow up there
		}
		y := 2*x[0] - x[1] + 0.5 + 0.1*src.Normal()
		rls.Learn(x, y)
		ref.Learn(x, y)
		xt := []float64{x[0], x[1], 1}
		for i := range n {
			for j := range n {
				G[i*n+j] = beta*G[i*n+j] + xt[i]*xt[j]
			}
			b[i] = beta*b[i] + y*xt[i]
			R[i] *= beta
		}
		R[(s-1)%n] += c
		A := append([]float64(nil), G...)
		for i := range n {
			A[i*n+i] += R[i]
		}
		want := solveSmall(A, b)
		for i, wi := range rls.(*Linear).w {
			if math.Abs(wi-want[i]) > 1e-9*(1+math.Abs(want[i])) {
				t.Fatalf("rls event %d: w[%d] = %.15g, want %.15g", s, i, wi, want[i])
			}
		}
		// refit: (G + λ_r diag G) w = b with λ_r = 1e-3 (its default).
		A = append(A[:0], G...)
		for i := range n {
			A[i*n+i] *= 1 + 1e-3
		}
		if s >= n {
			want = solveSmall(A, b)
			for i, wi := range ref.(*Linear).w {
				if math.Abs(wi-want[i]) > 1e-7*(1+math.Abs(want[i])) {
					t.Fatalf("refit event %d: w[%d] = %.15g, want %.15g", s, i, wi, want[i])
				}
			}
		}
	}
}

// With forgetting, RLS's inverse stays bounded when a coordinate is never
// excited again (the renewed penalty: P ⪯ β^(1−n)/λ·I), where plain
// forgetting would grow it like β^−t.
func TestLinearForgetRLSBoundedWithoutExcitation(t *testing.T) {
	const lambda, H = 1.0, 50.0
	l, err := New(fmt.Sprintf("linear:loss=square,solver=rls,lambda=%g,forget=%g", lambda, H), 3)
	if err != nil {
		t.Fatal(err)
	}
	src := rng.New(4)
	for range 100000 {
		x := []float64{src.Normal(), 0, 0} // two coordinates never excited
		l.Learn(x, x[0])
	}
	lin := l.(*Linear)
	bound := math.Pow(1-1/H, 1-float64(lin.n)) / lambda
	for i := range lin.n {
		if p := lin.pinv[i*lin.n+i]; !(p > 0 && p <= bound*(1+1e-9)) {
			t.Errorf("P[%d][%d] = %v, want in (0, %v]", i, i, p, bound)
		}
	}
	if f := l.Predict([]float64{0.5, 0, 0}); math.Abs(f-0.5) > 0.05 {
		t.Errorf("prediction %v at x0 = 0.5, want about 0.5", f)
	}
}

// After an abrupt flip of the concept deep in a stream, the forgetting
// model has adapted, over the last window, where the plain one (whose
// AdaGrad steps have shrunk like 1/√t) still makes more mistakes; on the
// stationary part both learn the concept.
func TestLinearForgetRecoversAfterFlip(t *testing.T) {
	const before, after, window = 40000, 4000, 1000
	src := rng.New(11)
	xs := make([][]float64, before+after)
	ys := make([]float64, before+after)
	for i := range xs {
		x := []float64{src.Normal(), src.Normal(), src.Normal()}
		y := math.Copysign(1, 2*x[0]-x[1]+0.5*x[2]+0.3)
		if i >= before {
			y = -y // the concept flips: every label
		}
		if src.Float64() < 0.05 {
			y = -y
		}
		xs[i], ys[i] = x, y
	}
	errs := map[string][2]float64{}
	for _, spec := range []string{"linear", "linear:forget=1000"} {
		l, err := New(spec, 3)
		if err != nil {
			t.Fatal(err)
		}
		var pre, post float64
		for i := range xs {
			m := Mistake(l.Learn(xs[i], ys[i]), ys[i])
			if m && i >= before-window && i < before {
				pre++
			}
			if m && i >= len(xs)-window {
				post++
			}
		}
		errs[spec] = [2]float64{pre / window, post / window}
		t.Logf("%s: mistakes %.3f on the window before the flip, %.3f on the last window", spec, pre/window, post/window)
	}
	plain, fg := errs["linear"], errs["linear:forget=1000"]
	if plain[0] > 0.1 || fg[0] > 0.1 {
		t.Errorf("before the flip: mistake rates %.3f (plain), %.3f (forget), want ≤ 0.1", plain[0], fg[0])
	}
	if !(fg[1] < 0.1 && fg[1] < plain[1]-0.05) {
		t.Errorf("last window after the flip: forget %.3f, plain %.3f; want forget < 0.1 and at least 5 points below plain", fg[1], plain[1])
	}
}

var linearForgetSpecs = []struct {
	spec string
	task Task
}{
	{"linear:forget=300", Classification},
	{"linear:loss=hinge,forget=1e4", Classification},
	{"linear:features=8,sigma=2,forget=500", Classification},
	{"linear:loss=square,forget=200", Regression},
	{"linear:loss=square,solver=rls,forget=100", Regression},
	{"linear:loss=square,solver=rls,features=4,sigma=2,seed=3,forget=100", Regression},
}

// A forgetting model marshalled mid-stream and restored into a fresh one
// continues bit for bit; Learn+Predict allocate nothing in steady state.
func TestLinearForgetStateRoundTrip(t *testing.T) {
	for _, c := range linearForgetSpecs {
		xs, ys := linearStream(c.task, 2000, 5)
		a, err := New(c.spec, 3)
		if err != nil {
			t.Fatal(c.spec, err)
		}
		for i := range 1000 {
			a.Learn(xs[i], ys[i])
		}
		s, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := New(c.spec, 3)
		if err := b.UnmarshalBinary(s); err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		for i := 1000; i < 1500; i++ {
			fa, fb := a.Learn(xs[i], ys[i]), b.Learn(xs[i], ys[i])
			if math.Float64bits(fa) != math.Float64bits(fb) {
				t.Fatalf("%s: event %d: restored model scores %v, original %v", c.spec, i, fb, fa)
			}
		}
		sa, _ := a.MarshalBinary()
		sb, _ := b.MarshalBinary()
		if !bytes.Equal(sa, sb) {
			t.Fatalf("%s: states differ after the restored run", c.spec)
		}
		// The plain model's state is not this model's (the spec differs).
		p, _ := New(map[Task]string{Classification: "linear", Regression: "linear:loss=square"}[c.task], 3)
		if err := p.UnmarshalBinary(s); err == nil {
			t.Errorf("%s: state accepted by the plain model", c.spec)
		}
		i := 1500
		if allocs := testing.AllocsPerRun(200, func() {
			a.Learn(xs[i], ys[i])
			a.Predict(xs[i])
			i++
		}); allocs != 0 {
			t.Errorf("%s: %v allocations per Learn+Predict", c.spec, allocs)
		}
	}
}

// Bad values are refused: in the spec, and in a forged state (written by
// the state encoder, so only the values are wrong), which leaves the
// learner unchanged.
func TestLinearForgetRefusesBadValues(t *testing.T) {
	for _, spec := range []string{"linear:forget=0.5", "linear:forget=-1", "linear:forget=nan", "linear:forget=1e300",
		"linear:loss=square,solver=rls,forget=3"} { // rls: H must be ≥ n = 4
		if _, err := New(spec, 3); err == nil {
			t.Errorf("%s accepted", spec)
		}
	}
	if _, err := New("linear:loss=square,solver=rls,forget=4", 3); err != nil {
		t.Errorf("H = n refused: %v", err)
	}
	for _, forge := range []struct {
		what string
		f    func(l *Linear)
	}{
		{"t above the horizon", func(l *Linear) { l.steps = 2 * l.forget }},
		{"negative t", func(l *Linear) { l.steps = -1 }},
		{"negative Σg²", func(l *Linear) { l.g2[1] = -3 }},
		{"negative s", func(l *Linear) { l.smax[0] = -1 }},
		{"N above n·t", func(l *Linear) { l.norm = float64(l.n)*l.steps + 1 }},
	} {
		xs, ys := linearStream(Classification, 200, 2)
		a, _ := New("linear:forget=100", 3)
		for i := range xs {
			a.Learn(xs[i], ys[i])
		}
		good, _ := a.MarshalBinary()
		forge.f(a.(*Linear))
		bad, _ := a.MarshalBinary()
		b, _ := New("linear:forget=100", 3)
		if err := b.UnmarshalBinary(good); err != nil {
			t.Fatalf("the valid state is refused: %v", err)
		}
		if err := b.UnmarshalBinary(bad); !errors.Is(err, state.ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", forge.what, err)
		}
		if s, _ := b.MarshalBinary(); !bytes.Equal(s, good) {
			t.Errorf("%s: the refused state changed the learner", forge.what)
		}
	}
}

// A forgetting ridge model cannot share (its statistics are discounted,
// not summed).
func TestLinearForgetDoesNotShare(t *testing.T) {
	l, err := New("linear:loss=square,forget=100", 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.(Sharer).ShareDelta(); err == nil {
		t.Error("ShareDelta of a forgetting model succeeded")
	}
	if err := l.(Sharer).ShareMerge(nil); err == nil {
		t.Error("ShareMerge into a forgetting model succeeded")
	}
}
