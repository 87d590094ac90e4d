package consumer

// Idle partitions (shared models with --share-skip-idle): a partition that
// has run out of input is not waited for, by the partitions of its own
// instance (setIdle) or of others (its idle records on the sync topic:
// publishIdle, remoteIdleLocked).

import (
	"context"

	"github.com/segmentio/kafka-go"

	"okstream/share"
)

// setIdle marks this process's input partition q as idle or not (see
// tailer.idle; only with Config.ShareSkipIdle); marking it idle wakes the
// boundaries waiting for its deltas, which then proceed without it instead
// of waiting up to ShareMaxWait. The decision is timing-dependent like any
// bounded wait's, so it is written as a decision record and replayed
// exactly; a live stream with lulls longer than FetchMaxWait then leaves
// the strict schedule at every lull, hence opt-in. A partition of another
// instance is marked by its idle records (remoteIdleLocked).
func (t *tailer) setIdle(q int, idle bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.setIdleLocked(q, idle)
}

// remoteIdleLocked applies an idle record of partition q read from the sync
// topic (KindIdle, written by the worker of q on another instance with
// --share-skip-idle): q is idle until a record says otherwise or a delta of
// q of the record's epoch or later arrives (its next owner may be busy
// without having said so). Ignored for a partition this process owns (its
// own worker decides). t.mu is held.
func (t *tailer) remoteIdleLocked(rec *share.Record) {
	q := rec.Partition
	if q >= len(t.local) || t.local[q] > 0 {
		return
	}
	idle := rec.Idle
	if byPart := t.recs[share.KindDelta-1]; idle && q < len(byPart) && byPart[q] != nil {
		for _, h := range byPart[q] {
			if h.rec != nil && h.rec.Epoch >= rec.Epoch {
				idle = false // stale: q has made that delta since
				break
			}
		}
	}
	if idle && q < len(t.idleFrom) {
		t.idleFrom[q] = rec.Epoch
	}
	t.setIdleLocked(q, idle)
}

// setIdleLocked is setIdle with t.mu held.
func (t *tailer) setIdleLocked(q int, idle bool) {
	if q >= len(t.idle) || t.idle[q] == idle {
		return
	}
	t.idle[q] = idle
	if !idle {
		t.nIdle--
		return
	}
	t.nIdle++
	t.wakeEpochsLocked()
	for s, ch := range t.arrivals {
		if s.kind == share.KindDelta && s.partition == q {
			close(ch)
			delete(t.arrivals, s)
		}
	}
}

// isIdle reports whether this process's input partition q is idle.
func (t *tailer) isIdle(q int) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return q < len(t.idle) && t.idle[q]
}

// publishIdle tells the other instances that this partition has become
// idle, or busy again (a KindIdle record, with --share-skip-idle), so that
// their boundaries do not wait for its next delta either (tailer.
// remoteIdleLocked); only on a change. An idle record follows every delta
// the partition has made (it is sent after them, on the same publisher, in
// order), so a reader that sees it has seen them.
func (w *worker) publishIdle(ctx context.Context, idle bool) {
	sr, t := w.sh, w.p.tail
	if sr.idleSaid == idle {
		return
	}
	if idle && !w.flushDeltas(ctx, false) {
		return
	}
	rec := &share.Record{Kind: share.KindIdle, Partition: w.part, Epoch: sr.st.Count / sr.cfg.Every,
		Partitions: sr.cfg.Partitions, Offset: w.next, Idle: idle}
	msg := w.p.signSync(kafka.Message{Key: share.AppendKey(nil, t.prefix, share.KindIdle, w.part, 0, t.window), Value: rec.Encode()})
	sr.unsentMu.Lock()
	defer sr.unsentMu.Unlock()
	if sr.pubClosed || (idle && len(sr.unsent) > 0) {
		return // a delta still waits for its decision: not idle yet as far as the others can know
	}
	sr.pubMu.Lock()
	sr.unacked++
	sr.pubMu.Unlock()
	select {
	case sr.pubCh <- msg:
		sr.idleSaid = idle
	case <-ctx.Done():
		sr.pubMu.Lock()
		sr.unacked--
		sr.pubMu.Unlock()
	}
}
