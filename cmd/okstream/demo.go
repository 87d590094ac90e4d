package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/consumer"
	"okstream/dataset"
	"okstream/dataset/kuairec"
	"okstream/eval"
	"okstream/internal/kafkasec"
	"okstream/internal/kafkautil"
	"okstream/internal/progress"
	"okstream/learner/rng"
	"okstream/producer"

	"github.com/segmentio/kafka-go"
)

func init() {
	register(command{name: "demo", summary: "run the whole pipeline on an embedded Kafka broker, with a forced crash and recovery", run: runDemo})
}

const demoSynopsis = `demo [flags]
   or: okstream demo --data kuairec:DIR --feedback [flags]

Starts an embedded Kafka-protocol broker on 127.0.0.1 (nothing to install),
replays a built-in synthetic nonlinear stream (or --data FILE) as msgpack events
into a partitioned topic, and runs the okstream consumer with two models (a
champion and a challenger) on it, with live progress. Half way through it kills
the consumer abruptly — no final checkpoint — and starts a new one, which
restores every partition from its last checkpoint and reprocesses the events
after it. It ends with a report: each model's progressive mistake rate, computed
from the prediction topic (re-emitted records counted once) and checked against
the models' own statistics, throughput, checkpoints written, the recovery time,
and a check that the final models are bit-identical to an uninterrupted offline
replay.

With --feedback and --data kuairec:DIR (a KuaiRec 2.0 folder, or a SYNTHETIC
sample from okstream kuairec-gen, labelled as such), the demo shows delayed
feedback: every interaction is replayed, keyed by user and in time order, as an
impression (features, no label) followed, play_duration later in event time, by
a label-only feedback event. The consumer scores each impression at once, keeps
it (--feedback-buffer, --feedback-max-age) until its feedback arrives, then
learns from it and publishes an outcome record carrying the impression's score
and the label: the mistake rates come from these outcome records, and the
offline replay is fed the same (impression, feedback) sequence per partition.
The whole stream is replayed once, as fast as possible, into an input topic
without time-based retention (the records carry the log's 2020 event times).`

const demoExamples = `  okstream demo
  okstream demo --events 200000 --partitions 8
  okstream demo --data cod-rna      # the default models need no scaling and no σ
  okstream demo --data cod-rna --scale minmax01 --model champion=fogd:sigma=0.5,budget=100 --model challenger=nogd:sigma=0.5,budget=100

  # Delayed feedback on a SYNTHETIC KuaiRec sample:
  okstream kuairec-gen --out /tmp/kr --users 150 --videos 300 --seed 1 --quiet
  okstream demo --data kuairec:/tmp/kr --feedback --model forks=forks:sigma=2,budget=100 --model nogd=nogd:sigma=2,budget=100`

// feedbackOnly are the demo flags that apply only with --feedback, and
// plainOnly those that do not apply with it.
var (
	feedbackOnly = []string{"feedback-buffer", "feedback-max-age"}
	plainOnly    = [][2]string{
		{"events", "the whole KuaiRec stream is replayed once; limit the interactions with --limit N"},
		{"rate", "the stream is replayed as fast as possible"},
		{"seed", "the events are keyed by user, in time order"},
		{"scale", "the kuairec-v1 features are already in [0, 1]"},
	}
)

// demoDefaultModels are the demo's models when none is given: run's default
// champion (auto over FOGD) and a bare NOGD as challenger, which without σ
// standardises its features and takes σ from the stream (one learner, no
// model selection: the cheaper self-tuning configuration).
var demoDefaultModels = listFlag{defaultRunModel, "challenger=nogd:budget=100"}

