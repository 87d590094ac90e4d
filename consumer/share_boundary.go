package consumer

// The schedule and its waits (shared models; package share holds the
// schedule itself): a worker's sync point at the end of every epoch
// (boundary) — its delta, the frontier (a recorded decision, the default a
// previous owner applied, or the bounded wait and Plan), and the merge —
// and how a restored worker replays the boundaries a previous owner passed
// (noteReplay, awaitApplied). Every wait of a boundary is in this file.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"okstream/learner"
	"okstream/share"
)

// shareRun is a worker's part of the schedule.
type shareRun struct {
	cfg     share.Config
	st      share.State
	models  []int // indices into the model set of the shared models
	names   []string
	pubMu   sync.Mutex
	pubCond *sync.Cond
	unacked int
	pubErr  error
	pubCh   chan kafka.Message
	pubDone chan struct{}
	// pubCancel stops the publisher's retries (stopPublisher): what it has
	// not written is written again by whoever replays those epochs.
	pubCancel context.CancelFunc
	pubCtx    context.Context // the publisher's (outlives the generation, like the writer)
	// dec is the newest decision record written (nil: none since the last
	// one found landed; see writeDecisionAsync). Owned by the worker's
	// goroutine, as is unsent.
	dec *pendingDecision
	// decDropped: one of this worker's decisions was dropped, so the later
	// ones are dropped too (decisionQueue; only the committer touches it).
	decDropped bool
	// unsent: the delta records not yet given to the publisher, in epoch
	// order (flushDeltas). Guarded by unsentMu: the worker appends to it
	// and flushes it, and so does the decision committer when a decision
	// lands (pendingDecision.flush), while the worker may be blocked at a
	// later boundary. pubClosed (also under unsentMu): the publisher's
	// input is closed, nothing more is sent.
	unsentMu  sync.Mutex
	unsent    []unsentDelta
	pubClosed bool
	// idleSaid: the last idle record this worker published said idle
	// (publishIdle; owned by the worker's goroutine).
	idleSaid bool
	// passed: previous owners of the partition are known to have gone
	// past every boundary up to this epoch (noteReplay). Such a boundary
	// without a decision record merged the default frontier, which the
	// replay applies (boundary).
	passed int64
	// broken: a boundary was interrupted (the generation ended while it
	// waited): the state is between an epoch's end and its merge, so the
	// worker must not checkpoint it.
	broken bool
	gStale []prometheus.Gauge
	// Scratch reused by every boundary (a sync point every few events:
	// what it allocates is garbage at that rate).
	refs  []share.Ref
	next  []int64 // the strict frontier (fillFrontier)
	recs  []*share.Record
	in    []learner.SharedDelta
	timer *time.Timer // the bounded wait's deadline (stopped between uses)
}

// setupShare prepares a worker's schedule (after newWorker, before restore).
func (w *worker) setupShare() {
	cfg := w.p.cfg
	if len(cfg.Share) == 0 {
		return
	}
	sr := &shareRun{cfg: share.Config{Every: cfg.ShareEvery, Lag: cfg.ShareLag, Partitions: w.p.inputParts}, passed: -1}
	sr.st = share.NewState(w.p.inputParts)
	for _, name := range cfg.Share {
		for i, m := range w.ms.models {
			if m.name == name {
				sr.models = append(sr.models, i)
				sr.names = append(sr.names, name)
				sr.gStale = append(sr.gStale, w.p.sm.staleness.WithLabelValues(name, w.label))
			}
		}
	}
	sr.pubCond = sync.NewCond(&sr.pubMu)
	w.sh = sr
	w.ms.share = &sr.st
}

