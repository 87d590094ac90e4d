// Package checkpoint stores model state in a compacted Kafka topic, so that
// a partition's models survive crashes, restarts and rebalances.
//
// # What is stored
//
// A Checkpoint belongs to one (consumer group, input topic, input
// partition): an opaque payload (the runtime puts every model's state and
// progressive statistics in it) and the next input offset to process. Because
// the learners are deterministic, any complete checkpoint is a consistent
// (state, position) pair: restoring it and reprocessing from its offset gives
// exactly the state an uninterrupted run would have.
//
// # Layout on the topic
//
// The payload is split into chunks no larger than the configured chunk size
// (kept below the broker's and the topic's max.message.bytes), each one Kafka
// record, followed by a manifest record written only after every chunk was
// acknowledged (acks=all). Records are keyed
//
//	okstream/v1/<group>/<topic>/<partition>/<slot>/c<i>   chunk i
//	okstream/v1/<group>/<topic>/<partition>/<slot>/m      manifest
//
// with two slots, A and B, used alternately (slot = sequence number mod 2),
// so that writing a checkpoint never overwrites the latest complete one;
// compaction keeps the newest record per key, i.e. at most two checkpoints
// per partition. All keys of one partition go to the same partition of the
// checkpoint topic (FNV-1a of the prefix), so a restore reads one partition.
//
// Every chunk carries its index, the checkpoint's epoch and a CRC-32C; the
// manifest carries the epoch, the next offset, the chunk count, each chunk's
// CRC and the SHA-256 of the whole payload. The epoch is (consumer-group
// generation, sequence number), compared lexicographically.
//
// # Failure modes and guarantees
//
//   - A crash while writing (a torn checkpoint) leaves chunks whose epoch does
//     not match the slot's manifest: Load detects it and uses the other slot.
//   - A corrupted chunk (CRC), a missing chunk, a wrong length or a payload
//     whose SHA-256 differs is rejected the same way; Load returns the newest
//     complete checkpoint and reports the rejected ones in LoadStats, each
//     with a Reason (a closed set, usable as a metric label).
//   - If manifests exist but none is complete, Load returns ErrNoValidCheckpoint
//     rather than silently starting from nothing.
//   - An epoch is written once. Save finishes what it has started even if
//     its context is cancelled, for up to Config.CancelGrace (default 5 s)
//     after the cancellation (kafka-go's WriteMessages returns at
//     cancellation while the records it queued are still written, so a
//     Save that returned there could see its manifest land after reporting
//     failure); a Save that still fails (a timeout) may land later all the
//     same. The runtime therefore retries with the next epoch of the same
//     slot (sequence + 2): the same epoch with another payload would leave
//     a manifest and chunks that agree on the epoch but not on the bytes
//     (rejected as chunk_crc, with no torn write to explain it), and the
//     other slot holds the last durable checkpoint.
//   - Load reads the checkpoint partition from its first offset up to the end
//     offset fetched when Load starts, and never waits for a record at the last
//     offset (compaction leaves holes; the last offsets may not exist).
//   - A stale writer (a "zombie" that lost the partition in a rebalance) can at
//     worst overwrite a slot with an older but complete checkpoint of the same
//     deterministic stream; restoring it is still exact, only more input is
//     reprocessed.
//
// Durability order (enforced by the runtime, documented here because it is
// what makes the above true): the predictions of every input record before
// NextOffset are acknowledged before Save is called, and the consumer group
// offset is committed only after Save returns.
//
// # Damaged and forged checkpoints
//
// CRC-32C and SHA-256 catch accidents, not forgeries: anyone who can write
// to the checkpoint topic can write records whose checksums are right and
// whose sizes and counts are lies. Only the topic's ACLs keep forged states
// out; what this package guarantees is that no record, forged or damaged,
// makes a reader panic or allocate beyond these limits (Config):
//
//   - MaxStateBytes (default 1 GiB) bounds a checkpoint's payload. A manifest
//     declaring more is rejected (ReasonTooLarge) before anything is
//     allocated for it; Save refuses larger payloads, so a writer never
//     produces what readers with the same limit reject.
//   - MaxChunks (default 65536) bounds the chunk count. A manifest declaring
//     more is rejected (ReasonTooManyChunks); chunk records with a higher
//     index are not kept.
//   - Every declared size is checked against the bytes actually present
//     before allocating: the manifest's CRC list against the manifest's own
//     length, and the payload is allocated only after the chunks present
//     were decoded and their lengths summed to exactly the declared size
//     (ReasonSizeMismatch otherwise). A forged size of 2^40 or 2^62 over 1 KiB
//     of chunks costs a few KiB.
//   - While reading, Load and Scan keep per slot at most one manifest record
//     and MaxStateBytes + 30 × MaxChunks bytes of chunk records; past that,
//     chunks of older epochs are dropped, then the slot's chunks (the slot is
//     then rejected as ReasonTooLarge). A restore therefore holds at most
//     about 2 × (MaxStateBytes + 30 × MaxChunks) of records plus the
//     assembled payloads (at most MaxStateBytes each, two at most).
//   - A manifest whose epoch belongs to the other slot, or that names another
//     (group, topic, partition), is rejected (ReasonForeign).
//
// A rejected slot never stops a restore by itself: LoadAll returns the
// complete checkpoints newest first, and the runtime restores the newest one
// whose payload also decodes, counting every rejected one in
// okstream_checkpoint_invalid_total{partition, reason} and logging it. If
// there is none, that partition refuses to start (it is reported failed,
// the others keep running) with an error naming each slot's reason (see
// package consumer); Store.Reset discards its checkpoints when the operator
// decides to. okstream inspect checkpoints applies
// the same checks and prints each rejected slot with its reason.
package checkpoint
