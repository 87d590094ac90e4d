package consumer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/internal/kafkautil"
	"okstream/learner"
)

// reasonBadLabel dead-letters a labelled event whose label a classification
// model cannot learn from (anything but −1 and +1).
const reasonBadLabel = "invalid_label"

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
}

type kafkaGen struct{ g *kafka.Generation }

func (k kafkaGen) id() int32 { return k.g.ID }
func (k kafkaGen) commit(topic string, partition int, offset int64) error {
	return k.g.CommitOffsets(map[string]map[int]int64{topic: {partition: offset}})
}

// errFatal marks errors that must stop the pipeline (configuration
// problems a retry cannot fix).
type errFatal struct{ error }

func (e errFatal) Unwrap() error { return e.error }

// worker processes one input partition for one generation.
type worker struct {
	p     *Pipeline
	gen   generation
	part  int
	label string // partition as a metrics label
	id    checkpoint.ID

	ms       *modelSet
	classify bool
	next     int64 // next input offset to process
	epoch    checkpoint.Epoch
	durable  int64 // next offset of the last durable checkpoint (-1: none)
	since    int   // events since the last checkpoint
	lastCkpt time.Time

	dec    *codec.Decoder
	ev     codec.Event
	x      []float64
	scores []codec.ModelScore
	arena  []byte
	preds  []kafka.Message
	dlq    []kafka.Message
	recs   []kafkautil.Record
	obs    []prometheus.Observer
}

func newWorker(p *Pipeline, gen generation, part int) (*worker, error) {
	ms, err := newModelSet(p.cfg.Models, p.cfg.Dim)
	if err != nil {
		return nil, errFatal{err}
	}
	w := &worker{
		p: p, gen: gen, part: part, label: partLabel(part),
		id:       checkpoint.ID{Group: p.cfg.Group, Topic: p.cfg.Input, Partition: part},
		ms:       ms,
		classify: p.task == learner.Classification,
		durable:  -1,
		dec:      codec.NewDecoder(codec.Limits{Dim: p.cfg.Dim, MaxBytes: p.cfg.MaxEventBytes}),
		x:        make([]float64, p.cfg.Dim),
	}
	for _, m := range p.cfg.Models {
		w.obs = append(w.obs, p.m.updateSecs.WithLabelValues(m.Name))
	}
	return w, nil
}

// run is the worker's life: restore, process until the generation ends,
// then checkpoint and commit (unless the pipeline was killed).
func (w *worker) run(ctx context.Context) error {
	log := w.p.cfg.Logger.With("partition", w.part, "generation", w.gen.id())
	if err := w.restore(ctx, log); err != nil {
		return err
	}
	w.p.partReady(w.part, true)
	defer w.p.partReady(w.part, false)

	for ctx.Err() == nil {
		var hwm int64
		var err error
		w.recs, hwm, err = kafkautil.FetchBatch(ctx, w.p.client, w.p.cfg.Input, w.part, w.next, w.p.cfg.FetchMaxBytes, w.p.cfg.FetchMaxWait, w.recs[:0])
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if errors.Is(err, kafka.OffsetOutOfRange) {
				w.outOfRange(ctx, log)
				continue
			}
			log.Warn("fetch failed; retrying", "offset", w.next, "err", err)
			sleep(ctx, 500*time.Millisecond)
			continue
		}
		w.p.m.lag.WithLabelValues(w.label).Set(float64(max(0, hwm-w.next)))
		for i := 0; i < len(w.recs) && ctx.Err() == nil; {
			j := min(i+w.p.cfg.BatchSize, len(w.recs))
			if !w.batch(ctx, w.recs[i:j], log) {
				break // lost the partition with unwritten predictions
			}
			i = j
			w.maybeCheckpoint(ctx, log)
		}
		if len(w.recs) == 0 {
			w.maybeCheckpoint(ctx, log) // time-based checkpoints on an idle partition
		}
		if !w.lastCkpt.IsZero() {
			w.p.m.ckptAge.WithLabelValues(w.label).Set(time.Since(w.lastCkpt).Seconds())
		}
	}
	if w.p.killed.Load() {
		log.Info("killed: exiting without a final checkpoint", "next", w.next)
		return nil
	}
	if w.pending() {
		log.Warn("partition revoked with unwritten predictions: not checkpointing past them; the next owner recomputes them", "durable", w.durable)
		return nil
	}
	sctx, cancel := context.WithTimeout(context.Background(), w.p.cfg.ShutdownTimeout)
	defer cancel()
	if w.next != w.durable {
		if err := w.checkpoint(sctx, log); err != nil {
			log.Error("final checkpoint failed; the next owner resumes from the previous one", "err", err)
		}
	}
	return nil
}

func (w *worker) pending() bool { return len(w.preds) > 0 || len(w.dlq) > 0 }