// boundary runs the sync point at the end of epoch e (see package share).
// It returns false, with the worker marked broken, if ctx ended before the
// merge; an error the schedule cannot recover from fails the partition.
func (w *worker) boundary(ctx context.Context, e int64) (bool, error) {
	sr, t := w.sh, w.p.tail
	if hook := w.p.cfg.beforeDelta; hook != nil {
		hook(ctx, w.part, e)
	}
	// 1. The deltas. Delta e is a function of every decision this
	// partition made before e, so nobody may see it before they are
	// durable: while one is in flight, the delta is handed over (to this
	// process's other partitions) by the decision committer when it lands,
	// and written to the sync topic by this worker after that (flushDeltas).
	// The worker goes on meanwhile; it waits only where it needs its own
	// delta (awaitOwn, below).
	rec := &share.Record{Kind: share.KindDelta, Partition: w.part, Epoch: e, Partitions: sr.cfg.Partitions, Offset: w.next}
	for k, i := range sr.models {
		m := w.ms.models[i]
		d, err := m.l.(learner.Sharer).ShareDelta()
		if err != nil {
			return false, fmt.Errorf("model %s: share delta: %w", sr.names[k], err)
		}
		rec.Deltas = append(rec.Deltas, share.ModelDelta{Model: m.name, Data: d})
	}
	pd := sr.dec
	if pd != nil && !pd.hold(rec) {
		if !pd.ok { // not durable: its work must not be seen; the next owner replays it
			sr.broken = true
			return false, nil
		}
		pd, sr.dec = nil, nil
	}
	if pd == nil {
		t.put(rec)
	}
	sr.unsentMu.Lock()
	sr.unsent = append(sr.unsent, unsentDelta{epoch: e, after: pd,
		msg: w.p.signSync(kafka.Message{Key: share.AppendKey(make([]byte, 0, len(t.prefix)+24), t.prefix, share.KindDelta, w.part, e, t.window), Value: rec.Encode()})})
	sr.unsentMu.Unlock()
	if !w.flushDeltas(ctx, false) {
		sr.broken = true
		return false, nil
	}
	// The own delta this boundary merges (epoch e − L) must be held.
	if !w.awaitOwn(ctx, e-sr.cfg.Lag) {
		sr.broken = true
		return false, nil
	}
	// 2. The frontier: a recorded decision, or the bounded wait and Plan.
	old := sr.st.Frontier
	var next []int64
	fast := false // the strict schedule's frontier, found without Plan
	var dec *share.Record
	if t.mayHoldDecision(w.part, e) {
		var err error
		if dec, err = t.get(share.KindDecision, w.part, e); err != nil {
			return false, err
		}
	}
	// avail runs with t.mu read-locked (around a whole WaitFor or Plan).
	var getErr error
	avail := func(q int, ep int64) bool {
		r, err := t.getLocked(share.KindDelta, q, ep)
		if err != nil && getErr == nil {
			getErr = err
		}
		return r != nil
	}
	start := time.Now()
	if dec != nil {
		if len(dec.Frontier) != sr.cfg.Partitions {
			return false, fmt.Errorf("share: decision record of boundary %d has %d partitions, the input has %d", e, len(dec.Frontier), sr.cfg.Partitions)
		}
		next = dec.Frontier
	} else if e <= sr.passed {
		// A previous owner went past this boundary and wrote no record,
		// so it merged the default frontier; its deltas computed from that
		// merge have left (and, from them, other partitions' output).
		// Deciding again would let the bounded wait skip a delta it merged
		// in-process before the delta was durable, if the partition
		// regenerating it now is slower than --share-max-wait.
		if d, ok := sr.cfg.Default(e, old); ok {
			next = d
		}
	}
	if next != nil {
		// The frontier a previous owner applied: waited for as long as it
		// takes.
		ok, strict, err := w.awaitApplied(ctx, e, old, next)
		if err != nil || !ok {
			return false, err
		}
		fast = strict
	} else {
		// The bounded wait's deadline, armed when a wait begins.
		var deadline <-chan time.Time
		arm := func() <-chan time.Time {
			if deadline == nil {
				deadline = sr.armTimer(w.p.cfg.ShareMaxWait)
			}
			return deadline
		}
		defer func() {
			if deadline != nil && deadline != expired {
				sr.timer.Stop()
			}
		}()
		var waitFor []int
		tgt := e - sr.cfg.Lag
		if tgt >= 0 && strictAt(old, tgt-1) {
			// On the strict schedule every partition is waited for: one
			// wake-up when the last delta of epoch tgt lands. Once it
			// has, the frontier is the strict one (what Plan finds when
			// every delta of tgt is held), with no scan of the
			// partitions. Anything else (the deadline, an idle partition)
			// is left to the loop below, as if the waits had happened
			// there.
			complete, stopped := t.awaitEpoch(ctx, arm, tgt)
			if complete {
				fast = true
			} else if stopped {
				deadline = expired
			}
		}
		if !fast {
			// Each partition waited for is awaited in turn, woken only by
			// arrivals in its slot (Plan then rechecks them all).
			t.mu.RLock()
			waitFor = sr.cfg.WaitFor(e, old, avail)
			t.mu.RUnlock()
			if getErr != nil {
				return false, getErr
			}
			if len(waitFor) > 0 {
				arm()
			}
		}
		for _, q := range waitFor {
			found, err := t.await(ctx, deadline, share.KindDelta, q, e-sr.cfg.Lag)
			if err != nil {
				return false, err
			}
			if found {
				continue
			}
			if ctx.Err() != nil {
				sr.broken = true
				return false, nil
			}
			if t.isIdle(q) { // no input on this process: not waited for (Plan skips it)
				w.p.sm.skips.Inc()
				continue
			}
			t.mu.RLock()
			missing := sr.cfg.WaitFor(e, old, avail)
			t.mu.RUnlock()
			if getErr != nil {
				return false, getErr
			}
			w.p.sm.skips.Add(float64(len(missing)))
			w.p.sm.expired.Inc()
			w.log.Warn("shared models: proceeding without partitions whose deltas did not arrive within the maximum wait", "boundary", e, "partitions", missing, "max_wait", w.p.cfg.ShareMaxWait)
			break
		}
		// def: the frontier is the one a replay applies where it finds
		// no decision record (share.Config.Default), so none is written.
		var def bool
		if fast {
			next, def = fillFrontier(&sr.next, len(old), tgt), true
		} else {
			t.mu.RLock()
			next, def = sr.cfg.Plan(e, old, avail)
			t.mu.RUnlock()
		}
		if getErr != nil {
			return false, getErr
		}
		if !def {
			w.writeDecisionAsync(&share.Record{Kind: share.KindDecision, Partition: w.part, Epoch: e, Partitions: sr.cfg.Partitions, Offset: w.next, Frontier: next}) // Plan returns a fresh slice
		}
	}
	w.p.sm.wait.Observe(time.Since(start).Seconds())
	// 3. Merge.
	refs := share.AppendDue(sr.refs[:0], old, next)
	sr.refs = refs
	recs := slices.Grow(sr.recs[:0], len(refs))[:len(refs)]
	sr.recs = recs
	defer clear(recs) // the records stay the tailer's, not the worker's
	// On the strict schedule (fast) the frontier merges every partition's
	// delta of one epoch, in partition order: that epoch's snapshot,
	// read without t.mu.
	held := false
	if fast {
		full := t.completeEpoch(e - sr.cfg.Lag)
		held = len(full) == len(refs)
		for j, ref := range refs {
			if !held {
				break
			}
			r := full[j]
			held = r != nil && r.Partition == ref.Partition && r.Epoch == ref.Epoch
			recs[j] = r
		}
	}
	if !held {
		if err := t.getDue(refs, recs, e); err != nil {
			return false, err
		}
	}
	for k, i := range sr.models {
		in := sr.in[:0]
		for j, ref := range refs {
			data, ok := findDelta(recs[j], sr.names[k])
			if !ok {
				return false, fmt.Errorf("share: partition %d's delta of epoch %d has no model %s (is it configured the same on every instance?)", ref.Partition, ref.Epoch, sr.names[k])
			}
			in = append(in, learner.SharedDelta{Partition: ref.Partition, Epoch: ref.Epoch, Own: ref.Partition == w.part, Data: data})
		}
		var err error
		if mx, ok := w.ms.models[i].l.(learner.Mixer); ok {
			var mix []float64
			if mix, err = t.mix(sr.names[k], e, fast, refs, mx, in); err == nil {
				err = mx.ShareApply(in, mix)
			}
		} else {
			err = w.ms.models[i].l.(learner.Sharer).ShareMerge(in)
		}
		if err != nil {
			return false, fmt.Errorf("model %s: merging the deltas of boundary %d: %w", sr.names[k], e, err)
		}
		w.p.sm.merged.Add(float64(len(in)))
		sr.gStale[k].Set(float64(sr.cfg.Staleness(e, next)))
		sr.in = in
		clear(in) // no reference to the deltas' bytes outlives the merge
	}
	sr.st.Frontier = append(sr.st.Frontier[:0], next...)
	return true, nil
}

