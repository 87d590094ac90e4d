package consumer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/features"
	"okstream/internal/kafkautil"
)

// Dead-letter reasons of the runtime (the codec's reasons cover malformed
// events).
const (
	// reasonBadLabel: a label a classification model cannot learn from
	// (anything but −1 and +1).
	reasonBadLabel = "invalid_label"
	// reasonOrphanFeedback: a feedback event whose impression is not pending.
	reasonOrphanFeedback = "orphan_feedback"
	// reasonFeedbackDisabled: a feedback event while delayed feedback is off.
	reasonFeedbackDisabled = "feedback_disabled"
	// reasonFeedbackKeyMismatch: a feedback event whose key is not that of
	// the pending impression it refers to (the impression stays pending).
	reasonFeedbackKeyMismatch = "feedback_key_mismatch"
)

// Dead-letter record headers.
const (
	HeaderReason = "okstream-reason"
	HeaderDetail = "okstream-detail"
	HeaderSource = "okstream-source"
)

// generation is what a worker needs of its consumer-group generation.
type generation interface {
	id() int32
	commit(topic string, partition int, offset int64) error
	// committed is the group's committed offset of the partition when the
	// generation started (false: none).
	committed(topic string, partition int) (int64, bool)
}

// kafkaGen is a kafka-go generation. Offsets are committed through the
// pipeline's kafka.Client (OffsetCommit with the generation's id and member
// id: the coordinator fences a stale generation as it does the
// generation's own commits) rather than Generation.CommitOffsets, which
// shares one connection among the generation's partitions and spun on its
// lock when 16 partitions committed together at a checkpoint (17 % of a
// pass-through pipeline's CPU, issue 41).
type kafkaGen struct {
	g      *kafka.Generation
	client *kafka.Client
}

func (k kafkaGen) id() int32 { return k.g.ID }
func (k kafkaGen) commit(topic string, partition int, offset int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := k.client.OffsetCommit(ctx, &kafka.OffsetCommitRequest{
		GroupID: k.g.GroupID, GenerationID: int(k.g.ID), MemberID: k.g.MemberID,
		Topics: map[string][]kafka.OffsetCommit{topic: {{Partition: partition, Offset: offset}}},
	})
	if err != nil {
		return err
	}
	for _, p := range res.Topics[topic] {
		if p.Partition == partition && p.Error != nil {
			return p.Error
		}
	}
	return nil
}

// committed reads the generation's assignment: kafka-go puts the committed
// offset there, or the group's StartOffset (negative) when there is none.
func (k kafkaGen) committed(topic string, partition int) (int64, bool) {
	for _, a := range k.g.Assignments[topic] {
		if a.ID == partition {
			return a.Offset, a.Offset >= 0
		}
	}
	return 0, false
}

// errFatal marks errors that must stop the pipeline (configuration
// problems a retry cannot fix).
type errFatal struct{ error }

func (e errFatal) Unwrap() error { return e.error }

// worker processes one input partition for one generation. It is a
// three-stage pipeline: a fetcher goroutine reads ahead, the worker's own
// goroutine decodes, scores and learns (the models are touched by this
// goroutine only), and a writer goroutine writes each micro-batch's
// predictions and dead letters in order, acks=all. A checkpoint first waits
// until the writer has acknowledged everything up to the checkpoint's
// offset, which keeps the durability order while compute and I/O overlap.
type worker struct {
	p    *Pipeline
	gen  generation
	part int
	// lease: the generation's ownership lease; no write that depends on
	// owning the partition starts once it has ended (fence.go; nil in
	// tests that build a worker by hand: always valid).
	lease *lease
	// ckptBuf: the last checkpoint's payload, whose storage the next one
	// reuses (modelSet.marshalInto).
	ckptBuf []byte
	label   string // partition as a metrics label
	id      checkpoint.ID
	log     *slog.Logger

	ms    *modelSet
	next  int64 // next input offset to process
	epoch checkpoint.Epoch
	// failedSeq is the Seq of the last failed checkpoint attempt (0:
	// none); the next attempt's Seq is past it (see checkpoint).
	failedSeq uint64
	durable   int64        // next offset of the last durable checkpoint (-1: none)
	since     int          // events since the last checkpoint
	lastCkpt  atomic.Int64 // Unix ns of the last checkpoint (or of the restore)
	// published: source offsets ≥ the restored checkpoint whose output is
	// already in the output topics (effectively-once mode; dedup.go).
	published *offsetSet

	dec *codec.Decoder
	ev  codec.Event
	// jsonIn and jsonOut: the input's events and the predictions are JSON
	// (Config.InputFormat, Config.OutputFormat), else msgpack.
	jsonIn, jsonOut bool
	// stampAtEmit: effectively-once output, unsigned: emit sets each
	// prediction record's partition and headers (see stamp).
	stampAtEmit bool
	x           []float64
	scores      []codec.ModelScore
	obs         []prometheus.Observer

	// spent returns processed fetches' record slices to the fetcher;
	spent  chan fetched
	mem    kafkautil.Blocks  // the fetcher's key and value blocks
	chunks *kafkautil.Chunks // the fetcher's record chunks
	// timed counts model steps for sampledObs (the worker's only); idBuf
	// builds default event ids (defaultID).
	timed uint64
	idBuf []byte

	// Writer stage.
	writeCh    chan *unit
	free       chan *unit
	acked      atomic.Int64  // input offset up to which output is acknowledged
	ackNote    chan struct{} // signalled after each acknowledged unit
	writerDone chan struct{} // closed when the writer exits
	writerOK   atomic.Bool   // false once the writer gave up on a unit

	// Stall clocks of the writer and the fetcher (see stalls), and why the
	// partition failed ("" unless it did; see failed).
	stallMu    sync.Mutex
	writeStall stallClock
	fetchStall stallClock
	failMsg    string

	// Read by the pipeline (readiness, liveness, the live metrics).
	hwm        atomic.Int64 // the partition's high watermark (-1: not known yet)
	pos        atomic.Int64 // next offset to process, published after each micro-batch (-1 until restored)
	wmark      atomic.Int64 // event-time watermark (ms), valid when hasWmark
	hasWmark   atomic.Bool
	fetching   atomic.Bool  // a fetch has succeeded since the restore
	batchStart atomic.Int64 // Unix ns when the current micro-batch's compute began (0: none)
	unckpt     atomic.Int64 // events processed since the last checkpoint (w.since)
	tsw        tsWindow     // the last events' ts, for wmark (never checkpointed)

	// sh is the worker's part of the sharing schedule (nil: no shared
	// models; share.go).
	sh       *shareRun
	shareErr error // why a sync point failed (the pipeline stops)

	// Per-model counters (okstream_model_*_total), in model order.
	cPreds, cUpdates, cLabeled, cMistakes, cLoss, cNonFinite []prometheus.Counter
	cLogLoss, cAbsErr                                        []prometheus.Counter
	// fst: the feature encoder's counters as last exported (the metrics
	// add the differences; set at the restore).
	fst features.Stats
	// Dead-letter log rate limiting, by reason (see noteDeadLetter).
	dlqLog map[string]*dlqLogState
	// Checkpoint failures and the dead-letter window (health.go).
	ckh ckptHealth
	dlw dlWindow
}

