package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"okstream/dataset"
	"okstream/dataset/kuairec"
	"okstream/internal/kafkasec"
	"okstream/internal/progress"
	"okstream/producer"
)

func init() {
	register(command{name: "replay", summary: "replay a dataset into a Kafka topic as msgpack events", run: runReplay})
}

const replaySynopsis = `replay --data DATASET --brokers HOST:PORT --topic TOPIC [flags]
   or: okstream replay --source kuairec --data DIR --brokers HOST:PORT --topic TOPIC [--speedup F] [--feedback] [flags]

Sends the rows of a dataset to a Kafka topic as okstream events (msgpack; see
the codec package for the schema): one event per row, with id "<pass>-<row>",
a key, the features (dense x, or xi/xv with --sparse) and the label y. The
file is read and scaled as a whole first (--scale is fitted on every row),
then replayed in a seeded random order (--seed; the order okstream eval uses
for its first permutation) or, with --keep-order, in file order; --loop starts
over (a new permutation per pass) until --limit events or Ctrl-C. Shuffling is
the default because many public datasets are sorted by class (cod-rna,
spambase): in file order a learner sees one class, then the other, and its
mistake rate means nothing. Rows whose order is the data — event times from
--ts column, an adversarial game — keep their order unless --permute is given.

Records are keyed by the event key and partitioned with the Java client's
murmur2 hash, so every client agrees on key -> partition; within a partition
records keep the replay order. Writes wait for all in-sync replicas
(acks=all). Stopping with Ctrl-C flushes what was sent and prints the
summary. Progress goes to stderr, the summary to stdout.

With --source kuairec (or --data kuairec:DIR), DIR is a KuaiRec 2.0 folder —
the real files, or a SYNTHETIC sample from okstream kuairec-gen, which every
output labels as such. Its matrix's timed rows are sent in replay order
(timestamp, user_id, video_id) with the kuairec-v1 features, keyed by user_id
(so a user's events stay in order in one partition), with the Kafka record
time set to the event time and ids "<user>-<video>". By default each event
carries its label (watch_ratio > --threshold); with --feedback each
interaction becomes an impression (no label) followed, play_duration later in
event time, by a label-only feedback event whose ref is the impression's id.
--speedup F paces by event time, F times faster than real time (3600: an hour
of the log per second, so feedback follows its impression after
play_duration/3600); 0 sends as fast as possible. The record times are the
log's (2020): --create-topic creates the topic with retention.ms=-1, and a
warning is printed when an existing topic would delete them.`

const replayExamples = `  # A synthetic KuaiRec sample, an hour of event time per second, with delayed feedback:
  okstream kuairec-gen --out /tmp/kuairec --users 100 --videos 300
  okstream replay --source kuairec --data /tmp/kuairec --speedup 3600 --feedback \
    --brokers localhost:9092 --topic kuairec --create-topic --partitions 3

  # german, scaled to [-1,1], in a seeded order, into a new 3-partition topic:
  okstream replay --data german --scale minmax11 --seed 1 \
    --brokers localhost:9092 --topic events --create-topic --partitions 3

  # An endless stream at 2000 events/s, sparse, 10% of the events unlabelled,
  # keyed by 500 random entities:
  OKSTREAM_BROKERS=localhost:9092 okstream replay --data w7a --sparse --loop \
    --rate 2000 --label-fraction 0.9 --keys random --key-space 500 --topic w7a

  # Regression targets, keyed by a CSV column (dropped from the features),
  # stopping after 100000 events:
  okstream replay --data data.csv --label price --drop user_id --task regression \
    --keys column --key-column user_id --loop --limit 100000 --topic prices --brokers localhost:9092`

func runReplay(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return replayCommand(ctx, args, stdout, stderr)
}

// replayFlags are the command's flags (besides the dataset's).
type replayFlags struct {
	brokers, topic       string
	createTopic          bool
	partitions           int
	sparse, noLabels     bool
	labelFraction        float64
	keys, keyColumn      string
	keySpace             int
	permute, loop, quiet bool
	keepOrder            bool
	seed                 uint64
	rate                 float64
	batchSize            int
	task, idPrefix       string
	ts, tsColumn, tsUnit string
	set                  map[string]bool
	classification       bool
	keyMode              producer.KeyMode
	brokerList           []string
	eventLimit           int64
	unlabelled           float64
	timeMode             producer.TimeMode
	msPerUnit            float64
	kuairec              kuairecReplayFlags
	eventFormat          string
	sec                  secFlags
	security             kafkasec.Security // built from sec
}

