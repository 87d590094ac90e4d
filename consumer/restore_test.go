package consumer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/internal/kafkatest"
)

// invalidCount reads okstream_checkpoint_invalid_total{partition, reason}.
func invalidCount(p *Pipeline, part int, reason checkpoint.Reason) float64 {
	var pm dto.Metric
	if err := p.m.ckptInvalid.WithLabelValues(partLabel(part), string(reason)).Write(&pm); err != nil {
		return -1
	}
	return pm.GetCounter().GetValue()
}

// The newest checkpoint's records are intact but its payload does not
// decode (as a forged state with recomputed checksums would): the worker
// reports it and restores the previous one, then keeps processing. With
// both slots' manifests damaged, the partition refuses to start with a
// message naming the reasons.
func TestRestoreFallsBackAndRefuses(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	e.Produce(t, input, genEvents(600, 8, "r")...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.CheckpointPartitions = 1 // so the test can write raw records to the checkpoints' partition
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "processing", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := checkpoint.Open(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: cfg.Checkpoints, Partitions: cfg.CheckpointPartitions})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := checkpoint.ID{Group: cfg.Group, Topic: cfg.Input, Partition: 0}
	good, _, err := s.Load(ctx, id)
	if err != nil || good == nil {
		t.Fatalf("no checkpoint after the first run: %v", err)
	}
	bad := checkpoint.Epoch{Generation: good.Epoch.Generation, Seq: good.Epoch.Seq + 1}
	if _, err := s.Save(ctx, checkpoint.Checkpoint{ID: id, Epoch: bad, NextOffset: 600, Payload: []byte("not a payload")}); err != nil {
		t.Fatal(err)
	}

	r = start(t, cfg)
	waitFor(t, 60*time.Second, "ready after the fallback", r.p.Ready)
	if n := invalidCount(r.p, 0, checkpoint.ReasonPayload); n != 1 {
		t.Fatalf("okstream_checkpoint_invalid_total{reason=payload} = %v, want 1", n)
	}
	e.Produce(t, input, genEvents(100, 9, "s")...)
	ends = endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "processing after the fallback", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}

	// The second run checkpointed over the undecodable one.
	cp, _, err := s.Load(ctx, id)
	if err != nil || cp == nil || cp.NextOffset != 700 {
		t.Fatalf("after the second run: %+v %v", cp, err)
	}
	if _, err := DescribePayload(cp.Payload); err != nil {
		t.Fatal(err)
	}

	// Both manifests damaged: no fallback left.
	prefix := "okstream/v1/" + cfg.Group + "/" + cfg.Input + "/0/"
	e.Produce(t, cfg.Checkpoints,
		kafka.Message{Key: []byte(prefix + "A/m"), Value: []byte("OKCM forged")},
		kafka.Message{Key: []byte(prefix + "B/m"), Value: []byte("OKCM forged")})
	cfg.FailedRetry = 200 * time.Millisecond
	r = start(t, cfg)
	waitFor(t, 60*time.Second, "the partition reported failed", func() bool {
		st, _ := r.p.Status()
		return len(st) == 1 && st[0].Failed != ""
	})
	st, _ := r.p.Status()
	if why := st[0].Failed; !strings.Contains(why, checkpoint.ErrNoValidCheckpoint.Error()) || !strings.Contains(why, string(checkpoint.ReasonMalformed)) || !strings.Contains(why, "okstream checkpoints reset") {
		t.Fatalf("failure %q: want ErrNoValidCheckpoint naming the reason and the reset command", why)
	}
	if n := invalidCount(r.p, 0, checkpoint.ReasonMalformed); n < 2 {
		t.Fatalf("okstream_checkpoint_invalid_total{reason=malformed} = %v, want at least 2", n)
	}
	if r.p.Ready() || !strings.Contains(r.p.notReady(), "partition 0 failed") {
		t.Fatalf("ready with a failed partition: %q", r.p.notReady())
	}
	select {
	case err := <-r.done:
		t.Fatalf("the pipeline stopped: %v", err)
	default:
	}
}

// A changed --dim is a configuration error, not damage: when it is why no
// checkpoint restores, the pipeline stops with ErrDimensionChanged (as for
// a changed model spec) rather than failing every partition one by one.
func TestDimensionChangeStopsThePipeline(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	e.Produce(t, input, genEvents(300, 91, "x")...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "processing", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	cfg.Dim = testDim + 1
	r = start(t, cfg)
	select {
	case err := <-r.done:
		r.done <- err
		if !errors.Is(err, ErrDimensionChanged) || !strings.Contains(err.Error(), "--dim") {
			t.Fatalf("want ErrDimensionChanged naming --dim, got %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the pipeline kept running with checkpoints of another dimension")
	}
}
