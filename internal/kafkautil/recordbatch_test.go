package kafkautil

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
)

// TestAppendRecordBatchMatchesKafkaGo: AppendRecordBatch writes, byte for
// byte, what kafka-go's own encoder (protocol.RecordSet.WriteTo, magic 2, no
// compression) writes for the same records: null and empty keys and values,
// headers (a null header value among them), given and zero times, one record
// and many, and a value long enough for multi-byte varints.
func TestAppendRecordBatchMatchesKafkaGo(t *testing.T) {
	now := time.UnixMilli(1_764_000_000_123)
	cases := map[string][]kafka.Message{
		"one":   {{Key: []byte("k"), Value: []byte("v")}},
		"nulls": {{}, {Key: []byte{}, Value: []byte{}}, {Value: []byte("x")}},
		"headers": {{Key: []byte("k1"), Value: []byte("v1"), Headers: []kafka.Header{{Key: "a", Value: []byte("1")}, {Key: "b", Value: nil}, {Key: "", Value: []byte{}}}},
			{Key: []byte("k2"), Value: []byte("v2"), Time: now.Add(-5 * time.Second)}},
		"times": {{Value: []byte("late"), Time: now.Add(time.Hour)}, {Value: []byte("early"), Time: now.Add(-time.Hour)}, {Value: []byte("now")}},
	}
	var many []kafka.Message
	for i := 0; i < 300; i++ {
		many = append(many, kafka.Message{Key: []byte(fmt.Sprint(i)), Value: bytes.Repeat([]byte{byte(i)}, i*7)})
	}
	cases["many"] = many
	shared := []kafka.Header{{Key: "okstream-group", Value: []byte("g")}, {Key: "okstream-unit", Value: []byte("42")}}
	other := []kafka.Header{{Key: "okstream-group", Value: []byte("g")}, {Key: "okstream-unit", Value: []byte("43")}}
	cases["shared headers"] = []kafka.Message{{Value: []byte("a"), Headers: shared}, {Value: []byte("b"), Headers: shared},
		{Value: []byte("c"), Headers: other}, {Value: []byte("d"), Headers: shared[:1]}, {Value: []byte("e")}, {Value: []byte("f"), Headers: shared}}
	for name, msgs := range cases {
		recs := make([]kafka.Record, len(msgs))
		for i, m := range msgs {
			recs[i] = kafka.Record{Time: m.Time, Headers: m.Headers}
			if m.Time.IsZero() {
				recs[i].Time = now // kafka-go stamps its own clock: give it ours
			}
			if m.Key != nil {
				recs[i].Key = kafka.NewBytes(m.Key)
			}
			if m.Value != nil {
				recs[i].Value = kafka.NewBytes(m.Value)
			}
		}
		var want bytes.Buffer
		rs := protocol.RecordSet{Version: 2, Records: kafka.NewRecordReader(recs...)}
		if _, err := rs.WriteTo(&want); err != nil {
			t.Fatal(err)
		}
		prefix := []byte("prefix")
		got := AppendRecordBatch(prefix, msgs, now)
		if !bytes.Equal(got[:len(prefix)], []byte("prefix")) {
			t.Fatalf("%s: the prefix was overwritten", name)
		}
		if !bytes.Equal(got[len(prefix):], want.Bytes()) {
			t.Errorf("%s: %d bytes differ from kafka-go's %d:\n got %x\nwant %x", name, len(got)-len(prefix), want.Len(), got[len(prefix):], want.Bytes())
		}
	}
}

// BenchmarkAppendRecordBatch compares AppendRecordBatch with kafka-go's
// encoder on 1,000 prediction-sized records (two headers each).
func BenchmarkAppendRecordBatch(b *testing.B) {
	msgs := make([]kafka.Message, 1000)
	hdrs := []kafka.Header{{Key: "okstream-group", Value: []byte("g")}, {Key: "okstream-unit", Value: []byte("123456")}}
	for i := range msgs {
		msgs[i] = kafka.Message{Value: bytes.Repeat([]byte{'p'}, 120), Headers: hdrs}
	}
	now := time.Now()
	b.Run("okstream", func(b *testing.B) {
		var buf []byte
		for i := 0; i < b.N; i++ {
			buf = AppendRecordBatch(buf[:0], msgs, now)
		}
	})
	b.Run("kafka-go", func(b *testing.B) {
		recs := make([]kafka.Record, len(msgs))
		var out bytes.Buffer
		for i := 0; i < b.N; i++ {
			for j, m := range msgs {
				recs[j] = kafka.Record{Time: now, Value: kafka.NewBytes(m.Value), Headers: m.Headers}
			}
			out.Reset()
			rs := protocol.RecordSet{Version: 2, Records: kafka.NewRecordReader(recs...)}
			if _, err := rs.WriteTo(&out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
