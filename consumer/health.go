package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"sort"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// Readiness, liveness, the probe that keeps the lag current, the progress
// log and failed partitions.
//
// Ready (/readyz 200, okstream_ready 1) means all of:
//
//   - the instance is a member of a live consumer-group generation (not
//     joining, not rebalancing, not cut off from the group coordinator: a
//     generation ends when its heartbeats fail);
//   - a broker answered within Config.ReadyBrokerTimeout (a fetch, a write,
//     a checkpoint or the probe, which runs at least every 5 s);
//   - every partition the generation assigned is restored, has fetched
//     since, is not failed (no restorable checkpoint) and is not stuck
//     (Config.StuckAfter).
//
// Otherwise /readyz answers 503 with every reason, naming partitions.
// Live (/healthz 200) means the process is not wedged: the monitor loop
// ticked within Config.LivenessTimeout and no micro-batch has been
// computing for longer than that. Broker outages, rebalances, restores and
// failed partitions make an instance unready, never dead: restarting it
// would not help.

// monitorTick is the period of the monitor loop (liveness tick, probe and
// progress scheduling).
const monitorTick = time.Second

// deadLetterLogEvery bounds the dead-letter warnings of one reason on one
// partition after the first: at most one summary per period.
const deadLetterLogEvery = time.Minute

// errPartitionFailed marks a partition that cannot start (no checkpoint of
// it can be restored): the partition is reported and waits, the others run.
type errPartitionFailed struct{ error }

func (e errPartitionFailed) Unwrap() error { return e.error }

// contact records a successful broker round trip.
func (p *Pipeline) contact() { p.lastContact.Store(time.Now().UnixNano()) }

// probeEvery is how often the monitor probes the brokers (and refreshes the
// high watermarks): a third of the broker timeout, between 200 ms and 5 s.
func (p *Pipeline) probeEvery() time.Duration {
	return min(max(p.cfg.ReadyBrokerTimeout/3, 200*time.Millisecond), 5*time.Second)
}

