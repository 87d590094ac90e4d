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
//     after e leaves p (its next delta, its output, its checkpoint). A q
//     skipped so is behind; until it is merged again its frontier stays
//     where it is, which needs no record, except at the rejoin boundaries
//     (e a multiple of RejoinEvery), where p merges what has arrived of q
//     and records the frontier whatever it is (see Default);
//  3. merges, with learner.Sharer.ShareMerge, the deltas Due(F, F′): every
//     q in partition order (its own included), each q's epochs F[q]+1..F′[q]
//     in epoch order; then F = F′.
//
// Recovery replays the same schedule: at a boundary with a Decision record
// the recorded frontier is applied (and waited for as long as it takes),
// elsewhere the default one (Default: the strict one for the partitions not
// behind, the old one for those behind), waited for as long as it takes
// where the first run is known to have passed the boundary (the runtime's
// part: it may have merged a delta before the delta was durable). Since
// deltas are deterministic
// functions of the partitions' inputs, the replayed merges and therefore
// the models are bit-identical to those of the first run.
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

// RejoinEvery is K: a partition the schedule left behind at an earlier
// boundary (see Behind) is merged again only at boundaries e that are
// multiples of K, as far as its deltas have arrived, and each of those
// boundaries writes a Decision record while a partition is behind. In
// between, its frontier stays where it is: that is the default (Default),
// which a replay applies where it finds no record, so those boundaries need
// none. A replay cannot tell a boundary the first run went past from one it
// never reached, so whatever a boundary without a record does must not
// depend on what has arrived; that is why a behind partition is not merged
// as its deltas arrive (each such merge is timing-dependent and would need
// its own record: a partition whose stream has ended, in a replay of a
// keyed log, cost one record per boundary of every other partition). The
// price is staleness: a behind partition's deltas wait up to K−1 more
// boundaries. It is a constant, not a setting, because it is part of how a
// sync topic's records are read: a run and its replay must agree on it.
const RejoinEvery = 8

// Behind reports whether partition q is behind at boundary e with frontier
// old: skipped at an earlier boundary (old[q] < e−L−1), so not waited for
// (WaitFor) and merged only at rejoin boundaries.
func (c Config) Behind(e int64, old []int64, q int) bool { return old[q] < max(e-c.Lag, -1)-1 }

// Default is the frontier a boundary e applies when it has no Decision
// record: e−L for every partition not behind, old[q] for a partition q
// behind. ok is false at a rejoin boundary with a partition behind: there
// the frontier is always recorded (it depends on what has arrived).
func (c Config) Default(e int64, old []int64) (next []int64, ok bool) {
	next = slices.Clone(old)
	t := max(e-c.Lag, -1)
	rejoin := e%RejoinEvery == 0
	for q := range next {
		if c.Behind(e, old, q) {
			if rejoin {
				return next, false
			}
			continue
		}
		next[q] = t
	}
	return next, true
}

// Plan decides the frontier at boundary e from what is available, after the
// runtime's bounded wait (see WaitFor): for every q not behind, the last
// epoch up to e−L such that every delta of q after old[q] up to it is
// available (available(q, ep) reports whether q's delta of epoch ep is);
// for a q behind, the same at a rejoin boundary (e a multiple of
// RejoinEvery) and old[q] elsewhere. def reports whether that is the
// Default frontier, which needs no Decision record: false if a partition
// not behind is short of e−L, or at a rejoin boundary with a partition
// behind. With no partition behind, def is whether next is the strict
// schedule's frontier.
func (c Config) Plan(e int64, old []int64, available func(q int, ep int64) bool) (next []int64, def bool) {
	next = slices.Clone(old)
	def = true
	t := max(e-c.Lag, -1)
	rejoin := e%RejoinEvery == 0
	for q := range next {
		if c.Behind(e, old, q) {
			if !rejoin {
				continue // stays behind: the default
			}
			def = false // rejoin: recorded whatever has arrived
		}
		for next[q] < t && available(q, next[q]+1) {
			next[q]++
		}
		if next[q] < t {
			def = false
		}
	}
	return next, def
}

// WaitFor lists, at boundary e, the partitions the runtime waits for (up to
// its bounded wait) before it calls Plan: those that were up to date at the
// previous boundary (old[q] ≥ e−L−1) and whose delta of epoch e−L is
// missing. A partition that was already skipped (Behind) is not waited for
// again until it has caught up: what has arrived of it is merged at the
// rejoin boundaries (RejoinEvery).
func (c Config) WaitFor(e int64, old []int64, available func(q int, ep int64) bool) []int {
	t := e - c.Lag
	if t < 0 {
		return nil
	}
	var out []int
	for q := range old {
		if !c.Behind(e, old, q) && old[q] < t && !available(q, t) {
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
