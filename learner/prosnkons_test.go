package learner

// Tests of PROS-N-KONS (prosnkons.go, core kons.go) against dense reference
// computations with gonum: the ONS step within an epoch, the Nyström
// embedding built at each dictionary change, the restart, the slab bound.

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func init() {
	addContractSpecs(
		// Budgeted (the FORKS paper's KuaiRec variant): the cap is reached
		// within the first 500 events of the contract streams, so the
		// steady state has no epoch changes (they allocate).
		"pros-n-kons:sigma=0.7,bmax=60",
		"pros-n-kons:sigma=0.7,bmax=60,loss=square",
		"pros-n-kons:kernel=laplacian,sigma=1.5,bmax=50,loss=squared_hinge,prob=paper,inverse=old,gamma=0.5,alpha=1",
	)
}

// konsOf returns the core of a PROS-N-KONS or CON-KONS learner.
func konsOf(l Learner) *kons {
	switch v := l.(type) {
	case *ProsNKons:
		return &v.kons
	case *ConKons:
		return &v.kons
	}
	panic("not a KONS learner")
}

// refPhi computes φ(x) = M κ(I, x) with pairwise kernel evaluations.
func refPhi(l *kons, x []float64) []float64 {
	n := l.dict.Len()
	phi := make([]float64, l.r)
	for j := range l.r {
		for i := range n {
			phi[j] += l.m[j*n+i] * l.kern.Eval(l.dict.Points().Row(i), x)
		}
	}
	return phi
}

// refONS is a dense ONS with an explicit A (gonum inverses): the reference
// for the lazy, Sherman–Morrison ONS of the learners.
type refONS struct {
	A      *mat.Dense
	v, w   []float64
	c, s   float64
	newInv bool
}

func newRefONS(k int, alpha, c, s float64, newInv bool) *refONS {
	A := mat.NewDense(max(k, 1), max(k, 1), nil)
	for i := range k {
		A.Set(i, i, alpha)
	}
	return &refONS{A: A, v: make([]float64, k), c: c, s: s, newInv: newInv}
}

func (o *refONS) inv() *mat.Dense {
	var ai mat.Dense
	if err := ai.Inverse(o.A); err != nil {
		panic(err)
	}
	return &ai
}

// predict projects v onto |φᵀw| ≤ C in the A-norm and returns φᵀw.
func (o *refONS) predict(phi []float64) float64 {
	k := len(o.v)
	o.w = append([]float64(nil), o.v...)
	if k == 0 {
		return 0
	}
	p := mat.NewVecDense(k, append([]float64(nil), phi...))
	z := mat.Dot(p, mat.NewVecDense(k, o.v))
	if math.Abs(z) > o.c {
		var u mat.VecDense
		u.MulVec(o.inv(), p)
		q := mat.Dot(p, &u)
		for i := range o.w {
			o.w[i] -= math.Copysign(math.Abs(z)-o.c, z) / q * u.AtVec(i)
		}
	}
	return mat.Dot(p, mat.NewVecDense(k, o.w))
}

// update takes the step g = d·φ: A ← A + s ggᵀ, v = w − A⁻¹g (new or old A).
func (o *refONS) update(phi []float64, d float64) {
	k := len(o.v)
	g := mat.NewVecDense(k, nil)
	for i := range k {
		g.SetVec(i, d*phi[i])
	}
	old := o.inv()
	var ggT mat.Dense
	ggT.Outer(o.s, g, g)
	o.A.Add(o.A, &ggT)
	ai := old
	if o.newInv {
		ai = o.inv()
	}
	var st mat.VecDense
	st.MulVec(ai, g)
	for i := range o.v {
		o.v[i] = o.w[i] - st.AtVec(i)
	}
}

