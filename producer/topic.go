package producer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"

	"okstream/dataset"
	"okstream/internal/kafkasec"
	"okstream/internal/kafkautil"
)

// Admin makes the topic calls of a replay (create, read partitions and
// retention) on Brokers over TLS and SASL when they are set (nil:
// plaintext, no authentication), the same connection security as
// Config.TLS and Config.SASL.
type Admin struct {
	Brokers []string
	TLS     *tls.Config
	SASL    sasl.Mechanism
}

// EnsureTopic creates topic with the given number of partitions (and the
// brokers' default replication factor) unless it exists, and waits until
// every partition has a leader. It returns the topic's partition count —
// that of the existing topic if there was one, which may differ from
// partitions — and whether it created the topic.
func EnsureTopic(ctx context.Context, brokers []string, topic string, partitions int) (n int, created bool, err error) {
	return Admin{Brokers: brokers}.EnsureTopic(ctx, topic, partitions, nil)
}

// EnsureTopicConfig is EnsureTopic with topic configs (e.g. retention.ms)
// for a topic it creates; an existing topic keeps its configuration.
func EnsureTopicConfig(ctx context.Context, brokers []string, topic string, partitions int, configs map[string]string) (n int, created bool, err error) {
	return Admin{Brokers: brokers}.EnsureTopic(ctx, topic, partitions, configs)
}

// EnsureTopic is the package's EnsureTopicConfig over a's connections.
func (a Admin) EnsureTopic(ctx context.Context, topic string, partitions int, configs map[string]string) (n int, created bool, err error) {
	if topic == "" {
		return 0, false, errors.New("producer: EnsureTopic: no topic name")
	}
	if partitions < 1 {
		return 0, false, fmt.Errorf("producer: EnsureTopic: %d partitions; a topic needs at least 1", partitions)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*metaTimeout)
	defer cancel()
	c, done := a.client()
	defer done()
	created, err = kafkautil.EnsureTopic(ctx, c, kafkautil.TopicSpec{Name: topic, Partitions: partitions, Configs: configs})
	if err != nil {
		if adv := kafkasec.Advice(err); adv != "" {
			return 0, false, fmt.Errorf("producer: could not create topic %q on %s: %w: %s", topic, strings.Join(a.Brokers, ","), err, adv)
		}
		return 0, false, fmt.Errorf("producer: could not create topic %q with %d partitions on %s: %w; check that the brokers are reachable and allow creating topics, or create it by hand (kafka-topics.sh --create --topic %s --partitions %d)",
			topic, partitions, strings.Join(a.Brokers, ","), err, topic, partitions)
	}
	n, err = kafkautil.Partitions(ctx, c, topic)
	if err != nil {
		return 0, created, fmt.Errorf("producer: topic %q: reading its partitions: %w", topic, err)
	}
	return n, created, nil
}

// TopicRetention returns a topic's retention.ms (-1: unlimited), or an
// error if it cannot be read. Replays that stamp records with old event
// times check it: a broker deletes records older than retention.ms by
// their record time.
func TopicRetention(ctx context.Context, brokers []string, topic string) (int64, error) {
	return Admin{Brokers: brokers}.TopicRetention(ctx, topic)
}

// TopicRetention is the package's TopicRetention over a's connections.
func (a Admin) TopicRetention(ctx context.Context, topic string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, metaTimeout)
	defer cancel()
	c, done := a.client()
	defer done()
	cfg, err := kafkautil.TopicConfig(ctx, c, topic, "retention.ms")
	if err != nil {
		return 0, kafkasec.Explain(err)
	}
	v, ok := cfg["retention.ms"]
	if !ok {
		return 0, fmt.Errorf("producer: topic %q: retention.ms not reported", topic)
	}
	return strconv.ParseInt(v, 10, 64)
}

// client is a's metadata client and the function that releases its
// connections.
func (a Admin) client() (*kafka.Client, func()) {
	t := kafkasec.Transport(a.TLS, a.SASL)
	return kafkasec.Client(a.Brokers, t, metaTimeout), func() { kafkasec.CloseTransport(t) }
}

// ReadColumn returns the values of one column of a CSV file, one per row in
// the order dataset.Load(path, opts) reads the rows, so that they line up
// with that dataset's rows. column is an index ("0", "-1") or a header name,
// and may be a column opts drops or the label column. It reads the file
// through the dataset package with column as the label, so the column must
// be numeric, as must every column that opts neither drops nor reads as the
// label (they are, if dataset.Load(path, opts) succeeds). LIBSVM files have
// no columns.
func ReadColumn(path string, opts dataset.Options, column string) ([]float64, error) {
	if strings.TrimSpace(column) == "" {
		return nil, errors.New("producer: no column given")
	}
	o := opts
	o.Label = column
	if opts.Dim > 0 && o.MaxDim < opts.Dim+1 {
		o.MaxDim = opts.Dim + 1 // the caller's width bound still holds with the label moved
	}
	o.Dim = 0
	o.Drop = nil
	for _, d := range opts.Drop {
		if strings.TrimSpace(d) != strings.TrimSpace(column) {
			o.Drop = append(o.Drop, d)
		}
	}
	r, err := dataset.Open(path, o)
	if err != nil {
		if strings.Contains(err.Error(), "is the label column") {
			return nil, fmt.Errorf("producer: column %q: %w (name the column the same way, by index or by name, in the drop list and here)", column, err)
		}
		return nil, fmt.Errorf("producer: column %q: %w", column, err)
	}
	defer r.Close()
	if r.Format() != dataset.FormatCSV {
		return nil, fmt.Errorf("producer: column %q: %s is a %s file, which has no columns (keys and times from a column need a CSV file)", column, path, r.Format())
	}
	var out []float64
	for {
		ex, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("producer: column %q: %w (the column must be numeric)", column, err)
		}
		out = append(out, ex.Y)
	}
	return out, nil
}

// ColumnKeys returns the values of a numeric CSV column (see ReadColumn) as
// event keys: integers as "17", others in the shortest decimal form that
// reads back exactly ("0.25"), never in exponent form. Ids above 2^53 are
// not represented exactly (the column is read as float64).
func ColumnKeys(path string, opts dataset.Options, column string) ([]string, error) {
	vals, err := ReadColumn(path, opts, column)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(vals))
	for i, v := range vals {
		keys[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return keys, nil
}
