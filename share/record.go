package share

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"okstream/learner/state"
)

// Records exchanged through the sync topic (a compacted Kafka topic): a
// Delta per partition and epoch, and a Decision per partition and boundary
// where the frontier left the strict schedule. Both are keyed by slot
// (epoch mod the window W), so the topic holds at most W records of each
// kind per partition; a reader checks the epoch inside the record and
// tells an older or newer one apart (see Key and Window).

// Record kinds.
const (
	KindDelta    = 1
	KindDecision = 2
	// KindIdle says whether a partition has run out of input (with
	// --share-skip-idle): Epoch is the next epoch it will make a delta of
	// (every earlier one is on the topic before this record), Idle whether
	// it is idle now. One slot per partition (the latest state): other
	// instances do not wait for an idle partition's next delta, as its own
	// instance does not (issue 37: a partition of another instance was
	// waited for up to --share-max-wait).
	KindIdle = 3
)

const (
	recordMagic   = 0x44534b4f // "OKSD"
	recordVersion = 1
)

// ModelDelta is one shared model's ShareDelta output.
type ModelDelta struct {
	Model string
	Data  []byte
}

// Record is a decoded sync-topic record.
type Record struct {
	Kind       int
	Partition  int
	Epoch      int64
	Partitions int   // P when it was written
	Offset     int64 // the writer's next input offset at the boundary (diagnostics, and a check of Decisions)
	// Deltas (KindDelta), in the configured order of the shared models.
	Deltas []ModelDelta
	// Frontier (KindDecision): the frontier applied at the boundary.
	Frontier []int64
	// Idle (KindIdle): the partition has no input past Offset.
	Idle bool
}

// ErrRecord marks a sync record that does not decode.
var ErrRecord = errors.New("share: malformed sync record")

// Encode returns the record's bytes (deterministic).
func (r *Record) Encode() []byte {
	n := 64
	for _, d := range r.Deltas {
		n += len(d.Model) + len(d.Data) + 16
	}
	e := state.NewEncoder(n + 8*len(r.Frontier))
	e.U32(recordMagic)
	e.U32(recordVersion)
	e.U8(uint8(r.Kind))
	e.Int(r.Partition)
	e.I64(r.Epoch)
	e.Int(r.Partitions)
	e.I64(r.Offset)
	switch r.Kind {
	case KindDelta:
		e.U32(uint32(len(r.Deltas)))
		for _, d := range r.Deltas {
			e.String(d.Model)
			e.Blob(d.Data)
		}
	case KindDecision:
		e.U32(uint32(len(r.Frontier)))
		for _, v := range r.Frontier {
			e.I64(v)
		}
	case KindIdle:
		e.Bool(r.Idle)
	}
	return e.Bytes()
}

// maxPartitions bounds P in a decoded record (Kafka's own practical limit
// is far lower).
const maxPartitions = 1 << 16

// Decode parses a record written by Encode. Untrusted bytes size nothing
// before they are checked against the bytes present.
func Decode(b []byte) (*Record, error) {
	d := state.NewDecoder(b)
	if d.U32() != recordMagic || d.U32() != recordVersion {
		if d.Err() != nil {
			return nil, fmt.Errorf("%w: %v", ErrRecord, d.Err())
		}
		return nil, fmt.Errorf("%w: not an okstream sync record of a version this build reads", ErrRecord)
	}
	r := &Record{Kind: int(d.U8())}
	r.Partition = d.IntIn(0, maxPartitions-1, "partition")
	r.Epoch = d.I64()
	r.Partitions = d.IntIn(1, maxPartitions, "partitions")
	r.Offset = d.I64()
	switch r.Kind {
	case KindDelta:
		n := int(d.U32())
		if d.Need(n, 8, "deltas") {
			for i := 0; i < n && d.Err() == nil; i++ {
				r.Deltas = append(r.Deltas, ModelDelta{Model: d.String(), Data: d.Blob()})
			}
		}
	case KindDecision:
		n := int(d.U32())
		if d.Err() == nil && n != r.Partitions {
			d.Fail("decision frontier of %d partitions in a record of %d", n, r.Partitions)
		}
		if d.Need(n, 8, "frontier") {
			r.Frontier = make([]int64, n)
			for i := range r.Frontier {
				r.Frontier[i] = d.I64()
			}
		}
	case KindIdle:
		r.Idle = d.Bool()
	default:
		d.Fail("unknown record kind %d", r.Kind)
	}
	if err := d.Done(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRecord, err)
	}
	if r.Epoch < 0 {
		return nil, fmt.Errorf("%w: negative epoch %d", ErrRecord, r.Epoch)
	}
	return r, nil
}

