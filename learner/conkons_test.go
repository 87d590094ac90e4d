package learner

// Tests of CON-KONS's epoch transition (conkons.go) against the invariants
// of the ALD paper's Lemmas 4.2/4.3 as the authors' CONS-KONS.R applies them, with the old model restored from a checkpoint taken
// before the inserting round and the transition matrix Q computed from
// pairwise kernel evaluations.

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func init() {
	addContractSpecs(
		"con-kons:sigma=0.7,bmax=60",
		"con-kons:sigma=0.7,bmax=60,loss=hinge,inverse=old,prob=paper",
	)
}

// conkonsRounds runs spec over a stream and calls check on every round that
// changed the dictionary (round 1 excepted), with the learner as it was
// before that round (restored from a checkpoint) and the round's score.
func conkonsRounds(t *testing.T, spec string, d, n int, seed uint64, check func(i int, old, cur *kons, x []float64, y, f float64)) int {
	t.Helper()
	lr, err := New(spec, d)
	if err != nil {
		t.Fatal(err)
	}
	l := konsOf(lr)
	xs, ys := stream(l.task, n, d, seed)
	count := 0
	for i := range xs {
		before, _ := lr.MarshalBinary()
		m := l.dict.Len()
		f := lr.Learn(xs[i], ys[i])
		if m == 0 || l.dict.Len() == m {
			continue
		}
		old, _ := New(spec, d)
		if err := old.UnmarshalBinary(before); err != nil {
			t.Fatal(err)
		}
		if g := old.Predict(xs[i]); g != f { // also leaves the scoring iterate in ons.w
			t.Fatalf("event %d: restored model scores %v, learner scored %v", i, g, f)
		}
		check(i, konsOf(old), l, xs[i], ys[i], f)
		count++
	}
	return count
}

// The transition preserves the prediction function (ALD paper, Lemma
// 4.3; §6.4): the new model φ_j(z)ᵀQw equals the old model φ_{j−1}(z)ᵀw,
// w the iterate that scored the inserting round, at arbitrary points z,
// the dictionary points and the inserted point.
func TestConKonsTransitionPreservesPrediction(t *testing.T) {
	probes := korsPoints(8, 3, 102)
	for _, spec := range []string{"con-kons:sigma=0.8,gamma=1,bmax=50", "con-kons:sigma=0.8,gamma=1,bmax=50,loss=hinge"} {
		n := conkonsRounds(t, spec, 3, 600, 101, func(i int, old, cur *kons, x []float64, y, f float64) {
			if cur.r != cur.dict.Len() || old.r != old.dict.Len() {
				t.Fatalf("event %d: rank-deficient map (test data should be well conditioned)", i)
			}
			w := old.ons.w[:old.r]
			zs := append([][]float64{x}, probes...)
			for a := range cur.dict.Len() {
				zs = append(zs, cur.dict.Points().Row(a))
			}
			for _, z := range zs {
				fOld := dot(refPhi(old, z), w)
				fNew := cur.Predict(z)
				if math.Abs(fOld-fNew) > 1e-9*math.Max(1, math.Abs(fOld)) {
					t.Fatalf("%s event %d: prediction %v after the transition, %v before", spec, i, fNew, fOld)
				}
			}
		})
		if n < 20 {
			t.Fatalf("%s: only %d transitions", spec, n)
		}
	}
}

