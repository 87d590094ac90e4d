package checkpoint

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"

	"okstream/internal/kafkasec"
	"okstream/internal/kafkautil"
)

// Config configures a Store.
type Config struct {
	Brokers []string
	// Topic is the compacted checkpoint topic; created if missing.
	Topic string
	// Partitions is the partition count used when the topic is created
	// (default 8). An existing topic keeps its own.
	Partitions int
	// ChunkBytes bounds the payload bytes per record (default 512 KiB). It
	// must leave room under the topic's max.message.bytes (checked by Open).
	ChunkBytes int
	// MaxStateBytes bounds one checkpoint's payload (default
	// DefaultMaxStateBytes, 1 GiB). Save refuses a larger payload; Load and
	// Scan reject a manifest that declares more (ReasonTooLarge) without
	// allocating it. Readers and writers of one topic should agree on it.
	MaxStateBytes int64
	// MaxChunks bounds one checkpoint's chunk count (default
	// DefaultMaxChunks, 65536). Save refuses a payload that needs more
	// chunks at ChunkBytes; Load and Scan reject a manifest that declares
	// more (ReasonTooManyChunks) and ignore chunk records with a higher
	// index.
	MaxChunks int
	// TopicConfigs are extra configurations for a topic Open creates (e.g.
	// segment.ms); cleanup.policy=compact is always set.
	TopicConfigs map[string]string
	// Client may be given to share connections (its Transport, with its TLS
	// and SASL, is then also the writer's); otherwise Open makes one with
	// TLS and SASL below.
	Client *kafka.Client
	// SaveTimeout bounds one Save (default DefaultSaveTimeout), which
	// otherwise outlives its context's cancellation (see Save).
	SaveTimeout time.Duration
	// CancelGrace is how long a Save whose context is cancelled while it
	// writes may go on to finish (default DefaultCancelGrace): long enough
	// for a healthy broker to take the rest, short enough that a shutdown
	// or a rebalance does not wait SaveTimeout on a broker that is down.
	CancelGrace time.Duration
	// TLS and SASL secure the connections of a client Open makes (nil:
	// plaintext, no authentication); ignored when Client is given.
	TLS  *tls.Config
	SASL sasl.Mechanism
}

// DefaultSaveTimeout is the default Config.SaveTimeout.
const DefaultSaveTimeout = time.Minute

// DefaultCancelGrace is the default Config.CancelGrace.
const DefaultCancelGrace = 5 * time.Second

// DefaultChunkBytes is the default payload size per checkpoint record.
const DefaultChunkBytes = 512 << 10

// recordOverhead is a generous bound on a record's framing beyond its
// value: key (< 1 KiB), record and batch headers.
const recordOverhead = 4 << 10

// Store reads and writes checkpoints. It is safe for concurrent use by the
// partition workers of one process.
type Store struct {
	cfg        Config
	client     *kafka.Client
	writer     *kafka.Writer
	partitions int
	chunkBytes int
	lim        limits
}

// SaveStats describes a Save.
type SaveStats struct {
	Bytes    int // payload bytes
	Records  int // chunks + manifest
	Duration time.Duration
}

// LoadStats describes a Load.
type LoadStats struct {
	Records  int // records read from the checkpoint partition
	Bytes    int
	Duration time.Duration
	// Rejected lists the slots whose checkpoints were skipped (incomplete,
	// corrupt, forged or over the limits), e.g. slot B, ReasonTorn,
	// "epoch 3.8: chunk 2 of 4 missing (torn write?)".
	Rejected []Rejection
	// Dropped counts chunk records not kept because of MaxChunks or the
	// per-slot bound (see Config); non-zero only for damaged or forged
	// topics, or after the limits were lowered.
	Dropped int
}

// ErrNoValidCheckpoint means manifests exist for the ID but none of them
// describes a complete, uncorrupted checkpoint. Starting from scratch would
// silently discard the model, so the caller must decide.
var ErrNoValidCheckpoint = errors.New("checkpoint: manifests exist but no complete checkpoint")

