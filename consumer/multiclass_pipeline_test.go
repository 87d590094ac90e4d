package consumer

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/internal/kafkatest"
	"okstream/label"
	"okstream/learner/rng"
)

// multiMessages is the three-class stream as Kafka messages (ids m<i>,
// keys spreading them over partitions; every 7th unlabelled), with each
// event's class.
func multiMessages(n int, seed uint64) ([]kafka.Message, map[string]int) {
	src := rng.New(seed)
	msgs := make([]kafka.Message, n)
	truth := map[string]int{}
	for i := range msgs {
		ev, c := multiEvent(src, i, fmt.Sprintf("m%d", i))
		ev.Key = fmt.Sprintf("user-%d", src.IntN(50))
		ev.HasY = i%7 != 3
		if !ev.HasY {
			ev.YKind, ev.YStr = codec.LabelNumber, ""
		}
		truth[ev.ID] = c
		b, err := codec.AppendEvent(nil, &ev)
		if err != nil {
			panic(err)
		}
		msgs[i] = kafka.Message{Key: []byte(ev.Key), Value: b}
	}
	return msgs, truth
}

// multiCheckpoints is each partition's newest checkpoint payload.
func multiCheckpoints(t *testing.T, e *kafkatest.Env, cfg Config, parts int) map[int][]byte {
	out, _ := checkpointNext(t, e, cfg, parts)
	return out
}

// checkpointNext is each partition's newest checkpoint payload and next
// offset.
func checkpointNext(t *testing.T, e *kafkatest.Env, cfg Config, parts int) (map[int][]byte, map[int]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := checkpoint.Open(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: cfg.Checkpoints})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, next := map[int][]byte{}, map[int]int64{}
	for p := 0; p < parts; p++ {
		cp, _, err := s.Load(ctx, checkpoint.ID{Group: cfg.Group, Topic: cfg.Input, Partition: p})
		if err != nil || cp == nil {
			t.Fatalf("partition %d: no checkpoint (%v)", p, err)
		}
		out[p], next[p] = cp.Payload, cp.NextOffset
	}
	return out, next
}

