package kafkautil_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/internal/kafkatest"
	"okstream/internal/kafkautil"
)

// TestFetchChunksRecycles: FetchChunks returns a partition's records in
// order in chunks of the recycler's size (the last partial), with their
// keys and values; once given back, the chunks and blocks are reused by the
// next fetch (the same memory), which still reads its own records right.
func TestFetchChunksRecycles(t *testing.T) {
	e := kafkatest.New(t)
	topic := e.Name("chunks")
	e.CreateTopic(t, topic, 1, nil)
	const n = 2500
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("value-%05d", i))}
	}
	e.Produce(t, topic, msgs...)
	ctx := context.Background()
	ch := kafkautil.NewChunks(1000)
	var mem kafkautil.Blocks
	read := func(from int64, dst [][]kafkautil.Record) ([][]kafkautil.Record, int) {
		t.Helper()
		total := 0
		for pos := from; pos < n; {
			var got int
			var err error
			dst, got, _, err = kafkautil.FetchChunks(ctx, e.Client, topic, 0, pos, 16<<20, time.Second, dst, ch, &mem)
			if err != nil {
				t.Fatal(err)
			}
			total += got
			last := dst[len(dst)-1]
			pos = last[len(last)-1].Offset + 1
		}
		return dst, total
	}
	check := func(chunks [][]kafkautil.Record, from int) {
		t.Helper()
		i := from
		for c, recs := range chunks {
			if cap(recs) != 1000 || (c < len(chunks)-1 && len(recs) != 1000) {
				t.Fatalf("chunk %d: len %d cap %d, want full chunks of 1000", c, len(recs), cap(recs))
			}
			for _, r := range recs {
				if r.Offset != int64(i) || string(r.Key) != fmt.Sprintf("k%d", i) || string(r.Value) != fmt.Sprintf("value-%05d", i) {
					t.Fatalf("record %d: offset %d key %q value %q", i, r.Offset, r.Key, r.Value)
				}
				i++
			}
		}
		if i != n {
			t.Fatalf("read %d records, want %d", i-from, n-from)
		}
	}
	chunks, got := read(0, nil)
	if got != n {
		t.Fatalf("FetchChunks counted %d records, want %d", got, n)
	}
	check(chunks, 0)
	given := map[*kafkautil.Record]bool{}
	for _, recs := range chunks {
		given[&recs[:1][0]] = true
	}
	ch.Give(chunks)
	mem.Give(mem.Take())
	chunks2, _ := read(700, chunks[:0])
	check(chunks2, 700)
	for c, recs := range chunks2 {
		if !given[&recs[:1][0]] {
			t.Errorf("chunk %d of the second read is new: the chunks given back were not reused", c)
		}
	}
}
