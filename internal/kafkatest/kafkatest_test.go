package kafkatest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// The broker round trip the other packages' tests rely on: create, produce,
// read back everything, and a consumer group reading with commits.
func TestBrokerRoundTrip(t *testing.T) {
	e := New(t)
	topic := e.Name("rt")
	e.CreateTopic(t, topic, 3, nil)
	var msgs []kafka.Message
	for i := 0; i < 300; i++ {
		msgs = append(msgs, kafka.Message{Key: []byte(fmt.Sprint(i % 17)), Value: []byte(fmt.Sprint(i))})
	}
	e.Produce(t, topic, msgs...)
	recs := e.ReadAll(t, topic)
	if len(recs) != 300 {
		t.Fatalf("read %d records, want 300", len(recs))
	}
	seen := map[string]bool{}
	for _, r := range recs {
		seen[string(r.Value)] = true
	}
	if len(seen) != 300 {
		t.Fatalf("%d distinct values", len(seen))
	}

	group := e.Name("g")
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID: group, Brokers: e.Brokers, Topics: []string{topic},
		HeartbeatInterval: 200 * time.Millisecond, SessionTimeout: 6 * time.Second, RebalanceTimeout: 5 * time.Second,
		JoinGroupBackoff: 200 * time.Millisecond, StartOffset: kafka.FirstOffset,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gen, err := cg.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(gen.Assignments[topic]); n != 3 {
		t.Fatalf("assigned %d partitions, want 3", n)
	}
	offsets := map[int]int64{}
	for _, r := range recs {
		offsets[r.Partition] = r.Offset + 1
	}
	if err := gen.CommitOffsets(map[string]map[int]int64{topic: offsets}); err != nil {
		t.Fatalf("commit: %v", err)
	}
	resp, err := e.Client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.Topics[topic] {
		if p.CommittedOffset != offsets[p.Partition] {
			t.Fatalf("partition %d committed %d, want %d", p.Partition, p.CommittedOffset, offsets[p.Partition])
		}
	}
}

// The failure log keeps the last logTail lines in order, across writes
// that hold several lines or end mid-line.
func TestTailLogKeepsTheLastLines(t *testing.T) {
	var l tailLog
	for i := 0; i < logTail+100; i += 2 {
		fmt.Fprintf(&l, "line %d\nline %d\n", i, i+1)
	}
	got := strings.Split(strings.TrimSuffix(l.String(), "\n"), "\n")
	if len(got) != logTail || l.lines() != logTail {
		t.Fatalf("%d lines kept (lines() %d), want %d", len(got), l.lines(), logTail)
	}
	for i, line := range got {
		if want := fmt.Sprintf("line %d", 100+i); line != want {
			t.Fatalf("line %d is %q, want %q", i, line, want)
		}
	}
}
