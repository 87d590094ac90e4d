package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
//     since, is not failed (no restorable checkpoint, or a committed group
//     offset without a checkpoint: Config.AllowFreshStart) and is not stuck
//     (Config.StuckAfter);
//   - no partition's checkpoints have been failing for longer than
//     Config.CheckpointFailingAfter, and none has gone longer than
//     Config.CheckpointMaxAge without one while processing events;
//   - no partition dead-letters more than Config.DeadLetterReadyShare of
//     its last Config.DeadLetterWindow events (reason and detail of the
//     commonest dead letter named).
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
		if p.parts[n] != nil && p.parts[n].Ready {
			parts = append(parts, w.degraded(now)...)
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
func (p *Pipeline) monitor(ctx context.Context, prog *progress) {
	t := time.NewTicker(monitorTick)
	defer t.Stop()
	var lastProbe time.Time
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
	models []errorTotals // per configured model, then the baseline
	feats  [3]float64    // named-feature counters at the previous line (metrics.featureProgress)
}

func newProgress(p *Pipeline) *progress {
	return &progress{p: p, at: time.Now(), events: p.eventsSeen.Load(), dlq: p.m.deadLetterCounts(), models: p.m.errorTotals(p.cfg.Models)}
}

// quality is the progress line's "models" group: for each model, over the
// labelled events since the previous line, the mistake rate and log loss
// (classification models) or the MSE and MAE (regression), and the same
// for the baseline (the running class prior's mistake rate and log loss,
// the running mean's MSE and MAE), so that every model's number stands
// beside the trivial one. A model without labelled events since the
// previous line is left out.
func quality(models []Model, prev, now []errorTotals) []any {
	var out []any
	group := func(name string, d errorTotals, classify bool) {
		if d.labeled <= 0 {
			return
		}
		r := func(v float64) float64 { return math.Round(v/d.labeled*1e4) / 1e4 }
		attrs := []any{slog.Int64("labeled", int64(d.labeled))}
		if classify {
			attrs = append(attrs, slog.Float64("mistake_rate", r(d.mistakes)), slog.Float64("log_loss", r(d.logLoss)))
		} else {
			attrs = append(attrs, slog.Float64("mse", r(d.sqErr)), slog.Float64("mae", r(d.absErr)))
		}
		out = append(out, slog.Group(name, attrs...))
	}
	anyClassify, anyRegress := false, false
	for i, m := range models {
		d := now[i].minus(prev[i])
		classify := d.logLoss > 0 // every labelled event of a classifier adds a positive log loss
		anyClassify, anyRegress = anyClassify || (classify && d.labeled > 0), anyRegress || (!classify && d.labeled > 0)
		group(m.Name, d, classify)
	}
	b := now[len(models)].minus(prev[len(models)])
	if anyClassify {
		group("baseline_class_prior", b, true)
	}
	if anyRegress {
		group("baseline_running_mean", b, false)
	}
	return out
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
	totals := p.m.errorTotals(p.cfg.Models)
	if q := quality(p.cfg.Models, g.models, totals); len(q) > 0 {
		attrs = append(attrs, slog.Group("models", q...))
	}
	if f := p.m.featureProgress(&g.feats); f != nil {
		attrs = append(attrs, slog.Group("features", f...))
	}
	p.cfg.Logger.Info("progress", attrs...)
	g.at, g.events, g.dlq, g.models = now, events, dlq, totals
}

// notePartitionFailed records why a partition failed ("" when it recovered).
func (p *Pipeline) notePartitionFailed(n int, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.part(n).Failed = why
}

// restoreOrWait restores the partition. If none of its checkpoints can be
// restored, or it has none although the group has a committed offset and
// Config.AllowFreshStart is off (errPartitionFailed), the partition fails
// alone: it is reported
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
		add(w.cLogLoss, t.logLoss)
		add(w.cAbsErr, t.absErr)
		add(w.cNonFinite, float64(t.nonFinite))
		*t = tally{}
	}
	b := &w.ms.base.tally
	if b.labeled > 0 {
		m := w.p.m
		m.baseLabeled.Add(float64(b.labeled))
		m.baseMistakes.Add(float64(b.mistakes))
		m.baseLogLoss.Add(b.logLoss)
		m.baseLoss.Add(b.sqErr)
		m.baseAbsErr.Add(b.absErr)
		*b = baselineTally{}
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
	w.dlw.note(reason, detail)
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

// Checkpoint failures (issue 37): a partition whose checkpoints fail retries
// them with an exponential backoff, from checkpointBackoffMin doubling to
// checkpointBackoffMax and back to no delay after a success; the first
// failure is logged at error level, later ones are summarised at most once
// per checkpointLogEvery. /readyz turns 503 once they have been failing for
// longer than Config.CheckpointFailingAfter, or once the partition's
// checkpoint age exceeds Config.CheckpointMaxAge.
const (
	checkpointBackoffMin = 100 * time.Millisecond
	checkpointBackoffMax = 10 * time.Second
	checkpointLogEvery   = time.Minute
)

// ckptHealth is a worker's checkpoint failure state: written by the
// worker's goroutine, read by readiness and the metrics.
type ckptHealth struct {
	mu         sync.Mutex
	fails      int       // consecutive failures (0: the last checkpoint succeeded)
	since      time.Time // the first of them
	lastErr    string
	backoff    time.Duration
	next       time.Time // no attempt before this
	logged     time.Time // last error log
	suppressed int       // failures not logged since then
}

// checkpointDue reports whether the backoff after failed checkpoints lets
// the worker try again now.
func (w *worker) checkpointDue(now time.Time) bool {
	h := &w.ckh
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fails == 0 || !now.Before(h.next)
}

// noteCheckpoint records the result of a checkpoint attempt (not of the
// final one at the generation's end): a failure extends the backoff and is
// logged, rate-limited; a success after failures resets it and says so.
func (w *worker) noteCheckpoint(err error) {
	now := time.Now()
	h := &w.ckh
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		if h.fails > 0 {
			w.log.Info("checkpoints succeed again", "failures", h.fails, "failing_for", now.Sub(h.since).Round(time.Millisecond).String())
		}
		h.fails, h.since, h.lastErr, h.backoff, h.next, h.logged, h.suppressed = 0, time.Time{}, "", 0, time.Time{}, time.Time{}, 0
		return
	}
	if h.fails == 0 {
		h.since, h.backoff = now, checkpointBackoffMin
	} else {
		h.backoff = min(2*h.backoff, checkpointBackoffMax)
	}
	h.fails++
	h.lastErr = err.Error()
	h.next = now.Add(h.backoff)
	switch {
	case h.fails == 1:
		w.log.Error("checkpoint failed; retrying with backoff (later failures are summarised at most once a minute)",
			"err", err, "retry_in", h.backoff.String(), "backoff_max", checkpointBackoffMax.String(), "unready_after", w.p.cfg.CheckpointFailingAfter.String())
		h.logged = now
	case now.Sub(h.logged) >= checkpointLogEvery:
		w.log.Error("checkpoints still failing", "failures", h.fails, "failing_for", now.Sub(h.since).Round(time.Second).String(),
			"since_last_log", h.suppressed+1, "err", err, "retry_in", h.backoff.String())
		h.logged, h.suppressed = now, 0
	default:
		h.suppressed++
	}
}

