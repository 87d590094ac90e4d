package consumer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go/sasl"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/features"
	"okstream/label"
	"okstream/learner"
)

// Model is one configured model: a name (used in prediction records,
// metrics and checkpoints) and a learner spec.
type Model struct {
	Name string
	Spec string
}

// ParseModel reads "name=spec" or a bare spec (named after its learner),
// e.g. "champion=fogd:sigma=2" or "fogd:sigma=2".
func ParseModel(s string) (Model, error) {
	s = strings.TrimSpace(s)
	eq := strings.Index(s, "=")
	colon := strings.Index(s, ":")
	var m Model
	if eq > 0 && (colon < 0 || eq < colon) {
		m = Model{Name: strings.TrimSpace(s[:eq]), Spec: strings.TrimSpace(s[eq+1:])}
	} else {
		name, _, err := learner.ParseSpec(s)
		if err != nil {
			return Model{}, err
		}
		m = Model{Name: name, Spec: s}
	}
	if m.Name == "" || m.Spec == "" {
		return Model{}, fmt.Errorf("model %q: use NAME=SPEC, e.g. champion=fogd:sigma=2", s)
	}
	return m, nil
}

// Config configures a Pipeline. Zero values take the documented defaults.
type Config struct {
	Brokers []string
	// TLS, when not nil, encrypts every broker connection (the client, the
	// prediction, dead-letter and checkpoint writers, the consumer group's
	// coordinator connections) with this configuration; nil: plaintext.
	TLS *tls.Config
	// SASL, when not nil, authenticates every broker connection with this
	// mechanism (PLAIN, SCRAM-SHA-256/512: see internal/kafkasec, which
	// builds both fields from the command line); nil: no authentication.
	SASL sasl.Mechanism
	// Group is the consumer group id (default "okstream").
	Group string
	// Input is the topic of events.
	Input string
	// Output is the predictions topic (default Input+".predictions").
	Output string
	// Checkpoints is the compacted checkpoint topic (default
	// "okstream.checkpoints").
	Checkpoints string
	// DeadLetter is the dead-letter topic (default Input+".dlq").
	DeadLetter string
	// Models are scored on every event, in this order.
	Models []Model
	// Task is what the models learn: "binary" (or "classification"),
	// "regression", or "" / "auto": the models' own task, and for models
	// that can learn either (auto without loss=, the default model) the
	// task the labels of each partition's warm-up decide (package label:
	// a bool or a string ⇒ binary, a number other than −1, 0, 1 ⇒
	// regression, TaskWarmup labels all −1/+1 or all 0/1 ⇒ binary),
	// checkpointed with the partition.
	Task string
	// Positive is the positive class (+1) of string labels on a binary
	// stream; "" takes the second distinct string a partition shows
	// (package label).
	Positive string
	// TaskWarmup is the number of labels −1/+1 (or 0/1) after which an
	// undecided partition is binary (label.Map.Warmup); 0 takes
	// label.DefaultWarmup.
	TaskWarmup int
	// MaxClasses caps a multi-class partition's class dictionary
	// (label.Map.MaxClasses): a label of a new class beyond it is
	// dead-lettered (invalid_label). 0 takes label.DefaultMaxClasses; at
	// most learner.MaxClasses.
	MaxClasses int
	// TopK is the number of classes a multi-class model's prediction
	// record lists with their probabilities (codec.ModelScore.Dist); 0
	// takes DefaultTopK, negative lists every class.
	TopK int
	// Passthrough runs the pipeline with no models at all (prediction
	// records carry no scores, no label is checked): for measuring the
	// infrastructure's own throughput, or for switching a deployment to
	// pass-through by adding one setting. Models, if given, are validated
	// as in a learning run (a configuration one mode refuses, the other
	// refuses too) and then not run: New drops them and logs that it did.
	Passthrough bool
	// Dim is the feature dimension: events with another dimension are
	// dead-lettered. For named-feature events ("f") it is the encoder's
	// coordinate cap (features.Config.Dim): names and string values beyond
	// it are dropped and counted (okstream_features_dropped_total).
	Dim int
	// MaxValuesPerName caps the indicator coordinates of one named
	// feature's string values (features.Config.MaxValuesPerName); later
	// values share its "name=<other>" coordinate. 0 takes
	// features.DefaultMaxValuesPerName (or Dim if smaller).
	MaxValuesPerName int
	// Missing is the policy for a missing named feature (nil, NaN, or a
	// known name the record leaves out): "impute" (the default: the
	// feature's running mean and a missing indicator) or "refuse"
	// (dead-lettered as missing_feature). See package features.
	Missing string
	// MissingCategory gives a string-valued feature a "name=<missing>"
	// indicator too (features.Config.MissingCategory).
	MissingCategory bool

	// FeedbackBuffer enables delayed feedback: up to this many impressions
	// (unlabelled events with an id) per partition wait for a feedback event
	// (codec v2, ref = the impression's id) carrying their label. 0 (the
	// default) disables it; feedback events are then dead-lettered.
	FeedbackBuffer int
	// FeedbackMaxAge evicts impressions older than this in event time (the
	// events' ts; never the wall clock, so recovery stays exact), measured
	// against the partition's event-time watermark: the lower median of the
	// last 15 events' ts, which one outlier ts cannot move. 0: no age limit.
	// Default 1 h when FeedbackBuffer > 0.
	FeedbackMaxAge time.Duration
	// FeedbackBufferBytes bounds the pending impressions of a partition by
	// accounted bytes beside their number: each counts its heap (its entry,
	// id, key, features, scores and update counts, rounded up to the
	// allocator's size classes, and its slot in the id index) plus its
	// encoding in a checkpoint, so that the buffer and a checkpoint of it
	// together stay within the bound. The oldest are evicted above it.
	// Default 64 MiB when FeedbackBuffer > 0; negative is an error.
	FeedbackBufferBytes int64

	// MaxAbsValue dead-letters events with a feature value or label of
	// larger magnitude (reason value_out_of_range), feedback labels
	// included. 0 means the default, DefaultMaxAbsValue; negative turns the
	// check off. See DefaultMaxAbsValue for why such values are refused.
	MaxAbsValue float64
	// MaxIDBytes dead-letters events whose id, key or ref is longer (reason
	// id_too_long). 0 means the default, DefaultMaxIDBytes; negative turns
	// the check off.
	MaxIDBytes int

	// CheckpointEvery checkpoints a partition after this many events
	// (default 10,000).
	CheckpointEvery int
	// CheckpointInterval checkpoints a partition at least this often while
	// it has new events (default 30 s).
	CheckpointInterval time.Duration
	// BatchSize is the number of events per micro-batch (default 1000).
	BatchSize int
	// FetchMaxBytes bounds one fetch (default 4 MiB). After a restore the
	// first fetch asks for 64 KiB and each next one for twice as much, up
	// to this bound (see fetchLoop).
	FetchMaxBytes int
	// FetchMaxWait is how long a fetch waits for new events (default 250 ms).
	FetchMaxWait time.Duration
	// MaxEventBytes dead-letters larger events (default 1 MiB).
	MaxEventBytes int
	// DeadLetterMaxBytes bounds the key and value bytes a dead letter copies
	// from its record (default 512 KiB). A record larger than that is
	// dead-lettered with a prefix of its value (and its key cut to half the
	// limit when the key alone is larger) and the headers
	// okstream-truncated, okstream-original-key-bytes and
	// okstream-original-value-bytes; okstream-source always names the
	// record. At start the limit is lowered, with a warning, to what the
	// writer (1,000,000 bytes per record) and the dead-letter topic's
	// max.message.bytes accept, less room for the headers.
	DeadLetterMaxBytes int
	// StuckAfter marks a partition stuck when its output has been waiting
	// for an acknowledgement, or its fetches have been failing, for longer
	// than this (default 1 min): /readyz then answers 503 naming the
	// partition and okstream_partition_stuck is 1. Transient errors are
	// retried with backoff for as long as they last; being stuck is only
	// reported, nothing is skipped.
	StuckAfter time.Duration
	// ReadyBrokerTimeout is how long the instance stays ready without a
	// successful broker round trip (a fetch, a write, a checkpoint, or the
	// probe that refreshes the high watermarks every third of this, at most
	// every 5 s): past it /readyz answers 503 "no broker reachable" and
	// okstream_ready is 0 (default 15 s). Liveness is not affected.
	ReadyBrokerTimeout time.Duration
	// LivenessTimeout is how long the process may go without a sign of life
	// before /healthz answers 503: the monitor loop (which ticks every
	// second) not ticking, or one micro-batch's compute (decode, predict,
	// learn; writes excluded) running, for longer than this (default 2 min).
	// Waiting for a broker is never a liveness failure.
	LivenessTimeout time.Duration
	// ProgressInterval is the period of the info-level progress log line
	// (events/s, lag, checkpoint age, dead letters by reason); 0 takes the
	// default 30 s, negative turns it off.
	ProgressInterval time.Duration
	// FailedRetry is how often a failed partition (no checkpoint of it can
	// be restored) tries its restore again, so that it starts by itself
	// once an operator has reset its checkpoint (default 30 s).
	FailedRetry time.Duration
	// OnModels, when set, is called with a copy of a partition's
	// checkpoint payload (NewScorer builds a predict-only copy of its
	// models) and the input offset it reflects each time the partition
	// checkpoints and once when the partition starts (restored or fresh),
	// and with a nil payload when this instance stops processing the
	// partition (revoked, failed, shut down). It serves the live models in
	// the same process (okstream run --serve). It is called on the
	// partition's worker goroutine, never per event: it must return at
	// once (hand the payload to another goroutine); the payload is the
	// callee's.
	OnModels func(partition int, next int64, payload []byte)
	// afterBatch, when set (tests), is called by a worker after each
	// micro-batch has been processed and its position published.
	afterBatch func(partition int, next int64)
	// beforeDecision, when set (tests), is called before a decision record
	// of shared models is written, with the publisher's context.
	beforeDecision func(ctx context.Context, partition int, epoch int64)
	// beforeDelta, when set (tests), is called at the start of a sync
	// point, before its delta is computed and handed to this process's
	// other partitions.
	beforeDelta func(ctx context.Context, partition int, epoch int64)
	// beforePublish, when set (tests), is called by a partition's delta
	// publisher before it writes a batch to the sync topic, with the
	// publisher's context.
	beforePublish func(ctx context.Context, partition int)
	// beforeWrite, when set (tests), is called by a partition's writer
	// before each attempt to write a micro-batch's output, with the
	// writer's context.
	beforeWrite func(ctx context.Context, partition int)

	// StartOffset is where a partition without a checkpoint starts:
	// "earliest" (default, learn from the whole retained history) or "latest".
	StartOffset string
	// OnModelChange says what happens when a checkpointed model's spec
	// differs from the configured one: "fail" (default: the partition does
	// not start, nothing is silently discarded) or "reset" (the model starts
	// fresh, others keep their state).
	OnModelChange string

	// SessionTimeout is the consumer-group session timeout (default 10 s):
	// how long the group coordinator waits for a member's heartbeat before
	// it evicts the member. It bounds the recovery delay after a crash
	// (SIGKILL, a lost machine): the crashed member's partitions are
	// reassigned only when its session has expired, whereas a graceful stop
	// leaves the group at once (see session.go and the README's Recovery).
	// It must lie within the broker's group.min.session.timeout.ms and
	// group.max.session.timeout.ms (Kafka's defaults: 6 s and 30 min); Run
	// checks that at start when the broker reports them.
	SessionTimeout time.Duration
	// HeartbeatInterval is the period of the member's heartbeats (default
	// a third of SessionTimeout, at most 1 s); it must be shorter than
	// SessionTimeout. Membership changes are noticed within one interval.
	HeartbeatInterval time.Duration
	// MemberFile, when set, is a file (the instance's own, on a disk that
	// survives its restarts) where the instance keeps its consumer-group
	// member id: a restart after a crash evicts the crashed member at once
	// instead of waiting SessionTimeout for it to expire (see member.go).
	// Default "": no file, a restart after a crash waits.
	MemberFile string
	// RebalanceTimeout bounds how long the coordinator waits for the members
	// to rejoin during a rebalance (default 30 s); workers drain and
	// checkpoint within it.
	RebalanceTimeout time.Duration

	// CheckpointPartitions is the partition count of a checkpoint topic that
	// okstream creates (default 8).
	CheckpointPartitions int
	// CheckpointChunkBytes is the payload size per checkpoint record
	// (default 512 KiB; states larger than that are chunked).
	CheckpointChunkBytes int
	// CheckpointMaxStateBytes bounds one partition's checkpoint payload
	// (default checkpoint.DefaultMaxStateBytes, 1 GiB): a larger state is
	// not checkpointed (the checkpoint fails with an error that says so),
	// and a checkpoint record declaring more is rejected without being
	// allocated. See package checkpoint for what happens to a rejected one.
	CheckpointMaxStateBytes int64
	// CreateTopics creates missing output and dead-letter topics with the
	// input's partition count (default true via NewConfig; false leaves them
	// to the operator).
	CreateTopics bool
	// Delivery is the output's delivery mode: "effectively-once" (default:
	// the output of input partition p goes to partition p of the output
	// and dead-letter topics, which need the input's partition count, and a
	// recovering worker does not publish again what the output already
	// has; see dedup.go and the README's Guarantees) or "at-least-once"
	// (output partitioned by key hash; the output since the last checkpoint
	// is published again after a crash, byte-identical).
	Delivery string
	// InputFormat is the encoding of the input topic's event records:
	// FormatMsgpack (default) or FormatJSON (the same schema as one JSON
	// object per record; codec.Decoder.DecodeEventJSON). A record of the
	// other format is dead-lettered with a hint (looks_like_json on a
	// msgpack consumer, looks_like_msgpack on a JSON one); the dead letter
	// keeps the record's bytes as they were.
	InputFormat string
	// OutputFormat is the encoding of the prediction records:
	// FormatMsgpack (default, codec.AppendPrediction) or FormatJSON
	// (codec.AppendPredictionJSON: the same keys as a JSON object). The
	// models' outputs are the same either way. Effectively-once delivery
	// reads the output's tail in both formats (codec.DecodePredictionAny),
	// so a restart with another OutputFormat stays effectively-once.
	OutputFormat string
	// Share names the models shared across partitions (see docs/sharing.md
	// and package share): each partition's copy of such a model learns from
	// every partition's events through deltas exchanged on ShareTopic at
	// deterministic points of its own offset order. Their learners must
	// implement learner.Sharer. Empty: every model is per partition.
	Share []string
	// ShareTopic is the compacted sync topic (default Checkpoints+".share").
	ShareTopic string
	// ShareEvery is S, the input records per epoch of a partition (default
	// DefaultShareEvery).
	ShareEvery int64
	// ShareLag is L ≥ 1, how many epochs behind its own a partition merges
	// the others' deltas (0 takes the default, DefaultShareLag).
	ShareLag int64
	// ShareMaxWait bounds how long a boundary waits for a partition's delta
	// before it proceeds without it and records that decision (default
	// DefaultShareMaxWait).
	ShareMaxWait time.Duration
	// ShareSkipIdle: a boundary does not wait for a partition whose last
	// fetch waited FetchMaxWait and found no new events, on this instance
	// or another (its worker writes an idle record to the sync topic; see
	// worker.publishIdle); it proceeds at once, recorded as after an
	// expired wait. For replays
	// and topics whose partitions go quiet for long; off, a quiet partition
	// costs the others one ShareMaxWait and a live stream with short lulls
	// keeps the strict schedule (see tailer.setIdle).
	ShareSkipIdle bool
	// ShareWindow is W, the slots per partition of the sync topic's keys
	// (default: 2·(CheckpointEvery + BatchSize) records in epochs +
	// 2·ShareLag + 2, see share.Window).
	ShareWindow int64

	// ShutdownTimeout bounds the final flush and checkpoint (default 30 s).
	ShutdownTimeout time.Duration

	// CheckpointFailingAfter turns /readyz 503 (okstream_ready 0) for a
	// partition whose checkpoints have been failing for longer than this
	// (default CheckpointInterval, at least 10 s; negative: off). Failed checkpoints are
	// retried with a backoff per partition, 100 ms doubling to 10 s, reset
	// by a success; okstream_checkpoint_failing_seconds says for how long.
	CheckpointFailingAfter time.Duration
	// CheckpointMaxAge turns /readyz 503 for a partition whose
	// okstream_checkpoint_age_seconds exceeds it: processed events have
	// gone that long without a checkpoint (default 3 × CheckpointInterval,
	// the OkstreamCheckpointStale alert's threshold, at least 30 s, so that
	// a short interval does not make readiness flap; negative: off).
	CheckpointMaxAge time.Duration
	// AllowFreshStart lets a partition that has a committed group offset
	// but no checkpoint start with fresh models at StartOffset. By default
	// such a partition refuses (it fails alone, like one whose checkpoints
	// are all damaged, okstream_checkpoint_missing_total counts it): the
	// checkpoints were lost (a deleted or renamed checkpoint topic), and
	// relearning from StartOffset would silently train the models on
	// whatever part of the history retention has kept.
	AllowFreshStart bool
	// DeadLetterReadyShare turns /readyz 503 for a partition that
	// dead-letters more than this share of its last DeadLetterWindow
	// events (default 0.5; negative: off; at most 1, which never fires): a
	// wrong --dim or a producer writing another schema makes an instance
	// that drops everything, which must not look healthy. Evaluated once a
	// tenth of the window has been processed since the partition started;
	// it recovers as soon as the share drops.
	DeadLetterReadyShare float64
	// DeadLetterWindow is the number of a partition's last events
	// DeadLetterReadyShare is measured over (default 1000).
	DeadLetterWindow int
	// ControlSecret, when set (at least 32 bytes, the same on every
	// instance of the group), authenticates the control records: the sync
	// topic's deltas and decisions, and the effectively-once headers of
	// output records and dead letters, carry an HMAC-SHA-256 under it
	// (header okstream-mac), and a record read without a valid one has no
	// effect (counted in okstream_control_records_rejected_total). Empty:
	// records are not signed and are accepted unsigned (still validated).
	ControlSecret []byte
	// ControlSecretPrevious are earlier secrets still accepted when
	// verifying (a rotation: sign with the new one, accept the old ones
	// until the records signed with them have aged out).
	ControlSecretPrevious [][]byte
	// AllowUnsignedControl acknowledges shared models without a
	// ControlSecret: anyone who can write to the sync topic can then steer
	// every instance's shared models (records are still validated). The
	// command line refuses --share without a secret unless it is set; the
	// library only logs a warning.
	AllowUnsignedControl bool

	Logger *slog.Logger
	// Registerer receives the metrics (default: a new registry, see
	// Pipeline.Registry).
	Registerer prometheus.Registerer
}

