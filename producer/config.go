package producer

import (
	"crypto/tls"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"

	"okstream/internal/progress"
)

// KeyMode says how an event's key (and its Kafka record key) is chosen.
type KeyMode int

// Key modes.
const (
	// KeyRow keys an event by its dataset row index in file order ("17"), so
	// a row keeps its key — and its partition — across passes and
	// permutations.
	KeyRow KeyMode = iota
	// KeyColumn keys an event by Config.RowKeys[row], e.g. the values of a
	// CSV column of the original file (see ReadColumn and ColumnKeys).
	KeyColumn
	// KeyRandom keys event i by "k-<j>" with j drawn uniformly from
	// [0, KeySpace) by a hash of (Seed, i): deterministic for a seed,
	// independent between events.
	KeyRandom
)

// String returns "row", "column" or "random".
func (m KeyMode) String() string {
	switch m {
	case KeyRow:
		return "row"
	case KeyColumn:
		return "column"
	case KeyRandom:
		return "random"
	}
	return fmt.Sprintf("KeyMode(%d)", int(m))
}

// ParseKeyMode reads "row", "column" or "random".
func ParseKeyMode(s string) (KeyMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "row":
		return KeyRow, nil
	case "column", "col":
		return KeyColumn, nil
	case "random":
		return KeyRandom, nil
	}
	return 0, fmt.Errorf("unknown key mode %q: use row, column or random", s)
}

// TimeMode says how an event's ts (and its Kafka record time) is set.
//
// The record time is what a broker's time-based retention looks at: records
// stamped long ago (TimeColumn with old data, TimeSynthetic with an old
// start) may be deleted as soon as the next retention check runs, and
// brokers refuse times further ahead than message.timestamp.after.max.ms
// (1 h by default since Kafka 4.0). Use TimeNow or TimeNone to stay clear
// of both, or raise the topic's retention.ms.
type TimeMode int

// Time modes.
const (
	// TimeNow stamps each event with the wall clock (ms) when its call is
	// handed to the Writer. The only mode that is not deterministic.
	TimeNow TimeMode = iota
	// TimeNone sends no ts; the Kafka record time is left to the client
	// (the send time).
	TimeNone
	// TimeColumn uses Config.RowTimes[row] (ms since the Unix epoch).
	TimeColumn
	// TimeSynthetic stamps event i with TimeStart + i×TimeStep (ms):
	// deterministic event times, e.g. for tests.
	TimeSynthetic
)

// String returns "now", "none", "column" or "synthetic".
func (m TimeMode) String() string {
	switch m {
	case TimeNow:
		return "now"
	case TimeNone:
		return "none"
	case TimeColumn:
		return "column"
	case TimeSynthetic:
		return "synthetic"
	}
	return fmt.Sprintf("TimeMode(%d)", int(m))
}

// Defaults.
const (
	DefaultBatchSize    = 1000
	DefaultBatchTimeout = 5 * time.Millisecond
	DefaultKeySpace     = 1000
	DefaultDrainTimeout = 10 * time.Second
	// DefaultMaxMessageBytes is used for BatchBytes when the topic's
	// max.message.bytes cannot be read (Kafka's default is 1048588).
	DefaultMaxMessageBytes = 1000000
)

