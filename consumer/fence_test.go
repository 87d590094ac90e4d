package consumer

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"okstream/internal/kafkatest"
)

// A worker whose generation ended and whose writes are slow (a loaded
// machine, a slow broker) drains longer than the session timeout: the
// coordinator evicts its silent member and hands the partitions to another
// instance, which restores, reads the output's tail and publishes. Before
// fencing, the old writer went on writing during that time and the output
// held the same offsets twice (issue 37, case 1). Now its lease runs out
// before anyone else can own the partitions, it stops writing, and every
// offset has exactly one prediction.
func TestRevokedWorkerStopsWritingBeforeNewOwner(t *testing.T) {
	const parts, n = 2, 3000
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, parts, nil)
	produceRoundRobin(t, e, input, genEvents(n, 31, "f"))
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.CheckpointEvery = 100
	slow := cfg
	var slowWrites, lateWrites atomic.Int64
	var genEnded atomic.Int64 // unix ns when A's first generation ended (0: not yet)
	slow.beforeWrite = func(ctx context.Context, part int) {
		slowWrites.Add(1)
		if end := genEnded.Load(); end != 0 && time.Since(time.Unix(0, end)) > cfg.SessionTimeout {
			lateWrites.Add(1) // a write attempt after the session could have expired
		}
		select {
		case <-time.After(4 * time.Second):
		case <-ctx.Done():
		}
	}
	a := start(t, slow)
	waitFor(t, 60*time.Second, "instance A to own both partitions and write", func() bool { return owned(a) == parts && slowWrites.Load() >= 2 })
	b := start(t, cfg)
	waitFor(t, 60*time.Second, "the rebalance to begin", func() bool {
		if !a.p.inGen.Load() {
			genEnded.CompareAndSwap(0, time.Now().UnixNano())
			return true
		}
		return false
	})
	// A leaves too (as on SIGTERM): it drains first, slowly, while the
	// group goes on without it once its session has expired.
	a.stop()
	ends := endOffsets(t, e, input)
	waitFor(t, 120*time.Second, "B to own both partitions and catch up", func() bool { return owned(b) == parts && caughtUp(ends, b) })
	time.Sleep(3 * time.Second) // anything A still had in flight lands
	if err := b.shutdown(t); err != nil {
		t.Fatal(err)
	}
	_ = a.shutdown(t)
	got := predictionsByOffset(t, e, cfg.Output) // fails on a duplicate
	if len(got) != n {
		t.Fatalf("%d offsets have predictions, want %d", len(got), n)
	}
	if late := lateWrites.Load(); late != 0 {
		t.Fatalf("instance A started %d writes more than the session timeout after its generation ended", late)
	}
	if d := counterValue(b.p.dm.duplicates.WithLabelValues("predictions")); d != 0 {
		t.Fatalf("B detected %v duplicates", d)
	}
}

// A duplicate seen again by a later scan of the same output partition (the
// next generation's restore, a write retry) is counted and logged once per
// process (issue 37: every later generation re-counted the same ones), and
// what is remembered is bounded.
func TestDuplicateCountedOncePerProcess(t *testing.T) {
	var m dedupMetrics
	if !m.firstSeen("predictions", 0, 7) || m.firstSeen("predictions", 0, 7) {
		t.Fatal("a duplicate must be new once, then known")
	}
	if !m.firstSeen("dead_letters", 0, 7) || !m.firstSeen("predictions", 1, 7) {
		t.Fatal("another topic or partition is another duplicate")
	}
	for o := int64(100); o < 100+2*seenKeep; o++ {
		m.firstSeen("predictions", 0, o)
	}
	if n := len(m.seen[dupKey{"predictions", 0}]); n != seenKeep {
		t.Fatalf("%d duplicates remembered, want at most %d", n, seenKeep)
	}
}

// The lease: valid for ¾ of the smaller timeout from its start and from
// each renewal's send time; once run out, a write waits while the
// generation lasts (a renewal lets it go on) and is abandoned once the
// generation has ended.
func TestLeaseAwait(t *testing.T) {
	cfg := Config{SessionTimeout: 200 * time.Millisecond, RebalanceTimeout: time.Second}
	if got := leaseSpan(&cfg); got != 150*time.Millisecond {
		t.Fatalf("span %v, want 150ms (¾ of the session timeout, the smaller)", got)
	}
	l := newLease(&cfg)
	if !l.valid() || !l.await(context.Background()) {
		t.Fatal("a new lease must be valid")
	}
	time.Sleep(200 * time.Millisecond)
	if l.valid() {
		t.Fatal("the lease outlived its span without a renewal")
	}
	got := make(chan bool, 1)
	go func() { got <- l.await(context.Background()) }()
	select {
	case <-got:
		t.Fatal("await returned while the lease had run out and the generation lasts")
	case <-time.After(100 * time.Millisecond):
	}
	l.renew(leaseNow())
	if !<-got {
		t.Fatal("a renewed lease must let the write go on")
	}
	l.renew(leaseNow() - int64(time.Second)) // an old heartbeat does not shorten it
	if !l.valid() {
		t.Fatal("a renewal from an older send time shortened the lease")
	}
	time.Sleep(200 * time.Millisecond)
	l.ended.Store(true)
	if l.await(context.Background()) {
		t.Fatal("a lease that ran out with its generation must abandon the write")
	}
	var none *lease // a worker built without a generation (tests)
	if !none.valid() || !none.await(context.Background()) {
		t.Fatal("no lease: always valid")
	}
}