// PeekLen is how many leading bytes of an encoded record Peek reads.
const PeekLen = 25

// Peek reads an encoded record's kind, partition and epoch from its first
// PeekLen bytes, without decoding the rest (ok false if b is not a record
// of this version; Decode checks the whole).
func Peek(b []byte) (kind, partition int, epoch int64, ok bool) {
	if len(b) < PeekLen || binary.LittleEndian.Uint32(b) != recordMagic || binary.LittleEndian.Uint32(b[4:]) != recordVersion {
		return 0, 0, 0, false
	}
	p, e := int64(binary.LittleEndian.Uint64(b[9:])), int64(binary.LittleEndian.Uint64(b[17:]))
	if p < 0 || p >= maxPartitions || e < 0 {
		return 0, 0, 0, false
	}
	return int(b[8]), int(p), e, true
}

// SameHeader reports whether b, an encoded record, has r's kind, partition
// and epoch (without decoding the rest): a reader that already holds r can
// skip b, since a partition's record of one epoch is deterministic.
func SameHeader(r *Record, b []byte) bool {
	k, p, e, ok := Peek(b)
	return ok && k == r.Kind && p == r.Partition && e == r.Epoch
}

// Key is the sync-topic key of partition p's record of the given kind for
// epoch e: prefix/p/d/slot (deltas) or prefix/p/x/slot (decisions), slot =
// e mod window. prefix names the pipeline (group and input topic).
func Key(prefix string, kind, p int, e int64, window int64) string {
	return string(AppendKey(nil, prefix, kind, p, e, window))
}

// AppendKey appends Key(prefix, kind, p, e, window) to dst.
func AppendKey(dst []byte, prefix string, kind, p int, e int64, window int64) []byte {
	k := byte('d')
	switch kind {
	case KindDecision:
		k = 'x'
	case KindIdle:
		k, e = 'i', 0 // one slot: the latest state
	}
	dst = append(dst, prefix...)
	dst = append(dst, '/')
	dst = strconv.AppendInt(dst, int64(p), 10)
	dst = append(dst, '/', k, '/')
	return strconv.AppendInt(dst, e%window, 10)
}

// Prefix is the key prefix of a pipeline's records.
func Prefix(group, input string) string { return group + "/" + input }

// Window is the least slot count W that keeps every record a recovering
// partition needs: the epochs between the checkpoint it restores and the
// furthest it had got (ckptEpochs: the runtime counts two checkpoint
// intervals and two micro-batches, for a fallback to the older checkpoint),
// what the others may have published past it while they waited for it
// (L+1), and the lag behind its checkpoint (L), plus two.
func Window(ckptEpochs, lag int64) int64 { return ckptEpochs + 2*lag + 2 }

// Reasons a reader refuses a control record (the label of
// okstream_control_records_rejected_total; a small fixed set).
const (
	ReasonBadMAC         = "bad_mac"         // a MAC that does not verify under the secret
	ReasonUnsigned       = "unsigned"        // no MAC while a secret is set
	ReasonMalformed      = "malformed"       // does not decode, or its key does not match it
	ReasonPartitionRange = "partition_range" // partition ≥ P, or written for another P
	ReasonEpochRange     = "epoch_range"     // an epoch its offsets or the input cannot have reached
	ReasonFrontierRange  = "frontier_range"  // a decision's frontier outside [−1, e − L]
	ReasonDeltaInvalid   = "delta_invalid"   // a delta its learner refuses (sizes, finiteness, magnitude)
	ReasonUnitRange      = "unit_range"      // effectively-once: okstream-unit above the source offset or too far below
)

// Reasons lists every reason, in a fixed order.
var Reasons = []string{ReasonBadMAC, ReasonUnsigned, ReasonMalformed, ReasonPartitionRange,
	ReasonEpochRange, ReasonFrontierRange, ReasonDeltaInvalid, ReasonUnitRange}

