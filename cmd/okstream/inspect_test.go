package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
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