// DefaultMaxAbsValue is the default of Config.MaxAbsValue: 1e9. It is far
// above any real feature or label (standardised features are O(1), counts
// and amounts rarely reach 1e9; a raw epoch timestamp in ms, 1.7e12, does
// not pass and must be scaled), and far below where float64 arithmetic in
// the kernels overflows: with |x| ≤ 1e9 a squared distance over 2^20
// features is at most 4e24, a cubic polynomial kernel of that 1e73, a
// squared loss 1e18 — all far from MaxFloat64 ≈ 1.8e308, whereas one
// feature of 1e308 makes ‖x‖² = +Inf and the model's state NaN.
const DefaultMaxAbsValue = 1e9

// DefaultMaxIDBytes is the default of Config.MaxIDBytes: 1 KiB, far above a
// UUID (36 bytes) or any practical entity key, and small enough that ids
// cannot dominate the feedback buffer or the prediction records.
const DefaultMaxIDBytes = 1024

// Defaults of Config.DeadLetterReadyShare and Config.DeadLetterWindow.
const (
	DefaultDeadLetterReadyShare = 0.5
	DefaultDeadLetterWindow     = 1000
)

// NewConfig returns a Config with the defaults filled in.
func NewConfig() Config {
	c := Config{CreateTopics: true}
	c.defaults()
	return c
}

