package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"time"
)

// Reason says, in one word usable as a metric label, why a checkpoint slot
// was rejected.
type Reason string

// The reasons a slot is rejected. The set is closed (metric labels stay
// bounded); Rejection.Detail carries the specifics.
const (
	// ReasonMalformed: a manifest or chunk record that does not parse (wrong
	// magic or version, truncated, the manifest's own CRC fails).
	ReasonMalformed Reason = "malformed"
	// ReasonForeign: the manifest names another (group, topic, partition).
	ReasonForeign Reason = "foreign_id"
	// ReasonTooLarge: the manifest declares a payload above MaxStateBytes,
	// or the slot's records exceeded what Load keeps for one slot.
	ReasonTooLarge Reason = "too_large"
	// ReasonTooManyChunks: the manifest declares more than MaxChunks chunks.
	ReasonTooManyChunks Reason = "too_many_chunks"
	// ReasonTorn: a chunk is missing or belongs to another epoch (a crash
	// between the chunks and the manifest of a later write).
	ReasonTorn Reason = "torn"
	// ReasonChunkCRC: a chunk's CRC-32C fails, or differs from the one the
	// manifest lists.
	ReasonChunkCRC Reason = "chunk_crc"
	// ReasonSizeMismatch: the chunks hold a different number of bytes than
	// the manifest declares.
	ReasonSizeMismatch Reason = "size_mismatch"
	// ReasonChecksum: the assembled payload's SHA-256 differs from the
	// manifest's.
	ReasonChecksum Reason = "checksum"
	// ReasonPayload is not produced by this package: callers use it when a
	// checkpoint that passed every check here holds a payload they cannot
	// decode (e.g. a learner state that fails its own validation).
	ReasonPayload Reason = "payload"
)

// Reasons lists every Reason (for pre-creating metric series).
func Reasons() []Reason {
	return []Reason{ReasonMalformed, ReasonForeign, ReasonTooLarge, ReasonTooManyChunks, ReasonTorn,
		ReasonChunkCRC, ReasonSizeMismatch, ReasonChecksum, ReasonPayload}
}

// Rejection describes a slot whose checkpoint was not used.
type Rejection struct {
	Slot   string // "A" or "B"
	Reason Reason
	Detail string // human-readable; names the epoch when the manifest was readable
}

func (r Rejection) String() string {
	return "slot " + r.Slot + " (" + string(r.Reason) + "): " + r.Detail
}

// invalid is a validation failure with its reason.
type invalid struct {
	reason Reason
	msg    string
}

func (e *invalid) Error() string { return e.msg }

func invalidf(r Reason, format string, a ...any) error {
	return &invalid{reason: r, msg: fmt.Sprintf(format, a...)}
}

// reasonOf is err's Reason (ReasonMalformed for an error without one).
func reasonOf(err error) Reason {
	var iv *invalid
	if errors.As(err, &iv) {
		return iv.reason
	}
	return ReasonMalformed
}

// DefaultMaxStateBytes is the default bound on one checkpoint's payload.
const DefaultMaxStateBytes = 1 << 30

// DefaultMaxChunks is the default bound on one checkpoint's chunk count
// (32 GiB at the default chunk size; a manifest of 256 KiB).
const DefaultMaxChunks = 1 << 16

// limits bound what reading checkpoints may allocate.
type limits struct {
	maxState  int64 // payload bytes of one checkpoint
	maxChunks int   // chunks of one checkpoint
}

func (c Config) limits() limits {
	l := limits{maxState: c.MaxStateBytes, maxChunks: c.MaxChunks}
	if l.maxState <= 0 {
		l.maxState = DefaultMaxStateBytes
	}
	if l.maxChunks <= 0 {
		l.maxChunks = DefaultMaxChunks
	}
	// Chunk indices and counts are 32-bit on the wire; the clamps keep
	// slotBytes from overflowing.
	l.maxChunks = min(l.maxChunks, math.MaxUint32)
	l.maxState = min(l.maxState, 1<<60)
	return l
}

// slotBytes is the most chunk-record bytes kept for one slot while reading:
// a checkpoint of maxState bytes in maxChunks chunks, headers included.
func (l limits) slotBytes() int64 { return l.maxState + int64(l.maxChunks)*chunkHeader }

// slotRecords collects one slot's records while a partition is read, in
// offset order (a later record of a key replaces the earlier one, as
// compaction would). It keeps at most limits.slotBytes() of chunk records
// and only chunk indices below maxChunks (no acceptable manifest refers to
// a higher one), so a flood of forged chunk records costs bounded memory.
type slotRecords struct {
	manifest []byte
	mtime    time.Time // the manifest record's timestamp (Checkpoint.Time)
	chunks   map[int][]byte
	bytes    int64 // sum of len over chunks
	dropped  int   // chunk records not kept (index ≥ maxChunks, or evicted)
	evicted  int   // of which evicted to stay within slotBytes
}

