package consumer

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/internal/kafkatest"
	"okstream/share"
)

// Tests of shared models with several instances in one group (issue 37):
// the strict schedule is kept when nothing is slow, and a slow decision
// does not make waits chain from one boundary to the next.

// startSpread starts n instances of cfg and waits until each owns at least
// one of the input's parts partitions (and together all of them).
func startSpread(t *testing.T, cfg Config, n, parts int) []*running {
	t.Helper()
	rs := make([]*running, n)
	for i := range rs {
		rs[i] = start(t, cfg)
	}
	waitFor(t, 90*time.Second, fmt.Sprintf("%d instances to share %d partitions", n, parts), func() bool {
		total := 0
		for _, r := range rs {
			o := owned(r)
			if o == 0 {
				return false
			}
			total += o
		}
		return total == parts
	})
	return rs
}

func sumCounters(rs []*running, f func(r *running) float64) float64 {
	s := 0.0
	for _, r := range rs {
		s += f(r)
	}
	return s
}

// With no fault and no slow partition, two and three instances sharing one
// group end, bit for bit, where one instance does (the simulator on the
// strict schedule, which TestSharedModelsEqualTheSimulator ties to one
// instance), with no expired wait and no decision record.
func TestSharedSeveralInstancesEqualOneInstance(t *testing.T) {
	for _, c := range []struct {
		instances int
		preloaded bool // the events are there before the instances start together (else: produced once they have spread)
	}{{2, false}, {3, false}, {2, true}, {3, true}} {
		t.Run(fmt.Sprintf("instances=%d,preloaded=%v", c.instances, c.preloaded), func(t *testing.T) {
			const parts, n = 6, 3600
			e := kafkatest.New(t)
			input := e.Name("events")
			e.CreateTopic(t, input, parts, nil)
			cfg := sharedConfig(e, input, e.Name("g"), e.Name("preds"))
			cfg.ShareMaxWait = 30 * time.Second // no wait may expire; a chained wait would show as a stall
			events := labelledEvents(n, 21)
			var rs []*running
			if c.preloaded {
				produceRoundRobin(t, e, input, events)
				for range c.instances {
					rs = append(rs, start(t, cfg))
				}
			} else {
				rs = startSpread(t, cfg, c.instances, parts)
				<-produceSlowly(t, e, input, events, &kafka.RoundRobin{})
			}
			ends := endOffsets(t, e, input)
			waitFor(t, 120*time.Second, "every instance to catch up", func() bool { return caughtUp(ends, rs...) })
			expired := sumCounters(rs, func(r *running) float64 { return counterValue(r.p.sm.expired) })
			decisions := sumCounters(rs, func(r *running) float64 { return counterValue(r.p.sm.decisions) })
			for _, r := range rs {
				if err := r.shutdown(t); err != nil {
					t.Fatal(err)
				}
			}
			if expired != 0 || decisions != 0 {
				t.Fatalf("%v expired waits and %v decision records with %d instances and no fault, want none", expired, decisions, c.instances)
			}
			equalsStrictSchedule(t, e, cfg, input, parts, fmt.Sprintf(" with %d instances", c.instances))
			if got := predictionsByOffset(t, e, cfg.Output); len(got) != n {
				t.Fatalf("%d offsets have predictions, want %d", len(got), n)
			}
		})
	}
}

// A decision whose record lands slowly must not stall the other instance:
// the deltas computed after it are published as soon as it lands, not when
// its partition's worker next reaches a boundary. Before, two partitions on
// two instances that each held a delta behind a slow decision waited for
// each other's held delta until --share-max-wait expired, which made a
// decision again, and so on at every boundary (waits chained).
func TestSharedSlowDecisionsDoNotChainWaits(t *testing.T) {
	const parts = 4
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, parts, nil)
	cfg := sharedConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.ShareMaxWait = 1500 * time.Millisecond
	cfg.ShareEvery = 20
	cfg.ShareWindow = 4096 // keeps every decision record, for the replay below
	var delayed atomic.Bool
	cfg.beforeDelta = func(ctx context.Context, part int, epoch int64) {
		// Partition 3 is late once, at epoch 5: the others skip it (each
		// of their boundaries' wait expires once) and, behind, it is
		// merged again at every rejoin boundary, each a decision.
		if part == 3 && epoch == 5 && delayed.CompareAndSwap(false, true) {
			select {
			case <-time.After(cfg.ShareMaxWait + time.Second):
			case <-ctx.Done():
			}
		}
	}
	cfg.beforeDecision = func(ctx context.Context, part int, epoch int64) {
		// Decisions land slowly (a loaded broker): the partition passes
		// two or more boundaries before its decision is acknowledged.
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	rs := startSpread(t, cfg, 2, parts)
	done := produceSlowly(t, e, input, labelledEvents(4800, 22), &kafka.RoundRobin{})
	<-done
	ends := endOffsets(t, e, input)
	waitFor(t, 120*time.Second, "both instances to catch up", func() bool { return caughtUp(ends, rs...) })
	expired := sumCounters(rs, func(r *running) float64 { return counterValue(r.p.sm.expired) })
	decisions := sumCounters(rs, func(r *running) float64 { return counterValue(r.p.sm.decisions) })
	for _, r := range rs {
		if err := r.shutdown(t); err != nil {
			t.Fatal(err)
		}
	}
	if !delayed.Load() {
		t.Fatal("partition 3 was never delayed: the test did not test anything")
	}
	t.Logf("%v expired waits, %v decisions", expired, decisions)
	// Each of the three other partitions may expire its wait once for
	// partition 3's late delta, and partition 3 once for a delta of theirs
	// made while it slept; anything more is a chain.
	if expired > parts-1 {
		t.Fatalf("%v expired waits, want at most %d: waits chained behind slow decisions", expired, parts-1)
	}
	if got := predictionsByOffset(t, e, cfg.Output); len(got) != 4800 {
		t.Fatalf("%d offsets have predictions, want 4800", len(got))
	}
	equalsReplay(t, e, cfg, input, parts)
}

