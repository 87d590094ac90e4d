package consumer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/internal/kafkautil"
)

// Record size limits of the output and dead-letter writers.
//
// kafka-go refuses, before sending anything, a record whose size exceeds
// its writer's BatchBytes (MessageTooLargeError), and a broker refuses a
// record batch larger than the topic's max.message.bytes
// (MESSAGE_TOO_LARGE). The writers' BatchBytes is therefore the smaller of
// writerMaxRecordBytes and the topic's max.message.bytes less
// recordHeadroom (the batch framing the broker counts and kafka-go does
// not), and the worker keeps every record it writes below that:
//
//   - a prediction record whose key and value exceed BatchBytes −
//     recordFraming is not written; the event is dead-lettered instead
//     (reason prediction_too_large);
//   - a dead letter copies at most deadLetterMax bytes of its record's key
//     and value: Config.DeadLetterMaxBytes, lowered to BatchBytes −
//     recordFraming − deadLetterHeaderRoom.
const (
	writerMaxRecordBytes = 1000000
	recordHeadroom       = 1024
	recordFraming        = 256
	deadLetterHeaderRoom = 2048 // reason + detail (≤ maxDetailBytes) + source + truncation headers
	maxDetailBytes       = 1024
)

// Dead-letter reasons of the output path.
const (
	// reasonPredictionTooLarge: the event's prediction record would exceed
	// the output writer's record limit (an id or key that long); the
	// dead letter carries the event, the models did learn from it.
	reasonPredictionTooLarge = "prediction_too_large"
	// reasonPredictionRefused: the broker refused the prediction record for
	// good (e.g. the output topic's max.message.bytes was lowered while
	// running); the dead letter carries the prediction record.
	reasonPredictionRefused = "prediction_refused"
	// reasonNamedFeatures: a version 3 event with named features ("f")
	// that this pipeline cannot learn from: its models are shared across
	// partitions (--share), whose feature dictionaries differ, or --dim
	// is above features.MaxDim.
	reasonNamedFeatures = "named_features_unsupported"
	// reasonFeatureKind: an event whose kind of features (dense x or
	// xi/xv, or named f) is not the one the partition's first event with
	// features fixed (checkpointed): a dense vector and the named-feature
	// dictionary's coordinates would mean different things to the same
	// models.
	reasonFeatureKind = "feature_kind_mismatch"
)

// Dead-letter headers of a truncated or reference-only dead letter.
const (
	HeaderTruncated  = "okstream-truncated"            // "true": key and/or value are a prefix (possibly empty)
	HeaderKeyBytes   = "okstream-original-key-bytes"   // the record's key length
	HeaderValueBytes = "okstream-original-value-bytes" // the record's value length
)

// recordLimit is the BatchBytes of a writer to a topic whose
// max.message.bytes is topicMax (≤ 0: unknown).
func recordLimit(topicMax int) int {
	if topicMax <= 0 {
		return writerMaxRecordBytes
	}
	return max(min(writerMaxRecordBytes, topicMax-recordHeadroom), 2*deadLetterHeaderRoom)
}

// topicMaxMessageBytes reads a topic's max.message.bytes (0 when it cannot).
func topicMaxMessageBytes(ctx context.Context, c *kafka.Client, topic string) int {
	cfg, err := kafkautil.TopicConfig(ctx, c, topic, "max.message.bytes")
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(cfg["max.message.bytes"])
	if err != nil {
		return 0
	}
	return n
}

// deadLetterMsg is the dead letter of a record with the given key and value:
// both whole (copies) when together they fit in limit bytes; otherwise the key cut to
// at most limit/2 bytes, the value to the rest, copied (so that the
// original's memory is not pinned), and the truncation headers added. The
// detail is cut to maxDetailBytes.
func deadLetterMsg(key, value []byte, limit int, reason, detail, source string) kafka.Message {
	m := kafka.Message{Headers: []kafka.Header{
		{Key: HeaderReason, Value: []byte(reason)},
		{Key: HeaderDetail, Value: []byte(clipString(detail, maxDetailBytes))},
		{Key: HeaderSource, Value: []byte(source)},
	}}
	if len(key)+len(value) <= limit {
		// Copies: the fetch's memory is reused once its records are
		// processed (kafkautil.Blocks), before the dead letter is written.
		m.Key, m.Value = bytes.Clone(key), bytes.Clone(value) // nil stays nil (a null key)
		return m
	}
	k := key[:min(len(key), limit/2)]
	v := value[:min(len(value), limit-len(k))]
	m.Key, m.Value = bytes.Clone(k), bytes.Clone(v) // nil stays nil (a null key)
	m.Headers = append(m.Headers,
		kafka.Header{Key: HeaderTruncated, Value: []byte("true")},
		kafka.Header{Key: HeaderKeyBytes, Value: []byte(strconv.Itoa(len(key)))},
		kafka.Header{Key: HeaderValueBytes, Value: []byte(strconv.Itoa(len(value)))})
	return m
}

