// Package kafkautil holds the small Kafka helpers several okstream packages
// share, on top of segmentio/kafka-go's Client: creating topics with their
// configuration, reading topic configuration and offsets, and reading a
// partition range without waiting at holes.
package kafkautil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// TopicSpec describes a topic to create.
type TopicSpec struct {
	Name       string
	Partitions int
	Configs    map[string]string
	// Replication is the replication factor; 0 takes the brokers' default
	// (default.replication.factor), falling back to 1 on brokers that do
	// not accept a default. An explicit factor the brokers cannot meet is
	// an error.
	Replication int
}

// EnsureTopic creates the topic if it does not exist and waits until its
// partitions have leaders. It reports whether it created the topic. An
// existing topic is left as it is (callers check its configuration with
// TopicConfig when it matters).
func EnsureTopic(ctx context.Context, c *kafka.Client, s TopicSpec) (created bool, err error) {
	n, err := Partitions(ctx, c, s.Name)
	if err == nil && n > 0 {
		return false, nil
	}
	if err != nil && !errors.Is(err, kafka.UnknownTopicOrPartition) {
		return false, err
	}
	keys := make([]string, 0, len(s.Configs))
	for k := range s.Configs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var entries []kafka.ConfigEntry
	for _, k := range keys {
		entries = append(entries, kafka.ConfigEntry{ConfigName: k, ConfigValue: s.Configs[k]})
	}
	rf := -1
	if s.Replication > 0 {
		rf = s.Replication
	}
	resp, err := c.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: s.Name, NumPartitions: s.Partitions, ReplicationFactor: rf, ConfigEntries: entries,
	}}})
	if err != nil {
		return false, fmt.Errorf("create topic %s: %w", s.Name, err)
	}
	if e := resp.Errors[s.Name]; e != nil {
		if errors.Is(e, kafka.TopicAlreadyExists) {
			return false, WaitTopic(ctx, c, s.Name)
		}
		if rf == -1 && (errors.Is(e, kafka.InvalidReplicationFactor) || strings.Contains(e.Error(), "replication")) {
			// Brokers that do not take the default (-1): fall back to 1.
			resp, err = c.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
				Topic: s.Name, NumPartitions: s.Partitions, ReplicationFactor: 1, ConfigEntries: entries,
			}}})
			if err == nil {
				e = resp.Errors[s.Name]
			} else {
				e = err
			}
		}
		if e != nil && !errors.Is(e, kafka.TopicAlreadyExists) {
			return false, fmt.Errorf("create topic %s: %w", s.Name, e)
		}
	}
	return true, WaitTopic(ctx, c, s.Name)
}

// WaitTopic waits until every partition of the topic has a leader that
// answers for it. (Right after CreateTopics, Kafka 4 can list leaders in
// its metadata and still answer NOT_LEADER_OR_FOLLOWER for 50–200 ms, so
// this also waits until ListOffsets succeeds on every partition.)
func WaitTopic(ctx context.Context, c *kafka.Client, topic string) error {
	for {
		md, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		if err == nil && len(md.Topics) == 1 && md.Topics[0].Error == nil && len(md.Topics[0].Partitions) > 0 {
			ready := true
			var reqs []kafka.OffsetRequest
			for _, p := range md.Topics[0].Partitions {
				if p.Error != nil || p.Leader.Host == "" {
					ready = false
				}
				reqs = append(reqs, kafka.LastOffsetOf(p.ID))
			}
			if ready {
				resp, lerr := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
				if lerr == nil {
					for _, po := range resp.Topics[topic] {
						if po.Error != nil {
							ready, lerr = false, po.Error
						}
					}
				} else {
					ready = false
				}
				if ready {
					return nil
				}
				err = lerr
			}
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
			return fmt.Errorf("topic %s not ready: %w", topic, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Partitions returns the number of partitions of a topic
// (kafka.UnknownTopicOrPartition if it does not exist).
func Partitions(ctx context.Context, c *kafka.Client, topic string) (int, error) {
	md, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, err
	}
	if len(md.Topics) != 1 {
		return 0, fmt.Errorf("metadata for %s: %d topics returned", topic, len(md.Topics))
	}
	if md.Topics[0].Error != nil {
		return 0, md.Topics[0].Error
	}
	return len(md.Topics[0].Partitions), nil
}

// TopicConfig returns the named configuration values of a topic (all of
// them when names is empty).
func TopicConfig(ctx context.Context, c *kafka.Client, topic string, names ...string) (map[string]string, error) {
	resp, err := c.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic, ConfigNames: names,
	}}})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range resp.Resources {
		if r.Error != nil {
			return nil, r.Error
		}
		for _, e := range r.ConfigEntries {
			out[e.ConfigName] = e.ConfigValue
		}
	}
	return out, nil
}

