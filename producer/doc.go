// Package producer replays a dataset into a Kafka topic as okstream events
// (codec.Event, msgpack), at a target rate or as fast as the brokers take
// them, once or in a loop, with row, column or random keys.
//
// # What is sent
//
// Replay takes an in-memory *dataset.Dataset, already preprocessed by the
// caller (labels mapped, features scaled with a scaling fitted on the whole
// file), and a Config. Event number i (0, 1, 2, ...) is row Plan.Row(i) of
// the dataset: pass i / n over the n rows, in file order or, with Permute, in
// the order dataset.Permutation(n, Seed, pass) — a new permutation for every
// pass, and for pass 0 the same one `okstream eval` uses for its run 0 of
// that seed. The event is
//
//	v    1 (2 for feedback events)
//	id   IDPrefix + "<pass>-<row>"   (unique within one replay, also when looping)
//	ts   see TimeMode; the Kafka record time is set to the same instant
//	key  see KeyMode; also the Kafka record key
//	x    the row, dense; or xi/xv with Sparse (the non-zero entries; a row
//	     with none is sent as xi=[0], xv=[0], since an event needs a feature)
//	y    the row's label, unless the event is drawn unlabelled (Unlabelled)
//
// Values are the dataset's float64s bit for bit (msgpack float64); in the
// sparse form an entry counts as zero only if it is +0.0, so -0.0 survives.
// NewPlan computes the whole sequence without Kafka: Plan.Event(i) and
// Plan.Message(i) give event i and its exact record bytes, so tests (and the
// runtime's equivalence tests) can tell which event went where. Everything
// but the TimeNow timestamps is a pure function of (dataset, Config).
//
// # Partitioning and ordering
//
// Records are partitioned by key with kafka-go's Murmur2Balancer (unless
// Config.Balancer says otherwise): (murmur2(key) & 0x7fffffff) mod
// partitions, the Java client's default partitioner, which franz-go's
// default (StickyKeyPartitioner with its murmur2 KafkaHasher) and Kafka
// Streams share; librdkafka-based clients (kcat, confluent-kafka-*) agree
// when set to partitioner=murmur2_random (their default, consistent_random,
// is CRC32). The Writer's own default is round robin, which ignores keys,
// and kafka.Hash is FNV-1a (Sarama's), so neither is used. Partition(key, n)
// is the same function, for readers that want to know where a key went.
// Every event has a non-empty key, so the balancer's nil-key random
// fallback never applies.
//
// Within one partition records appear in replay order: one goroutine hands
// batches to the kafka-go Writer in order, and the Writer writes each
// partition's batches one at a time. Across partitions there is no order.
//
// # Delivery
//
// The Writer runs asynchronously with RequiredAcks = RequireAll and a
// Completion callback, a small BatchTimeout (5 ms) and per-partition batches
// of about BatchSize/partitions records, so batches fill and leave at once
// and only the tail of a replay waits for the timeout; BatchBytes is sized
// to the topic's max.message.bytes. At most a few calls' worth of events are
// unacknowledged at any time. Stats count acknowledged events only. kafka-go
// has no idempotent producer: a batch the broker wrote but whose
// acknowledgement was lost is retried and then appears twice (at-least-once);
// consumers de-duplicate by event id if they must.
//
// A write that fails after the Writer's retries stops the replay: Replay
// returns the stats so far and a *WriteError that says what to check.
// Cancelling the context stops the replay after the current call: events
// already handed to the Writer are flushed and counted (for at most
// Config.DrainTimeout), and Replay returns the stats with ctx.Err().
//
// # Rate
//
// With Rate > 0 events leave in small calls (about 10 ms' worth each) paced
// by a token bucket whose capacity is one such call, so the stream is smooth
// rather than a burst per second, and a stall is not followed by a catch-up
// burst: Rate is a ceiling, reached when the brokers keep up.
//
// # Event sources and event-time pacing
//
// ReplaySource sends any ordered sequence of events (a Source) with the
// same Writer, keys, ordering, delivery and error handling as Replay, one
// record per event with the event's key as record key and its ts as record
// time. StreamConfig.Speedup paces by event time instead of a rate: an
// event Δ later than the first in event time leaves Δ/Speedup after it
// (3600: an hour of log per second); 0 sends as fast as possible.
//
// KuaiRecSource is the Source of a KuaiRec 2.0 log (package
// okstream/dataset/kuairec): the interactions in replay order (timestamp,
// user_id, video_id), keyed by user_id, with the kuairec-v1 features, either
// labelled (schema version 1 events with y) or as delayed feedback: an
// impression (version 2, features, no y) at the interaction's time and a
// label-only feedback event (version 2, ref = the impression's id)
// play_duration later in event time — so, paced, play_duration / Speedup
// later in wall time. Its Headers name the feature schema version and the
// data (kuairec-synthetic/... for a synthetic sample).
package producer
