package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"okstream/consumer"
	"okstream/features"
	"okstream/label"
	"okstream/learner"
)

func init() {
	register(command{name: "run", summary: "run the stream processor: consume events, predict, learn, publish predictions, checkpoint", run: runRun})
}

// defaultRunModel is the model okstream run (and the demo, the README's
// quick start and docker-compose.yml) uses when none is given: the
// self-tuning configuration, with nothing set for a particular stream.
// auto over FOGD members standardises the features online, takes σ from
// the stream (median heuristic) and selects among σ (2^-3..2^3 × that σ)
// and η (0.2, 0.02, 0.002) online by AdaHedge weights;
// docs/results.md "auto-vs-grid" measures it against the best grid point
// in hindsight on every shared dataset. Its cost settles at about twice a
// single FOGD's after 8000 events per partition (successive halving).
// auto without loss= follows the labels (package label): a binary stream
// runs it as it is, a regression stream as auto:base=fogd,loss=square, a
// multi-class stream as multi-class auto (label.ResolveSpec; multinomial
// logistic regression, linear, in a build without it) — the labels of each
// partition's warm-up decide unless --task says.
const defaultRunModel = "champion=auto:base=fogd"

const runSynopsis = `run --brokers HOST:PORT --input TOPIC --dim N [--model [NAME=]SPEC ...] [flags]

Joins the consumer group and, for every event of the input topic (strictly in
offset order per partition), scores it with every model, learns from its label
if it has one, writes one prediction record per event to the output topic, and
checkpoints the models to a compacted topic every --checkpoint-every events or
--checkpoint-interval. Bad events go to the dead-letter topic with a reason.
SIGTERM or Ctrl-C drains: pending predictions are written, every partition
checkpoints, and the instance leaves the group (exit status 1 if a final
checkpoint failed). Start more instances with the same --group to spread
partitions (and their models) across machines.
Without --model it runs ` + "`champion=auto:base=fogd`" + `: FOGD members that standardise
the features online, take σ from the stream and are selected online (nothing
to tune per stream; okstream help learners auto). It learns binary
classification, multi-class classification or regression as the labels say:
labels -1/+1, 0/1, true/false or two strings are binary (+1, 1, true are the
positive class; for strings see --positive), three or more strings
multi-class, other numbers regression (auto with loss=square). Each
partition's labels decide: a real target or a third string at once,
--task-warmup labels all 0/1 (or -1/+1, or at most two strings) binary, the
candidates learning until then; the decision is checkpointed. Give --task
regression when a regression stream's targets may all be 0 or 1 for a
while, and --task multiclass for integer class ids (numbers are never
inferred multi-class). A label that does not fit the task is dead-lettered
(invalid_label), e.g. a third string after a binary decision, or a new class
beyond --max-classes.

Every flag can also be set by an environment variable OKSTREAM_<FLAG> (e.g.
OKSTREAM_BROKERS, OKSTREAM_CHECKPOINT_EVERY; repeated --model values separated
by ';') or in a --config file ("name = value" lines, flag names, '#'
comments). Precedence: flags > environment > config file > defaults. An
OKSTREAM_ variable that names no flag is reported at start (misspelt?).
A model's NAME is optional: --model fogd:sigma=1 is named fogd; two models
of one learner need names. --passthrough accepts every flag of a learning
run: the --model flags are validated, then not run (a warning says so), so
one config file serves both modes and adding --passthrough switches.

Create the topics first (okstream topics create): run creates the missing
output, dead-letter and checkpoint topics, but not the input.
Metrics: /metrics, /healthz and /readyz on --metrics-addr.`

const runExamples = `  # the default model: champion=auto:base=fogd (self-tuning: no σ to choose)
  okstream run --brokers localhost:9092 --input events --dim 8

  # a champion and a challenger
  okstream run --brokers localhost:9092 --input events --dim 8 \
    --model champion=auto:base=fogd --model challenger=auto:base=nogd

  # the same from a file plus the environment
  cat > okstream.conf <<'CONF'
  input = events
  dim = 8
  model = champion=auto:base=fogd
  model = challenger=nogd:budget=100
  checkpoint-every = 50000
  CONF
  OKSTREAM_BROKERS=kafka-1:9092,kafka-2:9092 okstream run --config okstream.conf`

