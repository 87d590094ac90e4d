package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"okstream/checkpoint"
	"okstream/consumer"
	"okstream/internal/kafkatest"
)

// okstream checkpoints reset: with --to-offset the partition's only
// checkpoint is a fresh one at that offset (models restored fresh); without
// it the partition has no checkpoint; the other partitions are untouched.
func TestCheckpointsReset(t *testing.T) {
	e := kafkatest.New(t)
	topic := e.Name("ckpt")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := checkpoint.Open(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: topic, Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := func(p int) checkpoint.ID { return checkpoint.ID{Group: "g", Topic: "in", Partition: p} }
	for p := 0; p < 2; p++ {
		for seq := uint64(1); seq <= 2; seq++ {
			if _, err := s.Save(ctx, checkpoint.Checkpoint{ID: id(p), Epoch: checkpoint.Epoch{Generation: 3, Seq: seq}, NextOffset: 100 * int64(seq), Payload: bytes.Repeat([]byte{byte(p)}, 1000)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	brokers := strings.Join(e.Brokers, ",")
	reset := func(args ...string) string {
		var out, errb bytes.Buffer
		if code := runCheckpoints(append([]string{"reset", "--brokers", brokers, "--checkpoint-topic", topic, "--group", "g", "--input", "in"}, args...), &out, &errb); code != 0 {
			t.Fatalf("checkpoints reset %v: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	if out := reset("--partition", "1", "--to-offset", "42"); !strings.Contains(out, "resumes at offset 42") {
		t.Fatalf("output %q", out)
	}
	cp, _, err := s.Load(ctx, id(1))
	if err != nil || cp == nil || cp.NextOffset != 42 {
		t.Fatalf("after reset --to-offset 42: %+v, %v", cp, err)
	}
	if pl, err := consumer.DescribePayload(cp.Payload); err != nil || len(pl.Models) != 0 || pl.Dim != 0 {
		t.Fatalf("reset payload %+v, %v", pl, err)
	}
	if cps, _, _ := s.LoadAll(ctx, id(1)); len(cps) != 1 {
		t.Fatalf("%d checkpoints after the reset, want 1", len(cps))
	}
	reset("--partition", "1")
	if cp, _, err := s.Load(ctx, id(1)); err != nil || cp != nil {
		t.Fatalf("after reset: %+v, %v; want no checkpoint", cp, err)
	}
	if cp, _, err := s.Load(ctx, id(0)); err != nil || cp == nil || cp.NextOffset != 200 {
		t.Fatalf("partition 0 touched by the reset of partition 1: %+v, %v", cp, err)
	}
	var out, errb bytes.Buffer
	if code := runCheckpoints([]string{"reset", "--brokers", brokers, "--input", "in"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--partition") {
		t.Fatalf("reset without --partition: exit %d %q", code, errb.String())
	}
}