// TopicConfigs returns the configuration of a checkpoint topic: compacted
// (cleanup.policy=compact, always, whatever extra says), hourly segments and
// an eager cleaner (segment.ms=3600000, min.cleanable.dirty.ratio=0.1, which
// extra may override), plus extra's other entries. Open creates a missing
// topic with it, and `okstream topics create` too.
func TopicConfigs(extra map[string]string) map[string]string {
	configs := map[string]string{"cleanup.policy": "compact", "segment.ms": "3600000", "min.cleanable.dirty.ratio": "0.1"}
	for k, v := range extra {
		configs[k] = v
	}
	configs["cleanup.policy"] = "compact"
	return configs
}

// Open connects to the checkpoint topic, creating it (compacted) if it does
// not exist. An existing topic must have cleanup.policy=compact; otherwise
// retention would eventually delete checkpoints, and Open refuses with an
// error that says so.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Topic == "" {
		return nil, errors.New("checkpoint: no topic configured")
	}
	if cfg.Partitions <= 0 {
		cfg.Partitions = 8
	}
	if cfg.ChunkBytes <= 0 {
		cfg.ChunkBytes = DefaultChunkBytes
	}
	c := cfg.Client
	if c == nil {
		var err error
		if c, err = newClient(cfg); err != nil {
			return nil, err
		}
	}
	configs := TopicConfigs(cfg.TopicConfigs)
	if _, err := kafkautil.EnsureTopic(ctx, c, kafkautil.TopicSpec{Name: cfg.Topic, Partitions: cfg.Partitions, Configs: configs}); err != nil {
		return nil, fmt.Errorf("checkpoint topic: %w", err)
	}
	n, err := kafkautil.Partitions(ctx, c, cfg.Topic)
	if err != nil {
		return nil, fmt.Errorf("checkpoint topic %s: %w", cfg.Topic, err)
	}
	tc, err := kafkautil.TopicConfig(ctx, c, cfg.Topic, "cleanup.policy", "max.message.bytes")
	if err != nil {
		return nil, fmt.Errorf("checkpoint topic %s: describe configs: %w", cfg.Topic, err)
	}
	if p := tc["cleanup.policy"]; p != "" && !strings.Contains(p, "compact") {
		return nil, fmt.Errorf("checkpoint topic %s has cleanup.policy=%s: retention would delete checkpoints; set cleanup.policy=compact on it (kafka-configs --alter --add-config cleanup.policy=compact) or use another topic", cfg.Topic, p)
	}
	limit := 1048588 // Kafka's default message.max.bytes
	if v, err := strconv.Atoi(tc["max.message.bytes"]); err == nil && v > 0 {
		limit = v
	}
	if cfg.ChunkBytes+chunkHeader+recordOverhead > limit {
		return nil, fmt.Errorf("checkpoint chunk size %d B does not fit the topic's max.message.bytes=%d; use a chunk size of at most %d B", cfg.ChunkBytes, limit, limit-chunkHeader-recordOverhead)
	}
	s := &Store{cfg: cfg, client: c, partitions: n, chunkBytes: cfg.ChunkBytes, lim: cfg.limits()}
	s.writer = &kafka.Writer{
		Addr:         kafka.TCP(cfg.Brokers...),
		Topic:        cfg.Topic,
		Balancer:     kafka.BalancerFunc(s.balance),
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond,
		// kafka-go preallocates BatchSize messages per batch; a batch holds
		// at most a couple of chunks (BatchBytes), so keep it small.
		BatchSize:  4,
		BatchBytes: int64(limit - recordOverhead),
		Transport:  c.Transport,
	}
	if len(cfg.Brokers) == 0 {
		s.writer.Addr = c.Addr
	}
	return s, nil
}

func newClient(cfg Config) (*kafka.Client, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("checkpoint: no brokers configured")
	}
	return kafkasec.Client(cfg.Brokers, kafkasec.Transport(cfg.TLS, cfg.SASL), 30*time.Second), nil
}

// Close releases the writer.
func (s *Store) Close() error {
	if s.writer == nil {
		return nil
	}
	return s.writer.Close()
}

// ChunkBytes is the payload size per record in use.
func (s *Store) ChunkBytes() int { return s.chunkBytes }

// routeOf is the checkpoint-topic partition holding id's records.
func (s *Store) routeOf(prefix string) int {
	h := fnv.New32a()
	h.Write([]byte(prefix))
	return int(h.Sum32() % uint32(s.partitions))
}

