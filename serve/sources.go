package serve

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/consumer"
	"okstream/internal/kafkautil"
	"okstream/modelfile"
)

// Source names (Model.Source, the metrics' source label).
const (
	SourceLive    = "live"
	SourceReplica = "replica"
	SourceFile    = "file"
)

// Live serves the models of an okstream run in the same process: its
// Publish is consumer.Config.OnModels, so each partition's worker hands it
// a copy of its payload at each checkpoint (and when it starts), and Run
// builds the Scorers on its own goroutine and swaps them into the Server.
// The workers' per-event path is untouched: Publish runs at checkpoints
// only, takes a mutex no request takes, and returns at once (a payload not
// built yet is replaced by a newer one). The served models are therefore
// the partitions' last checkpoints: as fresh as --checkpoint-every and
// --checkpoint-interval make them.
type Live struct {
	srv     *Server
	cfg     LiveConfig
	mu      sync.Mutex
	pending map[int]livePayload
	wake    chan struct{}
}

// LiveConfig describes the pipeline a Live serves.
type LiveConfig struct {
	Topic, Group string                 // the input topic and consumer group
	Scorer       consumer.ScorerOptions // --top-k, --positive as the pipeline has them
	// Client, when set, reads the input topic's partition count (for
	// routing keys) when Run starts and every minute; without it keys are
	// routed only once the caller has called Server.SetPartitions.
	Client *kafka.Client
}

type livePayload struct {
	next    int64
	payload []byte // nil: the partition was released
	at      time.Time
}

// NewLive returns a Live publishing into srv.
func NewLive(srv *Server, cfg LiveConfig) *Live {
	return &Live{srv: srv, cfg: cfg, pending: map[int]livePayload{}, wake: make(chan struct{}, 1)}
}

// Publish is consumer.Config.OnModels.
func (l *Live) Publish(partition int, next int64, payload []byte) {
	l.mu.Lock()
	l.pending[partition] = livePayload{next: next, payload: payload, at: l.srv.o.Now()}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Run builds and swaps in the published models until ctx ends.
func (l *Live) Run(ctx context.Context) {
	if c := l.cfg.Client; c != nil {
		go func() {
			for {
				if n, err := kafkautil.Partitions(ctx, c, l.cfg.Topic); err == nil {
					l.srv.SetPartitions(n)
				} else if ctx.Err() == nil {
					l.srv.sourceError(SourceLive, fmt.Errorf("input topic %s: %w", l.cfg.Topic, err))
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Minute):
				}
			}
		}()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		}
		l.mu.Lock()
		batch := l.pending
		l.pending = map[int]livePayload{}
		l.mu.Unlock()
		for p, lp := range batch {
			if lp.payload == nil {
				l.srv.Drop(p)
				continue
			}
			sc, err := consumer.NewScorerWith(lp.payload, l.cfg.Scorer)
			if err != nil {
				l.srv.sourceError(SourceLive, err, "partition", p)
				continue
			}
			l.srv.Set(&Model{Scorer: sc, Partition: p, Topic: l.cfg.Topic, Group: l.cfg.Group, NextOffset: lp.next, Time: lp.at, Source: SourceLive})
		}
	}
}

// FollowConfig configures a replica that follows a pipeline's checkpoint
// topic.
type FollowConfig struct {
	// Store reads the checkpoint topic; Client reads the input topic's
	// partition count and the checkpoint topic's end offsets.
	Store  *checkpoint.Store
	Client *kafka.Client
	// Group and Input name the pipeline (okstream run's --group and
	// --input), CheckpointTopic its --checkpoint-topic.
	Group, Input, CheckpointTopic string
	// Poll is how often the replica looks for new checkpoints (default 5 s).
	Poll   time.Duration
	Scorer consumer.ScorerOptions
}

