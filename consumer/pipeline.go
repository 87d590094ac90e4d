package consumer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/internal/kafkasec"
	"okstream/internal/kafkautil"
	"okstream/label"
)

// Pipeline is one okstream instance: a consumer-group member running a
// worker per assigned input partition.
type Pipeline struct {
	cfg    Config
	task   label.Task // Undecided: decided per partition by its labels
	client *kafka.Client
	store  *checkpoint.Store
	predW  *recordWriter
	dlqW   *recordWriter
	m      *metrics
	reg    *prometheus.Registry
	// Effectively-once delivery (dedup.go): its counters, and the group
	// header stamped on output records.
	dm       *dedupMetrics
	groupHdr []kafka.Header

	// Record limits (deadletter.go), set by setup: the largest key + value
	// of a prediction record, and of what a dead letter copies.
	predMax, dlqMax int

	killed atomic.Bool
	// stopping: Run's context has ended (a failed final checkpoint is then
	// an error of Run; health.go).
	stopping atomic.Bool

	// Shared models (share.go): the input's partition count, the sync
	// topic's writer and tailer, the metrics.
	inputParts int
	shareW     *kafka.Writer
	shareDecW  []*kafka.Writer // decision records, one per request in flight (see setupShareTopic, decisionQueue)
	decq       *decisionQueue
	tail       *tailer
	sm         *shareMetrics

	// Readiness and liveness (health.go).
	inGen       atomic.Bool  // a member of a live generation
	genID       atomic.Int32 // the generation inGen refers to
	lastContact atomic.Int64 // Unix ns of the last successful broker round trip
	tick        atomic.Int64 // Unix ns of the monitor's last tick
	eventsSeen  atomic.Int64 // input records processed (for the progress line)

	mu     sync.Mutex
	parts  map[int]*PartitionStatus
	totals Totals
	fatal  error
	stop   context.CancelFunc
	live   map[int]*worker // running workers, for their stall clocks
}

// PartitionStatus is a snapshot of one partition this instance owns or
// owned.
type PartitionStatus struct {
	Partition   int
	Owned       bool
	Ready       bool
	Next        int64 // next input offset
	Durable     int64 // next offset of the last checkpoint
	Checkpoints int   // written by this process
	Models      map[string]Stats
	Restore     time.Duration // last restore's duration
	Restored    bool          // whether the last assignment found a checkpoint
	// Stuck lists the stages of the partition's worker that have not made
	// progress for longer than Config.StuckAfter (empty when it flows).
	Stuck []Stall
	// Failed says why the partition is stopped: none of its checkpoints
	// can be restored ("" unless so; see okstream checkpoints reset).
	Failed string
}

// Totals are process-wide counts.
type Totals struct {
	Checkpoints     int
	CheckpointBytes int64
	Restores        int
	RestoreTime     time.Duration
	Generations     int
}

// New validates cfg and returns a Pipeline; Run starts it.
func New(cfg Config) (*Pipeline, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid configuration:\n%w", err)
	}
	if cfg.Passthrough && len(cfg.Models) > 0 {
		names := make([]string, len(cfg.Models))
		for i, m := range cfg.Models {
			names[i] = m.Name
		}
		cfg.Logger.Warn("passthrough: the configured models are not run (no learning, no scores)", "models", names)
		cfg.Models = nil
		cfg.Share = nil
	}
	task, _ := cfg.labelTask() // Validate checked it
	p := &Pipeline{cfg: cfg, task: task, parts: map[int]*PartitionStatus{}, live: map[int]*worker{},
		predMax: recordLimit(0) - recordFraming, dlqMax: min(cfg.DeadLetterMaxBytes, recordLimit(0)-recordFraming-deadLetterHeaderRoom)}
	reg := cfg.Registerer
	if reg == nil {
		p.reg = prometheus.NewRegistry()
		p.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		reg = p.reg
	}
	p.m = newMetrics(reg)
	p.dm = newDedupMetrics(reg)
	if len(cfg.Share) > 0 {
		p.sm = newShareMetrics(reg)
	}
	p.groupHdr = []kafka.Header{{Key: HeaderGroup, Value: []byte(cfg.Group)}}
	reg.MustRegister(liveCollector{p})
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "okstream", Name: "ready",
		Help: "1 when the instance is ready (what /readyz answers 200 to), 0 otherwise."}, func() float64 {
		if p.notReady() == "" {
			return 1
		}
		return 0
	}))
	return p, nil
}

