package consumer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"

	"okstream/internal/kafkautil"
)

// recordWriter writes the worker's output records (predictions or dead
// letters) to one topic: one kafka.Client.RawProduce request (acks=all) per
// output partition of a call, its record batch encoded by
// kafkautil.AppendRecordBatch, sent concurrently when a call spans several.
// It replaces kafka-go's Writer on the hot path (issue 41): the Writer looked
// up the topic's metadata through the Transport's shared connection pool on
// every WriteMessages call (a third of okstream's CPU on 16 cores, most of
// it lock contention), re-batched records the worker had already batched,
// and allocated a few objects per record; kafka-go's record encoder costs
// 5× AppendRecordBatch (BenchmarkAppendRecordBatch). recordWriter allocates
// nothing per record.
//
// It keeps the Writer's contract as writeSorted relies on it:
//
//   - a record larger than the limit fails the whole call before anything
//     is sent, with kafka.MessageTooLargeError naming it;
//   - otherwise the call returns nil when every record was written, or
//     kafka.WriteErrors with one entry per message (nil: written) — a
//     broker rejects a partition's batch as a whole, so every record of a
//     rejected batch carries the broker's error; when the broker names the
//     culprits (KIP-467 record errors) the others carry a retriable error
//     instead, so that only the culprits are refused for good;
//   - records of one partition are written in the order given, in one
//     request: all or none of them.
//
// A call is not retried inside: the worker's write loop retries what
// failed. The partition of a record is m.Partition when balancer is nil
// (effectively-once: the worker's own partition) and the key hash of
// kafka.Murmur2Balancer otherwise (at-least-once: the Writer's partitioning,
// unchanged), over the topic's partition count, looked up again every
// partsTTL.
type recordWriter struct {
	client   *kafka.Client
	topic    string
	limit    int            // the largest record accepted (BatchBytes of the old Writer)
	balancer kafka.Balancer // nil: m.Partition

	partsMu   sync.Mutex
	parts     []int // 0..n-1: the topic's partitions, for balancer
	partsTime time.Time

	scratch sync.Pool // *produceScratch
	closed  atomic.Bool
}

// partsTTL is how long recordWriter trusts a partition count (a topic's
// partitions can be added while okstream runs; records then spread over
// them within partsTTL, as with the Writer's metadata refresh).
const partsTTL = 30 * time.Second

// newRecordWriter returns a writer to topic for records of at most limit
// bytes (kafka-go's Message size accounting), partitioned by balancer (nil:
// each record's Partition).
func newRecordWriter(client *kafka.Client, topic string, limit int, balancer kafka.Balancer) *recordWriter {
	return &recordWriter{client: client, topic: topic, limit: limit, balancer: balancer}
}

// Close makes later writes fail with io.ErrClosedPipe (as the Writer's);
// there is nothing to flush.
func (rw *recordWriter) Close() error {
	rw.closed.Store(true)
	return nil
}

// produceScratch is one call's reusable memory: the message indices of
// each partition's batch, the record sets, and the per-message errors.
type produceScratch struct {
	order []int32     // message indices grouped by partition
	sets  []recordSet // one per partition of the call
	errs  []error
	count []int // groupBy's counting sort
}

// WriteMessages writes msgs (see recordWriter). It is safe for concurrent
// use.
func (rw *recordWriter) WriteMessages(ctx context.Context, msgs ...kafka.Message) error {
	if rw.closed.Load() {
		return io.ErrClosedPipe
	}
	if len(msgs) == 0 {
		return nil
	}
	for i := range msgs {
		if messageSize(&msgs[i]) > rw.limit {
			return kafka.MessageTooLargeError{Message: msgs[i], Remaining: append(append([]kafka.Message(nil), msgs[:i]...), msgs[i+1:]...)}
		}
	}
	s, _ := rw.scratch.Get().(*produceScratch)
	if s == nil {
		s = &produceScratch{}
	}
	defer func() {
		// After a cancellation kafka-go may still be reading a record set
		// (the request is written by the connection's goroutine): the
		// scratch is then dropped, not reused.
		if ctx.Err() == nil {
			rw.scratch.Put(s)
		}
	}()
	if err := rw.group(ctx, s, msgs); err != nil {
		return err
	}
	s.errs = append(s.errs[:0], make([]error, len(msgs))...)
	now := time.Now()
	if len(s.sets) == 1 {
		rw.produce(ctx, &s.sets[0], msgs, s.errs, now)
	} else {
		var wg sync.WaitGroup
		for i := range s.sets {
			wg.Add(1)
			go func(set *recordSet) { defer wg.Done(); rw.produce(ctx, set, msgs, s.errs, now) }(&s.sets[i])
		}
		wg.Wait()
	}
	failed := false
	for _, e := range s.errs {
		if e != nil {
			failed = true
			break
		}
	}
	if !failed {
		clear(s.errs)
		return nil
	}
	we := make(kafka.WriteErrors, len(msgs))
	copy(we, s.errs)
	clear(s.errs)
	return we
}

// group sorts msgs' indices into s.order by partition (stable: the order
// given within a partition) and sets up one record set per partition.
func (rw *recordWriter) group(ctx context.Context, s *produceScratch, msgs []kafka.Message) error {
	s.order = s.order[:0]
	s.sets = s.sets[:0]
	if rw.balancer == nil {
		// Effectively-once: the worker's records all go to its partition;
		// group by Partition all the same (stable).
		first := msgs[0].Partition
		same := true
		for i := range msgs {
			s.order = append(s.order, int32(i))
			same = same && msgs[i].Partition == first
		}
		if same && first >= 0 {
			s.addSet(first, 0, len(msgs))
			return nil
		}
		return s.groupBy(msgs) // (refuses a record with no partition)
	}
	parts, err := rw.partitions(ctx)
	if err != nil {
		return err
	}
	for i := range msgs {
		msgs[i].Partition = rw.balancer.Balance(msgs[i], parts...)
	}
	return s.groupBy(msgs)
}