// admin is the topic-call side of the replay's connections.
func (f *replayFlags) admin() producer.Admin {
	return producer.Admin{Brokers: f.brokerList, TLS: f.security.TLS, SASL: f.security.SASL}
}

func (f *replayFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.brokers, "brokers", "", "Kafka bootstrap brokers, comma-separated host:port (default: $OKSTREAM_BROKERS)")
	fs.StringVar(&f.topic, "topic", "", "topic to write the events to (required)")
	fs.BoolVar(&f.createTopic, "create-topic", false, "create the topic if it does not exist (with --partitions)")
	fs.IntVar(&f.partitions, "partitions", 1, "partitions of a topic created by --create-topic (1 keeps one total order: a consumer then sees okstream eval's order)")
	fs.BoolVar(&f.sparse, "sparse", false, "send the non-zero features as xi/xv instead of dense x")
	fs.StringVar(&f.eventFormat, "event-format", "msgpack", "encoding of the events: msgpack or json (read by okstream run --input-format json)")
	fs.BoolVar(&f.noLabels, "no-labels", false, "send no labels (predict-only events)")
	fs.Float64Var(&f.labelFraction, "label-fraction", 1, "fraction of events that carry their label; the others are drawn by --seed")
	fs.StringVar(&f.keys, "keys", "row", "event keys: row (the row index, \"17\"), column (a CSV column, --key-column) or random (\"k-123\", --key-space keys drawn by --seed)")
	fs.StringVar(&f.keyColumn, "key-column", "", "with --keys column: the CSV column (index or header name) whose values are the keys; it must be numeric")
	fs.IntVar(&f.keySpace, "key-space", producer.DefaultKeySpace, "with --keys random: the number of distinct keys")
	fs.BoolVar(&f.permute, "permute", true, "replay each pass in a seeded random order (okstream eval's permutation of --seed for the first pass); on by default, except for rows ordered by --ts column or an adversarial game")
	fs.BoolVar(&f.keepOrder, "keep-order", false, "replay the rows in file order (the same as --permute=false); only for files whose order means something")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the permutations, random keys and unlabelled draws")
	fs.Float64Var(&f.rate, "rate", 0, "target events per second (0: as fast as the brokers acknowledge)")
	fs.BoolVar(&f.loop, "loop", false, "start over when the data ends (until --limit events, or Ctrl-C)")
	fs.IntVar(&f.batchSize, "batch-size", producer.DefaultBatchSize, "events per write call")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	fs.StringVar(&f.task, "task", "classification", "label handling: classification (labels mapped to -1/+1, see --positive) or regression (labels as they are, see --scale y01|y11)")
	fs.StringVar(&f.idPrefix, "id-prefix", "", "text put before every event id, e.g. to tell several replays into one topic apart")
	fs.StringVar(&f.ts, "ts", "now", "event time, also the Kafka record time: now (wall clock at send), none (no ts), or column (--ts-column; old times may fall to the topic's retention.ms at once)")
	fs.StringVar(&f.tsColumn, "ts-column", "", "with --ts column: the CSV column (index or header name) holding the event times")
	fs.StringVar(&f.tsUnit, "ts-unit", "ms", "unit of --ts-column: ms or s since the Unix epoch")
	f.kuairec.register(fs)
	if lf := fs.Lookup("limit"); lf != nil {
		// dataFlags' --limit (first N rows) becomes the event limit here:
		// the scaling must be fitted on the whole file.
		lf.Usage = "stop after N events (0: every row once, or endless with --loop); the whole file is still read and scaled"
	}
	f.sec.register(fs)
}