func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", demoSynopsis, demoExamples, stderr)
	var df dataFlags
	df.register(fs)
	events := fs.Int("events", 100000, "events to replay (synthetic stream; with --data: 0 = the whole file once)")
	partitions := fs.Int("partitions", 4, "partitions of the input topic")
	var models listFlag
	fs.Var(&models, "model", "model NAME=SPEC, repeatable (default: "+strings.Join(demoDefaultModels, " and ")+": self-tuning, nothing set for the stream)")
	rate := fs.Float64("rate", 0, "replay rate in events/s (0: as fast as possible)")
	restart := fs.Bool("restart", true, "kill the consumer half way and recover")
	seed := fs.Uint64("seed", 1, "seed of the synthetic stream and the replay")
	brokers := fs.String("brokers", "", "use these brokers instead of the embedded one")
	verbose := fs.Bool("v", false, "log the runtime's messages")
	inFormat := fs.String("input-format", consumer.FormatMsgpack, "encoding of the events the demo produces and the consumer reads (as okstream run --input-format): msgpack or json")
	outFormat := fs.String("output-format", consumer.FormatMsgpack, "encoding of the prediction records (as okstream run --output-format): msgpack or json")
	feedback := fs.Bool("feedback", false, "delayed feedback (needs --data kuairec:DIR): each interaction becomes an impression (no label) and, play_duration later in event time, a label-only feedback event")
	feedbackBuffer := fs.Int("feedback-buffer", 100000, "with --feedback: impressions kept per partition awaiting their feedback")
	feedbackMaxAge := fs.Duration("feedback-max-age", 24*time.Hour, "with --feedback: evict impressions older than this, in event time")
	var sf secFlags
	sf.register(fs)
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "okstream demo: "+format+"\n", a...)
		return 1
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "okstream demo: "+format+"\n", a...)
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := sf.fromEnv(fs, os.Getenv); err != nil {
		return usageErr("%v", err)
	}
	sec, err := sf.build(os.Getenv, warnTo(stderr, "demo"))
	if err != nil {
		return usageErr("%v", err)
	}
	if sec.Enabled() && *brokers == "" {
		return usageErr("the --tls-* and --sasl-* flags apply to --brokers; the embedded broker is plaintext on 127.0.0.1")
	}
	for _, f := range []struct{ name, v string }{{"input-format", *inFormat}, {"output-format", *outFormat}} {
		if f.v != consumer.FormatMsgpack && f.v != consumer.FormatJSON {
			return usageErr("--%s %q: use msgpack or json", f.name, f.v)
		}
	}
	asJSON := *inFormat == consumer.FormatJSON
	if len(models) == 0 {
		models = slices.Clone(demoDefaultModels)
	}
	var ms []consumer.Model
	for _, m := range models {
		pm, err := consumer.ParseModel(m)
		if err != nil {
			return fail("--model %q: %v", m, err)
		}
		ms = append(ms, pm)
	}

	// The data.
	var src *demoSource
	if *feedback {
		if _, _, ok, _ := kuairec.ParseDataArg(df.data); !ok {
			return usageErr("--feedback needs KuaiRec data: add --data kuairec:DIR, a KuaiRec 2.0 folder (or a SYNTHETIC sample: okstream kuairec-gen --out DIR --users 150 --videos 300 --quiet)")
		}
		for _, f := range plainOnly {
			if set[f[0]] {
				return usageErr("--%s does not apply with --feedback: %s", f[0], f[1])
			}
		}
		switch {
		case *feedbackBuffer < 1:
			return usageErr("--feedback-buffer %d: keep at least 1 impression per partition (default 100000)", *feedbackBuffer)
		case *feedbackMaxAge <= 0:
			return usageErr("--feedback-max-age %s: give a duration > 0 of event time, e.g. 24h", *feedbackMaxAge)
		}
		if src, err = feedbackDemoSource(&df, asJSON); err != nil {
			return usageErr("%v", err)
		}
	} else {
		for _, name := range feedbackOnly {
			if set[name] {
				return usageErr("--%s applies only with --feedback (and --data kuairec:DIR): add --feedback, or drop --%s", name, name)
			}
		}
		if src, err = plainDemoSource(&df, *events, *seed, *rate, asJSON); err != nil {
			return fail("%v", err)
		}
	}
	total := src.total

	// The broker.
	addrs := strings.Split(*brokers, ",")
	if *brokers == "" {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.GroupMinSessionTimeout(500*time.Millisecond))
		if err != nil {
			return fail("starting the embedded broker: %v", err)
		}
		defer c.Close()
		addrs = c.ListenAddrs()
	}
	fmt.Fprintf(stdout, "okstream demo: broker %s; %d events (%s, d = %d) into %d partitions", strings.Join(addrs, ","), total, src.describe, src.dim, *partitions)
	if asJSON || *outFormat == consumer.FormatJSON {
		fmt.Fprintf(stdout, "; events as %s, predictions as %s", *inFormat, *outFormat)
	}
	fmt.Fprint(stdout, "; models:")
	for _, m := range ms {
		fmt.Fprintf(stdout, " %s=%s", m.Name, m.Spec)
	}
	fmt.Fprintln(stdout)
	if src.synthetic {
		fmt.Fprintln(stdout, syntheticNote)
	}

	ctx := context.Background()
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1e6)
	input := "demo-events-" + suffix
	conn := producer.Admin{Brokers: addrs, TLS: sec.TLS, SASL: sec.SASL}
	if _, _, err := conn.EnsureTopic(ctx, input, *partitions, src.topicConfigs); err != nil {
		return fail("%v", err)
	}
	logw := io.Discard
	if *verbose {
		logw = stderr
	}
	log := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg := consumer.Config{
		Brokers: addrs, TLS: sec.TLS, SASL: sec.SASL, Group: "demo-" + suffix, Input: input, Models: ms, Dim: src.dim,
		Checkpoints: "demo-checkpoints-" + suffix, CheckpointEvery: max(1000, int(total)/(20**partitions)),
		CheckpointInterval: 2 * time.Second, CreateTopics: true, Logger: log,
		SessionTimeout: 6 * time.Second, HeartbeatInterval: 300 * time.Millisecond, FetchMaxWait: 100 * time.Millisecond,
		InputFormat: *inFormat, OutputFormat: *outFormat,
	}
	if *feedback {
		cfg.FeedbackBuffer, cfg.FeedbackMaxAge = *feedbackBuffer, *feedbackMaxAge
	}
	if err := cfg.Validate(); err != nil {
		return fail("%v", err)
	}

	// Replay in the background.
	replayDone := make(chan error, 1)
	var replayStats producer.Stats
	go func() {
		var err error
		replayStats, err = src.replay(ctx, conn, input)
		replayDone <- err
	}()

	start := time.Now()
	p, done, err := startDemoPipeline(cfg)
	if err != nil {
		return fail("%v", err)
	}
	var killedAt time.Time
	var recovery time.Duration
	var checkpoints int
	var restoreTime time.Duration
	restarted := !*restart
	bar := newDemoBar(stderr, total, ms)
	for {
		processed := processedEvents(p)
		bar.update(processed, p)
		if !restarted && processed >= total/2 {
			_, t1 := p.Status()
			checkpoints += t1.Checkpoints
			killedAt = time.Now()
			p.Kill()
			if err := <-done; err != nil {
				return fail("%v", err)
			}
			bar.note(fmt.Sprintf("killed the consumer at %d/%d events (no final checkpoint); starting a new one", processed, total))
			p, done, err = startDemoPipeline(cfg)
			if err != nil {
				return fail("%v", err)
			}
			for !p.Ready() || len(owned(p)) < *partitions {
				time.Sleep(5 * time.Millisecond)
			}
			recovery = time.Since(killedAt)
			_, t2 := p.Status()
			restoreTime = t2.RestoreTime
			bar.note(fmt.Sprintf("recovered: %d partitions restored from checkpoints in %s (%s after the kill)", t2.Restores, restoreTime.Round(time.Millisecond), recovery.Round(time.Millisecond)))
			restarted = true
			// processed counted the killed consumer: the new one must get
			// there itself (a kill at the very end, on a fast machine, once
			// ended the demo before the new consumer had replayed anything
			// past its checkpoints).
			continue
		}
		if processed >= total {
			break
		}
		select {
		case err := <-replayDone:
			if err != nil {
				return fail("replay: %v", err)
			}
			replayDone <- nil
		case err := <-done:
			return fail("consumer stopped: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	elapsed := time.Since(start)
	if err := <-replayDone; err != nil { // every event is in: the replay has returned, or is returning
		return fail("replay: %v", err)
	}
	r := demoReport{cfg: cfg, src: src, total: total, elapsed: elapsed, recovery: recovery, restoreTime: restoreTime,
		checkpoints: checkpoints, replay: replayStats}
	return finishDemo(stdout, stderr, r, p, done, bar)
}

// syntheticNote is printed for SYNTHETIC KuaiRec data.
const syntheticNote = "  (SYNTHETIC data from okstream kuairec-gen, not the real KuaiRec logs)"

// demoSource is what the demo replays into its input topic.
type demoSource struct {
	describe     string // the data, for the first line
	dim          int
	total        int64 // records the replay writes
	synthetic    bool  // SYNTHETIC KuaiRec data
	feedback     bool  // impressions and delayed feedback events
	topicConfigs map[string]string
	replay       func(ctx context.Context, conn producer.Admin, topic string) (producer.Stats, error)
	// summary describes a finished replay.
	summary func(producer.Stats) string
}

// plainDemoSource is the built-in synthetic stream, or --data, replayed as
// labelled events with random keys.
func plainDemoSource(df *dataFlags, events int, seed uint64, rate float64, asJSON bool) (*demoSource, error) {
	var ds *dataset.Dataset
	if df.data != "" {
		var err error
		if ds, _, err = df.load(true); err != nil {
			return nil, err
		}
	} else {
		ds = syntheticStream(events, seed)
	}
	total := int64(ds.Len())
	loop := false
	if df.data != "" && events > 0 {
		total, loop = int64(events), events > ds.Len()
	}
	return &demoSource{
		describe: ds.Name, dim: ds.Dim, total: total,
		synthetic: strings.HasPrefix(ds.Name, "kuairec-synthetic/"),
		replay: func(ctx context.Context, conn producer.Admin, topic string) (producer.Stats, error) {
			// A file is replayed in a seeded random order (a new one per
			// pass), as okstream replay does: many are sorted by class.
			permute := df.data != "" && !df.ordered
			return producer.Replay(ctx, ds, producer.Config{Brokers: conn.Brokers, TLS: conn.TLS, SASL: conn.SASL, Topic: topic, Seed: seed, Rate: rate, Loop: loop, Limit: total, Keys: producer.KeyRandom, Permute: permute, JSON: asJSON})
		},
		summary: producer.Stats.String,
	}, nil
}

// feedbackDemoSource is --data kuairec:DIR replayed with delayed feedback:
// an impression per interaction and, play_duration later in event time, its
// feedback event, keyed by user, as fast as possible.
func feedbackDemoSource(df *dataFlags, asJSON bool) (*demoSource, error) {
	dir, opts, _, err := kuairec.ParseDataArg(df.data)
	if err != nil {
		return nil, fmt.Errorf("--data: %w", err)
	}
	s, err := df.openKuaiRec(dir, opts)
	if err != nil {
		return nil, err
	}
	if len(s.Events) == 0 {
		return nil, fmt.Errorf("%s: %s has no timed events", s.Dir.Data, s.Matrix)
	}
	src, err := producer.NewKuaiRecSource(s, producer.KuaiRecConfig{Mode: producer.KuaiRecFeedback})
	if err != nil {
		return nil, err
	}
	return &demoSource{
		describe: fmt.Sprintf("%d interactions of %s, each an impression then its feedback", len(s.Events), s.Name()),
		dim:      s.Features.Dim(), total: src.Len(), synthetic: s.Dir.Synthetic, feedback: true,
		// The records carry the log's event times (2020): no time-based
		// retention, or the broker may delete them at once.
		topicConfigs: map[string]string{"retention.ms": "-1"},
		replay: func(ctx context.Context, conn producer.Admin, topic string) (producer.Stats, error) {
			return producer.ReplaySource(ctx, src, producer.StreamConfig{Brokers: conn.Brokers, TLS: conn.TLS, SASL: conn.SASL, Topic: topic, Headers: src.Headers(), JSON: asJSON})
		},
		summary: func(st producer.Stats) string {
			return fmt.Sprintf("%s: %d impressions, %d feedback events (play_duration later in event time)", st, src.Impressions, src.Feedback)
		},
	}, nil
}

// startDemoPipeline starts a consumer in the background.
func startDemoPipeline(cfg consumer.Config) (*consumer.Pipeline, chan error, error) {
	p, err := consumer.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx); cancel() }()
	stoppers.Store(p, cancel)
	return p, done, nil
}

