package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"okstream/checkpoint"
	"okstream/consumer"
	"okstream/internal/kafkasec"
	"okstream/internal/kafkautil"
)

func init() {
	register(command{name: "checkpoints", summary: "operate on checkpoints: reset one partition's state (e.g. after all its checkpoints were damaged)", run: runCheckpoints})
}

const checkpointsSynopsis = `checkpoints reset --brokers HOST:PORT --group GROUP --input TOPIC --partition N [--to-offset O | --start-offset earliest|latest] [flags]

  reset   discard every checkpoint of one input partition of one consumer
          group (tombstones for both slots' records) and give it a fresh
          checkpoint: every model fresh, resuming at --to-offset O, or
          without it at --start-offset (earliest: the partition's first
          retained offset, the default; latest: its end). The input topic
          and partition must exist and O must lie within the partition's
          offsets [first, end].

A fresh checkpoint rather than none: okstream run refuses to start fresh
models on a partition that has a committed group offset but no checkpoint
(lost checkpoints), unless --allow-fresh-start.

Meant for a partition that okstream run reports failed (no checkpoint of it
can be restored: okstream_partition_failed = 1, /readyz names it). The failed
partition retries its restore every 30 s and starts by itself after the
reset; the other partitions never stopped. A running, healthy owner of the
partition would overwrite the reset with its next checkpoint.`

const checkpointsExamples = `  okstream inspect checkpoints --brokers localhost:9092 --topic okstream.checkpoints --models
  okstream checkpoints reset --brokers localhost:9092 --group okstream --input events --partition 3
  okstream checkpoints reset --brokers localhost:9092 --group okstream --input events --partition 3 --to-offset 120000`

func runCheckpoints(args []string, stdout, stderr io.Writer) int {
	what := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		what, args = args[0], args[1:]
	}
	fs := newFlagSet("checkpoints", checkpointsSynopsis, checkpointsExamples, stderr)
	brokers := fs.String("brokers", "", "Kafka bootstrap brokers (or OKSTREAM_BROKERS)")
	topic := fs.String("checkpoint-topic", consumer.NewConfig().Checkpoints, "checkpoint topic")
	group := fs.String("group", consumer.NewConfig().Group, "consumer group of the pipeline")
	input := fs.String("input", "", "input topic of the pipeline (required)")
	partition := fs.Int("partition", -1, "input partition to reset (required)")
	toOffset := fs.Int64("to-offset", -1, "resume at this input offset with fresh models (within the partition's offsets; default: --start-offset)")
	startOffset := fs.String("start-offset", "earliest", "without --to-offset: resume at the partition's first retained offset (earliest) or at its end (latest)")
	var sf secFlags
	sf.register(fs)
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "okstream checkpoints: "+format+"\n", a...)
		return 2
	}
	if what != "reset" {
		return fail("say what to do: reset (see okstream checkpoints --help)")
	}
	if *input == "" {
		return fail("--input is required: the input topic of the pipeline (see okstream checkpoints --help)")
	}
	if *partition < 0 {
		return fail("--partition is required: the input partition to reset, 0 or more (see okstream checkpoints --help)")
	}
	toGiven := false
	fs.Visit(func(f *flag.Flag) { toGiven = toGiven || f.Name == "to-offset" })
	if toGiven && *toOffset < 0 {
		return fail("--to-offset %d: an offset is 0 or more; omit --to-offset to resume at --start-offset (earliest or latest)", *toOffset)
	}
	if *startOffset != "earliest" && *startOffset != "latest" {
		return fail("--start-offset %q: use earliest or latest", *startOffset)
	}
	conn, err := sf.connect(fs, *brokers, "checkpoints", stderr)
	if err != nil {
		return fail("%v", err)
	}
	defer conn.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The input partition must exist, and the offset lie within its log.
	parts, err := kafkautil.Partitions(ctx, conn.client, *input)
	if err != nil {
		return fail("input topic %s: %v (check --input: the topic okstream run reads, not its output or checkpoint topic)", *input, kafkasec.Explain(err))
	}
	if *partition >= parts {
		return fail("--partition %d: the input topic %s has %d partitions (0..%d)", *partition, *input, parts, parts-1)
	}
	first, end, err := kafkautil.Offsets(ctx, conn.client, *input, *partition)
	if err != nil {
		return fail("offsets of %s/%d: %v", *input, *partition, kafkasec.Explain(err))
	}
	switch {
	case !toGiven && *startOffset == "latest":
		*toOffset = end
	case !toGiven:
		*toOffset = first
	case *toOffset < first:
		return fail("--to-offset %d: retention has deleted the offsets before %d of %s/%d (it holds [%d, %d]): use --to-offset %d or more", *toOffset, first, *input, *partition, first, end, first)
	case *toOffset > end:
		return fail("--to-offset %d: beyond the end of %s/%d (it holds [%d, %d]): use --to-offset %d or less", *toOffset, *input, *partition, first, end, end)
	}
	cfg := checkpoint.Config{Brokers: conn.brokers, Topic: *topic, Client: conn.client}
	if _, err := checkpoint.OpenExisting(ctx, cfg); err != nil { // never create the topic here
		return fail("%v", kafkasec.Explain(err))
	}
	store, err := checkpoint.Open(ctx, cfg)
	if err != nil {
		return fail("%v", kafkasec.Explain(err))
	}
	defer store.Close()
	id := checkpoint.ID{Group: *group, Topic: *input, Partition: *partition}
	fresh := &checkpoint.Checkpoint{ID: id, NextOffset: *toOffset, Payload: consumer.ResetPayload()}
	n, err := store.Reset(ctx, id, fresh)
	if err != nil {
		return fail("%v", kafkasec.Explain(err))
	}
	fmt.Fprintf(stdout, "reset %s: %d records tombstoned; it resumes at offset %d with fresh models (the partition holds [%d, %d])\n", id, n, *toOffset, first, end)
	return 0
}