// Registry returns the registry holding the metrics (nil if the Config gave
// its own Registerer).
func (p *Pipeline) Registry() *prometheus.Registry { return p.reg }

// Config returns the validated configuration, defaults filled in.
func (p *Pipeline) Config() Config { return p.cfg }

// Kill stops the pipeline abruptly, as a crash would: workers exit without
// flushing or checkpointing (writes in flight may or may not land). Meant
// for tests and the demo's forced restart; Run returns soon after.
func (p *Pipeline) Kill() {
	p.killed.Store(true)
	p.mu.Lock()
	stop := p.stop
	p.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Ready reports whether the instance is ready: a member of a live
// consumer-group generation, a broker reached within
// Config.ReadyBrokerTimeout, every assigned partition restored, fetching,
// not failed and not stuck (see health.go).
func (p *Pipeline) Ready() bool { return p.notReady() == "" }

// Live reports whether the process is not wedged (see health.go).
func (p *Pipeline) Live() bool { return p.wedged() == "" }

func (p *Pipeline) register(n int, w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live[n] = w
}

func (p *Pipeline) unregister(n int, w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live[n] == w {
		delete(p.live, n)
	}
}

// Status returns a snapshot of the partitions and totals.
func (p *Pipeline) Status() ([]PartitionStatus, Totals) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]PartitionStatus, 0, len(p.parts))
	now := time.Now()
	for _, s := range p.parts {
		c := *s
		c.Models = map[string]Stats{}
		for k, v := range s.Models {
			c.Models[k] = v
		}
		if w := p.live[s.Partition]; w != nil {
			c.Stuck = w.stalls(now, p.cfg.StuckAfter)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out, p.totals
}

func (p *Pipeline) part(n int) *PartitionStatus {
	s := p.parts[n]
	if s == nil {
		s = &PartitionStatus{Partition: n, Durable: -1}
		p.parts[n] = s
	}
	return s
}

func (p *Pipeline) partReady(n int, ready bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.part(n)
	s.Ready = ready
	s.Owned = ready
	if !ready {
		s.Failed = "" // no longer owned: the next owner reports it
	}
}

func (p *Pipeline) noteRestore(n int, d time.Duration, found bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.part(n)
	s.Restore, s.Restored = d, found
	p.totals.Restores++
	p.totals.RestoreTime += d
}

func (p *Pipeline) noteCheckpoint(n int, next int64, st checkpoint.SaveStats) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.part(n)
	s.Durable = next
	s.Checkpoints++
	p.totals.Checkpoints++
	p.totals.CheckpointBytes += int64(st.Bytes)
}

func (p *Pipeline) noteStats(n int, next int64, stats map[string]Stats) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.part(n)
	s.Next = next
	s.Models = stats
}

func (p *Pipeline) setFatal(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fatal == nil {
		p.fatal = err
	}
	if p.stop != nil {
		p.stop()
	}
}