var stoppers sync.Map // *consumer.Pipeline → context.CancelFunc

func owned(p *consumer.Pipeline) []int {
	st, _ := p.Status()
	var out []int
	for _, s := range st {
		if s.Owned && s.Ready {
			out = append(out, s.Partition)
		}
	}
	return out
}

func processedEvents(p *consumer.Pipeline) int64 {
	st, _ := p.Status()
	var n int64
	for _, s := range st {
		n += s.Next
	}
	return n
}

func aggregate(p *consumer.Pipeline) map[string]consumer.Stats {
	st, _ := p.Status()
	agg := map[string]consumer.Stats{}
	for _, s := range st {
		for name, m := range s.Models {
			a := agg[name]
			a.Labeled += m.Labeled
			a.Mistakes += m.Mistakes
			a.SqErr += m.SqErr
			agg[name] = a
		}
	}
	return agg
}

// demoReport is what finishDemo reports besides the final pipeline.
type demoReport struct {
	cfg                            consumer.Config
	src                            *demoSource
	total                          int64
	elapsed, recovery, restoreTime time.Duration
	checkpoints                    int // written by the killed consumer
	replay                         producer.Stats
}

func finishDemo(stdout, stderr io.Writer, r demoReport, p *consumer.Pipeline, done chan error, bar *demoBar) int {
	cfg := r.cfg
	agg := aggregate(p)
	if c, ok := stoppers.Load(p); ok {
		c.(context.CancelFunc)()
	}
	if err := <-done; err != nil {
		fmt.Fprintf(stderr, "okstream demo: %v\n", err)
		return 1
	}
	bar.finish()
	_, tot := p.Status()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	transport := kafkasec.Transport(cfg.TLS, cfg.SASL)
	defer kafkasec.CloseTransport(transport)
	client := kafkasec.Client(cfg.Brokers, transport, 30*time.Second)
	preds, err := readTopic(ctx, client, cfg.Output, -1)
	if err != nil {
		fmt.Fprintf(stderr, "okstream demo: reading the prediction topic: %v\n", err)
		return 1
	}
	metrics, distinct, dups, err := predictionMetrics(preds)
	if err != nil {
		fmt.Fprintf(stderr, "okstream demo: %v\n", err)
		return 1
	}
	exact, why := verifyExact(ctx, client, cfg, r.src.dim)
	ok := true

	fmt.Fprintf(stdout, "\nResult after %d events (%.1f s, %.0f events/s end to end including the crash and recovery):\n", r.total, r.elapsed.Seconds(), float64(r.total)/r.elapsed.Seconds())
	from := "every event's prediction record with its label"
	if r.src.feedback {
		from = "the outcome records, i.e. each impression's decision against its delayed label"
	}
	fmt.Fprintf(stdout, "  progressive mistake rate computed from the prediction topic %s (%s; re-emitted records counted once):\n", cfg.Output, from)
	byName := map[string]*modelMetrics{}
	for _, m := range metrics {
		byName[m.name] = m
	}
	for _, m := range cfg.Models {
		mm, s := byName[m.Name], agg[m.Name]
		if mm == nil {
			mm = &modelMetrics{name: m.Name}
		}
		if mm.classify {
			fmt.Fprintf(stdout, "  %-12s progressive mistake rate %6.2f%%  (%d mistakes in %d labelled events)\n", m.Name, 100*float64(mm.mistakes)/math.Max(1, float64(mm.labeled)), mm.mistakes, mm.labeled)
		} else {
			fmt.Fprintf(stdout, "  %-12s progressive MSE %.5g  (%d labelled events)\n", m.Name, mm.sqerr/math.Max(1, float64(mm.labeled)), mm.labeled)
		}
		if uint64(mm.labeled) != s.Labeled || (mm.classify && uint64(mm.mistakes) != s.Mistakes) {
			fmt.Fprintf(stdout, "  %-12s DISAGREES with the model's own statistics (checkpointed): %d mistakes in %d labelled events\n", m.Name, s.Mistakes, s.Labeled)
			ok = false
		}
	}
	if ok {
		fmt.Fprintln(stdout, "  (the same counts as the models' own checkpointed statistics ✓)")
	}
	if r.src.synthetic {
		fmt.Fprintln(stdout, syntheticNote)
	}
	fmt.Fprintf(stdout, "  replay: %s\n", r.src.summary(r.replay))
	fmt.Fprintf(stdout, "  checkpoints written: %d (%.1f KiB on average)\n", r.checkpoints+tot.Checkpoints, float64(tot.CheckpointBytes)/math.Max(1, float64(tot.Checkpoints))/1024)
	if r.recovery > 0 {
		fmt.Fprintf(stdout, "  recovery after the kill: %s to resume (restoring all partitions took %s)\n", r.recovery.Round(time.Millisecond), r.restoreTime.Round(time.Millisecond))
	}
	fmt.Fprintf(stdout, "  prediction records: %d for %d events (%d re-emitted after the kill, counted once)\n", len(preds), r.total, dups)
	if int64(distinct) != r.total {
		fmt.Fprintf(stdout, "  %d of the %d events have no prediction record (dead-lettered?)\n", r.total-int64(distinct), r.total)
		ok = false
	}
	if exact {
		fmt.Fprintln(stdout, "  exact recovery: every partition's final models are bit-identical to an uninterrupted offline replay ✓")
	} else {
		fmt.Fprintf(stdout, "  exact recovery: NOT VERIFIED: %s\n", why)
		if r.src.feedback {
			fmt.Fprintln(stdout, "  (the offline replay keeps every impression until its feedback: a --feedback-buffer or --feedback-max-age small enough to evict impressions makes the runtime differ)")
		}
		ok = false
	}
	if !ok {
		return 1
	}
	return 0
}

