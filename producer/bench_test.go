package producer

import (
	"context"
	"testing"

	"okstream/internal/kafkatest"
)

// BenchmarkReplay measures Replay's throughput into a 3-partition topic of
// the test broker (the embedded one unless OKSTREAM_TEST_BROKERS is set):
// b.N events of 20 features, as fast as the broker acknowledges.
func BenchmarkReplay(b *testing.B) {
	for _, sparse := range []bool{false, true} {
		name := "dense20"
		if sparse {
			name = "sparse20"
		}
		b.Run(name, func(b *testing.B) {
			ds := synth(10000, 20)
			e := kafkatest.New(b)
			topic := e.Name("bench")
			e.CreateTopic(b, topic, 3, nil)
			cfg := Config{Brokers: e.Brokers, Topic: topic, Loop: true, Limit: int64(b.N), Sparse: sparse,
				Keys: KeyRandom, Permute: true, Seed: 1}
			b.ReportAllocs()
			b.ResetTimer()
			st, err := Replay(context.Background(), ds, cfg)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			if st.Events != int64(b.N) {
				b.Fatalf("%d events acknowledged, want %d", st.Events, b.N)
			}
			b.ReportMetric(st.Rate(), "events/s")
			b.ReportMetric(float64(st.Bytes)/float64(st.Events), "B/event")
		})
	}
}

// BenchmarkPlanAppend measures building and encoding one event (the
// producer's own share of Replay's work, without Kafka).
func BenchmarkPlanAppend(b *testing.B) {
	ds := synth(10000, 20)
	for _, sparse := range []bool{false, true} {
		name := "dense20"
		if sparse {
			name = "sparse20"
		}
		b.Run(name, func(b *testing.B) {
			p, err := NewPlan(ds, Config{Loop: true, Sparse: sparse, Keys: KeyRandom, Permute: true, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 0, 1<<16)
			b.ReportAllocs()
			for i := range int64(b.N) {
				if len(buf) > 1<<15 {
					buf = buf[:0]
				}
				buf, _, _, _, err = p.appendRecord(buf, i, 0)
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