// notReady says why the instance is not ready ("" when it is).
func (p *Pipeline) notReady() string {
	var why []string
	if !p.inGen.Load() {
		why = append(why, "not a member of a live consumer-group generation (joining, rebalancing or cut off from the coordinator)")
	}
	now := time.Now()
	if last := p.lastContact.Load(); last != 0 {
		if d := now.Sub(time.Unix(0, last)); d > p.cfg.ReadyBrokerTimeout {
			why = append(why, fmt.Sprintf("no broker reachable for %s (ready broker timeout %s)", d.Round(time.Millisecond), p.cfg.ReadyBrokerTimeout))
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var parts []string
	var restoring []int
	for _, s := range p.parts {
		if !s.Owned || s.Ready {
			continue
		}
		if s.Failed != "" {
			parts = append(parts, fmt.Sprintf("partition %d failed: %s", s.Partition, s.Failed))
			continue
		}
		restoring = append(restoring, s.Partition)
	}
	if len(restoring) > 0 {
		sort.Ints(restoring)
		why = append(why, fmt.Sprintf("restoring partitions %v", restoring))
	}
	for n, w := range p.live {
		if !w.fetching.Load() && p.parts[n] != nil && p.parts[n].Ready {
			parts = append(parts, fmt.Sprintf("partition %d has not fetched yet", n))
		}
		for _, st := range w.stalls(now, p.cfg.StuckAfter) {
			parts = append(parts, fmt.Sprintf("partition %d stuck: %s", n, st))
		}
	}
	sort.Strings(parts)
	return strings.Join(append(why, parts...), "; ")
}

// wedged says why the process is not live ("" when it is).
func (p *Pipeline) wedged() string {
	now := time.Now()
	limit := p.cfg.LivenessTimeout
	if t := p.tick.Load(); t != 0 {
		if d := now.Sub(time.Unix(0, t)); d > limit {
			return fmt.Sprintf("the monitor loop has not ticked for %s (liveness timeout %s)", d.Round(time.Millisecond), limit)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for n, w := range p.live {
		if t := w.batchStart.Load(); t != 0 {
			if d := now.Sub(time.Unix(0, t)); d > limit {
				return fmt.Sprintf("partition %d has been computing one micro-batch for %s (liveness timeout %s)", n, d.Round(time.Millisecond), limit)
			}
		}
	}
	return ""
}

// liveGeneration marks the instance a member of generation id until ctx
// (the generation's) ends.
func (p *Pipeline) liveGeneration(ctx context.Context, id int32) {
	p.genID.Store(id)
	p.inGen.Store(true)
	<-ctx.Done()
	if p.genID.Load() == id {
		p.inGen.Store(false)
		p.m.assigned.Set(0)
	}
}

// monitor ticks every monitorTick until ctx ends: the liveness tick, the
// broker probe (every probeEvery), and the progress log line.
func (p *Pipeline) monitor(ctx context.Context) {
	t := time.NewTicker(monitorTick)
	defer t.Stop()
	var lastProbe time.Time
	prog := newProgress(p)
	for {
		now := time.Now()
		p.tick.Store(now.UnixNano())
		if now.Sub(lastProbe) >= p.probeEvery() {
			lastProbe = now
			p.probe(ctx)
		}
		if p.cfg.ProgressInterval > 0 && now.Sub(prog.at) >= p.cfg.ProgressInterval {
			prog.log(now)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// probe is one round trip to the brokers: the high watermarks of the live
// partitions (ListOffsets; of partition 0 when there are none). Success
// counts as broker contact.
func (p *Pipeline) probe(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, p.probeEvery())
	defer cancel()
	p.mu.Lock()
	workers := make(map[int]*worker, len(p.live))
	for n, w := range p.live {
		workers[n] = w
	}
	p.mu.Unlock()
	// ListOffsets, not Metadata: kafka-go's transport answers metadata
	// requests from its cache, which would hide an outage.
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
	for n := range workers {
		req.Topics[p.cfg.Input] = append(req.Topics[p.cfg.Input], kafka.LastOffsetOf(n))
	}
	if len(workers) == 0 {
		req.Topics[p.cfg.Input] = []kafka.OffsetRequest{kafka.LastOffsetOf(0)}
	}
	resp, err := p.client.ListOffsets(ctx, req)
	if err != nil {
		return
	}
	ok := false
	for _, po := range resp.Topics[p.cfg.Input] {
		if po.Error != nil {
			continue
		}
		ok = true
		if w := workers[po.Partition]; w != nil {
			w.noteHWM(po.LastOffset)
		}
	}
	if ok {
		p.contact()
	}
}

// progress writes the periodic progress line.
type progress struct {
	p      *Pipeline
	at     time.Time
	events int64
	dlq    map[string]float64
}

func newProgress(p *Pipeline) *progress {
	return &progress{p: p, at: time.Now(), events: p.eventsSeen.Load(), dlq: p.m.deadLetterCounts()}
}

// log writes one info line: events per second and dead letters by reason
// since the previous line, and the current lag, checkpoint age and
// readiness.
func (g *progress) log(now time.Time) {
	p := g.p
	events := p.eventsSeen.Load()
	secs := now.Sub(g.at).Seconds()
	dlq := p.m.deadLetterCounts()
	var dead []any
	for _, r := range allDeadLetterReasons() {
		if d := dlq[r] - g.dlq[r]; d > 0 {
			dead = append(dead, slog.Int64(r, int64(d)))
		}
	}
	var lag int64
	var maxAge time.Duration
	var parts, failed []int
	p.mu.Lock()
	for n, w := range p.live {
		parts = append(parts, n)
		if l, ok := w.lag(); ok {
			lag += l
		}
		maxAge = max(maxAge, w.checkpointAge(now))
		if w.failure() != "" {
			failed = append(failed, n)
		}
	}
	p.mu.Unlock()
	sort.Ints(parts)
	sort.Ints(failed)
	ready := p.notReady()
	if ready == "" {
		ready = "yes"
	}
	attrs := []any{
		"events_per_second", float64(int64((float64(events-g.events)/secs)*10)) / 10,
		"events", events - g.events,
		"partitions", parts,
		"lag", lag,
		"max_checkpoint_age", maxAge.Round(time.Second).String(),
		slog.Group("dead_letters", dead...),
		"ready", ready,
	}
	if len(failed) > 0 {
		attrs = append(attrs, "failed_partitions", failed)
	}
	p.cfg.Logger.Info("progress", attrs...)
	g.at, g.events, g.dlq = now, events, dlq
}

// notePartitionFailed records why a partition failed ("" when it recovered).
func (p *Pipeline) notePartitionFailed(n int, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.part(n).Failed = why
}

// restoreOrWait restores the partition. If none of its checkpoints can be
// restored (errPartitionFailed) the partition fails alone: it is reported
// (okstream_partition_failed 1, an error log, /readyz 503 naming it) and
// retries every Config.FailedRetry, so that it starts by itself once an
// operator has reset its checkpoint (okstream checkpoints reset); the other
// partitions keep running. It returns nil when restored or when ctx (the
// generation) ended, and any other restore error.
func (w *worker) restoreOrWait(ctx context.Context) error {
	for {
		err := w.restore(ctx)
		var pf errPartitionFailed
		if !errors.As(err, &pf) {
			if err == nil && w.failure() != "" {
				w.setFailure("")
				w.p.notePartitionFailed(w.part, "")
				w.log.Info("failed partition restored: processing resumes")
			}
			return err
		}
		msg := pf.Error()
		if w.failure() != msg {
			w.log.Error("partition failed: it stays stopped (the other partitions keep running) and retries its restore periodically",
				"err", msg, "retry_every", w.p.cfg.FailedRetry.String())
		}
		w.setFailure(msg)
		w.p.notePartitionFailed(w.part, msg)
		sleep(ctx, w.p.cfg.FailedRetry)
		if ctx.Err() != nil {
			return nil
		}
	}
}

// recoveryHint tells the operator how to recover a failed partition.
func (w *worker) recoveryHint() string {
	return fmt.Sprintf("see the slots with: okstream inspect checkpoints --topic %s --models; to discard the partition's state: okstream checkpoints reset --checkpoint-topic %s --group %s --input %s --partition %d [--to-offset N]; the partition retries every %s",
		w.p.cfg.Checkpoints, w.p.cfg.Checkpoints, w.p.cfg.Group, w.p.cfg.Input, w.part, w.p.cfg.FailedRetry)
}

func (w *worker) failure() string {
	w.stallMu.Lock()
	defer w.stallMu.Unlock()
	return w.failMsg
}

func (w *worker) setFailure(msg string) {
	w.stallMu.Lock()
	defer w.stallMu.Unlock()
	w.failMsg = msg
}

// noteHWM raises the known high watermark to hwm.
func (w *worker) noteHWM(hwm int64) {
	for {
		cur := w.hwm.Load()
		if hwm <= cur || w.hwm.CompareAndSwap(cur, hwm) {
			return
		}
	}
}

// lag is the high watermark minus the next offset to process (false while
// the high watermark or the position is unknown).
func (w *worker) lag() (int64, bool) {
	hwm, pos := w.hwm.Load(), w.pos.Load()
	if hwm < 0 || pos < 0 {
		return 0, false
	}
	return max(0, hwm-pos), true
}

// watermark is the partition's event-time watermark in ms.
func (w *worker) watermark() (int64, bool) {
	return w.wmark.Load(), w.hasWmark.Load()
}

// drainTallies adds the models' tallies to the per-model counters.
func (w *worker) drainTallies() {
	for i, m := range w.ms.models {
		t := &m.tally
		add := func(c []prometheus.Counter, v float64) {
			if v != 0 {
				c[i].Add(v)
			}
		}
		add(w.cPreds, float64(t.predictions))
		add(w.cUpdates, float64(t.updates))
		add(w.cLabeled, float64(t.labeled))
		add(w.cMistakes, float64(t.mistakes))
		add(w.cLoss, t.loss)
		add(w.cNonFinite, float64(t.nonFinite))
		*t = tally{}
	}
}

// dlqLogState rate-limits the dead-letter warnings of one reason.
type dlqLogState struct {
	last       time.Time
	suppressed int
}

// noteDeadLetter logs the first dead letter of each reason on the
// partition at warn, with its offset and detail; later ones are summarised
// (count, last offset and detail) at most once per deadLetterLogEvery. The
// progress line counts them all.
func (w *worker) noteDeadLetter(reason, detail string, offset int64) {
	st := w.dlqLog[reason]
	if st == nil {
		w.dlqLog[reason] = &dlqLogState{last: time.Now()}
		w.log.Warn("dead letter (the first with this reason on this partition; later ones are summarised at most once a minute)",
			"reason", reason, "offset", offset, "detail", clipString(detail, maxDetailBytes), "dead_letter_topic", w.p.cfg.DeadLetter)
		return
	}
	st.suppressed++
	if now := time.Now(); now.Sub(st.last) >= deadLetterLogEvery {
		w.log.Warn("dead letters continue", "reason", reason, "count", st.suppressed, "since", now.Sub(st.last).Round(time.Second).String(),
			"last_offset", offset, "last_detail", clipString(detail, maxDetailBytes))
		st.last, st.suppressed = now, 0
	}
}

// checkpointAge is how long the partition's processed events have gone
// without a checkpoint: the time since its last checkpoint (or restore)
// while events were processed after it, 0 when its checkpoint is up to date
// (an idle partition has nothing to checkpoint, so its age does not grow
// and an alert on the age does not fire for it).
func (w *worker) checkpointAge(now time.Time) time.Duration {
	t := w.lastCkpt.Load()
	if t == 0 || w.unckpt.Load() == 0 {
		return 0
	}
	return now.Sub(time.Unix(0, t))
}