// Invalid is the error of a record Validate refuses.
type Invalid struct {
	Reason string
	Err    error
}

func (e *Invalid) Error() string { return "share: " + e.Reason + ": " + e.Err.Error() }
func (e *Invalid) Unwrap() error { return e.Err }

func invalid(reason, format string, a ...any) *Invalid {
	return &Invalid{Reason: reason, Err: fmt.Errorf(format, a...)}
}

// Limits are what a reader checks a decoded record against (Validate).
type Limits struct {
	Partitions int   // P, the input's partition count
	Every      int64 // S, input records per epoch
	Lag        int64 // L
	// Models are the shared models, in the configured order: a delta
	// record holds exactly these, in this order.
	Models []string
	// Check, if set, checks model i's delta (learner.DeltaChecker).
	Check func(i int, data []byte) error
}

// Validate checks a decoded record against the pipeline's configuration,
// with or without a secret (issue 37); an error is an *Invalid. The rules,
// each a function of the record and the configuration alone (so every
// instance accepts or refuses a record alike):
//
//   - partition_range: Partition < P and Partitions = P (a record written
//     for another partition count belongs to another pipeline's history);
//   - epoch_range: the boundary of epoch e follows the (e+1)·S-th input
//     record the partition consumed, each at its own offset below the
//     writer's next offset, so (e+1)·S ≤ Offset (the consumer also checks
//     Offset against the input's high watermark; see
//     consumer/share_validate.go);
//   - frontier_range (decisions): every F[q] is in [−1, max(e − L, −1)]: a
//     boundary e merges no epoch later than e − L, and −1 is "nothing yet";
//   - delta_invalid (deltas): exactly the configured shared models, in
//     order, each delta accepted by Check (sizes, finite values, bounded
//     magnitudes).
func (r *Record) Validate(lim Limits) error {
	if lim.Partitions > 0 && (r.Partition >= lim.Partitions || r.Partitions != lim.Partitions) {
		return invalid(ReasonPartitionRange, "record of partition %d written for %d partitions; the input has %d", r.Partition, r.Partitions, lim.Partitions)
	}
	if r.Partition < 0 || r.Epoch < 0 {
		return invalid(ReasonMalformed, "negative partition or epoch")
	}
	ended := r.Epoch + 1 // epochs the writer has ended: a delta's or decision's own, and the earlier ones
	if r.Kind == KindIdle {
		ended = r.Epoch // the next epoch: not ended yet
	}
	if s := lim.Every; s > 0 && (r.Offset < 0 || r.Offset/s < ended) {
		return invalid(ReasonEpochRange, "%d epochs ended after %d records, but the writer's next offset was %d", ended, ended*s, r.Offset)
	}
	switch r.Kind {
	case KindDecision:
		if len(r.Frontier) != r.Partitions {
			return invalid(ReasonMalformed, "decision frontier of %d partitions in a record of %d", len(r.Frontier), r.Partitions)
		}
		hi := max(r.Epoch-max(lim.Lag, 1), -1) // as Plan's target
		for q, f := range r.Frontier {
			if f < -1 || f > hi {
				return invalid(ReasonFrontierRange, "decision of boundary %d: F[%d] = %d outside [-1, %d]", r.Epoch, q, f, hi)
			}
		}
	case KindDelta:
		if lim.Models != nil {
			if len(r.Deltas) != len(lim.Models) {
				return invalid(ReasonDeltaInvalid, "%d model deltas, %d shared models configured", len(r.Deltas), len(lim.Models))
			}
			for i, d := range r.Deltas {
				if d.Model != lim.Models[i] {
					return invalid(ReasonDeltaInvalid, "model delta %d is %q, the configured shared model is %q", i, d.Model, lim.Models[i])
				}
			}
		}
		if lim.Check != nil {
			for i, d := range r.Deltas {
				if err := lim.Check(i, d.Data); err != nil {
					return &Invalid{Reason: ReasonDeltaInvalid, Err: fmt.Errorf("model %s: %w", d.Model, err)}
				}
			}
		}
	case KindIdle:
	default:
		return invalid(ReasonMalformed, "unknown record kind %d", r.Kind)
	}
	return nil
}
