package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/consumer"
	"okstream/internal/kafkatest"
	"okstream/internal/kafkautil"
	"okstream/learner/rng"
)

const testDim = 5

// testModels: the default self-tuning model's member kind and FOGD, small.
var testModels = []consumer.Model{
	{Name: "auto", Spec: "auto:base=fogd,budget=10,halving=200"},
	{Name: "fogd", Spec: "fogd:sigma=0.7,budget=10"},
}

// events makes n events of a nonlinear problem (label +1 inside the circle
// x0² + x1² < 0.5), keyed user-0..49, labelled or not, ids prefix<i>.
func events(n int, seed uint64, prefix string, labelled bool) []codec.Event {
	src := rng.New(seed)
	out := make([]codec.Event, n)
	for i := range out {
		x := make([]float64, testDim)
		for j := range x {
			x[j] = 2*src.Float64() - 1
		}
		y := -1.0
		if x[0]*x[0]+x[1]*x[1] < 0.5 {
			y = 1
		}
		out[i] = codec.Event{Version: codec.EventVersion, ID: fmt.Sprintf("%s%d", prefix, i), Key: fmt.Sprintf("user-%d", src.IntN(50)),
			X: x, Y: y, HasY: labelled, TS: 1700000000000 + int64(i), HasTS: true}
	}
	return out
}

// produce writes evs to topic keyed by their keys with the murmur2
// partitioner (what okstream's producers use, and what the server routes
// keys with).
func produce(t testing.TB, e *kafkatest.Env, topic string, evs []codec.Event) {
	t.Helper()
	msgs := make([]kafka.Message, len(evs))
	for i := range evs {
		b, err := codec.AppendEvent(nil, &evs[i])
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = kafka.Message{Key: []byte(evs[i].Key), Value: b}
	}
	w := e.Writer(topic)
	w.Balancer = kafka.Murmur2Balancer{Consistent: true}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// pipelineConfig is a small pipeline's configuration with short timings.
func pipelineConfig(e *kafkatest.Env, input string) consumer.Config {
	return consumer.Config{
		Brokers: e.Brokers, Group: e.Name("g"), Input: input, Output: e.Name("preds"),
		Checkpoints: e.Name("ckpt"), DeadLetter: e.Name("dlq"),
		Models: testModels, Dim: testDim,
		CheckpointEvery: 100, CheckpointInterval: time.Hour, BatchSize: 50,
		FetchMaxWait: 50 * time.Millisecond, CreateTopics: true,
		SessionTimeout: 6 * time.Second, HeartbeatInterval: 300 * time.Millisecond, RebalanceTimeout: 10 * time.Second,
		CheckpointPartitions: 2, Logger: quiet(),
	}
}

// running is a pipeline running in the background.
type running struct {
	p    *consumer.Pipeline
	stop context.CancelFunc
	done chan error
}

func startPipeline(t testing.TB, cfg consumer.Config) *running {
	t.Helper()
	p, err := consumer.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{p: p, stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- p.Run(ctx) }()
	t.Cleanup(func() { r.shutdown(t) })
	return r
}

// shutdown stops the pipeline (a final checkpoint) and waits for it.
func (r *running) shutdown(t testing.TB) {
	t.Helper()
	r.stop()
	select {
	case err := <-r.done:
		r.done <- err
		if err != nil {
			t.Errorf("pipeline: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("pipeline did not stop")
	}
}

// waitCaughtUp waits until the pipeline has processed its input topic to
// its current end.
func (r *running) waitCaughtUp(t testing.TB, e *kafkatest.Env, topic string) {
	t.Helper()
	ctx := context.Background()
	n, err := kafkautil.Partitions(ctx, e.Client, topic)
	if err != nil {
		t.Fatal(err)
	}
	ends := map[int]int64{}
	for p := 0; p < n; p++ {
		_, end, err := kafkautil.Offsets(ctx, e.Client, topic, p)
		if err != nil {
			t.Fatal(err)
		}
		ends[p] = end
	}
	waitFor(t, 90*time.Second, "the pipeline to catch up", func() bool {
		st, _ := r.p.Status()
		next := map[int]int64{}
		for _, s := range st {
			next[s.Partition] = max(next[s.Partition], s.Next)
		}
		for p, end := range ends {
			if next[p] < end {
				return false
			}
		}
		return true
	})
}

func waitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkpoints loads each partition's newest checkpoint.
func checkpoints(t testing.TB, e *kafkatest.Env, cfg consumer.Config, parts int) map[int]*checkpoint.Checkpoint {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := checkpoint.Open(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: cfg.Checkpoints})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[int]*checkpoint.Checkpoint{}
	for p := 0; p < parts; p++ {
		cp, _, err := s.Load(ctx, checkpoint.ID{Group: cfg.Group, Topic: cfg.Input, Partition: p})
		if err != nil || cp == nil {
			t.Fatalf("partition %d: no checkpoint (%v)", p, err)
		}
		out[p] = cp
	}
	return out
}

// trained runs a pipeline over n labelled events on parts partitions and
// returns the environment, the configuration and the final checkpoints.
func trained(t testing.TB, parts, n int) (*kafkatest.Env, consumer.Config, map[int]*checkpoint.Checkpoint) {
	t.Helper()
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, parts, nil)
	produce(t, e, input, events(n, 1, "a", true))
	cfg := pipelineConfig(e, input)
	r := startPipeline(t, cfg)
	r.waitCaughtUp(t, e, input)
	r.shutdown(t)
	return e, cfg, checkpoints(t, e, cfg, parts)
}

// serverOf serves the checkpoints' models.
func serverOf(t testing.TB, o Options, cps map[int]*checkpoint.Checkpoint, topic string) *Server {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	for p, cp := range cps {
		sc, err := consumer.NewScorer(cp.Payload)
		if err != nil {
			t.Fatal(err)
		}
		s.Set(&Model{Scorer: sc, Partition: p, Topic: topic, NextOffset: cp.NextOffset, Time: cp.Time, Source: SourceReplica})
	}
	s.SetPartitions(len(cps))
	return s
}

// post sends body to h's /v1/predict with content type ct and query q,
// returning the status and body.
func post(t testing.TB, h http.Handler, ct, q string, body io.Reader, hdr ...string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/v1/predict"+q, body)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// jsonBatch is evs as a JSON array.
func jsonBatch(t testing.TB, evs []codec.Event) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range evs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(eventJSON(t, &evs[i]))
	}
	b.WriteByte(']')
	return b.Bytes()
}