// Offsets returns the first and the end (high watermark) offset of a
// partition.
func Offsets(ctx context.Context, c *kafka.Client, topic string, partition int) (first, end int64, err error) {
	resp, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
		topic: {kafka.FirstOffsetOf(partition), kafka.LastOffsetOf(partition)},
	}})
	if err != nil {
		return 0, 0, err
	}
	for _, po := range resp.Topics[topic] {
		if po.Partition == partition {
			if po.Error != nil {
				return 0, 0, po.Error
			}
			return po.FirstOffset, po.LastOffset, nil
		}
	}
	return 0, 0, fmt.Errorf("no offsets returned for %s/%d", topic, partition)
}

// Record is a fetched record with its key and value read into memory.
type Record struct {
	Partition int
	Offset    int64
	Time      time.Time
	Key       []byte // nil for a null key
	Value     []byte // nil for a null value (a tombstone)
	Headers   []kafka.Header
}

// FetchBatch fetches the records of one partition from offset on (at most
// maxBytes, waiting at most maxWait for the first one) and appends those
// with offset ≥ from to dst. It returns the records, the partition's high
// watermark and the fetch error (e.g. kafka.OffsetOutOfRange) if any.
//
// The keys and values are copied into a few shared blocks of memory
// (fetchBlock bytes each, or one record's size if larger) rather than one
// allocation each: a record's Key and Value stay valid for as long as they
// are referenced, and are never overwritten, but keeping one alive keeps
// its block alive. Passing the previous call's slice as dst[:0] reuses it.
func FetchBatch(ctx context.Context, c *kafka.Client, topic string, partition int, from int64, maxBytes int, maxWait time.Duration, dst []Record) ([]Record, int64, error) {
	var arena []byte
	hw, err := FetchFunc(ctx, c, topic, partition, from, maxBytes, maxWait, func(r *kafka.Record) error {
		rec, rest, err := copyRecord(r, partition, arena, nil)
		if err != nil {
			return err
		}
		arena = rest
		dst = append(dst, rec)
		return nil
	})
	return dst, hw, err
}

// FetchChunks is FetchBatch for a fetcher that recycles its memory: the
// records are appended to dst as chunks of ch's size (the last one
// partial), chunks taken from ch, and their keys and values copied into
// blocks from mem. It returns the chunks, the number of records and the
// high watermark. The caller owns the chunks and the blocks handed out
// (mem.Take) and may give them back (ch.Give, mem.Give) once it holds no
// reference to those records' keys and values: later fetches then reuse
// them. Fixed-size chunks are what makes the record memory reusable
// whatever a fetch's length: one slice per fetch was re-grown or dropped
// whenever a fetch was longer than the ones before.
func FetchChunks(ctx context.Context, c *kafka.Client, topic string, partition int, from int64, maxBytes int, maxWait time.Duration, dst [][]Record, ch *Chunks, mem *Blocks) ([][]Record, int, int64, error) {
	var arena []byte
	n := 0
	hw, err := FetchFunc(ctx, c, topic, partition, from, maxBytes, maxWait, func(r *kafka.Record) error {
		rec, rest, err := copyRecord(r, partition, arena, mem)
		if err != nil {
			return err
		}
		arena = rest
		if k := len(dst); k == 0 || len(dst[k-1]) == cap(dst[k-1]) {
			dst = append(dst, ch.get())
		}
		last := &dst[len(dst)-1]
		*last = append(*last, rec)
		n++
		return nil
	})
	return dst, n, hw, err
}

// copyRecord copies r's key and value into arena (see readInto) and returns
// the record and the arena's rest.
func copyRecord(r *kafka.Record, partition int, arena []byte, mem *Blocks) (Record, []byte, error) {
	rec := Record{Partition: partition, Offset: r.Offset, Time: r.Time, Headers: r.Headers}
	var err error
	if r.Key != nil {
		if rec.Key, arena, err = readInto(arena, r.Key, mem); err != nil {
			return rec, arena, err
		}
	}
	if r.Value != nil {
		if rec.Value, arena, err = readInto(arena, r.Value, mem); err != nil {
			return rec, arena, err
		}
	}
	return rec, arena, nil
}

// Chunks recycles the fixed-size record slices of FetchChunks. It keeps at
// most twice the chunks the last Give returned (and a few), so that an
// idle partition's short fetches shrink it. Not safe for concurrent use:
// the fetching goroutine owns it.
type Chunks struct {
	size int
	free [][]Record
}

// NewChunks returns a recycler of chunks of size records (at least 1).
func NewChunks(size int) *Chunks { return &Chunks{size: max(1, size)} }

func (c *Chunks) get() []Record {
	if k := len(c.free); k > 0 {
		r := c.free[k-1]
		c.free[k-1] = nil
		c.free = c.free[:k-1]
		return r
	}
	return make([]Record, 0, c.size)
}

// Give hands chunks back for reuse: nothing may refer to their records'
// keys and values any more (the records are cleared here).
func (c *Chunks) Give(chunks [][]Record) {
	if k := 2*len(chunks) + 2; len(c.free) > k {
		clear(c.free[k:])
		c.free = c.free[:k]
	}
	for _, r := range chunks {
		if cap(r) == c.size {
			clear(r)
			c.free = append(c.free, r[:0])
		}
	}
}

