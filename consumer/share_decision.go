package consumer

// Decision records (shared models): a boundary whose frontier a replay
// could not derive writes its decision asynchronously; the pipeline's
// committer writes them in group commits, settles them in order, and hands
// over the deltas each held when it lands (pendingDecision, decisionQueue).

import (
	"context"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/share"
)

// pendingDecision is a decision record being written: ok is set before
// done is closed.
type pendingDecision struct {
	rec  *share.Record
	msg  kafka.Message
	part int
	ctx  context.Context // the writing worker's publisher's: dropped once it ends
	// lease: the writing worker's generation's (fence.go): a decision is
	// not written once it has ended, since a new owner of the partition
	// may decide the same boundary otherwise.
	lease *lease
	// dropped: a decision of this worker was dropped (the committer's,
	// shared by the worker's decisions: shareRun.decDropped).
	dropped *bool
	done    chan struct{}
	ok      bool
	// mu guards settled and held: the deltas the partition computed after
	// this decision, handed over by the committer when it lands (settle),
	// in epoch order, or dropped with it.
	mu      sync.Mutex
	settled bool
	held    []*share.Record
	// flush, once it has landed, gives the worker's publisher the deltas
	// that waited for it (worker.flushDeltas, without wait), from the
	// committer's side: the worker may be blocked at a later boundary,
	// waiting for a delta of another instance's partition that waits for
	// these. Before, only the worker's next flush sent them, and two
	// instances whose partitions each held a delta behind a decision in
	// flight waited for each other until --share-max-wait expired, made a
	// decision again, and so on (TestSharedSlowDecisionsDoNotChainWaits).
	flush func()
}

// hold keeps rec to be handed over when the decision lands, and reports
// true; false if it has settled already (then ok says how).
func (pd *pendingDecision) hold(rec *share.Record) bool {
	pd.mu.Lock()
	defer pd.mu.Unlock()
	if pd.settled {
		return false
	}
	pd.held = append(pd.held, rec)
	return true
}

// settle ends the decision's flight (ok: it landed) and hands over what it
// held: the decision itself, then the deltas, in the tailer; or drops them.
func (pd *pendingDecision) settle(t *tailer, ok bool) {
	pd.mu.Lock()
	if ok {
		t.put(pd.rec)
		for _, r := range pd.held {
			t.put(r)
		}
	}
	pd.ok, pd.settled, pd.held = ok, true, nil
	pd.mu.Unlock()
	close(pd.done)
	if ok && pd.flush != nil {
		go pd.flush()
	}
}

// writeDecisionAsync queues the decision record of the boundary being
// processed for the pipeline's decision committer and returns at once. The
// merge and the next epochs' learning go on meanwhile, but nothing that
// depends on the decision leaves the worker before it is acknowledged: the
// deltas of the next boundaries are handed over to this process's other
// partitions by the committer once it has landed and published after that
// (pendingDecision.hold, flushDeltas), the predictions and dead letters of
// the micro-batch wait for it in the writer (unit.dec), and a checkpoint
// waits for it (deltasAcked). So a crash before it lands loses only work
// that a replay redoes with a decision of its own, as if this one had never
// been made. Several may be in flight per partition: the committer settles
// them in the order it took them and, once one is dropped, drops the later
// ones of the same worker (shareRun.decDropped), so the newest landing
// means every earlier one has; sr.dec is the newest.
func (w *worker) writeDecisionAsync(d *share.Record) {
	sr, t := w.sh, w.p.tail
	pd := &pendingDecision{rec: d, part: w.part, ctx: sr.pubCtx, lease: w.lease, dropped: &sr.decDropped, done: make(chan struct{}),
		msg:   w.p.signSync(kafka.Message{Key: []byte(share.Key(t.prefix, share.KindDecision, w.part, d.Epoch, t.window)), Value: d.Encode()}),
		flush: func() { w.flushDeltas(sr.pubCtx, false) }}
	sr.dec = pd
	w.p.decq.add(pd)
}

// decisionAcked waits for the decision record in flight, if any, and
// reports whether it landed (false: it did not, or ctx ended first).
func (w *worker) decisionAcked(ctx context.Context) bool {
	pd := w.sh.dec
	if pd == nil {
		return true
	}
	select {
	case <-pd.done:
	case <-ctx.Done():
		return false
	}
	if !pd.ok {
		return false
	}
	w.sh.dec = nil
	return true
}