// runFlags are okstream run's flags, kept together so demo can reuse the
// pipeline-building part.
type runFlags struct {
	brokers, group, input, output, checkpoints, deadLetter string
	models                                                 listFlag
	dim                                                    int
	checkpointEvery                                        int
	checkpointInterval                                     time.Duration
	batchSize, fetchMaxBytes, maxEventBytes                int
	deadLetterMaxBytes                                     int
	stuckAfter                                             time.Duration
	readyBrokerTimeout, progressInterval                   time.Duration
	fetchMaxWait                                           time.Duration
	startOffset, onModelChange, memberFile                 string
	delivery                                               string
	inputFormat, outputFormat                              string
	maxValuesPerName                                       int
	missing                                                string
	missingCategory                                        bool
	sessionTimeout, heartbeat, rebalanceTimeout            time.Duration
	checkpointPartitions, chunkBytes                       int
	maxStateBytes                                          int64
	createTopics, passthrough                              bool
	task, positive                                         string
	taskWarmup                                             int
	maxClasses, topK                                       int
	topKSet                                                bool // --top-k was given (0 is then "all")
	feedbackBuffer                                         int
	feedbackMaxAge                                         time.Duration
	feedbackBufferBytes                                    int64
	maxAbsValue                                            float64
	maxIDBytes                                             int
	shutdownTimeout                                        time.Duration
	checkpointFailingAfter, checkpointMaxAge               time.Duration
	allowFreshStart                                        bool
	deadLetterReadyShare                                   float64
	deadLetterWindow                                       int
	share, shareTopic                                      string
	shareEvery, shareLag, shareWindow                      int64
	shareMaxWait                                           time.Duration
	shareSkipIdle                                          bool
	controlSecretFile                                      string
	allowUnsignedControl                                   bool
	metricsAddr, logLevel, logFormat, config               string
	sec                                                    secFlags
}

