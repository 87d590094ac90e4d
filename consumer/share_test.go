package consumer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/internal/kafkatest"
	"okstream/learner/rng"
	"okstream/share"
)

// sharedModels: a shared FOGD and a per-partition NOGD.
var sharedModels = []Model{
	{Name: "champion", Spec: "fogd:sigma=0.7,budget=10,eta=0.05"},
	{Name: "challenger", Spec: "nogd:sigma=0.7,budget=40,k=20"},
}

// labelledEvents are n labelled events (the simulator learns every event),
// each keyed by its own index.
func labelledEvents(n int, seed uint64) []kafka.Message {
	msgs := make([]kafka.Message, n)
	src := rng.New(seed)
	for i := range msgs {
		ev := circleEvent(src, i, fmt.Sprintf("user-%d", i), "")
		b, err := codec.AppendEvent(nil, &ev)
		if err != nil {
			panic(err)
		}
		msgs[i] = kafka.Message{Key: []byte(ev.Key), Value: b}
	}
	return msgs
}

// produceRoundRobin writes msgs, message i to partition i mod parts (so the
// partitions are balanced and no partition's stream ends early).
func produceRoundRobin(t *testing.T, e *kafkatest.Env, topic string, msgs []kafka.Message) {
	t.Helper()
	w := e.Writer(topic)
	w.Balancer = &kafka.RoundRobin{}
	w.BatchSize = 1
	defer w.Close()
	for i := 0; i < len(msgs); i += 100 {
		if err := w.WriteMessages(context.Background(), msgs[i:min(i+100, len(msgs))]...); err != nil {
			t.Fatal(err)
		}
	}
}

// roundRobinInput creates an input topic of the given partition count on a
// new broker and writes msgs to it round robin.
func roundRobinInput(t *testing.T, parts int, msgs []kafka.Message) (*kafkatest.Env, string) {
	t.Helper()
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, parts, nil)
	produceRoundRobin(t, e, input, msgs)
	return e, input
}

func sharedConfig(e *kafkatest.Env, input, group, output string) Config {
	cfg := testConfig(e, input, group, output)
	cfg.Models = sharedModels
	cfg.Share = []string{"champion"}
	cfg.ShareEvery = 25
	cfg.ShareLag = 1
	cfg.ShareMaxWait = 3 * time.Second
	cfg.ShareTopic = e.Name("sync")
	return cfg
}

// simulate runs share.Simulate on the input topic's events, each in its
// partition, in offset order.
func simulate(t *testing.T, e *kafkatest.Env, cfg Config, input string, parts int) *share.SimResult {
	t.Helper()
	events, assign := inputEvents(t, e, cfg, input)
	res, err := share.Simulate(cfg.Models[0].Spec, cfg.Dim, share.Config{Every: cfg.ShareEvery, Lag: cfg.ShareLag, Partitions: parts},
		events, assign)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// inputEvents reads the input topic's events, partition by partition in
// offset order, and the partition of each.
func inputEvents(t *testing.T, e *kafkatest.Env, cfg Config, input string) ([]share.Event, func(i int) int) {
	t.Helper()
	recs := e.ReadAll(t, input)
	sort.Slice(recs, func(i, j int) bool {
		if recs[i].Partition != recs[j].Partition {
			return recs[i].Partition < recs[j].Partition
		}
		return recs[i].Offset < recs[j].Offset
	})
	var events []share.Event
	var assign []int
	for _, r := range recs {
		ev, err := codec.DecodeEvent(r.Value, codec.Limits{Dim: cfg.Dim})
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, share.Event{X: ev.Dense(nil, cfg.Dim), Y: ev.Y})
		assign = append(assign, r.Partition)
	}
	return events, func(i int) int { return assign[i] }
}

// equalsStrictSchedule checks that the first shared model of each partition's
// newest checkpoint is, bit for bit, the simulator's on the strict schedule
// (what is added to the failure message: when).
func equalsStrictSchedule(t *testing.T, e *kafkatest.Env, cfg Config, input string, parts int, when string) *share.SimResult {
	t.Helper()
	sim := simulate(t, e, cfg, input, parts)
	if len(sim.Decisions) != 0 {
		t.Fatalf("the simulation left the strict schedule: %+v", sim.Decisions)
	}
	states, _ := checkpointStates(t, e, cfg, parts)
	for p := range parts {
		want, _ := sim.Models[p].MarshalBinary()
		if !bytes.Equal(states[p][0], want) {
			t.Fatalf("partition %d: the shared model%s differs from the simulator's", p, when)
		}
	}
	return sim
}