// featuresConfig is the named-feature encoder's configuration, or an error
// that says which setting to fix.
func (c *Config) featuresConfig() (features.Config, error) {
	m, err := features.ParseMissing(c.Missing)
	if err != nil {
		return features.Config{}, fmt.Errorf("--missing %q: use impute (a missing named feature takes its running mean and a missing indicator) or refuse (the event is dead-lettered as %s)", c.Missing, features.MissingReason)
	}
	fc := features.Config{Dim: c.Dim, MaxValuesPerName: c.MaxValuesPerName, Missing: m, MissingCategory: c.MissingCategory}
	if c.Dim <= 0 {
		return fc, nil // reported as the missing --dim
	}
	if c.Dim > features.MaxDim {
		return fc, nil // named events are dead-lettered (the worker says why)
	}
	if c.MaxValuesPerName < 0 || c.MaxValuesPerName > c.Dim {
		return fc, fmt.Errorf("--max-values-per-name %d: use 1 to --dim (%d), the coordinates one named feature's string values may take (0 takes the default, %d or --dim if smaller)", c.MaxValuesPerName, c.Dim, features.DefaultMaxValuesPerName)
	}
	return fc, fc.Validate()
}

// Record formats (Config.InputFormat, Config.OutputFormat).
const (
	FormatMsgpack = "msgpack" // codec.DecodeEvent, codec.AppendPrediction
	FormatJSON    = "json"    // codec.Decoder.DecodeEventJSON, codec.AppendPredictionJSON
)