func (f *runFlags) register(fs *flag.FlagSet) {
	d := consumer.NewConfig()
	fs.StringVar(&f.brokers, "brokers", "", "Kafka bootstrap brokers, comma-separated (required)")
	fs.StringVar(&f.group, "group", d.Group, "consumer group id; instances with the same group share the partitions")
	fs.StringVar(&f.input, "input", "", "input topic of events, msgpack or JSON (see --input-format) (required)")
	fs.StringVar(&f.output, "output", "", "predictions topic (default INPUT.predictions)")
	fs.StringVar(&f.checkpoints, "checkpoint-topic", d.Checkpoints, "compacted checkpoint topic (created if missing)")
	fs.StringVar(&f.deadLetter, "dead-letter", "", "dead-letter topic (default INPUT.dlq)")
	fs.Var(&f.models, "model", "model [NAME=]SPEC, repeatable; the first is the champion; NAME defaults to the learner's name (fogd:sigma=1 is fogd) (okstream help learners; default: "+defaultRunModel+", the self-tuning configuration)")
	fs.IntVar(&f.dim, "dim", 0, "feature dimension of the events (required): the length of x (dense) or the bound of the xi indices (sparse); for named features (\"f\") the models' input dimension, which the feature dictionary fills in order of first appearance (a number or bool: one coordinate; a string: one per value; a missing indicator: one) — later names are dropped and counted (okstream_features_dropped_total)")
	fs.IntVar(&f.maxValuesPerName, "max-values-per-name", 0, fmt.Sprintf("named features: the most coordinates one feature's string values take (one-hot), at most --dim; later values share its name=<other> coordinate (okstream_features_folded_total) (0: %d, or --dim if smaller)", features.DefaultMaxValuesPerName))
	fs.StringVar(&f.missing, "missing", features.MissingImpute.String(), "named features: a missing value (nil/null, NaN, or a known name the record leaves out): impute (the feature's running mean, plus a name=<missing> indicator coordinate) or refuse (the event is dead-lettered as missing_feature)")
	fs.BoolVar(&f.missingCategory, "missing-category", false, "named features: a missing string feature also gets a name=<missing> indicator (by default all its value indicators are 0)")
	fs.StringVar(&f.task, "task", "auto", "what the models learn: binary (labels -1/+1, 0/1, true/false or two strings), multiclass (class names: strings, integers such as 7 named \"7\", bools), regression (numbers), or auto: the models' own task, and for models that follow the labels (auto without loss=, the default model) each partition's labels decide (a bool: binary; a third distinct string: multiclass; a number other than -1, 0, 1: regression; --task-warmup labels all -1/+1, all 0/1 or of at most two strings: binary)")
	fs.IntVar(&f.taskWarmup, "task-warmup", label.DefaultWarmup, "--task auto with models that follow the labels: a partition whose first N labels are all -1/+1 (or all 0/1, or at most two strings) is binary; another number among them makes it regression at once, a third string multiclass")
	fs.IntVar(&f.maxClasses, "max-classes", label.DefaultMaxClasses, fmt.Sprintf("multi-class streams: the most classes a partition's class dictionary takes (at most %d); a label of a new class beyond it is dead-lettered (invalid_label)", learner.MaxClasses))
	f.topK = consumer.DefaultTopK
	fs.Var(setInt{&f.topK, &f.topKSet}, "top-k", "multi-class streams: the `number` of classes each model's prediction record lists with their probabilities (\"pd\"), most probable first; 0: all")
	fs.StringVar(&f.positive, "positive", "", "binary streams with string labels: the positive class (+1); the other string is -1 (default: the first string a partition shows is -1, the second +1)")
	fs.IntVar(&f.checkpointEvery, "checkpoint-every", d.CheckpointEvery, "checkpoint a partition every N events")
	fs.DurationVar(&f.checkpointInterval, "checkpoint-interval", d.CheckpointInterval, "checkpoint a partition with new events at least this often")
	fs.IntVar(&f.batchSize, "batch-size", d.BatchSize, "events per micro-batch (predictions are written per batch)")
	fs.IntVar(&f.fetchMaxBytes, "fetch-max-bytes", d.FetchMaxBytes, "maximum bytes per fetch")
	fs.DurationVar(&f.fetchMaxWait, "fetch-max-wait", d.FetchMaxWait, "how long a fetch waits for new events")
	fs.IntVar(&f.maxEventBytes, "max-event-bytes", d.MaxEventBytes, "larger events are dead-lettered (oversized)")
	fs.IntVar(&f.deadLetterMaxBytes, "dead-letter-max-bytes", d.DeadLetterMaxBytes, "key and value bytes a dead letter copies from its record; larger records are copied truncated, with okstream-truncated headers")
	fs.DurationVar(&f.stuckAfter, "stuck-after", d.StuckAfter, "a partition whose output is unacknowledged or whose fetches fail for this long is reported stuck (/readyz 503, okstream_partition_stuck)")
	fs.DurationVar(&f.readyBrokerTimeout, "ready-broker-timeout", d.ReadyBrokerTimeout, "/readyz answers 503 when no broker has answered for this long (outages); liveness is not affected")
	fs.DurationVar(&f.progressInterval, "progress-interval", d.ProgressInterval, "period of the info-level progress log line (events/s, lag, checkpoint age, dead letters by reason); 0: off")
	fs.StringVar(&f.startOffset, "start-offset", d.StartOffset, "where a partition without a checkpoint starts: earliest or latest")
	fs.StringVar(&f.onModelChange, "on-model-change", d.OnModelChange, "a checkpointed model whose spec changed: fail (refuse to start) or reset (start it fresh)")
	fs.StringVar(&f.inputFormat, "input-format", consumer.FormatMsgpack, "encoding of the input's events: msgpack or json (the same schema as one JSON object per record: {\"v\": 1, \"x\": [0.5, 1.25], \"y\": 1}); a record of the other format is dead-lettered as looks_like_json or looks_like_msgpack, malformed JSON as not_json")
	fs.StringVar(&f.outputFormat, "output-format", consumer.FormatMsgpack, "encoding of the prediction records: msgpack or json (the same keys as a JSON object; a non-finite score is null); the effectively-once scan reads both, so this can change across restarts")
	fs.StringVar(&f.delivery, "delivery", consumer.DeliveryEffectivelyOnce, "output delivery: effectively-once (output partition = input partition; a recovering worker does not publish again what the output has) or at-least-once (output partitioned by key hash; duplicates after a crash)")
	fs.DurationVar(&f.sessionTimeout, "session-timeout", d.SessionTimeout, "consumer-group session timeout: a crashed (SIGKILLed) instance's partitions move to other instances, or to its restarted self, only after this; within the broker's group.min/max.session.timeout.ms (Kafka's defaults 6s and 30m; checked at start)")
	fs.DurationVar(&f.heartbeat, "heartbeat-interval", 0, "consumer-group heartbeat interval; 0: a third of --session-timeout, at most 1s")
	fs.StringVar(&f.memberFile, "member-file", "", "file (this instance's own, on a disk that survives restarts) keeping its consumer-group member id: a restart after a crash evicts the crashed member at once instead of waiting --session-timeout; empty: none")
	fs.DurationVar(&f.rebalanceTimeout, "rebalance-timeout", d.RebalanceTimeout, "consumer-group rebalance timeout")
	fs.IntVar(&f.checkpointPartitions, "checkpoint-partitions", d.CheckpointPartitions, "partitions of the checkpoint topic when okstream creates it")
	fs.IntVar(&f.chunkBytes, "checkpoint-chunk-bytes", 512<<10, "payload bytes per checkpoint record (larger states are chunked)")
	fs.Int64Var(&f.maxStateBytes, "checkpoint-max-state-bytes", d.CheckpointMaxStateBytes, "bound on one partition's checkpoint payload: larger states are not checkpointed, and a checkpoint record declaring more is rejected as damaged or forged (set the same value on every instance)")
	fs.IntVar(&f.feedbackBuffer, "feedback-buffer", 0, "delayed feedback: impressions (unlabelled events with an id) kept per partition until a feedback event (schema v2, ref = the id) brings the label; 0: off")
	fs.DurationVar(&f.feedbackMaxAge, "feedback-max-age", time.Hour, "delayed feedback: evict impressions older than this in event time (the events' ts)")
	fs.Int64Var(&f.feedbackBufferBytes, "feedback-buffer-bytes", 64<<20, "delayed feedback: bound on the pending impressions' accounted bytes per partition (each one's heap plus its checkpoint encoding); the oldest are evicted above it")
	fs.Float64Var(&f.maxAbsValue, "max-abs-value", consumer.DefaultMaxAbsValue, "events with a feature or label of larger magnitude are dead-lettered (value_out_of_range); 0: off")
	fs.IntVar(&f.maxIDBytes, "max-id-bytes", consumer.DefaultMaxIDBytes, "events whose id, key or ref is longer are dead-lettered (id_too_long); 0: off")
	fs.BoolVar(&f.passthrough, "passthrough", false, "run without models (predictions carry no scores): measures the Kafka pipeline's own throughput; --model flags are validated, then not run (a log line says so), so a deployment switches to pass-through by adding this one flag")
	fs.BoolVar(&f.createTopics, "create-topics", true, "create missing output and dead-letter topics with the input's partition count")
	fs.StringVar(&f.share, "share", "", "models shared across partitions, comma-separated NAMEs: each partition's copy learns from every partition's events through deltas on --share-topic, with exact recovery (docs/sharing.md; learners: "+strings.Join(consumer.Sharers(), ", ")+")")
	fs.StringVar(&f.shareTopic, "share-topic", "", "compacted sync topic of the shared models (default CHECKPOINT-TOPIC.share; created if missing)")
	fs.Int64Var(&f.shareEvery, "share-every", consumer.DefaultShareEvery, "shared models: input records per epoch of a partition (a sync point after each)")
	fs.Int64Var(&f.shareLag, "share-lag", consumer.DefaultShareLag, "shared models: a partition merges the others' deltas this many epochs behind its own (≥ 1)")
	fs.DurationVar(&f.shareMaxWait, "share-max-wait", consumer.DefaultShareMaxWait, "shared models: how long a sync point waits for a partition's delta before it proceeds without it (recorded, so that recovery stays exact)")
	fs.BoolVar(&f.shareSkipIdle, "share-skip-idle", false, "shared models: do not wait at all for a partition of this instance whose last fetch found no new events (for replays and partitions that go quiet for long; recorded like an expired wait)")
	fs.Int64Var(&f.shareWindow, "share-window", 0, "shared models: slots per partition of the sync topic's keys (0: 2·(checkpoint-every + batch-size) records in epochs + 2·lag + 2)")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", d.ShutdownTimeout, "bound on the final flush and checkpoint at shutdown (a failed final checkpoint makes run exit 1)")
	fs.DurationVar(&f.checkpointFailingAfter, "checkpoint-failing-after", 0, "/readyz answers 503 when a partition's checkpoints have been failing for this long (they are retried with backoff, 100ms doubling to 10s); 0: --checkpoint-interval, at least 10s; negative: off")
	fs.DurationVar(&f.checkpointMaxAge, "checkpoint-max-age", 0, "/readyz answers 503 when a partition's processed events have gone this long without a checkpoint (okstream_checkpoint_age_seconds); 0: 3 × --checkpoint-interval, at least 30s; negative: off")
	fs.BoolVar(&f.allowFreshStart, "allow-fresh-start", false, "let a partition that has a committed group offset but no checkpoint (a lost checkpoint topic) start fresh models at --start-offset; without it such a partition fails (okstream_partition_failed, /readyz 503) and the others run")
	fs.Float64Var(&f.deadLetterReadyShare, "dead-letter-ready-share", consumer.DefaultDeadLetterReadyShare, "/readyz answers 503 when a partition dead-letters more than this share of its last --dead-letter-window events (a wrong --dim, another schema); 0: off")
	fs.IntVar(&f.deadLetterWindow, "dead-letter-window", consumer.DefaultDeadLetterWindow, "events per partition over which --dead-letter-ready-share is measured")
	fs.StringVar(&f.controlSecretFile, "control-secret-file", "", "file holding the control secret (at least 32 bytes, one line; the same on every instance of the group): the sync topic's records and the effectively-once output headers are signed with HMAC-SHA-256 under it, and records without a valid signature are ignored; further lines are earlier secrets still accepted (a rotation). Make one with: head -c 32 /dev/urandom | base64")
	fs.BoolVar(&f.allowUnsignedControl, "allow-unsigned-control", false, "allow --share without --control-secret-file (anyone who can write to the sync topic can then steer the shared models)")
	fs.StringVar(&f.metricsAddr, "metrics-addr", defaultMetricsAddr, "address of the /metrics, /healthz and /readyz server, which has no authentication: loopback only by default; :9090 listens on every interface (empty: off)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&f.config, "config", "", "config file of name = value lines (flag names)")
	f.sec.register(fs)
}

// environ is the process environment (a variable for tests).
var environ = os.Environ

// defaultMetricsAddr is loopback only: the metrics and health endpoints
// have no authentication, so exposing them is the operator's choice
// (--metrics-addr :9090, as the Dockerfile and docker-compose.yml do).
const defaultMetricsAddr = "127.0.0.1:9090"

// offIfZero maps a limit flag's "0: off" to the Config's "negative: off"
// (where 0 takes the default).
func offIfZero(v float64) float64 {
	if v == 0 {
		return -1
	}
	return v
}

func newLogger(level, format string, w io.Writer) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", format)
}

