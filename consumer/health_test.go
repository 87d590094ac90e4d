package consumer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kmsg"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/internal/kafkatest"
	"okstream/learner"
)

// gauge reads one series of a metric family from the pipeline's registry
// (ok false when absent).
func gauge(t testing.TB, p *Pipeline, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := p.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, lp := range m.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue next
				}
			}
			switch {
			case m.Gauge != nil:
				return m.GetGauge().GetValue(), true
			case m.Counter != nil:
				return m.GetCounter().GetValue(), true
			}
		}
	}
	return 0, false
}

// status fetches a path of the pipeline's handler.
func status(p *Pipeline, path string) (int, string) {
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// Readiness through a broker outage: ready once joined, restored and
// fetching; 503 within the configured broker timeout after the broker
// stops (liveness stays 200); 200 again after it returns, and the events
// produced meanwhile are processed. On the embedded broker always; against
// a real one with OKSTREAM_TEST_KAFKA_OUTAGE=1 (scripts/kafka.sh stop and
// start --keep-data).
func TestReadinessThroughBrokerOutage(t *testing.T) {
	e := kafkatest.New(t)
	if !e.CanStopBroker() {
		t.Skipf("stopping the real broker needs %s=1 (run this test alone)", kafkatest.OutageEnv)
	}
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	e.Produce(t, input, genEvents(400, 31, "o")...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.ReadyBrokerTimeout = 2 * time.Second
	cfg.ShutdownTimeout = 3 * time.Second
	cfg.CheckpointPartitions = 1
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 90*time.Second, "processing and readiness", func() bool { return caughtUp(ends, r) && r.p.Ready() })
	if code, body := status(r.p, "/readyz"); code != 200 {
		t.Fatalf("/readyz %d %q while ready", code, body)
	}
	if v, _ := gauge(t, r.p, "okstream_ready", nil); v != 1 {
		t.Fatalf("okstream_ready = %v while ready", v)
	}

	e.StopBroker(t)
	stopped := time.Now()
	// The bound: the configured timeout, one probe period, and slack for a
	// loaded machine. The measured time is logged.
	limit := cfg.ReadyBrokerTimeout + r.p.probeEvery() + 3*time.Second
	waitFor(t, limit, "/readyz 503 after the broker stopped", func() bool {
		code, _ := status(r.p, "/readyz")
		return code == 503
	})
	took := time.Since(stopped)
	_, why := status(r.p, "/readyz")
	t.Logf("503 after %s: %s", took.Round(10*time.Millisecond), strings.TrimSpace(why))
	if !strings.Contains(why, "broker") && !strings.Contains(why, "generation") {
		t.Fatalf("/readyz reason %q names neither the broker nor the generation", why)
	}
	if v, _ := gauge(t, r.p, "okstream_ready", nil); v != 0 {
		t.Fatalf("okstream_ready = %v during the outage", v)
	}
	// The broker timeout holds on its own too (the workers are gone with
	// the generation: the probe alone must not be fooled by cached
	// metadata).
	waitFor(t, limit, "the broker timeout during the outage", func() bool {
		return strings.Contains(r.p.notReady(), "no broker reachable")
	})
	for until := time.Now().Add(4*r.p.probeEvery() + time.Second); time.Now().Before(until); time.Sleep(50 * time.Millisecond) {
		if why := r.p.notReady(); !strings.Contains(why, "no broker reachable") {
			t.Fatalf("a broker counted as reachable during the outage: %q", why)
		}
	}
	// Unready, not dead: liveness holds through the outage.
	for i := 0; i < 3; i++ {
		if code, body := status(r.p, "/healthz"); code != 200 {
			t.Fatalf("/healthz %d %q during the outage", code, body)
		}
		time.Sleep(cfg.ReadyBrokerTimeout / 2)
	}
	if code, _ := status(r.p, "/readyz"); code != 503 {
		t.Fatal("/readyz back to 200 while the broker is still down")
	}

	e.StartBroker(t)
	started := time.Now()
	waitFor(t, 120*time.Second, "/readyz 200 after the broker returned", func() bool {
		code, _ := status(r.p, "/readyz")
		return code == 200
	})
	t.Logf("200 again %s after the broker returned", time.Since(started).Round(10*time.Millisecond))
	e.Produce(t, input, genEvents(200, 32, "p")...)
	ends = endOffsets(t, e, input)
	waitFor(t, 90*time.Second, "processing after the outage", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if got := predictionsByOffset(t, e, cfg.Output); len(got) != 600 {
		t.Fatalf("%d distinct predictions, want 600", len(got))
	}
}

// Readiness and liveness reasons without a broker: not ready before the
// first generation, nor when no broker answered within the timeout; not
// live when the monitor loop stops ticking or a micro-batch computes for
// longer than the liveness timeout.
func TestReadyAndLiveReasons(t *testing.T) {
	cfg := Config{Brokers: []string{"127.0.0.1:1"}, Input: "in", Dim: 2, Models: testModels[:1],
		ReadyBrokerTimeout: time.Second, LivenessTimeout: time.Minute, Logger: quietLogger()}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if why := p.notReady(); !strings.Contains(why, "generation") {
		t.Fatalf("before joining: %q", why)
	}
	p.inGen.Store(true)
	p.contact()
	if why := p.notReady(); why != "" {
		t.Fatalf("joined, broker reached, no partitions: %q", why)
	}
	p.lastContact.Store(time.Now().Add(-2 * time.Second).UnixNano())
	if why := p.notReady(); !strings.Contains(why, "no broker reachable") {
		t.Fatalf("broker silent beyond the timeout: %q", why)
	}
	if code, _ := status(p, "/readyz"); code != 503 {
		t.Fatalf("/readyz %d with the broker silent", code)
	}
	if code, _ := status(p, "/healthz"); code != 200 {
		t.Fatalf("/healthz %d: an unreachable broker is not a liveness failure", code)
	}
	p.tick.Store(time.Now().Add(-2 * time.Minute).UnixNano())
	if code, body := status(p, "/healthz"); code != 503 || !strings.Contains(body, "monitor loop") {
		t.Fatalf("/healthz %d %q with the monitor loop silent for 2 min", code, body)
	}
	p.tick.Store(time.Now().UnixNano())
	w := &worker{}
	w.batchStart.Store(time.Now().Add(-2 * time.Minute).UnixNano())
	p.register(4, w)
	if why := p.wedged(); !strings.Contains(why, "partition 4") {
		t.Fatalf("a micro-batch computing for 2 min: %q", why)
	}
	w.batchStart.Store(0)
	if why := p.wedged(); why != "" {
		t.Fatalf("live: %q", why)
	}

	// Checkpoint age: 0 while the checkpoint is up to date, the time since
	// it once events were processed after it.
	now := time.Now()
	w.lastCkpt.Store(now.Add(-10 * time.Second).UnixNano())
	if a := w.checkpointAge(now); a != 0 {
		t.Fatalf("checkpoint age %s of an idle, checkpointed partition", a)
	}
	w.unckpt.Store(5)
	if a := w.checkpointAge(now); a != 10*time.Second {
		t.Fatalf("checkpoint age %s with 5 events after a checkpoint 10 s old", a)
	}
}

// The lag gauge follows processing within one micro-batch: with the whole
// backlog in one fetch, after every micro-batch it reads exactly the high
// watermark minus the next offset (the old gauge, set once per fetch, read
// the whole backlog until the fetch was done). New records produced while
// the worker is paused show up within a probe period.
func TestLagTracksProcessing(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	const n = 3000
	e.Produce(t, input, genEvents(n, 41, "l")...)
	end := endOffsets(t, e, input)[0]
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.ReadyBrokerTimeout = time.Second // probes every 333 ms
	cfg.FetchMaxBytes = 16 << 20         // the backlog in a few fetches (64 KiB, then doubling), each several batches
	var (
		mu      sync.Mutex
		p       *Pipeline
		errs    []string
		seen    = map[float64]bool{}
		pause   = make(chan struct{})
		paused  = make(chan int64, 1)
		pauseAt = int64(-1)
		hooked  = int64(-1) // the highest next the hook has finished with
	)
	var unpause sync.Once
	release := func() { unpause.Do(func() { close(pause) }) }
	cfg.afterBatch = func(part int, next int64) {
		mu.Lock()
		pp, at := p, pauseAt
		mu.Unlock()
		lag, ok := gauge(t, pp, "okstream_consumer_lag_records", map[string]string{"partition": "0"})
		mu.Lock()
		hooked = max(hooked, next)
		if next <= end {
			seen[lag] = true
			if !ok || lag != float64(end-next) {
				errs = append(errs, fmt.Sprintf("after the batch ending at %d: lag %v (present %v), want %d", next, lag, ok, end-next))
			}
		}
		mu.Unlock()
		if at >= 0 && next > at {
			mu.Lock()
			pauseAt = -1
			mu.Unlock()
			paused <- next
			<-pause
		}
	}
	pp, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	p = pp
	mu.Unlock()
	r := startPipeline(t, pp)
	// A failed assertion must not leave the worker parked in the hook, or
	// the pipeline could not stop. Cleanups run last-registered first, so
	// this one runs before startPipeline's.
	t.Cleanup(release)
	// Wait for the hook, not for Status: Status shows the batch's offset
	// before the hook of that batch has run.
	waitFor(t, 90*time.Second, "the backlog", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return hooked >= end
	})
	mu.Lock()
	nerr, firstErr, nseen := len(errs), "", len(seen)
	if nerr > 0 {
		firstErr = errs[0]
	}
	pauseAt = end
	mu.Unlock()
	if nerr > 0 {
		t.Fatalf("%d wrong lag readings, e.g. %s", nerr, firstErr)
	}
	if nseen < n/cfg.BatchSize {
		t.Fatalf("the lag took %d values over %d micro-batches", nseen, n/cfg.BatchSize)
	}

	// Pause the worker after its next micro-batch; produce more meanwhile.
	e.Produce(t, input, genEvents(150, 42, "m")...)
	next := <-paused
	e.Produce(t, input, genEvents(500, 43, "q")...)
	end2 := endOffsets(t, e, input)[0]
	waitFor(t, 30*time.Second, "the lag to include the records produced while paused", func() bool {
		lag, _ := gauge(t, pp, "okstream_consumer_lag_records", map[string]string{"partition": "0"})
		return lag == float64(end2-next)
	})
	release()
	waitFor(t, 60*time.Second, "the rest", func() bool { return caughtUp(map[int]int64{0: end2}, r) })
	waitFor(t, 10*time.Second, "lag 0", func() bool {
		lag, _ := gauge(t, pp, "okstream_consumer_lag_records", map[string]string{"partition": "0"})
		return lag == 0
	})
	wm, ok := gauge(t, pp, "okstream_partition_event_time_watermark_seconds", map[string]string{"partition": "0"})
	// genEvents' ts are 1700000000000 + i ms; the last 15 events of the
	// last stream are i = 485..499: lower median i = 492.
	if want := float64(1700000000000+492) / 1e3; !ok || wm != want {
		t.Fatalf("event-time watermark %v (present %v), want %v", wm, ok, want)
	}
}

// The per-model counters exist at 0 once a model starts on a partition and
// then increase by exactly the stream's labelled events, mistakes, square
// losses, log losses (online Platt calibration per partition, written out
// here), absolute errors, scores and updates (the offline path's scores
// give the truth); the baseline counters by the running class prior's and
// running mean's, per partition, recomputed here by hand.
func TestModelCountersCountTheStream(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	r := start(t, cfg)
	waitFor(t, 60*time.Second, "ready", r.p.Ready)
	counters := []string{"labeled_events", "mistakes", "loss", "log_loss", "abs_error", "predictions", "updates", "nonfinite_scores"}
	for _, m := range cfg.Models {
		for _, c := range counters {
			if v, ok := gauge(t, r.p, "okstream_model_"+c+"_total", map[string]string{"model": m.Name}); !ok || v != 0 {
				t.Fatalf("okstream_model_%s_total{model=%q} = %v (present %v) before any event, want 0", c, m.Name, v, ok)
			}
		}
	}
	const n = 1400
	e.Produce(t, input, genEvents(n, 51, "c")...)
	ends := endOffsets(t, e, input)
	waitFor(t, 90*time.Second, "processing", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}

	want := offline(t, e, input, cfg.Models, cfg.Dim)
	var labeled float64
	mistakes := make([]float64, len(cfg.Models))
	loss := make([]float64, len(cfg.Models))
	logLoss := make([]float64, len(cfg.Models))
	absErr := make([]float64, len(cfg.Models))
	type platt struct{ a, b float64 }
	calib := map[[2]int]*platt{} // (partition, model)
	type prior struct{ pos, neg, sum, n float64 }
	priors := map[int]*prior{}
	var bMistakes, bLogLoss, bSq, bAbs float64
	for _, rec := range e.ReadAll(t, input) {
		ev, err := codec.DecodeEvent(rec.Value, codec.Limits{Dim: cfg.Dim})
		if err != nil {
			t.Fatal(err)
		}
		if !ev.HasY {
			continue
		}
		labeled++
		pr := priors[rec.Partition]
		if pr == nil {
			pr = &prior{}
			priors[rec.Partition] = pr
		}
		if !((pr.pos-pr.neg)*ev.Y > 0) {
			bMistakes++
		}
		pp := (pr.pos + 1) / (pr.pos + pr.neg + 2)
		mean := 0.0
		if pr.n > 0 {
			mean = pr.sum / pr.n
		}
		if ev.Y > 0 {
			bLogLoss -= math.Log(pp)
			pr.pos++
		} else {
			bLogLoss -= math.Log(1 - pp)
			pr.neg++
		}
		bSq += (mean - ev.Y) * (mean - ev.Y)
		bAbs += math.Abs(mean - ev.Y)
		pr.sum += ev.Y
		pr.n++
		for i, s := range want.scores[[2]int64{int64(rec.Partition), rec.Offset}] {
			if learner.Mistake(s, ev.Y) {
				mistakes[i]++
			}
			loss[i] += (s - ev.Y) * (s - ev.Y)
			absErr[i] += math.Abs(s - ev.Y)
			c := calib[[2]int{rec.Partition, i}]
			if c == nil {
				c = &platt{a: 1}
				calib[[2]int{rec.Partition, i}] = c
			}
			p := 1 / (1 + math.Exp(-(c.a*s + c.b)))
			t01 := (ev.Y + 1) / 2
			logLoss[i] -= t01*math.Log(p) + (1-t01)*math.Log(1-p)
			c.a -= 0.05 * (p - t01) * s / (1 + s*s)
			c.b -= 0.05 * (p - t01) / (1 + s*s)
		}
	}
	for i, m := range cfg.Models {
		get := func(c string) float64 {
			v, _ := gauge(t, r.p, "okstream_model_"+c+"_total", map[string]string{"model": m.Name})
			return v
		}
		for c, w := range map[string]float64{"labeled_events": labeled, "mistakes": mistakes[i], "predictions": n, "updates": labeled, "nonfinite_scores": 0} {
			if got := get(c); got != w {
				t.Errorf("okstream_model_%s_total{model=%q} = %v, want %v", c, m.Name, got, w)
			}
		}
		for c, w := range map[string]float64{"loss": loss[i], "log_loss": logLoss[i], "abs_error": absErr[i]} {
			if got := get(c); math.Abs(got-w) > 1e-9*w || w == 0 {
				t.Errorf("okstream_model_%s_total{model=%q} = %v, want %v", c, m.Name, got, w)
			}
		}
	}
	for c, w := range map[string]float64{"labeled_events": labeled, "mistakes": bMistakes, "log_loss": bLogLoss, "loss": bSq, "abs_error": bAbs} {
		if got, _ := gauge(t, r.p, "okstream_baseline_"+c+"_total", nil); math.Abs(got-w) > 1e-9*w || w == 0 {
			t.Errorf("okstream_baseline_%s_total = %v, want %v", c, got, w)
		}
	}
	if mistakes[0] == 0 || labeled == n {
		t.Fatalf("a degenerate stream: %v mistakes, %v of %d labelled", mistakes[0], labeled, n)
	}
}

// One partition's checkpoints both damaged: that partition fails alone
// (okstream_partition_failed 1, /readyz 503 naming it, an error log) while
// the other partitions' predictions keep flowing; after a reset to an
// offset (what okstream checkpoints reset --to-offset does) it restores by
// itself, with fresh models, and processes from there.
func TestDamagedCheckpointFailsOnlyItsPartition(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 3, nil)
	e.Produce(t, input, genEvents(900, 61, "d")...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.CheckpointPartitions = 1 // raw records land where the store reads
	cfg.FailedRetry = 200 * time.Millisecond
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 90*time.Second, "first run", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	prefix := "okstream/v1/" + cfg.Group + "/" + cfg.Input + "/1/"
	e.Produce(t, cfg.Checkpoints,
		kafka.Message{Key: []byte(prefix + "A/m"), Value: []byte("OKCM forged")},
		kafka.Message{Key: []byte(prefix + "B/m"), Value: []byte("OKCM forged")})

	var logs kafkatest.SyncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	r = start(t, cfg)
	waitFor(t, 60*time.Second, "partition 1 failed", func() bool {
		v, _ := gauge(t, r.p, "okstream_partition_failed", map[string]string{"partition": "1"})
		return v == 1
	})
	e.Produce(t, input, genEvents(600, 62, "e")...)
	ends2 := endOffsets(t, e, input)
	waitFor(t, 90*time.Second, "partitions 0 and 2 to keep flowing", func() bool {
		return caughtUp(map[int]int64{0: ends2[0], 2: ends2[2]}, r)
	})
	var preds map[[2]int64][]byte
	missing := func(parts ...int) string {
		preds = predictionsByOffset(t, e, cfg.Output)
		for _, p := range parts {
			for o := ends[p]; o < ends2[p]; o++ {
				if preds[[2]int64{int64(p), o}] == nil {
					return fmt.Sprintf("partition %d offset %d", p, o)
				}
			}
		}
		return ""
	}
	waitFor(t, 30*time.Second, "the predictions of partitions 0 and 2", func() bool { return missing(0, 2) == "" })
	for o := ends[1]; o < ends2[1]; o++ {
		if preds[[2]int64{1, o}] != nil {
			t.Fatalf("the failed partition 1 published offset %d", o)
		}
	}
	for _, p := range []string{"0", "2"} {
		if v, _ := gauge(t, r.p, "okstream_partition_failed", map[string]string{"partition": p}); v != 0 {
			t.Fatalf("okstream_partition_failed{partition=%s} = %v", p, v)
		}
	}
	code, body := status(r.p, "/readyz")
	if code != 503 || !strings.Contains(body, "partition 1 failed") {
		t.Fatalf("/readyz %d %q with partition 1 failed", code, body)
	}
	if code, _ := status(r.p, "/healthz"); code != 200 {
		t.Fatalf("/healthz %d: a failed partition is not a liveness failure", code)
	}
	if !strings.Contains(logs.String(), "level=ERROR msg=\"partition failed") {
		t.Fatalf("no error log for the failed partition:\n%s", logs.String())
	}

	// Reset partition 1 to its old end with fresh models.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := checkpoint.Open(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: cfg.Checkpoints})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := checkpoint.ID{Group: cfg.Group, Topic: cfg.Input, Partition: 1}
	if n, err := s.Reset(ctx, id, &checkpoint.Checkpoint{ID: id, NextOffset: ends[1], Payload: ResetPayload()}); err != nil || n < 2 {
		t.Fatalf("reset: %d tombstones, %v", n, err)
	}
	waitFor(t, 60*time.Second, "partition 1 to restore and catch up", func() bool { return caughtUp(ends2, r) && r.p.Ready() })
	if v, _ := gauge(t, r.p, "okstream_partition_failed", map[string]string{"partition": "1"}); v != 0 {
		t.Fatalf("okstream_partition_failed{partition=1} = %v after the reset", v)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if m := missing(0, 1, 2); m != "" {
		t.Fatalf("%s: no prediction after the reset", m)
	}
	pr, _ := codec.DecodePrediction(preds[[2]int64{1, ends[1]}])
	if pr.Models[0].Updates != 0 {
		t.Fatalf("first prediction after the reset: %d updates, want fresh models", pr.Models[0].Updates)
	}
}

// Logs an operator can use: the first dead letter of a reason on a
// partition is a warning with its offset and detail, later ones are not
// repeated, and the progress line reports events per second, lag,
// checkpoint age, dead letters by reason, and each model's recent mistake
// rate and log loss beside the class prior's.
func TestProgressAndDeadLetterLogs(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	good := genEvents(300, 71, "g")
	bad := make([]kafka.Message, 5)
	for i := range bad {
		ev := codec.Event{Version: codec.EventVersion, X: make([]float64, testDim+3), Y: 1, HasY: true}
		b, err := codec.AppendEvent(nil, &ev)
		if err != nil {
			t.Fatal(err)
		}
		bad[i] = kafka.Message{Value: b}
	}
	e.Produce(t, input, append(good, bad...)...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.ProgressInterval = time.Second
	var logs kafkatest.SyncBuffer
	cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "processing", func() bool { return caughtUp(ends, r) })
	waitFor(t, 30*time.Second, "a progress line with the dead letters", func() bool {
		return strings.Contains(logs.String(), `"msg":"progress"`) && strings.Contains(logs.String(), `"dead_letters":{"dimension_mismatch":5}`)
	})
	out := logs.String()
	if c := strings.Count(out, `"msg":"dead letter (the first`); c != 1 {
		t.Fatalf("%d first-dead-letter warnings, want 1:\n%s", c, out)
	}
	for _, key := range []string{`"events_per_second":`, `"lag":`, `"max_checkpoint_age":`, `"ready":`,
		`"models":{"champion":{"labeled":`, `"challenger":{"labeled":`, `"mistake_rate":`, `"log_loss":`, `"baseline_class_prior":{"labeled":`} {
		if !strings.Contains(out, key) {
			t.Fatalf("progress line without %s:\n%s", key, out)
		}
	}
}

// The broker timeout on its own: fetches and ListOffsets fail (their
// connections are closed) while the group's heartbeats still succeed, so
// the generation lives on; /readyz turns 503 "no broker reachable" after
// --ready-broker-timeout, /healthz stays 200, and both recover when the
// requests succeed again. Embedded broker only (it filters by request).
func TestReadinessBrokerTimeout(t *testing.T) {
	e := kafkatest.New(t)
	if e.Real {
		t.Skip("filters requests of the embedded broker")
	}
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	e.Produce(t, input, genEvents(200, 81, "t")...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.ReadyBrokerTimeout = time.Second
	var cut atomic.Bool
	e.Cluster.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		e.Cluster.KeepControl()
		if k := req.Key(); cut.Load() && (k == 1 || k == 2) { // Fetch, ListOffsets
			return nil, errors.New("test: data path cut"), true
		}
		return nil, nil, false
	})
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "processing and readiness", func() bool { return caughtUp(ends, r) && r.p.Ready() })
	cut.Store(true)
	waitFor(t, cfg.ReadyBrokerTimeout+r.p.probeEvery()+3*time.Second, "503 no broker reachable", func() bool {
		return strings.Contains(r.p.notReady(), "no broker reachable")
	})
	if !r.p.inGen.Load() {
		t.Fatal("the generation ended: the test meant to keep it alive")
	}
	if code, _ := status(r.p, "/healthz"); code != 200 {
		t.Fatalf("/healthz %d while the brokers do not answer fetches", code)
	}
	cut.Store(false)
	waitFor(t, 30*time.Second, "ready again", r.p.Ready)
}

