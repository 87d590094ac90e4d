package consumer

import "testing"

// Exact recovery of the self-tuning learners through the pipeline: auto
// (whose state holds its survivors, loss sums and pruning position) and a
// sigma=auto learner are killed during their warm-up (state = the buffered
// events, ~75 per partition at the first kill, checkpoints every 60), around
// auto's pruning points (200, 400, 800 events per partition) and later; the
// final states and every prediction equal the uninterrupted run's.
func TestExactRecoveryAfterKillsSelfTuning(t *testing.T) {
	exactRecoveryAfterKills(t, []Model{
		{Name: "auto", Spec: "auto:base=fogd,budget=10,halving=200"},
		{Name: "nogd", Spec: "nogd:sigma=auto,budget=40,k=20"},
	}, 60, []int{150, 450, 900, 1700, 2600})
}
