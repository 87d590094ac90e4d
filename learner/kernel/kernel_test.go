package kernel

import (
	"math"
	"testing"

	"okstream/learner/rng"
)

func randRows(src *rng.Source, n, d int, sparsity float64) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, d)
		for j := range out[i] {
			if src.Float64() >= sparsity {
				out[i][j] = src.Normal()
			}
		}
	}
	return out
}

func allKernels(t *testing.T) []Kernel {
	return []Kernel{
		MustNew(Gaussian, 1.3, 0, 0),
		MustNew(Laplacian, 2, 0, 0),
		MustNew(Cauchy, 0.7, 0, 0),
		MustNew(Polynomial, 0, 3, 1),
		MustNew(Linear, 0, 0, 0),
	}
}

// Row must agree with the direct pairwise definition in Eval, for dense and
// sparse queries (the two code paths of dots).
func TestRowMatchesEval(t *testing.T) {
	src := rng.New(1)
	for _, sparsity := range []float64{0, 0.9} {
		for _, d := range []int{1, 5, 40} {
			rows := randRows(src, 30, d, sparsity)
			m := NewMatrix(d, 4)
			for _, r := range rows {
				m.Append(r)
			}
			queries := randRows(src, 10, d, sparsity)
			for _, k := range allKernels(t) {
				dst := make([]float64, m.Len())
				for _, q := range queries {
					k.Row(dst, m, q)
					for i, r := range rows {
						want := k.Eval(r, q)
						if math.Abs(dst[i]-want) > 1e-12*math.Max(1, math.Abs(want)) {
							t.Fatalf("%s d=%d sparsity=%v: Row[%d]=%v, Eval=%v", k.Kind, d, sparsity, i, dst[i], want)
						}
					}
				}
			}
		}
	}
}

func TestGramSymmetricPSD(t *testing.T) {
	src := rng.New(2)
	rows := randRows(src, 25, 6, 0)
	m := NewMatrix(6, 0)
	for _, r := range rows {
		m.Append(r)
	}
	for _, k := range allKernels(t) {
		g := k.Gram(make([]float64, 25*25), m)
		for i := 0; i < 25; i++ {
			for j := 0; j < 25; j++ {
				if g[i*25+j] != g[j*25+i] {
					t.Fatalf("%s Gram not exactly symmetric", k.Kind)
				}
			}
		}
		// vᵀGv ≥ 0 for random v (PSD up to round-off).
		for trial := 0; trial < 20; trial++ {
			v := randRows(src, 1, 25, 0)[0]
			var q float64
			for i := 0; i < 25; i++ {
				for j := 0; j < 25; j++ {
					q += v[i] * g[i*25+j] * v[j]
				}
			}
			if q < -1e-9 {
				t.Fatalf("%s Gram not PSD: vᵀGv = %v", k.Kind, q)
			}
		}
	}
}

func TestDiagShiftInvariant(t *testing.T) {
	x := []float64{3, -1, 2}
	for _, k := range allKernels(t) {
		if got, want := k.Diag(x), k.Eval(x, x); math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("%s Diag=%v Eval(x,x)=%v", k.Kind, got, want)
		}
	}
}

func TestMatrixSwapRemove(t *testing.T) {
	m := NewMatrix(2, 0)
	m.Append([]float64{1, 1})
	m.Append([]float64{2, 2})
	m.Append([]float64{3, 3})
	m.SwapRemove(0)
	if m.Len() != 2 || m.Row(0)[0] != 3 || m.Row(1)[0] != 2 {
		t.Fatalf("after SwapRemove: %v", m.Data())
	}
	k := MustNew(Gaussian, 1, 0, 0)
	row := k.Row(make([]float64, 2), m, []float64{3, 3})
	if row[0] != 1 {
		t.Fatalf("cached norm not moved with the row: κ = %v", row[0])
	}
	m.SwapRemove(1)
	if m.Len() != 1 || m.Row(0)[0] != 3 {
		t.Fatal("removing the last row")
	}
}

func TestNewRejects(t *testing.T) {
	if _, err := New(Gaussian, 0, 0, 0); err == nil {
		t.Error("sigma 0 accepted")
	}
	if _, err := New(Polynomial, 0, 0, 1); err == nil {
		t.Error("degree 0 accepted")
	}
	if _, err := ParseKind("rbf"); err == nil {
		t.Error("unknown kind accepted")
	}
}

// The empirical kernel of the random features converges to the exact
// kernel, with error shrinking like 1/√D: quadrupling D should roughly halve
// the mean error.
func TestFourierConverges(t *testing.T) {
	src := rng.New(9)
	d := 3
	pts := randRows(src, 40, d, 0)
	for _, kind := range []Kind{Gaussian, Laplacian, Cauchy} {
		k := MustNew(kind, 1.5, 0, 0)
		var errs []float64
		for _, D := range []int{100, 1600} {
			var sum float64
			var cnt int
			for seed := uint64(0); seed < 5; seed++ {
				f, err := NewFourier(kind, 1.5, d, D, 1/math.Sqrt(float64(D)), seed)
				if err != nil {
					t.Fatal(err)
				}
				zs := make([][]float64, len(pts))
				for i, p := range pts {
					zs[i] = append([]float64(nil), f.Map(make([]float64, 2*D), p)...)
				}
				for i := range pts {
					for j := i + 1; j < len(pts); j++ {
						sum += math.Abs(dot(zs[i], zs[j]) - k.Eval(pts[i], pts[j]))
						cnt++
					}
				}
			}
			errs = append(errs, sum/float64(cnt))
		}
		ratio := errs[0] / errs[1]
		if ratio < 2.8 || ratio > 5.5 || errs[1] > 0.02 {
			t.Errorf("%s: mean |error| %.4f (D=100) → %.4f (D=1600), ratio %.2f; want ≈4 (1/√D)", kind, errs[0], errs[1], ratio)
		}
	}
}

func TestFourierDeterministic(t *testing.T) {
	a, _ := NewFourier(Gaussian, 2, 5, 50, 1, 42)
	b, _ := NewFourier(Gaussian, 2, 5, 50, 1, 42)
	x := []float64{1, 0, -2, 0.5, 0}
	za := a.Map(make([]float64, 100), x)
	zb := b.Map(make([]float64, 100), x)
	for i := range za {
		if za[i] != zb[i] {
			t.Fatal("same seed, different features")
		}
	}
	if _, err := NewFourier(Polynomial, 1, 2, 2, 1, 0); err == nil {
		t.Error("polynomial Fourier features accepted")
	}
}

func BenchmarkRow(b *testing.B) {
	for _, c := range []struct {
		name     string
		n, d     int
		sparsity float64
	}{{"n100_d8", 100, 8, 0}, {"n400_d123", 400, 123, 0}, {"n100_d300_sparse", 100, 300, 0.96}} {
		b.Run(c.name, func(b *testing.B) {
			src := rng.New(1)
			m := NewMatrix(c.d, c.n)
			for _, r := range randRows(src, c.n, c.d, c.sparsity) {
				m.Append(r)
			}
			q := randRows(src, 1, c.d, c.sparsity)[0]
			k := MustNew(Gaussian, 1, 0, 0)
			dst := make([]float64, c.n)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				k.Row(dst, m, q)
			}
		})
	}
}