func (c *Config) defaults() {
	if c.Group == "" {
		c.Group = "okstream"
	}
	if c.Output == "" && c.Input != "" {
		c.Output = c.Input + ".predictions"
	}
	if c.DeadLetter == "" && c.Input != "" {
		c.DeadLetter = c.Input + ".dlq"
	}
	if c.Checkpoints == "" {
		c.Checkpoints = "okstream.checkpoints"
	}
	setInt := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	setDur := func(p *time.Duration, v time.Duration) {
		if *p <= 0 {
			*p = v
		}
	}
	setInt(&c.CheckpointEvery, 10000)
	setDur(&c.CheckpointInterval, 30*time.Second)
	setInt(&c.BatchSize, 1000)
	setInt(&c.FetchMaxBytes, 4<<20)
	setDur(&c.FetchMaxWait, 250*time.Millisecond)
	setInt(&c.MaxEventBytes, 1<<20)
	setInt(&c.DeadLetterMaxBytes, 512<<10)
	setDur(&c.StuckAfter, time.Minute)
	setDur(&c.ReadyBrokerTimeout, 15*time.Second)
	setDur(&c.LivenessTimeout, 2*time.Minute)
	setDur(&c.FailedRetry, 30*time.Second)
	if c.ProgressInterval == 0 {
		c.ProgressInterval = 30 * time.Second
	}
	if c.FeedbackBuffer > 0 && c.FeedbackMaxAge == 0 {
		c.FeedbackMaxAge = time.Hour
	}
	if c.FeedbackBuffer > 0 && c.FeedbackBufferBytes == 0 {
		c.FeedbackBufferBytes = 64 << 20
	}
	if c.MaxAbsValue == 0 {
		c.MaxAbsValue = DefaultMaxAbsValue
	}
	if c.MaxIDBytes == 0 {
		c.MaxIDBytes = DefaultMaxIDBytes
	}
	if c.StartOffset == "" {
		c.StartOffset = "earliest"
	}
	if c.OnModelChange == "" {
		c.OnModelChange = "fail"
	}
	if c.Delivery == "" {
		c.Delivery = DeliveryEffectivelyOnce
	}
	if c.InputFormat == "" {
		c.InputFormat = FormatMsgpack
	}
	if c.OutputFormat == "" {
		c.OutputFormat = FormatMsgpack
	}
	setDur(&c.SessionTimeout, 10*time.Second)
	setDur(&c.HeartbeatInterval, min(time.Second, c.SessionTimeout/3))
	setDur(&c.RebalanceTimeout, 30*time.Second)
	setInt(&c.CheckpointPartitions, 8)
	if c.CheckpointMaxStateBytes == 0 {
		c.CheckpointMaxStateBytes = checkpoint.DefaultMaxStateBytes
	}
	setDur(&c.ShutdownTimeout, 30*time.Second)
	if c.CheckpointFailingAfter == 0 {
		c.CheckpointFailingAfter = max(c.CheckpointInterval, 10*time.Second)
	}
	if c.CheckpointMaxAge == 0 {
		c.CheckpointMaxAge = max(3*c.CheckpointInterval, 30*time.Second)
	}
	if c.DeadLetterReadyShare == 0 {
		c.DeadLetterReadyShare = DefaultDeadLetterReadyShare
	}
	setInt(&c.DeadLetterWindow, DefaultDeadLetterWindow)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.shareDefaults()
}