// A scrape with more series than the registry's metric channel buffers
// (1000: about 130 owned partitions) returns, and leaves the pipeline's
// lock free. The live collector used to send its metrics while holding
// the lock that okstream_ready's callback takes in the gathering
// goroutine: past the buffer, the scrape and every worker that then took
// the lock (at its next checkpoint) hung for ever. Seen with 64 partitions,
// where the other collectors' per-partition series fill the buffer.
func TestScrapeManyPartitions(t *testing.T) {
	e := kafkatest.New(t)
	p, err := New(testConfig(e, e.Name("in"), e.Name("g"), e.Name("out")))
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	for n := range 300 {
		w := &worker{}
		w.hwm.Store(-1)
		w.pos.Store(-1)
		p.live[n] = w
	}
	p.mu.Unlock()
	for i := range 20 {
		done := make(chan int)
		go func() {
			mfs, err := p.Registry().Gather()
			if err != nil {
				t.Error(err)
			}
			n := 0
			for _, mf := range mfs {
				n += len(mf.GetMetric())
			}
			done <- n
		}()
		select {
		case n := <-done:
			if n < 300*5 {
				t.Fatalf("scrape %d: %d series, want at least %d (5 per live partition)", i, n, 300*5)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("scrape %d did not return within 30 s (deadlocked on the pipeline's lock)", i)
		}
	}
	if !p.mu.TryLock() {
		t.Fatal("the pipeline's lock is still held after the scrapes")
	}
	p.mu.Unlock()
}
