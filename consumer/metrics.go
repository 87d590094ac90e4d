package consumer

import (
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"okstream/codec"
	"okstream/features"
)

// metrics are the pipeline's Prometheus metrics. Names follow the
// Prometheus conventions: a namespace, base units (seconds, bytes), _total
// for counters.
type metrics struct {
	events      *prometheus.CounterVec   // {partition}
	predictions prometheus.Counter       //
	deadLetters *prometheus.CounterVec   // {reason}
	labeled     *prometheus.CounterVec   // {model}
	mistakes    *prometheus.CounterVec   // {model}
	loss        *prometheus.CounterVec   // {model}: Σ (score − y)² over labelled events
	modelPreds  *prometheus.CounterVec   // {model}
	updates     *prometheus.CounterVec   // {model}
	nonFinite   *prometheus.CounterVec   // {model}
	mistakeRate *prometheus.GaugeVec     // {model, partition}: progressive, whole history (restored with the checkpoint)
	mse         *prometheus.GaugeVec     // {model, partition}
	updateSecs  *prometheus.HistogramVec // {model}
	batchSecs   prometheus.Histogram
	writeSecs   prometheus.Histogram
	ckptBytes   prometheus.Histogram
	ckptSecs    prometheus.Histogram
	ckptTotal   *prometheus.CounterVec // {result}
	ckptUnix    *prometheus.GaugeVec   // {partition}: time of the last checkpoint
	restoreSecs prometheus.Histogram
	restores    *prometheus.CounterVec // {result}: found, none, reset
	ckptInvalid *prometheus.CounterVec // {partition, reason}: checkpoint slots rejected at restore
	assigned    prometheus.Gauge
	rebalances  prometheus.Counter
	writeErrors *prometheus.CounterVec // {topic_role}
	gaps        prometheus.Counter
	pendingSize *prometheus.GaugeVec   // {partition}
	evictions   *prometheus.CounterVec // {reason}: size, bytes, age
	feedback    *prometheus.CounterVec // {result}: matched, orphan, disabled, key_mismatch
	dlqDropped  *prometheus.CounterVec // {reason}: dead letters refused even without key and value
	fetchErrors prometheus.Counter
	// Added with the value limits and the non-finite guard.
	pendingBytes       *prometheus.GaugeVec   // {partition}
	impressionsRefused *prometheus.CounterVec // {reason}: duplicate_id, too_large
	modelResets        *prometheus.CounterVec // {model, reason}: non_finite, non_finite_at_checkpoint
	modelChanges       *prometheus.CounterVec // {model}: changes detected and acted on (issue 40)
	// Added with the checkpoint and dead-letter health (issue 37).
	ckptMissing *prometheus.CounterVec // {partition}: a committed group offset without a checkpoint
	// Added with the measures and baselines (issue 38).
	logLoss      *prometheus.CounterVec // {model}: Σ log loss of the calibrated probability (classification)
	absErr       *prometheus.CounterVec // {model}: Σ |score − y|
	baseLabeled  prometheus.Counter     // the trivial predictor (class prior, running mean) on the same labelled events
	baseMistakes prometheus.Counter
	baseLogLoss  prometheus.Counter
	baseLoss     prometheus.Counter
	baseAbsErr   prometheus.Counter
	// Added with named features (issue 39): the partitions' feature
	// encoders (package features).
	featuresInUse   *prometheus.GaugeVec // {partition}: coordinates in use
	featureNames    *prometheus.GaugeVec // {partition}: names in the dictionary
	featuresDropped prometheus.Counter   // field occurrences beyond --dim
	featuresFolded  prometheus.Counter   // string values folded into name=<other>
	featuresImputed prometheus.Counter   // missing numeric values imputed
}