// msgpackBatch is evs as a msgpack array.
func msgpackBatch(t testing.TB, evs []codec.Event) []byte {
	t.Helper()
	out := appendArrayHeader(nil, len(evs))
	for i := range evs {
		b, err := codec.AppendEvent(nil, &evs[i])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}

func eventJSON(t testing.TB, ev *codec.Event) []byte {
	t.Helper()
	b, err := codec.AppendEventJSON(nil, ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// answers decodes a 200 answer of either format.
func answers(t testing.TB, body []byte, msgpack bool) []codec.Prediction {
	t.Helper()
	var raws [][]byte
	if msgpack {
		const head = "\x81\xabpredictions"
		if !bytes.HasPrefix(body, []byte(head)) {
			t.Fatalf("msgpack answer starts % x", body[:min(len(body), 16)])
		}
		rest := body[len(head):]
		spans, err := splitMsgpack(rest, 1<<20, nil)
		if err != nil {
			t.Fatalf("msgpack answer: %v", err)
		}
		for _, sp := range spans {
			raws = append(raws, rest[sp[0]:sp[1]])
		}
	} else {
		var a struct{ Predictions []json.RawMessage }
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatalf("JSON answer %q: %v", body, err)
		}
		for _, r := range a.Predictions {
			raws = append(raws, r)
		}
	}
	out := make([]codec.Prediction, len(raws))
	for i, r := range raws {
		p, err := codec.DecodePredictionAny(r)
		if err != nil {
			t.Fatalf("answer %d %q: %v", i, r, err)
		}
		out[i] = p
	}
	return out
}

// sameScores compares two answers' models bit for bit.
func sameScores(a, b []codec.ModelScore) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d models, %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || math.Float64bits(x.Score) != math.Float64bits(y.Score) || math.Float64bits(x.Prob) != math.Float64bits(y.Prob) ||
			x.HasProb != y.HasProb || x.Decision != y.Decision || x.Updates != y.Updates || x.Class != y.Class || len(x.Dist) != len(y.Dist) ||
			x.Multi != y.Multi || x.ClassIndex != y.ClassIndex {
			return fmt.Errorf("model %d: %+v, %+v", i, x, y)
		}
		for j := range x.Dist {
			if x.Dist[j].Class != y.Dist[j].Class || math.Float64bits(x.Dist[j].Prob) != math.Float64bits(y.Dist[j].Prob) {
				return fmt.Errorf("model %d class %d: %+v, %+v", i, j, x.Dist[j], y.Dist[j])
			}
		}
	}
	return nil
}