// verifyExact compares each partition's final checkpoint with an offline
// replay of the partition's events. eval.ReplayEvents learns from labelled
// events and from feedback events (with their impression's features), and
// only scores the others: for a stream without feedback events it is
// eval.Replay.
func verifyExact(ctx context.Context, client *kafka.Client, cfg consumer.Config, dim int) (bool, string) {
	store, err := checkpoint.OpenExisting(ctx, checkpoint.Config{Brokers: cfg.Brokers, Topic: cfg.Checkpoints, Client: client})
	if err != nil {
		return false, err.Error()
	}
	n, err := kafkautil.Partitions(ctx, client, cfg.Input)
	if err != nil {
		return false, err.Error()
	}
	for q := 0; q < n; q++ {
		recs, err := kafkautil.ReadPartition(ctx, client, cfg.Input, q)
		if err != nil {
			return false, err.Error()
		}
		var evs []codec.Event
		jdec := codec.NewDecoder(codec.Limits{Dim: dim})
		for _, r := range recs {
			var ev codec.Event // fresh: evs keeps it (the decoder reuses only storage ev does not hold)
			var err error
			if codec.IsJSONRecord(r.Value) { // --format json
				err = jdec.DecodeEventJSON(r.Value, &ev)
			} else {
				ev, err = codec.DecodeEvent(r.Value, codec.Limits{Dim: dim})
			}
			if err != nil {
				continue
			}
			evs = append(evs, ev)
		}
		cp, _, err := store.Load(ctx, checkpoint.ID{Group: cfg.Group, Topic: cfg.Input, Partition: q})
		if err != nil || cp == nil {
			return false, fmt.Sprintf("partition %d has no checkpoint (%v)", q, err)
		}
		pl, err := consumer.DescribePayload(cp.Payload)
		if err != nil {
			return false, err.Error()
		}
		saved := pl.Models
		for i, m := range cfg.Models {
			_, l, err := eval.ReplayEvents(m.Spec, dim, evs)
			if err != nil {
				return false, err.Error()
			}
			want, _ := l.MarshalBinary()
			if i >= len(saved) || !bytes.Equal(saved[i].State, want) {
				return false, fmt.Sprintf("partition %d model %s differs from the offline replay", q, m.Name)
			}
		}
	}
	return true, ""
}