// Handler serves /metrics, /healthz (200 unless the process is wedged; see
// Live) and /readyz (200 when Ready; otherwise 503 with every reason,
// naming the partitions).
func (p *Pipeline) Handler() http.Handler {
	mux := http.NewServeMux()
	if p.reg != nil {
		mux.Handle("/metrics", promhttp.HandlerFor(p.reg, promhttp.HandlerOpts{}))
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if why := p.wedged(); why != "" {
			http.Error(w, "wedged: "+why, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		why := p.notReady()
		if why == "" {
			fmt.Fprintln(w, "ready")
			return
		}
		http.Error(w, "not ready: "+why, http.StatusServiceUnavailable)
	})
	return mux
}

// Run joins the consumer group and processes events until ctx is cancelled
// (then it drains: every worker writes its pending predictions, checkpoints
// and commits, and the instance leaves the group) or a fatal error occurs
// (e.g. a checkpointed model whose configuration changed), which it
// returns.
func (p *Pipeline) Run(ctx context.Context) error {
	cfg := p.cfg
	log := cfg.Logger
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	p.mu.Lock()
	p.stop = stop
	p.mu.Unlock()

	transport := kafkasec.Transport(cfg.TLS, cfg.SASL)
	defer kafkasec.CloseTransport(transport)
	p.client = kafkasec.Client(cfg.Brokers, transport, 30*time.Second)
	if err := p.setup(ctx); err != nil {
		return kafkasec.Explain(err)
	}
	p.contact()
	if len(cfg.Share) > 0 {
		if err := p.setupShareTopic(ctx); err != nil {
			return kafkasec.Explain(err)
		}
		defer p.shareW.Close()
		for _, w := range p.shareDecW {
			defer w.Close()
		}
		tctx, stopTail := context.WithCancel(context.Background())
		tailDone := make(chan struct{})
		go func() { defer close(tailDone); p.tail.run(tctx) }()
		defer func() { stopTail(); <-tailDone }()
		// After every worker (deferred calls run last first), before the
		// writer's Close.
		dctx, stopDec := context.WithCancel(context.Background())
		decDone := make(chan struct{})
		go func() { defer close(decDone); p.decq.run(dctx) }()
		defer func() { stopDec(); <-decDone }()
	}
	defer p.predW.Close()
	defer p.dlqW.Close()
	defer p.store.Close()
	mctx, stopMonitor := context.WithCancel(ctx)
	monitorDone := make(chan struct{})
	// The progress line's baseline is taken here, before the group is
	// joined: taken by the goroutine, it could come after a partition's
	// first batches, and the first line would leave them out.
	prog := newProgress(p)
	go func() { defer close(monitorDone); p.monitor(mctx, prog) }()
	defer func() { stopMonitor(); <-monitorDone }()

	p.evictPrevious(ctx) // member.go
	group, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:                cfg.Group,
		Brokers:           cfg.Brokers,
		Topics:            []string{cfg.Input},
		Dialer:            kafkasec.Dialer(cfg.TLS, cfg.SASL),
		HeartbeatInterval: cfg.HeartbeatInterval,
		SessionTimeout:    cfg.SessionTimeout,
		RebalanceTimeout:  cfg.RebalanceTimeout,
		JoinGroupBackoff:  time.Second,
		StartOffset:       kafka.FirstOffset,
		Timeout:           10 * time.Second,
		ErrorLogger:       kafka.LoggerFunc(func(f string, a ...any) { log.Debug("kafka-go: " + fmt.Sprintf(f, a...)) }),
	})
	if err != nil {
		return fmt.Errorf("consumer group: %w", err)
	}
	closed := make(chan struct{})
	go func() {
		<-ctx.Done()
		p.stopping.Store(true)
		// Ends the current generation (workers drain and checkpoint), then
		// leaves the group.
		group.Close()
		close(closed)
	}()
	log.Info("started", "group", cfg.Group, "input", cfg.Input, "output", cfg.Output, "models", len(cfg.Models))
	for {
		gen, err := group.Next(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed) {
				break
			}
			p.inGen.Store(false)
			p.m.assigned.Set(0)
			log.Warn("consumer group error; rejoining", "err", err)
			continue
		}
		p.contact()
		p.m.rebalances.Inc()
		assigned := gen.Assignments[cfg.Input]
		ids := make([]int, len(assigned))
		for i, a := range assigned {
			ids[i] = a.ID
		}
		sort.Ints(ids)
		p.m.assigned.Set(float64(len(ids)))
		p.mu.Lock()
		p.totals.Generations++
		for _, s := range p.parts {
			s.Owned = false
		}
		for _, id := range ids {
			p.part(id).Owned = true
			p.part(id).Ready = false
		}
		p.mu.Unlock()
		log.Info("generation", "id", gen.ID, "member", gen.MemberID, "partitions", ids)
		p.noteMember(gen.MemberID) // member.go
		genID := gen.ID
		lease := newLease(&p.cfg) // fence.go
		gen.Start(func(gctx context.Context) { p.liveGeneration(gctx, genID) })
		gen.Start(func(gctx context.Context) { p.heartbeat(gctx, lease, genID, gen.MemberID) })
		for _, id := range ids {
			gen.Start(func(gctx context.Context) {
				w, err := newWorker(p, kafkaGen{gen, p.client}, id)
				if err == nil {
					w.lease = lease
					err = w.run(gctx)
				}
				var fe errFatal
				if errors.As(err, &fe) {
					log.Error("fatal", "partition", id, "err", fe.error)
					p.setFatal(fe.error)
				}
				// Returning ends the generation (kafka-go); when the worker
				// returns early (not cancelled) wait for the generation's
				// end so the partition is not churned.
				<-gctx.Done()
			})
		}
	}
	<-closed
	if !p.killed.Load() {
		p.forgetMember() // left the group (member.go)
	}
	p.inGen.Store(false)
	p.m.assigned.Set(0)
	p.mu.Lock()
	defer p.mu.Unlock()
	log.Info("stopped", "checkpoints", p.totals.Checkpoints)
	return p.fatal
}