// checkpointFailing is how long the partition's checkpoints have been
// failing (0 when the last one succeeded), and the last error.
func (w *worker) checkpointFailing(now time.Time) (time.Duration, int, string) {
	h := &w.ckh
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fails == 0 {
		return 0, 0, ""
	}
	return now.Sub(h.since), h.fails, h.lastErr
}

// degraded lists why the running partition makes the instance unready
// beyond the stalls: checkpoints failing or too old, and too many dead
// letters.
func (w *worker) degraded(now time.Time) []string {
	cfg := &w.p.cfg
	var out []string
	failing, fails, lastErr := w.checkpointFailing(now)
	if cfg.CheckpointFailingAfter > 0 && failing > cfg.CheckpointFailingAfter {
		out = append(out, fmt.Sprintf("partition %d checkpoint: failing for %s (%d attempts, limit %s): %s",
			w.part, failing.Round(time.Second), fails, cfg.CheckpointFailingAfter, clipString(lastErr, maxDetailBytes)))
	} else if age := w.checkpointAge(now); cfg.CheckpointMaxAge > 0 && age > cfg.CheckpointMaxAge {
		out = append(out, fmt.Sprintf("partition %d checkpoint: processed events have gone %s without one (limit %s)",
			w.part, age.Round(time.Second), cfg.CheckpointMaxAge))
	}
	if why := w.dlw.unready(w.part, cfg.DeadLetterReadyShare, cfg.DeadLetterWindow); why != "" {
		out = append(out, why)
	}
	return out
}

