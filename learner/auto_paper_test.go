package learner

import (
	"math"
	"testing"
)

// Cesa-Bianchi & Lugosi 2006, Prop. 3.1: for an η-exp-concave loss the
// exponentially weighted average forecaster has regret at most ln N / η
// against the best of N experts, on every sequence. auto's normalised square
// loss is 1/2-exp-concave on its prediction range, so without pruning its
// cumulative loss is at most min_i L_i + 2 ln N — for classification and for
// regression (whose range grows with the labels).
func TestAutoEWAProp3_1RegretBound(t *testing.T) {
	for _, spec := range []map[string]string{
		{"base": "fogd", "budget": "20", "halving": "1000000"},
		{"base": "nogd", "budget": "30", "loss": "square", "halving": "1000000"},
	} {
		l, err := newPlain("auto", spec, 5)
		if err != nil {
			t.Fatal(err)
		}
		a := l.(*Auto)
		xs, ys := stream(a.task, 3000, 5, 21)
		var lhat float64
		for i := range xs {
			p := a.Learn(xs[i], ys[i])
			if r := a.hi - a.lo; r > 0 {
				d := (p - ys[i]) / r
				lhat += d * d
			}
		}
		best := math.Inf(1)
		for _, li := range a.loss {
			best = min(best, li)
		}
		n := float64(len(a.members))
		if len(a.alive) != len(a.members) {
			t.Fatalf("%v: pruned", spec)
		}
		if lhat > best+2*math.Log(n)+1e-9 {
			t.Fatalf("%v: auto's loss %.4f exceeds best member %.4f + 2 ln %v", spec, lhat, best, n)
		}
		t.Logf("%v: auto %.3f, best member %.3f, bound %.3f", spec, lhat, best, best+2*math.Log(n))
	}
}
