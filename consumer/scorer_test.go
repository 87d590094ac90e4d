package consumer

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/internal/kafkatest"
	"okstream/label"
	"okstream/learner/rng"
)

// scorerModels: the test models, auto, and a logistic model (whose
// probability is its own, not the calibration's).
var scorerModels = append(append([]Model(nil), testModels...),
	Model{Name: "auto", Spec: "auto:base=fogd,budget=10,halving=200"},
	Model{Name: "logit", Spec: "linear:loss=logistic"})

// unlabelled strips the labels of msgs (re-encoded).
func unlabelled(t *testing.T, msgs []kafka.Message) []kafka.Message {
	t.Helper()
	out := make([]kafka.Message, len(msgs))
	for i, m := range msgs {
		ev, err := codec.DecodeEvent(m.Value, codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		ev.HasY, ev.Y, ev.YKind, ev.YStr = false, 0, codec.LabelNumber, ""
		b, err := codec.AppendEvent(nil, &ev)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = kafka.Message{Key: m.Key, Value: b}
	}
	return out
}

// scorerRecord is the prediction record the pipeline would publish for
// input record r of partition p, scored by s.
func scorerRecord(t *testing.T, s *Scorer, cfg Config, r kafkatest.Record) []byte {
	t.Helper()
	ev, err := codec.DecodeEvent(r.Value, codec.Limits{Dim: cfg.Dim})
	if err != nil {
		t.Fatal(err)
	}
	scores, err := s.Score(&ev, nil)
	if err != nil {
		t.Fatalf("partition %d offset %d: %v", r.Partition, r.Offset, err)
	}
	key := ev.Key
	if key == "" {
		key = string(r.Key)
	}
	pred := codec.Prediction{
		Version: codec.PredictionVersionProb, ID: ev.ID, Key: key,
		Topic: cfg.Input, Partition: int32(r.Partition), Offset: r.Offset,
		TS: ev.TS, HasTS: ev.HasTS, Models: scores, Class: s.ClassName(scores),
	}
	return codec.AppendPrediction(nil, &pred)
}

// scorersOf builds a Scorer per partition from the newest checkpoints, and
// returns them with the checkpoints' next offsets.
func scorersOf(t *testing.T, e *kafkatest.Env, cfg Config, parts int) (map[int]*Scorer, map[int]int64) {
	t.Helper()
	payloads, next := checkpointNext(t, e, cfg, parts)
	scorers := map[int]*Scorer{}
	for p, pl := range payloads {
		s, err := NewScorer(pl)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Names()) != len(cfg.Models) || s.Dim() != cfg.Dim {
			t.Fatalf("partition %d: models %v, dim %d", p, s.Names(), s.Dim())
		}
		scorers[p] = s
	}
	return scorers, next
}

// compareAfter checks that the Scorers' records equal the pipeline's, byte
// for byte, for the first limit events (0: all) of each partition from
// its checkpoint's next offset; it returns the input records compared
// with the pipeline's records.
func compareAfter(t *testing.T, e *kafkatest.Env, cfg Config, scorers map[int]*Scorer, next map[int]int64, limit int) ([]kafkatest.Record, [][]byte) {
	t.Helper()
	got := predictionsByOffset(t, e, cfg.Output)
	var after []kafkatest.Record
	var want [][]byte
	n := map[int]int{}
	for _, r := range e.ReadAll(t, cfg.Input) {
		if r.Offset < next[r.Partition] || (limit > 0 && n[r.Partition] >= limit) {
			continue
		}
		n[r.Partition]++
		rec, ok := got[[2]int64{int64(r.Partition), r.Offset}]
		if !ok {
			t.Fatalf("no prediction for partition %d offset %d", r.Partition, r.Offset)
		}
		after, want = append(after, r), append(want, rec)
		if b := scorerRecord(t, scorers[r.Partition], cfg, r); !bytes.Equal(b, rec) {
			pw, _ := codec.DecodePredictionAny(rec)
			pg, _ := codec.DecodePredictionAny(b)
			t.Fatalf("partition %d offset %d:\npipeline %+v\nscorer   %+v", r.Partition, r.Offset, pw, pg)
		}
	}
	return after, want
}