// unit is one micro-batch's output, handed from the worker to the writer.
type unit struct {
	preds []kafka.Message
	dlq   []kafka.Message
	arena []byte // backing bytes of the prediction values
	next  int64  // input offset after the batch
	first int64  // input offset the batch starts from (effectively-once; dedup.go)
	hdrs  []kafka.Header
	// dec: shared models' newest decision record when the batch ended
	// (nil: none in flight); the batch's output depends on it and is
	// written only once it has landed (writeDecisionAsync).
	dec *pendingDecision
	// front: shared models' frontier when the batch ended (nil: no
	// sharing); the batch's output is written only once every delta
	// merged up to it is durable (tailer.awaitDurable).
	front []int64
}

// fetched is one fetch handed from the fetcher to the worker.
type fetched struct {
	chunks [][]kafkautil.Record // the records, in order, BatchSize per chunk (kafkautil.FetchChunks)
	n      int                  // the records
	hwm    int64
	blocks [][]byte // where the records' keys and values are (kafkautil.Blocks)
}

func newWorker(p *Pipeline, gen generation, part int) (*worker, error) {
	ms, err := newModelSetTask(p.cfg.Models, p.cfg.Dim, p.cfg.pendingLimits(), p.task, p.cfg.Positive)
	if err != nil {
		return nil, errFatal{err}
	}
	if ms.labels != nil {
		ms.labels.RequirePositive = len(p.cfg.Share) > 0 // string classes must mean the same in every partition
		if p.cfg.TaskWarmup > 0 {
			ms.labels.Warmup = p.cfg.TaskWarmup
		}
	}
	ms.setClassOptions(p.cfg.MaxClasses, p.cfg.TopK)
	fc, err := p.cfg.featuresConfig()
	if err != nil {
		return nil, errFatal{err}
	}
	if fc.Dim >= 1 && fc.Dim <= features.MaxDim {
		if err := ms.setFeatures(fc); err != nil {
			return nil, errFatal{err}
		}
	}
	w := &worker{
		p: p, gen: gen, part: part, label: partLabel(part),
		id:      checkpoint.ID{Group: p.cfg.Group, Topic: p.cfg.Input, Partition: part},
		log:     p.cfg.Logger.With("partition", part, "generation", gen.id()),
		ms:      ms,
		durable: -1,
		dec:     codec.NewDecoder(p.cfg.eventLimits()),
		jsonIn:  p.cfg.InputFormat == FormatJSON,
		jsonOut: p.cfg.OutputFormat == FormatJSON,
		x:       make([]float64, p.cfg.Dim),
		writeCh: make(chan *unit, 2),
		free:    make(chan *unit, 4),
		ackNote: make(chan struct{}, 1),
	}
	w.stampAtEmit = p.effectivelyOnce() && !p.control().auth.Enabled()
	for _, m := range p.cfg.Models {
		w.obs = append(w.obs, p.m.updateSecs.WithLabelValues(m.Name))
		// Resolving the series creates them at 0 when the model starts.
		w.cPreds = append(w.cPreds, p.m.modelPreds.WithLabelValues(m.Name))
		w.cUpdates = append(w.cUpdates, p.m.updates.WithLabelValues(m.Name))
		w.cLabeled = append(w.cLabeled, p.m.labeled.WithLabelValues(m.Name))
		w.cMistakes = append(w.cMistakes, p.m.mistakes.WithLabelValues(m.Name))
		w.cLoss = append(w.cLoss, p.m.loss.WithLabelValues(m.Name))
		w.cNonFinite = append(w.cNonFinite, p.m.nonFinite.WithLabelValues(m.Name))
		w.cLogLoss = append(w.cLogLoss, p.m.logLoss.WithLabelValues(m.Name))
		w.cAbsErr = append(w.cAbsErr, p.m.absErr.WithLabelValues(m.Name))
	}
	w.hwm.Store(-1)
	w.pos.Store(-1) // until restored
	w.dlqLog = map[string]*dlqLogState{}
	ms.onReset = w.modelReset
	ms.onChange = w.modelChange
	w.setupShare()
	return w, nil
}