// Validate fills in defaults and checks the configuration, returning every
// problem with how to fix it.
func (c *Config) Validate() error {
	c.defaults()
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(c.Brokers) == 0 {
		bad("no brokers: set --brokers host:port[,host:port] (or OKSTREAM_BROKERS)")
	}
	if c.Input == "" {
		bad("no input topic: set --input")
	}
	if c.Dim <= 0 {
		bad("no feature dimension: set --dim to the number of features of the events")
	}
	if len(c.Models) == 0 && !c.Passthrough {
		bad("no models: add --model NAME=SPEC (e.g. --model champion=fogd:sigma=2); see okstream help learners")
	}
	names := map[string]bool{}
	for _, m := range c.Models {
		if names[m.Name] {
			bad("model name %q used twice: give each --model a distinct NAME=SPEC", m.Name)
		}
		names[m.Name] = true
	}
	if c.TaskWarmup < 0 || c.TaskWarmup > 1<<30 {
		bad("task warm-up %d: use a number of labels, at least 1 (0 takes the default %d)", c.TaskWarmup, label.DefaultWarmup)
	}
	if c.MaxClasses < 0 || c.MaxClasses > learner.MaxClasses {
		bad("max classes %d: use 1 to %d (0 takes the default %d)", c.MaxClasses, learner.MaxClasses, label.DefaultMaxClasses)
	}
	if t, err := c.labelTask(); err != nil {
		bad("%v", err)
	} else if c.Positive != "" && (t == label.Regression || t == label.MultiClass) {
		bad("positive class %q: it names a class of string labels on a binary stream, but the task is %s: drop --positive", c.Positive, t)
	} else if t == label.MultiClass && c.FeedbackBuffer > 0 {
		bad("%v", errMultiFeedback)
	} else if t == label.MultiClass && len(c.Share) > 0 {
		bad("%v", errMultiShared)
	}
	topics := map[string]string{"input": c.Input, "output": c.Output, "dead-letter": c.DeadLetter, "checkpoint": c.Checkpoints}
	seen := map[string]string{}
	for _, role := range []string{"input", "output", "dead-letter", "checkpoint"} {
		t := topics[role]
		if t == "" {
			continue
		}
		if other, dup := seen[t]; dup {
			bad("the %s and %s topics are both %q: they must differ", other, role, t)
		}
		seen[t] = role
	}
	if c.StartOffset != "earliest" && c.StartOffset != "latest" {
		bad("start offset %q: use earliest or latest", c.StartOffset)
	}
	if c.OnModelChange != "fail" && c.OnModelChange != "reset" {
		bad("on-model-change %q: use fail or reset", c.OnModelChange)
	}
	if c.Delivery != DeliveryEffectivelyOnce && c.Delivery != DeliveryAtLeastOnce {
		bad("delivery %q: use %s or %s", c.Delivery, DeliveryEffectivelyOnce, DeliveryAtLeastOnce)
	}
	if _, err := c.featuresConfig(); err != nil {
		bad("%v", err)
	}
	if c.InputFormat != FormatMsgpack && c.InputFormat != FormatJSON {
		bad("input format %q: use %s or %s (the encoding of the input topic's event records)", c.InputFormat, FormatMsgpack, FormatJSON)
	}
	if c.OutputFormat != FormatMsgpack && c.OutputFormat != FormatJSON {
		bad("output format %q: use %s or %s (the encoding of the prediction records)", c.OutputFormat, FormatMsgpack, FormatJSON)
	}
	if c.FeedbackBufferBytes < 0 {
		bad("feedback buffer bytes %d: must be positive (0 takes the default, 64 MiB)", c.FeedbackBufferBytes)
	}
	if math.IsNaN(c.MaxAbsValue) || (c.MaxAbsValue > 0 && c.MaxAbsValue < 1) {
		bad("max abs value %v: must be at least 1, so that classification labels ±1 pass (0 takes the default %g; negative turns the check off)", c.MaxAbsValue, float64(DefaultMaxAbsValue))
	}
	if c.CheckpointMaxStateBytes < 0 {
		bad("checkpoint max state bytes %d: use a positive size (default %d)", c.CheckpointMaxStateBytes, checkpoint.DefaultMaxStateBytes)
	}
	if math.IsNaN(c.DeadLetterReadyShare) || c.DeadLetterReadyShare > 1 {
		bad("dead-letter ready share %v: use a share in (0, 1] (e.g. 0.5 for half the events; 0 takes the default %g; negative turns the check off)", c.DeadLetterReadyShare, DefaultDeadLetterReadyShare)
	}
	if c.DeadLetterWindow > 1000000 {
		bad("dead-letter window %d: use at most 1000000 events (it holds a byte per event and partition)", c.DeadLetterWindow)
	}
	c.validateShare(bad)
	c.validateControl(bad)
	if c.HeartbeatInterval >= c.SessionTimeout {
		bad("heartbeat interval %s must be shorter than the session timeout %s", c.HeartbeatInterval, c.SessionTimeout)
	}
	return errors.Join(errs...)
}