// balance routes a record by the ID prefix of its key (everything before
// the slot component), so all records of an ID share a partition.
func (s *Store) balance(msg kafka.Message, partitions ...int) int {
	key := string(msg.Key)
	// okstream/v1/<group>/<topic>/<partition>/<slot>/...: keep 5 components.
	n, cut := 0, len(key)
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			n++
			if n == 5 {
				cut = i + 1
				break
			}
		}
	}
	p := s.routeOf(key[:cut])
	for _, q := range partitions {
		if q == p {
			return p
		}
	}
	return partitions[p%len(partitions)]
}

// Save writes cp: every chunk, then (after they are acknowledged) the
// manifest. When Save returns nil the checkpoint is durable (acks=all) and
// Load will find it unless a newer complete one is written.
//
// Cancellation: ctx is consulted before the first record is handed to the
// writer. Once started, Save runs to its end (the manifest included) even
// if ctx is cancelled meanwhile, for at most Config.CancelGrace after the
// cancellation, and within ctx's deadline and Config.SaveTimeout.
// kafka-go's WriteMessages returns at cancellation while the records it
// queued are still written, so a Save that returned at cancellation could
// have its manifest land after it reported failure; finishing instead
// makes the outcome known in all but the timeout cases.
//
// On an error the outcome is unknown (a timed-out write may still land):
// the caller must not write the same epoch again with another payload,
// since a stale chunk of that epoch would then pass for a corrupt one.
// Retry with a new epoch of the same slot (Epoch.Seq + 2), which leaves the
// other slot's checkpoint untouched.
func (s *Store) Save(ctx context.Context, cp Checkpoint) (SaveStats, error) {
	if err := ctx.Err(); err != nil {
		return SaveStats{}, fmt.Errorf("checkpoint %s epoch %s: not started: %w", cp.ID, cp.Epoch, err)
	}
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	start := time.Now()
	m, n, err := s.writeChunks(ctx, cp)
	if err != nil {
		return SaveStats{}, err
	}
	if err := s.writer.WriteMessages(ctx, kafka.Message{Key: []byte(manifestKey(cp.ID, cp.Epoch.Slot())), Value: encodeManifest(m)}); err != nil {
		return SaveStats{}, fmt.Errorf("checkpoint %s epoch %s: writing manifest: %w", cp.ID, cp.Epoch, err)
	}
	return SaveStats{Bytes: len(cp.Payload), Records: n + 1, Duration: time.Since(start)}, nil
}

// writeContext is ctx without its cancellation (see Save): it ends at
// ctx's deadline, after SaveTimeout, or CancelGrace after ctx is
// cancelled, whichever is first.
func (s *Store) writeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d := s.cfg.SaveTimeout
	if d <= 0 {
		d = DefaultSaveTimeout
	}
	grace := s.cfg.CancelGrace
	if grace <= 0 {
		grace = DefaultCancelGrace
	}
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl))
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(grace, cancel)
		<-wctx.Done() // the Save has returned, or the grace is over
		t.Stop()
	})
	return wctx, func() { stop(); cancel() }
}

// writeChunks writes cp's chunks (acknowledged) and returns the manifest
// that describes them and their number.
func (s *Store) writeChunks(ctx context.Context, cp Checkpoint) (manifest, int, error) {
	slot := cp.Epoch.Slot()
	if int64(len(cp.Payload)) > s.lim.maxState {
		return manifest{}, 0, fmt.Errorf("checkpoint %s epoch %s: payload of %d bytes exceeds the limit of %d (MaxStateBytes; raise it on every instance)", cp.ID, cp.Epoch, len(cp.Payload), s.lim.maxState)
	}
	m, values := encodeCheckpoint(cp, s.chunkBytes)
	if len(values) > s.lim.maxChunks {
		return manifest{}, 0, fmt.Errorf("checkpoint %s epoch %s: %d bytes need %d chunks of %d bytes, the limit is %d (MaxChunks; raise the chunk size)", cp.ID, cp.Epoch, len(cp.Payload), len(values), s.chunkBytes, s.lim.maxChunks)
	}
	msgs := make([]kafka.Message, len(values))
	for i, v := range values {
		msgs[i] = kafka.Message{Key: []byte(chunkKey(cp.ID, slot, i)), Value: v}
	}
	if err := s.writer.WriteMessages(ctx, msgs...); err != nil {
		return m, 0, fmt.Errorf("checkpoint %s epoch %s: writing %d chunks: %w", cp.ID, cp.Epoch, len(values), err)
	}
	return m, len(values), nil
}

