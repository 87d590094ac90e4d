package consumer

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/eval"
	"okstream/internal/kafkatest"
	"okstream/internal/kafkautil"
	"okstream/learner/rng"
)

const testDim = 5

// testModels are small, fast, and exercise every phase (NOGD switches to
// its primal form after 40 stored examples).
var testModels = []Model{
	{Name: "champion", Spec: "fogd:sigma=0.7,budget=10"},
	{Name: "challenger", Spec: "nogd:sigma=0.7,budget=40,k=20"},
}

// genEvents makes n labelled (mostly) events of a nonlinear problem, keyed
// so that they spread over partitions; every 7th is unlabelled.
func genEvents(n int, seed uint64, idPrefix string) []kafka.Message {
	src := rng.New(seed)
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		ev := circleEvent(src, i, "", fmt.Sprintf("%s%d", idPrefix, i))
		ev.Key = fmt.Sprintf("user-%d", src.IntN(50))
		ev.TS, ev.HasTS, ev.HasY = 1700000000000+int64(i), true, i%7 != 3
		b, err := codec.AppendEvent(nil, &ev)
		if err != nil {
			panic(err)
		}
		msgs[i] = kafka.Message{Key: []byte(ev.Key), Value: b}
	}
	return msgs
}

// circleEvent draws a labelled event of the test problem (label +1 inside
// the circle x0² + x1² < 0.5).
func circleEvent(src *rng.Source, i int, key, id string) codec.Event {
	x := make([]float64, testDim)
	for j := range x {
		x[j] = 2*src.Float64() - 1
	}
	y := -1.0
	if x[0]*x[0]+x[1]*x[1] < 0.5 {
		y = 1
	}
	return codec.Event{Version: codec.EventVersion, ID: id, Key: key, X: x, Y: y, HasY: true}
}

func quietLogger() *slog.Logger {
	if os.Getenv("OKSTREAM_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// testLogger is quietLogger, but keeping the last lines for a failure's
// output (kafkatest.Env.Logger).
func testLogger(e *kafkatest.Env) *slog.Logger {
	if os.Getenv("OKSTREAM_TEST_LOG") != "" {
		return quietLogger()
	}
	return e.Logger()
}

// testConfig is a pipeline config for a test, with short timings.
func testConfig(e *kafkatest.Env, input, group, output string) Config {
	return Config{
		Brokers: e.Brokers, Group: group, Input: input, Output: output,
		Checkpoints: e.Name("ckpt"), DeadLetter: output + ".dlq",
		Models: testModels, Dim: testDim,
		CheckpointEvery: 250, CheckpointInterval: time.Hour, BatchSize: 100,
		FetchMaxWait: 50 * time.Millisecond, CreateTopics: true,
		SessionTimeout: 6 * time.Second, HeartbeatInterval: 300 * time.Millisecond, RebalanceTimeout: 10 * time.Second,
		CheckpointPartitions: 2, Logger: testLogger(e),
		// Control records signed (issue 37), as `okstream run --share` requires.
		ControlSecret: testControlSecret,
	}
}

// testControlSecret is the tests' control secret (Config.ControlSecret).
var testControlSecret = []byte("okstream-test-control-secret-0123456789")

type running struct {
	p    *Pipeline
	stop context.CancelFunc
	done chan error
}

func start(t *testing.T, cfg Config) *running {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return startPipeline(t, p)
}

func startPipeline(t testing.TB, p *Pipeline) *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{p: p, stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(60 * time.Second):
			t.Error("pipeline did not stop")
		}
	})
	return r
}

// shutdown stops gracefully and returns Run's error.
func (r *running) shutdown(t testing.TB) error {
	t.Helper()
	r.stop()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("pipeline did not stop within 60 s")
		return nil
	}
}

// kill stops abruptly (no final checkpoint) and waits for Run to return.
func (r *running) kill(t *testing.T) {
	t.Helper()
	r.p.Kill()
	select {
	case err := <-r.done:
		r.done <- err
	case <-time.After(60 * time.Second):
		t.Fatal("killed pipeline did not stop within 60 s")
	}
}