// check validates the flags; the errors say how to fix them.
func (f *replayFlags) check(df *dataFlags) error {
	if f.eventFormat != "msgpack" && f.eventFormat != "json" {
		return fmt.Errorf("--event-format %q: use msgpack or json", f.eventFormat)
	}
	if f.brokers == "" {
		f.brokers = os.Getenv("OKSTREAM_BROKERS")
	}
	if strings.TrimSpace(f.brokers) == "" {
		return errors.New("--brokers is required (or set OKSTREAM_BROKERS): the Kafka bootstrap servers, e.g. --brokers localhost:9092")
	}
	for _, b := range strings.Split(f.brokers, ",") {
		b = strings.TrimSpace(b)
		if _, port, err := net.SplitHostPort(b); err != nil || port == "" {
			return fmt.Errorf("--brokers: %q is not host:port; give e.g. --brokers localhost:9092,kafka2:9092", b)
		}
		f.brokerList = append(f.brokerList, b)
	}
	if strings.TrimSpace(f.topic) == "" {
		return errors.New("--topic is required: the Kafka topic to write the events to, e.g. --topic events (add --create-topic if it does not exist yet)")
	}
	if f.set["partitions"] && !f.createTopic {
		return errors.New("--partitions only applies to a topic created here: add --create-topic, or drop --partitions")
	}
	if f.partitions < 1 {
		return fmt.Errorf("--partitions %d: a topic needs at least 1 partition", f.partitions)
	}
	var err error
	if f.keyMode, err = producer.ParseKeyMode(f.keys); err != nil {
		return fmt.Errorf("--keys: %v", err)
	}
	switch {
	case f.keyMode == producer.KeyColumn && f.keyColumn == "":
		return errors.New("--keys column needs --key-column: the CSV column (index or header name) that holds the keys")
	case f.keyMode != producer.KeyColumn && f.keyColumn != "":
		return fmt.Errorf("--key-column is only used with --keys column (now --keys %s): add --keys column", f.keyMode)
	case f.keySpace < 1:
		return fmt.Errorf("--key-space %d: use at least 1 key", f.keySpace)
	case f.set["key-space"] && f.keyMode != producer.KeyRandom:
		return errors.New("--key-space is only used with --keys random")
	}
	switch {
	case math.IsNaN(f.labelFraction) || f.labelFraction < 0 || f.labelFraction > 1:
		return fmt.Errorf("--label-fraction %v: give a fraction between 0 and 1 (1: every event labelled)", f.labelFraction)
	case f.noLabels && f.set["label-fraction"]:
		return errors.New("--no-labels and --label-fraction contradict each other: use one (--no-labels is --label-fraction 0)")
	}
	if f.keepOrder {
		if f.set["permute"] && f.permute {
			return errors.New("--keep-order and --permute contradict each other: use one")
		}
		f.permute = false
	}
	f.unlabelled = 1 - f.labelFraction
	if f.noLabels {
		f.unlabelled = 1
	}
	switch {
	case math.IsNaN(f.rate) || math.IsInf(f.rate, 0) || f.rate < 0:
		return fmt.Errorf("--rate %v: give events per second > 0, or 0 for as fast as possible", f.rate)
	case f.batchSize < 1:
		return fmt.Errorf("--batch-size %d: give at least 1 event per call (default %d)", f.batchSize, producer.DefaultBatchSize)
	case df.limit < 0:
		return fmt.Errorf("--limit %d: give a number of events > 0, or 0 for no limit", df.limit)
	}
	f.eventLimit = int64(df.limit)
	switch f.task {
	case "classification", "class":
		f.classification = true
	case "regression", "reg":
	default:
		return fmt.Errorf("--task %q: use classification or regression", f.task)
	}
	if sc, err := dataset.ParseScale(df.scale); err == nil && sc.Targets && f.classification {
		return fmt.Errorf("--scale %s scales regression targets, but --task is classification: add --task regression, or drop y01/y11", df.scale)
	}
	if df.positive != "" && !f.classification {
		return errors.New("--positive maps classification labels, but --task is regression: drop --positive")
	}
	switch f.ts {
	case "now":
		f.timeMode = producer.TimeNow
	case "none":
		f.timeMode = producer.TimeNone
	case "column":
		f.timeMode = producer.TimeColumn
	default:
		return fmt.Errorf("--ts %q: use now, none or column", f.ts)
	}
	switch {
	case f.timeMode == producer.TimeColumn && f.tsColumn == "":
		return errors.New("--ts column needs --ts-column: the CSV column (index or header name) with the event times")
	case f.timeMode != producer.TimeColumn && f.tsColumn != "":
		return errors.New("--ts-column is only used with --ts column: add --ts column")
	}
	switch f.tsUnit {
	case "ms":
		f.msPerUnit = 1
	case "s":
		f.msPerUnit = 1000
	default:
		return fmt.Errorf("--ts-unit %q: use ms or s", f.tsUnit)
	}
	return nil
}

func replayCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("replay", replaySynopsis, replayExamples, stderr)
	var df dataFlags
	df.register(fs)
	var f replayFlags
	f.register(fs)
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "okstream replay: %v\n", err)
		return code
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if err := f.sec.fromEnv(fs, os.Getenv); err != nil {
		return fail(2, err)
	}
	var err error
	if f.security, err = f.sec.build(os.Getenv, warnTo(stderr, "replay")); err != nil {
		return fail(2, err)
	}
	if f.kuairec.selected(&df) {
		return kuairecReplay(ctx, &df, &f, stdout, stderr)
	}
	if err := f.kuairec.checkUnused(f.set); err != nil {
		return fail(2, err)
	}
	if err := f.check(&df); err != nil {
		return fail(2, err)
	}
	df.limit = 0 // --limit counts events here; the whole file is loaded and scaled
	df.seed = f.seed
	ds, _, err := df.load(f.classification)
	if err != nil {
		if f.classification && strings.Contains(err.Error(), "not binary") {
			err = fmt.Errorf("%w (or, for regression targets, add --task regression)", err)
		}
		return fail(2, err)
	}
	if f.permute && !f.set["permute"] && (df.ordered || f.timeMode == producer.TimeColumn) {
		f.permute = false // the row order is the data: shuffle only when asked
	}
	if !f.quiet {
		if f.permute {
			fmt.Fprintf(stderr, "okstream replay: rows in a seeded random order (--seed %d; --keep-order keeps the file order)\n", f.seed)
		} else {
			fmt.Fprintln(stderr, "okstream replay: rows in file order")
		}
	}
	cfg := producer.Config{
		Brokers: f.brokerList, Topic: f.topic, TLS: f.security.TLS, SASL: f.security.SASL,
		Sparse: f.sparse, Unlabelled: f.unlabelled,
		Keys: f.keyMode, KeySpace: f.keySpace,
		Seed: f.seed, Permute: f.permute,
		Rate: f.rate, Loop: f.loop, Limit: f.eventLimit,
		IDPrefix: f.idPrefix, Time: f.timeMode,
		BatchSize: f.batchSize, JSON: f.eventFormat == "json",
	}
	if f.keyColumn != "" || f.tsColumn != "" {
		path, opts, err := df.options()
		if err != nil {
			return fail(2, err)
		}
		if f.keyColumn != "" {
			if cfg.RowKeys, err = producer.ColumnKeys(path, opts, f.keyColumn); err != nil {
				return fail(2, fmt.Errorf("--key-column: %w", err))
			}
		}
		if f.tsColumn != "" {
			vals, err := producer.ReadColumn(path, opts, f.tsColumn)
			if err != nil {
				return fail(2, fmt.Errorf("--ts-column: %w", err))
			}
			cfg.RowTimes = make([]int64, len(vals))
			for i, v := range vals {
				cfg.RowTimes[i] = int64(math.Round(v * f.msPerUnit))
			}
		}
	}
	plan, err := producer.NewPlan(ds, cfg)
	if err != nil {
		return fail(2, err)
	}

	if f.createTopic {
		n, created, err := f.admin().EnsureTopic(ctx, cfg.Topic, f.partitions, nil)
		if err != nil {
			return fail(1, err)
		}
		switch {
		case created:
			fmt.Fprintf(stderr, "okstream replay: created topic %s with %d partitions\n", cfg.Topic, n)
		case n != f.partitions && f.set["partitions"]:
			fmt.Fprintf(stderr, "okstream replay: topic %s already exists with %d partitions (not %d); writing to it as it is\n", cfg.Topic, n, f.partitions)
		}
	}
	if !f.quiet {
		total := max(plan.Len(), 0)
		cfg.Progress = progress.New(stderr, "replay "+ds.Name+" -> "+cfg.Topic, total, "events")
	}
	st, err := producer.Replay(ctx, ds, cfg)
	interrupted := err != nil && errors.Is(err, context.Canceled)
	if err != nil && !interrupted {
		if st.Events > 0 {
			printReplaySummary(stdout, ds, cfg.Topic, plan, st)
		}
		return fail(1, err)
	}
	printReplaySummary(stdout, ds, cfg.Topic, plan, st)
	if interrupted {
		fmt.Fprintf(stderr, "okstream replay: stopped by a signal after %d events\n", st.Events)
		return 130
	}
	return 0
}