// finalCheckpointFailed records a failed final checkpoint. At shutdown
// (Run's context ended) it makes Run return an error, so that okstream run
// exits non-zero; at a rebalance the next owner resumes from the previous
// checkpoint and the process keeps running. The error is not wrapped: it
// may hold a context error, which Run's callers take for a clean stop.
func (p *Pipeline) finalCheckpointFailed(part int, durable int64, err error) {
	if !p.stopping.Load() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fatal = errors.Join(p.fatal, fmt.Errorf("partition %d: the final checkpoint failed (the next owner resumes from the previous checkpoint, at offset %d, and recomputes what followed): %v", part, durable, err))
}

// dlWindow is a partition's last events, dead-lettered or not, for the
// dead-letter share of readiness (Config.DeadLetterReadyShare): written by
// the worker's goroutine, read by readiness and the metrics.
type dlWindow struct {
	mu      sync.Mutex
	ring    []uint8 // reason code of each of the last events (0: not dead-lettered)
	pos, n  int     // next slot; events held
	dead    int     // dead-lettered events held
	counts  []int   // held events by code
	names   []string
	details []string // the last detail of each code
	codes   map[string]uint8
	batch   []uint8 // the current micro-batch's dead letters (the worker's only)
}

// note records a dead letter of the current micro-batch.
func (d *dlWindow) note(reason, detail string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.init()
	c, ok := d.codes[reason]
	if !ok {
		if len(d.names) > 255 {
			c = 255 // more reasons than codes: share the last (never with the built-in reasons)
		} else {
			c = uint8(len(d.names))
			d.codes[reason] = c
			d.names, d.details, d.counts = append(d.names, reason), append(d.details, ""), append(d.counts, 0)
		}
	}
	d.details[c] = clipString(detail, 256)
	d.batch = append(d.batch, c)
}

// add pushes a micro-batch of n events (its dead letters as noted) into a
// window of size events.
func (d *dlWindow) add(n, size int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if size <= 0 {
		return
	}
	d.init()
	if len(d.ring) != size {
		d.ring, d.pos, d.n, d.dead = make([]uint8, size), 0, 0, 0
		clear(d.counts)
	}
	push := func(c uint8) {
		if d.n == len(d.ring) {
			old := d.ring[d.pos]
			d.counts[old]--
			if old != 0 {
				d.dead--
			}
		} else {
			d.n++
		}
		d.ring[d.pos] = c
		d.counts[c]++
		if c != 0 {
			d.dead++
		}
		d.pos = (d.pos + 1) % len(d.ring)
	}
	for i := len(d.batch); i < n; i++ {
		push(0)
	}
	for _, c := range d.batch {
		push(c)
	}
	d.batch = d.batch[:0]
}

func (d *dlWindow) init() {
	if d.codes == nil {
		d.codes = map[string]uint8{}
		d.names, d.details, d.counts = []string{""}, []string{""}, []int{0}
	}
}

// share is the dead-lettered share of the events held (0 with none).
func (d *dlWindow) share() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n == 0 {
		return 0
	}
	return float64(d.dead) / float64(d.n)
}

// unready says why the partition's dead letters make the instance unready
// ("" when they do not): more than limit of its last window events, once
// at least a tenth of the window has been seen.
func (d *dlWindow) unready(part int, limit float64, window int) string {
	if limit <= 0 || limit >= 1 {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n == 0 || d.n < max(1, window/10) {
		return ""
	}
	share := float64(d.dead) / float64(d.n)
	if share <= limit {
		return ""
	}
	top := 0
	for c := 1; c < len(d.counts); c++ {
		if top == 0 || d.counts[c] > d.counts[top] {
			top = c
		}
	}
	return fmt.Sprintf("partition %d: %.0f%% of its last %d events dead-lettered (limit %.0f%%), mostly %s: %s",
		part, 100*share, d.n, 100*limit, d.names[top], d.details[top])
}
