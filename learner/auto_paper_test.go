package learner

import (
	"math"
	"slices"
	"testing"
)

// de Rooij, van Erven, Grünwald & Koolen, JMLR 2014, §2 (AdaHedge): on every
// sequence the hedge loss exceeds the best expert's loss by at most 2Δ_T,
// and Δ_T ≤ (S/2)·sqrt(T(ln K + 4)) for per-round loss ranges at most S
// (learner/auto.go). The square loss is convex, so auto's own loss (of the
// averaged prediction) obeys the same bounds. Checked without pruning, for
// classification and for regression with labels far from unit scale (the
// bound must not depend on a known range).
func TestAutoAdaHedgeRegretBound(t *testing.T) {
	for _, c := range []struct {
		spec  map[string]string
		scale float64
	}{
		{map[string]string{"base": "fogd", "budget": "20", "halving": "1000000"}, 1},
		{map[string]string{"base": "nogd", "budget": "30", "loss": "square", "halving": "1000000"}, 1},
		{map[string]string{"base": "fogd", "budget": "20", "loss": "square", "halving": "1000000"}, 1000},
	} {
		l, err := newPlain("auto", c.spec, 5)
		if err != nil {
			t.Fatal(err)
		}
		a := l.(*Auto)
		xs, ys := stream(a.task, 3000, 5, 21)
		var lhat, s float64
		for i := range xs {
			y := ys[i] * c.scale
			// the members' losses this round, for the range S
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, j := range a.alive {
				d := a.clip(a.members[j].Predict(xs[i])) - y
				lo, hi = math.Min(lo, d*d), math.Max(hi, d*d)
			}
			s = math.Max(s, hi-lo)
			p := a.Learn(xs[i], y)
			lhat += (p - y) * (p - y)
		}
		if len(a.alive) != len(a.members) {
			t.Fatalf("%v: pruned", c.spec)
		}
		best := math.Inf(1)
		for _, li := range a.loss {
			best = min(best, li)
		}
		k, n := float64(len(a.members)), float64(len(xs))
		if a.delta <= 0 {
			t.Fatalf("%v: no mixability gap accumulated (Δ = %v): the test does not exercise the learning rate", c.spec, a.delta)
		}
		if lhat > best+2*a.delta*(1+1e-12) {
			t.Fatalf("%v: auto's loss %.6g exceeds best member %.6g + 2Δ = %.6g", c.spec, lhat, best, best+2*a.delta)
		}
		if bound := s / 2 * math.Sqrt(n*(math.Log(k)+4)); a.delta > bound {
			t.Fatalf("%v: Δ = %.6g exceeds (S/2)·sqrt(T(ln K + 4)) = %.6g", c.spec, a.delta, bound)
		}
		t.Logf("%v ×%v: auto %.4g, best member %.4g, 2Δ %.4g, worst-case 2·(S/2)·sqrt(T(ln K+4)) %.4g", c.spec, c.scale, lhat, best, 2*a.delta, s*math.Sqrt(n*(math.Log(k)+4)))
	}
}

// The linear member is one more expert of the bank: auto's square loss is
// within 2Δ of the linear member's (the AdaHedge bound holds against every
// survivor), and linear=false leaves it out.
func TestAutoLinearMember(t *testing.T) {
	xs, ys := linearStream(Regression, 2000, 7)
	kv := map[string]string{"base": "fogd", "budget": "20", "loss": "square", "halving": "1000000"}
	l, err := newPlain("auto", kv, 3)
	if err != nil {
		t.Fatal(err)
	}
	a := l.(*Auto)
	lin := slices.Index(a.names, "linear") // then the kernel ridge members (features=D)
	if lin < 0 || a.specs[lin]["solver"] != "rls" || a.specs[lin]["features"] != "" {
		t.Fatalf("member %d: %v, want the linear member (rls)", lin, a.specs)
	}
	for i := lin + 1; i < len(a.names); i++ {
		if a.names[i] != "linear" || a.specs[i]["features"] == "" {
			t.Fatalf("member %d after the linear member: %s %v, want a kernel ridge member", i, a.names[i], a.specs[i])
		}
	}
	if lin+1+len(autoRidgeSigmas) != len(a.names) {
		t.Fatalf("%d members after the linear member, want %d kernel ridge members", len(a.names)-lin-1, len(autoRidgeSigmas))
	}
	var lhat float64
	for i := range xs {
		p := a.Learn(xs[i], ys[i])
		lhat += (p - ys[i]) * (p - ys[i])
	}
	if lhat > a.loss[lin]+2*a.delta*(1+1e-12) {
		t.Fatalf("auto's loss %.6g exceeds the linear member's %.6g + 2Δ (%.6g)", lhat, a.loss[lin], 2*a.delta)
	}
	t.Logf("auto %.4g, linear member %.4g, 2Δ %.4g (%s)", lhat, a.loss[lin], 2*a.delta, a)
	kv["linear"] = "false"
	off, _ := newPlain("auto", kv, 3)
	if n := len(off.(*Auto).members); n != lin || off.(*Auto).names[n-1] == "linear" {
		t.Fatalf("linear=false: %d members, last %s", n, off.(*Auto).names[n-1])
	}
}