// groupBy fills s.order with msgs' indices grouped by partition, in
// increasing partition order and, within one, in the order given (a
// counting sort), and adds a record set per partition.
func (s *produceScratch) groupBy(msgs []kafka.Message) error {
	top := 0
	for i := range msgs {
		p := msgs[i].Partition
		if p < 0 {
			return fmt.Errorf("record %d has no output partition", i)
		}
		top = max(top, p)
	}
	s.count = append(s.count[:0], make([]int, top+2)...)
	for i := range msgs {
		s.count[msgs[i].Partition+1]++
	}
	for p := 1; p < len(s.count); p++ {
		s.count[p] += s.count[p-1]
	}
	// s.count[p] is now where partition p's indices start.
	s.order = append(s.order[:0], make([]int32, len(msgs))...)
	for p := 0; p <= top; p++ {
		if s.count[p+1] > s.count[p] {
			s.addSet(p, s.count[p], s.count[p+1])
		}
	}
	for i := range msgs {
		p := msgs[i].Partition
		s.order[s.count[p]] = int32(i)
		s.count[p]++
	}
	return nil
}

// addSet adds the record set of partition p: messages s.order[from:to].
func (s *produceScratch) addSet(p, from, to int) {
	if len(s.sets) < cap(s.sets) {
		s.sets = s.sets[:len(s.sets)+1]
	} else {
		s.sets = append(s.sets, recordSet{})
	}
	set := &s.sets[len(s.sets)-1]
	set.partition, set.from, set.to = p, from, to
	set.order = s.order
}

// partitions returns 0..n-1 for the topic's partition count n (cached for
// partsTTL).
func (rw *recordWriter) partitions(ctx context.Context) ([]int, error) {
	rw.partsMu.Lock()
	defer rw.partsMu.Unlock()
	if rw.parts != nil && time.Since(rw.partsTime) < partsTTL {
		return rw.parts, nil
	}
	n, err := kafkautil.Partitions(ctx, rw.client, rw.topic)
	if err != nil {
		if rw.parts != nil {
			return rw.parts, nil // keep the last known count through a blip
		}
		return nil, fmt.Errorf("topic %s: %w", rw.topic, err)
	}
	parts := make([]int, n)
	for i := range parts {
		parts[i] = i
	}
	rw.parts, rw.partsTime = parts, time.Now()
	return parts, nil
}

// produce writes one partition's records and sets errs for its messages
// (left nil when written).
func (rw *recordWriter) produce(ctx context.Context, set *recordSet, msgs []kafka.Message, errs []error, now time.Time) {
	res, err := rw.client.RawProduce(ctx, &kafka.RawProduceRequest{
		Topic: rw.topic, Partition: set.partition, RequiredAcks: kafka.RequireAll, RawRecords: set.encode(msgs, now),
	})
	idx := set.order[set.from:set.to]
	if err == nil && res.Error == nil {
		return
	}
	if err != nil {
		for _, i := range idx {
			errs[i] = err
		}
		return
	}
	// The broker rejected the batch. With record errors (KIP-467) it names
	// the records at fault: they carry its error, the others a retriable
	// one; without, every record carries its error.
	for k, i := range idx {
		switch e, named := res.RecordErrors[k]; {
		case len(res.RecordErrors) == 0:
			errs[i] = res.Error
		case named:
			errs[i] = fmt.Errorf("%w (record: %v)", res.Error, e)
		default:
			errs[i] = errBatchRejected{res.Error}
		}
	}
}

// errBatchRejected is the error of a record written in a batch the broker
// rejected for another record of it: retried, never refused.
type errBatchRejected struct{ cause error }

func (e errBatchRejected) Error() string {
	return "the broker rejected the batch for another record of it: " + e.cause.Error()
}

// messageSize is kafka-go's size accounting of a message (the Writer's
// Message.totalSize): what the limit is compared with.
func messageSize(m *kafka.Message) int {
	n := 4 + 1 + 1 + 4 + len(m.Key) + 4 + len(m.Value) + 8
	n += varIntLen(len(m.Headers))
	for _, h := range m.Headers {
		n += varIntLen(len(h.Key)) + len(h.Key) + varIntLen(len(h.Value)) + len(h.Value)
	}
	return n
}

// varIntLen is the length of v as a zig-zag varint.
func varIntLen(v int) int {
	u := uint64(int64(v)<<1 ^ int64(v)>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// recordSet is one partition's records of a call, encoded as a raw
// record batch (kafkautil.AppendRecordBatch) into memory reused from call
// to call.
type recordSet struct {
	partition int
	order     []int32 // the call's message indices; this set's are order[from:to]
	from, to  int
	msgs      []kafka.Message // this set's messages, when not the call's
	buf       []byte
	rd        bytes.Reader
}

// encode encodes the set's records: msgs[order[from:to]], or msgs itself
// when the set is the whole call (in order).
func (s *recordSet) encode(msgs []kafka.Message, now time.Time) protocol.RawRecordSet {
	view := msgs
	if s.to-s.from != len(msgs) {
		s.msgs = s.msgs[:0]
		for _, i := range s.order[s.from:s.to] {
			s.msgs = append(s.msgs, msgs[i])
		}
		view = s.msgs
	}
	s.buf = kafkautil.AppendRecordBatch(s.buf[:0], view, now)
	clear(s.msgs) // drop the references to the messages' memory
	s.rd.Reset(s.buf)
	return protocol.RawRecordSet{Reader: &s.rd}
}