func printReplaySummary(w io.Writer, ds *dataset.Dataset, topic string, plan *producer.Plan, st producer.Stats) {
	fmt.Fprintf(w, "replayed %d events (%.2f MB) from %s to topic %s in %.2f s: %.0f events/s\n",
		st.Events, float64(st.Bytes)/1e6, ds.Name, topic, st.Elapsed.Seconds(), st.Rate())
	parts := make([]string, len(st.Partitions))
	for p, n := range st.Partitions {
		parts[p] = fmt.Sprintf("%d:%d", p, n)
	}
	fmt.Fprintf(w, "  passes %.2f over %d rows; labelled %d; per partition %s\n",
		float64(st.Events)/float64(plan.Rows()), plan.Rows(), st.Labelled, strings.Join(parts, " "))
	if st.Sent > st.Events {
		fmt.Fprintf(w, "  %d events were sent but not acknowledged\n", st.Sent-st.Events)
	}
}

// kuairecReplayFlags are replay's flags for --source kuairec.
type kuairecReplayFlags struct {
	source    string
	speedup   float64
	feedback  bool
	matrix    string
	threshold float64
	profile   string
	sameDay   bool
	dedup     bool
}

// kuairecOnly are the flags that apply only to --source kuairec.
var kuairecOnly = []string{"speedup", "feedback", "matrix", "threshold", "profile", "same-day", "dedup"}

// datasetOnly are the flags that do not apply to --source kuairec.
var datasetOnly = []string{"keys", "key-column", "key-space", "permute", "keep-order", "seed", "loop", "rate", "label-fraction", "no-labels",
	"ts", "ts-column", "ts-unit", "task", "scale", "positive", "label", "drop", "header", "format", "dim", "max-dense-mib"}

func (k *kuairecReplayFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&k.source, "source", "dataset", "what --data is: dataset (a file or shared dataset name) or kuairec (a KuaiRec 2.0 folder, real or synthetic; --data kuairec:DIR implies it)")
	fs.Float64Var(&k.speedup, "speedup", 0, "kuairec: pace by event time, F times faster than real time (3600: an hour of the log per second); 0: as fast as possible")
	fs.BoolVar(&k.feedback, "feedback", false, "kuairec: send each interaction as an impression (no label) and, play_duration later in event time, a label-only feedback event referring to it")
	fs.StringVar(&k.matrix, "matrix", "small", "kuairec: small (small_matrix.csv, the FORKS stream) or big (big_matrix.csv)")
	fs.Float64Var(&k.threshold, "threshold", 0.75, "kuairec: label +1 when watch_ratio > threshold, else -1")
	fs.StringVar(&k.profile, "profile", "full", "kuairec: feature profile, full (kuairec-v1, d=86) or compact (d=44)")
	fs.BoolVar(&k.sameDay, "same-day", false, "kuairec: join the item's daily statistics of the event's own day (looks ahead; for sensitivity checks only)")
	fs.BoolVar(&k.dedup, "dedup", false, "kuairec: drop repeated events (the big matrix's exact duplicates)")
}

// selected reports whether the replay is a KuaiRec one.
func (k *kuairecReplayFlags) selected(df *dataFlags) bool {
	return k.source == "kuairec" || strings.HasPrefix(df.data, kuairec.DataPrefix+":") || strings.HasPrefix(df.data, kuairec.DataPrefix+",")
}

// checkUnused rejects KuaiRec flags in a dataset replay.
func (k *kuairecReplayFlags) checkUnused(set map[string]bool) error {
	if k.source != "dataset" {
		return fmt.Errorf("--source %q: use dataset or kuairec", k.source)
	}
	for _, name := range kuairecOnly {
		if set[name] {
			return fmt.Errorf("--%s applies to KuaiRec replays only: add --source kuairec (with --data DIR, a KuaiRec 2.0 folder)", name)
		}
	}
	return nil
}

