// Package share holds the synchronisation schedule of models shared across
// the partitions of a stream (issue 17), with no Kafka in it: epoch
// counting, the merge frontier, what one sync point merges, the encoding of
// the records exchanged through the sync topic, and an offline simulator
// that runs the schedule in one process. The consumer (package consumer)
// drives the same code with Kafka around it, so the simulator's final
// states and the consumer's are equal bit for bit (a consumer test checks
// it).
//
// # The schedule
//
// A partition p counts every input record it consumes, in offset order
// (dead-lettered records included; the count is checkpointed). Its epoch e
// is the e-th block of S consecutive records (epoch 0 is records 1..S of
// the count). At the end of epoch e (the boundary e), p
//
//  1. computes, for every shared model, the delta of what it learnt since
//     its last sync (learner.Sharer.ShareDelta), and publishes one Delta
//     record holding them all (partition p, epoch e);
//  2. decides its new frontier F′: for every partition q, the last epoch of
//     q whose delta it will have merged. The strict schedule is F′[q] = e−L
//     for every q (L ≥ 1 the lag: partitions rarely wait for one another).
//     If some q's deltas are not available within the bounded wait, p
//     proceeds with what it has (see Plan) and records that frontier in a
//     Decision record, which must be durable before anything computed
//     after e leaves p (its next delta, its output, its checkpoint);
//  3. merges, with learner.Sharer.ShareMerge, the deltas Due(F, F′): every
//     q in partition order (its own included), each q's epochs F[q]+1..F′[q]
//     in epoch order; then F = F′.
//
// Recovery replays the same schedule: at a boundary with a Decision record
// the recorded frontier is applied (and waited for as long as it takes),
// elsewhere the strict one. Since deltas are deterministic functions of the
// partitions' inputs, the replayed merges and therefore the models are
// bit-identical to those of the first run.
package share

import (
	"fmt"
	"slices"
)

// Config is a schedule's constants.
type Config struct {
	// Every is S, the records per epoch (≥ 1).
	Every int64
	// Lag is L, how many epochs behind its own a partition merges the
	// others' deltas (≥ 0; 0 makes every partition wait for the slowest at
	// every boundary).
	Lag int64
	// Partitions is P, the input topic's partition count (≥ 1).
	Partitions int
}

// Validate checks the constants.
func (c Config) Validate() error {
	if c.Every < 1 {
		return fmt.Errorf("share: epoch length %d: must be at least 1 record", c.Every)
	}
	if c.Lag < 0 {
		return fmt.Errorf("share: lag %d: must be at least 0 epochs", c.Lag)
	}
	if c.Partitions < 1 {
		return fmt.Errorf("share: %d partitions: must be at least 1", c.Partitions)
	}
	return nil
}

// State is one partition's position in the schedule: what the checkpoint
// holds besides the models.
type State struct {
	// Count is the number of input records consumed.
	Count int64
	// Frontier[q] is the last epoch of partition q whose delta has been
	// merged (−1: none yet).
	Frontier []int64
}

// NewState is the state of a partition that has consumed nothing.
func NewState(partitions int) State {
	f := make([]int64, partitions)
	for i := range f {
		f[i] = -1
	}
	return State{Frontier: f}
}

// Clone returns a deep copy.
func (s State) Clone() State { return State{Count: s.Count, Frontier: slices.Clone(s.Frontier)} }

// Next counts one consumed record and reports whether it ended an epoch,
// and which.
func (s *State) Next(c Config) (boundary bool, epoch int64) {
	s.Count++
	if s.Count%c.Every != 0 {
		return false, 0
	}
	return true, s.Count/c.Every - 1
}

// Strict is the strict schedule's frontier at boundary e: e−L for every
// partition (at least −1).
func (c Config) Strict(e int64) []int64 {
	f := make([]int64, c.Partitions)
	t := max(e-c.Lag, -1)
	for i := range f {
		f[i] = t
	}
	return f
}

// Ref names one partition's delta of one epoch.
type Ref struct {
	Partition int
	Epoch     int64
}

// Due lists the deltas a sync point moving the frontier from old to next
// merges, in merge order: partition order, then epoch order. A partition
// whose frontier does not advance contributes nothing.
func Due(old, next []int64) []Ref { return AppendDue(nil, old, next) }

// AppendDue appends Due(old, next) to dst (a caller that reuses dst across
// boundaries allocates nothing once it is large enough).
func AppendDue(dst []Ref, old, next []int64) []Ref {
	out := dst
	for q := range next {
		for ep := old[q] + 1; ep <= next[q]; ep++ {
			out = append(out, Ref{q, ep})
		}
	}
	return out
}

// Plan decides the frontier at boundary e from what is available, after the
// runtime's bounded wait (see WaitFor): for every q, the last epoch up to
// e−L such that every delta of q after old[q] up to it is available
// (available(q, ep) reports whether q's delta of epoch ep is). strict
// reports whether that is the strict schedule's frontier (no Decision
// record is needed then).
func (c Config) Plan(e int64, old []int64, available func(q int, ep int64) bool) (next []int64, strict bool) {
	next = slices.Clone(old)
	strict = true
	t := max(e-c.Lag, -1)
	for q := range next {
		for next[q] < t && available(q, next[q]+1) {
			next[q]++
		}
		if next[q] < t {
			strict = false
		}
	}
	return next, strict
}

// WaitFor lists, at boundary e, the partitions the runtime waits for (up to
// its bounded wait) before it calls Plan: those that were up to date at the
// previous boundary (old[q] ≥ e−L−1) and whose delta of epoch e−L is
// missing. A partition that was already skipped (old[q] < e−L−1) is not
// waited for again until it has caught up: its deltas are merged, as they
// arrive, at later boundaries.
func (c Config) WaitFor(e int64, old []int64, available func(q int, ep int64) bool) []int {
	t := e - c.Lag
	if t < 0 {
		return nil
	}
	var out []int
	for q := range old {
		if old[q] >= t-1 && old[q] < t && !available(q, t) {
			out = append(out, q)
		}
	}
	return out
}

// Staleness is how many epochs the frontier lags behind the strict
// schedule at boundary e: e−L − min_q F[q] (0 on the strict schedule).
func (c Config) Staleness(e int64, f []int64) int64 {
	t := max(e-c.Lag, -1)
	m := t
	for _, v := range f {
		m = min(m, v)
	}
	return t - m
}
