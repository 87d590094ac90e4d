package consumer

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/internal/kafkautil"
	"okstream/learner"
	"okstream/share"
)

// Models shared across partitions (issue 17; docs/sharing.md). The schedule
// is package share's; the files share*.go are its Kafka driver:
//
//   - share.go: configuration, metrics, the sync topic's setup;
//   - share_tailer.go: the tailer that follows the sync topic;
//   - share_validate.go: the checks of every record it reads (MAC, ranges);
//   - share_epochs.go: the strict schedule's epoch counts and mixing terms;
//   - share_boundary.go: the sync point at each boundary and all its waits;
//   - share_publish.go: publishing a worker's deltas;
//   - share_decision.go: decision records and their committer;
//   - share_idle.go: idle partitions (--share-skip-idle).

// Sharing defaults.
const (
	DefaultShareEvery   = 16
	DefaultShareLag     = 1
	DefaultShareMaxWait = 10 * time.Second
)

// shareDefaults fills in the sharing defaults.
func (c *Config) shareDefaults() {
	if len(c.Share) == 0 {
		return
	}
	if c.ShareTopic == "" {
		c.ShareTopic = c.Checkpoints + ".share"
	}
	if c.ShareEvery <= 0 {
		c.ShareEvery = DefaultShareEvery
	}
	if c.ShareLag == 0 {
		c.ShareLag = DefaultShareLag
	}
	if c.ShareMaxWait <= 0 {
		c.ShareMaxWait = DefaultShareMaxWait
	}
	if c.ShareWindow <= 0 {
		// A restore may fall back to the older of the two checkpoint slots
		// (the newest torn by a crash: common after a SIGKILL), and a
		// checkpoint is taken between micro-batches: a replay can start up
		// to two intervals plus two batches back.
		span := 2 * int64(c.CheckpointEvery+c.BatchSize)
		c.ShareWindow = share.Window((span+c.ShareEvery-1)/c.ShareEvery, c.ShareLag)
	}
}

// Sharers lists the learners that implement learner.Sharer, for messages.
func Sharers() []string {
	var out []string
	for _, name := range learner.Names() {
		l, err := learner.New(name, 1)
		if _, ok := l.(learner.Sharer); err == nil && !ok {
			// Without σ a kernel learner runs inside the self-tuning
			// wrapper (not shareable); with σ given it is itself.
			if l2, err2 := learner.New(name+":sigma=1", 1); err2 == nil {
				if _, ok := l2.(learner.Sharer); ok {
					l, name = l2, name+" (with sigma= given)"
				}
			}
		}
		if err != nil {
			continue
		}
		if s, ok := l.(learner.Sharer); ok {
			if _, err := s.ShareDelta(); err != nil {
				name += " (some configurations: " + err.Error() + ")"
			}
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// shareRecordFloor is the size of one sync record's deltas for fresh
// copies of the shared models, and which models they are: the exact size
// for the models whose delta is a fixed vector (FOGD, linear, PKAWV-Taylor),
// a lower bound for those whose delta carries buffered examples (FORKS,
// NOGD). A record above the share topic's limit could never be published,
// so the pipeline refuses to start (setupShareTopic).
func shareRecordFloor(c *Config) (int, string) {
	specs := map[string]string{}
	for _, m := range c.Models {
		specs[m.Name] = m.Spec
	}
	total, parts := 0, []string{}
	for _, name := range c.Share {
		l, err := learner.New(specs[name], max(c.Dim, 1))
		if err != nil {
			continue
		}
		if s, ok := l.(learner.Sharer); ok {
			if d, err := s.ShareDelta(); err == nil {
				total += len(d) + len(name) + 16
				parts = append(parts, fmt.Sprintf("%s: %d", name, len(d)))
			}
		}
	}
	return total, strings.Join(parts, ", ")
}

// validateShare checks the sharing settings (Validate calls it).
func (c *Config) validateShare(bad func(string, ...any)) {
	if len(c.Share) == 0 {
		return
	}
	byName := map[string]string{}
	for _, m := range c.Models {
		byName[m.Name] = m.Spec
	}
	seen := map[string]bool{}
	for _, name := range c.Share {
		spec, ok := byName[name]
		if !ok {
			bad("--share %s: no model of that name (models: %s)", name, strings.Join(sortedKeys(byName), ", "))
			continue
		}
		if seen[name] {
			bad("--share %s: named twice", name)
		}
		seen[name] = true
		l, err := learner.New(spec, max(c.Dim, 1))
		if err != nil {
			continue // reported by Validate
		}
		s, ok := l.(learner.Sharer)
		if !ok {
			bad("--share %s: %q cannot be shared across partitions (learners that can: %s; the self-tuning wrapper — a kernel learner whose sigma is left to the stream, or given scale= — and auto are not shareable: their warm-up statistics and pruning are per partition)",
				name, spec, strings.Join(Sharers(), ", "))
			continue
		}
		if _, err := s.ShareDelta(); err != nil {
			bad("--share %s: %v", name, err)
		}
	}
	if c.ShareLag < 0 {
		bad("share lag %d: must be at least 1 epoch (0 takes the default, %d)", c.ShareLag, DefaultShareLag)
	}
	for role, t := range map[string]string{"input": c.Input, "output": c.Output, "dead-letter": c.DeadLetter, "checkpoint": c.Checkpoints} {
		if c.ShareTopic == t {
			bad("the share topic and the %s topic are both %q: they must differ", role, t)
		}
	}
	if min := share.Window(0, c.ShareLag); c.ShareWindow < min {
		bad("share window %d: must be at least %d (2·lag + 2)", c.ShareWindow, min)
	}
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// shareMetrics are the sharing metrics.
type shareMetrics struct {
	staleness *prometheus.GaugeVec
	wait      prometheus.Histogram
	published prometheus.Counter
	merged    prometheus.Counter
	skips     prometheus.Counter
	expired   prometheus.Counter
	decisions prometheus.Counter
}

func newShareMetrics(reg prometheus.Registerer) *shareMetrics {
	const ns = "okstream"
	m := &shareMetrics{
		staleness: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "share_staleness_epochs",
			Help: "Shared models: how many epochs the merge frontier lags behind the strict schedule at the partition's last boundary (e − L − min_q F[q]; 0 on the strict schedule), by model and input partition."}, []string{"model", "partition"}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "share_wait_seconds",
			Help:    "Shared models: time a partition waited at a boundary for other partitions' deltas.",
			Buckets: []float64{0.0001, 0.001, 0.01, 0.1, 1, 10, 60}}),
		published: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "share_deltas_published_total",
			Help: "Shared models: delta records published (acknowledged) to the sync topic."}),
		merged: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "share_deltas_merged_total",
			Help: "Shared models: partition deltas merged (own included), per model."}),
		skips: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "share_skips_total",
			Help: "Shared models: partitions a boundary proceeded without (their delta was not there within the maximum wait, or their partition on this instance had no input)."}),
		expired: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "share_wait_expired_total",
			Help: "Shared models: boundaries whose bounded wait expired (a partition's delta did not arrive within the maximum wait; the boundary went on without it, a timing-dependent decision). A rising count means a slow partition or instance."}),
		decisions: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "share_decisions_total",
			Help: "Shared models: decision records written (boundaries whose frontier a replay could not derive: a partition skipped, or a rejoin boundary while one is behind)."}),
	}
	reg.MustRegister(m.staleness, m.wait, m.published, m.merged, m.skips, m.expired, m.decisions)
	return m
}