// eventLimits are the decoder's limits (a negative MaxAbsValue or
// MaxIDBytes, "off" in Config, is "no limit" in codec.Limits too).
func (c *Config) eventLimits() codec.Limits {
	return codec.Limits{Dim: c.Dim, MaxBytes: c.MaxEventBytes, MaxAbsValue: c.MaxAbsValue, MaxIDBytes: c.MaxIDBytes}
}

// pendingLimits are the feedback buffer's limits.
func (c *Config) pendingLimits() pendingLimits {
	return pendingLimits{max: c.FeedbackBuffer, maxBytes: c.FeedbackBufferBytes, maxAge: c.FeedbackMaxAge.Milliseconds()}
}

// labelTask returns the pipeline's task: Config.Task if given, else the
// task of the models whose learner fixes it, else (every model Flexible)
// label.Undecided. Models whose tasks disagree, or disagree with
// Config.Task, are an error.
func (c *Config) labelTask() (label.Task, error) {
	given, err := label.ParseTask(c.Task)
	if err != nil {
		return 0, err
	}
	return modelsTask(c.Models, max(c.Dim, 1), given)
}

// modelsTask is labelTask for models of dimension dim.
func modelsTask(models []Model, dim int, given label.Task) (label.Task, error) {
	var errs []error
	task, first := given, ""
	if given != label.Undecided {
		first = "--task " + given.String()
	}
	for _, m := range models {
		if given == label.MultiClass { // every model in its multi-class form
			if _, err := learner.NewMulti(label.ResolveSpec(m.Spec, label.MultiClass), dim); err != nil {
				errs = append(errs, fmt.Errorf("model %s: %v", m.Name, err))
			}
			continue
		}
		l, err := learner.New(m.Spec, dim)
		if err != nil {
			errs = append(errs, fmt.Errorf("model %s: %v", m.Name, err))
			continue
		}
		if label.Flexible(m.Spec) {
			continue // follows the others, or the labels
		}
		t := label.OfLearner(l.Info().Task)
		switch {
		case task == label.Undecided:
			task, first = t, "model "+m.Name
		case t != task:
			errs = append(errs, fmt.Errorf("model %s is %s but %s is %s: run binary and regression models in separate pipelines (a model auto without loss= follows the task)", m.Name, t, first, task))
		}
	}
	return task, errors.Join(errs...)
}

// WithDefaults returns c with the defaults that Validate fills in (e.g. the
// output and dead-letter topics named after the input), without validating
// it: for tools that need the topic names of a configuration.
func (c Config) WithDefaults() Config {
	c.defaults()
	return c
}