func newMetrics(reg prometheus.Registerer) *metrics {
	const ns = "okstream"
	f := func(c prometheus.Collector) prometheus.Collector {
		reg.MustRegister(c)
		return c
	}
	m := &metrics{
		events: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "events_total",
			Help: "Input records processed (decoded or dead-lettered), by input partition."}, []string{"partition"})).(*prometheus.CounterVec),
		predictions: f(prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "predictions_total",
			Help: "Prediction records written (acknowledged)."})).(prometheus.Counter),
		deadLetters: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "dead_letters_total",
			Help: "Input records sent to the dead-letter topic, by reason."}, []string{"reason"})).(*prometheus.CounterVec),
		labeled: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "model_labeled_events_total",
			Help: "Labelled events a model was scored on before learning from them (this process; events reprocessed after a recovery count again)."}, []string{"model"})).(*prometheus.CounterVec),
		mistakes: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "model_mistakes_total",
			Help: "Classification mistakes (sign(score) != label; score 0 counts; multi-class: the most probable class is not the label's) on labelled events (this process); 0 for regression models."}, []string{"model"})).(*prometheus.CounterVec),
		loss: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "model_loss_total",
			Help: "Sum of the square loss (score - label)^2 of the pre-update scores of labelled events (this process), for regression and classification models alike; rate(loss)/rate(labeled events) is the recent mean squared error. Multi-class models: the Brier score sum_k (p_k - [k = label])^2 of the pre-update distribution."}, []string{"model"})).(*prometheus.CounterVec),
		modelPreds: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "model_predictions_total",
			Help: "Scores a model computed for events, labelled or not (this process)."}, []string{"model"})).(*prometheus.CounterVec),
		updates: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "model_updates_total",
			Help: "Learning steps of a model: labelled events and resolved delayed feedback (this process)."}, []string{"model"})).(*prometheus.CounterVec),
		nonFinite: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "model_nonfinite_scores_total",
			Help: "Non-finite scores (NaN, +-Inf) a model returned for events; each one resets the model (okstream_model_resets_total)."}, []string{"model"})).(*prometheus.CounterVec),
		mistakeRate: f(prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "model_mistake_rate",
			Help: "Progressive mistake rate of a model on a partition over its whole history (restored from checkpoints), 0..1."}, []string{"model", "partition"})).(*prometheus.GaugeVec),
		mse: f(prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "model_mean_squared_error",
			Help: "Progressive mean squared error of a model on a partition over its whole history (multi-class models: the Brier score)."}, []string{"model", "partition"})).(*prometheus.GaugeVec),
		updateSecs: f(prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "learner_update_seconds",
			Help:    "Time of one predict-then-learn step of a model (one step in 16 is timed).",
			Buckets: prometheus.ExponentialBuckets(250e-9, 2, 18)}, []string{"model"})).(*prometheus.HistogramVec),
		batchSecs: f(prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "batch_seconds",
			Help: "Time to process one micro-batch (decode, predict, learn, encode).", Buckets: prometheus.ExponentialBuckets(1e-4, 2, 16)})).(prometheus.Histogram),
		writeSecs: f(prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "batch_write_seconds",
			Help: "Time until a micro-batch's predictions and dead letters are acknowledged (acks=all), retries included.", Buckets: prometheus.ExponentialBuckets(1e-4, 2, 18)})).(prometheus.Histogram),
		ckptBytes: f(prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "checkpoint_bytes",
			Help: "Size of checkpoint payloads.", Buckets: prometheus.ExponentialBuckets(1024, 4, 10)})).(prometheus.Histogram),
		ckptSecs: f(prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "checkpoint_duration_seconds",
			Help: "Time to write a checkpoint (all chunks and the manifest, acknowledged).", Buckets: prometheus.ExponentialBuckets(1e-3, 2, 14)})).(prometheus.Histogram),
		ckptTotal: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "checkpoints_total",
			Help: "Checkpoints attempted, by result (ok, error)."}, []string{"result"})).(*prometheus.CounterVec),
		ckptUnix: f(prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "checkpoint_last_success_timestamp_seconds",
			Help: "Unix time of the partition's last successful checkpoint."}, []string{"partition"})).(*prometheus.GaugeVec),
		restoreSecs: f(prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "restore_duration_seconds",
			Help: "Time to restore a partition's models from its checkpoint.", Buckets: prometheus.ExponentialBuckets(1e-3, 2, 16)})).(prometheus.Histogram),
		restores: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "restores_total",
			Help: "Partition assignments by restore result (checkpoint, none)."}, []string{"result"})).(*prometheus.CounterVec),
		ckptInvalid: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "checkpoint_invalid_total",
			Help: "Checkpoints rejected while restoring a partition (torn, corrupt, forged or over the limits; see checkpoint.Reason), by partition and reason."}, []string{"partition", "reason"})).(*prometheus.CounterVec),
		assigned: f(prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "assigned_partitions",
			Help: "Input partitions this instance owns."})).(prometheus.Gauge),
		rebalances: f(prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "rebalances_total",
			Help: "Consumer-group generations joined."})).(prometheus.Counter),
		writeErrors: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "write_errors_total",
			Help: "Failed writes (retried, or with records refused for good replaced), by topic role (predictions, dead_letters, checkpoints, commit, share: the shared models' sync topic)."}, []string{"role"})).(*prometheus.CounterVec),
		gaps: f(prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "recovery_gaps_total",
			Help: "Times a checkpoint's offset was no longer in the log (deleted by retention): exact recovery was impossible and processing resumed at the earliest offset."})).(prometheus.Counter),
	}
	m.pendingSize = f(prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "feedback_pending",
		Help: "Impressions of a partition awaiting delayed feedback."}, []string{"partition"})).(*prometheus.GaugeVec)
	m.evictions = f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "feedback_evictions_total",
		Help: "Impressions evicted before their feedback arrived, by reason (size, bytes, age)."}, []string{"reason"})).(*prometheus.CounterVec)
	m.feedback = f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "feedback_events_total",
		Help: "Feedback events by result (matched, orphan, disabled, key_mismatch)."}, []string{"result"})).(*prometheus.CounterVec)
	m.dlqDropped = f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "dead_letters_dropped_total",
		Help: "Dead letters the broker refused for good even as reference-only records (no key, no value): dropped and logged, by reason."}, []string{"reason"})).(*prometheus.CounterVec)
	m.fetchErrors = f(prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "fetch_errors_total",
		Help: "Failed fetches of input partitions (retried)."})).(prometheus.Counter)
	m.pendingBytes = f(prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "feedback_pending_bytes",
		Help: "Accounted bytes of a partition's impressions awaiting delayed feedback (see --feedback-buffer-bytes)."}, []string{"partition"})).(*prometheus.GaugeVec)
	m.impressionsRefused = f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "feedback_impressions_refused_total",
		Help: "Impressions scored but not kept for feedback, by reason (duplicate_id: the id is already pending; too_large: above the byte limit alone)."}, []string{"reason"})).(*prometheus.CounterVec)
	m.modelResets = f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "model_resets_total",
		Help: "Models reset to a fresh learner because their state became non-finite, by model and reason (non_finite: at an event; non_finite_at_checkpoint: by the check before a checkpoint)."}, []string{"model", "reason"})).(*prometheus.CounterVec)
	m.modelChanges = f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "model_changes_detected_total",
		Help: "Changes in the stream a model detected and acted on, by model (auto: its loss rose, by ADWIN on its own loss, and it restarted its member bank with fresh members beside the survivors; docs/drift.md). A partition restored from a checkpoint reports again a change at an event it replays."}, []string{"model"})).(*prometheus.CounterVec)
	m.ckptMissing = f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "checkpoint_missing_total",
		Help: "Restores of a partition that found no checkpoint although the consumer group has a committed offset for it (checkpoints lost: a deleted or recreated checkpoint topic); the partition fails unless --allow-fresh-start."}, []string{"partition"})).(*prometheus.CounterVec)
	m.logLoss = f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "model_log_loss_total",
		Help: "Classification models: sum of the log loss -log p(label) of the pre-update scores of labelled events, p the score's probability of +1 (the logistic linear model's own sigma(score), else an online Platt calibration, eval.Platt; process-local); rate(log_loss)/rate(labeled events) is the recent log loss in nats; multi-class models: -log p(label) of the pre-update class distribution (a class the model had not learnt has p = 0, clipped); 0 for regression models."}, []string{"model"})).(*prometheus.CounterVec)
	m.absErr = f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "model_abs_error_total",
		Help: "Sum of the absolute error |score - label| of the pre-update scores of labelled events (this process); rate(abs_error)/rate(labeled events) is the recent MAE."}, []string{"model"})).(*prometheus.CounterVec)
	m.baseLabeled = f(prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "baseline_labeled_events_total",
		Help: "Labelled events the trivial baseline (per partition: the running class prior and the running mean of the labels before each event) was scored on (this process; the baseline restarts with the process)."})).(prometheus.Counter)
	m.baseMistakes = f(prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "baseline_mistakes_total",
		Help: "Mistakes of the running class prior's decision (the majority of the labels so far; a tie counts as a mistake; multi-class: the most frequent class so far)."})).(prometheus.Counter)
	m.baseLogLoss = f(prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "baseline_log_loss_total",
		Help: "Sum of the log loss of the running class prior (n+ + 1)/(n + 2) for labels +-1; multi-class: (n_k + 1)/(n + K) over the K classes seen before the event (0, clipped, for a new class)."})).(prometheus.Counter)
	m.baseLoss = f(prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "baseline_loss_total",
		Help: "Sum of the square loss of the running mean of the labels (0 before the first); beside okstream_model_loss_total. Multi-class streams: the Brier score of the running class prior."})).(prometheus.Counter)
	m.baseAbsErr = f(prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "baseline_abs_error_total",
		Help: "Sum of the absolute error of the running mean of the labels; beside okstream_model_abs_error_total."})).(prometheus.Counter)
	m.featuresInUse = f(prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "features_in_use",
		Help: "Coordinates of the models' input (--dim) the partition's named-feature dictionary uses: a numeric feature takes one, a string feature one per value (up to --max-values-per-name, then name=<other>), a missing indicator one. Near --dim, new names and values are dropped (okstream_features_dropped_total). Restored with the checkpoint; absent for a partition without named events."}, []string{"partition"})).(*prometheus.GaugeVec)
	m.featureNames = f(prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "feature_names",
		Help: "Feature names in the partition's named-feature dictionary (okstream inspect checkpoints lists them)."}, []string{"partition"})).(*prometheus.GaugeVec)
	m.featuresDropped = f(prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "features_dropped_total",
		Help: "Named-feature occurrences that found no coordinate because all --dim are in use (this process): the event is learnt without them. Raise --dim if it grows."})).(prometheus.Counter)
	m.featuresFolded = f(prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "features_folded_total",
		Help: "String feature values encoded as name=<other> because the name has --max-values-per-name values already (this process)."})).(prometheus.Counter)
	m.featuresImputed = f(prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "features_imputed_total",
		Help: "Missing numeric named-feature values (nil, NaN, absent, or a string where a number was seen) replaced by the feature's running mean, --missing impute (this process)."})).(prometheus.Counter)
	for _, r := range []string{"size", "bytes", "age"} {
		m.evictions.WithLabelValues(r)
	}
	for _, r := range []string{"matched", "orphan", "disabled", "key_mismatch"} {
		m.feedback.WithLabelValues(r)
	}
	for _, r := range []string{"duplicate_id", "too_large"} {
		m.impressionsRefused.WithLabelValues(r)
	}
	// Pre-create the dead-letter series so they exist at 0.
	for _, r := range allDeadLetterReasons() {
		m.deadLetters.WithLabelValues(r)
	}
	for _, r := range []string{"ok", "error"} {
		m.ckptTotal.WithLabelValues(r)
	}
	for _, r := range []string{"predictions", "dead_letters", "checkpoints", "commit", "share"} {
		m.writeErrors.WithLabelValues(r)
	}
	return m
}

