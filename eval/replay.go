package eval

import (
	"fmt"
	"math"

	"okstream/codec"
	"okstream/features"
	"okstream/features/kinds"
	"okstream/label"
	"okstream/learner"
)

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

// ReplayEvents is the offline reference for a partition's event sequence
// with delayed feedback (codec schema v2): a labelled event is scored and
// learned from; an unlabelled event is scored and, if it has an id,
// remembered as an impression; a feedback event (Ref set) makes the learner
// learn from the referenced impression's features and the feedback's label
// (a feedback event whose impression is unknown, or whose key differs from
// the impression's non-empty key, is skipped; an impression whose id is
// already pending is not remembered — the first one wins, as in the
// runtime's buffer; the key is the event's key field, where the runtime
// falls back to the Kafka record key). scores[i] is
// the score of event i at the time it was scored — for a feedback event,
// the score its impression received. No buffer limits apply: it is the
// unbounded ideal the runtime's bounded buffer matches when nothing is
// evicted.
//
// Labels are mapped as the runtime maps them (package label), with the task
// of spec (a label.Flexible spec: decided by the labels) and no
// positive class: see ReplayLabels.
func ReplayEvents(spec string, dim int, events []codec.Event) ([]float64, learner.Learner, error) {
	return ReplayLabels(spec, dim, events, label.Undecided, "", 0)
}

// ReplayLabels is ReplayEvents with the runtime's task, positive class and
// warm-up (okstream run --task, --positive, --task-warmup; 0:
// label.DefaultWarmup): every labelled event's label (feedback
// included) goes through a label.Map first, in event order; a label that
// does not fit (the runtime dead-letters it) leaves the learner as it is
// and gets a NaN score. task Undecided is the task of spec when its
// learner fixes one; for a label.Flexible spec the warm-up's labels decide
// it, as in the runtime: until then a binary candidate (spec, learning the
// mapped −1/+1, whose scores are returned) and a regression candidate
// (spec with loss=square, learning the labels as they are) both learn, and
// the decision keeps one.
//
// A named event (codec Event.F) is encoded by one features.Encoder of the
// default configuration for dim (features.Config{Dim: dim}), created at the
// first named event and shared by all of them, once per accepted event in
// event order — after its label is accepted, so a dead-lettered event does
// not change the encoder — as the runtime encodes a partition's events.
func ReplayLabels(spec string, dim int, events []codec.Event, task label.Task, positive string, warmup int) ([]float64, learner.Learner, error) {
	l, err := learner.New(label.ResolveSpec(spec, task), dim)
	if err != nil {
		return nil, nil, err
	}
	var alt learner.Learner // the regression candidate while undecided
	if task == label.Undecided && label.Flexible(spec) {
		if alt, err = learner.New(label.ResolveSpec(spec, label.Regression), dim); err != nil {
			return nil, nil, err
		}
	} else if task == label.Undecided {
		task = label.OfLearner(l.Info().Task)
	}
	lm := label.New(task, positive)
	lm.NoMulti = true // binary and regression replays only: strings stay binary at once, as they were
	if warmup > 0 {
		lm.Warmup = warmup
	}
	type imp struct {
		x     []float64
		key   string
		score float64
	}
	pending := map[string]imp{}
	scores := make([]float64, len(events))
	var enc *features.Encoder // named events: created at the first one
	var kinds kinds.Declarer
	for i := range events {
		ev := &events[i]
		y, raw := ev.Y, ev.Y
		if ev.HasY {
			var err error
			if y, err = lm.Apply(ev); err != nil {
				scores[i] = math.NaN() // dead-lettered
				continue
			}
			if alt != nil && lm.Task != label.Undecided {
				if lm.Task == label.Regression {
					l = alt
				}
				alt = nil
			}
		}
		if ev.IsFeedback() {
			im, ok := pending[ev.Ref]
			if !ok || (im.key != "" && im.key != ev.Key) {
				scores[i] = math.NaN()
				continue
			}
			delete(pending, ev.Ref)
			l.Learn(im.x, y)
			if alt != nil {
				alt.Learn(im.x, raw)
			}
			scores[i] = im.score
			continue
		}
		var x []float64
		if ev.Named() {
			if enc == nil {
				enc = features.New(features.Config{Dim: dim})
			}
			x, _ = enc.Encode(ev.F, nil) // the default policy imputes: never an error
			if err := kinds.Declare(enc, l, alt); err != nil {
				return nil, nil, fmt.Errorf("replay: declaring the feature kinds: %w", err)
			}
		} else {
			x = ev.Dense(nil, dim)
		}
		if ev.HasY {
			scores[i] = l.Learn(x, y)
			if alt != nil {
				alt.Learn(x, raw)
			}
			continue
		}
		scores[i] = l.Predict(x)
		if alt != nil {
			alt.Predict(x)
		}
		if _, dup := pending[ev.ID]; ev.ID != "" && !dup {
			pending[ev.ID] = imp{x: x, key: ev.Key, score: scores[i]}
		}
	}
	return scores, l, nil
}