// Load returns the newest complete checkpoint of id, or (nil, stats, nil) if
// there is none. It reads id's checkpoint partition from the first offset to
// the end offset fetched at the start. Rejected slots are listed in
// LoadStats.Rejected; if manifests exist but none is complete, the error is
// ErrNoValidCheckpoint.
func (s *Store) Load(ctx context.Context, id ID) (*Checkpoint, LoadStats, error) {
	cps, st, err := s.LoadAll(ctx, id)
	if err != nil || len(cps) == 0 {
		return nil, st, err
	}
	return cps[0], st, nil
}

// LoadAll is Load returning every complete checkpoint of id (at most one per
// slot), newest first, so that a caller whose payload decoding fails can fall
// back to the older one.
//
// Memory: while reading, at most MaxStateBytes + MaxChunks × 30 bytes of
// chunk records are kept per slot, plus one manifest record per slot; each
// complete checkpoint's payload (at most MaxStateBytes) is allocated only
// after its chunks were counted and checked.
func (s *Store) LoadAll(ctx context.Context, id ID) ([]*Checkpoint, LoadStats, error) {
	start := time.Now()
	var st LoadStats
	part := s.routeOf(id.prefix())
	first, end, err := kafkautil.Offsets(ctx, s.client, s.cfg.Topic, part)
	if err != nil {
		return nil, st, fmt.Errorf("checkpoint %s: offsets of %s/%d: %w", id, s.cfg.Topic, part, err)
	}
	slots := map[string]*slotRecords{"A": {}, "B": {}}
	err = kafkautil.ReadRange(ctx, s.client, s.cfg.Topic, part, first, end, func(r kafkautil.Record) error {
		st.Records++
		st.Bytes += len(r.Value)
		if slot, idx, ok := belongs(string(r.Key), id); ok {
			slots[slot].add(idx, r.Value, s.lim)
			if idx < 0 {
				slots[slot].mtime = r.Time
			}
		}
		return nil
	})
	if err != nil {
		return nil, st, fmt.Errorf("checkpoint %s: reading %s/%d: %w", id, s.cfg.Topic, part, err)
	}
	cps, rej, manifests := s.assembleSlots(id, slots)
	st.Rejected = rej
	st.Dropped = slots["A"].dropped + slots["B"].dropped
	st.Duration = time.Since(start)
	if len(cps) == 0 && manifests > 0 {
		return nil, st, fmt.Errorf("%w for %s: %s", ErrNoValidCheckpoint, id, joinRejections(rej))
	}
	return cps, st, nil
}

// assembleSlots validates both slots of id: the complete checkpoints newest
// first, the rejected slots, and how many slots had a manifest.
func (s *Store) assembleSlots(id ID, slots map[string]*slotRecords) (cps []*Checkpoint, rej []Rejection, manifests int) {
	for _, slot := range []string{"A", "B"} {
		sd := slots[slot]
		if sd.manifest == nil {
			continue
		}
		manifests++
		cp, reason, why := assemble(id, slot, sd.manifest, sd.chunks, s.lim)
		if cp == nil {
			if reason == ReasonTorn && sd.evicted > 0 {
				reason, why = ReasonTooLarge, fmt.Sprintf("%s (%d chunk records were dropped: the slot held more than its bound of %d bytes)", why, sd.evicted, s.lim.slotBytes())
			}
			rej = append(rej, Rejection{Slot: slot, Reason: reason, Detail: why})
			continue
		}
		cp.Time = sd.mtime
		cps = append(cps, cp)
	}
	sort.Slice(cps, func(i, j int) bool { return cps[j].Epoch.Less(cps[i].Epoch) })
	return cps, rej, manifests
}

func joinRejections(rej []Rejection) string {
	s := make([]string, len(rej))
	for i, r := range rej {
		s[i] = r.String()
	}
	return strings.Join(s, "; ")
}