// config turns the flags into a pipeline configuration (validated by
// consumer.New).
func (f *runFlags) pipelineConfig(log *slog.Logger) (consumer.Config, error) {
	cfg := consumer.Config{
		Group: f.group, Input: f.input, Output: f.output, Checkpoints: f.checkpoints, DeadLetter: f.deadLetter,
		Dim: f.dim, CheckpointEvery: f.checkpointEvery, CheckpointInterval: f.checkpointInterval,
		BatchSize: f.batchSize, FetchMaxBytes: f.fetchMaxBytes, FetchMaxWait: f.fetchMaxWait, MaxEventBytes: f.maxEventBytes,
		DeadLetterMaxBytes: f.deadLetterMaxBytes, StuckAfter: f.stuckAfter,
		ReadyBrokerTimeout: f.readyBrokerTimeout, ProgressInterval: time.Duration(offIfZero(float64(f.progressInterval))),
		StartOffset: f.startOffset, OnModelChange: f.onModelChange, Delivery: f.delivery,
		InputFormat: f.inputFormat, OutputFormat: f.outputFormat,
		MaxValuesPerName: f.maxValuesPerName, Missing: f.missing, MissingCategory: f.missingCategory,
		SessionTimeout: f.sessionTimeout, HeartbeatInterval: f.heartbeat, RebalanceTimeout: f.rebalanceTimeout, MemberFile: f.memberFile,
		CheckpointPartitions: f.checkpointPartitions, CheckpointChunkBytes: f.chunkBytes, CheckpointMaxStateBytes: f.maxStateBytes, CreateTopics: f.createTopics, Passthrough: f.passthrough,
		FeedbackBuffer: f.feedbackBuffer, FeedbackMaxAge: f.feedbackMaxAge, FeedbackBufferBytes: f.feedbackBufferBytes,
		MaxAbsValue: offIfZero(f.maxAbsValue), MaxIDBytes: int(offIfZero(float64(f.maxIDBytes))),
		ShutdownTimeout: f.shutdownTimeout, Logger: log, Task: f.task, Positive: f.positive, TaskWarmup: f.taskWarmup,
		CheckpointFailingAfter: f.checkpointFailingAfter, CheckpointMaxAge: f.checkpointMaxAge, AllowFreshStart: f.allowFreshStart,
		DeadLetterReadyShare: offIfZero(f.deadLetterReadyShare), DeadLetterWindow: f.deadLetterWindow,
		ShareTopic: f.shareTopic, ShareEvery: f.shareEvery, ShareLag: f.shareLag, ShareMaxWait: f.shareMaxWait, ShareSkipIdle: f.shareSkipIdle, ShareWindow: f.shareWindow,
	}
	for _, s := range strings.Split(f.share, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.Share = append(cfg.Share, s)
		}
	}
	if err := f.classOptions(&cfg); err != nil {
		return cfg, err
	}
	for _, b := range strings.Split(f.brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			cfg.Brokers = append(cfg.Brokers, b)
		}
	}
	models := f.models
	if len(models) == 0 && !f.passthrough {
		models = listFlag{defaultRunModel}
	}
	for _, m := range models {
		pm, err := consumer.ParseModel(m)
		if err != nil {
			return cfg, fmt.Errorf("--model %q: %w", m, err)
		}
		cfg.Models = append(cfg.Models, pm)
	}
	return cfg, nil
}