// syntheticStream is the demo's built-in nonlinear problem: 8 features in
// [−1, 1], label sign(sin(πx₀) + x₁² − x₂x₃ − 0.3) with 5% of labels flipped.
// A linear model cannot do much better than the majority class.
func syntheticStream(n int, seed uint64) *dataset.Dataset {
	src := rng.New(rng.Derive(seed, 77))
	const d = 8
	ds := &dataset.Dataset{Name: "synthetic", Dim: d}
	data := make([]float64, n*d)
	for i := 0; i < n; i++ {
		x := data[i*d : (i+1)*d : (i+1)*d]
		for j := range x {
			x[j] = 2*src.Float64() - 1
		}
		y := -1.0
		if math.Sin(math.Pi*x[0])+x[1]*x[1]-x[2]*x[3]-0.3 > 0 {
			y = 1
		}
		if src.Float64() < 0.05 {
			y = -y
		}
		ds.X = append(ds.X, x)
		ds.Y = append(ds.Y, y)
	}
	return ds
}

// demoBar is the demo's live progress line: events processed, rate and the
// models' running mistake rates.
type demoBar struct {
	bar   *progress.Bar
	names []string
}

func newDemoBar(w io.Writer, total int64, ms []consumer.Model) *demoBar {
	b := &demoBar{bar: progress.New(w, "demo", total, "events")}
	for _, m := range ms {
		b.names = append(b.names, m.Name)
	}
	return b
}

func (b *demoBar) update(done int64, p *consumer.Pipeline) {
	agg := aggregate(p)
	var parts []string
	for _, n := range b.names {
		if s := agg[n]; s.Labeled > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2f%%", n, 100*s.MistakeRate()))
		}
	}
	b.bar.SetSuffix("mistake rate: " + strings.Join(parts, ", "))
	b.bar.Set(done)
}

func (b *demoBar) note(s string) { b.bar.Note(s) }
func (b *demoBar) finish()       { b.bar.Finish() }
