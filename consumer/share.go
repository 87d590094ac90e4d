package consumer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/internal/kafkautil"
	"okstream/learner"
	"okstream/share"
)

// Models shared across partitions (issue 17; docs/sharing.md). The schedule
// is package share's; this file is its Kafka driver: the sync topic's
// tailer, the publication of deltas and decisions, the bounded wait, and
// the merge at each boundary.

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

// tailer follows the sync topic and keeps its latest record per key, for
// every worker of the pipeline. Memory: at most W records of each kind per
// partition (W the window), i.e. about W × P × (the shared models' delta
// bytes).
type tailer struct {
	p      *Pipeline
	prefix string
	window int64

	mu sync.RWMutex
	// recs[kind−1][q][e mod window]: partition q's latest record of the
	// kind in that slot (grown as partitions appear).
	recs   [2][][]held
	pos    []int64       // next offset per sync-topic partition
	notify chan struct{} // closed and replaced at every fetch (caughtUp)
	// arrivals: for a slot someone awaits, the channel closed when a
	// record lands in it.
	arrivals map[slot]chan struct{}
	// The tailer reads only while a record could come from elsewhere:
	// local[q] counts this process's workers of input partition q past
	// their catch-up (nLocal the partitions with one), catching the
	// catch-ups under way; wake is closed and replaced when they change.
	local    []int
	nLocal   int
	catching int
	wake     chan struct{}
	// idle[q]: this process's worker of input partition q has no input (its
	// last fetch waited FetchMaxWait and found nothing past what it has
	// processed). Its next delta cannot come before new events do, so a
	// boundary does not wait for it (see setIdle).
	idle []bool
	// idleFrom[q]: for a partition of another instance marked idle by its
	// idle record (remoteIdleLocked), the epoch of its next delta; a delta
	// of that epoch or later clears the mark (storeLocked).
	idleFrom []int64
	// epochs[e mod window] counts, for the newest epoch e stored in that
	// slot, the input partitions whose delta of epoch e is held, and holds
	// the channel closed when all of them are (awaitEpoch): a boundary on
	// the strict schedule waits for one wake-up instead of one per missing
	// partition.
	epochs []epochCount
	nIdle  int // partitions idle now (awaitEpoch leaves them to await)
	// full[s], while the count of epochs[s] is complete, holds that
	// epoch's delta of every input partition (nil otherwise; replaced
	// under t.mu by countLocked whenever the slot changes, allocated with
	// epochs). Read without t.mu: on the strict schedule every partition of
	// the process wakes at once when an epoch completes, and re-taking
	// t.mu to see it, then to read the deltas it merges, made them queue on
	// it (awaitEpoch, completeEpoch).
	full atomic.Pointer[[]atomic.Pointer[fullEpoch]]
	// decNewest[q]: the newest epoch of partition q's decision records
	// held (−1: none), raised under t.mu by storeLocked: a boundary finds
	// that it has none to replay without t.mu.
	decNewest []atomic.Int64

	mixMu sync.Mutex
	mixes map[string]mixEntry // see mix

	// durable[q]: the epoch up to which input partition q's deltas are
	// known to be on the sync topic (−1: none known). A partition's deltas
	// land in epoch order (its publisher writes them in order, retrying a
	// batch until it lands, and a checkpoint past an epoch implies its
	// delta landed), so one number per partition says it. Raised by every
	// delta read from the topic and by this process's publishers' acks;
	// durCh[q] is closed and replaced when durable[q] rises (awaitDurable).
	// They have their own lock, durMu (taken inside t.mu, never the other
	// way round), and durable is read without it: every publisher's
	// acknowledgement raises one, and every writer waiting for output
	// checks them, so under t.mu they queued behind the boundaries' work,
	// and one channel for all woke every waiting writer at every ack.
	durMu   sync.Mutex
	durable []atomic.Int64
	durCh   []chan struct{}
}

func newTailer(p *Pipeline, parts int) *tailer {
	t := &tailer{p: p, prefix: share.Prefix(p.cfg.Group, p.cfg.Input), window: p.cfg.ShareWindow,
		pos: make([]int64, parts), notify: make(chan struct{}),
		arrivals: map[slot]chan struct{}{}, local: make([]int, p.inputParts), idle: make([]bool, p.inputParts), idleFrom: make([]int64, p.inputParts),
		wake: make(chan struct{}), durable: make([]atomic.Int64, p.inputParts), durCh: make([]chan struct{}, p.inputParts)}
	for q := range t.durable {
		t.durable[q].Store(-1)
		t.durCh[q] = make(chan struct{})
	}
	t.decNewest = make([]atomic.Int64, p.inputParts)
	for q := range t.decNewest {
		t.decNewest[q].Store(-1)
	}
	return t
}

// raiseDurable notes that partition q's deltas up to epoch e are on the
// sync topic (a publisher's acknowledgement, or records read from it).
func (t *tailer) raiseDurable(q int, e int64) {
	if q < 0 || q >= len(t.durable) || t.durable[q].Load() >= e {
		return
	}
	t.durMu.Lock()
	if t.durable[q].Load() < e {
		t.durable[q].Store(e)
		close(t.durCh[q])
		t.durCh[q] = make(chan struct{})
	}
	t.durMu.Unlock()
}