func partLabel(p int) string { return strconv.Itoa(p) }

// predictionsCount reads the predictions counter (for tests and progress).
func (m *metrics) predictionsCount() float64 {
	var pm dto.Metric
	if err := m.predictions.Write(&pm); err != nil {
		return 0
	}
	return pm.GetCounter().GetValue()
}

// deadLetterCounts reads the dead-letter counters of every known reason
// (for the progress log).
func (m *metrics) deadLetterCounts() map[string]float64 {
	out := map[string]float64{}
	for _, r := range allDeadLetterReasons() {
		var pm dto.Metric
		if err := m.deadLetters.WithLabelValues(r).Write(&pm); err == nil {
			out[r] = pm.GetCounter().GetValue()
		}
	}
	return out
}

// featureProgress is the progress line's "features" group: the
// named-feature occurrences dropped (the --dim cap), the string values
// folded into name=<other> and the missing values imputed since prev (the
// totals at the previous line, updated); nil when none of the three moved.
func (m *metrics) featureProgress(prev *[3]float64) []any {
	read := func(c prometheus.Counter) float64 {
		var pm dto.Metric
		if err := c.Write(&pm); err != nil {
			return 0
		}
		return pm.GetCounter().GetValue()
	}
	now := [3]float64{read(m.featuresDropped), read(m.featuresFolded), read(m.featuresImputed)}
	d := [3]int64{int64(now[0] - prev[0]), int64(now[1] - prev[1]), int64(now[2] - prev[2])}
	*prev = now
	if d == [3]int64{} {
		return nil
	}
	return []any{slog.Int64("dropped", d[0]), slog.Int64("folded", d[1]), slog.Int64("imputed", d[2])}
}

