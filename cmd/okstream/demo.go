package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/consumer"
	"okstream/dataset"
	"okstream/eval"
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

Starts an embedded Kafka-protocol broker on 127.0.0.1 (nothing to install),
replays a built-in synthetic nonlinear stream (or --data FILE) as msgpack events
into a partitioned topic, and runs the okstream consumer with two models (a
champion and a challenger) on it, with live progress. Half way through it kills
the consumer abruptly — no final checkpoint — and starts a new one, which
restores every partition from its last checkpoint and reprocesses the events
after it. It ends with a report: each model's progressive mistake rate,
throughput, checkpoints written, the recovery time, and a check that the final
models are bit-identical to an uninterrupted offline replay.`

const demoExamples = `  okstream demo
  okstream demo --events 200000 --partitions 8
  okstream demo --data cod-rna --scale minmax01 --model champion=fogd:sigma=0.5,budget=100 --model challenger=nogd:sigma=0.5,budget=100`

func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", demoSynopsis, demoExamples, stderr)
	var df dataFlags
	df.register(fs)
	events := fs.Int("events", 100000, "events to replay (synthetic stream; with --data: 0 = the whole file once)")
	partitions := fs.Int("partitions", 4, "partitions of the input topic")
	var models listFlag
	fs.Var(&models, "model", "model NAME=SPEC, repeatable (default: champion=fogd and challenger=nogd, σ = 1, B = 100)")
	rate := fs.Float64("rate", 0, "replay rate in events/s (0: as fast as possible)")
	restart := fs.Bool("restart", true, "kill the consumer half way and recover")
	seed := fs.Uint64("seed", 1, "seed of the synthetic stream and the replay")
	brokers := fs.String("brokers", "", "use these brokers instead of the embedded one")
	verbose := fs.Bool("v", false, "log the runtime's messages")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "okstream demo: "+format+"\n", a...)
		return 1
	}
	if len(models) == 0 {
		models = listFlag{"champion=fogd:sigma=1,budget=100", "challenger=nogd:sigma=1,budget=100"}
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
	var ds *dataset.Dataset
	var err error
	name := "synthetic"
	if df.data != "" {
		if ds, _, err = df.load(true); err != nil {
			return fail("%v", err)
		}
		name = ds.Name
	} else {
		ds = syntheticStream(*events, *seed)
	}
	total := int64(ds.Len())
	loop := false
	if df.data != "" && *events > 0 {
		total, loop = int64(*events), *events > ds.Len()
	}

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
	fmt.Fprintf(stdout, "okstream demo: broker %s; %d events (%s, d = %d) into %d partitions; models:", strings.Join(addrs, ","), total, name, ds.Dim, *partitions)
	for _, m := range ms {
		fmt.Fprintf(stdout, " %s=%s", m.Name, m.Spec)
	}
	fmt.Fprintln(stdout)

	ctx := context.Background()
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1e6)
	input := "demo-events-" + suffix
	if _, _, err := producer.EnsureTopic(ctx, addrs, input, *partitions); err != nil {
		return fail("%v", err)
	}
	logw := io.Discard
	if *verbose {
		logw = stderr
	}
	log := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg := consumer.Config{
		Brokers: addrs, Group: "demo-" + suffix, Input: input, Models: ms, Dim: ds.Dim,
		Checkpoints: "demo-checkpoints-" + suffix, CheckpointEvery: max(1000, int(total)/(20**partitions)),
		CheckpointInterval: 2 * time.Second, CreateTopics: true, Logger: log,
		SessionTimeout: 6 * time.Second, HeartbeatInterval: 300 * time.Millisecond, FetchMaxWait: 100 * time.Millisecond,
	}
	if err := cfg.Validate(); err != nil {
		return fail("%v", err)
	}

	// Replay in the background.
	replayDone := make(chan error, 1)
	var replayStats producer.Stats
	go func() {
		var err error
		replayStats, err = producer.Replay(ctx, ds, producer.Config{Brokers: addrs, Topic: input, Seed: *seed, Rate: *rate, Loop: loop, Limit: total, Keys: producer.KeyRandom})
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
	return finishDemo(stdout, stderr, cfg, p, done, bar, ds.Dim, total, elapsed, recovery, restoreTime, checkpoints, replayStats)
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

func finishDemo(stdout, stderr io.Writer, cfg consumer.Config, p *consumer.Pipeline, done chan error, bar *demoBar, dim int, total int64, elapsed, recovery, restoreTime time.Duration, ckptBefore int, rs producer.Stats) int {
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
	client := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: 30 * time.Second}
	preds, _ := kafkautil.Partitions(ctx, client, cfg.Output)
	var predRecords int64
	for q := 0; q < preds; q++ {
		first, end, err := kafkautil.Offsets(ctx, client, cfg.Output, q)
		if err == nil {
			predRecords += end - first
		}
	}
	exact, why := verifyExact(ctx, client, cfg, dim)

	fmt.Fprintf(stdout, "\nResult after %d events (%.1f s, %.0f events/s end to end including the crash and recovery):\n", total, elapsed.Seconds(), float64(total)/elapsed.Seconds())
	names := make([]string, 0, len(agg))
	for _, m := range cfg.Models {
		names = append(names, m.Name)
	}
	for _, n := range names {
		s := agg[n]
		fmt.Fprintf(stdout, "  %-12s progressive mistake rate %6.2f%%  (%d mistakes in %d labelled events)\n", n, 100*s.MistakeRate(), s.Mistakes, s.Labeled)
	}
	fmt.Fprintf(stdout, "  replay: %s\n", rs)
	fmt.Fprintf(stdout, "  checkpoints written: %d (%.1f KiB on average)\n", ckptBefore+tot.Checkpoints, float64(tot.CheckpointBytes)/math.Max(1, float64(tot.Checkpoints))/1024)
	if recovery > 0 {
		fmt.Fprintf(stdout, "  recovery after the kill: %s to resume (restoring all partitions took %s)\n", recovery.Round(time.Millisecond), restoreTime.Round(time.Millisecond))
		fmt.Fprintf(stdout, "  prediction records: %d for %d events (%d re-emitted after the kill, byte-identical)\n", predRecords, total, predRecords-total)
	}
	if exact {
		fmt.Fprintln(stdout, "  exact recovery: every partition's final models are bit-identical to an uninterrupted offline replay ✓")
	} else {
		fmt.Fprintf(stdout, "  exact recovery: NOT VERIFIED: %s\n", why)
		return 1
	}
	return 0
}

// verifyExact compares each partition's final checkpoint with an offline
// replay of the partition's events.
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
		var xs [][]float64
		var ys []float64
		var lab []bool
		for _, r := range recs {
			ev, err := codec.DecodeEvent(r.Value, codec.Limits{Dim: dim})
			if err != nil {
				continue
			}
			xs, ys, lab = append(xs, ev.Dense(nil, dim)), append(ys, ev.Y), append(lab, ev.HasY)
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
			_, l, err := eval.Replay(m.Spec, dim, xs, ys, lab)
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
