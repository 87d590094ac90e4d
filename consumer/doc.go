// Package consumer is okstream's stream runtime: it joins a Kafka consumer
// group, runs one worker per assigned input partition, and for every event —
// strictly in offset order — scores it with every configured model (the
// champion and its challengers), learns from its label if it has one,
// publishes one prediction record carrying every model's score, and
// periodically checkpoints the models to a compacted topic.
//
// # Per-partition processing
//
// A worker owns one input partition while its consumer-group generation
// lasts. On assignment it restores the partition's newest complete
// checkpoint (package checkpoint) and resumes at the checkpoint's next
// offset — not at the group's committed offset, which only mirrors it for
// monitoring. It then fetches micro-batches, decodes each record (package
// codec), predicts before learning, and writes the batch's predictions and
// dead letters. Every CheckpointEvery events or CheckpointInterval, and when
// the partition is revoked or the process shuts down, it checkpoints.
//
// # Damaged or forged checkpoints
//
// Every checkpoint rejected while restoring — torn, corrupt, forged, over
// CheckpointMaxStateBytes (package checkpoint lists the checks and limits),
// or intact but with a payload the models cannot decode — is counted in
// okstream_checkpoint_invalid_total{partition, reason} and logged (warn,
// with the partition, slot, reason and detail). The worker then restores the
// older checkpoint of the partition (the other slot) and reprocesses from
// its offset, which is exact because the learners are deterministic. If
// checkpoints exist but none can be restored, the partition refuses to
// start: Run returns an error naming each checkpoint's reason (okstream run
// exits non-zero), rather than silently starting fresh models. A model
// whose spec changed (ErrModelChanged) is a configuration error, not a
// damaged checkpoint: it stops the pipeline without a fallback.
//
// # Durability order
//
// For every checkpoint: the predictions (and dead letters) of all input
// records before its offset are acknowledged by the brokers (acks=all)
// before the checkpoint is written, and the group offset is committed only
// after the checkpoint is acknowledged. If a batch of predictions cannot be
// written, the worker does not checkpoint past it; if it then loses the
// partition, the next owner restores the previous checkpoint and recomputes
// the same predictions.
//
// # Exact recovery
//
// Learners are deterministic state machines, so restoring a checkpoint and
// reprocessing the input after it reproduces, bit for bit, the state and the
// prediction records an uninterrupted run would have produced. State is
// exactly once. Output is effectively once by default (Config.Delivery; see
// dedup.go): the output of input partition p goes to output partition p, and
// a recovering worker recomputes without publishing what that partition
// already holds, so each input offset has one output record — except for a
// zombie instance still writing after losing its partition, or a write the
// broker committed only after the next owner read the output's tail
// (counted in okstream_output_duplicates_detected_total when seen). With
// Delivery "at-least-once" the output since the checkpoint is published
// again after a crash. Either way a re-emitted record is byte-identical to
// the first, so downstream consumers can de-duplicate by the source (topic,
// partition, offset) carried in each record.
//
// One decision can depend on when checkpoints happen: a model whose state
// has become non-finite is reset to a fresh learner at the first event it
// scores non-finite (a pure function of the stream), or, if a checkpoint
// comes first, by the check before that checkpoint, so that a NaN model is
// never checkpointed silently (see modelSet.step and
// modelSet.checkBeforeCheckpoint). Both give the same state whenever the
// poisoned model's next score is non-finite too, as it is for the kernel
// learners; with the value limits on (the default) this does not arise
// from finite inputs.
//
// # Models shared across partitions
//
// Config.Share names models whose copies learn from every partition (see
// package share for the schedule, share.go for this driver, and
// docs/sharing.md). At the end of each epoch of Config.ShareEvery records
// of its own offset order, a worker publishes its shared models' deltas to
// Config.ShareTopic (asynchronously; every delta is acknowledged before the
// next checkpoint), waits up to Config.ShareMaxWait for the deltas the
// schedule needs (Config.ShareLag epochs behind), writes a decision record
// if it proceeds without some (asynchronously: its later deltas are held
// until it lands, and so are the micro-batch's output and the next
// checkpoint; the worker itself waits only to merge its own held delta),
// and merges.
// A restored worker
// first reads the sync topic to its end, then replays recorded decisions
// and the default frontier elsewhere (share.Config.Default: the strict
// one, but a partition skipped earlier stays behind until a rejoin
// boundary, recorded), which reproduces the merges bit for
// bit. A recorded frontier is waited for without bound, and so is the
// default one up to where its previous owners are known to have gone
// (worker.noteReplay: its own later deltas on the sync topic), since a
// delta they merged in-process may not have been durable; past that, the
// boundaries are decided as in a first run. A micro-batch's output and a
// checkpoint wait until every delta merged before them is durable
// (tailer.awaitDurable). A generation that ends while a worker waits at a sync point leaves
// no final checkpoint (the next owner replays). Failure modes that stop
// the pipeline: a needed sync record overwritten by a newer epoch (raise
// ShareWindow), a checkpoint of shared models taken with another input
// partition count (ErrPartitionsChanged), a delta that does not decode.
//
// # Bad input
//
// A record that does not decode, has NaN/Inf or the wrong dimension, a
// feature value or label beyond Config.MaxAbsValue, an id, key or ref
// longer than Config.MaxIDBytes, or a classification label other than ±1,
// or that is feedback for an impression the partition does not hold (or
// holds for another key), is written to the dead-letter topic
// with its original key and bytes and headers okstream-reason (a stable
// snake_case reason, also the metrics label), okstream-detail (a
// human-readable message) and okstream-source (topic/partition/offset). It
// never stops the partition.
//
// # Records too large, and records refused
//
// Every record the runtime writes fits its writer and topic, whatever the
// input (deadletter.go): a dead letter copies at most
// Config.DeadLetterMaxBytes of its record and says so in its headers
// (okstream-truncated, okstream-original-key-bytes,
// okstream-original-value-bytes); a valid event whose prediction record
// would be too large is dead-lettered (prediction_too_large) after the
// models learned from it. A record the broker refuses for good is never
// retried as it is: a refused prediction becomes a dead letter
// (prediction_refused), a refused dead letter is written again without key
// and value, and dropped (logged, counted) if even that is refused.
// Transient errors are retried with backoff indefinitely; a partition
// whose output or fetches make no progress for Config.StuckAfter is
// reported stuck (Pipeline.Ready, /readyz, okstream_partition_stuck), never
// skipped.
//
// # Health, failed partitions, observability
//
// Readiness (Pipeline.Ready, /readyz, okstream_ready) means a live
// consumer-group generation, a broker reached within
// Config.ReadyBrokerTimeout, and every assigned partition restored,
// fetching, not failed and not stuck; liveness (Pipeline.Live, /healthz)
// fails only when the process is wedged (health.go). A partition none of
// whose checkpoints can be restored fails alone: it is reported
// (okstream_partition_failed, an error log, /readyz) and retries its
// restore every Config.FailedRetry, so that it starts once an operator has
// reset its checkpoint (checkpoint.Store.Reset, okstream checkpoints
// reset); the other partitions keep running. A checkpointed model whose
// spec changed (Config.OnModelChange "fail") still stops the pipeline: that
// is a configuration error shared by every partition. Lag, event-time
// watermark and checkpoint age are computed at scrape time from the
// workers' positions; per-model counters are drained once per micro-batch.
package consumer