// The consumer's shared models end, bit for bit, where the offline
// simulator's do (same schedule code, strict schedule), and so do their
// progressive statistics.
func TestSharedModelsEqualTheSimulator(t *testing.T) {
	e, input := roundRobinInput(t, 3, labelledEvents(2400, 11))
	cfg := sharedConfig(e, input, e.Name("g"), e.Name("preds"))
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 90*time.Second, "the pipeline to process every event", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	sim := equalsStrictSchedule(t, e, cfg, input, 3, "")
	stats := checkpointStats(t, e, cfg, 3)
	var mistakes uint64
	for _, m := range sim.Mistakes {
		mistakes += m
	}
	if got := stats["champion"].Mistakes; got != mistakes {
		t.Fatalf("%d mistakes, the simulator made %d", got, mistakes)
	}
	if r.p.sm == nil {
		t.Fatal("no share metrics")
	}
	t.Logf("%d mistakes on 2400 events; %d merges in the simulation", mistakes, sim.Merges)
}

// Exact recovery with sharing on: killed at several points and restarted,
// the final states equal an uninterrupted run's and every offset has its
// (identical) prediction.
func TestSharedExactRecoveryAfterKills(t *testing.T) {
	recoveryAfterKills(t, func(e *kafkatest.Env, input string) { produceRoundRobin(t, e, input, labelledEvents(3000, 12)) },
		sharedConfig, 170, []int{400, 1100, 1900, 2600})
}

// An idle partition stalls the others only for the maximum wait, once; the
// boundaries that proceeded without it are recorded, and a replay applies
// the recorded frontier even when the idle partition's deltas are there by
// then (a re-decision would merge them and end elsewhere). Once skipped,
// the partition is behind: the boundaries between rejoin boundaries leave
// it where it is, with no record, and a replay does so too although its
// deltas have arrived since; a rejoin boundary merges what has arrived and
// records it.
func TestSharedIdlePartitionDecisionsReplayed(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 3, nil)
	write := func(msgs []kafka.Message, parts ...int) {
		w := e.Writer(input)
		i := 0
		w.Balancer = kafka.BalancerFunc(func(kafka.Message, ...int) int { i++; return parts[i%len(parts)] })
		w.BatchSize = 1
		defer w.Close()
		if err := w.WriteMessages(context.Background(), msgs...); err != nil {
			t.Fatal(err)
		}
	}
	cfg := sharedConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.ShareMaxWait = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runToEnd := func(name string) *running {
		r := start(t, cfg)
		ends := endOffsets(t, e, input)
		waitFor(t, 60*time.Second, name, func() bool { return caughtUp(ends, r) })
		if err := r.shutdown(t); err != nil {
			t.Fatal(err)
		}
		return r
	}

	// Run 1: partitions 0 and 1 (boundaries 0–11) skip partition 2 at
	// boundary 1 and record the rejoin boundary 8.
	write(labelledEvents(600, 13), 0, 1) // partition 2 idle
	r := runToEnd("run 1")
	if n := counterValue(r.p.sm.decisions); n < 2 {
		t.Fatalf("%v decision records, want at least one per busy partition", n)
	}
	if n := counterValue(r.p.sm.expired); n < 2 {
		t.Fatalf("okstream_share_wait_expired_total %v, want at least one per busy partition", n)
	}
	// Run 2: partition 2 wakes up; its deltas of epochs 0–11 reach the
	// sync topic.
	write(labelledEvents(300, 14), 2)
	runToEnd("partition 2")
	// Run 3: partitions 0 and 1 go on (boundaries 12–23). Partition 2 is
	// behind: boundaries 12–15 leave it at epoch −1 although its deltas
	// are there, the rejoin boundary 16 merges them up to 11, and 17–23
	// leave it there (it does not reach epoch 15 of the strict schedule).
	write(labelledEvents(600, 16), 0, 1)
	runToEnd("run 3")
	run3, _ := checkpointStates(t, e, cfg, 2)
	decided := map[[2]int64][]int64{}
	prefix := share.Prefix(cfg.Group, cfg.Input) + "/"
	for _, m := range e.ReadAll(t, cfg.ShareTopic) {
		if !strings.HasPrefix(string(m.Key), prefix) {
			continue
		}
		if kind, part, epoch, ok := share.Peek(m.Value); ok && kind == share.KindDecision && part < 2 {
			rec, err := share.Decode(m.Value)
			if err != nil {
				t.Fatal(err)
			}
			decided[[2]int64{int64(part), epoch}] = rec.Frontier
		}
	}
	K := int64(share.RejoinEvery)
	for p := range int64(2) {
		for ep := int64(2); ep < 24; ep++ {
			f, ok := decided[[2]int64{p, ep}]
			if ep%K != 0 {
				if ok {
					t.Fatalf("partition %d wrote a decision at boundary %d (%v), between rejoin boundaries", p, ep, f)
				}
				continue
			}
			want := int64(-1) // nothing of partition 2 arrived during run 1
			if ep >= 16 {
				want = 11
			}
			if !ok || f[2] != want {
				t.Fatalf("partition %d's decision at the rejoin boundary %d: %v (found %v), want partition 2 merged up to %d", p, ep, f, ok, want)
			}
		}
	}

	// Partitions 0 and 1 replay from scratch: same states as run 3.
	s, err := checkpoint.Open(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: cfg.Checkpoints})
	if err != nil {
		t.Fatal(err)
	}
	for p := range 2 {
		id := checkpoint.ID{Group: cfg.Group, Topic: cfg.Input, Partition: p}
		if _, err := s.Reset(ctx, id, &checkpoint.Checkpoint{ID: id, NextOffset: 0, Payload: ResetPayload()}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	runToEnd("the replay")
	replay, _ := checkpointStates(t, e, cfg, 2)
	for p := range 2 {
		if !bytes.Equal(replay[p][0], run3[p][0]) {
			t.Fatalf("partition %d: the replayed shared model differs from run 3's (the skip decisions were not applied, or a boundary without one merged what had arrived)", p)
		}
	}
}

// idleThirdPartition writes msgs alternately to partitions 0 and 1 of a new
// 3-partition topic: partition 2 stays idle.
func idleThirdPartition(t *testing.T, msgs []kafka.Message) (*kafkatest.Env, string) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 3, nil)
	w := e.Writer(input)
	i := 0
	w.Balancer = kafka.BalancerFunc(func(kafka.Message, ...int) int { i++; return i % 2 })
	w.BatchSize = 1
	defer w.Close()
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
	return e, input
}