// Blocks recycles the memory FetchChunks copies keys and values into:
// blocks of fetchBlock bytes handed out to fetches (Take lists them) and
// given back by their owner (Give). It keeps at most twice the blocks the
// last fetch took, so an idle partition's small fetches shrink it. Not
// safe for concurrent use: the fetching goroutine owns it.
type Blocks struct {
	free, used [][]byte
}

// block returns a block of at least n bytes: a recycled one when n fits.
func (m *Blocks) block(n int) []byte {
	if m == nil || n > fetchBlock {
		return make([]byte, max(n, fetchBlock))
	}
	var b []byte
	if k := len(m.free); k > 0 {
		b, m.free[k-1] = m.free[k-1], nil
		m.free = m.free[:k-1]
	} else {
		b = make([]byte, fetchBlock)
	}
	m.used = append(m.used, b)
	return b
}

// Take returns the blocks handed out since the last Take, for Give.
func (m *Blocks) Take() [][]byte {
	out := m.used
	m.used = nil
	if k := 2 * len(out); len(m.free) > k {
		clear(m.free[k:])
		m.free = m.free[:k]
	}
	return out
}

// Give hands blocks back for reuse: nothing may refer to them any more.
func (m *Blocks) Give(blocks [][]byte) {
	m.free = append(m.free, blocks...)
}

// FetchFunc fetches the records of one partition from offset on (at most
// maxBytes, waiting at most maxWait for the first one) and calls f with
// each of those with offset ≥ from, in offset order, stopping at f's first
// error. r's Key and Value (nil for null) are readers over the fetch
// response, valid only until f returns: FetchFunc closes them then, which
// hands the response's buffers back to kafka-go's pool once every record's
// are closed. f may leave a value unread (or read part of it) to skip
// copying what it does not need. It returns the partition's high watermark
// and the fetch error (e.g. kafka.OffsetOutOfRange), a read error, or f's.
func FetchFunc(ctx context.Context, c *kafka.Client, topic string, partition int, from int64, maxBytes int, maxWait time.Duration, f func(r *kafka.Record) error) (int64, error) {
	resp, err := c.Fetch(ctx, &kafka.FetchRequest{Topic: topic, Partition: partition, Offset: from, MinBytes: 1, MaxBytes: int64(maxBytes), MaxWait: maxWait})
	if err != nil {
		return 0, err
	}
	if resp.Error != nil {
		return resp.HighWatermark, resp.Error
	}
	for {
		r, err := resp.Records.ReadRecord()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return resp.HighWatermark, nil
			}
			return resp.HighWatermark, fmt.Errorf("reading %s/%d at %d: %w", topic, partition, from, err)
		}
		if r.Offset >= from {
			err = f(r)
		}
		if r.Key != nil {
			r.Key.Close()
		}
		if r.Value != nil {
			r.Value.Close()
		}
		if err != nil {
			return resp.HighWatermark, err
		}
	}
}

// fetchBlock is the size of the blocks FetchBatch copies keys and values
// into.
const fetchBlock = 64 << 10

// readInto reads b into the free end of arena (a new block from mem when
// it does not fit) and returns the bytes read, with a capacity of their length (so an
// append to them never writes into the next record), and the arena's rest.
func readInto(arena []byte, b kafka.Bytes, mem *Blocks) (out, rest []byte, err error) {
	n := b.Len()
	if n == 0 {
		return []byte{}, arena, nil // empty, not null
	}
	if n > cap(arena) {
		arena = mem.block(n)
	}
	arena = arena[:cap(arena)]
	if _, err := io.ReadFull(b, arena[:n]); err != nil {
		return nil, arena, err
	}
	return arena[:n:n], arena[n:], nil
}

// ReadRange calls fn for every record of a partition with from ≤ offset <
// end, in offset order. It never waits for a record that does not exist:
// when a fetch returns nothing new below end (the rest was compacted away or
// is a transaction marker), it stops.
func ReadRange(ctx context.Context, c *kafka.Client, topic string, partition int, from, end int64, fn func(Record) error) error {
	next := from
	var buf []Record
	for next < end {
		var err error
		buf, _, err = FetchBatch(ctx, c, topic, partition, next, 16<<20, 200*time.Millisecond, buf[:0])
		if err != nil {
			return err
		}
		got := false
		for _, r := range buf {
			if r.Offset >= end {
				return nil
			}
			if err := fn(r); err != nil {
				return err
			}
			next = r.Offset + 1
			got = true
		}
		if !got {
			return nil
		}
	}
	return nil
}

// ReadPartition reads a partition from its first offset to the high
// watermark at the time of the call.
func ReadPartition(ctx context.Context, c *kafka.Client, topic string, partition int) ([]Record, error) {
	first, end, err := Offsets(ctx, c, topic, partition)
	if err != nil {
		return nil, err
	}
	var out []Record
	err = ReadRange(ctx, c, topic, partition, first, end, func(r Record) error {
		out = append(out, r)
		return nil
	})
	return out, err
}
