package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/internal/kafkatest"
)

// inspect checkpoints reports damaged, forged and over-limit checkpoints
// slot by slot (exit 0) instead of failing or crashing.
func TestInspectReportsBadCheckpoints(t *testing.T) {
	e := kafkatest.New(t)
	topic := e.Name("ckpt")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := checkpoint.Open(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: topic, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ok := checkpoint.ID{Group: "g", Topic: "in", Partition: 0}
	if _, err := s.Save(ctx, checkpoint.Checkpoint{ID: ok, Epoch: checkpoint.Epoch{Generation: 1, Seq: 1}, NextOffset: 5, Payload: make([]byte, 5000)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(ctx, checkpoint.Checkpoint{ID: ok, Epoch: checkpoint.Epoch{Generation: 1, Seq: 2}, NextOffset: 6, Payload: make([]byte, 100)}); err != nil {
		t.Fatal(err)
	}
	// Partition 1 of "in": garbage manifests in both slots and chunk records
	// far beyond any chunk count.
	msgs := []kafka.Message{
		{Key: []byte("okstream/v1/g/in/1/A/m"), Value: []byte("OKCM\x00\x01forged")},
		{Key: []byte("okstream/v1/g/in/1/B/m"), Value: []byte("not even the magic")},
	}
	for i := 0; i < 20; i++ {
		msgs = append(msgs, kafka.Message{Key: []byte("okstream/v1/g/in/1/A/c99999" + string(rune('0'+i%10))), Value: make([]byte, 64)})
	}
	e.Produce(t, topic, msgs...)

	var out, errb bytes.Buffer
	if code := runInspect([]string{"checkpoints", "--brokers", strings.Join(e.Brokers, ","), "--topic", topic, "--max-state-bytes", "1000"}, &out, &errb); code != 0 {
		t.Fatalf("inspect exited %d: %s", code, errb.String())
	}
	s1 := out.String()
	for _, want := range []string{
		"slot B: REJECTED (too_large) epoch 1.1: manifest declares 5000 payload bytes, the limit (MaxStateBytes) is 1000",
		"slot A: epoch 1.2, next offset 6, 100 bytes",
		"slot A: REJECTED (malformed)", "slot B: REJECTED (malformed)",
		"20 chunk records dropped",
		"NO COMPLETE CHECKPOINT",
	} {
		if !strings.Contains(s1, want) {
			t.Fatalf("inspect output lacks %q:\n%s", want, s1)
		}
	}
}

// inspect events reports what run would dead-letter, the label check of
// classification models included, and run's value limit (--max-abs-value),
// and each partition's task and classes; inspect predictions shows the MSE of
// regression models only.
func TestInspectEventsAndPredictions(t *testing.T) {
	e := kafkatest.New(t)
	brokers := strings.Join(e.Brokers, ",")
	events := e.Name("ev")
	var msgs []kafka.Message
	for _, y := range []float64{1, -1, 2, 0.5} {
		v, err := codec.AppendEvent(nil, &codec.Event{Version: 1, X: []float64{1, 2}, Y: y, HasY: true})
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, kafka.Message{Value: v})
	}
	// Beyond run's default --max-abs-value (1e9): dead-lettered unless off.
	big, err := codec.AppendEvent(nil, &codec.Event{Version: 1, X: []float64{3e9, 2}})
	if err != nil {
		t.Fatal(err)
	}
	msgs = append(msgs, kafka.Message{Value: []byte("junk")}, kafka.Message{Value: big})
	e.CreateTopic(t, events, 1, nil)
	e.Produce(t, events, msgs...)
	for _, c := range []struct {
		task, want, labels string
		more               []string
	}{
		{"classification", "6 events, 4 would be dead-lettered; invalid_label: 2; not_a_map: 1; value_out_of_range: 1", "labels (--task binary, mapped per partition as okstream run maps them):\n  partition 0: binary, numbers -1 and +1\n", nil},
		{"regression", "6 events, 2 would be dead-lettered; not_a_map: 1; value_out_of_range: 1", "labels (--task regression, mapped per partition as okstream run maps them):\n  partition 0: regression, numbers\n", nil},
		{"regression", "6 events, 1 would be dead-lettered; not_a_map: 1\n", "partition 0: regression, numbers\n", []string{"--max-abs-value", "0"}},
		// The default, as okstream run without --model: the label 2 decides.
		{"", "6 events, 2 would be dead-lettered; not_a_map: 1; value_out_of_range: 1", "labels (--task auto, mapped per partition as okstream run maps them):\n  partition 0: regression, numbers\n", nil},
	} {
		args := append([]string{"events", "--brokers", brokers, "--topic", events, "--dim", "2"}, c.more...)
		if c.task != "" {
			args = append(args, "--task", c.task)
		}
		var out, errb bytes.Buffer
		if code := runInspect(args, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		if !strings.Contains(out.String(), c.want) || !strings.Contains(out.String(), c.labels) {
			t.Errorf("--task %s: output lacks %q or %q:\n%s", c.task, c.want, c.labels, out.String())
		}
		if c.task == "classification" && !strings.Contains(out.String(), "BAD (invalid_label): label 2: binary models learn from labels -1/+1, 0/1, true/false or two strings") {
			t.Errorf("no invalid_label line:\n%s", out.String())
		}
	}

	preds := e.Name("pred")
	var pm []kafka.Message
	for i, y := range []float64{1, -1} {
		p := codec.Prediction{Topic: events, Offset: int64(i), Y: y, HasY: true, Models: []codec.ModelScore{
			{Name: "clf", Score: 40 * y, Classify: true, Decision: codec.Decision(40 * y)},
			{Name: "reg", Score: y + 0.5},
		}}
		if i == 0 { // version 3: a class and the classifier's probability; the other record is version 1
			p.Version, p.Class = codec.PredictionVersionProb, "yes"
			p.Models[0].Prob, p.Models[0].HasProb = 0.75, true
		}
		pm = append(pm, kafka.Message{Value: codec.AppendPrediction(nil, &p)})
	}
	e.CreateTopic(t, preds, 1, nil)
	e.Produce(t, preds, pm...)
	var out, errb bytes.Buffer
	if code := runInspect([]string{"predictions", "--brokers", brokers, "--topic", preds, "--limit", "0"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	if !regexp.MustCompile(`clf\s+2\s+0\.000% \(0\)\s+-\n`).MatchString(s) || !regexp.MustCompile(`reg\s+2\s+-\s+0\.25\n`).MatchString(s) {
		t.Errorf("model table:\n%s", s)
	}
	// The records: the class and the probability of the version 3 record,
	// "-" and none for the version 1 record.
	out.Reset()
	if code := runInspect([]string{"predictions", "--brokers", brokers, "--topic", preds, "--limit", "2"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s = out.String()
	if !regexp.MustCompile(`\s1\s+"yes"\s+clf: 40 \+1 p=0\.7500 u=0; reg: 1\.5 u=0\n`).MatchString(s) ||
		!regexp.MustCompile(`\s-1\s+-\s+clf: -40 -1 u=0; reg: -0\.5 u=0\n`).MatchString(s) || !strings.Contains(s, "\tclass\t") && !strings.Contains(s, " class ") {
		t.Errorf("records:\n%s", s)
	}
}