// okstream run with no task and the default (Flexible) model on a stream of
// three string classes, through the embedded broker: each partition decides
// multi-class, nothing is dead-lettered, the records carry the class and
// the distribution (version 4), the accuracy is far above the class prior;
// and a run killed mid-stream (no final checkpoint: it resumes from an
// earlier one and reprocesses) publishes byte-identical records and ends in
// byte-identical checkpointed states.
func TestMultiClassPipeline(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	const n = 1400
	msgs, truth := multiMessages(n, 11)
	e.Produce(t, input, msgs[:700]...)

	// Uninterrupted reference: one run over both halves.
	ref := testConfig(e, input, e.Name("g-ref"), e.Name("preds-ref"))
	ref.Models = []Model{flexModel}
	ref.CheckpointEvery = 250
	killed := testConfig(e, input, e.Name("g-kill"), e.Name("preds-kill"))
	killed.Models = []Model{flexModel}
	killed.CheckpointEvery = 250

	a := start(t, ref)
	b := start(t, killed)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "the first half", func() bool { return caughtUp(ends, a) && caughtUp(ends, b) })
	b.kill(t) // no final checkpoint: b resumes from one before 700 and reprocesses
	if _, next := checkpointNext(t, e, killed, 2); next[0]+next[1] >= 700 {
		t.Fatalf("checkpoints at %v after the kill: nothing to reprocess", next)
	}
	e.Produce(t, input, msgs[700:]...)
	b = start(t, killed)
	ends = endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "the second half", func() bool { return caughtUp(ends, a) && caughtUp(ends, b) })
	for _, r := range []*running{a, b} {
		if err := r.shutdown(t); err != nil {
			t.Fatal(err)
		}
	}
	if s := counterValue(b.p.dm.suppressed.WithLabelValues("restore")); s == 0 {
		t.Fatal("the restarted run reprocessed nothing: the kill did not fall between checkpoints")
	}
	if d := deadLetters(t, e, ref.Output+".dlq"); len(d) > 0 {
		t.Fatalf("%d dead letters, first %s", len(d), d[0])
	}

	pa := predictionsByOffset(t, e, ref.Output)
	pb := predictionsByOffset(t, e, killed.Output)
	if len(pa) != n || len(pb) != n {
		t.Fatalf("%d and %d records, want %d", len(pa), len(pb), n)
	}
	right, labelled, v4 := 0, 0, 0
	counts := [3]int{}
	for k, rec := range pa {
		if !bytes.Equal(rec, pb[k]) {
			t.Fatalf("record %v of the killed run differs from the uninterrupted run's", k)
		}
		p, _ := codec.DecodePrediction(rec)
		if p.Version == codec.PredictionVersionMulti {
			v4++
			if s := p.Models[0]; !s.Multi || s.Class != p.Class || len(s.Dist) == 0 {
				t.Fatalf("version 4 record %+v", p)
			}
		}
		if p.HasY {
			labelled++
			c := truth[p.ID]
			counts[c]++
			if p.Class == multiNames[c] {
				right++
			}
		}
	}
	major := float64(max(counts[0], counts[1], counts[2])) / float64(labelled)
	acc := float64(right) / float64(labelled)
	t.Logf("prequential accuracy %.4f over %d labels, class prior (majority rate) %.4f; %d version 4 records", acc, labelled, major, v4)
	if acc < major+0.3 || v4 < n-20 {
		t.Fatalf("accuracy %.4f, majority %.4f, %d version 4 records", acc, major, v4)
	}

	ca, cb := multiCheckpoints(t, e, ref, 2), multiCheckpoints(t, e, killed, 2)
	for p := 0; p < 2; p++ {
		pl, err := DescribePayload(ca[p])
		if err != nil || pl.Labels == nil || pl.Labels.Task != label.MultiClass || !pl.Models[0].Multi {
			t.Fatalf("partition %d: checkpoint %+v, %v", p, pl, err)
		}
		plb, err := DescribePayload(cb[p])
		if err != nil || !bytes.Equal(pl.Models[0].State, plb.Models[0].State) || pl.Models[0].Stats != plb.Models[0].Stats {
			t.Fatalf("partition %d: the killed run's final state differs (%v)", p, err)
		}
	}
}

// With the task given (Config.Task "multiclass", integer class ids), a
// class beyond the dictionary's cap (label.DefaultMaxClasses) is
// dead-lettered with reason invalid_label and a detail naming
// --max-classes; every other event is predicted.
func TestMultiClassPipelineCap(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	const n = label.DefaultMaxClasses + 10
	src := rng.New(4)
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		ev, _ := multiEvent(src, i, fmt.Sprintf("c%d", i))
		ev.YKind, ev.YStr, ev.Y = codec.LabelNumber, "", float64(i) // a new integer class id every event
		b, err := codec.AppendEvent(nil, &ev)
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = kafka.Message{Value: b}
	}
	e.Produce(t, input, msgs...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.Models = []Model{flexModel}
	cfg.Task = "multiclass"
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "processing", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	dl := deadLetters(t, e, cfg.Output+".dlq")
	if len(dl) != n-label.DefaultMaxClasses {
		t.Fatalf("%d dead letters, want %d", len(dl), n-label.DefaultMaxClasses)
	}
	for _, d := range dl {
		if !strings.HasPrefix(d, ReasonInvalidLabel+": ") || !strings.Contains(d, "--max-classes") {
			t.Fatalf("dead letter %q", d)
		}
	}
	preds := predictionsByOffset(t, e, cfg.Output)
	if len(preds) != label.DefaultMaxClasses {
		t.Fatalf("%d predictions", len(preds))
	}
	p, _ := codec.DecodePrediction(preds[[2]int64{0, 100}])
	if p.Version != codec.PredictionVersionMulti || p.Y != 100 {
		t.Fatalf("record 100: %+v", p)
	}
}
