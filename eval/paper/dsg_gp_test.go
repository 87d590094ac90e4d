package paper

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"okstream/dataset"
	"okstream/learner/kernel"
	"okstream/learner/rng"
)

// TestDSGGPClosedFormDirect checks the Cholesky closed form of eq. 9
// against a direct inverse of K + σ²I on a tiny problem.
func TestDSGGPClosedFormDirect(t *testing.T) {
	xs, ys, _ := dataset.Ridge2D(rng.New(1), 7)
	q, _, _ := dataset.Ridge2D(rng.New(2), 4)
	const noise = 0.3
	k := kernel.MustNew(kernel.Gaussian, 1.7, 0, 0)
	m, v, err := dsgGPClosedForm(k, noise, xs, ys, q)
	if err != nil {
		t.Fatal(err)
	}
	n := len(xs)
	K := mat.NewDense(n, n, nil)
	for i := range xs {
		for j := range xs {
			K.Set(i, j, k.Eval(xs[i], xs[j]))
		}
		K.Set(i, i, K.At(i, i)+noise)
	}
	var inv mat.Dense
	if err := inv.Inverse(K); err != nil {
		t.Fatal(err)
	}
	for s, z := range q {
		var mean, quad float64
		for i := range xs {
			for j := range xs {
				ki, kj := k.Eval(z, xs[i]), k.Eval(z, xs[j])
				mean += ki * inv.At(i, j) * ys[j]
				quad += ki * inv.At(i, j) * kj
			}
		}
		if math.Abs(m[s]-mean) > 1e-10 || math.Abs(v[s]-(1-quad)) > 1e-10 {
			t.Errorf("point %d: closed form (%v, %v), direct (%v, %v)", s, m[s], v[s], mean, 1-quad)
		}
		if !(v[s] > 0 && v[s] < 1) {
			t.Errorf("point %d: posterior variance %v outside (0, 1)", s, v[s])
		}
	}
}

// TestDSGGPRunSmall runs a scaled-down configuration twice: the same
// numbers both times, and both errors fall between the first and the last
// checkpoint.
func TestDSGGPRunSmall(t *testing.T) {
	c := dsgGPSetups[1]
	c.Train, c.Test, c.Steps, c.Block, c.VarBlock, c.MaxVarFeatures = 256, 64, 32, 64, 8, 256
	a, err := dsgGPRun(c, 5, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := dsgGPRun(c, 5, Options{})
	if err != nil {
		t.Fatal(err)
	}
	last := len(a.T) - 1
	for i := range a.T {
		if a.MeanErr[i] != b.MeanErr[i] || a.VarErr[i] != b.VarErr[i] {
			t.Fatalf("t = %d: runs differ", a.T[i])
		}
	}
	t.Logf("mean %.4g → %.4g, variance %.4g → %.4g", a.MeanErr[0], a.MeanErr[last], a.VarErr[0], a.VarErr[last])
	if !(a.MeanErr[last] < a.MeanErr[0]) || !(a.VarErr[last] < a.VarErr[0]) {
		t.Errorf("errors did not fall: mean %v, variance %v", a.MeanErr, a.VarErr)
	}
}