// run is the worker's life: restore, process until the generation ends,
// then drain the writer, checkpoint and commit (unless the pipeline was
// killed).
func (w *worker) run(ctx context.Context) error {
	log := w.log
	w.p.register(w.part, w)
	defer w.p.unregister(w.part, w)
	defer w.p.notePartitionFailed(w.part, "") // the next owner reports it again if it must
	if err := w.restoreOrWait(ctx); err != nil || ctx.Err() != nil {
		return err
	}
	if err := w.findPublished(ctx); err != nil { // effectively-once (dedup.go)
		return err
	}
	if w.sh != nil {
		// A restored partition must see its own decision records before
		// it replays its boundaries.
		if err := w.p.tail.caughtUp(ctx); err != nil {
			return nil
		}
		w.noteReplay()
		w.p.tail.joined(w.part)
		defer w.p.tail.left(w.part)
	}
	w.p.partReady(w.part, true)
	defer w.p.partReady(w.part, false)
	if f := w.p.cfg.OnModels; f != nil {
		if b, err := w.ms.marshal(); err == nil {
			f(w.part, w.next, b)
		}
		defer f(w.part, -1, nil)
	}

	// The writer outlives ctx (the generation) so that a revoked partition
	// can still drain its output and checkpoint; it stops when its input is
	// closed, or at the shutdown deadline, or when the pipeline is killed.
	wctx, cancelWriter := context.WithCancel(context.Background())
	defer cancelWriter()
	w.acked.Store(w.next)
	w.writerOK.Store(true)
	w.writerDone = make(chan struct{})
	go w.writeLoop(wctx)
	if w.sh != nil {
		w.startPublisher(wctx)
		defer w.stopPublisher()
	}

	fctx, cancelFetch := context.WithCancel(ctx)
	defer cancelFetch()
	fetches := make(chan fetched, 1)
	w.spent = make(chan fetched, 2)
	w.chunks = kafkautil.NewChunks(w.p.cfg.BatchSize)
	go w.fetchLoop(fctx, w.next, fetches)

loop:
	for {
		var f fetched
		select {
		case <-ctx.Done():
			break loop
		case <-w.writerDone:
			break loop
		case f = <-fetches:
		}
		if w.sh != nil && w.p.cfg.ShareSkipIdle && f.n > 0 {
			w.p.tail.setIdle(w.part, false) // before its next delta can be due
			w.publishIdle(ctx, false)       // and the other instances' (share.go)
		}
		for _, recs := range f.chunks { // micro-batches: a chunk holds BatchSize records
			if ctx.Err() != nil || !w.batch(ctx, recs) {
				break loop
			}
			w.maybeCheckpoint(ctx)
		}
		if w.sh != nil && w.sh.broken {
			break loop
		}
		if f.n == 0 {
			w.maybeCheckpoint(ctx) // time-based checkpoints on an idle partition
		}
		if w.sh != nil && w.p.cfg.ShareSkipIdle && f.n == 0 && w.next >= f.hwm {
			// Shared models: a fetch that waited and found nothing past
			// what was processed marks the partition idle, so that the
			// others do not wait for its next delta (tailer.setIdle).
			// Its deltas made so far are handed over first (their
			// decisions landed): the others skip only what it has not
			// made yet, as when the deltas went out with no wait.
			if !w.awaitOwn(ctx, math.MaxInt64) {
				break loop
			}
			w.p.tail.setIdle(w.part, true)
			w.publishIdle(ctx, true)
		}
		if w.sh != nil && f.n == 0 && w.sh.hasUnsent() {
			// Deltas held by a decision that has landed since: others
			// may have merged them, and their output waits until they
			// are on the sync topic.
			w.flushDeltas(ctx, false)
		}
		w.recycle(f)
	}
	cancelFetch()
	close(w.writeCh) // the loop above was the only sender
	if w.p.killed.Load() {
		cancelWriter()
		<-w.writerDone
		log.Info("killed: exiting without a final checkpoint", "next", w.next)
		return nil
	}
	// Drain the writer, bounded by the shutdown timeout and by the
	// generation's lease: past it no write starts (fence.go), and the
	// writer may be blocked on something else meanwhile.
	timer := time.NewTimer(max(0, min(w.p.cfg.ShutdownTimeout, w.lease.remaining())))
	defer timer.Stop()
	select {
	case <-w.writerDone:
	case <-timer.C:
		cancelWriter()
		<-w.writerDone
	}
	if w.sh != nil && w.sh.broken {
		log.Info("shared models: the generation ended inside a sync point; not checkpointing (the next owner replays it from the last checkpoint)", "next", w.next)
		return w.shareErr
	}
	if !w.writerOK.Load() || w.acked.Load() != w.next {
		log.Warn("partition revoked with unwritten predictions: not checkpointing past them; the next owner recomputes them",
			"durable", w.durable, "acknowledged", w.acked.Load(), "processed", w.next)
		return nil
	}
	sctx, cancel := context.WithTimeout(context.Background(), w.p.cfg.ShutdownTimeout)
	defer cancel()
	if w.next != w.durable {
		if err := w.checkpoint(sctx); err != nil {
			log.Error("final checkpoint failed; the next owner resumes from the previous one", "err", err, "durable", w.durable, "processed", w.next)
			w.p.finalCheckpointFailed(w.part, w.durable, err) // at shutdown: Run returns an error (health.go)
		}
	}
	return nil
}

// fetchStartBytes bounds the first fetch after a restore (see fetchLoop).
const fetchStartBytes = 64 << 10

// fetchLoop reads the partition ahead of the worker, from offset from on.
//
// Slow start: the first fetch asks for at most fetchStartBytes and each
// next one for twice as much, up to FetchMaxBytes. With a backlog (a
// restore, a rebalance, a replay) the first records then reach the
// learners after a small fetch instead of after a whole FetchMaxBytes read
// and decode, and the next fetch runs while they are processed. It matters
// most with shared models, where every partition of an instance waits at
// its second sync point for the slowest partition's first records; live
// fetches are small anyway. A fetch that returns nothing while behind the
// high watermark (a record batch larger than the bound) goes to the full
// bound at once.
func (w *worker) fetchLoop(ctx context.Context, from int64, out chan<- fetched) {
	pos := from
	limit := min(w.p.cfg.FetchMaxBytes, fetchStartBytes)
	for ctx.Err() == nil {
		chunks, n, hwm, err := kafkautil.FetchChunks(ctx, w.p.client, w.p.cfg.Input, w.part, pos, limit, w.p.cfg.FetchMaxWait, w.reclaim(), w.chunks, &w.mem)
		if err == nil {
			if n == 0 && pos < hwm {
				limit = w.p.cfg.FetchMaxBytes
			} else {
				limit = min(2*limit, w.p.cfg.FetchMaxBytes)
			}
		}
		if err != nil {
			w.chunks.Give(chunks) // what the failed fetch read, unused
			w.mem.Give(w.mem.Take())
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, kafka.OffsetOutOfRange) {
				pos = w.outOfRange(ctx, pos)
				continue
			}
			w.p.m.fetchErrors.Inc()
			w.waiting(&w.fetchStall, false, err)
			w.log.Warn("fetch failed; retrying", "offset", pos, "err", err)
			sleep(ctx, 500*time.Millisecond)
			continue
		}
		w.waiting(&w.fetchStall, true, nil)
		w.noteHWM(hwm)
		w.fetching.Store(true)
		w.p.contact()
		if n > 0 {
			last := chunks[len(chunks)-1]
			pos = last[len(last)-1].Offset + 1
		}
		select {
		case out <- fetched{chunks: chunks, n: n, hwm: hwm, blocks: w.mem.Take()}:
		case <-ctx.Done():
			return
		}
	}
}

