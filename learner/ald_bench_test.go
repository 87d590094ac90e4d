package learner

import (
	"fmt"
	"testing"

	"okstream/learner/rng"
)

// aldBenchSpecs are the benchmarked configurations (σ = 1 on benchStream's
// Gaussian inputs: almost every point fails the ALD test, so the
// dictionary fills to its cap during warm-up).
var aldBenchSpecs = []struct{ label, spec string }{
	{"aogd-ald", "aogd-ald:sigma=1"},
	{"nons-ald", "nons-ald:sigma=1"},
	{"nons-ald-svd", "nons-ald:sigma=1,form=svd"},
}

// BenchmarkALDLearn times steady-state Learn (no growth: the dictionary is
// full at its cap J, every round takes the projected step) for J ∈ {25, 50,
// 100, 200, 400} and d ∈ {8, 40}. Per round: one kernel row (O(dJ)), one
// triangular solve (O(J²)), and for NONS-ALD the slab projection and the
// Sherman–Morrison update (O(J²)). The svd form (checking only) is not
// benchmarked here: its rounds add the O(J²) map product and A update.
func BenchmarkALDLearn(b *testing.B) {
	for _, s := range aldBenchSpecs[:2] { // the svd form's warm-up to J = 400 is O(J⁴)
		for _, d := range []int{8, 40} {
			for _, J := range []int{25, 50, 100, 200, 400} {
				spec := fmt.Sprintf("%s,budget=%d", s.spec, J)
				b.Run(fmt.Sprintf("%s/d=%d/J=%d", s.label, d, J), func(b *testing.B) { benchLearner(b, spec, d, false) })
			}
		}
	}
}

// BenchmarkALDGrowth times one growth round at dictionary size J: the
// learner is restored to a size-J state (outside the timer) and learns a
// point far from every dictionary point (residual ≈ 1). The Cholesky forms
// do O(dJ + J²) work (the restored state has room to grow, so they do not
// allocate); the svd form (the paper's) eigendecomposes K_S and re-inverts
// A, O(J³), and allocates its transition matrices.
func BenchmarkALDGrowth(b *testing.B) {
	for _, s := range aldBenchSpecs {
		for _, d := range []int{8, 40} {
			for _, J := range []int{25, 50, 100, 200, 400} {
				if s.label == "nons-ald-svd" && J > 200 {
					continue // warm-up O(J⁴)
				}
				spec := s.spec + ",budget=0"
				b.Run(fmt.Sprintf("%s/d=%d/J=%d", s.label, d, J), func(b *testing.B) { benchALDGrowth(b, spec, d, J) })
			}
		}
	}
}

func benchALDGrowth(b *testing.B, spec string, d, J int) {
	xs, ys := benchStream(d)
	l, err := New(spec, d)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; l.Info().Used < J; i++ {
		l.Learn(xs[i%len(xs)], ys[i%len(xs)])
	}
	st, err := l.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	src := rng.New(7)
	far := make([][]float64, 64)
	for i := range far {
		far[i] = make([]float64, d)
		for j := range far[i] {
			far[i][j] = 100 * src.Normal()
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := l.UnmarshalBinary(st); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		l.Learn(far[i%len(far)], 0.5)
	}
	b.StopTimer()
	if l.Info().Used != J+1 {
		b.Fatalf("dictionary size %d after the growth round, want %d", l.Info().Used, J+1)
	}
}
