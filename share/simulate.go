package share

import (
	"fmt"

	"okstream/learner"
)

// Event is one labelled example of a simulated stream.
type Event struct {
	X []float64
	Y float64
	// Skip marks a record the consumer dead-letters: it counts in its
	// partition's epochs but is neither scored nor learnt.
	Skip bool
}

// SimResult is what Simulate returns.
type SimResult struct {
	// Models are the partitions' final models, Models[p] partition p's.
	Models []learner.Learner
	// States are the partitions' final schedule states.
	States []State
	// Labeled, Mistakes and SqErr are each partition's progressive
	// statistics (every event scored before it is learnt), as the
	// consumer's Stats count them.
	Labeled, Mistakes []uint64
	SqErr             []float64
	// Decisions lists the boundaries whose frontier was not the default
	// one (Config.Default): where a partition's stream ended before the
	// others needed its deltas, and the rejoin boundaries after that.
	Decisions []Record
	// Merges counts ShareMerge calls; Deltas the deltas merged (own
	// included).
	Merges, Deltas int
}

// Simulate runs spec (one model per partition, dimension dim) over events
// split into c.Partitions partitions by assign (event index → partition;
// nil: round robin, event i to partition i mod P), each partition learning
// its own events in order and synchronising on the schedule c, in one
// process. c.Every = 0 runs independent models (no sharing).
//
// It uses the schedule code of the consumer (State.Next, WaitFor, Plan,
// Due), and builds each learner with learner.New, so a consumer run whose
// partitions hold the same events, with no partition skipped by the bounded
// wait, ends with the same models bit for bit. A partition whose stream
// ends before the others have merged its deltas is skipped as the
// consumer's bounded wait would skip it (it is then behind: merged again
// at the rejoin boundaries, see Plan); the Decisions say where.
func Simulate(spec string, dim int, c Config, events []Event, assign func(i int) int) (*SimResult, error) {
	return simulate(spec, dim, c, events, assign, nil)
}

// Replay runs Simulate's stream with the frontiers a run recorded instead
// of deciding them: at every boundary (p, e) the recorded frontier
// recorded[Ref{p, e}] if there is one, else the Default frontier, each
// waited for until its deltas exist. It is what a consumer run, with any
// number of instances, kills and rebalances, must end equal to, bit for
// bit: its decision records (all of them: give the run a sync-topic window
// that keeps them) replayed over the same partitions' events. An error
// says where the run's records cannot be replayed: a boundary with no
// record whose Default is not defined, a recorded frontier whose deltas
// never come, or a record for a boundary that is never reached.
func Replay(spec string, dim int, c Config, events []Event, assign func(i int) int, recorded map[Ref][]int64) (*SimResult, error) {
	if recorded == nil {
		recorded = map[Ref][]int64{}
	}
	if c.Every <= 0 {
		return nil, fmt.Errorf("share: Replay needs a sharing schedule (Every > 0)")
	}
	return simulate(spec, dim, c, events, assign, recorded)
}

