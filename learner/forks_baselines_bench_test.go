package learner

import (
	"fmt"
	"testing"
)

// BenchmarkForksBaselinesLearn times steady-state Learn (budget full) of the
// budgeted kernel-expansion baselines at d ∈ {8, 123} and B ∈ {50, 100,
// 200, 400}, with benchLearner's random-label stream (frequent updates:
// every round is a loss round for BPA-S and BOGD, about half are mistakes
// for RBP and the Projectron).
func BenchmarkForksBaselinesLearn(b *testing.B) {
	for _, name := range []string{"rbp", "bpas", "bogd", "projectron"} {
		for _, d := range []int{8, 123} {
			for _, B := range []int{50, 100, 200, 400} {
				spec := fmt.Sprintf("%s:sigma=2,budget=%d", name, B)
				b.Run(fmt.Sprintf("%s/d=%d/B=%d", name, d, B), func(b *testing.B) { benchLearner(b, spec, d, false) })
			}
		}
	}
}