// setInt is an int flag that records that it was set.
type setInt struct {
	v   *int
	set *bool
}

func (s setInt) String() string {
	if s.v == nil {
		return "0"
	}
	return strconv.Itoa(*s.v)
}

func (s setInt) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return errors.New("not an integer")
	}
	*s.v, *s.set = n, true
	return nil
}

// classOptions checks the multi-class flags against the rest: multi-class
// models take no delayed feedback and cannot be shared (refused at start,
// rather than dead-lettering every label), and --max-classes and --top-k
// are in range.
func (f *runFlags) classOptions(cfg *consumer.Config) error {
	if f.maxClasses < 0 || f.maxClasses > learner.MaxClasses {
		return fmt.Errorf("--max-classes %d: use 1 to %d (0 takes the default, %d)", f.maxClasses, learner.MaxClasses, label.DefaultMaxClasses)
	}
	if f.topK < 0 {
		return fmt.Errorf("--top-k %d: use a number of classes, or 0 for all", f.topK)
	}
	if t, err := label.ParseTask(f.task); err == nil && t == label.MultiClass {
		if f.feedbackBuffer > 0 {
			return errors.New("--task multiclass with --feedback-buffer: multi-class models do not take delayed feedback (an outcome record carries one score per model, not a class distribution); run the multi-class stream without --feedback-buffer")
		}
		if len(cfg.Share) > 0 {
			return errors.New("--task multiclass with --share: multi-class models cannot be shared across partitions; drop --share")
		}
		if f.positive != "" {
			return fmt.Errorf("--positive %q names the positive class of a binary stream, but the task is multiclass: drop --positive", f.positive)
		}
	}
	if !f.topKSet && f.topK == 0 {
		f.topK = consumer.DefaultTopK // a runFlags not built by register
	}
	return setClassOptions(cfg, f.maxClasses, configTopK(f.topK))
}