// simulate is Simulate, or Replay when recorded is not nil.
func simulate(spec string, dim int, c Config, events []Event, assign func(i int) int, recorded map[Ref][]int64) (*SimResult, error) {
	share := c.Every > 0
	if share {
		if err := c.Validate(); err != nil {
			return nil, err
		}
	} else if c.Partitions < 1 {
		return nil, fmt.Errorf("share: %d partitions: must be at least 1", c.Partitions)
	}
	P := c.Partitions
	if assign == nil {
		assign = func(i int) int { return i % P }
	}
	queues := make([][]int, P)
	for i := range events {
		p := assign(i)
		if p < 0 || p >= P {
			return nil, fmt.Errorf("share: event %d assigned to partition %d of %d", i, p, P)
		}
		queues[p] = append(queues[p], i)
	}
	r := &SimResult{Models: make([]learner.Learner, P), States: make([]State, P),
		Labeled: make([]uint64, P), Mistakes: make([]uint64, P), SqErr: make([]float64, P)}
	sharers := make([]learner.Sharer, P)
	for p := range P {
		l, err := learner.New(spec, dim)
		if err != nil {
			return nil, err
		}
		r.Models[p] = l
		r.States[p] = NewState(P)
		if share {
			s, ok := l.(learner.Sharer)
			if !ok {
				return nil, fmt.Errorf("share: learner %s does not implement learner.Sharer", l.Info().Name)
			}
			sharers[p] = s
		}
	}
	deltas := map[Ref][]byte{}
	avail := func(q int, ep int64) bool { _, ok := deltas[Ref{q, ep}]; return ok }
	pending := make([]int64, P) // the boundary a partition is stopped at, −1: none
	for p := range pending {
		pending[p] = -1
	}
	// boundary completes partition p's pending boundary unless it must wait
	// (and skip is false).
	used := 0 // recorded frontiers applied (Replay)
	boundary := func(p int, skip bool) (bool, error) {
		e, st := pending[p], &r.States[p]
		var next []int64
		if recorded != nil {
			var def bool
			if rec, ok := recorded[Ref{p, e}]; ok {
				if len(rec) != P {
					return false, fmt.Errorf("share: recorded frontier of partition %d, boundary %d has %d partitions, want %d", p, e, len(rec), P)
				}
				next = rec
				used++
				r.Decisions = append(r.Decisions, Record{Kind: KindDecision, Partition: p, Epoch: e, Partitions: P, Frontier: rec})
			} else if next, def = c.Default(e, st.Frontier); !def {
				return false, fmt.Errorf("share: partition %d, boundary %d: no recorded frontier, and the default is not defined there (a rejoin boundary with a partition behind)", p, e)
			}
			for _, ref := range Due(st.Frontier, next) {
				if !avail(ref.Partition, ref.Epoch) {
					if skip {
						return false, fmt.Errorf("share: partition %d, boundary %d: the frontier %v needs partition %d's delta of epoch %d, which its stream never makes", p, e, next, ref.Partition, ref.Epoch)
					}
					return false, nil
				}
			}
		} else {
			if !skip && len(c.WaitFor(e, st.Frontier, avail)) > 0 {
				return false, nil
			}
			var def bool
			next, def = c.Plan(e, st.Frontier, avail)
			if !def {
				r.Decisions = append(r.Decisions, Record{Kind: KindDecision, Partition: p, Epoch: e, Partitions: P, Frontier: next})
			}
		}
		var in []learner.SharedDelta
		for _, ref := range Due(st.Frontier, next) {
			in = append(in, learner.SharedDelta{Partition: ref.Partition, Epoch: ref.Epoch, Own: ref.Partition == p, Data: deltas[ref]})
		}
		if err := sharers[p].ShareMerge(in); err != nil {
			return false, fmt.Errorf("share: partition %d, boundary %d: %w", p, e, err)
		}
		r.Merges++
		r.Deltas += len(in)
		st.Frontier = next
		pending[p] = -1
		return true, nil
	}
	pos := make([]int, P)
	for {
		progressed := false
		for p := range P {
			if pending[p] >= 0 {
				ok, err := boundary(p, false)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
				progressed = true
			}
			if pos[p] == len(queues[p]) {
				continue
			}
			ev := &events[queues[p][pos[p]]]
			pos[p]++
			progressed = true
			if !ev.Skip {
				f := r.Models[p].Learn(ev.X, ev.Y)
				r.Labeled[p]++
				if learner.Mistake(f, ev.Y) {
					r.Mistakes[p]++
				}
				r.SqErr[p] += (f - ev.Y) * (f - ev.Y)
			}
			if !share {
				continue
			}
			if b, e := r.States[p].Next(c); b {
				d, err := sharers[p].ShareDelta()
				if err != nil {
					return nil, fmt.Errorf("share: partition %d, epoch %d: %w", p, e, err)
				}
				deltas[Ref{p, e}] = d
				pending[p] = e
			}
		}
		if progressed {
			continue
		}
		// Every partition is finished or stopped at a boundary waiting for
		// partitions whose streams have ended: skip them, as the bounded
		// wait does.
		stuck := false
		for p := range P {
			if pending[p] >= 0 {
				stuck = true
				if _, err := boundary(p, true); err != nil {
					return nil, err
				}
			}
		}
		if !stuck {
			if used != len(recorded) {
				return nil, fmt.Errorf("share: %d recorded frontiers, %d of them at boundaries the stream reaches", len(recorded), used)
			}
			return r, nil
		}
	}
}
