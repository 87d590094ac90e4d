package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/consumer"
	"okstream/internal/kafkatest"
	"okstream/internal/kafkautil"
)

// okstream checkpoints reset: with --to-offset the partition's only
// checkpoint is a fresh one at that offset (models restored fresh); without
// it a fresh one at --start-offset (earliest by default, or latest); the
// other partitions are untouched.
func TestCheckpointsReset(t *testing.T) {
	e := kafkatest.New(t)
	topic := e.Name("ckpt")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	input := e.Name("in")
	e.CreateTopic(t, input, 2, nil)
	var msgs []kafka.Message
	for i := 0; i < 200; i++ {
		msgs = append(msgs, kafka.Message{Key: []byte(fmt.Sprint(i)), Value: []byte("x")})
	}
	e.Produce(t, input, msgs...)
	_, end1, err := kafkautil.Offsets(ctx, e.Client, input, 1)
	if err != nil || end1 < 42 {
		t.Fatalf("partition 1 of the input ends at %d (%v)", end1, err)
	}
	s, err := checkpoint.Open(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: topic, Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := func(p int) checkpoint.ID { return checkpoint.ID{Group: "g", Topic: input, Partition: p} }
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
		if code := runCheckpoints(append([]string{"reset", "--brokers", brokers, "--checkpoint-topic", topic, "--group", "g", "--input", input}, args...), &out, &errb); code != 0 {
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
	if cp, _, err := s.Load(ctx, id(1)); err != nil || cp == nil || cp.NextOffset != 0 {
		t.Fatalf("after reset: %+v, %v; want a fresh checkpoint at the earliest offset, 0", cp, err)
	}
	reset("--partition", "1", "--start-offset", "latest")
	if cp, _, err := s.Load(ctx, id(1)); err != nil || cp == nil || cp.NextOffset != end1 {
		t.Fatalf("after reset --start-offset latest: %+v, %v; want a fresh checkpoint at %d", cp, err, end1)
	}
	if cp, _, err := s.Load(ctx, id(0)); err != nil || cp == nil || cp.NextOffset != 200 {
		t.Fatalf("partition 0 touched by the reset of partition 1: %+v, %v", cp, err)
	}
	var out, errb bytes.Buffer
	if code := runCheckpoints([]string{"reset", "--brokers", brokers, "--input", input}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--partition") {
		t.Fatalf("reset without --partition: exit %d %q", code, errb.String())
	}
}

// okstream checkpoints reset refuses, before touching the checkpoint topic,
// an input topic or partition that does not exist and an offset that is
// negative or outside the partition's log, saying how to fix it
// (issue 37: it used to accept them all).
func TestCheckpointsResetRefusesBadTargets(t *testing.T) {
	e := kafkatest.New(t)
	topic := e.Name("ckpt")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := checkpoint.Open(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: topic, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	input := e.Name("in")
	e.CreateTopic(t, input, 2, nil)
	var msgs []kafka.Message
	for i := 0; i < 20; i++ {
		msgs = append(msgs, kafka.Message{Key: []byte(fmt.Sprint(i)), Value: []byte("x")})
	}
	e.Produce(t, input, msgs...)
	_, end0, err := kafkautil.Offsets(ctx, e.Client, input, 0)
	if err != nil {
		t.Fatal(err)
	}
	brokers := strings.Join(e.Brokers, ",")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--input", e.Name("nosuch"), "--partition", "0"}, "check --input"},
		{[]string{"--input", input, "--partition", "2"}, "has 2 partitions (0..1)"},
		{[]string{"--input", input, "--partition", "0", "--to-offset", "-1"}, "an offset is 0 or more"},
		{[]string{"--input", input, "--partition", "0", "--to-offset", "-42"}, "an offset is 0 or more"},
		{[]string{"--input", input, "--partition", "0", "--to-offset", fmt.Sprint(end0 + 1)}, fmt.Sprintf("use --to-offset %d or less", end0)},
		{[]string{"--input", input, "--partition", "0", "--start-offset", "middle"}, "use earliest or latest"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"reset", "--brokers", brokers, "--checkpoint-topic", topic, "--group", "g"}, tc.args...)
		if code := runCheckpoints(args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("checkpoints %v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errb.String(), tc.want)
		}
		if out.Len() > 0 {
			t.Errorf("checkpoints %v: printed %q", tc.args, out.String())
		}
	}
	for p := 0; p < 2; p++ {
		if cp, _, err := s.Load(ctx, checkpoint.ID{Group: "g", Topic: input, Partition: p}); err != nil || cp != nil {
			t.Fatalf("a refused reset wrote a checkpoint of partition %d: %+v, %v", p, cp, err)
		}
	}
}