// errorTotals are a model's (or the baseline's) error counters.
type errorTotals struct{ labeled, mistakes, logLoss, sqErr, absErr float64 }

func (a errorTotals) minus(b errorTotals) errorTotals {
	return errorTotals{a.labeled - b.labeled, a.mistakes - b.mistakes, a.logLoss - b.logLoss, a.sqErr - b.sqErr, a.absErr - b.absErr}
}

// errorTotals reads the error counters of every model, then the
// baseline's (for the progress line).
func (m *metrics) errorTotals(models []Model) []errorTotals {
	read := func(c prometheus.Counter) float64 {
		var pm dto.Metric
		if err := c.Write(&pm); err != nil {
			return 0
		}
		return pm.GetCounter().GetValue()
	}
	out := make([]errorTotals, 0, len(models)+1)
	for _, md := range models {
		out = append(out, errorTotals{read(m.labeled.WithLabelValues(md.Name)), read(m.mistakes.WithLabelValues(md.Name)),
			read(m.logLoss.WithLabelValues(md.Name)), read(m.loss.WithLabelValues(md.Name)), read(m.absErr.WithLabelValues(md.Name))})
	}
	return append(out, errorTotals{read(m.baseLabeled), read(m.baseMistakes), read(m.baseLogLoss), read(m.baseLoss), read(m.baseAbsErr)})
}