// decisionQueue is the pipeline's decision committer. It writes every
// decision queued since its last write in one produce request (group
// commit: no timer, so a lone decision goes at once, and under load the
// decisions of many partitions share a request). What a request costs the
// 2-core machine's CPU, not its latency, was what synchronous decisions
// cost (docs/sharing.md). Up to decisionFlights requests are in flight at
// once, each on a writer of its own (kafka-go writes one request at a time
// per writer and partition), so that a broker's round trip does not hold
// back the decisions queued during it; they are settled (landed or
// dropped: pendingDecision.settle) in the order they were taken, and once
// a decision is dropped, the later ones of the same worker are dropped too
// even if they landed (what they hold depends on it).
type decisionQueue struct {
	p    *Pipeline
	mu   sync.Mutex
	q    []*pendingDecision
	wake chan struct{}
}

// decisionFlights bounds the decision requests in flight at once.
const decisionFlights = 4

func newDecisionQueue(p *Pipeline) *decisionQueue {
	return &decisionQueue{p: p, wake: make(chan struct{}, 1)}
}

func (dq *decisionQueue) add(pd *pendingDecision) {
	dq.mu.Lock()
	dq.q = append(dq.q, pd)
	dq.mu.Unlock()
	select {
	case dq.wake <- struct{}{}:
	default:
	}
}

// decisionFlight is one request of decisions: written[i] says whether
// batch[i] was written (set before done is closed).
type decisionFlight struct {
	batch   []*pendingDecision
	written []bool
	done    chan struct{}
	w       *kafka.Writer
}

// run writes the queued decisions until ctx ends (after every worker has
// returned), retrying a failed write until it lands; a decision whose
// worker's publisher stopped meanwhile is dropped (ok = false). Each
// written decision is held in the tailer (a replay in this process reads it
// there).
func (dq *decisionQueue) run(ctx context.Context) {
	p := dq.p
	free := append([]*kafka.Writer(nil), p.shareDecW...)
	var flights []*decisionFlight
	settle := func(f *decisionFlight) {
		for i, pd := range f.batch {
			ok := f.written[i] && !*pd.dropped
			if !ok {
				*pd.dropped = true
			} else {
				p.sm.decisions.Inc()
			}
			pd.settle(p.tail, ok)
		}
		free = append(free, f.w)
	}
	for {
		var head <-chan struct{}
		if len(flights) > 0 {
			head = flights[0].done
		}
		select {
		case <-dq.wake:
		case <-head:
		case <-ctx.Done():
			for _, f := range flights {
				<-f.done // its writes end with ctx
				settle(f)
			}
			dq.mu.Lock()
			for _, pd := range dq.q {
				pd.settle(p.tail, false)
			}
			dq.q = nil
			dq.mu.Unlock()
			return
		}
		for len(flights) > 0 && isClosed(flights[0].done) {
			settle(flights[0])
			flights[0] = nil
			flights = flights[1:]
		}
		for len(free) > 0 {
			dq.mu.Lock()
			batch := dq.q
			dq.q = nil
			dq.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			f := &decisionFlight{batch: batch, written: make([]bool, len(batch)), done: make(chan struct{}), w: free[len(free)-1]}
			free = free[:len(free)-1]
			flights = append(flights, f)
			go dq.write(ctx, f)
		}
	}
}

// write writes f's decisions, retrying until they land or their workers
// (or the committer) stop.
func (dq *decisionQueue) write(ctx context.Context, f *decisionFlight) {
	p := dq.p
	defer close(f.done)
	live := make([]int, 0, len(f.batch))
	var msgs []kafka.Message
	for attempt := 0; ; attempt++ {
		live = live[:0]
		msgs = msgs[:0]
		for i, pd := range f.batch {
			if hook := p.cfg.beforeDecision; hook != nil && attempt == 0 {
				hook(pd.ctx, pd.part, pd.rec.Epoch)
			}
			if pd.ctx.Err() == nil && ctx.Err() == nil && pd.lease.await(pd.ctx) {
				live = append(live, i)
				msgs = append(msgs, pd.msg)
			}
		}
		if len(live) == 0 {
			return
		}
		err := f.w.WriteMessages(ctx, msgs...)
		if err == nil {
			for _, i := range live {
				f.written[i] = true
			}
			return
		}
		if ctx.Err() == nil {
			p.m.writeErrors.WithLabelValues("share").Inc()
			p.cfg.Logger.Warn("writing share decisions failed; retrying", "decisions", len(live), "attempt", attempt+1, "err", err)
			sleep(ctx, time.Duration(min(attempt+1, 10))*200*time.Millisecond)
		}
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
