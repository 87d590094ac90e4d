package producer

import (
	"context"
	"crypto/tls"
	"errors"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"

	"okstream/internal/kafkasec"
	"okstream/internal/progress"
)

// sessionConfig is what a write session needs of a replay's configuration
// (Config or StreamConfig, with defaults applied).
type sessionConfig struct {
	brokers      []string
	tls          *tls.Config
	sasl         sasl.Mechanism
	topic        string
	batchSize    int
	batchTimeout time.Duration
	batchBytes   int64
	balancer     kafka.Balancer
	progress     *progress.Bar
	onAck        func(i int64, partition int, offset int64)
	clock        clock
}

// session is the Kafka side of a replay, shared by Replay and
// ReplaySource: an asynchronous kafka-go Writer (acks=all, murmur2 keys),
// the tracker that counts acknowledgements and bounds the events in flight,
// and the drain and summary at the end.
type session struct {
	cfg        sessionConfig
	w          *kafka.Writer
	transport  kafka.RoundTripper // shared by the metadata client and w; nil: kafka-go's default
	t          *tracker
	batchBytes int64 // bound of one produce batch
	inflight   int64 // events in flight at most (4 calls' worth)
	start      time.Time
}

// openSession checks the target and opens the Writer.
func openSession(ctx context.Context, c sessionConfig) (*session, error) {
	if len(c.brokers) == 0 {
		return nil, errors.New("producer: no brokers given (host:port, e.g. localhost:9092)")
	}
	if c.topic == "" {
		return nil, errors.New("producer: no topic given")
	}
	transport := kafkasec.Transport(c.tls, c.sasl)
	client := kafkasec.Client(c.brokers, transport, metaTimeout)
	nparts, maxBytes, err := topicInfo(ctx, client, c.topic, c.brokers)
	if err != nil {
		kafkasec.CloseTransport(transport)
		return nil, err
	}
	batchBytes := c.batchBytes
	if batchBytes <= 0 {
		// kafka-go estimates a record's size a little above its v2 encoding
		// but does not count the batch header (61 bytes); keep a margin.
		batchBytes = max(maxBytes-256, 1024)
	}
	t := &tracker{wake: make(chan struct{}, 1), bar: c.progress, onAck: c.onAck, parts: make([]int64, nparts)}
	perPartition := max(1, (c.batchSize+nparts-1)/nparts)
	balancer := c.balancer
	if balancer == nil {
		balancer = kafka.Murmur2Balancer{}
	}
	w := &kafka.Writer{
		Addr:         kafka.TCP(c.brokers...),
		Topic:        c.topic,
		Balancer:     balancer,
		RequiredAcks: kafka.RequireAll,
		BatchSize:    perPartition,
		BatchBytes:   batchBytes,
		BatchTimeout: c.batchTimeout,
		Async:        true,
		Completion:   t.complete,
		Transport:    transport,
	}
	return &session{cfg: c, w: w, transport: transport, t: t, batchBytes: batchBytes, inflight: int64(4 * c.batchSize), start: c.clock.Now()}, nil
}

// acquire waits until n more events may be in flight. It returns ctx.Err()
// when ctx is done, and errWriteFailed (which close turns into the
// *WriteError) after a failed write.
func (s *session) acquire(ctx context.Context, n int64) error {
	err := s.t.acquire(ctx, n, s.inflight)
	if err == errWriteFailed {
		return errWriteFailed
	}
	return err
}

// write hands one call to the Writer; the n events were acquired. On
// failure it releases them and returns ctx.Err() or errWriteFailed.
func (s *session) write(ctx context.Context, msgs []kafka.Message) error {
	if err := s.w.WriteMessages(ctx, msgs...); err != nil {
		s.t.release(int64(len(msgs)))
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.t.mu.Lock()
		if s.t.err == nil {
			s.t.err = err
		}
		s.t.mu.Unlock()
		return errWriteFailed
	}
	return nil
}

// close flushes the Writer and waits for the acknowledgements (after a
// cancellation, for at most drain), finishes the progress bar and returns
// the stats with the replay's error: a *WriteError if a write failed, else
// stopErr (errWriteFailed counts as none).
func (s *session) close(ctx context.Context, sent int64, stopErr error, drain time.Duration) (Stats, error) {
	if errors.Is(stopErr, errWriteFailed) {
		stopErr = nil
	}
	closed := make(chan struct{})
	go func() {
		_ = s.w.Close()
		kafkasec.CloseTransport(s.transport)
		close(closed)
	}()
	if ctx.Err() != nil {
		timer := time.NewTimer(drain)
		select {
		case <-closed:
		case <-timer.C:
		}
		timer.Stop()
	} else {
		<-closed
	}
	s.cfg.progress.Finish()

	t := s.t
	t.mu.Lock()
	st := Stats{Events: t.acked, Bytes: t.bytes, Labelled: t.labelled, Sent: sent,
		Partitions: append([]int64(nil), t.parts...), Elapsed: s.cfg.clock.Now().Sub(s.start)}
	werr := t.err
	t.mu.Unlock()
	switch {
	case werr != nil:
		return st, &WriteError{Topic: s.cfg.topic, Brokers: s.cfg.brokers, Acked: st.Events, Err: werr}
	case stopErr != nil:
		return st, stopErr
	}
	return st, nil
}
