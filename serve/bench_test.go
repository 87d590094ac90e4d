package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/consumer"
	"okstream/eval"
	"okstream/internal/kafkatest"
	"okstream/learner"
	"okstream/learner/rng"
)

// The benchmarks' models: the default model of okstream run (auto over
// FOGD members) and FOGD, on 20 features.
const benchDim = 20

var benchModels = []struct {
	name string
	m    consumer.Model
}{
	{"auto", consumer.Model{Name: "auto", Spec: "auto:base=fogd"}},
	{"fogd", consumer.Model{Name: "fogd", Spec: "fogd"}},
}

// benchEvents makes n events of dimension benchDim (label: the sign of a
// nonlinear function), keyed user-0..99.
func benchEvents(n int, seed uint64, labelled bool) []codec.Event {
	src := rng.New(seed)
	out := make([]codec.Event, n)
	for i := range out {
		x := make([]float64, benchDim)
		for j := range x {
			x[j] = 2*src.Float64() - 1
		}
		y := -1.0
		if x[0]*x[0]+x[1]*x[2]+0.5*x[3] > 0.2 {
			y = 1
		}
		out[i] = codec.Event{Version: codec.EventVersion, ID: fmt.Sprintf("e%d", i), Key: fmt.Sprintf("user-%d", src.IntN(100)), X: x, Y: y, HasY: labelled}
	}
	return out
}

// benchTrained runs a one-partition pipeline of model m over n labelled
// events and returns its final checkpoint.
func benchTrained(b *testing.B, m consumer.Model, n int) *checkpoint.Checkpoint {
	b.Helper()
	e := kafkatest.New(b)
	input := e.Name("events")
	e.CreateTopic(b, input, 1, nil)
	produce(b, e, input, benchEvents(n, 1, true))
	cfg := pipelineConfig(e, input)
	cfg.Models, cfg.Dim, cfg.CheckpointEvery, cfg.BatchSize = []consumer.Model{m}, benchDim, 1000, 500
	r := startPipeline(b, cfg)
	r.waitCaughtUp(b, e, input)
	r.shutdown(b)
	return checkpoints(b, e, cfg, 1)[0]
}

