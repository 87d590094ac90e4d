package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"okstream/checkpoint"
	"okstream/consumer"
	"okstream/internal/kafkasec"
)

func init() {
	register(command{name: "checkpoints", summary: "operate on checkpoints: reset one partition's state (e.g. after all its checkpoints were damaged)", run: runCheckpoints})
}

const checkpointsSynopsis = `checkpoints reset --brokers HOST:PORT --group GROUP --input TOPIC --partition N [--to-offset O] [flags]

  reset   discard every checkpoint of one input partition of one consumer
          group: tombstones for both slots' records. Without --to-offset the
          partition then starts like one that never had a checkpoint (at
          okstream run's --start-offset: earliest or latest); with
          --to-offset O it resumes at offset O with every model fresh.

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
	toOffset := fs.Int64("to-offset", -1, "resume at this input offset with fresh models (-1: no checkpoint at all; the partition starts at --start-offset)")
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
	if *input == "" || *partition < 0 {
		return fail("--input and --partition are required (see okstream checkpoints --help)")
	}
	conn, err := sf.connect(fs, *brokers, "checkpoints", stderr)
	if err != nil {
		return fail("%v", err)
	}
	defer conn.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
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
	var fresh *checkpoint.Checkpoint
	if *toOffset >= 0 {
		fresh = &checkpoint.Checkpoint{ID: id, NextOffset: *toOffset, Payload: consumer.ResetPayload()}
	}
	n, err := store.Reset(ctx, id, fresh)
	if err != nil {
		return fail("%v", kafkasec.Explain(err))
	}
	if fresh != nil {
		fmt.Fprintf(stdout, "reset %s: %d records tombstoned; it resumes at offset %d with fresh models\n", id, n, *toOffset)
	} else {
		fmt.Fprintf(stdout, "reset %s: %d records tombstoned; it starts without a checkpoint (at okstream run's --start-offset)\n", id, n)
	}
	return 0
}