// With ShareSkipIdle, a partition of this instance with no input is not
// waited for: with a maximum wait of an hour, the busy partitions still get through their
// boundaries (the idle one's worker marks it idle after its first empty
// fetch, and their boundaries proceed without it, as decision records).
// Without the idle mark this run would wait an hour at its first boundary.
func TestSharedIdleLocalPartitionNotWaitedFor(t *testing.T) {
	e, input := idleThirdPartition(t, labelledEvents(400, 21))
	cfg := sharedConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.ShareMaxWait = time.Hour
	cfg.ShareSkipIdle = true
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "the busy partitions", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if n := counterValue(r.p.sm.decisions); n < 2 {
		t.Errorf("%v decision records, want at least one per busy partition", n)
	}
	if n := counterValue(r.p.sm.skips); n < 2 {
		t.Errorf("%v skips of the idle partition, want at least one per busy partition", n)
	}
	if n := counterValue(r.p.sm.expired); n != 0 {
		t.Errorf("okstream_share_wait_expired_total %v, want 0 (an idle partition is skipped without a wait expiring)", n)
	}
}

// A decision record is written asynchronously, and what depends on it waits
// until it has landed: while partition 0's first decision is held back, its
// worker learns on, but the predictions of the micro-batch that holds the
// decision's boundary are not written and its next delta is not published
// (to the sync topic or to the other partitions of this process). A kill
// before the decision lands loses it; the restarted run decides afresh and
// ends, bit for bit and with every offset predicted once, where an
// uninterrupted run ends. (Partition 2 is idle: skipped at the second
// boundary, with a decision, and behind after that.)
func TestSharedDecisionHeldUntilDurable(t *testing.T) {
	e, input := idleThirdPartition(t, labelledEvents(400, 23))
	ends := endOffsets(t, e, input)
	config := func(group, output string) Config {
		cfg := sharedConfig(e, input, group, output)
		cfg.ShareMaxWait = time.Hour
		cfg.ShareSkipIdle = true
		// Boundaries after records 25, 50, 75, 100, …: the second
		// micro-batch (records 40–79) holds the first decision (boundary
		// 1, at 50) and the next boundary (2, at 75), whose delta depends
		// on it; the third (80–119) holds boundary 3, the first that
		// merges the own delta of epoch 2.
		cfg.BatchSize = 40
		return cfg
	}

	ref := config(e.Name("ref"), e.Name("ref-preds"))
	r := start(t, ref)
	waitFor(t, 60*time.Second, "the reference run", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if n := counterValue(r.p.sm.decisions); n < 2 {
		t.Fatalf("%v decision records in the reference run, want one per busy partition at least", n)
	}
	refStates, _ := checkpointStates(t, e, ref, 3)
	refPreds := predictionsByOffset(t, e, ref.Output)

	cfg := config(e.Name("crash"), e.Name("crash-preds"))
	blocked, batched, release := make(chan int64, 1), make(chan struct{}, 1), make(chan struct{})
	held := cfg
	held.beforeDecision = func(ctx context.Context, part int, epoch int64) {
		if part != 0 {
			return
		}
		select {
		case blocked <- epoch:
			select { // held until the kill (or the end of a failed test)
			case <-ctx.Done():
			case <-release:
			}
		default:
		}
	}
	held.afterBatch = func(part int, next int64) {
		if part == 0 && next == 80 {
			batched <- struct{}{}
		}
	}
	r = start(t, held)
	t.Cleanup(func() { close(release) }) // before the pipeline's cleanup
	var epoch int64
	select {
	case epoch = <-blocked:
	case <-time.After(60 * time.Second):
		t.Fatal("partition 0 wrote no decision")
	}
	if epoch != 1 {
		t.Fatalf("partition 0's first decision is at boundary %d, want 1", epoch)
	}
	// The worker goes on past boundary 2 while the decision is in flight
	// (it waits only at boundary 3, for its own delta of epoch 2).
	select {
	case <-batched:
	case <-time.After(60 * time.Second):
		t.Fatal("partition 0 did not finish the micro-batch of boundaries 1 and 2 while the decision of boundary 1 was in flight")
	}
	// Give a writer that does not wait time to write the batch's
	// predictions and a publisher time to publish the next delta.
	time.Sleep(500 * time.Millisecond)
	for k := range predictionsByOffset(t, e, cfg.Output) {
		if k[0] == 0 && k[1] >= 40 {
			t.Fatalf("partition 0's prediction of offset %d was written before its decision record landed", k[1])
		}
	}
	if d, _ := r.p.tail.get(share.KindDelta, 0, 2); d != nil {
		t.Fatal("partition 0's delta of epoch 2 was handed over before the decision of boundary 1 landed")
	}
	prefix := share.Prefix(cfg.Group, cfg.Input) + "/"
	for _, m := range e.ReadAll(t, cfg.ShareTopic) {
		if !strings.HasPrefix(string(m.Key), prefix) {
			continue // the reference run's
		}
		if kind, part, epoch, ok := share.Peek(m.Value); ok && kind == share.KindDelta && part == 0 && epoch >= 2 {
			t.Fatalf("partition 0's delta of epoch %d was written to the sync topic before the decision of boundary 1 landed", epoch)
		}
	}
	r.kill(t)

	r = start(t, cfg)
	waitFor(t, 60*time.Second, "the restarted run", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	states, _ := checkpointStates(t, e, cfg, 3)
	for p := range 2 {
		for m := range cfg.Models {
			if !bytes.Equal(states[p][m], refStates[p][m]) {
				t.Fatalf("partition %d model %s: the state after the kill differs from the uninterrupted run's", p, cfg.Models[m].Name)
			}
		}
	}
	preds := predictionsByOffset(t, e, cfg.Output) // fails on duplicates
	if len(preds) != 400 || len(refPreds) != 400 {
		t.Fatalf("%d distinct predictions after the kill, %d in the reference run, want 400", len(preds), len(refPreds))
	}
	for k, v := range refPreds {
		if !bytes.Equal(preds[k], v) {
			t.Fatalf("prediction %v differs from the uninterrupted run's", k)
		}
	}
}

// A partition may merge another's delta handed over in-process before that
// delta is durable on the sync topic. Nothing computed from that merge may
// be seen before the delta is durable, except the partition's own next
// deltas (their publication is not held); and a replay of a boundary whose
// later deltas have left must merge the same deltas, however long the
// partition that regenerates one takes: deciding again, it would skip it
// once --share-max-wait expired and end elsewhere than what others merged.
// Run 1 holds partition 1's delta publisher (its deltas reach partition 0
// in-process only): both partitions' output after their first merge must
// wait, while partition 0's deltas reach the sync topic. After a kill, run 2
// holds partition 1's first boundary three times longer than the maximum
// wait, and must still end where the strict schedule (the simulator) does,
// with no expired wait and no decision, in both delivery modes.
func TestSharedReplayWaitsForDeltasMergedBeforeDurable(t *testing.T) {
	for _, delivery := range []string{DeliveryEffectivelyOnce, DeliveryAtLeastOnce} {
		t.Run(delivery, func(t *testing.T) {
			e, input := roundRobinInput(t, 2, labelledEvents(420, 29)) // 8 boundaries per partition, then 10 events
			ends := endOffsets(t, e, input)
			cfg := sharedConfig(e, input, e.Name("g"), e.Name("preds"))
			cfg.Delivery = delivery
			cfg.CheckpointEvery = 1 << 20 // no checkpoint before the kill
			cfg.BatchSize = 25            // one micro-batch per epoch

			run1 := cfg
			run1.ShareMaxWait = time.Hour // the strict schedule
			run1.beforePublish = func(ctx context.Context, part int) {
				if part == 1 {
					<-ctx.Done() // until the kill
				}
			}
			r := start(t, run1)
			prefix := share.Prefix(cfg.Group, cfg.Input) + "/"
			deltas := func() (own0 int) {
				recs, err := kafkatest.ReadAll(context.Background(), e.Client, cfg.ShareTopic)
				if err != nil {
					return 0 // not created yet
				}
				for _, m := range recs {
					if kind, part, epoch, ok := share.Peek(m.Value); ok && strings.HasPrefix(string(m.Key), prefix) {
						if part == 1 {
							t.Fatalf("partition 1's %d record of epoch %d reached the sync topic although its publisher is held", kind, epoch)
						}
						if kind == share.KindDelta {
							own0++
						}
					}
				}
				return own0
			}
			// Partition 0 goes on until its writer's queue is full (the
			// output waits), publishing its deltas: those of epochs 1 and
			// later were computed after boundary 1 merged partition 1's
			// delta of epoch 0.
			waitFor(t, 60*time.Second, "partition 0's deltas of epochs 0–2 on the sync topic", func() bool { return deltas() >= 3 })
			// The first micro-batch of each partition (boundary 0 merges
			// nothing) is written; the next ones merged partition 1's
			// delta of epoch 0 and wait for it.
			waitFor(t, 60*time.Second, "the first micro-batches' predictions", func() bool { return len(e.ReadAll(t, cfg.Output)) >= 50 })
			time.Sleep(300 * time.Millisecond) // time for a writer that does not wait
			for _, m := range e.ReadAll(t, cfg.Output) {
				pr, err := codec.DecodePrediction(m.Value)
				if err != nil {
					t.Fatal(err)
				}
				if pr.Offset >= 25 {
					t.Fatalf("partition %d's prediction of offset %d was written while a delta its model merged (partition 1's of epoch 0) was not durable", pr.Partition, pr.Offset)
				}
			}
			if n := counterValue(r.p.sm.decisions); n != 0 {
				t.Fatalf("run 1 wrote %v decision records, want none (strict schedule)", n)
			}
			r.kill(t)

			run2 := cfg
			run2.ShareMaxWait = 500 * time.Millisecond
			run2.beforeDelta = func(ctx context.Context, part int, epoch int64) {
				if part == 1 && epoch == 0 {
					sleep(ctx, 3*run2.ShareMaxWait)
				}
			}
			r = start(t, run2)
			waitFor(t, 60*time.Second, "run 2", func() bool { return caughtUp(ends, r) })
			if err := r.shutdown(t); err != nil {
				t.Fatal(err)
			}
			equalsStrictSchedule(t, e, cfg, input, 2, " after the replay (run 1 followed the strict schedule)")
			if n, d := counterValue(r.p.sm.expired), counterValue(r.p.sm.decisions); n != 0 || d != 0 {
				t.Fatalf("run 2: %v expired waits and %v decision records, want none (it replays boundaries run 1 passed)", n, d)
			}
			if delivery == DeliveryEffectivelyOnce {
				if n := len(predictionsByOffset(t, e, cfg.Output)); n != 420 { // fails on a duplicate
					t.Fatalf("%d predictions, want 420", n)
				}
			}
		})
	}
}

// A checkpoint holds every merge up to its frontier, so it waits until the
// deltas merged are durable (it waits for the output before it, which
// waits for them): with partition 1's delta publisher held, partition 0
// (which merged partition 1's deltas in-process) takes no checkpoint;
// released, it does.
func TestSharedCheckpointWaitsForMergedDeltas(t *testing.T) {
	e, input := roundRobinInput(t, 2, labelledEvents(420, 31))
	cfg := sharedConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.CheckpointEvery = 50
	cfg.BatchSize = 25
	release := make(chan struct{})
	cfg.beforePublish = func(ctx context.Context, part int) {
		if part == 1 {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
	}
	r := start(t, cfg)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := checkpoint.Open(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: cfg.Checkpoints})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	checkpointed := func() bool {
		cp, _, err := store.Load(ctx, checkpoint.ID{Group: cfg.Group, Topic: cfg.Input, Partition: 0})
		return err == nil && cp != nil && cp.NextOffset > 0
	}
	waitFor(t, 60*time.Second, "partition 0 to reach its first checkpoint", func() bool {
		st, _ := r.p.Status()
		for _, s := range st {
			if s.Partition == 0 && s.Next >= 50 {
				return true
			}
		}
		return false
	})
	time.Sleep(500 * time.Millisecond) // time for a checkpoint that does not wait
	if checkpointed() {
		t.Fatal("partition 0 checkpointed a merge of partition 1's deltas before they were durable")
	}
	close(release)
	waitFor(t, 60*time.Second, "partition 0's checkpoint once partition 1's deltas are written", checkpointed)
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
}

// Rebalance 1 → 3 → 1 instances with sharing on, while events arrive: the
// shared models move with their partitions (a worker stopped inside a sync
// point does not checkpoint; the next owner replays from the last
// checkpoint), and the final states equal the simulator's bit for bit,
// every offset predicted once.
func TestSharedRebalanceOneThreeOne(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 3, nil)
	cfg := sharedConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.CheckpointEvery = 150
	cfg.ShareMaxWait = time.Minute // longer than any rebalance: the strict schedule throughout
	events := labelledEvents(3600, 15)
	done := produceSlowly(t, e, input, events, &kafka.RoundRobin{})
	a := start(t, cfg)
	waitFor(t, 60*time.Second, "instance A to predict", func() bool { return a.p.m.predictionsCount() > 0 })
	b := start(t, cfg)
	c := start(t, cfg)
	waitFor(t, 60*time.Second, "three instances to share the partitions", func() bool { return owned(b) > 0 && owned(c) > 0 && owned(a)+owned(b)+owned(c) == 3 })
	waitFor(t, 60*time.Second, "B and C to predict", func() bool { return b.p.m.predictionsCount() > 0 && c.p.m.predictionsCount() > 0 })
	if err := b.shutdown(t); err != nil {
		t.Fatal(err)
	}
	c.kill(t)
	<-done
	ends := endOffsets(t, e, input)
	waitFor(t, 90*time.Second, "A to take every partition back and catch up", func() bool { return owned(a) == 3 && caughtUp(ends, a) })
	if err := a.shutdown(t); err != nil {
		t.Fatal(err)
	}
	sim := simulate(t, e, cfg, input, 3)
	states, _ := checkpointStates(t, e, cfg, 3)
	for p := range 3 {
		want, _ := sim.Models[p].MarshalBinary()
		if !bytes.Equal(states[p][0], want) {
			t.Fatalf("partition %d: the shared model after 1 → 3 → 1 instances differs from the simulator's", p)
		}
	}
	if got := predictionsByOffset(t, e, cfg.Output); len(got) != len(events) {
		t.Fatalf("%d offsets have predictions, want %d", len(got), len(events))
	}
	_, ta := a.p.Status()
	if ta.Generations < 3 {
		t.Fatalf("instance A saw %d generations, want ≥ 3", ta.Generations)
	}
}

// --share is refused, with the reason and the learners that can share, for
// a learner that does not implement learner.Sharer, a configuration that
// cannot share, and an unknown model.
func TestShareConfigRefusals(t *testing.T) {
	for _, c := range []struct {
		models []Model
		share  string
		want   []string
	}{
		{[]Model{{Name: "m", Spec: "nogd:budget=10"}}, "m", []string{"cannot be shared", "fogd", "auto are not shareable"}},
		{[]Model{{Name: "m", Spec: "auto:base=fogd"}}, "m", []string{"cannot be shared"}},
		{[]Model{{Name: "m", Spec: "linear"}}, "m", []string{"only loss=square"}},
		{[]Model{{Name: "m", Spec: "fogd"}}, "m", []string{"cannot be shared", "sigma is left to the stream"}},
		{[]Model{{Name: "m", Spec: "fogd:sigma=1"}}, "x", []string{"no model of that name"}},
	} {
		cfg := Config{Brokers: []string{"b:9092"}, Input: "in", Dim: 3, Models: c.models, Share: []string{c.share}}
		err := cfg.Validate()
		if err == nil {
			t.Fatalf("%v --share %s: accepted", c.models, c.share)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("%v --share %s: %q does not say %q", c.models, c.share, err, w)
			}
		}
	}
	ok := Config{Brokers: []string{"b:9092"}, Input: "in", Dim: 3, Models: []Model{{Name: "m", Spec: "fogd:sigma=1,loss=square"}, {Name: "r", Spec: "linear:loss=square"}}, Share: []string{"m", "r"}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	if ok.ShareTopic != "okstream.checkpoints.share" || ok.ShareEvery != DefaultShareEvery || ok.ShareWindow != 2*(10000+1000)/16+4 {
		t.Fatalf("defaults: topic %q, every %d, window %d", ok.ShareTopic, ok.ShareEvery, ok.ShareWindow)
	}
}

// The sharing schedule's state is checkpointed with the models; a
// checkpoint taken with another partition count is refused
// (ErrPartitionsChanged), and one without a schedule (sharing just turned
// on) starts it fresh.
func TestShareStateInCheckpoint(t *testing.T) {
	build := func(parts int, st *share.State) *modelSet {
		ms, err := newModelSet(sharedModels, testDim, pendingLimits{})
		if err != nil {
			t.Fatal(err)
		}
		if parts > 0 {
			s := share.NewState(parts)
			if st != nil {
				s = st.Clone()
			}
			ms.share = &s
		}
		return ms
	}
	saved := share.State{Count: 77, Frontier: []int64{3, 2, 4}}
	b, err := build(3, &saved).marshal()
	if err != nil {
		t.Fatal(err)
	}
	got := build(3, nil)
	if _, err := got.restore(b, false); err != nil {
		t.Fatal(err)
	}
	if got.share.Count != 77 || !slices.Equal(got.share.Frontier, saved.Frontier) {
		t.Fatalf("restored %+v, want %+v", *got.share, saved)
	}
	if _, err := build(4, nil).restore(b, false); !errors.Is(err, ErrPartitionsChanged) {
		t.Fatalf("4 partitions restoring a checkpoint of 3: %v, want ErrPartitionsChanged", err)
	}
	old, err := build(0, nil).marshal() // no shared model
	if err != nil {
		t.Fatal(err)
	}
	fresh := build(3, &saved)
	if _, err := fresh.restore(old, false); err != nil {
		t.Fatal(err)
	}
	if fresh.share.Count != 0 || !slices.Equal(fresh.share.Frontier, []int64{-1, -1, -1}) {
		t.Fatalf("sharing turned on: restored %+v, want a fresh schedule", *fresh.share)
	}
	pl, err := DescribePayload(b)
	if err != nil || pl.Share == nil || pl.Share.Count != 77 {
		t.Fatalf("DescribePayload: %+v, %v", pl.Share, err)
	}
}

// A shared model whose one delta could never fit the share topic's record
// limit is refused when the pipeline starts, saying what to do, instead of
// a publisher retrying for ever: PKAWV with Taylor features of order 4 in
// dimension 9 (715 features: a 2 MB delta of exact statistics) against a
// share topic whose max.message.bytes is 1 MB. FOGD's delta is its 2D
// weights in 8-bit codes plus a header, well under it.
func TestShareRecordTooLarge(t *testing.T) {
	e, input, _ := newInput(t, 1, genEvents(10, 1, "big"))
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.Dim = 9
	cfg.Models = []Model{{Name: "champion", Spec: "pkawv:order=4,sigma=1"}, {Name: "f", Spec: "fogd:sigma=1,budget=10,loss=square"}}
	cfg.Share = []string{"champion", "f"}
	cfg.ShareTopic = e.Name("share")
	e.CreateTopic(t, cfg.ShareTopic, 1, map[string]string{"max.message.bytes": "1048588", "cleanup.policy": "compact"})
	need, what := shareRecordFloor(&cfg)
	if need < 1_500_000 || !strings.Contains(what, "champion") || !strings.Contains(what, "f: ") {
		t.Fatalf("record floor %d (%s), want above 1.5 MB naming both models", need, what)
	}
	err := runRefused(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "record limit") || !strings.Contains(err.Error(), "max.message.bytes") {
		t.Fatalf("Run: %v, want the record-size refusal", err)
	}
	cfg.Models, cfg.Share = []Model{{Name: "f", Spec: "fogd:sigma=1,budget=10,loss=square"}}, []string{"f"}
	if need, _ := shareRecordFloor(&cfg); need > 300 || need < 160 {
		t.Fatalf("FOGD B = 10: record floor %d bytes, want its 80 codes, scale and header", need)
	}
}

// The decision committer settles decisions in the order it took them, even
// when a later request lands first, and once one of a worker's decisions
// is dropped, its later ones are dropped too although they landed (the
// deltas they hold depend on the dropped one): another worker's decision
// in the same later request lands.
func TestDecisionCommitterSettlesInOrder(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 3, nil)
	cfg := sharedConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.CreateTopics = true
	blocked, release := make(chan struct{}), make(chan struct{})
	cfg.beforeDecision = func(ctx context.Context, part int, epoch int64) {
		if part == 0 && epoch == 1 {
			close(blocked)
			select { // until released, or the worker stops (a failed test too)
			case <-release:
			case <-ctx.Done():
			}
		}
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p.client = &kafka.Client{Addr: kafka.TCP(p.cfg.Brokers...), Timeout: 10 * time.Second}
	p.inputParts = 3
	if err := p.setupShareTopic(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, w := range p.shareDecW {
			w.Close()
		}
	}()
	dctx, stopQueue := context.WithCancel(ctx)
	queueDone := make(chan struct{})
	go func() { defer close(queueDone); p.decq.run(dctx) }()
	defer func() { stopQueue(); <-queueDone }()

	w0ctx, stop0 := context.WithCancel(ctx) // worker of partition 0
	defer stop0()                           // before the queue stops (it waits for a's request)
	var dropped0, dropped1 bool
	decision := func(wctx context.Context, dropped *bool, part int, epoch int64) *pendingDecision {
		rec := &share.Record{Kind: share.KindDecision, Partition: part, Epoch: epoch, Partitions: 3, Frontier: []int64{0, 0, 0}}
		pd := &pendingDecision{rec: rec, part: part, ctx: wctx, dropped: dropped, done: make(chan struct{}),
			msg: kafka.Message{Key: []byte(share.Key(p.tail.prefix, share.KindDecision, part, epoch, p.tail.window)), Value: rec.Encode()}}
		p.decq.add(pd)
		return pd
	}
	a := decision(w0ctx, &dropped0, 0, 1)
	<-blocked // a's request is held before it is written
	held := &share.Record{Kind: share.KindDelta, Partition: 0, Epoch: 3, Partitions: 3}
	b := decision(w0ctx, &dropped0, 0, 2)
	if !b.hold(held) {
		t.Fatal("a decision settled before it was written")
	}
	c := decision(ctx, &dropped1, 1, 2)
	// b and c go in a second request, which lands; they must not settle
	// before a.
	waitFor(t, 30*time.Second, "the second request to land", func() bool {
		for _, m := range e.ReadAll(t, p.cfg.ShareTopic) {
			if k, part, _, ok := share.Peek(m.Value); ok && k == share.KindDecision && part == 1 {
				return true
			}
		}
		return false
	})
	time.Sleep(100 * time.Millisecond)
	for _, pd := range []*pendingDecision{b, c} {
		select {
		case <-pd.done:
			t.Fatalf("partition %d's decision of boundary %d settled before an earlier one", pd.part, pd.rec.Epoch)
		default:
		}
	}
	stop0() // partition 0's worker stops: a is dropped
	close(release)
	for _, pd := range []*pendingDecision{a, b, c} {
		select {
		case <-pd.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("partition %d's decision of boundary %d never settled", pd.part, pd.rec.Epoch)
		}
	}
	if a.ok || b.ok {
		t.Fatalf("partition 0's decisions settled ok = %v, %v, want both dropped (the first was never written)", a.ok, b.ok)
	}
	if !c.ok {
		t.Fatal("partition 1's decision, written, was not settled as landed")
	}
	if d, _ := p.tail.get(share.KindDelta, 0, 3); d != nil {
		t.Fatal("a delta held by a dropped decision was handed over")
	}
	if d, _ := p.tail.get(share.KindDecision, 1, 2); d == nil {
		t.Fatal("partition 1's landed decision is not held in the tailer")
	}
}