// The Scorer of a checkpoint's payload gives, for every unlabelled event
// after the checkpoint, the pipeline's prediction record byte for byte
// (scores, probabilities, decisions, update counts, class); scoring the
// same events from several goroutines at once gives the same answers; and
// scoring leaves the Scorer as it was (a second pass agrees).
func TestScorerEqualsPipeline(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	const parts = 2
	e.CreateTopic(t, input, parts, nil)
	e.Produce(t, input, genEvents(900, 43, "a")...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.Models = scorerModels
	runToEnd(t, e, cfg)
	scorers, next := scorersOf(t, e, cfg, parts)

	e.Produce(t, input, unlabelled(t, genEvents(300, 44, "b"))...)
	runToEnd(t, e, cfg)
	after, want := compareAfter(t, e, cfg, scorers, next, 0)
	if len(after) != 300 {
		t.Fatalf("%d events after the checkpoints, want 300", len(after))
	}
	// Concurrently, each goroutine in its own order: the same answers.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := len(after) - 1 - g; i >= 0; i -= 1 + g {
				r := after[i]
				ev, _ := codec.DecodeEvent(r.Value, codec.Limits{Dim: cfg.Dim})
				scores, err := scorers[r.Partition].Score(&ev, nil)
				if err != nil {
					errs <- err
					return
				}
				pw, _ := codec.DecodePrediction(want[i])
				for j := range scores {
					if math.Float64bits(scores[j].Score) != math.Float64bits(pw.Models[j].Score) || math.Float64bits(scores[j].Prob) != math.Float64bits(pw.Models[j].Prob) {
						errs <- fmt.Errorf("goroutine %d, offset %d model %s: %v, pipeline %v", g, r.Offset, scores[j].Name, scores[j].Score, pw.Models[j].Score)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// The same for a multi-class partition (the default model deciding
// multi-class from string labels): class, probability and top classes.
func TestScorerEqualsPipelineMultiClass(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	msgs, _ := multiMessages(900, 12)
	e.Produce(t, input, msgs[:700]...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.Models = []Model{flexModel}
	runToEnd(t, e, cfg)
	scorers, next := scorersOf(t, e, cfg, 2)
	for p, s := range scorers {
		if d := s.Describe(); d.Labels == nil || d.Labels.Task != label.MultiClass {
			t.Fatalf("partition %d: not multi-class: %+v", p, d.Labels)
		}
	}
	e.Produce(t, input, unlabelled(t, msgs[700:])...)
	runToEnd(t, e, cfg)
	if after, _ := compareAfter(t, e, cfg, scorers, next, 0); len(after) != 200 {
		t.Fatalf("%d events after the checkpoints, want 200", len(after))
	}
}

// Named features: the encoder changes with every event it encodes (its
// running means, and new names or values take coordinates), unlabelled
// ones included, so the pipeline's record equals the Scorer's for the
// first event after a checkpoint. Round by round, one unlabelled event
// (the second half's, with a field new to the dictionary, string values
// new to it, missing values) then a stop (a checkpoint): each equals the
// Scorer's of the checkpoint before it; and the Scorer's answers do not
// depend on what it scored before.
func TestScorerEqualsPipelineNamed(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	const n = 400
	msgs := namedMessages(n, 41)
	e.Produce(t, input, msgs[:n/2-1]...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.Models, cfg.Dim = namedModels, namedDim
	runToEnd(t, e, cfg)
	rest := unlabelled(t, msgs[n/2-1:])
	for round := 0; round < 6; round++ {
		scorers, next := scorersOf(t, e, cfg, 1)
		if round == 0 && scorers[0].Describe().FeatureKind != "named" {
			t.Fatalf("feature kind %q", scorers[0].Describe().FeatureKind)
		}
		e.Produce(t, input, rest[round])
		runToEnd(t, e, cfg)
		after, _ := compareAfter(t, e, cfg, scorers, next, 1)
		if len(after) != 1 {
			t.Fatalf("round %d: %d events compared", round, len(after))
		}
		// Every later event, scored after this one, as a fresh Scorer
		// scores it.
		for _, m := range rest[round+1 : round+16] {
			ev, err := codec.DecodeEvent(m.Value, codec.Limits{Dim: cfg.Dim})
			if err != nil {
				t.Fatal(err)
			}
			a, err1 := scorers[0].Score(&ev, nil)
			b, err2 := mustScorer(t, scorers[0]).Score(&ev, nil)
			if err1 != nil || err2 != nil || !sameScores(a, b) {
				t.Fatalf("round %d: a used Scorer %+v (%v), a fresh one %+v (%v)", round, a, err1, b, err2)
			}
		}
	}
}

// mustScorer is a fresh Scorer of s's payload.
func mustScorer(t *testing.T, s *Scorer) *Scorer {
	t.Helper()
	f, err := NewScorer(s.payload)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sameScores compares two answers bit for bit.
func sameScores(a, b []codec.ModelScore) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || !sameScore(x.Score, y.Score) || !sameScore(x.Prob, y.Prob) || x.Decision != y.Decision || x.Updates != y.Updates || x.Class != y.Class || len(x.Dist) != len(y.Dist) {
			return false
		}
		for j := range x.Dist {
			if x.Dist[j].Class != y.Dist[j].Class || !sameScore(x.Dist[j].Prob, y.Dist[j].Prob) {
				return false
			}
		}
	}
	return true
}

// Score refuses what the pipeline would dead-letter, with an error and
// without a panic: a dense event of the wrong dimension, a sparse index
// out of range, a non-finite value, a feedback event, named features on a
// dense partition's models; a payload that is not one is refused by
// NewScorer.
func TestScorerRefuses(t *testing.T) {
	ms, err := newModelSet(testModels, testDim, pendingLimits{})
	if err != nil {
		t.Fatal(err)
	}
	src := rng.New(1)
	for i := 0; i < 50; i++ {
		ev := circleEvent(src, i, "", "")
		y, _ := ms.mapLabel(&ev)
		ms.score(ev.X, y, true, nil, nil)
		ms.fkind = featDense
	}
	pl, err := ms.marshal()
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewScorer(pl)
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]codec.Event{
		"dimension": {X: []float64{1, 2}},
		"index":     {XI: []uint32{0, testDim}, XV: []float64{1, 1}},
		"order":     {XI: []uint32{2, 1}, XV: []float64{1, 1}},
		"nan":       {X: []float64{1, math.NaN(), 0, 0, 0}},
		"lengths":   {XI: []uint32{1}, XV: []float64{1, 2}},
		"named":     {F: []codec.Field{{Name: "a", Kind: codec.FieldNumber, Num: 1}}},
	}
	for name, ev := range bad {
		out, err := s.Score(&ev, nil)
		if !errors.Is(err, ErrScoreFeatures) || len(out) != 0 {
			t.Errorf("%s: %v, %d scores", name, err, len(out))
		}
	}
	fb := codec.Event{Ref: "x", HasY: true}
	if _, err := s.Score(&fb, nil); !errors.Is(err, ErrScoreFeedback) {
		t.Errorf("feedback: %v", err)
	}
	ok := codec.Event{XI: []uint32{1}, XV: []float64{0.5}}
	if out, err := s.Score(&ok, nil); err != nil || len(out) != 2 {
		t.Errorf("sparse: %v, %d scores", err, len(out))
	}
	for _, b := range [][]byte{nil, []byte("OKMS"), pl[:len(pl)/2]} {
		if _, err := NewScorer(b); err == nil {
			t.Errorf("payload of %d bytes accepted", len(b))
		}
	}
}
