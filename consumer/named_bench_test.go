package consumer

import (
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/codec"
)

// namedBenchEvents are benchEvents(n, 30) as named-feature events of 30
// fields: with strings 0, every value as a number "f00".."f29" (the same
// vector, so the models do the same work at the same dimension); else the
// last strings fields are strings of 3 values each ("a", "b", "c" by the
// sign and size of the value), a one-hot field for the encoder (3
// coordinates each).
func namedBenchEvents(n, strings int) []kafka.Message {
	dense := benchEvents(n, 30)
	out := make([]kafka.Message, len(dense))
	names := make([]string, 30)
	for j := range names {
		names[j] = fmt.Sprintf("f%02d", j)
	}
	for i, m := range dense {
		ev, err := codec.DecodeEvent(m.Value, codec.Limits{})
		if err != nil {
			panic(err)
		}
		f := make([]codec.Field, 30)
		for j, v := range ev.X {
			f[j] = codec.Field{Name: names[j], Kind: codec.FieldNumber, Num: v}
			if j >= 30-strings {
				s := "a"
				switch {
				case v > 0.5:
					s = "c"
				case v > -0.5:
					s = "b"
				}
				f[j] = codec.Field{Name: names[j], Kind: codec.FieldString, Str: s}
			}
		}
		ev.Version, ev.X, ev.F = codec.NamedEventVersion, nil, f
		v, err := codec.AppendEvent(nil, &ev)
		if err != nil {
			panic(err)
		}
		out[i] = kafka.Message{Key: m.Key, Value: v}
	}
	return out
}

// BenchmarkPipelineNamed: the pipeline's throughput with the dense 30-float
// event and with the same event as 30 named fields (all numbers, so the
// models see the same vector at D = 30: the cost of decoding names and of
// the encoder alone), and with 10 of them strings of 3 values (D = 50: the
// one-hot coordinates make the models' vectors longer), with no model
// (pass-through) and with FOGD (B = 100). Events per second of the
// processing window and per CPU-second of the whole process (embedded
// broker included). Run with
//
//	go test -run xxx -bench PipelineNamed -benchtime 3x ./consumer/
//
// OKSTREAM_BENCH_EVENTS sets the number of events (default 100,000).
func BenchmarkPipelineNamed(b *testing.B) {
	dense := benchEvents(100000, 30)
	inputs := []struct {
		name string
		msgs []kafka.Message
		dim  int
	}{
		{"dense30", dense, 30},
		{"named30", namedBenchEvents(len(dense), 0), 30},
		{"named20+10str", namedBenchEvents(len(dense), 10), 50},
	}
	for _, m := range []struct {
		name   string
		models []Model
	}{{"passthrough", nil}, {"fogd", []Model{{Name: "fogd", Spec: "fogd:sigma=4,budget=100"}}}} {
		for _, in := range inputs {
			b.Run(m.name+"/"+in.name, func(b *testing.B) {
				var sum benchRate
				for i := 0; i < b.N; i++ {
					_, cfg, ends := benchSetup(b, in.msgs, in.dim, m.models)
					p := mustNew(b, cfg)
					r := startPipeline(b, p)
					for !allReady(p, len(ends)) {
						time.Sleep(time.Millisecond)
					}
					cpu0, start, first := cpuTime(), time.Now(), processed(p)
					for !caughtUp(ends, r) {
						time.Sleep(5 * time.Millisecond)
					}
					end, cpu := time.Now(), cpuTime()-cpu0
					if err := r.shutdown(b); err != nil {
						b.Fatal(err)
					}
					if d := counterValue(p.m.deadLetters.WithLabelValues(reasonFeatureKind)); d > 0 {
						b.Fatalf("%v dead letters", d)
					}
					n := float64(int64(len(in.msgs)) - first)
					sum.steady += n / end.Sub(start).Seconds()
					sum.perCPU += n / cpu.Seconds()
				}
				b.ReportMetric(sum.steady/float64(b.N), "events/s")
				b.ReportMetric(sum.perCPU/float64(b.N), "events/cpu-s")
				b.ReportMetric(float64(len(in.msgs[0].Value)), "bytes/event")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