// allDeadLetterReasons lists every dead-letter reason: the codec's and the
// runtime's.
func allDeadLetterReasons() []string {
	var out []string
	for _, r := range codec.Reasons() {
		out = append(out, string(r))
	}
	return append(out, reasonBadLabel, reasonOrphanFeedback, reasonFeedbackDisabled, reasonPredictionTooLarge, reasonPredictionRefused, reasonFeedbackKeyMismatch,
		reasonNamedFeatures, reasonFeatureKind, features.MissingReason)
}

var (
	stuckDesc = prometheus.NewDesc("okstream_partition_stuck",
		"1 while a stage of the partition's worker (write: output unacknowledged; fetch: fetches failing) has made no progress for longer than --stuck-after; /readyz is then 503.",
		[]string{"partition", "stage"}, nil)
	stallDesc = prometheus.NewDesc("okstream_partition_stall_seconds",
		"Seconds a stage of the partition's worker has been waiting: the current output unit unacknowledged (write), fetches failing (fetch); 0 when it flows.",
		[]string{"partition", "stage"}, nil)
	lagDesc = prometheus.NewDesc("okstream_consumer_lag_records",
		"Records between the partition's high watermark (from the latest fetch, refreshed by a probe at least every 5 s) and the next offset to process (advanced after every micro-batch).",
		[]string{"partition"}, nil)
	watermarkDesc = prometheus.NewDesc("okstream_partition_event_time_watermark_seconds",
		"Event-time watermark of the partition: the lower median of the ts of its last 15 processed events that had one, in Unix seconds.",
		[]string{"partition"}, nil)
	failedDesc = prometheus.NewDesc("okstream_partition_failed",
		"1 while the partition is stopped because none of its checkpoints can be restored, or because it has a committed group offset but no checkpoint (without --allow-fresh-start; see okstream checkpoints reset); /readyz is then 503.",
		[]string{"partition"}, nil)
	ckptAgeDesc = prometheus.NewDesc("okstream_checkpoint_age_seconds",
		"Seconds the partition's processed events have gone without a checkpoint: since its last successful checkpoint (or its restore) while events were processed after it; 0 when the checkpoint is up to date (an idle partition).",
		[]string{"partition"}, nil)
	ckptFailingDesc = prometheus.NewDesc("okstream_checkpoint_failing_seconds",
		"Seconds the partition's checkpoints have been failing (retried with backoff up to 10 s); 0 when the last one succeeded. /readyz is 503 past --checkpoint-failing-after.",
		[]string{"partition"}, nil)
	dlqShareDesc = prometheus.NewDesc("okstream_partition_dead_letter_share",
		"Share (0..1) of the partition's last --dead-letter-window events that were dead-lettered; /readyz is 503 above --dead-letter-ready-share.",
		[]string{"partition"}, nil)
)