// Within an epoch, every score and every pending iterate v equal a direct
// dense ONS computation in the learner's embedding (explicit A, gonum
// inverses, the slab projection written out), for both inverse choices and
// three losses; after each dictionary change the reference restarts at
// w = 0, A = αI, as PROS-N-KONS does.
func TestProsNKonsStepMatchesDenseONS(t *testing.T) {
	for _, spec := range []string{
		"pros-n-kons:sigma=0.8,gamma=2,loss=square,bmax=45",
		"pros-n-kons:sigma=0.8,gamma=2,loss=square,inverse=old,bmax=45",
		"pros-n-kons:sigma=0.8,gamma=2,c=0.5,bmax=45",
		"pros-n-kons:sigma=0.8,gamma=1,loss=squared_hinge,alpha=0.5,curv=2,bmax=45",
	} {
		t.Run(spec, func(t *testing.T) {
			lr, err := New(spec, 4)
			if err != nil {
				t.Fatal(err)
			}
			l := konsOf(lr)
			xs, ys := stream(l.task, 700, 4, 31)
			var ref *refONS
			epochs, steps := 0, 0
			for i := range xs {
				n := l.dict.Len()
				var fRef float64
				var phi []float64
				if n > 0 {
					phi = refPhi(l, xs[i])
					fRef = ref.predict(phi)
				}
				f := lr.Learn(xs[i], ys[i])
				if math.Abs(f-fRef) > 1e-9*math.Max(1, math.Abs(fRef)) {
					t.Fatalf("event %d: score %v, dense reference %v", i, f, fRef)
				}
				if l.dict.Len() != n { // new epoch: the reference restarts
					ref = newRefONS(l.r, l.alpha, l.c, l.curv/2, !strings.Contains(spec, "inverse=old"))
					epochs++
					continue
				}
				ref.update(phi, l.loss.Deriv(f, ys[i]))
				for j, vj := range ref.v {
					if math.Abs(l.ons.v[j]-vj) > 1e-8*math.Max(1, math.Abs(vj)) {
						t.Fatalf("event %d: v[%d] = %v, dense reference %v", i, j, l.ons.v[j], vj)
					}
				}
				steps++
			}
			if epochs < 20 || steps < 300 {
				t.Fatalf("only %d epochs and %d within-epoch steps: the test does not exercise both", epochs, steps)
			}
		})
	}
}

// At every dictionary change the new embedding reproduces the kernel on the
// dictionary, φ(x_i)ᵀφ(x_j) = κ(x_i, x_j), and between any point and the
// dictionary, φ(x)ᵀφ(x_i) = κ(x, x_i) (the Nyström property); the
// dictionary grows past the initial capacity.
func TestProsNKonsEmbeddingReproducesKernel(t *testing.T) {
	lr, _ := New("pros-n-kons:sigma=0.7,gamma=0.5,loss=square", 3)
	l := konsOf(lr)
	xs, ys := stream(Regression, 300, 3, 41)
	probes := korsPoints(5, 3, 42)
	checked := 0
	for i := range xs {
		n := l.dict.Len()
		lr.Learn(xs[i], ys[i])
		if l.dict.Len() == n {
			continue
		}
		n = l.dict.Len()
		if l.r != n {
			t.Fatalf("event %d: rank %d of %d points (well-conditioned test data)", i, l.r, n)
		}
		pts := l.dict.Points()
		phis := make([][]float64, n)
		for a := range n {
			phis[a] = refPhi(l, pts.Row(a))
		}
		for a := range n {
			for b := range n {
				if d := math.Abs(dot(phis[a], phis[b]) - l.kern.Eval(pts.Row(a), pts.Row(b))); d > 1e-8 {
					t.Fatalf("event %d: φ(x_%d)ᵀφ(x_%d) differs from κ by %g", i, a, b, d)
				}
			}
		}
		for _, z := range probes {
			pz := refPhi(l, z)
			for a := range n {
				if d := math.Abs(dot(pz, phis[a]) - l.kern.Eval(z, pts.Row(a))); d > 1e-8 {
					t.Fatalf("event %d: φ(z)ᵀφ(x_%d) differs from κ by %g", i, a, d)
				}
			}
		}
		checked++
	}
	if checked < 20 || l.dict.Len() <= 16 {
		t.Fatalf("only %d dictionary changes (%d points)", checked, l.dict.Len())
	}
}

// Round 1 puts x_1 into the dictionary with weight 1 and scores 0; every
// round after a dictionary change scores exactly 0 (w = 0 after the
// restart), in Predict and in Learn.
func TestProsNKonsRestartsOnDictionaryChange(t *testing.T) {
	lr, _ := New("pros-n-kons:sigma=0.6,gamma=1,loss=square", 3)
	l := konsOf(lr)
	xs, ys := stream(Regression, 400, 3, 51)
	restarted, nonzero := 0, 0
	for i := range xs {
		n := l.dict.Len()
		p := lr.Predict(xs[i])
		f := lr.Learn(xs[i], ys[i])
		if i == 0 {
			if f != 0 || l.dict.Len() != 1 || l.dict.Weights()[0] != 1 || !slices.Equal(l.dict.Points().Row(0), xs[0]) {
				t.Fatalf("round 1: score %v, dictionary %d, weight %v", f, l.dict.Len(), l.dict.Weights())
			}
		}
		if f != p {
			t.Fatalf("event %d: Learn %v != Predict %v", i, f, p)
		}
		if l.dict.Len() != n && i+1 < len(xs) {
			if g := lr.Predict(xs[i+1]); g != 0 {
				t.Fatalf("event %d: score %v right after a restart", i+1, g)
			}
			restarted++
		} else if f != 0 {
			nonzero++
		}
	}
	if restarted < 20 || nonzero < 50 {
		t.Fatalf("%d restarts, %d non-zero scores", restarted, nonzero)
	}
}

