package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"okstream/checkpoint"
	"okstream/consumer"
	"okstream/internal/kafkasec"
	"okstream/internal/kafkautil"
)

func init() {
	register(command{name: "topics", summary: "create the input, predictions, dead-letter and checkpoint topics of a deployment", run: runTopics})
}

const topicsSynopsis = `topics create --brokers HOST:PORT --input TOPIC [--partitions N] [--replication-factor R] [flags]

Creates the four topics of an okstream deployment, each unless it exists:

  input          --input, --partitions N (the unit of parallelism: at most N
                 instances share the work), replication --replication-factor
  predictions    --output (default INPUT.predictions), the input's partitions
  dead letters   --dead-letter (default INPUT.dlq), the input's partitions
  checkpoints    --checkpoint-topic (default okstream.checkpoints),
                 --checkpoint-partitions, compacted (cleanup.policy=compact,
                 segment.ms=3600000, min.cleanable.dirty.ratio=0.1)
  share sync     only with --share-topic NAME (okstream run --share; its
                 default name is CHECKPOINT-TOPIC.share): 1 partition,
                 compacted like the checkpoints

An existing topic is left as it is and reported with its partition count; an
existing checkpoint topic that is not compacted is an error (retention would
delete checkpoints; okstream run refuses it too). Extra topic configurations
are --input-config, --predictions-config, --dead-letter-config and
--checkpoint-config KEY=VALUE (repeatable), e.g. --input-config
retention.ms=604800000 or --checkpoint-config min.insync.replicas=2.
okstream run creates the missing output topics itself (--create-topics), but
not the input: producers that write to a topic that does not exist get an
error or, with some clients, send nothing at all when the brokers do not
auto-create topics (auto.create.topics.enable=false, as in scripts/kafka.sh
and docker-compose.yml). Create the topics first.

--brokers and the --tls/--sasl flags can also be set as OKSTREAM_BROKERS,
OKSTREAM_TLS_CA, ... (as for replay).`

const topicsExamples = `  # a single-broker development cluster (scripts/kafka.sh):
  okstream topics create --brokers localhost:9092 --input events --partitions 4

  # production: three replicas, a week of input, two in-sync replicas required
  okstream topics create --brokers kafka-1:9092,kafka-2:9092 --input events --partitions 12 \
    --replication-factor 3 --input-config retention.ms=604800000 \
    --input-config min.insync.replicas=2 --checkpoint-config min.insync.replicas=2`

func runTopics(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return topicsCommand(ctx, args, stdout, stderr, os.Getenv)
}

// topicsFlags are the flags of okstream topics create.
type topicsFlags struct {
	brokers, input, output, deadLetter, checkpoints string
	shareTopic                                      string
	partitions, replication, checkpointPartitions   int
	inputCfg, predCfg, dlqCfg, ckptCfg              listFlag
	sec                                             secFlags
}

func topicsCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlagSet("topics", topicsSynopsis, topicsExamples, stderr)
	var f topicsFlags
	d := consumer.NewConfig()
	fs.StringVar(&f.brokers, "brokers", "", "Kafka bootstrap brokers, comma-separated host:port (default: $OKSTREAM_BROKERS)")
	fs.StringVar(&f.input, "input", "", "input topic of the events (required)")
	fs.StringVar(&f.output, "output", "", "predictions topic (default INPUT.predictions, as okstream run)")
	fs.StringVar(&f.deadLetter, "dead-letter", "", "dead-letter topic (default INPUT.dlq, as okstream run)")
	fs.StringVar(&f.checkpoints, "checkpoint-topic", d.Checkpoints, "compacted checkpoint topic")
	fs.IntVar(&f.partitions, "partitions", 4, "partitions of the input topic (and of the predictions and dead-letter topics)")
	fs.IntVar(&f.replication, "replication-factor", 0, "replicas of every topic (0: the brokers' default.replication.factor)")
	fs.IntVar(&f.checkpointPartitions, "checkpoint-partitions", d.CheckpointPartitions, "partitions of the checkpoint topic (okstream run's --checkpoint-partitions)")
	fs.Var(&f.inputCfg, "input-config", "KEY=VALUE topic configuration of the input topic, repeatable (e.g. retention.ms=604800000)")
	fs.Var(&f.predCfg, "predictions-config", "KEY=VALUE topic configuration of the predictions topic, repeatable")
	fs.Var(&f.dlqCfg, "dead-letter-config", "KEY=VALUE topic configuration of the dead-letter topic, repeatable")
	fs.Var(&f.ckptCfg, "checkpoint-config", "KEY=VALUE topic configuration of the checkpoint topic, repeatable (cleanup.policy is always compact)")
	fs.StringVar(&f.shareTopic, "share-topic", "", "also create the sync topic of models shared across partitions (okstream run --share), compacted, 1 partition; okstream run's default name is CHECKPOINT-TOPIC.share")
	f.sec.register(fs)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if code, done := parseFlags(fs, args, stdout); done {
			return code
		}
		fmt.Fprintln(stderr, "okstream topics: give a subcommand: okstream topics create --brokers HOST:PORT --input TOPIC (see okstream help topics)")
		return 2
	}
	if args[0] != "create" {
		fmt.Fprintf(stderr, "okstream topics: unknown subcommand %q: use create (see okstream help topics)\n", args[0])
		return 2
	}
	if code, done := parseFlags(fs, args[1:], stdout); done {
		return code
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "okstream topics create: %v\n", err)
		return code
	}
	if err := f.sec.fromEnv(fs, getenv); err != nil {
		return fail(2, err)
	}
	specs, brokers, err := f.specs(getenv)
	if err != nil {
		return fail(2, err)
	}
	sec, err := f.sec.build(getenv, warnTo(stderr, "topics create"))
	if err != nil {
		return fail(2, err)
	}
	t := kafkasec.Transport(sec.TLS, sec.SASL)
	defer kafkasec.CloseTransport(t)
	c := kafkasec.Client(brokers, t, 10*time.Second)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for i, s := range specs {
		if i > 0 {
			// The predictions and dead-letter topics take the input's
			// partition count, as okstream run creates them.
			if n, err := kafkautil.Partitions(ctx, c, specs[0].Name); err == nil && n > 0 && s.Name != f.checkpoints && s.Name != f.shareTopic {
				s.Partitions = n
			}
		}
		created, err := kafkautil.EnsureTopic(ctx, c, s)
		if err != nil {
			if adv := kafkasec.Advice(err); adv != "" {
				err = fmt.Errorf("%w: %s", err, adv)
			}
			return fail(1, err)
		}
		n, err := kafkautil.Partitions(ctx, c, s.Name)
		if err != nil {
			return fail(1, fmt.Errorf("topic %s: reading its partitions: %w", s.Name, err))
		}
		if created {
			fmt.Fprintf(stdout, "created %s: %d partitions%s\n", s.Name, n, describeConfigs(s))
		} else {
			fmt.Fprintf(stdout, "exists  %s: %d partitions (left as it is)\n", s.Name, n)
		}
		if s.Name == f.checkpoints && !created {
			tc, err := kafkautil.TopicConfig(ctx, c, s.Name, "cleanup.policy")
			if err != nil {
				return fail(1, fmt.Errorf("checkpoint topic %s: %w", s.Name, err))
			}
			if p := tc["cleanup.policy"]; !strings.Contains(p, "compact") {
				return fail(1, fmt.Errorf("checkpoint topic %s has cleanup.policy=%s: retention would delete checkpoints; set cleanup.policy=compact on it or choose another --checkpoint-topic", s.Name, p))
			}
		}
	}
	return 0
}