func (s *slotRecords) add(idx int, value []byte, lim limits) {
	if idx < 0 {
		s.manifest = value // nil for a tombstone
		return
	}
	if idx >= lim.maxChunks {
		s.dropped++
		return
	}
	if s.chunks == nil {
		s.chunks = map[int][]byte{}
	}
	s.bytes -= int64(len(s.chunks[idx]))
	if value == nil {
		delete(s.chunks, idx)
		return
	}
	s.chunks[idx] = value
	s.bytes += int64(len(value))
	if s.bytes <= lim.slotBytes() {
		return
	}
	// Over the bound. A legitimate slot only gets here with chunks of an
	// older write left behind (a larger state in smaller chunks): drop every
	// chunk of another epoch than this one, as a newer write supersedes them.
	ep := chunkEpochBytes(value)
	for i, v := range s.chunks {
		if ep == nil || !bytes.Equal(chunkEpochBytes(v), ep) {
			s.bytes -= int64(len(v))
			delete(s.chunks, i)
			s.dropped++
			s.evicted++
		}
	}
	if s.bytes > lim.slotBytes() {
		// Still over: the records of one epoch exceed what a valid
		// checkpoint can hold. Forget them; a later complete write (if any)
		// is collected afresh.
		s.dropped += len(s.chunks)
		s.evicted += len(s.chunks)
		s.chunks, s.bytes = nil, 0
	}
}

// assemble validates a slot (its manifest record and chunk records) and returns its checkpoint, or nil, the reason
// and a description. It never allocates from a declared size: the chunk
// list is bounded by the manifest's bytes and maxChunks, and the payload is
// allocated only after the chunks actually present were counted, checked
// against the manifest's size and against maxState.
func assemble(id ID, slot string, manifestBytes []byte, chunks map[int][]byte, lim limits) (*Checkpoint, Reason, string) {
	m, err := decodeManifest(manifestBytes, lim.maxChunks)
	if err != nil {
		return nil, reasonOf(err), err.Error()
	}
	where := "epoch " + m.epoch.String()
	if m.id != id {
		return nil, ReasonForeign, where + ": manifest belongs to " + m.id.String()
	}
	if m.epoch.Slot() != slot {
		return nil, ReasonForeign, where + ": manifest in slot " + slot + " but the epoch belongs to slot " + m.epoch.Slot()
	}
	if m.size > uint64(lim.maxState) {
		return nil, ReasonTooLarge, fmt.Sprintf("%s: manifest declares %d payload bytes, the limit (MaxStateBytes) is %d", where, m.size, lim.maxState)
	}
	parts := make([][]byte, len(m.crcs))
	var total uint64
	for i, want := range m.crcs {
		raw, ok := chunks[i]
		if !ok {
			return nil, ReasonTorn, fmt.Sprintf("%s: chunk %d of %d missing (torn write?)", where, i, len(m.crcs))
		}
		c, err := decodeChunk(raw)
		if err != nil {
			return nil, reasonOf(err), fmt.Sprintf("%s: chunk %d: %v", where, i, err)
		}
		if c.epoch != m.epoch {
			return nil, ReasonTorn, fmt.Sprintf("%s: chunk %d is from epoch %s (a later write was torn)", where, i, c.epoch)
		}
		if c.index != i || c.count != len(m.crcs) {
			return nil, ReasonTorn, fmt.Sprintf("%s: chunk %d says it is chunk %d of %d, the manifest lists %d", where, i, c.index, c.count, len(m.crcs))
		}
		if c.crc != want {
			return nil, ReasonChunkCRC, fmt.Sprintf("%s: chunk %d CRC differs from the manifest", where, i)
		}
		total += uint64(len(c.data))
		if total > m.size {
			return nil, ReasonSizeMismatch, fmt.Sprintf("%s: chunks 0..%d already hold %d bytes, the manifest says %d", where, i, total, m.size)
		}
		parts[i] = c.data
	}
	if total != m.size {
		return nil, ReasonSizeMismatch, fmt.Sprintf("%s: chunks hold %d bytes, the manifest says %d", where, total, m.size)
	}
	// total is both the bytes present and ≤ maxState.
	payload := make([]byte, 0, total)
	for _, p := range parts {
		payload = append(payload, p...)
	}
	if sum256(payload) != m.sum {
		return nil, ReasonChecksum, where + ": payload SHA-256 mismatch"
	}
	return &Checkpoint{ID: id, Epoch: m.epoch, NextOffset: m.nextOffset, Payload: payload}, "", ""
}