// liveCollector exports, at scrape time, what the running workers know:
// the stall clocks (a write that hangs is visible while it hangs), the lag,
// the event-time watermark, the failed flag and the checkpoint age. A
// partition's series exist while this instance owns it.
type liveCollector struct{ p *Pipeline }

func (c liveCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{stuckDesc, stallDesc, lagDesc, watermarkDesc, failedDesc, ckptAgeDesc, ckptFailingDesc, dlqShareDesc} {
		ch <- d
	}
}

// Collect builds the metrics under the pipeline's lock and sends them after
// releasing it: the registry consumes ch in the goroutine that also runs the
// other collectors' callbacks, among them okstream_ready's, which takes the
// same lock, so a send under the lock deadlocks a scrape that exports more
// metrics than ch buffers (64 partitions), and with it every worker
// (TestScrapeManyPartitions).
func (c liveCollector) Collect(ch chan<- prometheus.Metric) {
	var out []prometheus.Metric
	defer func() {
		for _, m := range out {
			ch <- m
		}
	}()
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	now := time.Now()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	for n, w := range c.p.live {
		label := partLabel(n)
		waiting := map[string]time.Duration{}
		for _, s := range w.stalls(now, 0) {
			waiting[s.Stage] = s.For
		}
		for _, stage := range []string{"write", "fetch"} {
			d := waiting[stage]
			stuck := 0.0
			if d > 0 && d >= c.p.cfg.StuckAfter {
				stuck = 1
			}
			gauge(stuckDesc, stuck, label, stage)
			gauge(stallDesc, d.Seconds(), label, stage)
		}
		failed := 0.0
		if w.failure() != "" {
			failed = 1
		}
		gauge(failedDesc, failed, label)
		if lag, ok := w.lag(); ok {
			gauge(lagDesc, float64(lag), label)
		}
		if wm, ok := w.watermark(); ok {
			gauge(watermarkDesc, float64(wm)/1e3, label)
		}
		if w.pos.Load() >= 0 {
			gauge(ckptAgeDesc, w.checkpointAge(now).Seconds(), label)
			failing, _, _ := w.checkpointFailing(now)
			gauge(ckptFailingDesc, failing.Seconds(), label)
			gauge(dlqShareDesc, w.dlw.share(), label)
		}
	}
}
