package consumer

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/internal/kafkatest"
	"okstream/learner/rng"
)

// BenchmarkPipeline measures end-to-end throughput of one instance: events
// already in a 4-partition topic (d = 20), consumed, scored, learned from,
// predictions written (acks=all), checkpoints every 10,000 events — until
// every partition is caught up. "fogd" is a FOGD model (B = 100: 400 random
// frequencies); "passthrough" is the same pipeline with no model, i.e. the
// infrastructure's own cost. Run it against a real broker with
//
//	OKSTREAM_TEST_BROKERS=127.0.0.1:9092 go test -run xxx -bench Pipeline -benchtime 1x ./consumer/
//
// OKSTREAM_BENCH_EVENTS sets the number of events (default 100,000).
func BenchmarkPipeline(b *testing.B) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("OKSTREAM_BENCH_EVENTS")); err == nil && v > 0 {
		n = v
	}
	const dim = 20
	msgs := make([]kafka.Message, n)
	src := rng.New(1)
	for i := range msgs {
		x := make([]float64, dim)
		for j := range x {
			x[j] = src.Normal()
		}
		y := 1.0
		if x[0]*x[1]+x[2] < 0 {
			y = -1
		}
		key := fmt.Sprintf("k%d", src.IntN(1000))
		v, _ := codec.AppendEvent(nil, &codec.Event{Version: 1, Key: key, X: x, Y: y, HasY: true})
		msgs[i] = kafka.Message{Key: []byte(key), Value: v}
	}
	for _, c := range []struct {
		name   string
		models []Model
	}{
		{"fogd", []Model{{Name: "fogd", Spec: "fogd:sigma=4,budget=100"}}},
		{"passthrough", nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e := kafkatest.New(b)
				input := e.Name("events")
				e.CreateTopic(b, input, 4, nil)
				e.Produce(b, input, msgs...)
				cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
				cfg.Models, cfg.Passthrough, cfg.Dim = c.models, c.models == nil, dim
				cfg.CheckpointEvery, cfg.BatchSize, cfg.FetchMaxWait = 10000, 1000, 250*time.Millisecond
				ends := endOffsets(b, e, input)
				b.StartTimer()
				start := time.Now()
				p, err := New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				r := startPipeline(b, p)
				for !caughtUp(ends, r) {
					time.Sleep(20 * time.Millisecond)
				}
				el := time.Since(start)
				b.StopTimer()
				r.shutdown(b)
				b.ReportMetric(float64(n)/el.Seconds(), "events/s")
				b.ReportMetric(0, "ns/op")
			}
		})
	}
}
