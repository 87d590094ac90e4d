package consumer

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"okstream/codec"
	"okstream/internal/kafkatest"
)

func TestOffsetSet(t *testing.T) {
	s := &offsetSet{base: 100}
	for _, o := range []int64{100, 163, 164, 1000, 99} {
		if s.add(o) {
			t.Fatalf("%d reported as a duplicate", o)
		}
	}
	if !s.add(163) || s.n != 4 {
		t.Fatalf("duplicate not reported, or count %d, want 4 (99 is below the base)", s.n)
	}
	for o, want := range map[int64]bool{99: false, 100: true, 101: false, 163: true, 164: true, 999: false, 1000: true, 5000: false} {
		if s.has(o) != want {
			t.Fatalf("has(%d) = %v", o, !want)
		}
	}
	var none *offsetSet
	if none.has(1) {
		t.Fatal("a nil set has nothing")
	}
}

// withGarbage returns the events with every 37th replaced by an undecodable
// record (a dead letter).
func withGarbage(msgs []kafka.Message) []kafka.Message {
	for i := 5; i < len(msgs); i += 37 {
		msgs[i] = kafka.Message{Key: msgs[i].Key, Value: []byte("not msgpack " + strconv.Itoa(i))}
	}
	return msgs
}

// outputPerOffset reads the predictions and dead letters of cfg and counts
// the records of each source (partition, offset) across both topics,
// failing on records of a partition in another output partition.
func outputPerOffset(t *testing.T, e *kafkatest.Env, cfg Config) (count map[[2]int64]int, dlq int) {
	t.Helper()
	count = map[[2]int64]int{}
	preds := predictionsByOffset(t, e, cfg.Output) // fails on duplicates
	for k := range preds {
		count[k]++
	}
	for _, r := range e.ReadAll(t, cfg.Output) {
		pr, _ := codec.DecodePredictionAny(r.Value)
		if int(pr.Partition) != r.Partition {
			t.Fatalf("prediction of input partition %d in output partition %d", pr.Partition, r.Partition)
		}
	}
	for _, r := range e.ReadAll(t, cfg.DeadLetter) {
		var src string
		for _, h := range r.Headers {
			if h.Key == HeaderSource {
				src = string(h.Value)
			}
		}
		f := strings.Split(src, "/")
		p, _ := strconv.Atoi(f[len(f)-2])
		o, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
		if p != r.Partition {
			t.Fatalf("dead letter of input partition %d in partition %d", p, r.Partition)
		}
		count[[2]int64{int64(p), o}]++
		dlq++
	}
	return count, dlq
}

// exactlyOnce checks that every input offset has exactly one output record.
func exactlyOnce(t *testing.T, e *kafkatest.Env, cfg Config, ends map[int]int64) {
	t.Helper()
	count, dlq := outputPerOffset(t, e, cfg)
	total := 0
	for p, end := range ends {
		for o := int64(0); o < end; o++ {
			if n := count[[2]int64{int64(p), o}]; n != 1 {
				t.Fatalf("input partition %d offset %d: %d output records, want exactly 1", p, o, n)
			}
		}
		total += int(end)
	}
	if len(count) != total || dlq == 0 {
		t.Fatalf("%d sources in the output for %d input offsets (%d dead letters, want some)", len(count), total, dlq)
	}
}