// equalsReplay checks that the first shared model of each partition's
// newest checkpoint is, bit for bit, share.Replay's: the simulator applying
// the decision records the run left on the sync topic (the newest per
// boundary, as the consumer reads them) and the default frontier elsewhere.
func equalsReplay(t *testing.T, e *kafkatest.Env, cfg Config, input string, parts int) {
	t.Helper()
	recorded := map[share.Ref][]int64{}
	prefix := share.Prefix(cfg.Group, cfg.Input)
	for _, r := range e.ReadAll(t, cfg.ShareTopic) { // in offset order: the newest wins
		if !strings.HasPrefix(string(r.Key), prefix+"/") {
			continue
		}
		rec, err := share.Decode(r.Value)
		if err != nil {
			t.Fatalf("sync record %s: %v", r.Key, err)
		}
		if rec.Kind == share.KindDecision {
			recorded[share.Ref{Partition: rec.Partition, Epoch: rec.Epoch}] = rec.Frontier
		}
	}
	events, assign := inputEvents(t, e, cfg, input)
	res, err := share.Replay(cfg.Models[0].Spec, cfg.Dim, share.Config{Every: cfg.ShareEvery, Lag: cfg.ShareLag, Partitions: parts}, events, assign, recorded)
	if err != nil {
		t.Fatalf("replaying the %d recorded decisions: %v", len(recorded), err)
	}
	states, _ := checkpointStates(t, e, cfg, parts)
	for p := range parts {
		want, _ := res.Models[p].MarshalBinary()
		if !bytes.Equal(states[p][0], want) {
			t.Fatalf("partition %d: the shared model differs from a replay of the %d recorded decisions", p, len(recorded))
		}
	}
	t.Logf("final states equal a replay of the %d recorded decisions", len(recorded))
}

// With --share-skip-idle, a partition that has run out of input is not
// waited for by the partitions of the other instances either: its worker
// says so on the sync topic (an idle record, after its last delta), as its
// own instance's partitions learn it in-process. Partition 3's stream ends
// early; with a maximum wait of a minute, no wait may expire, and the final
// states equal a replay of the decisions recorded (skipping an idle
// partition is a decision: the events arrive while the instances run, so
// every partition is idle now and then). Before, only the partitions of
// partition 3's own instance went on, and the others waited
// --share-max-wait for it.
func TestSharedIdleRemotePartitionNotWaitedFor(t *testing.T) {
	const parts, n = 4, 4000
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, parts, nil)
	cfg := sharedConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.ShareMaxWait = time.Minute
	cfg.ShareSkipIdle = true
	cfg.ShareWindow = 4096 // keeps every decision record, for the replay
	rs := startSpread(t, cfg, 2, parts)
	events := labelledEvents(n, 23)
	// Events 0..1199 round robin over the 4 partitions, the rest over 0..2:
	// partition 3 ends after 300 events, the others go on to 1200.
	byKey := map[string]int{}
	for i, m := range events {
		if i < 1200 {
			byKey[string(m.Key)] = i % parts
		} else {
			byKey[string(m.Key)] = i % (parts - 1)
		}
	}
	w := e.Writer(input)
	w.Balancer = kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return byKey[string(m.Key)] })
	w.BatchSize = 1
	for i := 0; i < n; i += 200 {
		if err := w.WriteMessages(context.Background(), events[i:i+200]...); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	ends := endOffsets(t, e, input)
	if ends[3] != 300 {
		t.Fatalf("partition 3 holds %d events, want 300", ends[3])
	}
	waitFor(t, 50*time.Second, "both instances to catch up (no minute-long wait for the ended partition)", func() bool { return caughtUp(ends, rs...) })
	expired := sumCounters(rs, func(r *running) float64 { return counterValue(r.p.sm.expired) })
	for _, r := range rs {
		if err := r.shutdown(t); err != nil {
			t.Fatal(err)
		}
	}
	if expired != 0 {
		t.Fatalf("%v expired waits, want none: the idle partition was waited for", expired)
	}
	equalsReplay(t, e, cfg, input, parts)
	if got := predictionsByOffset(t, e, cfg.Output); len(got) != n {
		t.Fatalf("%d offsets have predictions, want %d", len(got), n)
	}
}
