package learner

import (
	"math"
	"testing"
)

// The logistic model's probability is σ(score); the other losses have none.
func TestLinearProbability(t *testing.T) {
	l, err := New("linear", 2)
	if err != nil {
		t.Fatal(err)
	}
	pr := l.(*Linear)
	for _, s := range []float64{-30, -2, 0, 0.5, 40} {
		p, ok := pr.Probability(s)
		if want := 1 / (1 + math.Exp(-s)); !ok || math.Abs(p-want) > 1e-15 {
			t.Fatalf("Probability(%v) = %v, %v; want %v", s, p, ok, want)
		}
	}
	for _, spec := range []string{"linear:loss=hinge", "linear:loss=squared_hinge", "linear:loss=square"} {
		l, err := New(spec, 2)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := l.(*Linear).Probability(1); ok {
			t.Fatalf("%s claims a probability", spec)
		}
	}
}