// writeLoop writes units in order until writeCh is closed. Records refused
// for good are replaced (see settle) and never retried as they were; other
// failures are retried with backoff until they succeed or ctx ends (then it
// gives up, and the worker will not checkpoint past the unwritten unit).
// While a unit waits for its acknowledgement the write stall clock runs.
func (w *worker) writeLoop(ctx context.Context) {
	defer close(w.writerDone)
	for {
		var u *unit
		select {
		case <-ctx.Done():
			w.writerOK.Store(false)
			return
		case next, ok := <-w.writeCh:
			if !ok {
				return
			}
			u = next
		}
		if d := u.dec; d != nil {
			ok := false
			select {
			case <-d.done:
				ok = d.ok
			case <-ctx.Done():
			}
			if !ok { // not durable: what the batch computed from it must not be seen
				w.writerOK.Store(false)
				return
			}
		}
		if u.front != nil && !w.p.tail.awaitDurable(ctx, u.front) {
			w.writerOK.Store(false) // ctx ended first
			return
		}
		start := time.Now()
		w.waiting(&w.writeStall, false, nil)
		for attempt := 0; len(u.preds)+len(u.dlq) > 0; {
			if !w.lease.await(ctx) { // fence.go: the partition may have a new owner
				w.log.Warn("not writing: "+errLeaseExpired.Error()+"; the next owner recomputes the unwritten predictions", "from", u.first)
				w.writerOK.Store(false)
				return
			}
			if hook := w.p.cfg.beforeWrite; hook != nil {
				hook(ctx, w.part)
			}
			var err error
			if attempt > 0 {
				// effectively-once: drop what the failed write did land (dedup.go)
				err = w.resync(ctx, u)
			}
			if err == nil {
				err = w.writeUnit(ctx, u)
			}
			if err == nil {
				continue // done, or refused records were replaced: write the replacements
			}
			if ctx.Err() != nil {
				w.writerOK.Store(false)
				return
			}
			attempt++
			w.waiting(&w.writeStall, false, err)
			w.log.Warn("writing predictions failed; retrying", "attempt", attempt, "err", err)
			sleep(ctx, time.Duration(min(attempt, 10))*200*time.Millisecond)
		}
		w.waiting(&w.writeStall, true, nil)
		w.p.contact()
		w.p.m.writeSecs.Observe(time.Since(start).Seconds())
		w.acked.Store(u.next)
		select {
		case w.ackNote <- struct{}{}:
		default:
		}
		select {
		case w.free <- u:
		default:
		}
	}
}

// writeUnit writes a unit's predictions and dead letters (acks=all),
// leaving in the unit what is still to be written: records that failed
// transiently (their error is returned), and the replacements of records
// refused for good (see settle; the error is then nil). A record that was
// written is not written again.
func (w *worker) writeUnit(ctx context.Context, u *unit) error {
	var perr, derr error
	var pbad, dbad []refusal
	w.stamp(u) // effectively-once: output partition and group header (dedup.go)
	np := len(u.preds)
	if len(u.preds) > 0 && len(u.dlq) > 0 {
		done := make(chan struct{})
		go func() { u.dlq, dbad, derr = writeSorted(ctx, w.p.dlqW, u.dlq); close(done) }()
		u.preds, pbad, perr = writeSorted(ctx, w.p.predW, u.preds)
		<-done
	} else if len(u.preds) > 0 {
		u.preds, pbad, perr = writeSorted(ctx, w.p.predW, u.preds)
	} else if len(u.dlq) > 0 {
		u.dlq, dbad, derr = writeSorted(ctx, w.p.dlqW, u.dlq)
	}
	w.p.m.predictions.Add(float64(np - len(u.preds) - len(pbad)))
	if perr != nil || len(pbad) > 0 {
		w.p.m.writeErrors.WithLabelValues("predictions").Inc()
	}
	if derr != nil || len(dbad) > 0 {
		w.p.m.writeErrors.WithLabelValues("dead_letters").Inc()
	}
	w.settle(u, pbad, dbad)
	return errors.Join(perr, derr)
}

// newUnit returns an empty unit, recycled when possible.
func (w *worker) newUnit() *unit {
	select {
	case u := <-w.free:
		// Drop the dead letters' references to old records (up to
		// DeadLetterMaxBytes each) and an arena grown by an unusually
		// large prediction.
		clear(u.dlq[:cap(u.dlq)])
		u.preds, u.dlq, u.arena = u.preds[:0], u.dlq[:0], u.arena[:0]
		u.dec = nil
		if cap(u.arena) > 4<<20 {
			u.arena = nil
		}
		return u
	default:
		return &unit{}
	}
}

