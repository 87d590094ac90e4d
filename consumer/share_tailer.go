package consumer

// The sync topic's tailer (shared models; docs/sharing.md): one per
// process, it follows the compacted sync topic and keeps the latest record
// of every slot for every worker, checks what it reads
// (share_validate.go), and wakes the boundaries waiting for a slot. The
// epoch counts of the strict schedule and the shared mixing terms are in
// share_epochs.go, idle partitions in share_idle.go.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/internal/kafkautil"
	"okstream/share"
)

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

func (t *tailer) left(q int) { t.local1(q, -1) }

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