// noteReplay sets how far previous owners of the partition are known to
// have gone (shareRun.passed), once the restored worker's tailer has caught
// up: a delta of epoch d of the partition on the sync topic (or held in
// this process from an earlier generation) was computed after boundary
// d−1, and so was a decision record of boundary d. Nothing else of the
// partition's can have left computed from a merge whose deltas were not
// durable: its output and checkpoints wait for them (tailer.awaitDurable),
// and a replay finds durable deltas on the sync topic.
func (w *worker) noteReplay() {
	sr, t := w.sh, w.p.tail
	t.mu.RLock()
	sr.passed = max(t.newestLocked(share.KindDelta, w.part), t.newestLocked(share.KindDecision, w.part)) - 1
	t.mu.RUnlock()
	if sr.passed >= 0 {
		w.log.Info("shared models: replaying the boundaries a previous owner passed with its frontiers", "through_epoch", sr.passed)
	}
}

// awaitApplied waits, with no bound, for the deltas a boundary e moving
// the frontier from old to next merges (a frontier a previous owner of the
// partition applied). Past --share-max-wait it says in the log which delta
// it still waits for, once. A partition due that is idle on this process
// is polled (its delta comes with its next events). On the strict schedule
// it waits for the epoch's count (tailer.awaitEpoch, one wake-up) and
// reports strict. It returns false, with the worker marked broken, if ctx
// ended first.
func (w *worker) awaitApplied(ctx context.Context, e int64, old, next []int64) (ok, strict bool, err error) {
	sr, t := w.sh, w.p.tail
	// The timer (sr.timer, as the bounded wait's) is armed only when a
	// wait must block.
	var slow <-chan time.Time
	arm := func(d time.Duration) <-chan time.Time {
		slow = sr.armTimer(d)
		return slow
	}
	defer func() {
		if slow != nil {
			sr.timer.Stop()
		}
	}()
	maxWait := max(w.p.cfg.ShareMaxWait, time.Millisecond)
	if tgt := e - sr.cfg.Lag; tgt >= 0 && strictAt(old, tgt-1) && strictAt(next, tgt) {
		complete, stopped := t.awaitEpoch(ctx, func() <-chan time.Time { return arm(maxWait) }, tgt)
		if complete {
			return true, true, nil
		}
		if stopped {
			arm(0) // the loop below says which delta is late
		}
	}
	warned := false
	for _, ref := range share.Due(old, next) {
		for {
			if slow == nil {
				if r, err := t.get(share.KindDelta, ref.Partition, ref.Epoch); r != nil && err == nil {
					break
				}
				arm(maxWait)
			}
			found, err := t.await(ctx, slow, share.KindDelta, ref.Partition, ref.Epoch)
			if err != nil {
				return false, false, err
			}
			if found {
				break
			}
			if ctx.Err() != nil {
				sr.broken = true
				return false, false, nil
			}
			if t.isIdle(ref.Partition) {
				sleep(ctx, 50*time.Millisecond)
				continue
			}
			if !warned {
				warned = true
				w.log.Warn("shared models: replaying a boundary a previous owner passed, and waiting for a delta it merged (exact recovery needs it; it comes once its partition has been replayed up to it)",
					"boundary", e, "partition", ref.Partition, "epoch", ref.Epoch, "waited", w.p.cfg.ShareMaxWait)
			}
			arm(time.Hour) // from now on, woken by arrivals only
		}
	}
	return true, false, nil
}

