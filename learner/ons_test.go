package learner

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"okstream/learner/rng"
	"okstream/learner/state"
)

// The ONS state equals a direct computation with an explicit A.
func TestONSMatchesDirect(t *testing.T) {
	src := rng.New(3)
	const k = 6
	for _, newInv := range []bool{true, false} {
		o := newONS(k, 0.5, 1)
		o.reset(k)
		A := mat.NewDense(k, k, nil)
		for i := 0; i < k; i++ {
			A.Set(i, i, 0.5)
		}
		v := make([]float64, k)
		for step := 0; step < 200; step++ {
			phi := make([]float64, k)
			for i := range phi {
				phi[i] = src.Normal()
			}
			// Reference projection of v onto |φᵀw| ≤ 1 in the A-norm.
			var Ainv mat.Dense
			Ainv.Inverse(A)
			z := mat.Dot(mat.NewVecDense(k, phi), mat.NewVecDense(k, v))
			w := append([]float64(nil), v...)
			if math.Abs(z) > 1 {
				var u mat.VecDense
				u.MulVec(&Ainv, mat.NewVecDense(k, phi))
				q := mat.Dot(mat.NewVecDense(k, phi), &u)
				for i := range w {
					w[i] -= math.Copysign(math.Abs(z)-1, z) / q * u.AtVec(i)
				}
			}
			f := o.predict(phi)
			if want := math.Max(-1, math.Min(1, z)); math.Abs(f-want) > 1e-9 {
				t.Fatalf("step %d: score %v, want clip(φᵀv) = %v", step, f, want)
			}
			y := src.Sign()
			d := Hinge.Deriv(f, y)
			o.update(phi, d, 0.01, 0.5, newInv)
			// Reference step.
			g := make([]float64, k)
			for i := range g {
				g[i] = d*phi[i] + 0.01*w[i]
			}
			var Aold mat.Dense
			Aold.CloneFrom(&Ainv)
			gv := mat.NewVecDense(k, g)
			var ggT mat.Dense
			ggT.Outer(0.5, gv, gv)
			A.Add(A, &ggT)
			var Anew mat.Dense
			Anew.Inverse(A)
			var st mat.VecDense
			if newInv {
				st.MulVec(&Anew, gv)
			} else {
				st.MulVec(&Aold, gv)
			}
			for i := range v {
				v[i] = w[i] - st.AtVec(i)
			}
			for i := range v {
				if math.Abs(o.v[i]-v[i]) > 1e-8*math.Max(1, math.Abs(v[i])) {
					t.Fatalf("newInverse=%v step %d: v[%d] = %v, direct %v", newInv, step, i, o.v[i], v[i])
				}
			}
		}
	}
}

// grow appends a coordinate with A-block d; a restored state continues
// identically.
func TestONSGrowAndRestore(t *testing.T) {
	o := newONS(2, 1, 0)
	o.reset(2)
	o.predict([]float64{1, 2})
	o.update([]float64{1, 2}, 1, 0, 1, true)
	o.grow(4)
	o.grow(2)
	if o.k != 4 || o.ainv[2*4+2] != 0.25 || o.ainv[3*4+3] != 0.5 || o.v[2] != 0 {
		t.Fatalf("after grow: k=%d ainv=%v v=%v", o.k, o.ainv[:16], o.v[:4])
	}
	// The old block is preserved.
	ref := newONS(2, 1, 0)
	ref.reset(2)
	ref.predict([]float64{1, 2})
	ref.update([]float64{1, 2}, 1, 0, 1, true)
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			if o.ainv[i*4+j] != ref.ainv[i*2+j] {
				t.Fatal("grow changed the old block")
			}
		}
	}
	e := state.NewEncoder(0)
	o.encode(e)
	r := newONS(1, 1, 0)
	d := state.NewDecoder(e.Bytes())
	r.decode(d)
	if d.Done() != nil || r.k != 4 {
		t.Fatal(d.Err())
	}
	phi := []float64{1, -1, 0.5, 2}
	if o.predict(phi) != r.predict(phi) {
		t.Fatal("restored ONS predicts differently")
	}
}