// configTopK is --top-k as the pipeline configuration takes it: 0 (all) is
// negative there, where 0 takes the default.
func configTopK(k int) int {
	if k == 0 {
		return -1
	}
	return k
}

// setClassOptions passes --max-classes and --top-k (0 for either: the
// default; a negative top k: all) to the pipeline.
func setClassOptions(cfg *consumer.Config, maxClasses, topK int) error {
	cfg.MaxClasses, cfg.TopK = maxClasses, topK
	return nil
}

func runRun(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runRunContext(ctx, args, stdout, stderr, os.Getenv)
}

// runRunContext is okstream run with the stop signal as a context and the
// environment as a function (for tests).
func runRunContext(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlagSet("run", runSynopsis, runExamples, stderr)
	var f runFlags
	f.register(fs)
	var sv runServeFlags // --serve (serve.go)
	sv.register(fs)
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "okstream run: "+format+"\n", a...)
		return 2
	}
	if err := applyLayers(fs, f.config, getenv); err != nil {
		return fail("%v", err)
	}
	log, err := newLogger(f.logLevel, f.logFormat, stderr)
	if err != nil {
		return fail("%v", err)
	}
	for _, w := range unknownEnv(fs, environ(), f.sec.o.SASLPasswordEnv) {
		log.Warn(w)
	}
	cfg, err := f.pipelineConfig(log)
	if err != nil {
		return fail("%v", err)
	}
	if err := f.applyControl(&cfg); err != nil {
		return fail("%v", err)
	}
	sec, err := f.sec.build(getenv, func(m string) { log.Warn(m) })
	if err != nil {
		return fail("%v", err)
	}
	cfg.TLS, cfg.SASL = sec.TLS, sec.SASL
	log.Info("kafka connections", "brokers", strings.Join(cfg.Brokers, ","), "security", sec.String())
	startServing, err := sv.attach(&cfg, log)
	if err != nil {
		return fail("%v", err)
	}
	p, err := consumer.New(cfg)
	if err != nil {
		return fail("%v\n(see okstream run --help)", err)
	}
	startServing(ctx)
	if f.metricsAddr != "" {
		ln, err := net.Listen("tcp", f.metricsAddr)
		if err != nil {
			return fail("--metrics-addr %s: %v (choose another address, or --metrics-addr '' to disable)", f.metricsAddr, err)
		}
		srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		log.Info("metrics", "addr", ln.Addr().String())
	}
	if err := p.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "okstream run: %v\n", err)
		return 1
	}
	return 0
}