// armTimer starts the worker's wait timer (sr.timer, created on first use)
// for d and returns its channel; callers stop it when done (Go ≥ 1.23
// timers need no drain before Reset).
func (sr *shareRun) armTimer(d time.Duration) <-chan time.Time {
	if sr.timer == nil {
		sr.timer = time.NewTimer(d)
	} else {
		sr.timer.Reset(d)
	}
	return sr.timer.C
}

// fillFrontier sets *buf to n copies of t and returns it (the strict
// frontier, in storage reused across boundaries).
func fillFrontier(buf *[]int64, n int, t int64) []int64 {
	f := slices.Grow((*buf)[:0], n)[:n]
	for i := range f {
		f[i] = t
	}
	*buf = f
	return f
}

// strictAt reports whether every partition's frontier is t.
func strictAt(old []int64, t int64) bool {
	for _, f := range old {
		if f != t {
			return false
		}
	}
	return true
}

// expired is a deadline that has passed (a wait that timed out before the
// loop over the partitions waited for).
var expired = func() <-chan time.Time {
	ch := make(chan time.Time)
	close(ch)
	return ch
}()

func findDelta(r *share.Record, model string) ([]byte, bool) {
	for _, d := range r.Deltas {
		if d.Model == model {
			return d.Data, true
		}
	}
	return nil, false
}
