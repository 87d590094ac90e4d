package producer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"

	"okstream/codec"
	"okstream/internal/progress"
)

// Source yields the events of a replay in order (e.g. a recommendation log
// sorted by event time, see KuaiRecSource).
type Source interface {
	// Next returns the next event, or io.EOF after the last one. The event's
	// Key must not be empty: it is also the Kafka record key. With HasTS its
	// TS (ms) is both the Kafka record time and the event time that
	// StreamConfig.Speedup paces by. ReplaySource encodes the event before
	// calling Next again, so a Source may reuse the event's slices.
	Next() (codec.Event, error)
}

// StreamConfig configures ReplaySource. The zero value plus Brokers and
// Topic sends every event of the source as fast as the brokers acknowledge.
// The batching, delivery, key and error fields mean what they mean in
// Config.
type StreamConfig struct {
	Brokers []string
	Topic   string
	// TLS and SASL secure the connections as in Config.
	TLS  *tls.Config
	SASL sasl.Mechanism

	// Speedup paces by event time: an event whose time is Δ after the
	// first event's is handed to the Writer Δ/Speedup after the first one
	// was (3600: an hour of event time per second; 1: real time). Events
	// without ts, and events whose time is already due, go at once; after a
	// stall the replay catches up as fast as it can, since it keeps the
	// events' schedule rather than a rate. 0 sends as fast as the brokers
	// acknowledge.
	Speedup float64
	// Limit stops after this many events (0: the whole source).
	Limit int64
	// JSON writes each event as a JSON object (codec.AppendEventJSON)
	// instead of msgpack (codec.AppendEvent), as Config.JSON.
	JSON bool

	// Headers are added to every record, e.g. the feature schema version
	// and whether the data are synthetic.
	Headers []kafka.Header

	BatchSize    int           // events per WriteMessages call (default 1000)
	BatchTimeout time.Duration // the Writer's BatchTimeout (default 5 ms)
	BatchBytes   int64         // bound of a produce batch (0: the topic's max.message.bytes)
	Balancer     kafka.Balancer
	DrainTimeout time.Duration // wait for acknowledgements after a cancellation (default 10 s)

	// Progress, if not nil, is advanced by every acknowledged event and
	// finished when ReplaySource returns.
	Progress *progress.Bar
	// OnAck, if not nil, is called for every acknowledged event with its
	// index (0, 1, ... in source order) and where it landed, as in Config.
	OnAck func(i int64, partition int, offset int64)

	clock clock // nil: the wall clock
}

