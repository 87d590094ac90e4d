package consumer

// Publishing a worker's deltas (shared models): the publisher goroutine
// that writes them to the sync topic in epoch order, the deltas held until
// the decision they follow has landed (flushDeltas, also called when that
// decision lands: pendingDecision.flush), and what a checkpoint waits for
// (deltasAcked).

import (
	"context"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/share"
)

// startPublisher starts the goroutine that writes the worker's deltas.
func (w *worker) startPublisher(parent context.Context) {
	sr := w.sh
	ctx, cancel := context.WithCancel(parent)
	sr.pubCancel, sr.pubCtx = cancel, ctx
	sr.pubCh = make(chan kafka.Message, 64)
	sr.pubDone = make(chan struct{})
	go func() {
		defer close(sr.pubDone)
		var batch []kafka.Message
		for {
			batch = batch[:0]
			m, ok := <-sr.pubCh
			if !ok {
				return
			}
			batch = append(batch, m)
		more:
			for len(batch) < 64 {
				select {
				case m, ok := <-sr.pubCh:
					if !ok {
						break more
					}
					batch = append(batch, m)
				default:
					break more
				}
			}
			if hook := w.p.cfg.beforePublish; hook != nil {
				hook(ctx, w.part)
			}
			for attempt := 0; ; attempt++ {
				err := ctx.Err() // (kafka-go may still write a batch given a cancelled context)
				if err == nil && !w.lease.await(ctx) {
					// fence.go: a new owner replays and publishes these
					// (byte-identical) deltas; stop as if cancelled.
					err = errLeaseExpired
					sr.pubCancel()
				}
				if err == nil {
					err = w.p.shareW.WriteMessages(ctx, batch...)
				}
				if err == nil {
					break
				}
				if ctx.Err() != nil {
					sr.pubMu.Lock()
					sr.pubErr = err
					sr.pubCond.Broadcast()
					sr.pubMu.Unlock()
					for range sr.pubCh { // drain
					}
					return
				}
				w.p.m.writeErrors.WithLabelValues("share").Inc()
				w.log.Warn("publishing shared deltas failed; retrying", "attempt", attempt+1, "err", err)
				sleep(ctx, time.Duration(min(attempt+1, 10))*200*time.Millisecond)
			}
			w.p.sm.published.Add(float64(len(batch)))
			// The batch's deltas are in epoch order: the last is the newest
			// (an idle record's epoch is the next delta's, not one written).
			for i := len(batch) - 1; i >= 0; i-- {
				if kind, _, e, ok := share.Peek(batch[i].Value); ok && kind == share.KindDelta {
					w.p.tail.raiseDurable(w.part, e)
					break
				}
			}
			sr.pubMu.Lock()
			sr.unacked -= len(batch)
			sr.pubCond.Broadcast()
			sr.pubMu.Unlock()
		}
	}()
}

// stopPublisher closes the publisher's input and waits for it.
func (w *worker) stopPublisher() {
	if w.sh == nil || w.sh.pubCh == nil {
		return
	}
	// Cancelled first: a flush blocked on a full input (pendingDecision.flush)
	// lets go of unsentMu.
	w.sh.pubCancel()
	w.sh.unsentMu.Lock()
	w.sh.pubClosed = true
	close(w.sh.pubCh)
	w.sh.unsentMu.Unlock()
	<-w.sh.pubDone
}

// deltasAcked waits until every published delta is acknowledged (before a
// checkpoint: a checkpoint past an epoch whose delta never landed would
// leave the others waiting for it for ever), and the decision record in
// flight too. It returns false if the publisher gave up or ctx ended
// first.
func (w *worker) deltasAcked(ctx context.Context) bool {
	sr := w.sh
	if sr == nil {
		return true
	}
	if !w.flushDeltas(ctx, true) || !w.decisionAcked(ctx) {
		return false
	}
	stop := context.AfterFunc(ctx, func() {
		sr.pubMu.Lock()
		sr.pubCond.Broadcast()
		sr.pubMu.Unlock()
	})
	defer stop()
	sr.pubMu.Lock()
	defer sr.pubMu.Unlock()
	for sr.unacked > 0 && sr.pubErr == nil && ctx.Err() == nil {
		sr.pubCond.Wait()
	}
	// What the checkpoint merged is durable already: it is taken only
	// once the output before it is acknowledged, and the writer waits for
	// the merged deltas to be durable first (tailer.awaitDurable).
	return sr.unacked == 0
}

// unsentDelta is a delta record not yet given to the worker's publisher:
// it waits for the decision in flight when it was made (after, nil if
// none) to land.
type unsentDelta struct {
	epoch int64
	msg   kafka.Message
	after *pendingDecision
}

// flushDeltas gives the publisher every unsent delta whose decision has
// landed, in epoch order; with wait, it waits for the decisions and gives
// it all of them. It returns false if a decision did not land (what
// follows it must not be published), the publisher was stopped or ctx
// ended. Safe for concurrent use: the worker calls it at its boundaries,
// and a landing decision calls it (without wait) from another goroutine
// (pendingDecision.flush), so that the deltas it held leave at once even
// while the worker waits at a later boundary for a delta of another
// instance's partition, which may itself wait for them.
func (w *worker) flushDeltas(ctx context.Context, wait bool) bool {
	sr := w.sh
	sr.unsentMu.Lock()
	defer sr.unsentMu.Unlock()
	if sr.pubClosed {
		return len(sr.unsent) == 0
	}
	n := 0
	defer func() {
		sr.unsent = sr.unsent[:copy(sr.unsent, sr.unsent[n:])]
		clear(sr.unsent[len(sr.unsent):cap(sr.unsent)])
	}()
	for _, u := range sr.unsent {
		if pd := u.after; pd != nil {
			if wait {
				select {
				case <-pd.done:
				case <-ctx.Done():
					return false
				}
			}
			select {
			case <-pd.done:
				if !pd.ok {
					return false
				}
			default:
				return true // this one and the later ones wait
			}
		}
		sr.pubMu.Lock()
		sr.unacked++
		sr.pubMu.Unlock()
		select {
		case sr.pubCh <- u.msg:
		case <-ctx.Done():
			sr.pubMu.Lock()
			sr.unacked--
			sr.pubMu.Unlock()
			return false
		}
		n++
	}
	return true
}

// awaitOwn waits until the partition's own deltas up to epoch e are held
// (handed over: their decisions have landed), and reports false if one
// did not land or ctx ended.
func (w *worker) awaitOwn(ctx context.Context, e int64) bool {
	var last *pendingDecision
	w.sh.unsentMu.Lock()
	for _, u := range w.sh.unsent {
		if u.epoch > e {
			break
		}
		if u.after != nil {
			last = u.after // decisions land in order: the last one is enough
		}
	}
	w.sh.unsentMu.Unlock()
	if last == nil {
		return true
	}
	select {
	case <-last.done:
		return last.ok
	case <-ctx.Done():
		return false
	}
}

// hasUnsent reports whether some delta waits for its decision to land.
func (sr *shareRun) hasUnsent() bool {
	sr.unsentMu.Lock()
	defer sr.unsentMu.Unlock()
	return len(sr.unsent) > 0
}
