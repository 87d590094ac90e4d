package learner

import (
	"testing"

	"okstream/learner/rng"
)

// BenchmarkFOGDMulti times one LearnClass of multi-class FOGD with C = 10
// classes against one Learn of binary FOGD, both at d = 50 with the default
// budget (B = 100, D = 400 frequencies) and σ given (no wrapper), on the
// same dense Gaussian inputs (benchStream). The issue asks for the
// multi-class learner to cost at most 2× the binary one per event; the
// ratio of the two ns/op is that figure (measured 6.0 and 10.8 µs, 1.80×;
// docs/algorithms/multiclass.md). No test asserts it: wall-clock ratios
// are not asserted in this repository.
func BenchmarkFOGDMulti(b *testing.B) {
	const d, classes = 50, 10
	xs, ys := benchStream(d)
	src := rng.New(7)
	cs := make([]int, len(xs))
	for i := range cs {
		cs[i] = src.IntN(classes)
	}
	b.Run("binary", func(b *testing.B) {
		l, err := New("fogd:sigma=1", d)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < 2000; i++ {
			l.Learn(xs[i%len(xs)], ys[i%len(xs)])
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			j := i % len(xs)
			l.Learn(xs[j], ys[j])
		}
	})
	b.Run("multi-C10", func(b *testing.B) {
		m, err := NewMulti("fogd:sigma=1", d)
		if err != nil {
			b.Fatal(err)
		}
		p := make([]float64, classes+1)
		for c := 0; c < classes; c++ { // classes in order, then a warm-up
			m.LearnClass(xs[c], c, p)
		}
		for i := 0; i < 2000; i++ {
			m.LearnClass(xs[i%len(xs)], cs[i%len(xs)], p)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			j := i % len(xs)
			m.LearnClass(xs[j], cs[j], p)
		}
	})
}
