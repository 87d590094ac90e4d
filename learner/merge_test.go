package learner

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// mergeTrain returns a learner of spec trained on xs[lo:hi].
func mergeTrain(t testing.TB, spec string, d int, xs [][]float64, ys []float64, lo, hi int) Learner {
	t.Helper()
	l := pkawvNew(t, spec, d)
	for i := lo; i < hi; i++ {
		l.Learn(xs[i], ys[i])
	}
	return l
}

// The test: PKAWV-Taylor's state is additive sufficient statistics,
// so two models trained on disjoint halves and merged are the model trained
// on the concatenation — predictions and statistics to 1e-9 — and they stay
// equal as both keep learning. Also for a four-way split merged as a tree,
// and for the ridge variant.
func TestMergeTaylorHalvesEqualsConcatenation(t *testing.T) {
	const d, n = 5, 2000
	xs, ys := pkawvData(n+300, d, 31, 1)
	probes, _ := pkawvData(100, d, 32, 1.2)
	for _, spec := range []string{"pkawv:order=3", "pkawv:order=2,variant=ridge,lambda=0.1,sigma=0.7"} {
		single := mergeTrain(t, spec, d, xs, ys, 0, n)
		a := mergeTrain(t, spec, d, xs, ys, 0, n/2)
		b := mergeTrain(t, spec, d, xs, ys, n/2, n)
		bBefore, _ := b.MarshalBinary()
		if err := a.(Merger).Merge(b); err != nil {
			t.Fatal(err)
		}
		if bAfter, _ := b.MarshalBinary(); !bytes.Equal(bBefore, bAfter) {
			t.Fatal("Merge changed its argument")
		}
		// Four parts, merged as ((p0 + p1) + (p2 + p3)).
		var parts []Learner
		for k := range 4 {
			parts = append(parts, mergeTrain(t, spec, d, xs, ys, k*n/4, (k+1)*n/4))
		}
		if err := Merge(parts[0], parts[1]); err != nil {
			t.Fatal(err)
		}
		if err := Merge(parts[2], parts[3]); err != nil {
			t.Fatal(err)
		}
		if err := Merge(parts[0], parts[2]); err != nil {
			t.Fatal(err)
		}
		check := func(when string) {
			t.Helper()
			s := single.(*PKAWV)
			var worstPred, worstStat float64
			for _, m := range []Learner{a, parts[0]} {
				for _, x := range probes {
					worstPred = math.Max(worstPred, relDiff(m.Predict(x), s.Predict(x)))
				}
				p := m.(*PKAWV)
				for k := range p.sum {
					worstStat = math.Max(worstStat, relDiff(p.sum[k], s.sum[k]))
				}
				for i := range p.c {
					worstStat = math.Max(worstStat, relDiff(p.c[i], s.c[i]))
				}
				if m.Info().Updates != s.Info().Updates {
					t.Errorf("%s, %s: merged Updates %d, single %d", spec, when, m.Info().Updates, s.Info().Updates)
				}
			}
			t.Logf("%s, %s: max |merged − single| = %.2g (scores), %.2g (S, b)", spec, when, worstPred, worstStat)
			if worstPred > 1e-9 || worstStat > 1e-9 {
				t.Errorf("%s, %s: merged differs from single-stream by %.3g (scores), %.3g (statistics)", spec, when, worstPred, worstStat)
			}
		}
		check("after merging")
		for i := n; i < n+300; i++ {
			fs, fa, fp := single.Learn(xs[i], ys[i]), a.Learn(xs[i], ys[i]), parts[0].Learn(xs[i], ys[i])
			if relDiff(fa, fs) > 1e-9 || relDiff(fp, fs) > 1e-9 {
				t.Fatalf("%s, event %d after the merge: scores %v, %v vs single %v", spec, i, fa, fp, fs)
			}
		}
		check("300 events later")
	}
}