// The second-order matrix is carried as the code does (docs/algorithms/regression.md): with
// Q = M_j K_{I_j,I_{j−1}} M_{j−1}ᵀ (QᵀQ = I), A_j = αI + Q(A_{j−1} − αI)Qᵀ,
// and A_2 = Q A_1 Qᵀ + αI when leaving the first (one-point) epoch; A_{j−1}
// includes the inserting round's gradient. A is recovered from the
// learners' A⁻¹ with gonum.
func TestConKonsTransitionOfA(t *testing.T) {
	first := 0
	n := conkonsRounds(t, "con-kons:sigma=0.8,gamma=1,bmax=50,alpha=2", 3, 600, 111, func(i int, old, cur *kons, x []float64, y, f float64) {
		ro, rn, no, nn := old.r, cur.r, old.dict.Len(), cur.dict.Len()
		// Q from pairwise kernel values.
		K := mat.NewDense(nn, no, nil)
		for a := range nn {
			for b := range no {
				K.Set(a, b, cur.kern.Eval(cur.dict.Points().Row(a), old.dict.Points().Row(b)))
			}
		}
		var Q, tmp mat.Dense
		tmp.Mul(mat.NewDense(rn, nn, cur.m), K)
		Q.Mul(&tmp, mat.NewDense(ro, no, old.m).T())
		var QtQ mat.Dense
		QtQ.Mul(Q.T(), &Q)
		if d := korsMaxAbsDiff(&QtQ, korsEye(ro, 1)); d > 1e-8 {
			t.Fatalf("event %d: ‖QᵀQ − I‖ = %g", i, d)
		}
		// A_{j−1} after the round's update: the restored A plus (σ/2) g gᵀ.
		var Aold mat.Dense
		if err := Aold.Inverse(mat.NewDense(ro, ro, append([]float64(nil), old.ons.ainv[:ro*ro]...))); err != nil {
			t.Fatal(err)
		}
		g := mat.NewVecDense(ro, refPhi(old, x))
		g.ScaleVec(old.loss.Deriv(f, y), g)
		var ggT mat.Dense
		ggT.Outer(old.curv/2, g, g)
		Aold.Add(&Aold, &ggT)
		if no > 1 {
			Aold.Sub(&Aold, korsEye(ro, old.alpha))
		} else {
			first++
		}
		var want mat.Dense
		tmp.Reset()
		tmp.Mul(&Q, &Aold)
		want.Mul(&tmp, Q.T())
		want.Add(&want, korsEye(rn, cur.alpha))
		var Anew mat.Dense
		if err := Anew.Inverse(mat.NewDense(rn, rn, append([]float64(nil), cur.ons.ainv[:rn*rn]...))); err != nil {
			t.Fatal(err)
		}
		if d := korsMaxAbsDiff(&Anew, &want); d > 1e-8*mat.Norm(&want, math.Inf(1)) {
			t.Fatalf("event %d (%d → %d points): ‖A − A_code‖ = %g", i, no, nn, d)
		}
	})
	if n < 20 || first != 1 {
		t.Fatalf("%d transitions, %d from the first epoch", n, first)
	}
}

// The round after a transition is scored without the slab projection (the
// code): the score is φᵀ(Qw), which may exceed C; every other score lies in
// [−C, C].
func TestConKonsNoProjectionAfterTransition(t *testing.T) {
	lr, _ := New("con-kons:sigma=0.8,gamma=1,c=0.2,alpha=0.2,bmax=60", 3)
	l := konsOf(lr)
	xs, ys := stream(Regression, 1500, 3, 121)
	after, above := false, 0
	for i := range xs {
		y := 3*ys[i] - 1
		var raw float64
		if after {
			raw = dot(refPhi(l, xs[i]), l.ons.v[:l.r])
		}
		m := l.dict.Len()
		f := lr.Learn(xs[i], y)
		switch {
		case after:
			if math.Abs(f-raw) > 1e-9*math.Max(1, math.Abs(raw)) {
				t.Fatalf("event %d: score %v after a transition, unprojected φᵀv = %v", i, f, raw)
			}
			if math.Abs(f) > l.c {
				above++
			}
		case math.Abs(f) > l.c*(1+1e-12):
			t.Fatalf("event %d: |score| %v > C = %v on a projected round", i, f, l.c)
		}
		after = m > 0 && l.dict.Len() != m
	}
	if above < 3 {
		t.Fatalf("only %d post-transition scores beyond C: the test does not show the missing projection", above)
	}
}
