package consumer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/internal/kafkatest"
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

// latestPayloads loads each partition's newest checkpoint: its payload and
// next offset.
func latestPayloads(t *testing.T, e *kafkatest.Env, cfg Config, parts int) (map[int][]byte, map[int]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := checkpoint.Open(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: cfg.Checkpoints})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pls, next := map[int][]byte{}, map[int]int64{}
	for p := 0; p < parts; p++ {
		cp, _, err := s.Load(ctx, checkpoint.ID{Group: cfg.Group, Topic: cfg.Input, Partition: p})
		if err != nil || cp == nil {
			t.Fatalf("partition %d: no checkpoint (%v)", p, err)
		}
		pls[p], next[p] = cp.Payload, cp.NextOffset
	}
	return pls, next
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
	payloads, next := latestPayloads(t, e, cfg, parts)
	scorers := map[int]*Scorer{}
	for p, pl := range payloads {
		s, err := NewScorer(pl)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Names()) != len(scorerModels) || s.Dim() != testDim {
			t.Fatalf("partition %d: models %v, dim %d", p, s.Names(), s.Dim())
		}
		scorers[p] = s
	}

	e.Produce(t, input, unlabelled(t, genEvents(300, 44, "b"))...)
	runToEnd(t, e, cfg)
	got := predictionsByOffset(t, e, cfg.Output)
	var after []kafkatest.Record
	for _, r := range e.ReadAll(t, input) {
		if r.Offset >= next[r.Partition] {
			after = append(after, r)
		}
	}
	if len(after) != 300 {
		t.Fatalf("%d events after the checkpoints, want 300", len(after))
	}
	want := make([][]byte, len(after))
	for i, r := range after {
		rec, ok := got[[2]int64{int64(r.Partition), r.Offset}]
		if !ok {
			t.Fatalf("no prediction for partition %d offset %d", r.Partition, r.Offset)
		}
		want[i] = rec
		if b := scorerRecord(t, scorers[r.Partition], cfg, r); !bytes.Equal(b, rec) {
			pw, _ := codec.DecodePrediction(rec)
			pg, _ := codec.DecodePrediction(b)
			t.Fatalf("partition %d offset %d:\npipeline %+v\nscorer   %+v", r.Partition, r.Offset, pw, pg)
		}
	}
	// Concurrently, in reverse order per goroutine: the same records.
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