// Effectively-once delivery across many kills (no final checkpoint, writes
// in flight may or may not land) and a rebalance 1 → 3 → 1 in which two of
// the three instances are killed: every input offset has exactly one
// prediction or dead letter, the predictions equal an uninterrupted
// run's, and the final models are bit-identical to it.
func TestEffectivelyOnceKillsAndRebalance(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 3, nil)
	events := withGarbage(genEvents(4500, 5, "eo"))
	produced := make(chan struct{})
	go func() { // events keep arriving while instances are killed
		defer close(produced)
		w := e.Writer(input)
		defer w.Close()
		for i := 0; i < len(events); i += 150 {
			if err := w.WriteMessages(context.Background(), events[i:i+150]...); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()

	cfg := testConfig(e, input, e.Name("eo"), e.Name("eo-preds"))
	cfg.CheckpointEvery = 130
	suppressed := 0.0
	kills := 0
	for i := 0; i < 12; i++ { // one instance, killed after 10 + 5·i new predictions
		r := start(t, cfg)
		at := float64(10 + 5*i)
		waitFor(t, 90*time.Second, fmt.Sprintf("%v predictions", at), func() bool {
			return r.p.m.predictionsCount() >= at
		})
		r.kill(t)
		kills++
		suppressed += counterValue(r.p.dm.suppressed.WithLabelValues("restore"))
	}
	// 1 → 3 → 1: A, then B and C join; B and C are killed; A takes over.
	a := start(t, cfg)
	b := start(t, cfg)
	c := start(t, cfg)
	waitFor(t, 90*time.Second, "three instances predicting", func() bool {
		return owned(a) == 1 && owned(b) == 1 && owned(c) == 1 &&
			b.p.m.predictionsCount() > 0 && c.p.m.predictionsCount() > 0
	})
	select {
	case <-produced:
		t.Fatal("the events were all produced before the rebalance's kills: the test is too slow to test them mid-stream")
	default:
	}
	b.kill(t)
	c.kill(t)
	kills += 2
	<-produced
	ends := endOffsets(t, e, input)
	waitFor(t, 90*time.Second, "A to catch up alone", func() bool { return owned(a) == 3 && caughtUp(ends, a) })
	if err := a.shutdown(t); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*running{a, b, c} {
		suppressed += counterValue(x.p.dm.suppressed.WithLabelValues("restore"))
		if d := counterValue(x.p.dm.duplicates.WithLabelValues("predictions")); d != 0 {
			t.Fatalf("%v duplicates detected", d)
		}
	}
	if suppressed == 0 {
		t.Fatal("no output was suppressed after the kills: they did not hit between checkpoints")
	}

	exactlyOnce(t, e, cfg, ends)

	preds := sameAsReference(t, e, cfg, ends)
	t.Logf("%d kills: %d output records for %d input offsets, %v recomputed without publishing",
		kills, preds+len(e.ReadAll(t, cfg.DeadLetter)), ends[0]+ends[1]+ends[2], suppressed)
}

// Writes whose acknowledgement is lost after the broker applied them (what
// a broker restart or a leader change does to writes in flight; here the
// broker answers NOT_ENOUGH_REPLICAS_AFTER_APPEND, having appended): in
// at-least-once mode the retries duplicate records; in effectively-once
// mode the writer finds them in the output before retrying, and does not.
func TestEffectivelyOnceLostAcks(t *testing.T) {
	if kafkatest.New(t).Real {
		t.Skip("needs the embedded broker's fault injection")
	}
	for _, mode := range []string{DeliveryAtLeastOnce, DeliveryEffectivelyOnce} {
		t.Run(mode, func(t *testing.T) {
			e, input, ends := newInput(t, 2, withGarbage(genEvents(2000, 9, "la")))
			cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
			cfg.Delivery = mode
			var faults []*kfake.FaultHandle
			for _, topic := range []string{cfg.Output, cfg.DeadLetter} {
				faults = append(faults, e.Cluster.Fault(kfake.Fault{
					Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Err: kerr.NotEnoughReplicasAfterAppend, Count: 3,
				}))
			}
			r := start(t, cfg)
			waitFor(t, 90*time.Second, "the run", func() bool { return caughtUp(ends, r) })
			if err := r.shutdown(t); err != nil {
				t.Fatal(err)
			}
			for i, f := range faults {
				if f.Hits() != 3 {
					t.Fatalf("fault %d hit %d times, want 3", i, f.Hits())
				}
			}
			if mode == DeliveryAtLeastOnce {
				n := len(e.ReadAll(t, cfg.Output)) + len(e.ReadAll(t, cfg.DeadLetter))
				if n <= 2000 {
					t.Fatalf("%d output records for 2000 events: the lost acknowledgements did not duplicate anything at least once", n)
				}
				return
			}
			exactlyOnce(t, e, cfg, ends)
			if s := counterValue(r.p.dm.suppressed.WithLabelValues("retry")); s == 0 {
				t.Fatal("nothing suppressed before the retries")
			}
		})
	}
}

// Effectively-once delivery refuses output topics whose partition count is
// not the input's, saying what to do.
func TestEffectivelyOncePartitionCount(t *testing.T) {
	e, input, _ := newInput(t, 2, genEvents(10, 1, "pc"))
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	e.CreateTopic(t, cfg.Output, 3, nil)
	err := runRefused(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "has 3 partitions, the input") || !strings.Contains(err.Error(), "--delivery at-least-once") {
		t.Fatalf("Run: %v, want the partition-count refusal", err)
	}
	cfg.Delivery = DeliveryAtLeastOnce
	r := start(t, cfg)
	waitFor(t, 30*time.Second, "joining", func() bool { return r.p.inGen.Load() })
}

// counterValue reads a counter.
func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

// A recovery far behind the output: the checkpoint is ~24 micro-batches
// before the end of the output; the worker reads only the output's last
// micro-batch (okstream-unit), recomputes the rest without publishing it,
// and the output keeps exactly one record per input offset.
func TestEffectivelyOnceLongRecovery(t *testing.T) {
	e, input, ends := newInput(t, 1, withGarbage(genEvents(3000, 13, "lr")))
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.BatchSize, cfg.CheckpointEvery = 50, 1800
	defer func(n int64) { publishedChunk = n }(publishedChunk)
	publishedChunk = 64 // smaller than what the recovery recomputes
	r := start(t, cfg)
	waitFor(t, 90*time.Second, "the first run", func() bool { return caughtUp(ends, r) })
	r.kill(t)
	_, next := checkpointStates(t, e, cfg, 1)
	if next[0] > 2000 || next[0] == 0 {
		t.Fatalf("checkpoint at %d: want one well before the end", next[0])
	}
	r = start(t, cfg)
	waitFor(t, 90*time.Second, "the recovery", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	// (the kill may cut the last micro-batches' writes: they are published now)
	if s := counterValue(r.p.dm.suppressed.WithLabelValues("restore")); s > float64(3000-next[0]) || s < float64(3000-next[0])-300 {
		t.Fatalf("%v records suppressed after the restore at %d, want about %d", s, next[0], 3000-next[0])
	}
	exactlyOnce(t, e, cfg, ends)
}

// A broker restart while events arrive and output is being written (real
// Kafka only: OKSTREAM_TEST_RESTART_CMD restarts it keeping its data, e.g.
// "KAFKA_PORT=… ../scripts/kafka.sh restart --keep-data"): writes and fetches
// fail and are retried, writes in flight may have landed; every input offset
// still has exactly one output record.
func TestEffectivelyOnceBrokerRestart(t *testing.T) {
	restart := os.Getenv("OKSTREAM_TEST_RESTART_CMD")
	e := kafkatest.New(t)
	if !e.Real || restart == "" {
		t.Skip("needs a real Kafka and OKSTREAM_TEST_RESTART_CMD")
	}
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	events := withGarbage(genEvents(12000, 17, "br"))
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.CheckpointEvery = 700
	r := start(t, cfg)
	produced := make(chan struct{})
	go func() { // 12,000 events over about 12 s, retried across the restart
		defer close(produced)
		w := e.Writer(input)
		defer w.Close()
		for i := 0; i < len(events); i += 200 {
			for try := 0; ; try++ {
				err := w.WriteMessages(context.Background(), events[i:i+200]...)
				if err == nil {
					break
				}
				if try > 120 {
					t.Error(err)
					return
				}
				time.Sleep(500 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	waitFor(t, 90*time.Second, "2,000 predictions", func() bool { return r.p.m.predictionsCount() >= 2000 })
	out, err := exec.Command("sh", "-c", restart).CombinedOutput()
	if err != nil {
		t.Fatalf("restarting the broker: %v\n%s", err, out)
	}
	<-produced
	ends := endOffsets(t, e, input)
	waitFor(t, 3*time.Minute, "catching up after the restart", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, e, cfg, ends)
	t.Logf("broker restarted after %v predictions; suppressed before retries: %v; duplicates detected: %v",
		2000, counterValue(r.p.dm.suppressed.WithLabelValues("retry")), counterValue(r.p.dm.duplicates.WithLabelValues("predictions")))
}

// newInput creates an input topic with msgs, returning its end offsets.
func newInput(t *testing.T, parts int, msgs []kafka.Message) (*kafkatest.Env, string, map[int]int64) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, parts, nil)
	e.Produce(t, input, msgs...)
	return e, input, endOffsets(t, e, input)
}

// sameAsReference runs cfg's input uninterrupted in another group
// (at-least-once: the values are the same) and checks that cfg's
// predictions and final models equal its; it returns the prediction count.
func sameAsReference(t *testing.T, e *kafkatest.Env, cfg Config, ends map[int]int64) int {
	t.Helper()
	ref := testConfig(e, cfg.Input, e.Name("ref"), e.Name("ref-preds"))
	ref.Models, ref.Delivery = cfg.Models, DeliveryAtLeastOnce
	r := start(t, ref)
	waitFor(t, 90*time.Second, "the reference run", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	refPreds, preds := predictionsByOffset(t, e, ref.Output), predictionsByOffset(t, e, cfg.Output)
	if len(preds) != len(refPreds) {
		t.Fatalf("%d predictions, %d in the reference run", len(preds), len(refPreds))
	}
	for k, v := range refPreds {
		if !bytes.Equal(preds[k], v) {
			t.Fatalf("prediction %v differs from the uninterrupted run's", k)
		}
	}
	refStates, _ := checkpointStates(t, e, ref, len(ends))
	states, _ := checkpointStates(t, e, cfg, len(ends))
	for p := range ends {
		for i := range cfg.Models {
			if !bytes.Equal(states[p][i], refStates[p][i]) {
				t.Fatalf("partition %d model %s: final state differs from the uninterrupted run's", p, cfg.Models[i].Name)
			}
		}
	}
	return len(preds)
}

// Upgrading from at-least-once output (records without the group header) to
// effectively-once: the scan stops at the first record of the older kind
// instead of reading the whole output partition; the recovery publishes
// what is missing (the older output after the checkpoint may appear twice,
// once), and from then on there are no duplicates.
func TestEffectivelyOnceAfterAtLeastOnce(t *testing.T) {
	e, input, ends := newInput(t, 1, withGarbage(genEvents(2000, 19, "up")))
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.Delivery, cfg.CheckpointEvery = DeliveryAtLeastOnce, 700
	r := start(t, cfg)
	waitFor(t, 90*time.Second, "the at-least-once run", func() bool { return caughtUp(ends, r) })
	r.kill(t) // checkpoint at 1400; 1400..1999 published at least once
	before := len(e.ReadAll(t, cfg.Output))
	cfg.Delivery = DeliveryEffectivelyOnce
	r = start(t, cfg)
	waitFor(t, 90*time.Second, "the upgraded run", func() bool { return caughtUp(ends, r) })
	// Caught up is the input side: wait for its output too (what the
	// second recovery must find), or a kill under load (-race) could cut
	// the upgraded run's last predictions off and the count below would
	// test the timing, not the scan.
	waitFor(t, 90*time.Second, "the upgraded run's predictions", func() bool { return len(e.ReadAll(t, cfg.Output)) >= before+500 })
	r.kill(t) // checkpoint at 1400 again (CheckpointEvery not reached)
	if s := counterValue(r.p.dm.suppressed.WithLabelValues("restore")); s != 0 {
		t.Fatalf("%v records suppressed after the upgrade: the older output is not partitioned for the scan", s)
	}
	r = start(t, cfg)
	waitFor(t, 90*time.Second, "the second recovery", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if s := counterValue(r.p.dm.suppressed.WithLabelValues("restore")); s < 500 {
		t.Fatalf("%v records suppressed in the second recovery, want the ~600 the upgraded run published", s)
	}
	count := map[int64]int{}
	for _, rec := range e.ReadAll(t, cfg.Output) {
		if header(kafka.Message{Headers: rec.Headers}, HeaderGroup) == "" {
			continue // the at-least-once era
		}
		pr, _ := codec.DecodePredictionAny(rec.Value)
		if count[pr.Offset]++; count[pr.Offset] > 1 {
			t.Fatalf("offset %d published twice in effectively-once mode", pr.Offset)
		}
	}
}