// specs validates the flags and returns the topics to create, the input
// first, and the brokers.
func (f *topicsFlags) specs(getenv func(string) string) ([]kafkautil.TopicSpec, []string, error) {
	if f.brokers == "" {
		f.brokers = getenv("OKSTREAM_BROKERS")
	}
	var brokers []string
	for _, b := range strings.Split(f.brokers, ",") {
		if b = strings.TrimSpace(b); b == "" {
			continue
		}
		if _, port, err := net.SplitHostPort(b); err != nil || port == "" {
			return nil, nil, fmt.Errorf("--brokers: %q is not host:port; give e.g. --brokers localhost:9092", b)
		}
		brokers = append(brokers, b)
	}
	switch {
	case len(brokers) == 0:
		return nil, nil, errors.New("--brokers is required (or set OKSTREAM_BROKERS): the Kafka bootstrap servers, e.g. --brokers localhost:9092")
	case strings.TrimSpace(f.input) == "":
		return nil, nil, errors.New("--input is required: the topic the producers write events to, e.g. --input events")
	case f.partitions < 1:
		return nil, nil, fmt.Errorf("--partitions %d: a topic needs at least 1 partition", f.partitions)
	case f.checkpointPartitions < 1:
		return nil, nil, fmt.Errorf("--checkpoint-partitions %d: a topic needs at least 1 partition", f.checkpointPartitions)
	case f.replication < 0 || f.replication > 32767:
		return nil, nil, fmt.Errorf("--replication-factor %d: give the number of replicas, or 0 for the brokers' default", f.replication)
	}
	names := consumer.Config{Input: f.input, Output: f.output, DeadLetter: f.deadLetter, Checkpoints: f.checkpoints}.WithDefaults()
	var specs []kafkautil.TopicSpec
	for _, t := range []struct {
		flag, name string
		parts      int
		cfg        listFlag
	}{
		{"input-config", names.Input, f.partitions, f.inputCfg},
		{"predictions-config", names.Output, f.partitions, f.predCfg},
		{"dead-letter-config", names.DeadLetter, f.partitions, f.dlqCfg},
		{"checkpoint-config", names.Checkpoints, f.checkpointPartitions, f.ckptCfg},
	} {
		cfg := map[string]string{}
		for _, kv := range t.cfg {
			k, v, ok := strings.Cut(kv, "=")
			if k = strings.TrimSpace(k); !ok || k == "" {
				return nil, nil, fmt.Errorf("--%s %q: want KEY=VALUE, e.g. retention.ms=604800000", t.flag, kv)
			}
			cfg[k] = strings.TrimSpace(v)
		}
		if t.name == names.Checkpoints {
			if p, ok := cfg["cleanup.policy"]; ok && !strings.Contains(p, "compact") {
				return nil, nil, fmt.Errorf("--checkpoint-config cleanup.policy=%s: the checkpoint topic must be compacted", p)
			}
			cfg = checkpoint.TopicConfigs(cfg)
		}
		for _, s := range specs {
			if s.Name == t.name {
				return nil, nil, fmt.Errorf("topic %s named twice: give the input, output, dead-letter and checkpoint topics distinct names", t.name)
			}
		}
		specs = append(specs, kafkautil.TopicSpec{Name: t.name, Partitions: t.parts, Configs: cfg, Replication: f.replication})
	}
	if f.shareTopic != "" {
		for _, s := range specs {
			if s.Name == f.shareTopic {
				return nil, nil, fmt.Errorf("--share-topic %s is also the %s topic: give it its own name", f.shareTopic, s.Name)
			}
		}
		specs = append(specs, kafkautil.TopicSpec{Name: f.shareTopic, Partitions: 1, Configs: checkpoint.TopicConfigs(nil), Replication: f.replication})
	}
	return specs, brokers, nil
}

// describeConfigs is ", replication R, k=v, ..." for a created topic.
func describeConfigs(s kafkautil.TopicSpec) string {
	var b strings.Builder
	if s.Replication > 0 {
		fmt.Fprintf(&b, ", replication %d", s.Replication)
	}
	keys := make([]string, 0, len(s.Configs))
	for k := range s.Configs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, ", %s=%s", k, s.Configs[k])
	}
	return b.String()
}