// rawLearners are the payload's learners as okstream eval runs them.
func rawLearners(b *testing.B, payload []byte) []learner.Learner {
	b.Helper()
	d, err := consumer.DescribePayload(payload)
	if err != nil {
		b.Fatal(err)
	}
	var out []learner.Learner
	for _, m := range d.Models {
		l, err := learner.New(m.Spec, d.Dim)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.UnmarshalBinary(m.State); err != nil {
			b.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

// percentile is the q-quantile of sorted durations, in µs.
func percentile(d []time.Duration, q float64) float64 {
	return float64(d[min(len(d)-1, int(q*float64(len(d))))].Nanoseconds()) / 1e3
}

// Single-event requests over a real loopback connection (keep-alive),
// one at a time: p50 and p99 latency, client-measured, and the handler's
// own p50 and p99 (no network) for comparison.
func BenchmarkServeSingle(b *testing.B) {
	for _, bm := range benchModels {
		b.Run(bm.name, func(b *testing.B) {
			cp := benchTrained(b, bm.m, 4000)
			srv := serverOf(b, Options{}, map[int]*checkpoint.Checkpoint{0: cp}, "events")
			ts := httptest.NewServer(srv.Handler())
			defer ts.Close()
			evs := benchEvents(256, 7, false)
			bodies := make([][]byte, len(evs))
			for i := range evs {
				bodies[i] = append(append([]byte{'['}, eventJSON(b, &evs[i])...), ']')
			}
			client := ts.Client()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				resp, err := client.Post(ts.URL+"/v1/predict", "application/json", bytes.NewReader(bodies[i%len(bodies)]))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat = append(lat, time.Since(start))
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(percentile(lat, 0.5), "p50-µs")
			b.ReportMetric(percentile(lat, 0.99), "p99-µs")
			h := srv.Handler()
			hl := make([]time.Duration, 0, 2000)
			for i := range 2000 {
				req := httptest.NewRequest(http.MethodPost, "/v1/predict", bytes.NewReader(bodies[i%len(bodies)]))
				rec := httptest.NewRecorder()
				start := time.Now()
				h.ServeHTTP(rec, req)
				hl = append(hl, time.Since(start))
			}
			slices.Sort(hl)
			b.ReportMetric(percentile(hl, 0.5), "handler-p50-µs")
			b.ReportMetric(percentile(hl, 0.99), "handler-p99-µs")
		})
	}
}

// Batches of 1000 events over a real loopback connection: events/s
// answered, against the predict-only speed of the same models in the same
// run (the payload's learners' bare Predict on the same vectors), and
// their ratio; the same against okstream eval's predict-only loop (its
// test-set scoring, executor.score: Predict and the frozen measures'
// Add — probability, log loss, Brier, ECE bin, AUC — per event and
// model); and the handler's own events/s (the same batch through
// Handler().ServeHTTP, no connection: body read, decode, route, score,
// encode), and its ratios.
func BenchmarkServeBatch(b *testing.B) {
	for _, bm := range benchModels {
		for _, format := range []string{"json", "msgpack"} {
			b.Run(bm.name+"/"+format, func(b *testing.B) {
				cp := benchTrained(b, bm.m, 4000)
				srv := serverOf(b, Options{}, map[int]*checkpoint.Checkpoint{0: cp}, "events")
				ts := httptest.NewServer(srv.Handler())
				defer ts.Close()
				evs := benchEvents(1000, 7, false)
				body := jsonBatch(b, evs)
				if format == "msgpack" {
					body = msgpackBatch(b, evs)
				}
				ls := rawLearners(b, cp.Payload)
				client := ts.Client()
				h := srv.Handler()
				measures := make([]*eval.Binary, len(ls))
				for k, l := range ls {
					measures[k] = eval.NewBinary(eval.ProbabilityOf(l), 0).Frozen(0)
				}
				var served, handler, predict, evalOnly time.Duration
				sink := 0.0
				b.ResetTimer()
				for range b.N {
					start := time.Now()
					resp, err := client.Post(ts.URL+"/v1/predict", "application/"+format, bytes.NewReader(body))
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Fatalf("status %d", resp.StatusCode)
					}
					served += time.Since(start)
					req := httptest.NewRequest(http.MethodPost, "/v1/predict", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/"+format)
					rec := httptest.NewRecorder()
					start = time.Now()
					h.ServeHTTP(rec, req)
					handler += time.Since(start)
					start = time.Now()
					for i := range evs {
						for _, l := range ls {
							sink += l.Predict(evs[i].X)
						}
					}
					predict += time.Since(start)
					start = time.Now()
					for i := range evs {
						for k, l := range ls {
							measures[k].Add(l.Predict(evs[i].X), evs[i].Y)
						}
					}
					evalOnly += time.Since(start)
				}
				b.StopTimer()
				n := float64(b.N * len(evs))
				b.ReportMetric(n/evalOnly.Seconds(), "eval-ev/s")
				b.ReportMetric(evalOnly.Seconds()/served.Seconds(), "served/eval")
				b.ReportMetric(evalOnly.Seconds()/handler.Seconds(), "handler/eval")
				b.ReportMetric(n/served.Seconds(), "served-ev/s")
				b.ReportMetric(n/predict.Seconds(), "predict-ev/s")
				b.ReportMetric(predict.Seconds()/served.Seconds(), "served/predict")
				b.ReportMetric(n/handler.Seconds(), "handler-ev/s")
				b.ReportMetric(predict.Seconds()/handler.Seconds(), "handler/predict")
				_ = sink
			})
		}
	}
}

// Learning's events/s with and without serving beside it: a pipeline
// learns 60000 events (2 partitions) alone; then other pipelines (other
// groups) learn them with okstream run --serve's live serving: the hook
// alone (models handed over at each checkpoint and rebuilt, no request),
// with a client pacing single-event requests at 500/s, with a client
// sending them back to back, and with a client sending batches of 1000
// JSON events back to back (whose events/s served is also reported over
// okstream eval's predict-only speed with the run's models, as in
// ServeBatch); then one alone again. Each ratio is a
// serving run's events/s over the mean of the two alone. (The pipeline,
// the embedded broker and the client share the machine's cores: where
// there are fewer cores than they need, a client's CPU is taken from
// learning, which no lock-free design avoids.)
func BenchmarkLearningWithServing(b *testing.B) {
	const (
		alone = iota
		hookOnly
		paced
		closedLoop
		batches
	)
	for _, bm := range benchModels {
		b.Run(bm.name, func(b *testing.B) {
			const n = 60000
			e := kafkatest.New(b)
			input := e.Name("events")
			e.CreateTopic(b, input, 2, nil)
			produce(b, e, input, benchEvents(n, 1, true))
			probe := benchEvents(64, 9, false)
			bodies := make([][]byte, len(probe))
			for i := range probe {
				bodies[i] = append(append([]byte{'['}, eventJSON(b, &probe[i])...), ']')
			}
			batchEvs := benchEvents(1000, 7, false)
			batch := jsonBatch(b, batchEvs)
			var lastCfg consumer.Config
			learn := func(group string, mode int) (float64, float64) {
				cfg := pipelineConfig(e, input)
				cfg.Group, cfg.Output, cfg.Checkpoints = e.Name(group), e.Name(group+"-preds"), e.Name(group+"-ckpt")
				cfg.Models, cfg.Dim, cfg.CheckpointEvery, cfg.BatchSize = []consumer.Model{bm.m}, benchDim, 10000, 500
				var requests atomic.Int64
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				if mode != alone {
					srv, _ := New(Options{})
					live := NewLive(srv, LiveConfig{Topic: input, Group: cfg.Group, Client: e.Client})
					cfg.OnModels = live.Publish
					go live.Run(ctx)
					ts := httptest.NewServer(srv.Handler())
					defer ts.Close()
					client := ts.Client()
					if mode != hookOnly {
						wg.Add(1)
						go func() {
							defer wg.Done()
							tick := time.NewTicker(2 * time.Millisecond)
							defer tick.Stop()
							for i := 0; ctx.Err() == nil; i++ {
								if mode == paced {
									<-tick.C
								}
								body, per := bodies[i%len(bodies)], int64(1)
								if mode == batches {
									body, per = batch, int64(len(batchEvs))
								}
								resp, err := client.Post(ts.URL+"/v1/predict", "application/json", bytes.NewReader(body))
								if err != nil {
									return
								}
								io.Copy(io.Discard, resp.Body)
								resp.Body.Close()
								if resp.StatusCode == 200 {
									requests.Add(per)
								} else if mode != paced {
									time.Sleep(time.Millisecond) // no model yet
								}
							}
						}()
					}
				}
				start := time.Now()
				r := startPipeline(b, cfg)
				r.waitCaughtUp(b, e, input)
				d := time.Since(start)
				cancel()
				wg.Wait()
				r.shutdown(b)
				lastCfg = cfg
				return n / d.Seconds(), float64(requests.Load()) / d.Seconds()
			}
			// evalSpeed is okstream eval's predict-only loop (as in
			// ServeBatch) over the batch's events with the models of the
			// last run's first checkpoint.
			evalSpeed := func() float64 {
				ls := rawLearners(b, checkpoints(b, e, lastCfg, 2)[0].Payload)
				measures := make([]*eval.Binary, len(ls))
				for k, l := range ls {
					measures[k] = eval.NewBinary(eval.ProbabilityOf(l), 0).Frozen(0)
				}
				start := time.Now()
				for range 20 {
					for i := range batchEvs {
						for k, l := range ls {
							measures[k].Add(l.Predict(batchEvs[i].X), batchEvs[i].Y)
						}
					}
				}
				return float64(20*len(batchEvs)) / time.Since(start).Seconds()
			}
			b.ResetTimer()
			for i := range b.N {
				a1, _ := learn(fmt.Sprintf("alone-a%d", i), alone)
				h, _ := learn(fmt.Sprintf("hook%d", i), hookOnly)
				p, preq := learn(fmt.Sprintf("paced%d", i), paced)
				c, creq := learn(fmt.Sprintf("closed%d", i), closedLoop)
				bt, bev := learn(fmt.Sprintf("batches%d", i), batches)
				es := evalSpeed()
				a2, _ := learn(fmt.Sprintf("alone-b%d", i), alone)
				m := (a1 + a2) / 2
				b.ReportMetric(bt/m, "batches/alone")
				b.ReportMetric(bev, "batch-served-ev/s")
				b.ReportMetric(bev/es, "batch-served/eval")
				b.ReportMetric(m, "alone-ev/s")
				b.ReportMetric(h/m, "hook/alone")
				b.ReportMetric(p/m, "paced/alone")
				b.ReportMetric(c/m, "closed/alone")
				b.ReportMetric(preq, "paced-req/s")
				b.ReportMetric(creq, "closed-req/s")
			}
		})
	}
}

// Decoding a JSON batch of 1000 events (ServeBatch's body), per event: in
// one pass (decodeJSONBatch, what the server does) and in two (splitJSON's
// spans, then DecodeEventJSON on each, the fallback), and splitJSON alone.
func BenchmarkDecodeBatchJSON(b *testing.B) {
	evs := benchEvents(1000, 7, false)
	body := jsonBatch(b, evs)
	dec := codec.NewDecoder(codec.Limits{MaxBytes: 1 << 20})
	var ev codec.Event
	perEvent := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
	}
	b.Run("one_pass", func(b *testing.B) {
		for b.Loop() {
			if n, ok := decodeJSONBatch(body, 1000, dec, &ev, func(int) bool { return true }); !ok || n != len(evs) {
				b.Fatal(n, ok)
			}
		}
		perEvent(b)
	})
	var spans [][2]int
	b.Run("split_then_decode", func(b *testing.B) {
		for b.Loop() {
			var err error
			if spans, err = splitJSON(body, 1000, spans[:0]); err != nil {
				b.Fatal(err)
			}
			for _, sp := range spans {
				if err := dec.DecodeEventJSON(body[sp[0]:sp[1]], &ev); err != nil {
					b.Fatal(err)
				}
			}
		}
		perEvent(b)
	})
	b.Run("split_only", func(b *testing.B) {
		for b.Loop() {
			var err error
			if spans, err = splitJSON(body, 1000, spans[:0]); err != nil {
				b.Fatal(err)
			}
		}
		perEvent(b)
	})
}
