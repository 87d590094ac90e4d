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
//     complete checkpoint and reports the rejected ones in LoadStats.
//   - If manifests exist but none is complete, Load returns ErrNoValidCheckpoint
//     rather than silently starting from nothing.
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
package checkpoint