// Merging a model with itself counts its data twice: S and b double.
func TestMergeTaylorSelf(t *testing.T) {
	xs, ys := pkawvData(200, 3, 33, 1)
	l := mergeTrain(t, "pkawv:order=2", 3, xs, ys, 0, 200).(*PKAWV)
	s0, c0 := append([]float64(nil), l.sum...), append([]float64(nil), l.c...)
	if err := l.Merge(l); err != nil {
		t.Fatal(err)
	}
	for i := range c0 {
		if l.c[i] != 2*c0[i] {
			t.Fatalf("b[%d] = %v, want %v", i, l.c[i], 2*c0[i])
		}
	}
	for i := range l.r {
		if k := tri(i); l.sum[k] != 2*s0[k] {
			t.Fatalf("S[%d][0] = %v, want %v", i, l.sum[k], 2*s0[k])
		}
	}
	if l.Info().Updates != 400 {
		t.Errorf("Updates %d", l.Info().Updates)
	}
}

// Exact Kernel-AWV holds its points: merging appends the other model's
// points in its order, which is bit for bit the model trained on the two
// streams one after the other.
func TestMergeKAWVIsBitIdentical(t *testing.T) {
	const d = 4
	xs, ys := pkawvData(180, d, 34, 1)
	single := mergeTrain(t, "kawv:max_points=200", d, xs, ys, 0, 180)
	a := mergeTrain(t, "kawv:max_points=200", d, xs, ys, 0, 100)
	b := mergeTrain(t, "kawv:max_points=200", d, xs, ys, 100, 180)
	if err := Merge(a, b); err != nil {
		t.Fatal(err)
	}
	sa, _ := a.MarshalBinary()
	ss, _ := single.MarshalBinary()
	if !bytes.Equal(sa, ss) {
		t.Error("merged Kernel-AWV state differs from the single-stream state")
	}
	// Refused: above max_points, and after labels were ignored past the cap.
	c := mergeTrain(t, "kawv:max_points=200", d, xs, ys, 0, 150)
	if err := Merge(a, c); err == nil || !strings.Contains(err.Error(), "max_points") {
		t.Errorf("merge above max_points: %v", err)
	}
	full := mergeTrain(t, "kawv:max_points=50", d, xs, ys, 0, 60)
	small := mergeTrain(t, "kawv:max_points=50", d, xs, ys, 60, 70)
	if err := Merge(small, full); err == nil || !strings.Contains(err.Error(), "ignored") {
		t.Errorf("merge of a capped model: %v", err)
	}
}

// Merging is refused — with an error that says why, and without changing
// the receiver — for another spec, dimension or learner, and for the
// Nyström basis, whose state is not additive.
func TestMergeRefusals(t *testing.T) {
	const d = 4
	xs, ys := pkawvData(200, d, 35, 1)
	a := mergeTrain(t, "pkawv:order=2", d, xs, ys, 0, 100)
	before, _ := a.MarshalBinary()
	for _, c := range []struct {
		other Learner
		want  string
	}{
		{mergeTrain(t, "pkawv:order=3", d, xs, ys, 0, 100), "specs and dimensions must be identical"},
		{mergeTrain(t, "pkawv:order=2,sigma=2", d, xs, ys, 0, 100), "specs and dimensions must be identical"},
		{mergeTrain(t, "pkawv:order=2,variant=ridge", d, xs, ys, 0, 100), "specs and dimensions must be identical"},
		{pkawvNew(t, "pkawv:order=2", d+1), "specs and dimensions must be identical"},
		{mergeTrain(t, "kawv", d, xs, ys, 0, 100), "specs and dimensions must be identical"},
		{mergeTrain(t, "pkawv:basis=nystrom", d, xs, ys, 0, 100), "specs and dimensions must be identical"},
	} {
		err := Merge(a, c.other)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("merging %s: %v", c.other.Info().Spec, err)
		}
	}
	if after, _ := a.MarshalBinary(); !bytes.Equal(before, after) {
		t.Error("a refused merge changed the receiver")
	}
	// The Nyström basis refuses, explaining why.
	ny := mergeTrain(t, "pkawv:basis=nystrom", d, xs, ys, 0, 100)
	ny2 := mergeTrain(t, "pkawv:basis=nystrom", d, xs, ys, 100, 200)
	if err := Merge(ny, ny2); err == nil || !strings.Contains(err.Error(), "not additive") {
		t.Errorf("Nyström merge: %v", err)
	}
	// A learner without Merge.
	f := pkawvNew(t, "fogd", d)
	if err := Merge(f, pkawvNew(t, "fogd", d)); err == nil || !strings.Contains(err.Error(), "does not support merging") {
		t.Errorf("fogd merge: %v", err)
	}
}