// referenceOnly is a dead letter without key and value: its headers
// (reason, detail, source) are the reference to the record.
func referenceOnly(m kafka.Message) kafka.Message {
	out := kafka.Message{Headers: make([]kafka.Header, 0, len(m.Headers)+3)}
	truncated := false
	for _, h := range m.Headers {
		out.Headers = append(out.Headers, h)
		truncated = truncated || h.Key == HeaderTruncated
	}
	if !truncated {
		out.Headers = append(out.Headers,
			kafka.Header{Key: HeaderTruncated, Value: []byte("true")},
			kafka.Header{Key: HeaderKeyBytes, Value: []byte(strconv.Itoa(len(m.Key)))},
			kafka.Header{Key: HeaderValueBytes, Value: []byte(strconv.Itoa(len(m.Value)))})
	}
	return out
}

func header(m kafka.Message, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// clipString cuts s to at most n bytes on a UTF-8 boundary, marking the cut.
func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…(cut)"
	i := n - len(mark)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + mark
}

// refused reports whether a write error means the record can never be
// written as it is, so retrying it is pointless: kafka-go's
// MessageTooLargeError, and the broker's MESSAGE_TOO_LARGE,
// RECORD_LIST_TOO_LARGE, INVALID_MESSAGE_SIZE, INVALID_RECORD and
// INVALID_TIMESTAMP. Everything else — network errors, leader changes,
// NOT_ENOUGH_REPLICAS, timeouts, but also authorization failures and
// unknown topics, which an operator fixes for every record at once and
// which must not turn the whole stream into dead letters — is retried.
// CORRUPT_MESSAGE (kafka.InvalidMessage) is retried too, as kafka-go and the
// Java client do: it is a checksum failure in transit.
func refused(err error) bool {
	if err == nil {
		return false
	}
	var we kafka.WriteErrors
	if errors.As(err, &we) {
		n := 0
		for _, e := range we {
			if e != nil {
				if !refused(e) {
					return false
				}
				n++
			}
		}
		return n > 0
	}
	for _, code := range [...]kafka.Error{kafka.MessageSizeTooLarge, kafka.RecordListTooLarge,
		kafka.InvalidMessageSize, kafka.InvalidRecord, kafka.InvalidTimestamp} {
		if errors.Is(err, code) {
			return true
		}
	}
	return false
}

// messageWriter is what writeSorted needs of a writer: kafka-go's Writer
// contract for WriteMessages (recordWriter, produce.go).
type messageWriter interface {
	WriteMessages(ctx context.Context, msgs ...kafka.Message) error
}

// refusal is a record refused for good, with the error.
type refusal struct {
	msg kafka.Message
	err error
}

// writeSorted writes msgs and sorts out the outcome: records written are
// dropped, records refused for good (see refused) are returned in bad, and
// records that failed otherwise are returned in left with the last such
// error, for a retry. A broker refuses a whole batch at once, so the records
// of a refused batch are written again one by one to find the ones refused
// themselves. left reuses msgs' memory (so does the caller's next unit).
func writeSorted(ctx context.Context, wr messageWriter, msgs []kafka.Message) (left []kafka.Message, bad []refusal, err error) {
	for len(msgs) > 0 {
		err := wr.WriteMessages(ctx, msgs...)
		if err == nil {
			break
		}
		var tooLarge kafka.MessageTooLargeError
		if errors.As(err, &tooLarge) {
			// Checked before sending: nothing of this call was written.
			i := indexOf(msgs, tooLarge.Message)
			if i < 0 {
				return msgs, bad, err
			}
			bad = append(bad, refusal{msgs[i], err})
			msgs = append(msgs[:i], msgs[i+1:]...)
			continue
		}
		var we kafka.WriteErrors
		if !errors.As(err, &we) || len(we) != len(msgs) || ctx.Err() != nil {
			return msgs, bad, err // nothing known per record: retry them all
		}
		var suspects []kafka.Message
		left, err = msgs[:0], nil
		for i, e := range we {
			switch {
			case e == nil:
			case refused(e):
				suspects = append(suspects, msgs[i])
			default:
				left = append(left, msgs[i]) // in place: len(left) ≤ i
				err = e
			}
		}
		for _, m := range suspects {
			switch e := wr.WriteMessages(ctx, m); {
			case e == nil:
			case refused(e):
				bad = append(bad, refusal{m, e})
			default:
				left = append(left, m)
				err = e
			}
		}
		return left, bad, err
	}
	return msgs[:0], bad, nil
}

