package learner

import (
	"fmt"
	"testing"
)

// BenchmarkForksLearn times steady-state Learn of FORKS and SkeGD (past
// INIT, update rounds included and amortized: ρ = 1000, so the stored set
// grows by one example per 1000 events) at the paper's ratios (B̃ = 2B,
// s_p = B, s_m = 0.2B, k = 0.1B, D = 1) with benchLearner's random-label
// stream, d ∈ {8, 123}.
func BenchmarkForksLearn(b *testing.B) {
	for _, name := range []string{"forks", "skegd"} {
		for _, d := range []int{8, 123} {
			for _, B := range []int{50, 100, 200, 400} {
				spec := fmt.Sprintf("%s:sigma=2,budget=%d,rho=1000", name, B)
				b.Run(fmt.Sprintf("%s/d=%d/B=%d", name, d, B), func(b *testing.B) { benchLearner(b, spec, d, false) })
			}
		}
	}
}

// BenchmarkForksRegularRound times Stage-2 rounds without update rounds
// (ρ larger than the run): the paper's O(s_m k + k²) per round, plus the
// O(s_m d) kernel row against the landmarks.
func BenchmarkForksRegularRound(b *testing.B) {
	for _, name := range []string{"forks", "skegd"} {
		for _, d := range []int{8, 123} {
			for _, B := range []int{50, 100, 200, 400, 1000} {
				if B == 1000 && d != 8 {
					continue
				}
				spec := fmt.Sprintf("%s:sigma=2,budget=%d,rho=1000000000", name, B)
				b.Run(fmt.Sprintf("%s/d=%d/B=%d", name, d, B), func(b *testing.B) { benchLearner(b, spec, d, false) })
			}
		}
	}
}

// BenchmarkForksUpdateRound times one update round (ρ = 1: every Learn is
// one) — kernel rows against the stored set, sketch update, decomposition
// update (TISVD for FORKS, exact truncated SVD of Φ_pp for SkeGD),
// Z = Φ_pm^†VΣ^{1/2}, reset and the fresh step — with the stored set capped
// at the buffer size (max_stored = 2B), so every round replaces the oldest
// non-landmark example and the cost stays constant. d = 8.
func BenchmarkForksUpdateRound(b *testing.B) {
	for _, name := range []string{"forks", "skegd"} {
		for _, B := range []int{50, 100, 200, 400} {
			spec := fmt.Sprintf("%s:sigma=2,budget=%d,rho=1,max_stored=%d", name, B, 2*B)
			b.Run(fmt.Sprintf("%s/B=%d", name, B), func(b *testing.B) {
				xs, ys := benchStream(8)
				l, err := New(spec, 8)
				if err != nil {
					b.Fatal(err)
				}
				i := 0
				for ; !forksSketchOf(l).ready; i++ {
					l.Learn(xs[i%len(xs)], ys[i%len(xs)])
				}
				for range 5 { // warm the scratch
					l.Learn(xs[i%len(xs)], ys[i%len(xs)])
					i++
				}
				b.ReportAllocs()
				b.ResetTimer()
				for j := 0; j < b.N; j++ {
					k := (i + j) % len(xs)
					l.Learn(xs[k], ys[k])
				}
			})
		}
	}
}

func forksSketchOf(l Learner) *sketchMap {
	switch v := l.(type) {
	case *FORKS:
		return v.sk
	case *SkeGD:
		return v.sk
	}
	panic("not a sketch learner")
}
