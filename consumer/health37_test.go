package consumer

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/internal/kafkatest"
	"okstream/learner/rng"
)

// Issue 37: checkpoint failures, lost checkpoints and dead letters must show
// in readiness and in the exit code.

// deleteTopic deletes a topic of the test broker.
func deleteTopic(t *testing.T, e *kafkatest.Env, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := e.Client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	if err := resp.Errors[topic]; err != nil {
		t.Fatalf("deleting %s: %v", topic, err)
	}
}

// The checkpoint topic deleted while running: the failed checkpoints are
// retried with a backoff (a bounded number of attempts, where they used to
// be retried after every fetch), /readyz turns 503 with the reason once
// they have failed for longer than CheckpointFailingAfter, and the failed
// final checkpoint at shutdown is an error of Run (okstream run exits 1).
func TestCheckpointTopicDeletedBacksOffAndFailsShutdown(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	e.Produce(t, input, genEvents(300, 71, "a")...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.CheckpointEvery = 50
	cfg.CheckpointFailingAfter = 500 * time.Millisecond
	cfg.ShutdownTimeout = 5 * time.Second
	var logs kafkatest.SyncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "the first run to checkpoint", func() bool {
		st, _ := r.p.Status()
		return caughtUp(ends, r) && len(st) == 1 && st[0].Durable == ends[0]
	})
	waitFor(t, 30*time.Second, "ready", r.p.Ready)

	deleteTopic(t, e, cfg.Checkpoints)
	e.Produce(t, input, genEvents(200, 72, "b")...) // checkpoints are due again
	errs := func() float64 { return counterValue(r.p.m.ckptTotal.WithLabelValues("error")) }
	waitFor(t, 60*time.Second, "a failed checkpoint", func() bool { return errs() >= 1 })
	from := errs()
	const window = 3 * time.Second
	time.Sleep(window)
	// Backoff 100 ms doubling: attempts 0.1, 0.3, 0.7, 1.5, 3.1 s after the
	// first failure, 5 at most in the window (attempts that take time make
	// fewer). Without it the idle partition tried after every fetch (50 ms).
	if n := errs() - from; n > 8 {
		t.Fatalf("%v failed checkpoint attempts in %s: no backoff", n, window)
	}
	code, body := status(r.p, "/readyz")
	if code != 503 || !strings.Contains(body, "partition 0 checkpoint: failing for") {
		t.Fatalf("/readyz %d %q with the checkpoint topic deleted", code, body)
	}
	if v, ok := gauge(t, r.p, "okstream_checkpoint_failing_seconds", map[string]string{"partition": "0"}); !ok || v <= 0 {
		t.Fatalf("okstream_checkpoint_failing_seconds = %v (%v)", v, ok)
	}
	if n := strings.Count(logs.String(), "level=ERROR msg=\"checkpoint"); n != 1 {
		t.Fatalf("%d checkpoint error logs, want the first failure only (then one a minute):\n%s", n, logs.String())
	}
	err := r.shutdown(t)
	if err == nil || !strings.Contains(err.Error(), "final checkpoint failed") {
		t.Fatalf("Run returned %v after a failed final checkpoint; want an error", err)
	}
}

// A checkpoint failure's backoff: 100 ms doubling to the cap, an attempt
// allowed only when it has passed, reset by a success; readiness names it
// once it has lasted longer than CheckpointFailingAfter.
func TestCheckpointBackoffSteps(t *testing.T) {
	p := &Pipeline{cfg: Config{CheckpointFailingAfter: time.Second, CheckpointMaxAge: -1, DeadLetterReadyShare: -1}}
	w := &worker{p: p, part: 4, log: slog.New(slog.NewTextHandler(&kafkatest.SyncBuffer{}, nil))}
	want := checkpointBackoffMin
	for i := 0; i < 12; i++ {
		w.noteCheckpoint(fmt.Errorf("boom %d", i))
		if w.ckh.backoff != want {
			t.Fatalf("failure %d: backoff %s, want %s", i+1, w.ckh.backoff, want)
		}
		if w.checkpointDue(time.Now()) || !w.checkpointDue(time.Now().Add(want)) {
			t.Fatalf("failure %d: an attempt is due before the backoff has passed, or not after", i+1)
		}
		want = min(2*want, checkpointBackoffMax)
	}
	w.ckh.since = time.Now().Add(-2 * time.Second)
	if why := strings.Join(w.degraded(time.Now()), "; "); !strings.Contains(why, "partition 4 checkpoint: failing for 2s (12 attempts, limit 1s): boom 11") {
		t.Fatalf("degraded %q", why)
	}
	w.noteCheckpoint(nil)
	if !w.checkpointDue(time.Now()) || w.ckh.fails != 0 || len(w.degraded(time.Now())) != 0 {
		t.Fatalf("a success did not reset the backoff: %+v", &w.ckh)
	}
}

