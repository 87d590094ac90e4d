package consumer

// The strict schedule's fast path (shared models): the tailer counts, per
// epoch slot, the partitions whose delta it holds and wakes a boundary
// once when an epoch is complete (awaitEpoch), with a lock-free snapshot of
// its deltas; and the mixing term that every copy merging the same deltas
// shares (mix).

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"okstream/learner"
	"okstream/share"
)

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