func (w *worker) restore(ctx context.Context, log interface{ Info(string, ...any) }) error {
	start := time.Now()
	var cp *checkpoint.Checkpoint
	var st checkpoint.LoadStats
	for {
		var err error
		cp, st, err = w.p.store.Load(ctx, w.id)
		if err == nil {
			break
		}
		if errors.Is(err, checkpoint.ErrNoValidCheckpoint) {
			return errFatal{fmt.Errorf("partition %d: %w (inspect the checkpoint topic with okstream inspect checkpoints; to discard the state, delete the partition's checkpoint records)", w.part, err)}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		w.p.cfg.Logger.Warn("checkpoint restore failed; retrying", "partition", w.part, "err", err)
		sleep(ctx, time.Second)
	}
	if cp != nil {
		fresh, err := w.ms.restore(cp.Payload, w.p.cfg.OnModelChange == "reset")
		if err != nil {
			return errFatal{fmt.Errorf("partition %d: restoring checkpoint %s: %w", w.part, cp.Epoch, err)}
		}
		w.next, w.epoch, w.durable = cp.NextOffset, cp.Epoch, cp.NextOffset
		w.p.m.restores.WithLabelValues("checkpoint").Inc()
		log.Info("restored", "epoch", cp.Epoch.String(), "next", cp.NextOffset, "bytes", len(cp.Payload),
			"records_read", st.Records, "rejected", st.Rejected, "fresh_models", fresh, "took", time.Since(start).Round(time.Millisecond).String())
	} else {
		first, end, err := w.offsets(ctx)
		if err != nil {
			return err
		}
		w.next = first
		if w.p.cfg.StartOffset == "latest" {
			w.next = end
		}
		w.p.m.restores.WithLabelValues("none").Inc()
		log.Info("no checkpoint: starting fresh models", "start", w.p.cfg.StartOffset, "next", w.next)
	}
	d := time.Since(start)
	w.p.m.restoreSecs.Observe(d.Seconds())
	w.p.noteRestore(w.part, d, cp != nil)
	w.lastCkpt = time.Now()
	w.publishStats()
	return nil
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

// outOfRange handles a next offset the log no longer (or not yet) has.
func (w *worker) outOfRange(ctx context.Context, log interface{ Error(string, ...any) }) {
	first, end, err := w.offsets(ctx)
	if err != nil {
		return
	}
	switch {
	case w.next < first:
		w.p.m.gaps.Inc()
		log.Error("checkpointed offset was deleted by retention: offsets are skipped, exact recovery is impossible for them", "next", w.next, "first", first)
		w.next = first
	case w.next > end:
		log.Error("checkpointed offset is beyond the end of the log (topic recreated?): continuing from its first offset", "next", w.next, "end", end)
		w.next = first
	}
}

// batch processes records and writes their predictions and dead letters.
// It returns false if the generation ended before the writes succeeded.
func (w *worker) batch(ctx context.Context, recs []kafkautil.Record, log interface{ Warn(string, ...any) }) bool {
	start := time.Now()
	for i := range recs {
		w.process(&recs[i])
	}
	for attempt := 0; w.pending(); attempt++ {
		if err := w.flush(ctx); err != nil {
			if ctx.Err() != nil {
				return false
			}
			log.Warn("writing predictions failed; retrying", "attempt", attempt+1, "err", err)
			sleep(ctx, time.Duration(min(attempt+1, 10))*200*time.Millisecond)
		}
	}
	w.p.m.events.WithLabelValues(w.label).Add(float64(len(recs)))
	w.since += len(recs)
	w.p.m.batchSecs.Observe(time.Since(start).Seconds())
	w.publishStats()
	return true
}

func (w *worker) process(r *kafkautil.Record) {
	w.next = r.Offset + 1
	if err := w.dec.DecodeEvent(r.Value, &w.ev); err != nil {
		reason := string(codec.ReasonOf(err))
		if reason == "" {
			reason = string(codec.ReasonNotMsgpack)
		}
		w.deadLetter(r, reason, err.Error())
		return
	}
	if w.classify && w.ev.HasY && w.ev.Y != 1 && w.ev.Y != -1 {
		w.deadLetter(r, reasonBadLabel, fmt.Sprintf("label %v: classification models learn from labels -1 and +1 only", w.ev.Y))
		return
	}
	x := w.ev.Dense(w.x, w.p.cfg.Dim)
	w.scores = w.ms.score(x, w.ev.Y, w.ev.HasY, w.scores[:0], w.obs)
	id := w.ev.ID
	if id == "" {
		id = w.p.cfg.Input + "/" + w.label + "/" + strconv.FormatInt(r.Offset, 10)
	}
	key := w.ev.Key
	if key == "" && r.Key != nil {
		key = string(r.Key)
	}
	pred := codec.Prediction{
		Version: codec.PredictionVersion, ID: id, Key: key,
		Topic: w.p.cfg.Input, Partition: int32(w.part), Offset: r.Offset,
		TS: w.ev.TS, HasTS: w.ev.HasTS, Y: w.ev.Y, HasY: w.ev.HasY, Models: w.scores,
	}
	n := len(w.arena)
	w.arena = codec.AppendPrediction(w.arena, &pred)
	msg := kafka.Message{Value: w.arena[n:len(w.arena):len(w.arena)]}
	if key != "" {
		msg.Key = []byte(key)
	}
	if w.ev.HasTS {
		msg.Time = time.UnixMilli(w.ev.TS)
	}
	w.preds = append(w.preds, msg)
}

func (w *worker) deadLetter(r *kafkautil.Record, reason, detail string) {
	w.p.m.deadLetters.WithLabelValues(reason).Inc()
	w.dlq = append(w.dlq, kafka.Message{
		Key:   r.Key,
		Value: r.Value,
		Headers: []kafka.Header{
			{Key: HeaderReason, Value: []byte(reason)},
			{Key: HeaderDetail, Value: []byte(detail)},
			{Key: HeaderSource, Value: []byte(w.p.cfg.Input + "/" + w.label + "/" + strconv.FormatInt(r.Offset, 10))},
		},
	})
}

// flush writes the pending predictions and dead letters (acks=all).
func (w *worker) flush(ctx context.Context) error {
	var perr, derr error
	if len(w.preds) > 0 && len(w.dlq) > 0 {
		done := make(chan struct{})
		go func() { derr = w.p.dlqW.WriteMessages(ctx, w.dlq...); close(done) }()
		perr = w.p.predW.WriteMessages(ctx, w.preds...)
		<-done
	} else if len(w.preds) > 0 {
		perr = w.p.predW.WriteMessages(ctx, w.preds...)
	} else if len(w.dlq) > 0 {
		derr = w.p.dlqW.WriteMessages(ctx, w.dlq...)
	}
	if perr == nil && len(w.preds) > 0 {
		w.p.m.predictions.Add(float64(len(w.preds)))
		w.preds = w.preds[:0]
		w.arena = w.arena[:0]
	} else if perr != nil {
		w.p.m.writeErrors.WithLabelValues("predictions").Inc()
	}
	if derr == nil {
		w.dlq = w.dlq[:0]
	} else {
		w.p.m.writeErrors.WithLabelValues("dead_letters").Inc()
	}
	return errors.Join(perr, derr)
}

func (w *worker) maybeCheckpoint(ctx context.Context, log interface{ Error(string, ...any) }) {
	if w.next == w.durable {
		return
	}
	if w.since < w.p.cfg.CheckpointEvery && time.Since(w.lastCkpt) < w.p.cfg.CheckpointInterval {
		return
	}
	if err := w.checkpoint(ctx, log); err != nil && ctx.Err() == nil {
		log.Error("checkpoint failed; will retry", "err", err)
	}
}

// checkpoint saves the models at w.next (every prediction before it is
// already acknowledged), then commits the group offset.
func (w *worker) checkpoint(ctx context.Context, log interface{ Error(string, ...any) }) error {
	payload, err := w.ms.marshal()
	if err != nil {
		return err
	}
	ep := checkpoint.Epoch{Generation: w.gen.id(), Seq: w.epoch.Seq + 1}
	st, err := w.p.store.Save(ctx, checkpoint.Checkpoint{ID: w.id, Epoch: ep, NextOffset: w.next, Payload: payload})
	if err != nil {
		w.p.m.ckptTotal.WithLabelValues("error").Inc()
		w.p.m.writeErrors.WithLabelValues("checkpoints").Inc()
		return err
	}
	w.epoch, w.durable, w.since, w.lastCkpt = ep, w.next, 0, time.Now()
	w.p.m.ckptTotal.WithLabelValues("ok").Inc()
	w.p.m.ckptBytes.Observe(float64(st.Bytes))
	w.p.m.ckptSecs.Observe(st.Duration.Seconds())
	w.p.m.ckptAge.WithLabelValues(w.label).Set(0)
	w.p.m.ckptUnix.WithLabelValues(w.label).Set(float64(w.lastCkpt.UnixNano()) / 1e9)
	w.p.noteCheckpoint(w.part, w.next, st)
	if err := w.gen.commit(w.p.cfg.Input, w.part, w.next); err != nil {
		// The checkpoint, not the committed offset, is where the partition
		// resumes; a failed commit only delays the lag metric of other tools.
		w.p.m.writeErrors.WithLabelValues("commit").Inc()
		log.Error("committing the group offset failed (the checkpoint is durable)", "offset", w.next, "err", err)
	}
	return nil
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
