package learner

import (
	"fmt"
	"testing"

	"okstream/learner/rng"
)

// benchStream returns a pool of labelled events of dimension d. For d ≥ 100
// the inputs are sparse binary vectors with ~12 non-zeros (like w7a/a9a);
// otherwise dense Gaussian. Labels are random, so loss rounds are frequent
// and budgets fill quickly during warm-up.
func benchStream(d int) ([][]float64, []float64) {
	src := rng.New(uint64(d))
	n := 4096
	xs := make([][]float64, n)
	ys := make([]float64, n)
	for i := range xs {
		x := make([]float64, d)
		if d >= 100 {
			for k := 0; k < 12; k++ {
				x[src.IntN(d)] = 1
			}
		} else {
			for j := range x {
				x[j] = src.Normal()
			}
		}
		xs[i] = x
		ys[i] = src.Sign()
	}
	return xs, ys
}

// benchLearner warms the learner up past its budget (steady state: NOGD in
// its primal phase) and then times Learn or Predict.
func benchLearner(b *testing.B, spec string, d int, predict bool) {
	xs, ys := benchStream(d)
	l, err := New(spec, d)
	if err != nil {
		b.Fatal(err)
	}
	info := l.Info()
	for i := 0; i < 3*info.Budget+2000; i++ {
		l.Learn(xs[i%len(xs)], ys[i%len(xs)])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % len(xs)
		if predict {
			l.Predict(xs[j])
		} else {
			l.Learn(xs[j], ys[j])
		}
	}
}

// BenchmarkLearn covers the grid: d ∈ {8, 24, 123, 300}, budgets
// 50–400, for FOGD (4B frequencies) and NOGD (k = 0.1B).
func BenchmarkLearn(b *testing.B) {
	for _, name := range []string{"fogd", "nogd"} {
		for _, d := range []int{8, 24, 123, 300} {
			for _, B := range []int{50, 100, 200, 400} {
				spec := fmt.Sprintf("%s:sigma=2,budget=%d", name, B)
				b.Run(fmt.Sprintf("%s/d=%d/B=%d", name, d, B), func(b *testing.B) { benchLearner(b, spec, d, false) })
			}
		}
	}
}

func BenchmarkPredict(b *testing.B) {
	for _, name := range []string{"fogd", "nogd"} {
		for _, d := range []int{8, 123} {
			for _, B := range []int{100, 400} {
				spec := fmt.Sprintf("%s:sigma=2,budget=%d", name, B)
				b.Run(fmt.Sprintf("%s/d=%d/B=%d", name, d, B), func(b *testing.B) { benchLearner(b, spec, d, true) })
			}
		}
	}
}