// awaitDurable waits until every delta up to the frontier f (f[q]: the
// last epoch of q merged) is on the sync topic, and reports false if ctx
// ended first. Output computed after a merge waits for it: a delta merged
// in-process before it was durable may be regenerated late by a replay
// (or, transitively, be regenerated differently by one that, not knowing
// its partition's output depended on it, skipped a late delta), and
// nothing computed from it may be seen before it is durable. It is woken
// only by the partition it is waiting for.
func (t *tailer) awaitDurable(ctx context.Context, f []int64) bool {
	for q := 0; q < len(f) && q < len(t.durable); {
		if t.durable[q].Load() >= f[q] {
			q++
			continue
		}
		t.durMu.Lock()
		ch, ok := t.durCh[q], t.durable[q].Load() >= f[q]
		t.durMu.Unlock()
		if ok {
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// waitUntil waits until check (run with t.mu read-locked) reports true,
// checking again whenever the channel it returned with false is closed; it
// returns false if ctx ended first.
func (t *tailer) waitUntil(ctx context.Context, check func() (bool, <-chan struct{})) bool {
	for {
		t.mu.RLock()
		ok, ch := check()
		t.mu.RUnlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// run follows every partition of the sync topic until ctx ends.
func (t *tailer) run(ctx context.Context) {
	var wg sync.WaitGroup
	for part := range t.pos {
		wg.Add(1)
		go func() { defer wg.Done(); t.follow(ctx, part) }()
	}
	wg.Wait()
}

func (t *tailer) follow(ctx context.Context, part int) {
	cfg := t.p.cfg
	pos := int64(0)
	var (
		key   []byte // reused: keys are only compared
		hdr   [share.PeekLen]byte
		fresh []*share.Record
		// landed[q]: the newest epoch of input partition q's deltas read
		// in this fetch (held already or not: either way it is on the
		// topic; −1: none).
		landed = make([]int64, len(t.durable))
		macBuf []byte // landedSkipped's scratch
	)
	// Each record's key and first bytes are read first: a record already
	// held (this process's own, put at once) is skipped without copying or
	// decoding its value.
	read := func(r *kafka.Record) error {
		pos = r.Offset + 1
		if r.Key == nil || r.Value == nil {
			return nil
		}
		key = slices.Grow(key[:0], r.Key.Len())[:r.Key.Len()]
		if _, err := io.ReadFull(r.Key, key); err != nil {
			return err
		}
		if len(key) <= len(t.prefix) || string(key[:len(t.prefix)]) != t.prefix || key[len(t.prefix)] != '/' {
			return nil
		}
		n := r.Value.Len()
		if n < share.PeekLen {
			t.p.control().reject(controlShare, share.ReasonMalformed, -1, errors.New("shorter than a record's header"), "key", string(key))
			return nil
		}
		if _, err := io.ReadFull(r.Value, hdr[:]); err != nil {
			return err
		}
		kind, part, epoch, ok := share.Peek(hdr[:])
		if !ok {
			t.p.control().reject(controlShare, share.ReasonMalformed, -1, errors.New("not a sync record of a version this build reads"), "key", string(key))
			return nil
		}
		if !t.admitPeek(key, kind, part) { // share_validate.go
			return nil
		}
		if t.skip(kind, part, epoch) {
			// e.g. written by this process (put); with a secret it counts
			// as landed only if its MAC verifies.
			if kind == share.KindDelta && part < len(landed) {
				if ok, err := t.landedSkipped(key, r, hdr[:], n, &macBuf); err != nil {
					return err
				} else if ok {
					landed[part] = max(landed[part], epoch)
				}
			}
			return nil
		}
		v := make([]byte, n)
		copy(v, hdr[:])
		if _, err := io.ReadFull(r.Value, v[share.PeekLen:]); err != nil {
			return err
		}
		rec, err := share.Decode(v)
		if err != nil || string(key) != share.Key(t.prefix, kind, part, epoch, t.window) {
			if err == nil {
				err = errors.New("its key does not match it")
			}
			t.p.control().reject(controlShare, share.ReasonMalformed, part, err, "key", string(key))
			return nil
		}
		if !t.admitSync(ctx, key, r.Headers, v, rec) { // share_validate.go: MAC, ranges, deltas
			return nil
		}
		if kind == share.KindDelta && part < len(landed) {
			landed[part] = max(landed[part], epoch)
		}
		fresh = append(fresh, rec)
		return nil
	}
	for ctx.Err() == nil {
		if !t.needed(ctx) {
			return
		}
		fresh = fresh[:0]
		for q := range landed {
			landed[q] = -1
		}
		from := pos
		_, err := kafkautil.FetchFunc(ctx, t.p.client, cfg.ShareTopic, part, pos, cfg.FetchMaxBytes, cfg.FetchMaxWait, read)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			pos = from // read again from the failed fetch's start
			if errors.Is(err, kafka.OffsetOutOfRange) {
				if first, _, err := kafkautil.Offsets(ctx, t.p.client, cfg.ShareTopic, part); err == nil && first > pos {
					pos = first
					continue
				}
			}
			cfg.Logger.Warn("reading the share topic failed; retrying", "topic", cfg.ShareTopic, "partition", part, "err", err)
			sleep(ctx, 500*time.Millisecond)
			continue
		}
		t.mu.Lock()
		for _, rec := range fresh {
			if rec.Kind == share.KindIdle {
				t.remoteIdleLocked(rec)
				continue
			}
			if !t.skipLocked(rec.Kind, rec.Partition, rec.Epoch) {
				t.storeLocked(rec, false)
			}
		}
		for q, e := range landed {
			t.raiseDurable(q, e)
		}
		t.pos[part] = pos
		close(t.notify) // also on an empty fetch: caughtUp watches pos
		t.notify = make(chan struct{})
		t.mu.Unlock()
		clear(fresh)
	}
}

// needed waits until the sync topic must be read, and reports false if ctx
// ended first. It must be read while a worker catches up (caughtUp), and
// while some input partition has no worker of this process past its catch
// up: that partition's records come from another process (or from a
// previous owner). When every partition has one, every record written
// from then on is this process's own, held at once (put), and what a
// replay needs from before was read by its catch-up (a checkpoint is only
// taken once the deltas it covers are acknowledged): the tailer pauses,
// and resumes from where it stopped (reading back its own records without
// copying them) as soon as a partition leaves or a worker catches up.
func (t *tailer) needed(ctx context.Context) bool {
	return t.waitUntil(ctx, func() (bool, <-chan struct{}) {
		return t.catching > 0 || t.nLocal < len(t.local), t.wake
	})
}

// joined and left count a worker of input partition q in and out of the
// partitions this process serves (see needed); catchUp counts a catch-up
// in (+1) and out (−1).
func (t *tailer) joined(q int) { t.local1(q, 1) }
func (t *tailer) left(q int)   { t.local1(q, -1) }

func (t *tailer) local1(q, d int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if q >= len(t.local) {
		return
	}
	if q < len(t.idle) && t.idle[q] {
		t.idle[q] = false // its worker (or the next owner) says again
		t.nIdle--
	}
	t.local[q] += d
	switch {
	case d > 0 && t.local[q] == 1:
		t.nLocal++
	case d < 0 && t.local[q] == 0:
		t.nLocal--
	}
	t.signalLocked()
}

// setIdle marks this process's input partition q as idle or not (see
// tailer.idle; only with Config.ShareSkipIdle); marking it idle wakes the
// boundaries waiting for its deltas, which then proceed without it instead
// of waiting up to ShareMaxWait. The decision is timing-dependent like any
// bounded wait's, so it is written as a decision record and replayed
// exactly; a live stream with lulls longer than FetchMaxWait then leaves
// the strict schedule at every lull, hence opt-in. A partition of another
// instance is marked by its idle records (remoteIdleLocked).
func (t *tailer) setIdle(q int, idle bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.setIdleLocked(q, idle)
}

// remoteIdleLocked applies an idle record of partition q read from the sync
// topic (KindIdle, written by the worker of q on another instance with
// --share-skip-idle): q is idle until a record says otherwise or a delta of
// q of the record's epoch or later arrives (its next owner may be busy
// without having said so). Ignored for a partition this process owns (its
// own worker decides). t.mu is held.
func (t *tailer) remoteIdleLocked(rec *share.Record) {
	q := rec.Partition
	if q >= len(t.local) || t.local[q] > 0 {
		return
	}
	idle := rec.Idle
	if byPart := t.recs[share.KindDelta-1]; idle && q < len(byPart) && byPart[q] != nil {
		for _, h := range byPart[q] {
			if h.rec != nil && h.rec.Epoch >= rec.Epoch {
				idle = false // stale: q has made that delta since
				break
			}
		}
	}
	if idle && q < len(t.idleFrom) {
		t.idleFrom[q] = rec.Epoch
	}
	t.setIdleLocked(q, idle)
}

// setIdleLocked is setIdle with t.mu held.
func (t *tailer) setIdleLocked(q int, idle bool) {
	if q >= len(t.idle) || t.idle[q] == idle {
		return
	}
	t.idle[q] = idle
	if !idle {
		t.nIdle--
		return
	}
	t.nIdle++
	t.wakeEpochsLocked()
	for s, ch := range t.arrivals {
		if s.kind == share.KindDelta && s.partition == q {
			close(ch)
			delete(t.arrivals, s)
		}
	}
}

// isIdle reports whether this process's input partition q is idle.
func (t *tailer) isIdle(q int) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return q < len(t.idle) && t.idle[q]
}

func (t *tailer) catchUp(d int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.catching += d
	t.signalLocked()
}

func (t *tailer) signalLocked() {
	close(t.wake)
	t.wake = make(chan struct{})
}

// held is a slot's record, and whether this process wrote it (put).
type held struct {
	rec *share.Record
	own bool
}

// skip reports whether a record of the kind, partition and epoch read from
// the sync topic is to be skipped: the tailer holds it already, or holds a
// newer one of its slot that this process wrote itself (an older one read
// back, e.g. after a pause, must not hide it). Otherwise the last read
// wins, as in the topic.
func (t *tailer) skip(kind, part int, epoch int64) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.skipLocked(kind, part, epoch)
}

func (t *tailer) skipLocked(kind, part int, epoch int64) bool {
	h := t.heldLocked(kind, part, epoch)
	return h.rec != nil && (h.rec.Epoch == epoch || h.own && h.rec.Epoch > epoch)
}

// heldLocked returns the slot of partition q's record of the kind for
// epoch e (its record may be of that epoch or another sharing the slot;
// nil if none). t.mu is held.
func (t *tailer) heldLocked(kind, q int, e int64) held {
	if kind != share.KindDelta && kind != share.KindDecision {
		return held{}
	}
	if byPart := t.recs[kind-1]; q < len(byPart) && byPart[q] != nil {
		return byPart[q][e%t.window]
	}
	return held{}
}

// storeLocked keeps rec (own: written by this process) in its slot and
// wakes those waiting for that slot (see await). t.mu is held.
func (t *tailer) storeLocked(rec *share.Record, own bool) {
	s := t.slot(rec.Kind, rec.Partition, rec.Epoch)
	byPart := t.recs[rec.Kind-1]
	if rec.Partition >= len(byPart) {
		byPart = append(byPart, make([][]held, rec.Partition+1-len(byPart))...)
		t.recs[rec.Kind-1] = byPart
	}
	if byPart[rec.Partition] == nil {
		byPart[rec.Partition] = make([]held, t.window)
	}
	prev := byPart[rec.Partition][s.slot].rec
	byPart[rec.Partition][s.slot] = held{rec, own}
	if rec.Kind == share.KindDelta {
		if q := rec.Partition; q < len(t.idle) && t.idle[q] && t.local[q] == 0 && rec.Epoch >= t.idleFrom[q] {
			t.setIdleLocked(q, false) // a remote partition marked idle is busy again
		}
		t.countLocked(s.slot, prev, rec.Epoch)
	} else if q := rec.Partition; q < len(t.decNewest) && t.decNewest[q].Load() < rec.Epoch {
		t.decNewest[q].Store(rec.Epoch)
	}
	if ch, ok := t.arrivals[s]; ok {
		close(ch)
		delete(t.arrivals, s)
	}
}

// await waits until partition q's record of the kind for epoch e is held
// (true), or until stop fires, ctx ends or (a delta) q is idle on this
// process (false). It wakes only when a
// record lands in that record's slot, not at every arrival. The error is
// get's (errOverwritten).
func (t *tailer) await(ctx context.Context, stop <-chan time.Time, kind, q int, e int64) (bool, error) {
	s := t.slot(kind, q, e)
	for {
		t.mu.Lock()
		r, err := t.getLocked(kind, q, e)
		if err != nil || r != nil {
			t.mu.Unlock()
			return r != nil, err
		}
		if kind == share.KindDelta && q < len(t.idle) && t.idle[q] {
			t.mu.Unlock()
			return false, nil // the caller sees isIdle(q)
		}
		ch, ok := t.arrivals[s]
		if !ok {
			ch = make(chan struct{})
			t.arrivals[s] = ch
		}
		t.mu.Unlock()
		select {
		case <-ch:
		case <-stop:
			return false, nil
		case <-ctx.Done():
			return false, nil
		}
	}
}

// epochCount is one slot of tailer.epochs.
type epochCount struct {
	epoch int64 // −1: none counted yet
	n     int   // input partitions whose delta of epoch is held
	done  chan struct{}
}

// countLocked keeps epochs[slot] exact after a delta of epoch e replaced
// prev (nil: none) in one partition's slot: n is the number of partitions
// whose slot holds a delta of the counted epoch, the newest stored there.
// t.mu is held.
func (t *tailer) countLocked(slot int64, prev *share.Record, e int64) {
	t.initEpochsLocked()
	c := &t.epochs[slot]
	switch {
	case e > c.epoch: // a newer epoch in the slot: count it afresh
		if c.done != nil {
			close(c.done) // its waiters see the slot moved on (and fall back)
		}
		*c = epochCount{epoch: e}
		for _, byQ := range t.recs[share.KindDelta-1] {
			if byQ != nil && byQ[slot].rec != nil && byQ[slot].rec.Epoch == e {
				c.n++
			}
		}
	case e == c.epoch:
		if prev == nil || prev.Epoch != e {
			c.n++
		}
	default: // an older epoch read back over a counted one
		if prev != nil && prev.Epoch == c.epoch {
			c.n--
		}
	}
	full := &(*t.full.Load())[slot]
	if c.n < len(t.local) {
		full.Store(nil)
		return
	}
	// Complete: every partition's slot holds a delta of c.epoch (the
	// newest stored there), so the snapshot is those records.
	f := &fullEpoch{epoch: c.epoch, recs: make([]*share.Record, len(t.local))}
	byPart := t.recs[share.KindDelta-1]
	for q := range f.recs {
		if q < len(byPart) && byPart[q] != nil {
			f.recs[q] = byPart[q][slot].rec
		}
	}
	full.Store(f)
	if c.done != nil {
		close(c.done)
		c.done = nil
	}
}

// fullEpoch is one epoch's delta of every input partition, in partition
// order (tailer.full). Read-only once stored.
type fullEpoch struct {
	epoch int64
	recs  []*share.Record
}

// completeEpoch returns every input partition's delta of epoch e, in
// partition order, if all of them are held (nil otherwise), without t.mu.
// The slice is shared and read-only.
func (t *tailer) completeEpoch(e int64) []*share.Record {
	full := t.full.Load()
	if full == nil || e < 0 {
		return nil
	}
	if f := (*full)[e%int64(len(*full))].Load(); f != nil && f.epoch == e {
		return f.recs
	}
	return nil
}

func (t *tailer) initEpochsLocked() {
	if t.epochs == nil {
		t.epochs = make([]epochCount, t.window)
		full := make([]atomic.Pointer[fullEpoch], t.window)
		for i := range t.epochs {
			t.epochs[i].epoch = -1
		}
		t.full.Store(&full)
	}
}

// awaitEpoch waits until every input partition's delta of epoch e is held
// (complete), or until stop fires (stopped), ctx ends, a partition of this
// process is or turns idle, or the slot moves on to a later epoch (neither: the
// caller falls back to awaiting partitions one by one, which sorts these
// cases out). Its channel is closed only when the count completes, the
// slot takes a newer epoch or a partition turns idle, so it wakes once per
// boundary on the strict schedule.
//
// arm returns the bounded wait's deadline; it is called (and the wait's
// clock started) only if awaitEpoch must block.
func (t *tailer) awaitEpoch(ctx context.Context, arm func() <-chan time.Time, e int64) (complete, stopped bool) {
	var stop <-chan time.Time
	for {
		if t.completeEpoch(e) != nil {
			return true, false
		}
		t.mu.Lock()
		t.initEpochsLocked()
		c := &t.epochs[e%t.window]
		if c.epoch == e && c.n >= len(t.local) {
			t.mu.Unlock()
			return true, false
		}
		if c.epoch > e || t.nIdle > 0 {
			t.mu.Unlock()
			return false, false
		}
		if c.done == nil {
			c.done = make(chan struct{})
		}
		ch := c.done
		t.mu.Unlock()
		if stop == nil {
			stop = arm()
		}
		select {
		case <-ch:
		case <-stop:
			return false, true
		case <-ctx.Done():
			return false, false
		}
	}
}

// wakeEpochsLocked wakes every awaitEpoch (a partition turned idle). t.mu
// is held.
func (t *tailer) wakeEpochsLocked() {
	for i := range t.epochs {
		if c := &t.epochs[i]; c.done != nil {
			close(c.done)
			c.done = nil
		}
	}
}

// mix returns the model's mixing term for the deltas of refs (see
// learner.Mixer), computed by the first of this process's copies to merge
// them and shared read-only with the others: on the strict schedule every
// partition merges the same refs at boundary e, so the O(P·D) sum is done
// once per instance and epoch instead of once per partition. The refs
// name deterministic deltas, so the term is the same whoever computes it.
// Past mixKeep entries, those more than mixKeep/4 epochs before e are
// dropped (a partition that lags further recomputes its term: a miss costs
// time, never exactness).
//
// strict says that refs are the strict schedule's (every partition's delta
// of one epoch, each partition merged up to the epoch before): the key is
// then the model and that epoch, not the list.
func (t *tailer) mix(model string, e int64, strict bool, refs []share.Ref, mx learner.Mixer, in []learner.SharedDelta) ([]float64, error) {
	var buf [256]byte // on the stack unless the key is longer
	kb := append(buf[:0], model...)
	if strict && len(refs) > 0 {
		kb = append(kb, 0, 's') // no model name holds a NUL
		kb = strconv.AppendInt(kb, refs[0].Epoch, 10)
	} else {
		for _, r := range refs {
			kb = append(kb, '/')
			kb = strconv.AppendInt(kb, int64(r.Partition), 10)
			kb = append(kb, ':')
			kb = strconv.AppendInt(kb, r.Epoch, 10)
		}
	}
	t.mixMu.Lock()
	m, ok := t.mixes[string(kb)] // no allocation for the lookup
	t.mixMu.Unlock()
	if ok {
		return m.mix, nil
	}
	key := string(kb)
	v, err := mx.ShareMix(in)
	if err != nil {
		return nil, err
	}
	t.mixMu.Lock()
	defer t.mixMu.Unlock()
	if t.mixes == nil {
		t.mixes = map[string]mixEntry{}
	}
	if len(t.mixes) >= mixKeep {
		for k, old := range t.mixes {
			if old.epoch < e-mixKeep/4 {
				delete(t.mixes, k)
			}
		}
	}
	t.mixes[key] = mixEntry{epoch: e, mix: v}
	return v, nil
}

const mixKeep = 64

// mixEntry is a cached mixing term and the boundary that computed it.
type mixEntry struct {
	epoch int64
	mix   []float64
}

// slot identifies a sync-topic key of this pipeline (see share.Key)
// without building the string.
type slot struct {
	kind, partition int
	slot            int64
}

func (t *tailer) slot(kind, partition int, epoch int64) slot {
	return slot{kind, partition, epoch % t.window}
}

// put records what this process wrote itself (available at once).
func (t *tailer) put(rec *share.Record) {
	t.mu.Lock()
	t.storeLocked(rec, true)
	t.mu.Unlock()
}

// getDue sets recs[j] to the delta refs[j] names, for boundary e, or
// returns an error if one is not held or was overwritten.
func (t *tailer) getDue(refs []share.Ref, recs []*share.Record, e int64) error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for j, ref := range refs {
		r, err := t.getLocked(share.KindDelta, ref.Partition, ref.Epoch)
		if err == nil && r == nil {
			err = fmt.Errorf("share: partition %d's delta of epoch %d, due at boundary %d, is not held", ref.Partition, ref.Epoch, e)
		}
		if err != nil {
			return err
		}
		recs[j] = r
	}
	return nil
}

// mayHoldDecision reports whether a decision record of partition q for
// epoch e may be held (get may find it, or find it overwritten): false
// when none of q's of epoch e or later ever was, checked without t.mu.
func (t *tailer) mayHoldDecision(q int, e int64) bool {
	return q >= len(t.decNewest) || t.decNewest[q].Load() >= e
}

// errOverwritten: a record the schedule needs was overwritten by a newer
// epoch in its slot (the window is too small for how far the partitions
// drifted apart).
var errOverwritten = errors.New("share: a needed sync record was overwritten by a newer epoch")

// get returns partition q's record of the kind for epoch e, nil if absent
// (or older), or errOverwritten.
func (t *tailer) get(kind, q int, e int64) (*share.Record, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.getLocked(kind, q, e)
}

func (t *tailer) getLocked(kind, q int, e int64) (*share.Record, error) {
	r := t.heldLocked(kind, q, e).rec
	switch {
	case r == nil || r.Epoch < e:
		return nil, nil
	case r.Epoch > e:
		return nil, fmt.Errorf("%w: partition %d's %s of epoch %d is gone (its slot holds epoch %d); raise --share-window (now %d) above the epochs a partition can fall behind",
			errOverwritten, q, kindName(kind), e, r.Epoch, t.window)
	}
	return r, nil
}

// newestLocked returns the newest epoch of partition q's records of the
// kind held (−1: none). t.mu is held.
func (t *tailer) newestLocked(kind, q int) int64 {
	n := int64(-1)
	if byPart := t.recs[kind-1]; q < len(byPart) {
		for _, h := range byPart[q] {
			if h.rec != nil {
				n = max(n, h.rec.Epoch)
			}
		}
	}
	return n
}

func kindName(kind int) string {
	if kind == share.KindDecision {
		return "decision"
	}
	return "delta"
}

// caughtUp waits until the tailer has read every sync-topic record written
// before the call (so that a restored partition sees its own decision
// records before it replays its boundaries).
func (t *tailer) caughtUp(ctx context.Context) error {
	t.catchUp(1)
	defer t.catchUp(-1)
	ends := make([]int64, len(t.pos))
	for part := range ends {
		for {
			_, end, err := kafkautil.Offsets(ctx, t.p.client, t.p.cfg.ShareTopic, part)
			if err == nil {
				ends[part] = end
				break
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			sleep(ctx, 200*time.Millisecond)
		}
	}
	if !t.waitUntil(ctx, func() (bool, <-chan struct{}) {
		for part, end := range ends {
			if t.pos[part] < end {
				return false, t.notify
			}
		}
		return true, nil
	}) {
		return ctx.Err()
	}
	return nil
}

// shareRun is a worker's part of the schedule.
type shareRun struct {
	cfg     share.Config
	st      share.State
	models  []int // indices into the model set of the shared models
	names   []string
	pubMu   sync.Mutex
	pubCond *sync.Cond
	unacked int
	pubErr  error
	pubCh   chan kafka.Message
	pubDone chan struct{}
	// pubCancel stops the publisher's retries (stopPublisher): what it has
	// not written is written again by whoever replays those epochs.
	pubCancel context.CancelFunc
	pubCtx    context.Context // the publisher's (outlives the generation, like the writer)
	// dec is the newest decision record written (nil: none since the last
	// one found landed; see writeDecisionAsync). Owned by the worker's
	// goroutine, as is unsent.
	dec *pendingDecision
	// decDropped: one of this worker's decisions was dropped, so the later
	// ones are dropped too (decisionQueue; only the committer touches it).
	decDropped bool
	// unsent: the delta records not yet given to the publisher, in epoch
	// order (flushDeltas). Guarded by unsentMu: the worker appends to it
	// and flushes it, and so does the decision committer when a decision
	// lands (pendingDecision.flush), while the worker may be blocked at a
	// later boundary. pubClosed (also under unsentMu): the publisher's
	// input is closed, nothing more is sent.
	unsentMu  sync.Mutex
	unsent    []unsentDelta
	pubClosed bool
	// idleSaid: the last idle record this worker published said idle
	// (publishIdle; owned by the worker's goroutine).
	idleSaid bool
	// passed: previous owners of the partition are known to have gone
	// past every boundary up to this epoch (noteReplay). Such a boundary
	// without a decision record merged the default frontier, which the
	// replay applies (boundary).
	passed int64
	// broken: a boundary was interrupted (the generation ended while it
	// waited): the state is between an epoch's end and its merge, so the
	// worker must not checkpoint it.
	broken bool
	gStale []prometheus.Gauge
	// Scratch reused by every boundary (a sync point every few events:
	// what it allocates is garbage at that rate).
	refs  []share.Ref
	next  []int64 // the strict frontier (fillFrontier)
	recs  []*share.Record
	in    []learner.SharedDelta
	timer *time.Timer // the bounded wait's deadline (stopped between uses)
}

// setupShare prepares a worker's schedule (after newWorker, before restore).
func (w *worker) setupShare() {
	cfg := w.p.cfg
	if len(cfg.Share) == 0 {
		return
	}
	sr := &shareRun{cfg: share.Config{Every: cfg.ShareEvery, Lag: cfg.ShareLag, Partitions: w.p.inputParts}, passed: -1}
	sr.st = share.NewState(w.p.inputParts)
	for _, name := range cfg.Share {
		for i, m := range w.ms.models {
			if m.name == name {
				sr.models = append(sr.models, i)
				sr.names = append(sr.names, name)
				sr.gStale = append(sr.gStale, w.p.sm.staleness.WithLabelValues(name, w.label))
			}
		}
	}
	sr.pubCond = sync.NewCond(&sr.pubMu)
	w.sh = sr
	w.ms.share = &sr.st
}

// startPublisher starts the goroutine that writes the worker's deltas.
func (w *worker) startPublisher(parent context.Context) {
	sr := w.sh
	ctx, cancel := context.WithCancel(parent)
	sr.pubCancel, sr.pubCtx = cancel, ctx
	sr.pubCh = make(chan kafka.Message, 64)
	sr.pubDone = make(chan struct{})
	go func() {
		defer close(sr.pubDone)
		var batch []kafka.Message
		for {
			batch = batch[:0]
			m, ok := <-sr.pubCh
			if !ok {
				return
			}
			batch = append(batch, m)
		more:
			for len(batch) < 64 {
				select {
				case m, ok := <-sr.pubCh:
					if !ok {
						break more
					}
					batch = append(batch, m)
				default:
					break more
				}
			}
			if hook := w.p.cfg.beforePublish; hook != nil {
				hook(ctx, w.part)
			}
			for attempt := 0; ; attempt++ {
				err := ctx.Err() // (kafka-go may still write a batch given a cancelled context)
				if err == nil && !w.lease.valid() {
					// fence.go: a new owner replays and publishes these
					// (byte-identical) deltas; stop as if cancelled.
					err = errLeaseExpired
					sr.pubCancel()
				}
				if err == nil {
					err = w.p.shareW.WriteMessages(ctx, batch...)
				}
				if err == nil {
					break
				}
				if ctx.Err() != nil {
					sr.pubMu.Lock()
					sr.pubErr = err
					sr.pubCond.Broadcast()
					sr.pubMu.Unlock()
					for range sr.pubCh { // drain
					}
					return
				}
				w.p.m.writeErrors.WithLabelValues("share").Inc()
				w.log.Warn("publishing shared deltas failed; retrying", "attempt", attempt+1, "err", err)
				sleep(ctx, time.Duration(min(attempt+1, 10))*200*time.Millisecond)
			}
			w.p.sm.published.Add(float64(len(batch)))
			// The batch's deltas are in epoch order: the last is the newest
			// (an idle record's epoch is the next delta's, not one written).
			for i := len(batch) - 1; i >= 0; i-- {
				if kind, _, e, ok := share.Peek(batch[i].Value); ok && kind == share.KindDelta {
					w.p.tail.raiseDurable(w.part, e)
					break
				}
			}
			sr.pubMu.Lock()
			sr.unacked -= len(batch)
			sr.pubCond.Broadcast()
			sr.pubMu.Unlock()
		}
	}()
}

// stopPublisher closes the publisher's input and waits for it.
func (w *worker) stopPublisher() {
	if w.sh == nil || w.sh.pubCh == nil {
		return
	}
	// Cancelled first: a flush blocked on a full input (pendingDecision.flush)
	// lets go of unsentMu.
	w.sh.pubCancel()
	w.sh.unsentMu.Lock()
	w.sh.pubClosed = true
	close(w.sh.pubCh)
	w.sh.unsentMu.Unlock()
	<-w.sh.pubDone
}

// deltasAcked waits until every published delta is acknowledged (before a
// checkpoint: a checkpoint past an epoch whose delta never landed would
// leave the others waiting for it for ever), and the decision record in
// flight too. It returns false if the publisher gave up or ctx ended
// first.
func (w *worker) deltasAcked(ctx context.Context) bool {
	sr := w.sh
	if sr == nil {
		return true
	}
	if !w.flushDeltas(ctx, true) || !w.decisionAcked(ctx) {
		return false
	}
	stop := context.AfterFunc(ctx, func() {
		sr.pubMu.Lock()
		sr.pubCond.Broadcast()
		sr.pubMu.Unlock()
	})
	defer stop()
	sr.pubMu.Lock()
	defer sr.pubMu.Unlock()
	for sr.unacked > 0 && sr.pubErr == nil && ctx.Err() == nil {
		sr.pubCond.Wait()
	}
	// What the checkpoint merged is durable already: it is taken only
	// once the output before it is acknowledged, and the writer waits for
	// the merged deltas to be durable first (tailer.awaitDurable).
	return sr.unacked == 0
}

// boundary runs the sync point at the end of epoch e (see package share).
// It returns false, with the worker marked broken, if ctx ended before the
// merge; an error the schedule cannot recover from fails the partition.
func (w *worker) boundary(ctx context.Context, e int64) (bool, error) {
	sr, t := w.sh, w.p.tail
	if hook := w.p.cfg.beforeDelta; hook != nil {
		hook(ctx, w.part, e)
	}
	// 1. The deltas. Delta e is a function of every decision this
	// partition made before e, so nobody may see it before they are
	// durable: while one is in flight, the delta is handed over (to this
	// process's other partitions) by the decision committer when it lands,
	// and written to the sync topic by this worker after that (flushDeltas).
	// The worker goes on meanwhile; it waits only where it needs its own
	// delta (awaitOwn, below).
	rec := &share.Record{Kind: share.KindDelta, Partition: w.part, Epoch: e, Partitions: sr.cfg.Partitions, Offset: w.next}
	for k, i := range sr.models {
		m := w.ms.models[i]
		d, err := m.l.(learner.Sharer).ShareDelta()
		if err != nil {
			return false, fmt.Errorf("model %s: share delta: %w", sr.names[k], err)
		}
		rec.Deltas = append(rec.Deltas, share.ModelDelta{Model: m.name, Data: d})
	}
	pd := sr.dec
	if pd != nil && !pd.hold(rec) {
		if !pd.ok { // not durable: its work must not be seen; the next owner replays it
			sr.broken = true
			return false, nil
		}
		pd, sr.dec = nil, nil
	}
	if pd == nil {
		t.put(rec)
	}
	sr.unsentMu.Lock()
	sr.unsent = append(sr.unsent, unsentDelta{epoch: e, after: pd,
		msg: w.p.signSync(kafka.Message{Key: share.AppendKey(make([]byte, 0, len(t.prefix)+24), t.prefix, share.KindDelta, w.part, e, t.window), Value: rec.Encode()})})
	sr.unsentMu.Unlock()
	if !w.flushDeltas(ctx, false) {
		sr.broken = true
		return false, nil
	}
	// The own delta this boundary merges (epoch e − L) must be held.
	if !w.awaitOwn(ctx, e-sr.cfg.Lag) {
		sr.broken = true
		return false, nil
	}
	// 2. The frontier: a recorded decision, or the bounded wait and Plan.
	old := sr.st.Frontier
	var next []int64
	fast := false // the strict schedule's frontier, found without Plan
	var dec *share.Record
	if t.mayHoldDecision(w.part, e) {
		var err error
		if dec, err = t.get(share.KindDecision, w.part, e); err != nil {
			return false, err
		}
	}
	// avail runs with t.mu read-locked (around a whole WaitFor or Plan).
	var getErr error
	avail := func(q int, ep int64) bool {
		r, err := t.getLocked(share.KindDelta, q, ep)
		if err != nil && getErr == nil {
			getErr = err
		}
		return r != nil
	}
	start := time.Now()
	if dec != nil {
		if len(dec.Frontier) != sr.cfg.Partitions {
			return false, fmt.Errorf("share: decision record of boundary %d has %d partitions, the input has %d", e, len(dec.Frontier), sr.cfg.Partitions)
		}
		next = dec.Frontier
	} else if e <= sr.passed {
		// A previous owner went past this boundary and wrote no record,
		// so it merged the default frontier; its deltas computed from that
		// merge have left (and, from them, other partitions' output).
		// Deciding again would let the bounded wait skip a delta it merged
		// in-process before the delta was durable, if the partition
		// regenerating it now is slower than --share-max-wait.
		if d, ok := sr.cfg.Default(e, old); ok {
			next = d
		}
	}
	if next != nil {
		// The frontier a previous owner applied: waited for as long as it
		// takes.
		ok, strict, err := w.awaitApplied(ctx, e, old, next)
		if err != nil || !ok {
			return false, err
		}
		fast = strict
	} else {
		// The bounded wait's deadline, armed when a wait begins.
		var deadline <-chan time.Time
		arm := func() <-chan time.Time {
			if deadline == nil {
				deadline = sr.armTimer(w.p.cfg.ShareMaxWait)
			}
			return deadline
		}
		defer func() {
			if deadline != nil && deadline != expired {
				sr.timer.Stop()
			}
		}()
		var waitFor []int
		tgt := e - sr.cfg.Lag
		if tgt >= 0 && strictAt(old, tgt-1) {
			// On the strict schedule every partition is waited for: one
			// wake-up when the last delta of epoch tgt lands. Once it
			// has, the frontier is the strict one (what Plan finds when
			// every delta of tgt is held), with no scan of the
			// partitions. Anything else (the deadline, an idle partition)
			// is left to the loop below, as if the waits had happened
			// there.
			complete, stopped := t.awaitEpoch(ctx, arm, tgt)
			if complete {
				fast = true
			} else if stopped {
				deadline = expired
			}
		}
		if !fast {
			// Each partition waited for is awaited in turn, woken only by
			// arrivals in its slot (Plan then rechecks them all).
			t.mu.RLock()
			waitFor = sr.cfg.WaitFor(e, old, avail)
			t.mu.RUnlock()
			if getErr != nil {
				return false, getErr
			}
			if len(waitFor) > 0 {
				arm()
			}
		}
		for _, q := range waitFor {
			found, err := t.await(ctx, deadline, share.KindDelta, q, e-sr.cfg.Lag)
			if err != nil {
				return false, err
			}
			if found {
				continue
			}
			if ctx.Err() != nil {
				sr.broken = true
				return false, nil
			}
			if t.isIdle(q) { // no input on this process: not waited for (Plan skips it)
				w.p.sm.skips.Inc()
				continue
			}
			t.mu.RLock()
			missing := sr.cfg.WaitFor(e, old, avail)
			t.mu.RUnlock()
			if getErr != nil {
				return false, getErr
			}
			w.p.sm.skips.Add(float64(len(missing)))
			w.p.sm.expired.Inc()
			w.log.Warn("shared models: proceeding without partitions whose deltas did not arrive within the maximum wait", "boundary", e, "partitions", missing, "max_wait", w.p.cfg.ShareMaxWait)
			break
		}
		// def: the frontier is the one a replay applies where it finds
		// no decision record (share.Config.Default), so none is written.
		var def bool
		if fast {
			next, def = fillFrontier(&sr.next, len(old), tgt), true
		} else {
			t.mu.RLock()
			next, def = sr.cfg.Plan(e, old, avail)
			t.mu.RUnlock()
		}
		if getErr != nil {
			return false, getErr
		}
		if !def {
			w.writeDecisionAsync(&share.Record{Kind: share.KindDecision, Partition: w.part, Epoch: e, Partitions: sr.cfg.Partitions, Offset: w.next, Frontier: next}) // Plan returns a fresh slice
		}
	}
	w.p.sm.wait.Observe(time.Since(start).Seconds())
	// 3. Merge.
	refs := share.AppendDue(sr.refs[:0], old, next)
	sr.refs = refs
	recs := slices.Grow(sr.recs[:0], len(refs))[:len(refs)]
	sr.recs = recs
	defer clear(recs) // the records stay the tailer's, not the worker's
	// On the strict schedule (fast) the frontier merges every partition's
	// delta of one epoch, in partition order: that epoch's snapshot,
	// read without t.mu.
	held := false
	if fast {
		full := t.completeEpoch(e - sr.cfg.Lag)
		held = len(full) == len(refs)
		for j, ref := range refs {
			if !held {
				break
			}
			r := full[j]
			held = r != nil && r.Partition == ref.Partition && r.Epoch == ref.Epoch
			recs[j] = r
		}
	}
	if !held {
		if err := t.getDue(refs, recs, e); err != nil {
			return false, err
		}
	}
	for k, i := range sr.models {
		in := sr.in[:0]
		for j, ref := range refs {
			data, ok := findDelta(recs[j], sr.names[k])
			if !ok {
				return false, fmt.Errorf("share: partition %d's delta of epoch %d has no model %s (is it configured the same on every instance?)", ref.Partition, ref.Epoch, sr.names[k])
			}
			in = append(in, learner.SharedDelta{Partition: ref.Partition, Epoch: ref.Epoch, Own: ref.Partition == w.part, Data: data})
		}
		var err error
		if mx, ok := w.ms.models[i].l.(learner.Mixer); ok {
			var mix []float64
			if mix, err = t.mix(sr.names[k], e, fast, refs, mx, in); err == nil {
				err = mx.ShareApply(in, mix)
			}
		} else {
			err = w.ms.models[i].l.(learner.Sharer).ShareMerge(in)
		}
		if err != nil {
			return false, fmt.Errorf("model %s: merging the deltas of boundary %d: %w", sr.names[k], e, err)
		}
		w.p.sm.merged.Add(float64(len(in)))
		sr.gStale[k].Set(float64(sr.cfg.Staleness(e, next)))
		sr.in = in
		clear(in) // no reference to the deltas' bytes outlives the merge
	}
	sr.st.Frontier = append(sr.st.Frontier[:0], next...)
	return true, nil
}

// noteReplay sets how far previous owners of the partition are known to
// have gone (shareRun.passed), once the restored worker's tailer has caught
// up: a delta of epoch d of the partition on the sync topic (or held in
// this process from an earlier generation) was computed after boundary
// d−1, and so was a decision record of boundary d. Nothing else of the
// partition's can have left computed from a merge whose deltas were not
// durable: its output and checkpoints wait for them (tailer.awaitDurable),
// and a replay finds durable deltas on the sync topic.
func (w *worker) noteReplay() {
	sr, t := w.sh, w.p.tail
	t.mu.RLock()
	sr.passed = max(t.newestLocked(share.KindDelta, w.part), t.newestLocked(share.KindDecision, w.part)) - 1
	t.mu.RUnlock()
	if sr.passed >= 0 {
		w.log.Info("shared models: replaying the boundaries a previous owner passed with its frontiers", "through_epoch", sr.passed)
	}
}

// awaitApplied waits, with no bound, for the deltas a boundary e moving
// the frontier from old to next merges (a frontier a previous owner of the
// partition applied). Past --share-max-wait it says in the log which delta
// it still waits for, once. A partition due that is idle on this process
// is polled (its delta comes with its next events). On the strict schedule
// it waits for the epoch's count (tailer.awaitEpoch, one wake-up) and
// reports strict. It returns false, with the worker marked broken, if ctx
// ended first.
func (w *worker) awaitApplied(ctx context.Context, e int64, old, next []int64) (ok, strict bool, err error) {
	sr, t := w.sh, w.p.tail
	// The timer (sr.timer, as the bounded wait's) is armed only when a
	// wait must block.
	var slow <-chan time.Time
	arm := func(d time.Duration) <-chan time.Time {
		slow = sr.armTimer(d)
		return slow
	}
	defer func() {
		if slow != nil {
			sr.timer.Stop()
		}
	}()
	maxWait := max(w.p.cfg.ShareMaxWait, time.Millisecond)
	if tgt := e - sr.cfg.Lag; tgt >= 0 && strictAt(old, tgt-1) && strictAt(next, tgt) {
		complete, stopped := t.awaitEpoch(ctx, func() <-chan time.Time { return arm(maxWait) }, tgt)
		if complete {
			return true, true, nil
		}
		if stopped {
			arm(0) // the loop below says which delta is late
		}
	}
	warned := false
	for _, ref := range share.Due(old, next) {
		for {
			if slow == nil {
				if r, err := t.get(share.KindDelta, ref.Partition, ref.Epoch); r != nil && err == nil {
					break
				}
				arm(maxWait)
			}
			found, err := t.await(ctx, slow, share.KindDelta, ref.Partition, ref.Epoch)
			if err != nil {
				return false, false, err
			}
			if found {
				break
			}
			if ctx.Err() != nil {
				sr.broken = true
				return false, false, nil
			}
			if t.isIdle(ref.Partition) {
				sleep(ctx, 50*time.Millisecond)
				continue
			}
			if !warned {
				warned = true
				w.log.Warn("shared models: replaying a boundary a previous owner passed, and waiting for a delta it merged (exact recovery needs it; it comes once its partition has been replayed up to it)",
					"boundary", e, "partition", ref.Partition, "epoch", ref.Epoch, "waited", w.p.cfg.ShareMaxWait)
			}
			arm(time.Hour) // from now on, woken by arrivals only
		}
	}
	return true, false, nil
}

// armTimer starts the worker's wait timer (sr.timer, created on first use)
// for d and returns its channel; callers stop it when done (Go ≥ 1.23
// timers need no drain before Reset).
func (sr *shareRun) armTimer(d time.Duration) <-chan time.Time {
	if sr.timer == nil {
		sr.timer = time.NewTimer(d)
	} else {
		sr.timer.Reset(d)
	}
	return sr.timer.C
}

// fillFrontier sets *buf to n copies of t and returns it (the strict
// frontier, in storage reused across boundaries).
func fillFrontier(buf *[]int64, n int, t int64) []int64 {
	f := slices.Grow((*buf)[:0], n)[:n]
	for i := range f {
		f[i] = t
	}
	*buf = f
	return f
}

// strictAt reports whether every partition's frontier is t.
func strictAt(old []int64, t int64) bool {
	for _, f := range old {
		if f != t {
			return false
		}
	}
	return true
}

// expired is a deadline that has passed (a wait that timed out before the
// loop over the partitions waited for).
var expired = func() <-chan time.Time {
	ch := make(chan time.Time)
	close(ch)
	return ch
}()

func findDelta(r *share.Record, model string) ([]byte, bool) {
	for _, d := range r.Deltas {
		if d.Model == model {
			return d.Data, true
		}
	}
	return nil, false
}

// pendingDecision is a decision record being written: ok is set before
// done is closed.
type pendingDecision struct {
	rec  *share.Record
	msg  kafka.Message
	part int
	ctx  context.Context // the writing worker's publisher's: dropped once it ends
	// lease: the writing worker's generation's (fence.go): a decision is
	// not written once it has ended, since a new owner of the partition
	// may decide the same boundary otherwise.
	lease *lease
	// dropped: a decision of this worker was dropped (the committer's,
	// shared by the worker's decisions: shareRun.decDropped).
	dropped *bool
	done    chan struct{}
	ok      bool
	// mu guards settled and held: the deltas the partition computed after
	// this decision, handed over by the committer when it lands (settle),
	// in epoch order, or dropped with it.
	mu      sync.Mutex
	settled bool
	held    []*share.Record
	// flush, once it has landed, gives the worker's publisher the deltas
	// that waited for it (worker.flushDeltas, without wait), from the
	// committer's side: the worker may be blocked at a later boundary,
	// waiting for a delta of another instance's partition that waits for
	// these. Before, only the worker's next flush sent them, and two
	// instances whose partitions each held a delta behind a decision in
	// flight waited for each other until --share-max-wait expired, made a
	// decision again, and so on (TestSharedSlowDecisionsDoNotChainWaits).
	flush func()
}

// hold keeps rec to be handed over when the decision lands, and reports
// true; false if it has settled already (then ok says how).
func (pd *pendingDecision) hold(rec *share.Record) bool {
	pd.mu.Lock()
	defer pd.mu.Unlock()
	if pd.settled {
		return false
	}
	pd.held = append(pd.held, rec)
	return true
}

// settle ends the decision's flight (ok: it landed) and hands over what it
// held: the decision itself, then the deltas, in the tailer; or drops them.
func (pd *pendingDecision) settle(t *tailer, ok bool) {
	pd.mu.Lock()
	if ok {
		t.put(pd.rec)
		for _, r := range pd.held {
			t.put(r)
		}
	}
	pd.ok, pd.settled, pd.held = ok, true, nil
	pd.mu.Unlock()
	close(pd.done)
	if ok && pd.flush != nil {
		go pd.flush()
	}
}

// unsentDelta is a delta record not yet given to the worker's publisher:
// it waits for the decision in flight when it was made (after, nil if
// none) to land.
type unsentDelta struct {
	epoch int64
	msg   kafka.Message
	after *pendingDecision
}

// flushDeltas gives the publisher every unsent delta whose decision has
// landed, in epoch order; with wait, it waits for the decisions and gives
// it all of them. It returns false if a decision did not land (what
// follows it must not be published), the publisher was stopped or ctx
// ended. Safe for concurrent use: the worker calls it at its boundaries,
// and a landing decision calls it (without wait) from another goroutine
// (pendingDecision.flush), so that the deltas it held leave at once even
// while the worker waits at a later boundary for a delta of another
// instance's partition, which may itself wait for them.
func (w *worker) flushDeltas(ctx context.Context, wait bool) bool {
	sr := w.sh
	sr.unsentMu.Lock()
	defer sr.unsentMu.Unlock()
	if sr.pubClosed {
		return len(sr.unsent) == 0
	}
	n := 0
	defer func() {
		sr.unsent = sr.unsent[:copy(sr.unsent, sr.unsent[n:])]
		clear(sr.unsent[len(sr.unsent):cap(sr.unsent)])
	}()
	for _, u := range sr.unsent {
		if pd := u.after; pd != nil {
			if wait {
				select {
				case <-pd.done:
				case <-ctx.Done():
					return false
				}
			}
			select {
			case <-pd.done:
				if !pd.ok {
					return false
				}
			default:
				return true // this one and the later ones wait
			}
		}
		sr.pubMu.Lock()
		sr.unacked++
		sr.pubMu.Unlock()
		select {
		case sr.pubCh <- u.msg:
		case <-ctx.Done():
			sr.pubMu.Lock()
			sr.unacked--
			sr.pubMu.Unlock()
			return false
		}
		n++
	}
	return true
}

// awaitOwn waits until the partition's own deltas up to epoch e are held
// (handed over: their decisions have landed), and reports false if one
// did not land or ctx ended.
func (w *worker) awaitOwn(ctx context.Context, e int64) bool {
	var last *pendingDecision
	w.sh.unsentMu.Lock()
	for _, u := range w.sh.unsent {
		if u.epoch > e {
			break
		}
		if u.after != nil {
			last = u.after // decisions land in order: the last one is enough
		}
	}
	w.sh.unsentMu.Unlock()
	if last == nil {
		return true
	}
	select {
	case <-last.done:
		return last.ok
	case <-ctx.Done():
		return false
	}
}

// writeDecisionAsync queues the decision record of the boundary being
// processed for the pipeline's decision committer and returns at once. The
// merge and the next epochs' learning go on meanwhile, but nothing that
// depends on the decision leaves the worker before it is acknowledged: the
// deltas of the next boundaries are handed over to this process's other
// partitions by the committer once it has landed and published after that
// (pendingDecision.hold, flushDeltas), the predictions and dead letters of
// the micro-batch wait for it in the writer (unit.dec), and a checkpoint
// waits for it (deltasAcked). So a crash before it lands loses only work
// that a replay redoes with a decision of its own, as if this one had never
// been made. Several may be in flight per partition: the committer settles
// them in the order it took them and, once one is dropped, drops the later
// ones of the same worker (shareRun.decDropped), so the newest landing
// means every earlier one has; sr.dec is the newest.
func (w *worker) writeDecisionAsync(d *share.Record) {
	sr, t := w.sh, w.p.tail
	pd := &pendingDecision{rec: d, part: w.part, ctx: sr.pubCtx, lease: w.lease, dropped: &sr.decDropped, done: make(chan struct{}),
		msg:   w.p.signSync(kafka.Message{Key: []byte(share.Key(t.prefix, share.KindDecision, w.part, d.Epoch, t.window)), Value: d.Encode()}),
		flush: func() { w.flushDeltas(sr.pubCtx, false) }}
	sr.dec = pd
	w.p.decq.add(pd)
}

// decisionAcked waits for the decision record in flight, if any, and
// reports whether it landed (false: it did not, or ctx ended first).
func (w *worker) decisionAcked(ctx context.Context) bool {
	pd := w.sh.dec
	if pd == nil {
		return true
	}
	select {
	case <-pd.done:
	case <-ctx.Done():
		return false
	}
	if !pd.ok {
		return false
	}
	w.sh.dec = nil
	return true
}

// decisionQueue is the pipeline's decision committer. It writes every
// decision queued since its last write in one produce request (group
// commit: no timer, so a lone decision goes at once, and under load the
// decisions of many partitions share a request). What a request costs the
// 2-core machine's CPU, not its latency, was what synchronous decisions
// cost (docs/sharing.md). Up to decisionFlights requests are in flight at
// once, each on a writer of its own (kafka-go writes one request at a time
// per writer and partition), so that a broker's round trip does not hold
// back the decisions queued during it; they are settled (landed or
// dropped: pendingDecision.settle) in the order they were taken, and once
// a decision is dropped, the later ones of the same worker are dropped too
// even if they landed (what they hold depends on it).
type decisionQueue struct {
	p    *Pipeline
	mu   sync.Mutex
	q    []*pendingDecision
	wake chan struct{}
}

// decisionFlights bounds the decision requests in flight at once.
const decisionFlights = 4

func newDecisionQueue(p *Pipeline) *decisionQueue {
	return &decisionQueue{p: p, wake: make(chan struct{}, 1)}
}

func (dq *decisionQueue) add(pd *pendingDecision) {
	dq.mu.Lock()
	dq.q = append(dq.q, pd)
	dq.mu.Unlock()
	select {
	case dq.wake <- struct{}{}:
	default:
	}
}

// decisionFlight is one request of decisions: written[i] says whether
// batch[i] was written (set before done is closed).
type decisionFlight struct {
	batch   []*pendingDecision
	written []bool
	done    chan struct{}
	w       *kafka.Writer
}

// run writes the queued decisions until ctx ends (after every worker has
// returned), retrying a failed write until it lands; a decision whose
// worker's publisher stopped meanwhile is dropped (ok = false). Each
// written decision is held in the tailer (a replay in this process reads it
// there).
func (dq *decisionQueue) run(ctx context.Context) {
	p := dq.p
	free := append([]*kafka.Writer(nil), p.shareDecW...)
	var flights []*decisionFlight
	settle := func(f *decisionFlight) {
		for i, pd := range f.batch {
			ok := f.written[i] && !*pd.dropped
			if !ok {
				*pd.dropped = true
			} else {
				p.sm.decisions.Inc()
			}
			pd.settle(p.tail, ok)
		}
		free = append(free, f.w)
	}
	for {
		var head <-chan struct{}
		if len(flights) > 0 {
			head = flights[0].done
		}
		select {
		case <-dq.wake:
		case <-head:
		case <-ctx.Done():
			for _, f := range flights {
				<-f.done // its writes end with ctx
				settle(f)
			}
			dq.mu.Lock()
			for _, pd := range dq.q {
				pd.settle(p.tail, false)
			}
			dq.q = nil
			dq.mu.Unlock()
			return
		}
		for len(flights) > 0 && isClosed(flights[0].done) {
			settle(flights[0])
			flights[0] = nil
			flights = flights[1:]
		}
		for len(free) > 0 {
			dq.mu.Lock()
			batch := dq.q
			dq.q = nil
			dq.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			f := &decisionFlight{batch: batch, written: make([]bool, len(batch)), done: make(chan struct{}), w: free[len(free)-1]}
			free = free[:len(free)-1]
			flights = append(flights, f)
			go dq.write(ctx, f)
		}
	}
}

// write writes f's decisions, retrying until they land or their workers
// (or the committer) stop.
func (dq *decisionQueue) write(ctx context.Context, f *decisionFlight) {
	p := dq.p
	defer close(f.done)
	live := make([]int, 0, len(f.batch))
	var msgs []kafka.Message
	for attempt := 0; ; attempt++ {
		live = live[:0]
		msgs = msgs[:0]
		for i, pd := range f.batch {
			if hook := p.cfg.beforeDecision; hook != nil && attempt == 0 {
				hook(pd.ctx, pd.part, pd.rec.Epoch)
			}
			if pd.ctx.Err() == nil && ctx.Err() == nil && pd.lease.valid() {
				live = append(live, i)
				msgs = append(msgs, pd.msg)
			}
		}
		if len(live) == 0 {
			return
		}
		err := f.w.WriteMessages(ctx, msgs...)
		if err == nil {
			for _, i := range live {
				f.written[i] = true
			}
			return
		}
		if ctx.Err() == nil {
			p.m.writeErrors.WithLabelValues("share").Inc()
			p.cfg.Logger.Warn("writing share decisions failed; retrying", "decisions", len(live), "attempt", attempt+1, "err", err)
			sleep(ctx, time.Duration(min(attempt+1, 10))*200*time.Millisecond)
		}
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
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

// hasUnsent reports whether some delta waits for its decision to land.
func (sr *shareRun) hasUnsent() bool {
	sr.unsentMu.Lock()
	defer sr.unsentMu.Unlock()
	return len(sr.unsent) > 0
}

// publishIdle tells the other instances that this partition has become
// idle, or busy again (a KindIdle record, with --share-skip-idle), so that
// their boundaries do not wait for its next delta either (tailer.
// remoteIdleLocked); only on a change. An idle record follows every delta
// the partition has made (it is sent after them, on the same publisher, in
// order), so a reader that sees it has seen them.
func (w *worker) publishIdle(ctx context.Context, idle bool) {
	sr, t := w.sh, w.p.tail
	if sr.idleSaid == idle {
		return
	}
	if idle && !w.flushDeltas(ctx, false) {
		return
	}
	rec := &share.Record{Kind: share.KindIdle, Partition: w.part, Epoch: sr.st.Count / sr.cfg.Every,
		Partitions: sr.cfg.Partitions, Offset: w.next, Idle: idle}
	msg := w.p.signSync(kafka.Message{Key: share.AppendKey(nil, t.prefix, share.KindIdle, w.part, 0, t.window), Value: rec.Encode()})
	sr.unsentMu.Lock()
	defer sr.unsentMu.Unlock()
	if sr.pubClosed || (idle && len(sr.unsent) > 0) {
		return // a delta still waits for its decision: not idle yet as far as the others can know
	}
	sr.pubMu.Lock()
	sr.unacked++
	sr.pubMu.Unlock()
	select {
	case sr.pubCh <- msg:
		sr.idleSaid = idle
	case <-ctx.Done():
		sr.pubMu.Lock()
		sr.unacked--
		sr.pubMu.Unlock()
	}
}