// A partition whose group has a committed offset but which has no
// checkpoint (here: another checkpoint topic, as after the topic was
// deleted) refuses to start fresh models, naming --allow-fresh-start, and
// is counted; with AllowFreshStart it starts fresh (and warns).
func TestCommittedOffsetWithoutCheckpoint(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	e.Produce(t, input, genEvents(400, 81, "c")...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.FailedRetry = 200 * time.Millisecond
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "the first run", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}

	cfg.Checkpoints = e.Name("ckpt-lost") // the checkpoints are gone; the group's offsets are not
	r = start(t, cfg)
	waitFor(t, 60*time.Second, "both partitions failed", func() bool {
		st, _ := r.p.Status()
		failed := 0
		for _, s := range st {
			if strings.Contains(s.Failed, "--allow-fresh-start") {
				failed++
			}
		}
		return failed == 2
	})
	code, body := status(r.p, "/readyz")
	if code != 503 || !strings.Contains(body, "partition 0 failed") || !strings.Contains(body, "committed offset") {
		t.Fatalf("/readyz %d %q", code, body)
	}
	if v := counterValue(r.p.m.ckptMissing.WithLabelValues("1")); v < 1 {
		t.Fatalf("okstream_checkpoint_missing_total{partition=1} = %v", v)
	}
	if n := counterValue(r.p.m.restores.WithLabelValues("none")); n != 0 {
		t.Fatalf("%v partitions started fresh without --allow-fresh-start", n)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}

	cfg.AllowFreshStart = true
	var logs kafkatest.SyncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	r = start(t, cfg)
	waitFor(t, 60*time.Second, "a fresh start with --allow-fresh-start", func() bool { return caughtUp(ends, r) && r.p.Ready() })
	if v := counterValue(r.p.m.ckptMissing.WithLabelValues("0")); v != 1 {
		t.Fatalf("okstream_checkpoint_missing_total{partition=0} = %v, want 1", v)
	}
	if !strings.Contains(logs.String(), "level=WARN msg=\"no checkpoint although the group has a committed offset") {
		t.Fatalf("no warning for the fresh start:\n%s", logs.String())
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
}

// dimEvents makes n labelled events of dim features.
func dimEvents(n, dim int, seed uint64) []kafka.Message {
	src := rng.New(seed)
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		ev := codec.Event{Version: codec.EventVersion, ID: fmt.Sprintf("d%d-%d", seed, i), Y: 1, HasY: true, X: make([]float64, dim)}
		for j := range ev.X {
			ev.X[j] = 2*src.Float64() - 1
		}
		if ev.X[0] < 0 {
			ev.Y = -1
		}
		b, err := codec.AppendEvent(nil, &ev)
		if err != nil {
			panic(err)
		}
		msgs[i] = kafka.Message{Value: b}
	}
	return msgs
}

// A wrong --dim dead-letters every event: /readyz turns 503 naming the
// partition, the share and the reason; it recovers once the share of the
// last DeadLetterWindow events drops below the limit.
func TestDeadLetterShareUnready(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	e.Produce(t, input, dimEvents(150, 5, 1)...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.Dim = 8 // the events have 5 features
	cfg.DeadLetterWindow = 100
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "processing", func() bool { return caughtUp(ends, r) })
	code, body := status(r.p, "/readyz")
	if code != 503 || !strings.Contains(body, "partition 0: 100% of its last 100 events dead-lettered (limit 50%), mostly dimension_mismatch: ") || !strings.Contains(body, "want 8") {
		t.Fatalf("/readyz %d %q with every event dead-lettered", code, body)
	}
	if v, _ := gauge(t, r.p, "okstream_partition_dead_letter_share", map[string]string{"partition": "0"}); v != 1 {
		t.Fatalf("okstream_partition_dead_letter_share = %v, want 1", v)
	}
	e.Produce(t, input, dimEvents(60, 8, 2)...) // 60 of the last 100 are fine
	ends = endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "ready once the share drops", func() bool { return caughtUp(ends, r) && r.p.Ready() })
	if v, _ := gauge(t, r.p, "okstream_partition_dead_letter_share", map[string]string{"partition": "0"}); v != 0.4 {
		t.Fatalf("okstream_partition_dead_letter_share = %v, want 0.4", v)
	}
}

// The dead-letter window: a ring of the last events, the share and the
// commonest reason over it; evaluated from a tenth of the window on.
func TestDeadLetterWindow(t *testing.T) {
	var d dlWindow
	d.add(5, 100)
	d.note("dimension_mismatch", "x: 3 features, want 8")
	d.add(1, 100)
	if why := d.unready(2, 0.5, 100); why != "" {
		t.Fatalf("evaluated on 6 events of a window of 100: %q", why)
	}
	for i := 0; i < 20; i++ {
		d.note("dimension_mismatch", "x: 3 features, want 8")
	}
	d.note("not_msgpack", "garbage")
	d.add(21, 100)
	// 27 events: 5 fine, 22 dead letters (21 dimension_mismatch).
	if why := d.unready(2, 0.5, 100); why != "partition 2: 81% of its last 27 events dead-lettered (limit 50%), mostly dimension_mismatch: x: 3 features, want 8" {
		t.Fatalf("unready %q", why)
	}
	d.add(100, 100) // a full window of fine events pushes them all out
	if why, s := d.unready(2, 0.5, 100), d.share(); why != "" || s != 0 || d.n != 100 {
		t.Fatalf("after 100 fine events: %q, share %v, %d held", why, s, d.n)
	}
	if why := (&dlWindow{}).unready(0, -1, 100); why != "" {
		t.Fatal(why)
	}
}