// kuairecReplay runs replay --source kuairec.
func kuairecReplay(ctx context.Context, df *dataFlags, f *replayFlags, stdout, stderr io.Writer) int {
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "okstream replay: %v\n", err)
		return code
	}
	k := &f.kuairec
	for _, name := range datasetOnly {
		if f.set[name] {
			return fail(2, fmt.Errorf("--%s does not apply to --source kuairec (keys are user_ids, times the log's timestamps, labels watch_ratio > --threshold, features kuairec-v1 in [0,1])", name))
		}
	}
	if f.brokers == "" {
		f.brokers = os.Getenv("OKSTREAM_BROKERS")
	}
	if strings.TrimSpace(f.brokers) == "" {
		return fail(2, errors.New("--brokers is required (or set OKSTREAM_BROKERS): the Kafka bootstrap servers, e.g. --brokers localhost:9092"))
	}
	for _, b := range strings.Split(f.brokers, ",") {
		b = strings.TrimSpace(b)
		if _, port, err := net.SplitHostPort(b); err != nil || port == "" {
			return fail(2, fmt.Errorf("--brokers: %q is not host:port; give e.g. --brokers localhost:9092,kafka2:9092", b))
		}
		f.brokerList = append(f.brokerList, b)
	}
	switch {
	case strings.TrimSpace(f.topic) == "":
		return fail(2, errors.New("--topic is required: the Kafka topic to write the events to, e.g. --topic kuairec (add --create-topic if it does not exist yet)"))
	case f.set["partitions"] && !f.createTopic:
		return fail(2, errors.New("--partitions only applies to a topic created here: add --create-topic, or drop --partitions"))
	case f.partitions < 1:
		return fail(2, fmt.Errorf("--partitions %d: a topic needs at least 1 partition", f.partitions))
	case k.source != "kuairec" && k.source != "dataset":
		return fail(2, fmt.Errorf("--source %q: use dataset or kuairec", k.source))
	case math.IsNaN(k.speedup) || math.IsInf(k.speedup, 0) || k.speedup < 0:
		return fail(2, fmt.Errorf("--speedup %v: give a factor > 0 (3600: an hour of event time per second), or 0 for as fast as possible", k.speedup))
	case math.IsNaN(k.threshold) || math.IsInf(k.threshold, 0):
		return fail(2, fmt.Errorf("--threshold %v: give a number", k.threshold))
	case k.matrix != "small" && k.matrix != "big":
		return fail(2, fmt.Errorf("--matrix %q: use small or big", k.matrix))
	case df.limit < 0:
		return fail(2, fmt.Errorf("--limit %d: give a number of interactions > 0, or 0 for all", df.limit))
	case f.batchSize < 1:
		return fail(2, fmt.Errorf("--batch-size %d: give at least 1 event per call", f.batchSize))
	}
	profile, err := kuairec.ParseProfile(k.profile)
	if err != nil {
		return fail(2, fmt.Errorf("--profile: %v", err))
	}
	dir := df.data
	opts := kuairec.Options{}
	if d, o, ok, err := kuairec.ParseDataArg(df.data); ok {
		if err != nil {
			return fail(2, fmt.Errorf("--data: %w", err))
		}
		dir, opts = d, o
	}
	if dir == "" {
		return fail(2, errors.New("--data is required: the KuaiRec 2.0 folder (the unpacked zip, or a synthetic sample from okstream kuairec-gen)"))
	}
	// Flags override the options given inside --data kuairec,...:DIR.
	if f.set["matrix"] || opts.Matrix == "" {
		opts.Matrix = k.matrix
	}
	if f.set["threshold"] || opts.Threshold == 0 {
		opts.Threshold = k.threshold
	}
	if f.set["profile"] {
		opts.Features.Profile = profile
	}
	opts.Features.SameDay = opts.Features.SameDay || k.sameDay
	opts.Dedup = opts.Dedup || k.dedup
	if df.limit > 0 {
		opts.Limit = df.limit
	}
	stream, err := kuairec.Open(dir, opts)
	if err != nil {
		return fail(2, err)
	}
	if len(stream.Events) == 0 {
		return fail(2, fmt.Errorf("%s: %s has no timed events", stream.Dir.Data, stream.Matrix))
	}
	mode := producer.KuaiRecLabelled
	if k.feedback {
		mode = producer.KuaiRecFeedback
	}
	src, err := producer.NewKuaiRecSource(stream, producer.KuaiRecConfig{Mode: mode, IDPrefix: f.idPrefix, Sparse: f.sparse})
	if err != nil {
		return fail(2, err)
	}
	label := stream.Dir.Label()
	fmt.Fprintf(stderr, "okstream replay: %s, %s: %s\n", label, stream.Matrix, stream.Stats)
	if stream.Dir.Synthetic {
		fmt.Fprintf(stderr, "okstream replay: the data are SYNTHETIC (generated by okstream kuairec-gen), not the real KuaiRec logs\n")
	}

	if f.createTopic {
		n, created, err := f.admin().EnsureTopic(ctx, f.topic, f.partitions, map[string]string{"retention.ms": "-1"})
		if err != nil {
			return fail(1, err)
		}
		switch {
		case created:
			fmt.Fprintf(stderr, "okstream replay: created topic %s with %d partitions and retention.ms=-1 (the records carry the log's 2020 event times)\n", f.topic, n)
		case n != f.partitions && f.set["partitions"]:
			fmt.Fprintf(stderr, "okstream replay: topic %s already exists with %d partitions (not %d); writing to it as it is\n", f.topic, n, f.partitions)
		}
	}
	if ret, err := f.admin().TopicRetention(ctx, f.topic); err == nil && ret >= 0 {
		if age := time.Since(time.UnixMilli(stream.Events[0].TS)); age > time.Duration(ret)*time.Millisecond {
			fmt.Fprintf(stderr, "okstream replay: warning: topic %s has retention.ms=%d but the records carry event times from %s; the broker may delete them at once (set retention.ms=-1 on the topic)\n",
				f.topic, ret, kuairec.FormatTime(stream.Events[0].TS)[:10])
		}
	}
	cfg := producer.StreamConfig{Brokers: f.brokerList, Topic: f.topic, TLS: f.security.TLS, SASL: f.security.SASL, Speedup: k.speedup,
		BatchSize: f.batchSize, Headers: src.Headers(), JSON: f.eventFormat == "json"}
	if !f.quiet {
		name := "replay " + strings.TrimSuffix(stream.Name(), "]") + "," + mode.String() + "] -> " + f.topic
		cfg.Progress = progress.New(stderr, name, src.Len(), "events")
	}
	st, err := producer.ReplaySource(ctx, src, cfg)
	interrupted := err != nil && errors.Is(err, context.Canceled)
	if err != nil && !interrupted {
		if st.Events > 0 {
			printKuaiRecSummary(stdout, stream, src, mode, k.speedup, f.topic, st)
		}
		return fail(1, err)
	}
	printKuaiRecSummary(stdout, stream, src, mode, k.speedup, f.topic, st)
	if interrupted {
		fmt.Fprintf(stderr, "okstream replay: stopped by a signal after %d events\n", st.Events)
		return 130
	}
	return 0
}