// Follow keeps srv serving the newest complete checkpoint of every input
// partition of the pipeline until ctx ends. Each poll it reads the input
// topic's partition count (the key routing) and the checkpoint topic's end
// offsets, and only when those moved does it load the partitions'
// checkpoints (checkpoint.Store.Load: the newest one that validates), build
// a Scorer for each one newer than the served one and swap it in. A
// failure (broker unreachable, a payload that does not decode) is counted
// (okstream_serve_source_errors_total) and logged, and the served models
// stay; the next poll tries again. The first poll runs at once; Follow
// returns ctx's error.
func Follow(ctx context.Context, srv *Server, cfg FollowConfig) error {
	if cfg.Poll <= 0 {
		cfg.Poll = 5 * time.Second
	}
	f := &follower{srv: srv, cfg: cfg, served: map[int]checkpoint.Epoch{}}
	t := time.NewTicker(cfg.Poll)
	defer t.Stop()
	for {
		f.poll(ctx)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

type follower struct {
	srv    *Server
	cfg    FollowConfig
	ends   map[int]int64 // the checkpoint topic's end offsets at the last complete load
	served map[int]checkpoint.Epoch
}

// poll is one round of Follow.
func (f *follower) poll(ctx context.Context) {
	c := f.cfg
	n, err := kafkautil.Partitions(ctx, c.Client, c.Input)
	if err != nil {
		f.srv.sourceError(SourceReplica, fmt.Errorf("input topic %s: %w", c.Input, err))
		return
	}
	f.srv.SetPartitions(n)
	ends, err := topicEnds(ctx, c.Client, c.CheckpointTopic)
	if err != nil {
		f.srv.sourceError(SourceReplica, fmt.Errorf("checkpoint topic %s: %w", c.CheckpointTopic, err))
		return
	}
	if maps.Equal(ends, f.ends) {
		return // nothing was written since the last load
	}
	ok := true
	for p := 0; p < n; p++ {
		cp, _, err := c.Store.Load(ctx, checkpoint.ID{Group: c.Group, Topic: c.Input, Partition: p})
		if err != nil {
			ok = false
			f.srv.sourceError(SourceReplica, err, "partition", p)
			continue
		}
		if cp == nil {
			continue // no checkpoint of the partition yet
		}
		if e, had := f.served[p]; had && e == cp.Epoch {
			continue
		}
		sc, err := consumer.NewScorerWith(cp.Payload, c.Scorer)
		if err != nil {
			ok = false
			f.srv.sourceError(SourceReplica, err, "partition", p, "epoch", cp.Epoch.String())
			continue
		}
		f.served[p] = cp.Epoch
		f.srv.Set(&Model{Scorer: sc, Partition: p, Topic: c.Input, Group: c.Group, NextOffset: cp.NextOffset, Time: cp.Time, Source: SourceReplica})
	}
	if ok {
		f.ends = ends
	}
}

// topicEnds are the end offsets of every partition of topic.
func topicEnds(ctx context.Context, c *kafka.Client, topic string) (map[int]int64, error) {
	n, err := kafkautil.Partitions(ctx, c, topic)
	if err != nil {
		return nil, err
	}
	ends := make(map[int]int64, n)
	for p := 0; p < n; p++ {
		_, end, err := kafkautil.Offsets(ctx, c, topic, p)
		if err != nil {
			return nil, err
		}
		ends[p] = end
	}
	return ends, nil
}

// LoadFile serves the entries of a model file (package modelfile): each
// entry's payload as its partition's model (an eval entry is partition 0),
// with its next offset, aged from at (the file's modification time: model
// files record no time). Two entries of one partition are an error; so is
// an entry whose payload does not decode. The partition count for key
// routing is the entries' highest partition + 1 when the entries are
// partitions 0..n−1 of one topic; otherwise keys are not routed (requests
// name ?partition=N, or the file holds one model).
func LoadFile(srv *Server, f *modelfile.File, at time.Time, opts consumer.ScorerOptions) error {
	seen := map[int]bool{}
	var ms []*Model
	for _, e := range f.Entries {
		if seen[e.Partition] {
			return fmt.Errorf("model file: two entries of partition %d (%s): export one pipeline's partitions", e.Partition, e)
		}
		if e.Partition < 0 || e.Partition > 1<<16 {
			return fmt.Errorf("model file: entry %s: partition %d out of range", e, e.Partition)
		}
		seen[e.Partition] = true
		sc, err := consumer.NewScorerWith(e.Payload, opts)
		if err != nil {
			return fmt.Errorf("model file: entry %s: %w", e, err)
		}
		ms = append(ms, &Model{Scorer: sc, Partition: e.Partition, Topic: e.Topic, Group: e.Group, NextOffset: e.NextOffset, Time: at, Source: SourceFile})
	}
	if len(ms) == 0 {
		return fmt.Errorf("model file: no entries")
	}
	for _, m := range ms {
		srv.Set(m)
	}
	if len(seen) > 1 && len(seen) == maxKey(seen)+1 {
		srv.SetPartitions(len(seen))
	}
	return nil
}

func maxKey(m map[int]bool) int {
	k := -1
	for p := range m {
		k = max(k, p)
	}
	return k
}
