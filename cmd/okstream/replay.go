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

	"okstream/dataset"
	"okstream/internal/progress"
	"okstream/producer"
)

func init() {
	register(command{name: "replay", summary: "replay a dataset into a Kafka topic as msgpack events", run: runReplay})
}

const replaySynopsis = `replay --data DATASET --brokers HOST:PORT --topic TOPIC [flags]

Sends the rows of a dataset to a Kafka topic as okstream events (msgpack; see
the codec package for the schema): one event per row, with id "<pass>-<row>",
a key, the features (dense x, or xi/xv with --sparse) and the label y. The
file is read and scaled as a whole first (--scale is fitted on every row),
then replayed in file order or, with --permute, in the seeded order that
okstream eval uses for its first permutation; --loop starts over (a new
permutation per pass) until --limit events or Ctrl-C.

Records are keyed by the event key and partitioned with the Java client's
murmur2 hash, so every client agrees on key -> partition; within a partition
records keep the replay order. Writes wait for all in-sync replicas
(acks=all). Stopping with Ctrl-C flushes what was sent and prints the
summary. Progress goes to stderr, the summary to stdout.`

const replayExamples = `  # german, scaled to [-1,1], in a seeded order, into a new 3-partition topic:
  okstream replay --data german --scale minmax11 --permute --seed 1 \
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
}

func (f *replayFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.brokers, "brokers", "", "Kafka bootstrap brokers, comma-separated host:port (default: $OKSTREAM_BROKERS)")
	fs.StringVar(&f.topic, "topic", "", "topic to write the events to (required)")
	fs.BoolVar(&f.createTopic, "create-topic", false, "create the topic if it does not exist (with --partitions)")
	fs.IntVar(&f.partitions, "partitions", 1, "partitions of a topic created by --create-topic (1 keeps one total order: a consumer then sees okstream eval's order)")
	fs.BoolVar(&f.sparse, "sparse", false, "send the non-zero features as xi/xv instead of dense x")
	fs.BoolVar(&f.noLabels, "no-labels", false, "send no labels (predict-only events)")
	fs.Float64Var(&f.labelFraction, "label-fraction", 1, "fraction of events that carry their label; the others are drawn by --seed")
	fs.StringVar(&f.keys, "keys", "row", "event keys: row (the row index, \"17\"), column (a CSV column, --key-column) or random (\"k-123\", --key-space keys drawn by --seed)")
	fs.StringVar(&f.keyColumn, "key-column", "", "with --keys column: the CSV column (index or header name) whose values are the keys; it must be numeric")
	fs.IntVar(&f.keySpace, "key-space", producer.DefaultKeySpace, "with --keys random: the number of distinct keys")
	fs.BoolVar(&f.permute, "permute", false, "replay each pass in a seeded random order (okstream eval's permutation of --seed for the first pass)")
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
	if lf := fs.Lookup("limit"); lf != nil {
		// dataFlags' --limit (first N rows) becomes the event limit here:
		// the scaling must be fitted on the whole file.
		lf.Usage = "stop after N events (0: every row once, or endless with --loop); the whole file is still read and scaled"
	}
}

// check validates the flags; the errors say how to fix them.
func (f *replayFlags) check(df *dataFlags) error {
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
	if err := f.check(&df); err != nil {
		return fail(2, err)
	}
	df.limit = 0 // --limit counts events here; the whole file is loaded and scaled
	ds, _, err := df.load(f.classification)
	if err != nil {
		if f.classification && strings.Contains(err.Error(), "not binary") {
			err = fmt.Errorf("%w (or, for regression targets, add --task regression)", err)
		}
		return fail(2, err)
	}
	cfg := producer.Config{
		Brokers: f.brokerList, Topic: f.topic,
		Sparse: f.sparse, Unlabelled: f.unlabelled,
		Keys: f.keyMode, KeySpace: f.keySpace,
		Seed: f.seed, Permute: f.permute,
		Rate: f.rate, Loop: f.loop, Limit: f.eventLimit,
		IDPrefix: f.idPrefix, Time: f.timeMode,
		BatchSize: f.batchSize,
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
		n, created, err := producer.EnsureTopic(ctx, cfg.Brokers, cfg.Topic, f.partitions)
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
