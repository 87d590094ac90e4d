package consumer

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/segmentio/kafka-go"

	"okstream/internal/kafkatest"
)

// TestRecordWriterPartitionsAndOrder: with the key-hash balancer every
// record lands in the partition kafka-go's Writer would have chosen
// (Murmur2 over the topic's partitions), in the order given within each
// partition, with its key, value and headers; with no balancer in the
// partition set on it. Records with no time get the call's.
func TestRecordWriterPartitionsAndOrder(t *testing.T) {
	e := kafkatest.New(t)
	ctx := context.Background()
	for _, hashed := range []bool{true, false} {
		topic := e.Name(fmt.Sprintf("rw-%v", hashed))
		e.CreateTopic(t, topic, 5, nil)
		var bal kafka.Balancer
		if hashed {
			bal = &kafka.Murmur2Balancer{}
		}
		rw := newRecordWriter(e.Client, topic, 1<<20, bal)
		const n = 300
		msgs := make([]kafka.Message, n)
		want := map[int][]string{}
		for i := range msgs {
			key := fmt.Sprintf("k%d", i%37)
			msgs[i] = kafka.Message{Key: []byte(key), Value: []byte(fmt.Sprintf("v%d", i)),
				Headers: []kafka.Header{{Key: "h", Value: []byte(key)}}}
			p := i % 3 // no balancer: the record's own partition
			if hashed {
				p = (&kafka.Murmur2Balancer{}).Balance(msgs[i], 0, 1, 2, 3, 4)
			} else {
				msgs[i].Partition = p
			}
			want[p] = append(want[p], string(msgs[i].Value))
		}
		// Two calls: the second reuses the first's scratch memory.
		if err := rw.WriteMessages(ctx, msgs[:n/2]...); err != nil {
			t.Fatal(err)
		}
		if err := rw.WriteMessages(ctx, msgs[n/2:]...); err != nil {
			t.Fatal(err)
		}
		got := map[int][]string{}
		for _, r := range e.ReadAll(t, topic) {
			if len(r.Headers) != 1 || string(r.Headers[0].Value) != string(r.Key) {
				t.Fatalf("record %s/%d@%d: headers %v, key %q", topic, r.Partition, r.Offset, r.Headers, r.Key)
			}
			if r.Time.IsZero() {
				t.Fatalf("record %s/%d@%d has no time", topic, r.Partition, r.Offset)
			}
			got[r.Partition] = append(got[r.Partition], string(r.Value))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("hashed=%v: partitions and order\n got %v\nwant %v", hashed, got, want)
		}
	}
}

// TestRecordWriterErrors: a record over the limit fails the call before
// anything is sent, naming it (kafka.MessageTooLargeError); a batch the
// broker refuses (over the topic's max.message.bytes) fails with one
// refused error per record of that partition's batch and none for the
// records of another partition, which are written.
func TestRecordWriterErrors(t *testing.T) {
	e := kafkatest.New(t)
	ctx := context.Background()
	topic := e.Name("rw-err")
	e.CreateTopic(t, topic, 2, map[string]string{"max.message.bytes": "2000"})
	rw := newRecordWriter(e.Client, topic, 1<<20, nil)

	rw.limit = 500
	big := kafka.Message{Value: make([]byte, 600)}
	err := rw.WriteMessages(ctx, kafka.Message{Value: []byte("a")}, big)
	var tooLarge kafka.MessageTooLargeError
	if !errors.As(err, &tooLarge) || len(tooLarge.Message.Value) != 600 {
		t.Fatalf("a record over the limit: %v, want a MessageTooLargeError naming it", err)
	}
	rw.limit = 1 << 20

	msgs := []kafka.Message{
		{Partition: 0, Value: []byte("ok-0")},
		{Partition: 1, Value: make([]byte, 5000)}, // over max.message.bytes
		{Partition: 0, Value: []byte("ok-1")},
		{Partition: 1, Value: []byte("refused with its batch")},
	}
	err = rw.WriteMessages(ctx, msgs...)
	var we kafka.WriteErrors
	if !errors.As(err, &we) || len(we) != len(msgs) {
		t.Fatalf("got %v, want kafka.WriteErrors with %d entries", err, len(msgs))
	}
	if we[0] != nil || we[2] != nil {
		t.Errorf("partition 0's records: errors %v, %v; want none", we[0], we[2])
	}
	if !refused(we[1]) {
		t.Errorf("the oversized record's error %v is not a refusal", we[1])
	}
	if we[3] == nil {
		t.Errorf("the record batched with the oversized one: no error")
	}
	var vals []string
	for _, r := range e.ReadAll(t, topic) {
		vals = append(vals, fmt.Sprintf("%d:%s", r.Partition, r.Value))
	}
	if fmt.Sprint(vals) != "[0:ok-0 0:ok-1]" {
		t.Errorf("topic holds %v, want [0:ok-0 0:ok-1]", vals)
	}
	// writeSorted then retries the refused batch's records one by one: the
	// small one is written, the oversized one refused for good.
	left, bad, err := writeSorted(ctx, rw, []kafka.Message{msgs[1], msgs[3]})
	if err != nil || len(left) != 0 || len(bad) != 1 || len(bad[0].msg.Value) != 5000 {
		t.Fatalf("writeSorted: left %d, bad %d, err %v; want the oversized record refused, the other written", len(left), len(bad), err)
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rw.WriteMessages(ctx, msgs[0]); err == nil {
		t.Errorf("a write after Close succeeded")
	}
}