// Config says what to replay where. The zero value plus Brokers and Topic
// replays every row once, in file order, dense, labelled, keyed by row,
// stamped with the wall clock, as fast as the brokers acknowledge.
type Config struct {
	Brokers []string // bootstrap brokers, host:port
	Topic   string   // must exist (see EnsureTopic)
	// TLS and SASL secure every connection of the replay (metadata and
	// writes); nil: plaintext, no authentication. internal/kafkasec builds
	// them from the command line.
	TLS  *tls.Config
	SASL sasl.Mechanism

	// Sparse sends xi/xv (the non-zero entries) instead of dense x.
	Sparse bool
	// JSON writes each event as a JSON object (codec.AppendEventJSON: the
	// same schema, for a consumer run with --input-format json) instead
	// of msgpack (codec.AppendEvent). The events are the same either way.
	JSON bool
	// Unlabelled is the fraction of events sent without y, in [0, 1]:
	// 0 labels every event, 1 none; in between, event i is unlabelled when
	// a uniform number hashed from (Seed, i) falls below it.
	Unlabelled float64

	Keys KeyMode
	// RowKeys are the keys of KeyColumn, one per dataset row (file order).
	RowKeys []string
	// KeySpace is the number of distinct KeyRandom keys (default 1000).
	KeySpace int

	// Seed drives the permutations, random keys and unlabelled draws.
	Seed uint64
	// Permute replays each pass in a seeded random order
	// (dataset.Permutation(n, Seed, pass)) instead of file order.
	Permute bool

	// Rate is the target in events per second; 0 sends as fast as the
	// brokers acknowledge.
	Rate float64
	// Loop starts another pass when the rows run out (a new permutation
	// per pass with Permute). Without Limit it runs until ctx is cancelled.
	Loop bool
	// Limit stops after this many events (0: one pass, or forever with Loop).
	Limit int64

	// IDPrefix is put before every event id ("<pass>-<row>"), e.g. to keep
	// ids of several replays into one topic apart.
	IDPrefix string

	Time TimeMode
	// RowTimes are the timestamps (ms) of TimeColumn, one per dataset row.
	RowTimes []int64
	// TimeStart and TimeStep (ms; default 1) define TimeSynthetic stamps.
	TimeStart, TimeStep int64

	// BatchSize is the number of events per WriteMessages call (default
	// 1000); the Writer's per-partition batches are BatchSize/partitions.
	BatchSize int
	// BatchTimeout is the Writer's BatchTimeout (default 5 ms): how long a
	// partial batch waits for more records.
	BatchTimeout time.Duration
	// BatchBytes bounds a produce batch; 0 uses the topic's
	// max.message.bytes (or DefaultMaxMessageBytes if it cannot be read).
	BatchBytes int64
	// Balancer maps keys to partitions; nil means kafka.Murmur2Balancer{},
	// the Java client's partitioner (see the package documentation).
	// Partition describes only the default.
	Balancer kafka.Balancer
	// DrainTimeout bounds the wait for unacknowledged events after ctx is
	// cancelled (default 10 s).
	DrainTimeout time.Duration

	// Progress, if not nil, is advanced by every acknowledged event and
	// finished when Replay returns.
	Progress *progress.Bar
	// OnAck, if not nil, is called for every acknowledged event with its
	// index i and where it landed. Calls are serialized, in acknowledgement
	// order (per partition: offset order); a call may come after Replay
	// returned only if the drain after a cancellation timed out.
	OnAck func(i int64, partition int, offset int64)

	clock clock // nil: the wall clock; tests use a fake one
}

func (c *Config) withDefaults() Config {
	d := *c
	if d.BatchSize <= 0 {
		d.BatchSize = DefaultBatchSize
	}
	if d.BatchTimeout <= 0 {
		d.BatchTimeout = DefaultBatchTimeout
	}
	if d.KeySpace <= 0 {
		d.KeySpace = DefaultKeySpace
	}
	if d.TimeStep == 0 {
		d.TimeStep = 1
	}
	if d.DrainTimeout <= 0 {
		d.DrainTimeout = DefaultDrainTimeout
	}
	if d.clock == nil {
		d.clock = wallClock{}
	}
	return d
}

// check validates the parts of c that do not depend on Kafka, for a
// dataset of n rows.
func (c *Config) check(n int) error {
	switch {
	case c.Unlabelled < 0 || c.Unlabelled > 1 || math.IsNaN(c.Unlabelled):
		return fmt.Errorf("Config.Unlabelled is %v; it must be a fraction in [0, 1]", c.Unlabelled)
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("Config.Rate is %v; use events per second > 0, or 0 for as fast as possible", c.Rate)
	case c.Limit < 0:
		return fmt.Errorf("Config.Limit is %d; use a count > 0, or 0 for no limit", c.Limit)
	case c.BatchSize < 0:
		return fmt.Errorf("BatchSize is %d; use a count > 0 (0: %d)", c.BatchSize, DefaultBatchSize)
	case c.KeySpace < 0:
		return fmt.Errorf("KeySpace is %d; use a count > 0 (0: %d)", c.KeySpace, DefaultKeySpace)
	}
	switch c.Keys {
	case KeyRow, KeyRandom:
	case KeyColumn:
		if len(c.RowKeys) != n {
			return fmt.Errorf("KeyColumn needs one key per row: %d keys for %d rows", len(c.RowKeys), n)
		}
		for r, k := range c.RowKeys {
			if k == "" {
				return fmt.Errorf("KeyColumn: the key of row %d is empty (every event needs a key)", r)
			}
		}
	default:
		return fmt.Errorf("unknown KeyMode %d", int(c.Keys))
	}
	switch c.Time {
	case TimeNow, TimeNone:
	case TimeColumn:
		if len(c.RowTimes) != n {
			return fmt.Errorf("TimeColumn needs one timestamp per row: %d for %d rows", len(c.RowTimes), n)
		}
	case TimeSynthetic:
		if c.TimeStart == 0 {
			return fmt.Errorf("TimeSynthetic needs TimeStart (ms since the Unix epoch), e.g. time.Now().UnixMilli()")
		}
	default:
		return fmt.Errorf("unknown TimeMode %d", int(c.Time))
	}
	return nil
}