// indexOf finds m in msgs by identity of its key and value memory.
func indexOf(msgs []kafka.Message, m kafka.Message) int {
	same := func(a, b []byte) bool { return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b) }
	for i := range msgs {
		if same(msgs[i].Value, m.Value) && same(msgs[i].Key, m.Key) {
			return i
		}
	}
	return -1
}

// settle turns the output records refused for good into what replaces
// them: a refused prediction becomes a dead letter (reason
// prediction_refused) carrying the prediction record; a refused dead letter
// is retried once as a reference-only dead letter (no key, no value), and
// one that is refused even so is dropped, logged and counted in
// okstream_dead_letters_dropped_total. Nothing refused is retried as it
// was, so no record can hold up its partition.
func (w *worker) settle(u *unit, preds, dlq []refusal) {
	for _, r := range preds {
		source := "?"
		if pr, err := codec.DecodePredictionAny(r.msg.Value); err == nil {
			source = pr.Topic + "/" + strconv.Itoa(int(pr.Partition)) + "/" + strconv.FormatInt(pr.Offset, 10)
		}
		w.log.Warn("the broker refused a prediction record for good: dead-lettering it", "source", source, "bytes", len(r.msg.Key)+len(r.msg.Value), "err", r.err)
		w.p.m.deadLetters.WithLabelValues(reasonPredictionRefused).Inc()
		u.dlq = append(u.dlq, deadLetterMsg(r.msg.Key, r.msg.Value, w.p.dlqMax, reasonPredictionRefused,
			fmt.Sprintf("the broker refused the prediction record (%d bytes) of this source offset: %v; the value is the prediction record", len(r.msg.Key)+len(r.msg.Value), r.err), source))
	}
	for _, r := range dlq {
		reason, source := header(r.msg, HeaderReason), header(r.msg, HeaderSource)
		if len(r.msg.Key) > 0 || len(r.msg.Value) > 0 {
			w.log.Warn("the broker refused a dead letter: writing a reference-only dead letter instead", "reason", reason, "source", source, "err", r.err)
			u.dlq = append(u.dlq, referenceOnly(r.msg))
			continue
		}
		w.log.Error("the broker refused even a reference-only dead letter: dropping it", "reason", reason, "source", source, "err", r.err)
		w.p.m.dlqDropped.WithLabelValues(reason).Inc()
	}
}

// Stall is a stage of a partition's pipeline that has not made progress for
// longer than Config.StuckAfter.
type Stall struct {
	Stage string        // "write" (output unacknowledged) or "fetch" (fetches failing)
	For   time.Duration // how long
	Err   string        // the last error, if any
}

func (s Stall) String() string {
	what := "output unacknowledged"
	if s.Stage == "fetch" {
		what = "fetches failing"
	}
	out := what + " for " + s.For.Round(time.Second).String()
	if s.Err != "" {
		out += " (last error: " + clipString(s.Err, 300) + ")"
	}
	return out
}

// stallClock tracks since when a stage has been waiting, and its last error.
type stallClock struct {
	since    int64 // unix ns; 0: not waiting
	errorMsg string
}

// stalls returns the worker's stages waiting for longer than after
// (all waiting stages when after is 0), at now.
func (w *worker) stalls(now time.Time, after time.Duration) []Stall {
	w.stallMu.Lock()
	defer w.stallMu.Unlock()
	var out []Stall
	for _, s := range []struct {
		stage string
		c     *stallClock
	}{{"write", &w.writeStall}, {"fetch", &w.fetchStall}} {
		if s.c.since == 0 {
			continue
		}
		if d := now.Sub(time.Unix(0, s.c.since)); d >= after {
			out = append(out, Stall{Stage: s.stage, For: d, Err: s.c.errorMsg})
		}
	}
	return out
}

// waiting starts (once) or, with done, stops a stage's stall clock; err, if
// not nil, is remembered as its last error.
func (w *worker) waiting(c *stallClock, done bool, err error) {
	w.stallMu.Lock()
	defer w.stallMu.Unlock()
	switch {
	case done:
		c.since, c.errorMsg = 0, ""
	case c.since == 0:
		c.since = time.Now().UnixNano()
	}
	if err != nil {
		c.errorMsg = err.Error()
	}
}