func (c StreamConfig) withDefaults() StreamConfig {
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.BatchTimeout <= 0 {
		c.BatchTimeout = DefaultBatchTimeout
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.clock == nil {
		c.clock = wallClock{}
	}
	return c
}

func (c *StreamConfig) check() error {
	switch {
	case c.Speedup < 0 || math.IsNaN(c.Speedup) || math.IsInf(c.Speedup, 0):
		return fmt.Errorf("StreamConfig.Speedup is %v; use a factor > 0 (3600: an hour of event time per second), or 0 for as fast as possible", c.Speedup)
	case c.Limit < 0:
		return fmt.Errorf("StreamConfig.Limit is %d; use a count > 0, or 0 for no limit", c.Limit)
	case c.BatchSize < 0:
		return fmt.Errorf("BatchSize is %d; use a count > 0 (0: %d)", c.BatchSize, DefaultBatchSize)
	}
	return nil
}

// eventPacer maps event times to the wall-clock times at which the events
// are due: the first event is due when it is first asked about, and an
// event Δ ms later in event time is due Δ/speedup ms after it.
type eventPacer struct {
	speedup float64
	started bool
	start   time.Time // wall time of the first event
	first   int64     // its event time (ms)
}

// due returns when an event with time ms (and hasTS) is due; now is the
// current wall time (the first call's now starts the schedule). Events
// without a time are due now.
func (p *eventPacer) due(ms int64, hasTS bool, now time.Time) time.Time {
	if !hasTS {
		return now
	}
	if !p.started {
		p.started, p.start, p.first = true, now, ms
		return now
	}
	d := float64(ms-p.first) / p.speedup * float64(time.Millisecond)
	if d <= 0 {
		return p.start
	}
	if d > float64(math.MaxInt64/2) {
		d = float64(math.MaxInt64 / 2)
	}
	return p.start.Add(time.Duration(math.Ceil(d)))
}

// ReplaySource sends the events of src to cfg.Topic in source order, one
// Kafka record per event: record key = the event's key, record time = its
// ts (the event time, not the send time: old event times may fall to the
// topic's time-based retention at once — create the topic with
// retention.ms=-1, as replay --create-topic does for event-time replays),
// value = codec.AppendEvent (codec.AppendEventJSON with JSON). Records are partitioned by key with the
// murmur2 balancer, so within a partition they keep the source order. With
// Speedup > 0 the events are paced by event time (see StreamConfig).
//
// It returns when the source is exhausted (or Limit reached) and every
// event is acknowledged, when a write fails (a *WriteError), when the
// source fails (its error, wrapped), or when ctx is cancelled (ctx.Err());
// the Stats are valid in every case. Stats.Labelled counts events that
// carried y (feedback events included).
func ReplaySource(ctx context.Context, src Source, cfg StreamConfig) (Stats, error) {
	if err := cfg.check(); err != nil {
		return Stats{}, fmt.Errorf("producer: %w", err)
	}
	c := cfg.withDefaults()
	s, err := openSession(ctx, sessionConfig{
		brokers: c.Brokers, tls: c.TLS, sasl: c.SASL, topic: c.Topic, batchSize: c.BatchSize, batchTimeout: c.BatchTimeout,
		batchBytes: c.BatchBytes, balancer: c.Balancer, progress: c.Progress, onAck: c.OnAck, clock: c.clock,
	})
	if err != nil {
		return Stats{}, err
	}
	clk := c.clock
	var pace *eventPacer
	if c.Speedup > 0 {
		pace = &eventPacer{speedup: c.Speedup}
	}

	// The record that did not fit in the previous call (not yet due, or
	// the call was full), encoded in carry.
	type pending struct {
		ks, ve   int // key carry[:ks], value carry[ks:ve]
		ts       time.Time
		due      time.Time
		labelled bool
	}
	var carry []byte
	var have bool
	var next pending
	srcDone := false
	// fetch reads and encodes the next source event into carry.
	fetch := func(i int64) error {
		ev, err := src.Next()
		if err != nil {
			return err
		}
		if ev.Key == "" {
			return fmt.Errorf("producer: source event %d has no key (every record needs one)", i)
		}
		carry = append(carry[:0], ev.Key...)
		ks := len(carry)
		carry, err = appendEvent(carry, &ev, c.JSON)
		if err != nil {
			return fmt.Errorf("producer: source event %d: %w", i, err)
		}
		if int64(len(carry)-ks)+64 > s.batchBytes {
			return fmt.Errorf("producer: source event %d is %d bytes, more than the topic accepts in one batch (%d): raise the topic's max.message.bytes", i, len(carry)-ks, s.batchBytes)
		}
		next = pending{ks: ks, ve: len(carry), labelled: ev.HasY}
		if ev.HasTS {
			next.ts = time.UnixMilli(ev.TS)
		}
		next.due = clk.Now()
		if pace != nil {
			next.due = pace.due(ev.TS, ev.HasTS, next.due)
		}
		have = true
		return nil
	}

	msgs := make([]kafka.Message, c.BatchSize)
	ends := make([]int, 2*c.BatchSize)
	var meta []ackMeta
	perEvent := 64
	var sent int64
	var stopErr error
	for !srcDone && (c.Limit == 0 || sent < c.Limit) {
		if ctx.Err() != nil {
			stopErr = ctx.Err()
			break
		}
		room := int64(c.BatchSize)
		if c.Limit > 0 {
			room = min(room, c.Limit-sent)
		}
		// Gather one call: the first event waits until it is due; later
		// ones join only if they are due already.
		buf := make([]byte, 0, int(room)*perEvent+64)
		meta = make([]ackMeta, room) // the Writer keeps pointers into meta until Completion
		var n int64
		for n < room {
			if !have {
				if err := fetch(sent + n); err != nil {
					if !errors.Is(err, io.EOF) {
						stopErr = err
					}
					srcDone = true
					break
				}
			}
			now := clk.Now()
			if next.due.After(now) {
				if n > 0 {
					break // send what is due; this one waits for the next call
				}
				if err := clk.Sleep(ctx, next.due.Sub(now)); err != nil {
					stopErr = err
					break
				}
			}
			at := len(buf)
			buf = append(buf, carry[:next.ve]...)
			ends[2*n], ends[2*n+1] = at+next.ks, at+next.ve
			meta[n] = ackMeta{i: sent + n, labelled: next.labelled}
			msgs[n] = kafka.Message{Time: next.ts, Headers: c.Headers, WriterData: &meta[n]}
			have = false
			n++
		}
		if n == 0 {
			break
		}
		if err := s.acquire(ctx, n); err != nil {
			if stopErr == nil {
				stopErr = err
			}
			break
		}
		perEvent = max(perEvent, len(buf)/int(n)+1)
		prev := 0
		for k := range n {
			ks, ve := ends[2*k], ends[2*k+1]
			msgs[k].Key, msgs[k].Value = buf[prev:ks:ks], buf[ks:ve:ve]
			prev = ve
		}
		if err := s.write(ctx, msgs[:n]); err != nil {
			if stopErr == nil {
				stopErr = err
			}
			break
		}
		clear(msgs[:n])
		sent += n
		if stopErr != nil {
			break
		}
	}
	return s.close(ctx, sent, stopErr, c.DrainTimeout)
}
