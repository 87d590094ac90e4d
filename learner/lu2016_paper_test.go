package learner

// Tests named after the claims of Lu et al., "Large Scale Online Kernel
// Learning" (JMLR 2016), for FOGD and NOGD.

import (
	"math"
	"testing"
)

// NOGD §4: with rank k = B the Nyström map reproduces the kernel on the span
// of the budget, so the warm-started primal model must predict exactly what
// the phase-1 dual model would have predicted (w = Λ^{1/2}Vᵀa gives
// wᵀz(x) = aᵀVVᵀκ(SV,x) = aᵀκ(SV,x)).
func TestNOGDFullRankSwitchPreservesPredictions(t *testing.T) {
	xs, ys := stream(Classification, 400, 4, 11)
	l, err := New("nogd:sigma=1,budget=25,k=25", 4)
	if err != nil {
		t.Fatal(err)
	}
	n := l.(*NOGD)
	var alpha []float64
	for i := 0; !n.primal(); i++ {
		alpha = append(alpha[:0], n.alpha...)
		f := n.Learn(xs[i], ys[i])
		if g := n.loss.Deriv(f, ys[i]); g != 0 && len(alpha) < 25 {
			alpha = append(alpha, -n.eta*g) // the coefficient the switch round stored
		}
	}
	if n.r != 25 || len(alpha) != 25 {
		t.Fatalf("rank after switch = %d (dual coefficients %d), want 25", n.r, len(alpha))
	}
	probe, _ := stream(Classification, 50, 4, 99)
	for _, x := range probe {
		var dual float64
		for i, a := range alpha {
			dual += a * n.kern.Eval(n.sv.Row(i), x)
		}
		if got := n.Predict(x); math.Abs(got-dual) > 1e-7*math.Max(1, math.Abs(dual)) {
			t.Fatalf("primal prediction %v, dual prediction %v", got, dual)
		}
	}
}

// NOGD: the phase-1 model is kernel OGD that stores exactly the examples
// with non-zero loss gradient, each with coefficient −η ℓ'(f, y), and the
// budget is never exceeded.
func TestNOGDPhaseOneIsBudgetedKernelOGD(t *testing.T) {
	xs, ys := stream(Classification, 300, 4, 12)
	l, _ := New("nogd:sigma=1,budget=40,k=4,eta=0.2", 4)
	n := l.(*NOGD)
	var stored [][]float64
	var coef []float64
	for i := range xs {
		if n.primal() {
			break
		}
		// Reference dual prediction.
		var f float64
		for j, s := range stored {
			f += coef[j] * n.kern.Eval(s, xs[i])
		}
		got := n.Learn(xs[i], ys[i])
		if math.Abs(got-f) > 1e-12 {
			t.Fatalf("event %d: NOGD score %v, reference KOGD %v", i, got, f)
		}
		if ys[i]*f < 1 {
			stored = append(stored, xs[i])
			coef = append(coef, 0.2*ys[i])
		}
		if n.Info().Used > 40 {
			t.Fatal("budget exceeded")
		}
	}
	if !n.primal() || len(stored) != 40 {
		t.Fatalf("switch to Nyström features not reached (stored %d)", len(stored))
	}
}

// FOGD: the hinge update is "if y f < 1: w ← w + η y z(x)", otherwise no
// change.
func TestFOGDHingeUpdateRule(t *testing.T) {
	xs, ys := stream(Classification, 200, 3, 13)
	l, _ := New("fogd:sigma=0.5,budget=5,eta=0.3", 3)
	f := l.(*FOGD)
	for i := range xs {
		w0 := append([]float64(nil), f.w...)
		z := append([]float64(nil), f.rff.Map(make([]float64, f.rff.Dim()), xs[i])...)
		score := f.Learn(xs[i], ys[i])
		for j := range w0 {
			want := w0[j]
			if ys[i]*score < 1 {
				want += 0.3 * ys[i] * z[j]
			}
			if f.w[j] != want {
				t.Fatalf("event %d: w[%d] = %v, want %v", i, j, f.w[j], want)
			}
		}
	}
}