// setupShareTopic creates the sync topic and its writer and starts the
// tailer (Run calls it after setup).
func (p *Pipeline) setupShareTopic(ctx context.Context) error {
	cfg := p.cfg
	if cfg.CreateTopics {
		if _, err := kafkautil.EnsureTopic(ctx, p.client, kafkautil.TopicSpec{Name: cfg.ShareTopic, Partitions: 1, Configs: checkpoint.TopicConfigs(nil)}); err != nil {
			return fmt.Errorf("share topic %s: %w", cfg.ShareTopic, err)
		}
	}
	n, err := kafkautil.Partitions(ctx, p.client, cfg.ShareTopic)
	if err != nil {
		return fmt.Errorf("share topic %s: %w (create it with okstream topics create --share-topic, or run with topic creation enabled)", cfg.ShareTopic, err)
	}
	limit := recordLimit(topicMaxMessageBytes(ctx, p.client, cfg.ShareTopic))
	if need, what := shareRecordFloor(&cfg); need > limit {
		return fmt.Errorf("shared models: one sync record carries at least %d bytes of deltas (%s), above the share topic %s's record limit of %d bytes: share fewer or smaller models (e.g. a lower Taylor order for pkawv), or raise the topic's max.message.bytes", need, what, cfg.ShareTopic, limit)
	}
	p.shareW = &kafka.Writer{
		Addr: kafka.TCP(cfg.Brokers...), Topic: cfg.ShareTopic, Balancer: &kafka.Hash{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, BatchSize: 64,
		BatchBytes: int64(limit), MaxAttempts: 4,
		Transport: p.client.Transport,
	}
	// Decisions: the committer (decisionQueue) writes what is queued in one
	// call, and the batch must go out at once, as one request: BatchSize
	// the most that can be queued (L + 1 per input partition: a partition
	// that has written a decision at boundary b waits for it at boundary
	// b+1+L, before that boundary's decision; kafka-go allocates a batch of
	// BatchSize messages, so no larger), BatchTimeout negligible (the call
	// adds all its messages to the batch under kafka-go's lock before the
	// timer's goroutine can take it).
	for range decisionFlights {
		p.shareDecW = append(p.shareDecW, &kafka.Writer{
			Addr: kafka.TCP(cfg.Brokers...), Topic: cfg.ShareTopic, Balancer: &kafka.Hash{},
			RequiredAcks: kafka.RequireAll, BatchSize: max(p.inputParts, 1) * int(cfg.ShareLag+1), BatchTimeout: time.Microsecond,
			BatchBytes: int64(limit), MaxAttempts: 4,
			Transport: p.client.Transport,
		})
	}
	p.tail = newTailer(p, n)
	p.decq = newDecisionQueue(p)
	return nil
}