// waitAcked waits until the writer has acknowledged everything processed.
func (w *worker) waitAcked(ctx context.Context) bool {
	for w.acked.Load() != w.next {
		select {
		case <-w.ackNote:
		case <-w.writerDone:
			return w.acked.Load() == w.next
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// restore loads the partition's newest checkpoint whose records pass
// validation and whose payload decodes, falling back to the older slot;
// every rejected checkpoint is counted in okstream_checkpoint_invalid_total
// and logged with its reason. If checkpoints exist but none can be
// restored, the partition refuses to start (a fatal error that says why)
// rather than silently starting fresh models; so does one without any
// checkpoint whose group has a committed offset (lost checkpoints), unless
// Config.AllowFreshStart.
func (w *worker) restore(ctx context.Context) error {
	log := w.log
	start := time.Now()
	for _, r := range checkpoint.Reasons() {
		w.p.m.ckptInvalid.WithLabelValues(w.label, string(r)) // series exist at 0, for alerts on increase()
	}
	var cps []*checkpoint.Checkpoint
	var st checkpoint.LoadStats
	for {
		var err error
		cps, st, err = w.p.store.LoadAll(ctx, w.id)
		for _, r := range st.Rejected {
			w.invalidCheckpoint(r)
		}
		if err == nil {
			break
		}
		if errors.Is(err, checkpoint.ErrNoValidCheckpoint) {
			return errPartitionFailed{fmt.Errorf("partition %d: %w (%s)", w.part, err, w.recoveryHint())}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		w.p.cfg.Logger.Warn("checkpoint restore failed; retrying", "partition", w.part, "err", err)
		sleep(ctx, time.Second)
	}
	var cp *checkpoint.Checkpoint
	var fresh []string
	var failed []string
	dimChanged := 0
	for _, c := range cps {
		f, err := w.ms.restore(c.Payload, w.p.cfg.OnModelChange == "reset")
		if errors.Is(err, ErrModelChanged) || errors.Is(err, ErrPartitionsChanged) {
			return errFatal{fmt.Errorf("partition %d: restoring checkpoint %s: %w", w.part, c.Epoch, err)}
		}
		if err != nil {
			// The records were intact but the payload does not decode
			// (e.g. a forged learner state): try the older checkpoint.
			if errors.Is(err, ErrDimensionChanged) {
				dimChanged++
			}
			r := checkpoint.Rejection{Slot: c.Epoch.Slot(), Reason: checkpoint.ReasonPayload, Detail: fmt.Sprintf("epoch %s: %v", c.Epoch, err)}
			w.invalidCheckpoint(r)
			failed = append(failed, r.String())
			continue
		}
		cp, fresh = c, f
		break
	}
	if cp == nil && len(cps) > 0 && dimChanged == len(cps) {
		// A configuration change, not damage: every partition would fail.
		return errFatal{fmt.Errorf("partition %d: %w: %s (restore the old --dim, or use another --group, or another --checkpoint-topic with --allow-fresh-start, to start fresh models)", w.part, ErrDimensionChanged, strings.Join(failed, "; "))}
	}
	if cp == nil && len(cps) > 0 {
		return errPartitionFailed{fmt.Errorf("partition %d: no checkpoint could be restored: %s (%s)", w.part, strings.Join(failed, "; "), w.recoveryHint())}
	}
	if cp != nil {
		w.next, w.epoch, w.durable = cp.NextOffset, cp.Epoch, cp.NextOffset
		w.p.m.restores.WithLabelValues("checkpoint").Inc()
		log.Info("restored", "epoch", cp.Epoch.String(), "next", cp.NextOffset, "bytes", len(cp.Payload),
			"records_read", st.Records, "rejected", st.Rejected, "fresh_models", fresh, "took", time.Since(start).Round(time.Millisecond).String())
	} else {
		committed, hasCommitted := w.gen.committed(w.p.cfg.Input, w.part)
		if hasCommitted && committed > 0 {
			// The partition was processed and checkpointed before (only a
			// checkpoint commits): its checkpoints were lost.
			w.p.m.ckptMissing.WithLabelValues(w.label).Inc()
			if !w.p.cfg.AllowFreshStart {
				return errPartitionFailed{fmt.Errorf("partition %d: the group %s has committed offset %d but the checkpoint topic %s holds no checkpoint of the partition (the topic was deleted or recreated, or --checkpoint-topic changed): refusing to start fresh models at --start-offset %s, which would silently train them on whatever part of the history retention kept; to start fresh anyway restart with --allow-fresh-start, or give the partition fresh models at an offset with okstream checkpoints reset --checkpoint-topic %s --group %s --input %s --partition %d --to-offset N (e.g. %d); the partition retries every %s",
					w.part, w.p.cfg.Group, committed, w.p.cfg.Checkpoints, w.p.cfg.StartOffset, w.p.cfg.Checkpoints, w.p.cfg.Group, w.p.cfg.Input, w.part, committed, w.p.cfg.FailedRetry)}
			}
		}
		first, end, err := w.offsets(ctx)
		if err != nil {
			return err
		}
		w.next = first
		if w.p.cfg.StartOffset == "latest" {
			w.next = end
		}
		w.p.m.restores.WithLabelValues("none").Inc()
		if hasCommitted && committed > 0 {
			log.Warn("no checkpoint although the group has a committed offset: starting fresh models (--allow-fresh-start)",
				"committed", committed, "start", w.p.cfg.StartOffset, "next", w.next, "checkpoint_topic", w.p.cfg.Checkpoints)
		} else {
			log.Info("no checkpoint: starting fresh models", "start", w.p.cfg.StartOffset, "next", w.next)
		}
	}
	d := time.Since(start)
	w.p.m.restoreSecs.Observe(d.Seconds())
	w.p.noteRestore(w.part, d, cp != nil)
	w.lastCkpt.Store(time.Now().UnixNano())
	w.pos.Store(w.next)
	w.fst = features.Stats{}
	if w.ms.enc != nil { // the restored dictionary's size; its counters are the history's
		w.fst = w.ms.enc.Stats()
		w.p.m.featuresInUse.WithLabelValues(w.label).Set(float64(w.fst.Coords))
		w.p.m.featureNames.WithLabelValues(w.label).Set(float64(w.fst.Names))
	}
	w.publishStats()
	return nil
}

// invalidCheckpoint reports a rejected checkpoint (metric and log).
func (w *worker) invalidCheckpoint(r checkpoint.Rejection) {
	w.p.m.ckptInvalid.WithLabelValues(w.label, string(r.Reason)).Inc()
	w.log.Warn("checkpoint rejected", "slot", r.Slot, "reason", string(r.Reason), "detail", r.Detail)
}

func (w *worker) offsets(ctx context.Context) (first, end int64, err error) {
	for {
		first, end, err = kafkautil.Offsets(ctx, w.p.client, w.p.cfg.Input, w.part)
		if err == nil || ctx.Err() != nil {
			return first, end, err
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

// outOfRange resolves a fetch position the log no longer (or not yet) has.
func (w *worker) outOfRange(ctx context.Context, pos int64) int64 {
	first, end, err := w.offsets(ctx)
	if err != nil {
		return pos
	}
	switch {
	case pos < first:
		w.p.m.gaps.Inc()
		w.log.Error("checkpointed offset was deleted by retention: offsets are skipped, exact recovery is impossible for them", "next", pos, "first", first)
		return first
	case pos > end:
		w.log.Error("checkpointed offset is beyond the end of the log (topic recreated?): continuing from its first offset", "next", pos, "end", end)
		return first
	}
	return pos
}

// batch processes records into a unit and hands it to the writer. It
// returns false if the generation ended or the writer gave up.
func (w *worker) batch(ctx context.Context, recs []kafkautil.Record) bool {
	start := time.Now()
	w.batchStart.Store(start.UnixNano())
	u := w.newUnit()
	u.first = w.next
	stopped := false
	for i := range recs {
		w.process(u, &recs[i])
		if w.sh == nil {
			continue
		}
		if b, e := w.sh.st.Next(w.sh.cfg); b {
			ok, err := w.boundary(ctx, e)
			if err != nil {
				w.shareErr = errFatal{fmt.Errorf("partition %d, shared models, boundary %d: %w", w.part, e, err)}
				w.sh.broken = true
			}
			if !ok {
				recs, stopped = recs[:i+1], true
				break
			}
		}
	}
	w.batchStart.Store(0)
	u.next = w.next
	if w.sh != nil {
		u.dec = w.sh.dec
		u.front = append(u.front[:0], w.sh.st.Frontier...)
		if !stopped {
			// Deltas whose decisions landed during the batch go now, not
			// at the next boundary (another instance may be waiting).
			w.flushDeltas(ctx, false)
		}
	}
	w.p.m.events.WithLabelValues(w.label).Add(float64(len(recs)))
	w.p.eventsSeen.Add(int64(len(recs)))
	w.dlw.add(len(recs), w.p.cfg.DeadLetterWindow) // readiness on dead letters (health.go)
	w.since += len(recs)
	w.unckpt.Store(int64(w.since))
	w.p.m.batchSecs.Observe(time.Since(start).Seconds())
	w.publishStats()
	w.drainTallies()
	w.pos.Store(w.next)
	if w.tsw.nts > 0 {
		w.wmark.Store(w.tsw.watermark())
		w.hasWmark.Store(true)
	}
	if hook := w.p.cfg.afterBatch; hook != nil {
		hook(w.part, w.next)
	}
	select {
	case w.writeCh <- u:
		return !stopped
	case <-w.writerDone:
		return false
	case <-ctx.Done():
		// Still hand it over: the writer drains after the generation ends
		// (not if killed). A writer that does not take it within the
		// shutdown timeout waits for something that may not come before
		// the generation's other partitions have stopped (a decision, or
		// shared deltas merged in-process becoming durable): the unit is
		// dropped, and the worker does not checkpoint past it.
		if w.p.killed.Load() {
			return false
		}
		t := time.NewTimer(w.p.cfg.ShutdownTimeout)
		defer t.Stop()
		select {
		case w.writeCh <- u:
		case <-w.writerDone:
		case <-t.C:
		}
		return false
	}
}

func (w *worker) process(u *unit, r *kafkautil.Record) {
	w.next = r.Offset + 1
	var err error
	if w.jsonIn {
		err = w.dec.DecodeEventJSON(r.Value, &w.ev)
	} else {
		err = w.dec.DecodeEvent(r.Value, &w.ev)
	}
	if err != nil {
		// The dead letter keeps the record's bytes as they are (JSON
		// stays JSON); the reason says what the decoder found.
		reason := string(codec.ReasonOf(err))
		if reason == "" {
			reason = string(codec.ReasonNotMsgpack)
			if w.jsonIn {
				reason = string(codec.ReasonNotJSON)
			}
		}
		w.deadLetter(u, r, reason, err.Error())
		return
	}
	kind := featNone // a feedback event carries no features
	if w.ev.Named() {
		kind = featNamed
	} else if !w.ev.IsFeedback() {
		kind = featDense
	}
	if kind != featNone {
		if reason, detail := w.ms.admit(kind, w.sh != nil); reason != "" {
			w.deadLetter(u, r, reason, detail)
			return
		}
	}
	if w.ev.HasY {
		// The label as the models learn it (package label): −1/+1 on a
		// binary stream whatever its encoding, the number on a regression
		// stream. The prediction record carries it too.
		lm := w.ms.labels
		task, classes := lm.TaskAndClasses()
		y, err := w.ms.mapLabel(&w.ev)
		if err != nil {
			w.deadLetter(u, r, reasonBadLabel, err.Error())
			return
		}
		w.ev.Y = y
		if t, c := lm.TaskAndClasses(); t != task || c != classes {
			w.log.Info("labels", "offset", r.Offset, "mapping", lm.String())
		}
	}
	var x []float64
	switch kind {
	case featNamed:
		// After every other refusal: the encoder's state changes exactly
		// once per accepted event, in offset order (exact recovery). An
		// event refused here (--missing refuse) has been through the label
		// mapping, as a labelled feedback event that is dead-lettered has:
		// deterministic, so recovery stays exact, and the encoder is
		// unchanged (features.Encoder.Encode changes nothing on error).
		var err error
		if x, err = w.ms.encode(w.ev.F, w.x); err != nil {
			var me *features.MissingError
			reason := features.MissingReason
			if errors.As(err, &me) {
				reason = me.Reason()
			}
			w.deadLetter(u, r, reason, err.Error()+": the event is refused under --missing refuse; run with --missing impute to learn from it")
			return
		}
		w.noteFeatures()
	case featDense:
		x = w.ev.Dense(w.x, w.p.cfg.Dim)
		w.ms.fkind = featDense
	}
	if w.ev.HasTS {
		w.tsw.push(w.ev.TS)
	}
	pend := w.ms.pend
	if pend.enabled() && w.ev.HasTS {
		if n := pend.observe(w.ev.TS); n > 0 {
			w.p.m.evictions.WithLabelValues("age").Add(float64(n))
		}
	}
	if w.ev.IsFeedback() {
		w.feedback(u, r)
		return
	}
	w.scores = w.ms.score(x, w.ev.Y, w.ev.HasY, w.scores[:0], w.sampledObs())
	if !w.ev.HasY && pend.enabled() && w.ev.ID != "" {
		w.remember(r, x)
	}
	w.emit(u, r, nil)
}

// noteFeatures exports the feature encoder's counters after an event it
// encoded: the gauges of the partition, and the counters' increments since
// the last call (or the restore).
func (w *worker) noteFeatures() {
	s := w.ms.enc.Stats()
	m := w.p.m
	if s.Coords != w.fst.Coords || s.Names != w.fst.Names || s.Events == 1 {
		m.featuresInUse.WithLabelValues(w.label).Set(float64(s.Coords))
		m.featureNames.WithLabelValues(w.label).Set(float64(s.Names))
	}
	if d := s.Dropped - w.fst.Dropped; d > 0 {
		m.featuresDropped.Add(float64(d))
	}
	if d := s.Folded - w.fst.Folded; d > 0 {
		m.featuresFolded.Add(float64(d))
	}
	if d := s.Imputed - w.fst.Imputed; d > 0 {
		m.featuresImputed.Add(float64(d))
	}
	w.fst = s
}

// remember keeps an impression for its delayed feedback (unless its id is
// already pending, or it alone is above the buffer's byte limit).
func (w *worker) remember(r *kafkautil.Record, x []float64) {
	im := newImpression(w.ev.ID, w.eventKey(r), r.Offset, w.ev.TS, w.ev.HasTS, x, len(w.scores))
	im.record(w.scores)
	res := w.ms.pend.add(im)
	switch {
	case res.duplicate:
		w.p.m.impressionsRefused.WithLabelValues("duplicate_id").Inc()
	case res.tooLarge:
		w.p.m.impressionsRefused.WithLabelValues("too_large").Inc()
	}
	if res.size > 0 {
		w.p.m.evictions.WithLabelValues("size").Add(float64(res.size))
	}
	if res.bytes > 0 {
		w.p.m.evictions.WithLabelValues("bytes").Add(float64(res.bytes))
	}
	w.p.m.pendingSize.WithLabelValues(w.label).Set(float64(w.ms.pend.len()))
	w.p.m.pendingBytes.WithLabelValues(w.label).Set(float64(w.ms.pend.bytes))
}

// eventKey is the entity key of the event being processed: its "key", else
// the Kafka record key.
func (w *worker) eventKey(r *kafkautil.Record) string {
	if w.ev.Key == "" && r.Key != nil {
		return string(r.Key)
	}
	return w.ev.Key
}

// modelReset reports a model reset by the non-finite guard (see
// modelSet.step); w.next-1 is the offset of the event being processed, or
// of the last one before a checkpoint.
func (w *worker) modelReset(m *model, reason string) {
	w.p.m.modelResets.WithLabelValues(m.name, reason).Inc()
	w.log.Error("model state is not finite: reset to a fresh learner (see Guarantees in the README)",
		"model", m.name, "reason", reason, "offset", w.next-1, "resets", m.stats.Resets)
}

// modelChange reports a change in the stream that a model detected and
// acted on (auto: its loss rose, so it restarted its bank with fresh
// members; learner/auto_track.go); w.next-1 is the offset of the event.
func (w *worker) modelChange(m *model, changes, alarms int64) {
	w.p.m.modelChanges.WithLabelValues(m.name).Inc()
	w.log.Info("model detected a change in the stream: it restarted its member bank (fresh members join the survivors)",
		"model", m.name, "offset", w.next-1, "changes", changes, "alarms", alarms)
}

// feedback resolves a label-only event: the models learn from the
// referenced impression's features and the label, and an outcome record
// carries the label with the scores the models gave at impression time.
func (w *worker) feedback(u *unit, r *kafkautil.Record) {
	pend := w.ms.pend
	if !pend.enabled() {
		w.p.m.feedback.WithLabelValues("disabled").Inc()
		w.deadLetter(u, r, reasonFeedbackDisabled, "a feedback event (ref "+strconv.Quote(w.ev.Ref)+"), but delayed feedback is off: run with --feedback-buffer N")
		return
	}
	im, mismatch := pend.take(w.ev.Ref, w.eventKey(r))
	w.p.m.pendingSize.WithLabelValues(w.label).Set(float64(pend.len()))
	w.p.m.pendingBytes.WithLabelValues(w.label).Set(float64(pend.bytes))
	if mismatch {
		w.p.m.feedback.WithLabelValues("key_mismatch").Inc()
		w.deadLetter(u, r, reasonFeedbackKeyMismatch, "the pending impression "+strconv.Quote(w.ev.Ref)+" belongs to another key: feedback must carry its impression's key (it stays pending)")
		return
	}
	if im == nil {
		w.p.m.feedback.WithLabelValues("orphan").Inc()
		w.deadLetter(u, r, reasonOrphanFeedback, "no pending impression with id "+strconv.Quote(w.ev.Ref)+" (never seen in this partition, already resolved, or evicted by the buffer's size or age limit)")
		return
	}
	w.p.m.feedback.WithLabelValues("matched").Inc()
	w.scores = w.ms.learnDelayed(im, w.ev.Y, w.scores[:0], w.obs)
	w.emit(u, r, im)
}

// emit appends the prediction record of the event just processed (an
// outcome record when im is the impression a feedback event resolved).
func (w *worker) emit(u *unit, r *kafkautil.Record, im *impression) {
	if w.suppressed(r.Offset) { // already published (effectively-once; dedup.go)
		return
	}
	id := w.ev.ID
	switch {
	case im != nil:
		id = im.id // an outcome record is about its impression (codec doc)
	case id == "":
		id = w.defaultID(r.Offset)
	}
	key := w.eventKey(r)
	pred := codec.Prediction{
		Version: codec.PredictionVersionProb, ID: id, Key: key,
		Topic: w.p.cfg.Input, Partition: int32(w.part), Offset: r.Offset,
		TS: w.ev.TS, HasTS: w.ev.HasTS, Y: w.ev.Y, HasY: w.ev.HasY, Models: w.scores,
		Class: w.ms.className(w.scores),
	}
	if im != nil {
		pred.Ref, pred.RefOffset, pred.HasRef = im.id, im.offset, true
	}
	n := len(u.arena)
	if w.jsonOut {
		u.arena = codec.AppendPredictionJSON(u.arena, &pred)
	} else {
		u.arena = codec.AppendPrediction(u.arena, &pred)
	}
	if size := len(key) + len(u.arena) - n; size > w.p.predMax {
		u.arena = u.arena[:n]
		w.deadLetter(u, r, reasonPredictionTooLarge, fmt.Sprintf(
			"the prediction record would be %d bytes (key %d), over the output writer's limit of %d: the event's id or key is too long; the models did learn from the event",
			size, len(key), w.p.predMax))
		return
	}
	msg := kafka.Message{Value: u.arena[n:len(u.arena):len(u.arena)]}
	if key != "" {
		msg.Key = u.appendKey(key)
	}
	if w.stampAtEmit {
		// Effectively-once, unsigned: the record's partition and headers
		// (the unit's value is stamp's), set here while it is made.
		msg.Partition, msg.Headers = w.part, w.unitHeaders(u)
	}
	// The record's Kafka timestamp is left to the write time: the event time
	// is in the value's ts field. Using the event time would let time-based
	// retention delete the predictions of a replayed historical log at once.
	u.preds = append(u.preds, msg)
}

// deadLetter appends the dead letter of a record (see deadLetterMsg: whole,
// or truncated to the dead-letter limit with headers saying so).
func (w *worker) deadLetter(u *unit, r *kafkautil.Record, reason, detail string) {
	if w.suppressed(r.Offset) { // already published (effectively-once; dedup.go)
		return
	}
	w.p.m.deadLetters.WithLabelValues(reason).Inc()
	w.noteDeadLetter(reason, detail, r.Offset)
	u.dlq = append(u.dlq, deadLetterMsg(r.Key, r.Value, w.p.dlqMax, reason, detail,
		w.p.cfg.Input+"/"+w.label+"/"+strconv.FormatInt(r.Offset, 10)))
}

func (w *worker) maybeCheckpoint(ctx context.Context) {
	if w.next == w.durable || ctx.Err() != nil {
		return // nothing new, or the generation ended: the exit path checkpoints
	}
	if w.since < w.p.cfg.CheckpointEvery && time.Since(time.Unix(0, w.lastCkpt.Load())) < w.p.cfg.CheckpointInterval {
		return
	}
	if !w.checkpointDue(time.Now()) {
		return // backing off after failed checkpoints (health.go)
	}
	if !w.waitAcked(ctx) {
		return // the generation ended: the exit path drains and checkpoints
	}
	err := w.checkpoint(ctx)
	if err != nil && ctx.Err() != nil {
		return // the generation ended: the exit path checkpoints
	}
	w.noteCheckpoint(err) // backoff and rate-limited logs (health.go)
}

// checkpoint saves the models at w.next (the caller has made sure every
// prediction before it is acknowledged), then commits the group offset.
func (w *worker) checkpoint(ctx context.Context) error {
	if !w.deltasAcked(ctx) {
		return errors.New("the shared deltas before the checkpoint were not all published")
	}
	w.ms.checkBeforeCheckpoint() // never checkpoint a non-finite model silently
	payload, err := w.ms.marshalInto(w.ckptBuf)
	if err != nil {
		return err
	}
	w.ckptBuf = payload // reused by the next checkpoint (Save keeps no reference)
	seq := nextCheckpointSeq(w.epoch.Seq, w.failedSeq)
	ep := checkpoint.Epoch{Generation: w.gen.id(), Seq: seq}
	st, err := w.p.store.Save(ctx, checkpoint.Checkpoint{ID: w.id, Epoch: ep, NextOffset: w.next, Payload: payload})
	if err != nil {
		w.failedSeq = seq
		w.p.m.ckptTotal.WithLabelValues("error").Inc()
		w.p.m.writeErrors.WithLabelValues("checkpoints").Inc()
		return err
	}
	now := time.Now()
	w.epoch, w.durable, w.since = ep, w.next, 0
	w.unckpt.Store(0)
	w.lastCkpt.Store(now.UnixNano())
	w.p.contact()
	w.p.m.ckptTotal.WithLabelValues("ok").Inc()
	w.p.m.ckptBytes.Observe(float64(st.Bytes))
	w.p.m.ckptSecs.Observe(st.Duration.Seconds())
	w.p.m.ckptUnix.WithLabelValues(w.label).Set(float64(now.UnixNano()) / 1e9)
	w.p.noteCheckpoint(w.part, w.next, st)
	if f := w.p.cfg.OnModels; f != nil {
		f(w.part, w.next, bytes.Clone(payload))
	}
	if err := w.gen.commit(w.p.cfg.Input, w.part, w.next); err != nil {
		// The checkpoint, not the committed offset, is where the partition
		// resumes; a failed commit only delays the lag metric of other tools.
		w.p.m.writeErrors.WithLabelValues("commit").Inc()
		w.log.Error("committing the group offset failed (the checkpoint is durable)", "offset", w.next, "err", err)
	}
	return nil
}

// nextCheckpointSeq is the Seq of the next checkpoint attempt after the
// durable checkpoint's Seq last and the last failed attempt's Seq failed (0:
// none since). A failed Save's records may still land
// (checkpoint.Store.Save), so its epoch is never written again with
// another payload: the retry takes the next epoch of the same slot, which
// keeps the other slot (the last durable checkpoint) intact.
func nextCheckpointSeq(last, failed uint64) uint64 {
	if failed > last {
		return failed + 2
	}
	return last + 1
}

// publishStats exports the models' progressive statistics and records them
// for Status.
func (w *worker) publishStats() {
	stats := make(map[string]Stats, len(w.ms.models))
	for _, m := range w.ms.models {
		stats[m.name] = m.stats
		if m.stats.Labeled == 0 {
			continue
		}
		if m.classify {
			w.p.m.mistakeRate.WithLabelValues(m.name, w.label).Set(m.stats.MistakeRate())
		}
		w.p.m.mse.WithLabelValues(m.name, w.label).Set(m.stats.MSE())
	}
	w.p.noteStats(w.part, w.next, stats)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
