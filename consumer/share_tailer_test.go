package consumer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"okstream/share"
)

// newTestTailer is a tailer over P input partitions with window W, without
// a pipeline (for its bookkeeping alone).
func newTestTailer(parts int, window int64) *tailer {
	return &tailer{prefix: "g/in", window: window, notify: make(chan struct{}),
		arrivals: map[slot]chan struct{}{}, local: make([]int, parts), wake: make(chan struct{})}
}

func delta(q int, e int64) *share.Record {
	return &share.Record{Kind: share.KindDelta, Partition: q, Epoch: e, Partitions: 2}
}

// A record read back is skipped when held, or when the slot holds a newer
// one this process wrote; otherwise the last read wins (as in the topic).
func TestTailerSkipsWhatItHolds(t *testing.T) {
	tl := newTestTailer(2, 4)
	if tl.skip(share.KindDelta, 0, 1) {
		t.Fatal("an empty slot skips")
	}
	tl.put(delta(0, 5)) // own, slot 1
	if !tl.skip(share.KindDelta, 0, 5) || !tl.skip(share.KindDelta, 0, 1) {
		t.Fatal("an own record, or an older one of its slot, is not skipped")
	}
	if tl.skip(share.KindDelta, 0, 9) || tl.skip(share.KindDecision, 0, 5) || tl.skip(share.KindDelta, 1, 5) {
		t.Fatal("a newer epoch, another kind or another partition is skipped")
	}
	tl.mu.Lock()
	tl.storeLocked(delta(1, 6), false) // read back, slot 2
	tl.mu.Unlock()
	if !tl.skip(share.KindDelta, 1, 6) || tl.skip(share.KindDelta, 1, 2) {
		t.Fatal("a read record must hide only itself: an older one read after it wins")
	}
	if _, err := tl.get(share.KindDelta, 0, 1); !errors.Is(err, errOverwritten) {
		t.Fatalf("get of an overwritten epoch: %v", err)
	}
	if r, err := tl.get(share.KindDelta, 0, 5); err != nil || r == nil {
		t.Fatalf("get of a held epoch: %v %v", r, err)
	}
}

// The tailer reads while a catch-up is under way or a partition has no
// local worker, and pauses otherwise.
func TestTailerPausesWhileEveryPartitionIsLocal(t *testing.T) {
	tl := newTestTailer(2, 4)
	done, cancel := context.WithCancel(context.Background())
	cancel() // needed returns false at once instead of pausing
	if !tl.needed(done) {
		t.Fatal("no local partition: the tailer must read")
	}
	tl.joined(0)
	tl.joined(0) // a revoked worker still draining, and its successor
	if !tl.needed(done) {
		t.Fatal("partition 1 not local: the tailer must read")
	}
	tl.joined(1)
	if tl.needed(done) {
		t.Fatal("every partition local: the tailer must pause")
	}
	tl.catchUp(1)
	if !tl.needed(done) {
		t.Fatal("a catch-up under way: the tailer must read")
	}
	tl.catchUp(-1)
	tl.left(0)
	if tl.needed(done) {
		t.Fatal("partition 0 still has a worker: the tailer must pause")
	}
	// A paused tailer resumes when a partition leaves.
	ch := make(chan bool)
	go func() { ch <- tl.needed(context.Background()) }()
	tl.left(1)
	if !<-ch {
		t.Fatal("the paused tailer did not resume when a partition left")
	}
}

