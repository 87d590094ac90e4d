package eval

import "okstream/learner"

// Replay runs a fresh learner built from spec over an event sequence the
// way the stream runtime processes one partition: a labelled event
// (labelled[i]) is scored and then learned from (Learn returns the
// pre-update score), an unlabelled one is only scored (Predict). It returns
// every event's score and the learner in its final state. It is the offline
// reference the runtime's equivalence tests compare against.
func Replay(spec string, dim int, xs [][]float64, ys []float64, labelled []bool) ([]float64, learner.Learner, error) {
	l, err := learner.New(spec, dim)
	if err != nil {
		return nil, nil, err
	}
	scores := make([]float64, len(xs))
	for i, x := range xs {
		if labelled == nil || labelled[i] {
			scores[i] = l.Learn(x, ys[i])
		} else {
			scores[i] = l.Predict(x)
		}
	}
	return scores, l, nil
}