func printKuaiRecSummary(w io.Writer, s *kuairec.Stream, src *producer.KuaiRecSource, mode producer.KuaiRecMode, speedup float64, topic string, st producer.Stats) {
	fmt.Fprintf(w, "replayed %d events (%.2f MB) from %s %s to topic %s in %.2f s: %.0f events/s\n",
		st.Events, float64(st.Bytes)/1e6, s.Dir.Label(), s.Matrix, topic, st.Elapsed.Seconds(), st.Rate())
	pace := "as fast as possible"
	if speedup > 0 {
		pace = fmt.Sprintf("event time at %g× real time", speedup)
	}
	if mode == producer.KuaiRecFeedback {
		fmt.Fprintf(w, "  feedback mode: %d impressions and %d feedback events (label-only, play_duration later in event time); %s\n",
			src.Impressions, src.Feedback, pace)
	} else {
		fmt.Fprintf(w, "  labelled mode: %d events with features and label; %s\n", st.Labelled, pace)
	}
	first, last := s.Events[0].TS, s.Events[len(s.Events)-1].TS
	fmt.Fprintf(w, "  event times %s .. %s (UTC+8); features %s (d=%d); label watch_ratio > %g; keys user_id\n",
		kuairec.FormatTime(first)[:16], kuairec.FormatTime(last)[:16], s.Features.SchemaVersion(), s.Features.Dim(), s.Options.Thresh())
	parts := make([]string, len(st.Partitions))
	for p, n := range st.Partitions {
		parts[p] = fmt.Sprintf("%d:%d", p, n)
	}
	fmt.Fprintf(w, "  per partition %s\n", strings.Join(parts, " "))
	if s.Dir.Synthetic {
		fmt.Fprintf(w, "  (SYNTHETIC data from okstream kuairec-gen, not the real KuaiRec logs)\n")
	}
	if st.Sent > st.Events {
		fmt.Fprintf(w, "  %d events were sent but not acknowledged\n", st.Sent-st.Events)
	}
}
