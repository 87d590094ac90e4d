package consumer

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/internal/kafkatest"
)

func mustEvent(t *testing.T, ev codec.Event) []byte {
	t.Helper()
	b, err := codec.AppendEvent(nil, &ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func deadLetterReasons(t *testing.T, e *kafkatest.Env, topic string) []string {
	t.Helper()
	var out []string
	for _, d := range e.ReadAll(t, topic) {
		for _, h := range d.Headers {
			if h.Key == HeaderReason {
				out = append(out, string(h.Value))
			}
		}
	}
	return out
}

// Hostile values and feedback through the real worker: with the default
// value limits, features and labels of 1e308 (dense, sparse, feedback) and
// an over-long id are dead-lettered with their reasons; a far-future event
// time does not evict the pending impressions; an impression reusing a
// pending id does not replace it, and feedback with another key does not
// resolve it (dead-lettered) while feedback with the right key does. The
// partition keeps flowing throughout.
func TestHostileValuesAndFeedback(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	const t0 = int64(1_700_000_000_000)
	x := []float64{0.1, -0.2, 0.3, 0.4, -0.5}
	msg := func(key string, ev codec.Event) kafka.Message {
		return kafka.Message{Key: []byte(key), Value: mustEvent(t, ev)}
	}
	var msgs []kafka.Message
	msgs = append(msgs, genEvents(50, 5, "a")...)
	msgs = append(msgs,
		msg("alice", codec.Event{Version: 2, ID: "imp-A", TS: t0, HasTS: true, X: x}),
		msg("bob", codec.Event{Version: 2, ID: "imp-B", TS: t0 + 1, HasTS: true, X: x}),
		msg("z", codec.Event{Version: 1, X: []float64{1e308, 0, 0, 0, -1e308}, Y: 1, HasY: true}),                  // value_out_of_range
		msg("z", codec.Event{Version: 1, XI: []uint32{0, 3}, XV: []float64{1, -1e308}, Y: 1, HasY: true}),          // value_out_of_range
		msg("bob", codec.Event{Version: 2, Ref: "imp-B", Y: 1e308, HasY: true}),                                    // value_out_of_range
		msg("z", codec.Event{Version: 1, ID: strings.Repeat("i", 2000), X: x}),                                     // id_too_long
		msg("z", codec.Event{Version: 2, TS: t0 + 50*365*24*3600_000, HasTS: true, X: x, Y: 1, HasY: true}),        // far future
		msg("mallory", codec.Event{Version: 2, Ref: "imp-A", TS: t0 + 2, HasTS: true, Y: -1, HasY: true}),          // feedback_key_mismatch
		msg("mallory", codec.Event{Version: 2, ID: "imp-A", TS: t0 + 3, HasTS: true, X: []float64{9, 9, 9, 9, 9}}), // not remembered
		msg("alice", codec.Event{Version: 2, Ref: "imp-A", TS: t0 + 4, HasTS: true, Y: 1, HasY: true}),             // resolves imp-A
		msg("bob", codec.Event{Version: 2, Ref: "imp-B", TS: t0 + 5, HasTS: true, Y: -1, HasY: true}),              // resolves imp-B
	)
	msgs = append(msgs, genEvents(50, 6, "b")...)
	e.Produce(t, input, msgs...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.FeedbackBuffer = 100
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "the partition to flow past the hostile events", func() bool { return caughtUp(ends, r) })
	body := scrape(t, r.p)
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	want := []string{"value_out_of_range", "value_out_of_range", "value_out_of_range", "id_too_long", reasonFeedbackKeyMismatch}
	if got := deadLetterReasons(t, e, cfg.DeadLetter); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("dead letters %v, want %v", got, want)
	}
	preds := predictionsByOffset(t, e, cfg.Output)
	if n := len(preds); n != len(msgs)-len(want) {
		t.Fatalf("%d predictions, want %d", n, len(msgs)-len(want))
	}
	var impA []byte
	outcomes := map[string]codec.Prediction{}
	for _, raw := range preds {
		pr, _ := codec.DecodePrediction(raw)
		if pr.HasRef {
			outcomes[pr.Ref] = pr
		}
		if pr.ID == "imp-A" && !pr.HasRef && pr.Key == "alice" {
			impA = raw
		}
	}
	a, b := outcomes["imp-A"], outcomes["imp-B"]
	if len(outcomes) != 2 || a.Key != "alice" || a.RefOffset != 50 || b.RefOffset != 51 {
		t.Fatalf("outcome records %+v", outcomes)
	}
	pa, _ := codec.DecodePrediction(impA)
	for i := range pa.Models {
		if !sameScore(a.Models[i].Score, pa.Models[i].Score) {
			t.Fatalf("the outcome of imp-A carries score %v, the impression was scored %v", a.Models[i].Score, pa.Models[i].Score)
		}
	}
	for _, line := range []string{
		`okstream_feedback_evictions_total{reason="age"} 0`,
		`okstream_feedback_impressions_refused_total{reason="duplicate_id"} 1`,
		`okstream_feedback_events_total{result="key_mismatch"} 1`,
		`okstream_dead_letters_total{reason="value_out_of_range"} 3`,
	} {
		if !strings.Contains(body, line) {
			t.Errorf("metrics lack %s:\n%s", line, grep(body, "feedback"))
		}
	}
}

// With the value limit off, a regression label of 1e308 and features of
// ±1e308 reach the models. The guard resets the poisoned models; the
// pipeline, killed in the middle and restarted, publishes the same scores
// and checkpoints the same final states as the uninterrupted offline run of
// the same guard (guardRun) — also when a checkpoint falls right after the
// poisoning label, so that the backstop resets the model there.
func TestNonFiniteGuardThroughPipeline(t *testing.T) {
	const n, yAt, xAt = 400, 99, 250
	models := guardCases[0].models
	xs, ys, labelled := poisonStream(n, yAt, xAt, true)
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	msgs := make([]kafka.Message, n)
	for i := range xs {
		x := append([]float64{}, xs[i]...)
		msgs[i] = kafka.Message{Key: []byte("k"), Value: mustEvent(t, codec.Event{Version: 1, X: x, Y: ys[i], HasY: labelled[i]})}
	}
	// The first run sees offsets 0..104 and is killed: its last checkpoint
	// is at most 5 events before the end (every 10 events), typically right
	// after the label at offset 99 (batches of 10). The second run restores
	// it and processes the rest, the features of ±1e308 included.
	e.Produce(t, input, msgs[:yAt+6]...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.Models, cfg.Dim, cfg.MaxAbsValue = models, 4, -1
	cfg.BatchSize, cfg.CheckpointEvery = 10, 10
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "the first run", func() bool { return caughtUp(ends, r) })
	body := scrape(t, r.p)
	r.kill(t)
	if !strings.Contains(body, `okstream_model_resets_total{model="fogd",reason="non_finite`) {
		t.Errorf("no reset metric:\n%s", grep(body, "resets"))
	}
	t.Logf("first run:\n%s", grep(body, "model_resets_total{"))
	e.Produce(t, input, msgs[yAt+6:]...)
	ends = endOffsets(t, e, input)
	r = start(t, cfg)
	waitFor(t, 60*time.Second, "the final run", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if d := deadLetterReasons(t, e, cfg.DeadLetter); len(d) != 0 {
		t.Fatalf("dead letters %v with the value limit off", d)
	}
	wantScores, wantPayload, _ := guardRun(t, models, xs, ys, labelled, nil)
	want, _ := DescribePayload(wantPayload)
	for k, raw := range predictionsByOffset(t, e, cfg.Output) {
		pr, _ := codec.DecodePrediction(raw)
		for i, m := range pr.Models {
			if !sameScore(m.Score, wantScores[k[1]][i].Score) {
				t.Fatalf("offset %d model %s: published %v, offline %v", k[1], m.Name, m.Score, wantScores[k[1]][i].Score)
			}
		}
	}
	states, _ := checkpointStates(t, e, cfg, 1)
	stats := checkpointStats(t, e, cfg, 1)
	for i, m := range want.Models {
		if !bytes.Equal(states[0][i], m.State) {
			t.Fatalf("model %s: checkpointed state differs from the uninterrupted run", m.Name)
		}
		if stats[m.Name].Resets != m.Stats.Resets || m.Stats.Resets == 0 {
			t.Fatalf("model %s: %d resets checkpointed, uninterrupted %d", m.Name, stats[m.Name].Resets, m.Stats.Resets)
		}
	}
}