// setup creates missing topics and opens the writers and the checkpoint
// store.
func (p *Pipeline) setup(ctx context.Context) error {
	cfg := p.cfg
	n, err := kafkautil.Partitions(ctx, p.client, cfg.Input)
	if err != nil && kafkasec.Advice(err) != "" {
		return fmt.Errorf("input topic %s: %w", cfg.Input, err) // Run adds the advice
	}
	if err != nil {
		return fmt.Errorf("input topic %s: %w (create it first, or check --brokers)", cfg.Input, err)
	}
	p.inputParts = n
	for _, t := range []string{cfg.Output, cfg.DeadLetter} {
		if cfg.CreateTopics {
			if _, err := kafkautil.EnsureTopic(ctx, p.client, kafkautil.TopicSpec{Name: t, Partitions: n}); err != nil {
				return err
			}
		} else if _, err := kafkautil.Partitions(ctx, p.client, t); err != nil {
			return fmt.Errorf("topic %s: %w (create it, or run with topic creation enabled)", t, err)
		}
	}
	if err := p.checkOutputPartitions(ctx, n); err != nil { // effectively-once (dedup.go)
		return err
	}
	if err := p.checkSessionTimeout(ctx); err != nil { // session.go
		return err
	}
	p.store, err = checkpoint.Open(ctx, checkpoint.Config{
		Brokers: cfg.Brokers, Topic: cfg.Checkpoints, Partitions: cfg.CheckpointPartitions,
		ChunkBytes: cfg.CheckpointChunkBytes, MaxStateBytes: cfg.CheckpointMaxStateBytes, Client: p.client,
	})
	if err != nil {
		return err
	}
	// The output writers (produce.go): predictions and dead letters go, in
	// effectively-once mode, to the worker's own partition, else to the
	// partition of their key's hash (kafka-go's Murmur2, as its Writer).
	writer := func(topic string, limit int) *recordWriter {
		if p.effectivelyOnce() {
			return newRecordWriter(p.client, topic, limit, nil)
		}
		return newRecordWriter(p.client, topic, limit, &kafka.Murmur2Balancer{})
	}
	predLimit := recordLimit(topicMaxMessageBytes(ctx, p.client, cfg.Output))
	dlqLimit := recordLimit(topicMaxMessageBytes(ctx, p.client, cfg.DeadLetter))
	p.predMax = predLimit - recordFraming
	p.dlqMax = min(cfg.DeadLetterMaxBytes, dlqLimit-recordFraming-deadLetterHeaderRoom)
	if p.dlqMax < cfg.DeadLetterMaxBytes {
		cfg.Logger.Warn("dead letters copy less than the configured limit: the dead-letter topic or the writer takes no more",
			"configured", cfg.DeadLetterMaxBytes, "used", p.dlqMax, "topic", cfg.DeadLetter)
	}
	p.predW = writer(cfg.Output, predLimit)
	p.dlqW = writer(cfg.DeadLetter, dlqLimit)
	return nil
}