// Every score lies in [−C, C] (the slab projection), including on a
// regression stream whose labels lie far outside it; the bound is attained.
func TestProsNKonsPredictionBounded(t *testing.T) {
	for _, spec := range []string{
		"pros-n-kons:sigma=0.7,loss=square,c=0.3,bmax=40",
		"pros-n-kons:sigma=0.7,loss=square,c=0.3,bmax=40,inverse=old,alpha=0.2",
		"pros-n-kons:sigma=0.7,c=0.25,bmax=40,alpha=0.1",
	} {
		lr, _ := New(spec, 5)
		l := konsOf(lr)
		xs, ys := stream(l.task, 1500, 5, 61)
		atBound := 0
		for i := range xs {
			y := ys[i]
			if l.task == Regression {
				y = 4*y - 1 // in about [−1, 3]
			}
			f := lr.Learn(xs[i], y)
			if math.Abs(f) > l.c*(1+1e-12) {
				t.Fatalf("%s: event %d: |score| %v > C = %v", spec, i, f, l.c)
			}
			if math.Abs(math.Abs(f)-l.c) < 1e-12 {
				atBound++
			}
		}
		if atBound < 100 {
			t.Fatalf("%s: the bound was attained only %d times: the projection is not exercised", spec, atBound)
		}
	}
}

// The budgeted variant stops growing at B_max; Info reports it.
func TestProsNKonsBudgetCap(t *testing.T) {
	lr, _ := New("pros-n-kons:sigma=0.5,bmax=25", 5)
	xs, ys := stream(Classification, 1000, 5, 71)
	for i := range xs {
		lr.Learn(xs[i], ys[i])
		if lr.Info().Used > 25 {
			t.Fatalf("event %d: dictionary %d > bmax 25", i, lr.Info().Used)
		}
	}
	if in := lr.Info(); in.Used != 25 || in.Budget != 25 {
		t.Fatalf("Info: used %d, budget %d", in.Used, in.Budget)
	}
}

// Unbounded dictionaries (the default) grow past every initial capacity;
// determinism and mid-stream restore hold across those growths (the
// contract specs are budgeted).
func TestKONSUnboundedRestore(t *testing.T) {
	for _, spec := range []string{
		"pros-n-kons:sigma=1,gamma=1",
		"con-kons:sigma=1,gamma=1",
		"pros-n-kons:sigma=1,gamma=2,loss=square,prob=paper",
	} {
		task := taskOf(t, spec)
		xs, ys := stream(task, 500, 3, 81)
		for _, cut := range []int{3, 40, 200} {
			a, _ := New(spec, 3)
			for i := range cut {
				a.Learn(xs[i], ys[i])
			}
			st, _ := a.MarshalBinary()
			b, _ := New(spec, 3)
			if err := b.UnmarshalBinary(st); err != nil {
				t.Fatal(err)
			}
			continueIdentically(t, fmt.Sprintf("%s cut %d", spec, cut), a, b, xs, ys, cut, false)
			if a.Info().Used < 40 {
				t.Fatalf("%s: dictionary of only %d points", spec, a.Info().Used)
			}
		}
	}
}

// PROS-N-KONS and CON-KONS share all numerics but the transition: with a
// one-point dictionary (no transition ever) they are bit-identical.
func TestProsNKonsEqualsConKonsWithoutTransitions(t *testing.T) {
	a, _ := New("pros-n-kons:sigma=1,bmax=1,loss=square", 3)
	b, _ := New("con-kons:sigma=1,bmax=1", 3)
	xs, ys := stream(Regression, 300, 3, 91)
	for i := range xs {
		if fa, fb := a.Learn(xs[i], ys[i]), b.Learn(xs[i], ys[i]); math.Float64bits(fa) != math.Float64bits(fb) {
			t.Fatalf("event %d: %v vs %v", i, fa, fb)
		}
	}
}
