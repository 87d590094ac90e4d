package producer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/dataset"
	"okstream/internal/kafkasec"
	"okstream/internal/kafkautil"
	"okstream/internal/progress"
)

// Stats describe a replay.
type Stats struct {
	Events   int64 // events acknowledged by the brokers
	Bytes    int64 // their key and value bytes
	Labelled int64 // acknowledged events that carried a label
	// Sent counts events handed to the Writer; Sent − Events were not
	// acknowledged when Replay returned (a failed write, or a drain that
	// timed out after a cancellation).
	Sent int64
	// Partitions counts acknowledged events per partition.
	Partitions []int64
	Elapsed    time.Duration
}

// Rate returns acknowledged events per second.
func (s Stats) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Events) / s.Elapsed.Seconds()
}

// String returns e.g. "12000 events, 2.41 MB in 0.52 s (23077 events/s)".
func (s Stats) String() string {
	return fmt.Sprintf("%d events, %.2f MB in %.2f s (%.0f events/s)",
		s.Events, float64(s.Bytes)/1e6, s.Elapsed.Seconds(), s.Rate())
}

// WriteError is a write the brokers did not acknowledge (after the Writer's
// retries). Replay stops at the first one.
type WriteError struct {
	Topic   string
	Brokers []string
	Acked   int64 // events acknowledged before Replay returned
	Err     error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("producer: writing to topic %q failed after %d acknowledged events: %s (error: %v)",
		e.Topic, e.Acked, hint(e.Err, e.Topic, e.Brokers), e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// hint says what to do about a write error.
func hint(err error, topic string, brokers []string) string {
	var tooLarge kafka.MessageTooLargeError
	var netErr net.Error
	switch {
	case kafkasec.Advice(err) != "":
		return kafkasec.Advice(err)
	case errors.Is(err, kafka.MessageSizeTooLarge), errors.As(err, &tooLarge):
		return "a batch is larger than the topic accepts: raise the topic's max.message.bytes, or lower BatchBytes / --batch-size"
	case errors.Is(err, kafka.UnknownTopicOrPartition):
		return fmt.Sprintf("topic %q does not exist (any more): create it (okstream replay --create-topic, or kafka-topics.sh --create) or check the name", topic)
	case errors.Is(err, kafka.NotEnoughReplicas), errors.Is(err, kafka.NotEnoughReplicasAfterAppend):
		return "fewer replicas are in sync than the topic's min.insync.replicas, so acks=all cannot be met: check the brokers, or lower min.insync.replicas"
	case errors.Is(err, kafka.TopicAuthorizationFailed), errors.Is(err, kafka.ClusterAuthorizationFailed):
		return "the client is not authorized to write to this topic: grant Write on it"
	case errors.As(err, &netErr), errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, kafka.RequestTimedOut):
		return fmt.Sprintf("the brokers (%s) did not answer: check that Kafka is running and reachable from here", strings.Join(brokers, ","))
	}
	return "check the brokers' logs and rerun; the acknowledged events are in the topic, and a rerun appends them again"
}

// ackMeta travels with a message (kafka.Message.WriterData) to Completion.
type ackMeta struct {
	i        int64
	labelled bool
}

// tracker counts acknowledgements and bounds the events in flight.
type tracker struct {
	mu       sync.Mutex
	acked    int64
	bytes    int64
	labelled int64
	parts    []int64
	inflight int64
	err      error // first failed write
	wake     chan struct{}
	bar      *progress.Bar
	onAck    func(i int64, partition int, offset int64)
}

// complete is the Writer's Completion callback.
func (t *tracker) complete(msgs []kafka.Message, err error) {
	t.mu.Lock()
	t.inflight -= int64(len(msgs))
	if err != nil {
		if t.err == nil {
			t.err = err
		}
	} else {
		for k := range msgs {
			m := &msgs[k]
			t.acked++
			t.bytes += int64(len(m.Key) + len(m.Value))
			meta, _ := m.WriterData.(*ackMeta)
			if meta != nil && meta.labelled {
				t.labelled++
			}
			if m.Partition >= len(t.parts) {
				t.parts = append(t.parts, make([]int64, m.Partition+1-len(t.parts))...)
			}
			t.parts[m.Partition]++
			if t.onAck != nil && meta != nil {
				t.onAck(meta.i, m.Partition, m.Offset)
			}
		}
	}
	t.mu.Unlock()
	if err == nil {
		t.bar.Add(int64(len(msgs)))
	}
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// acquire waits until n more events fit in flight (limit, or nothing in
// flight), then counts them. It fails on a write error or when ctx is done.
func (t *tracker) acquire(ctx context.Context, n, limit int64) error {
	for {
		t.mu.Lock()
		if t.err != nil {
			t.mu.Unlock()
			return errWriteFailed
		}
		if t.inflight == 0 || t.inflight+n <= limit {
			t.inflight += n
			t.mu.Unlock()
			return nil
		}
		t.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.wake:
		}
	}
}

func (t *tracker) release(n int64) {
	t.mu.Lock()
	t.inflight -= n
	t.mu.Unlock()
}

var errWriteFailed = errors.New("write failed")

// metaTimeout bounds the metadata requests made before the replay starts.
const metaTimeout = 15 * time.Second

// Replay sends ds to cfg.Topic as the event sequence NewPlan(ds, cfg)
// describes, and returns when the sequence is done and acknowledged, when
// a write fails (a *WriteError), or when ctx is cancelled (ctx.Err()); the
// Stats are valid in every case. The topic must exist (see EnsureTopic).
// See the package documentation for batching, ordering and pacing.
func Replay(ctx context.Context, ds *dataset.Dataset, cfg Config) (Stats, error) {
	p, err := NewPlan(ds, cfg)
	if err != nil {
		return Stats{}, err
	}
	c := p.cfg
	s, err := openSession(ctx, sessionConfig{
		brokers: c.Brokers, tls: c.TLS, sasl: c.SASL, topic: c.Topic, batchSize: c.BatchSize, batchTimeout: c.BatchTimeout,
		batchBytes: c.BatchBytes, balancer: c.Balancer, progress: c.Progress, onAck: c.OnAck, clock: c.clock,
	})
	if err != nil {
		return Stats{}, err
	}

	clk := c.clock
	chunk := c.BatchSize
	var pace *pacer
	if c.Rate > 0 {
		chunk = pacedChunk(c.Rate, c.BatchSize)
		pace = newPacer(c.Rate, chunk, s.start)
	}
	msgs := make([]kafka.Message, chunk)
	ends := make([]int, 2*chunk)
	perEvent := 64

	var sent int64
	var stopErr error // ctx.Err() or a build error
	for p.total < 0 || sent < p.total {
		if ctx.Err() != nil {
			stopErr = ctx.Err()
			break
		}
		n := int64(chunk)
		if p.total >= 0 {
			n = min(n, p.total-sent)
		}
		if pace != nil {
			if d := pace.reserve(clk.Now(), int(n)); d > 0 {
				if err := clk.Sleep(ctx, d); err != nil {
					stopErr = err
					break
				}
			}
		}
		if err := s.acquire(ctx, n); err != nil {
			stopErr = err
			break
		}
		// Build the call: all keys and values in one fresh buffer (the
		// Writer keeps references until Completion).
		nowMS := clk.Now().UnixMilli()
		buf := make([]byte, 0, int(n)*perEvent+64)
		meta := make([]ackMeta, n)
		var berr error
		for k := range n {
			i := sent + k
			at := len(buf)
			var ks, ve int
			var ts time.Time
			buf, ks, ve, ts, berr = p.appendRecord(buf, i, nowMS)
			if berr != nil {
				break
			}
			if size := int64(ve-at) + 64; size > s.batchBytes {
				pass, row := p.Row(i)
				berr = fmt.Errorf("producer: event %d (pass %d, row %d) is %d bytes, more than the topic accepts in one batch (%d): raise the topic's max.message.bytes, or send sparse events", i, pass, row, ve-at, s.batchBytes)
				break
			}
			ends[2*k], ends[2*k+1] = ks, ve
			meta[k] = ackMeta{i: i, labelled: p.Labelled(i)}
			msgs[k] = kafka.Message{Time: ts, WriterData: &meta[k]} // Time zero under TimeNone: the client's send time
		}
		if berr != nil {
			s.t.release(n)
			stopErr = berr
			break
		}
		perEvent = max(perEvent, len(buf)/int(n)+1)
		prev := 0
		for k := range n { // buf has its final address only now
			ks, ve := ends[2*k], ends[2*k+1]
			msgs[k].Key, msgs[k].Value = buf[prev:ks:ks], buf[ks:ve:ve]
			prev = ve
		}
		if err := s.write(ctx, msgs[:n]); err != nil {
			stopErr = err
			break
		}
		clear(msgs[:n]) // drop references to buf for the GC
		sent += n
	}
	return s.close(ctx, sent, stopErr, c.DrainTimeout)
}

// topicInfo returns the partition count and max.message.bytes of topic,
// with errors that say what to do.
func topicInfo(ctx context.Context, c *kafka.Client, topic string, brokers []string) (int, int64, error) {
	mctx, cancel := context.WithTimeout(ctx, metaTimeout)
	defer cancel()
	n, err := kafkautil.Partitions(mctx, c, topic)
	switch {
	case errors.Is(err, kafka.UnknownTopicOrPartition):
		return 0, 0, fmt.Errorf("producer: topic %q does not exist on %s: create it first (okstream topics create --input %s, okstream replay --create-topic --partitions N, or kafka-topics.sh --create --topic %s), or check the name", topic, strings.Join(brokers, ","), topic, topic)
	case err != nil && ctx.Err() != nil:
		return 0, 0, ctx.Err()
	case err != nil && kafkasec.Explain(err) != err:
		return 0, 0, fmt.Errorf("producer: cannot read metadata of topic %q from %s: %w", topic, strings.Join(brokers, ","), kafkasec.Explain(err))
	case err != nil:
		return 0, 0, fmt.Errorf("producer: cannot read metadata of topic %q from %s: %w; check that Kafka is running there and the addresses (host:port) are right", topic, strings.Join(brokers, ","), err)
	case n == 0:
		return 0, 0, fmt.Errorf("producer: topic %q has no partitions yet; retry in a moment", topic)
	}
	maxBytes := int64(DefaultMaxMessageBytes)
	if cfg, err := kafkautil.TopicConfig(mctx, c, topic, "max.message.bytes"); err == nil {
		if v, err := strconv.ParseInt(cfg["max.message.bytes"], 10, 64); err == nil && v > 0 {
			maxBytes = v
		}
	}
	return n, maxBytes, nil
}