// await returns when the record lands in its slot, and reports an
// overwritten one.
func TestTailerAwait(t *testing.T) {
	tl := newTestTailer(2, 4)
	got := make(chan error, 1)
	go func() {
		found, err := tl.await(context.Background(), nil, share.KindDelta, 1, 3)
		if err == nil && !found {
			err = errors.New("not found")
		}
		got <- err
	}()
	tl.put(delta(0, 3)) // another partition's: no wake-up for it
	tl.put(delta(1, 3))
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	tl.put(delta(1, 7))
	if _, err := tl.await(context.Background(), nil, share.KindDelta, 1, 3); !errors.Is(err, errOverwritten) {
		t.Fatalf("await of an overwritten epoch: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if found, err := tl.await(ctx, nil, share.KindDelta, 0, 8); found || err != nil {
		t.Fatalf("await after ctx ended: %v %v", found, err)
	}
}

// The per-epoch count behind awaitEpoch stays exact whatever the order of
// arrivals: after every store, each slot counts the newest epoch stored in
// it, and exactly the partitions whose record there is of that epoch
// (records read back over newer ones, re-reads of the same epoch and
// window wrap-around included), and its channel is closed once all are.
func TestTailerEpochCountExact(t *testing.T) {
	const P, W = 5, 4
	tl := newTestTailer(P, W)
	tl.idle = make([]bool, P)
	newest := make([]int64, W)
	for i := range newest {
		newest[i] = -1
	}
	rng := uint64(1)
	next := func(n int) int { // xorshift: deterministic, no wall clock
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int(rng % uint64(n))
	}
	for step := 0; step < 5000; step++ {
		q, e := next(P), int64(next(3*W))
		tl.mu.Lock()
		tl.storeLocked(delta(q, e), next(2) == 0)
		tl.mu.Unlock()
		s := e % W
		newest[s] = max(newest[s], e)
		for slot := range int64(W) {
			want := 0
			for p := range P {
				if byQ := tl.recs[share.KindDelta-1]; p < len(byQ) && byQ[p] != nil && byQ[p][slot].rec != nil && byQ[p][slot].rec.Epoch == newest[slot] {
					want++
				}
			}
			c := tl.epochs[slot]
			if newest[slot] >= 0 && (c.epoch != newest[slot] || c.n != want) {
				t.Fatalf("step %d (delta %d/%d): slot %d counts epoch %d × %d, want epoch %d × %d", step, q, e, slot, c.epoch, c.n, newest[slot], want)
			}
			if c.n == P && c.done != nil {
				t.Fatalf("step %d: slot %d is complete but its channel is open", step, slot)
			}
			// The snapshot read without the lock: every partition's
			// delta of the slot's epoch, the very records held, exactly
			// when the count is complete.
			for e := newest[slot] - 2*W; e <= newest[slot]+W; e += W {
				full := tl.completeEpoch(e)
				if (full != nil) != (e >= 0 && e == newest[slot] && want == P) {
					t.Fatalf("step %d: epoch %d (slot %d, %d of %d held): snapshot %v", step, e, slot, want, P, full != nil)
				}
				for p, r := range full {
					if h, _ := tl.get(share.KindDelta, p, e); r != h || h == nil {
						t.Fatalf("step %d: epoch %d's snapshot holds %p for partition %d, the tailer %p", step, e, r, p, h)
					}
				}
			}
		}
	}
}

// A boundary skips the locked look-up of its decision record only when
// none of that partition's of that epoch or later was ever stored: get
// then finds nothing (and no overwritten slot).
func TestTailerMayHoldDecision(t *testing.T) {
	const P, W = 3, 4
	tl := newTestTailer(P, W)
	tl.decNewest = make([]atomic.Int64, P)
	for q := range tl.decNewest {
		tl.decNewest[q].Store(-1)
	}
	dec := func(q int, e int64) *share.Record {
		return &share.Record{Kind: share.KindDecision, Partition: q, Epoch: e, Partitions: P, Frontier: []int64{0, 0, 0}}
	}
	for _, r := range []*share.Record{dec(1, 2), dec(1, 9), dec(1, 5), dec(2, 0)} {
		tl.put(r)
	}
	for q := range P {
		for e := range int64(12) {
			r, err := tl.get(share.KindDecision, q, e)
			if found := r != nil || err != nil; found && !tl.mayHoldDecision(q, e) {
				t.Fatalf("partition %d, epoch %d: get finds %v (err %v) but mayHoldDecision says none", q, e, r, err)
			}
		}
	}
	if tl.mayHoldDecision(0, 0) || tl.mayHoldDecision(1, 10) || tl.mayHoldDecision(2, 1) {
		t.Fatal("mayHoldDecision reports a decision where none of that epoch or later was stored")
	}
}

// awaitDurable returns once every partition of the frontier is durable up
// to its epoch, wakes for the partition it waits on, and gives up when ctx
// ends.
func TestTailerAwaitDurable(t *testing.T) {
	p := &Pipeline{inputParts: 3}
	p.cfg.ShareWindow = 8
	tl := newTailer(p, 1)
	f := []int64{2, -1, 4}
	done := make(chan bool, 1)
	go func() { done <- tl.awaitDurable(context.Background(), f) }()
	tl.raiseDurable(0, 3)
	tl.raiseDurable(1, 7)
	tl.raiseDurable(2, 3)
	select {
	case ok := <-done:
		t.Fatalf("returned %v with partition 2 durable to epoch 3 of 4", ok)
	case <-time.After(20 * time.Millisecond):
	}
	tl.raiseDurable(2, 2) // lower: no change
	tl.raiseDurable(2, 4)
	if !<-done {
		t.Fatal("every partition durable, yet awaitDurable reported false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- tl.awaitDurable(ctx, []int64{5, 0, 0}) }()
	cancel()
	if <-done {
		t.Fatal("partition 0 is durable to epoch 3 of 5, yet awaitDurable reported true after ctx ended")
	}
}

// awaitEpoch returns once the last partition's delta of the epoch lands,
// and gives up (for the caller's per-partition wait) when a partition
// turns idle or the deadline passes.
func TestTailerAwaitEpoch(t *testing.T) {
	const P = 3
	tl := newTestTailer(P, 8)
	tl.idle = make([]bool, P)
	ctx := context.Background()
	type res struct{ complete, stopped bool }
	wait := func(e int64, stop <-chan time.Time) chan res {
		ch := make(chan res, 1)
		go func() { c, s := tl.awaitEpoch(ctx, func() <-chan time.Time { return stop }, e); ch <- res{c, s} }()
		return ch
	}
	done := wait(2, nil)
	tl.put(delta(0, 2))
	tl.put(delta(1, 2))
	tl.put(delta(2, 10)) // epoch 2's slot of partition 2 moves on: the wait ends, not complete
	if r := <-done; r.complete || r.stopped {
		t.Fatalf("a slot that moved on to a later epoch: %+v", r)
	}
	done = wait(3, nil)
	for q := range P {
		tl.put(delta(q, 3))
	}
	if r := <-done; !r.complete {
		t.Fatalf("every partition's delta of epoch 3 is held: %+v", r)
	}
	// Complete already: no wait, so no deadline is armed.
	if c, s := tl.awaitEpoch(ctx, func() <-chan time.Time { t.Fatal("armed a deadline for a complete epoch"); return nil }, 3); !c || s {
		t.Fatalf("epoch 3 again: complete %v, stopped %v", c, s)
	}
	done = wait(4, nil)
	tl.put(delta(0, 4))
	tl.setIdle(1, true)
	if r := <-done; r.complete || r.stopped {
		t.Fatalf("a partition turned idle: %+v", r)
	}
	done = wait(5, nil) // while a partition is idle, the per-partition wait decides
	if r := <-done; r.complete || r.stopped {
		t.Fatalf("a partition is idle: %+v", r)
	}
	tl.setIdle(1, false)
	stop := make(chan time.Time)
	done = wait(5, stop)
	close(stop)
	if r := <-done; r.complete || !r.stopped {
		t.Fatalf("the deadline passed: %+v", r)
	}
}
