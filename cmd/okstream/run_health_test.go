package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/consumer"
	"okstream/internal/kafkatest"
)

// SIGTERM with the checkpoint topic deleted: the final checkpoint fails,
// and okstream run exits 1 saying so (issue 37: it logged the failure and
// exited 0).
func TestRunExitsNonZeroWhenTheFinalCheckpointFails(t *testing.T) {
	e := kafkatest.New(t)
	in := e.Name("in")
	e.CreateTopic(t, in, 1, nil)
	e.Produce(t, in, events(200, 2, 11)...)
	ckpt := e.Name("ckpt")
	args := []string{"--brokers", strings.Join(e.Brokers, ","), "--input", in, "--dim", "2", "--group", e.Name("g"),
		"--model", "fogd:sigma=1,budget=20", "--checkpoint-every", "50", "--checkpoint-topic", ckpt,
		"--session-timeout", "6s", "--heartbeat-interval", "300ms", "--fetch-max-wait", "50ms",
		"--shutdown-timeout", "5s", "--metrics-addr", ""}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	var errb kafkatest.SyncBuffer
	go func() { done <- runRunContext(ctx, args, io.Discard, &errb, func(string) string { return "" }) }()
	predictions := func() int {
		recs, _ := kafkatest.ReadAll(context.Background(), e.Client, in+".predictions")
		return len(recs)
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; stderr:\n%s", what, errb.String())
			}
		}
	}
	waitUntil("the first checkpoints", func() bool {
		recs, _ := kafkatest.ReadAll(context.Background(), e.Client, ckpt)
		return predictions() == 200 && len(recs) > 0
	})
	dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer dcancel()
	if resp, err := e.Client.DeleteTopics(dctx, &kafka.DeleteTopicsRequest{Topics: []string{ckpt}}); err != nil || resp.Errors[ckpt] != nil {
		t.Fatalf("deleting the checkpoint topic: %v %v", err, resp)
	}
	e.Produce(t, in, events(100, 2, 12)...)
	waitUntil("the events after the deletion", func() bool { return predictions() == 300 })
	waitUntil("a failed checkpoint", func() bool { return strings.Contains(errb.String(), "checkpoint failed; retrying with backoff") })
	cancel() // SIGTERM
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(errb.String(), "okstream run: partition 0: the final checkpoint failed") {
			t.Fatalf("exit %d after a failed final checkpoint, want 1; stderr:\n%s", code, errb.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("okstream run did not stop")
	}
}

// The health flags map onto the Config: 0 takes the defaults derived from
// --checkpoint-interval, --dead-letter-ready-share 0 turns the check off.
func TestHealthFlags(t *testing.T) {
	for _, tc := range []struct {
		args          []string
		failing, age  time.Duration
		share         float64
		window        int
		allowFreshStr bool
	}{
		{[]string{"--checkpoint-interval", "10s"}, 10 * time.Second, 30 * time.Second, 0.5, 1000, false},
		{[]string{"--checkpoint-failing-after", "1m", "--checkpoint-max-age", "-1s", "--dead-letter-ready-share", "0", "--dead-letter-window", "50", "--allow-fresh-start"}, time.Minute, -time.Second, -1, 50, true},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var f runFlags
		f.register(fs)
		if err := fs.Parse(append([]string{"--brokers", "b:9092", "--input", "in", "--dim", "2"}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		cfg, err := f.pipelineConfig(slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		if cfg.CheckpointFailingAfter != tc.failing || cfg.CheckpointMaxAge != tc.age || cfg.DeadLetterReadyShare != tc.share ||
			cfg.DeadLetterWindow != tc.window || cfg.AllowFreshStart != tc.allowFreshStr {
			t.Errorf("%v: failing %s, age %s, share %v, window %d, allow %v", tc.args, cfg.CheckpointFailingAfter, cfg.CheckpointMaxAge,
				cfg.DeadLetterReadyShare, cfg.DeadLetterWindow, cfg.AllowFreshStart)
		}
	}
	bad := consumer.Config{Brokers: []string{"b:9092"}, Input: "in", Dim: 2, Passthrough: true, DeadLetterReadyShare: 1.5, DeadLetterWindow: 2000000}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "dead-letter ready share 1.5") || !strings.Contains(err.Error(), "dead-letter window 2000000") {
		t.Fatalf("Validate: %v", err)
	}
}