// waitFor polls cond until it holds (failing the test after limit).
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			// The goroutines say where it is stuck (CI keeps no other trace).
			var b strings.Builder
			pprof.Lookup("goroutine").WriteTo(&b, 1)
			t.Logf("goroutines at the timeout:\n%s", b.String())
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// endOffsets returns each partition's high watermark.
func endOffsets(t testing.TB, e *kafkatest.Env, topic string) map[int]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := kafkautil.Partitions(ctx, e.Client, topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int64{}
	for p := 0; p < n; p++ {
		_, end, err := kafkautil.Offsets(ctx, e.Client, topic, p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = end
	}
	return out
}

// caughtUp reports whether the pipelines have processed every partition up
// to the given ends.
func caughtUp(ends map[int]int64, rs ...*running) bool {
	next := map[int]int64{}
	for _, r := range rs {
		st, _ := r.p.Status()
		for _, s := range st {
			if s.Next > next[s.Partition] {
				next[s.Partition] = s.Next
			}
		}
	}
	for p, end := range ends {
		if next[p] < end {
			return false
		}
	}
	return true
}

// predictionsByOffset reads the output topic and groups the prediction
// records by source (partition, offset), checking that every copy of a
// record is byte-identical.
func predictionsByOffset(t *testing.T, e *kafkatest.Env, output string) map[[2]int64][]byte {
	t.Helper()
	recs := e.ReadAll(t, output)
	out := map[[2]int64][]byte{}
	for _, r := range recs {
		pr, err := codec.DecodePredictionAny(r.Value)
		if err != nil {
			t.Fatalf("undecodable prediction: %v", err)
		}
		k := [2]int64{int64(pr.Partition), pr.Offset}
		if prev, ok := out[k]; ok && string(prev) != string(r.Value) {
			t.Fatalf("re-emitted prediction for %v differs from the first copy", k)
		} else if ok {
			t.Fatalf("duplicate prediction record for %v (effectively-once delivery)", k)
		}
		out[k] = r.Value
	}
	return out
}

// offline computes, per input partition, each model's scores over the
// partition's events in offset order with eval.Replay (the offline path),
// and the models' final states.
type offlineResult struct {
	scores map[[2]int64][]float64 // (partition, offset) → score per model
	states map[int][][]byte       // partition → final state per model
}

func offline(t *testing.T, e *kafkatest.Env, input string, models []Model, dim int) offlineResult {
	t.Helper()
	recs := e.ReadAll(t, input)
	byPart := map[int][]kafkatest.Record{}
	for _, r := range recs {
		byPart[r.Partition] = append(byPart[r.Partition], r)
	}
	res := offlineResult{scores: map[[2]int64][]float64{}, states: map[int][][]byte{}}
	parts := make([]int, 0, len(byPart))
	for p := range byPart {
		parts = append(parts, p)
	}
	sort.Ints(parts)
	for _, p := range parts {
		var xs [][]float64
		var ys []float64
		var lab []bool
		var offs []int64
		for _, r := range byPart[p] {
			ev, err := codec.DecodeEvent(r.Value, codec.Limits{Dim: dim})
			if err != nil || (ev.HasY && ev.Y != 1 && ev.Y != -1) {
				continue // dead-lettered by the pipeline
			}
			xs = append(xs, ev.Dense(nil, dim))
			ys = append(ys, ev.Y)
			lab = append(lab, ev.HasY)
			offs = append(offs, r.Offset)
		}
		for _, m := range models {
			scores, l, err := eval.Replay(m.Spec, dim, xs, ys, lab)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range offs {
				k := [2]int64{int64(p), o}
				res.scores[k] = append(res.scores[k], scores[i])
			}
			st, _ := l.MarshalBinary()
			res.states[p] = append(res.states[p], st)
		}
	}
	return res
}

// checkpointStates loads each partition's newest checkpoint and returns the
// models' states in configuration order.
func checkpointStates(t *testing.T, e *kafkatest.Env, cfg Config, parts int) (map[int][][]byte, map[int]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := checkpoint.Open(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: cfg.Checkpoints})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	states := map[int][][]byte{}
	next := map[int]int64{}
	for p := 0; p < parts; p++ {
		cp, _, err := s.Load(ctx, checkpoint.ID{Group: cfg.Group, Topic: cfg.Input, Partition: p})
		if err != nil || cp == nil {
			t.Fatalf("partition %d: no checkpoint (%v)", p, err)
		}
		ms, _ := newModelSet(cfg.Models, cfg.Dim, cfg.pendingLimits())
		if _, err := ms.restore(cp.Payload, false); err != nil {
			t.Fatal(err)
		}
		for _, m := range ms.models {
			b, _ := m.l.MarshalBinary()
			states[p] = append(states[p], b)
		}
		next[p] = cp.NextOffset
	}
	return states, next
}

// checkpointCalibs is the models' probability calibrations in the
// partitions' newest checkpoints, by partition.
func checkpointCalibs(t *testing.T, e *kafkatest.Env, cfg Config, parts int) map[int][]eval.Platt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := checkpoint.Open(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: cfg.Checkpoints})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[int][]eval.Platt{}
	for p := 0; p < parts; p++ {
		cp, _, err := s.Load(ctx, checkpoint.ID{Group: cfg.Group, Topic: cfg.Input, Partition: p})
		if err != nil || cp == nil {
			t.Fatalf("partition %d: no checkpoint (%v)", p, err)
		}
		pl, err := DescribePayload(cp.Payload)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range pl.Models {
			out[p] = append(out[p], m.Calib)
		}
	}
	return out
}

func sameScore(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func nan() float64 { return math.NaN() }

// checkpointStats sums the models' progressive statistics over the
// partitions' newest checkpoints.
func checkpointStats(t *testing.T, e *kafkatest.Env, cfg Config, parts int) map[string]Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := checkpoint.OpenExisting(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: cfg.Checkpoints})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Stats{}
	for p := 0; p < parts; p++ {
		cp, _, err := s.Load(ctx, checkpoint.ID{Group: cfg.Group, Topic: cfg.Input, Partition: p})
		if err != nil || cp == nil {
			t.Fatalf("partition %d: no checkpoint (%v)", p, err)
		}
		pl, err := DescribePayload(cp.Payload)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range pl.Models {
			a := out[m.Name]
			a.Labeled += m.Stats.Labeled
			a.Mistakes += m.Stats.Mistakes
			a.SqErr += m.Stats.SqErr
			a.Resets += m.Stats.Resets
			out[m.Name] = a
		}
	}
	return out
}

// runRefused runs a pipeline that must refuse to start and returns Run's
// error (nil if it ran for 30 s instead).
func runRefused(t *testing.T, cfg Config) error {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.Run(ctx)
}
