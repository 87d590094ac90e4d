package learner

import (
	"errors"
	"fmt"

	"okstream/learner/state"
)

// vecShare implements Sharer for a model whose parameters (or sufficient
// statistics) are one vector of floats that every partition's copy keeps in
// the same basis, so that what the copies learn adds up: FOGD's weights on
// random features drawn from a common seed, the linear model's ridge
// statistics. The delta is the vector minus its value at the last sync (the
// snapshot); merging sums or averages the deltas into the vector (see
// merge) and takes a new snapshot.
//
// State: the snapshot, present only once the model has merged (shared). A
// model that never merged has the snapshot of its creation, the zero vector,
// so a state without one (any state written before sharing existed, or with
// sharing off) restores to the same model, and its encoding is unchanged.
type vecShare struct {
	// mean: parameter mixing (see merge) rather than a sum.
	mean   bool
	snap   []float64 // the vector at the last sync; nil until shared
	shared bool
	bufs   [][]float64 // merge scratch: the decoded deltas
}

// delta encodes v − snap under b's header (so that a delta of another spec
// or dimension is refused by the receiver).
func (s *vecShare) delta(b *base, v []float64) []byte {
	e := state.NewEncoder(8*len(v) + 64 + len(b.spec))
	e.Header(b.name, b.spec, b.dim)
	d := make([]float64, len(v))
	copy(d, v)
	if s.shared {
		for i := range d {
			d[i] -= s.snap[i]
		}
	}
	e.F64s(d)
	return e.Bytes()
}

// merge decodes every delta (refusing the whole merge, with v unchanged, if
// one does not decode or does not fit), then updates v and snapshots it:
//
//   - sum (statistics): v ← v + Σ_{non-own} d, in the order given: the own
//     delta is already in v, so v holds the statistics of every event whose
//     delta was merged plus the own events since;
//   - mean (parameter mixing, for stochastic-gradient learners): v ← v −
//     Σ_{own} d + (1/k) Σ_all d, k the number of partitions present: the
//     own steps count fully until they are merged, and then, like every
//     other partition's, with weight 1/k — the average of the copies'
//     updates (McDonald, Hall & Mann, NAACL 2010, iterative parameter
//     mixing, with the per-epoch mixing of Zinkevich, Weimer, Smola & Li,
//     "Parallelized stochastic gradient descent", NIPS 2010). Summing
//     instead, which is one SGD over all events with delays, takes P times
//     the steps with a delay of up to (L+1)·S·P events, and on shuffled
//     cod-rna (FOGD, η = 0.002) it was worse than independent models at
//     P = 16 (docs/sharing.md).
func (s *vecShare) merge(b *base, v []float64, deltas []SharedDelta) error {
	for len(s.bufs) < len(deltas) {
		s.bufs = append(s.bufs, nil)
	}
	decoded := s.bufs[:len(deltas)] // reused across merges: no allocation once warm
	for i, sd := range deltas {
		d := state.NewDecoder(sd.Data)
		d.Header(b.name, b.spec, b.dim)
		x := d.F64sN(decoded[i], len(v))
		if err := d.Done(); err != nil {
			if !errors.Is(err, state.ErrCorrupt) { // a delta of another spec or dimension
				err = fmt.Errorf("%w: %w", state.ErrCorrupt, err)
			}
			return fmt.Errorf("learner %s: shared delta of partition %d, epoch %d: %w", b.name, sd.Partition, sd.Epoch, err)
		}
		decoded[i] = x
	}
	if s.mean {
		// w ← w − Σ own + (1/k) Σ all, k the partitions present.
		parts := map[int]bool{}
		for i, sd := range deltas {
			parts[sd.Partition] = true
			if sd.Own {
				for j, x := range decoded[i] {
					v[j] -= x
				}
			}
		}
		k := 1 / float64(max(1, len(parts)))
		for i := range deltas {
			for j, x := range decoded[i] {
				v[j] += k * x
			}
		}
	} else {
		for i, sd := range deltas {
			if sd.Own {
				continue
			}
			for j, x := range decoded[i] {
				v[j] += x
			}
		}
	}
	if s.snap == nil {
		s.snap = make([]float64, len(v))
	}
	copy(s.snap, v)
	s.shared = true
	return nil
}

// encode appends the snapshot to a state, if the model has merged.
func (s *vecShare) encode(e *state.Encoder) {
	if s.shared {
		e.U8(1)
		e.F64s(s.snap)
	}
}

// decode reads what encode wrote (nothing, for a model that never merged)
// into a vecShare to install with set once the whole state has decoded.
func decodeVecShare(d *state.Decoder, n int) vecShare {
	if d.Remaining() == 0 {
		return vecShare{}
	}
	if d.U8() != 1 && d.Err() == nil {
		d.Fail("shared snapshot marker")
	}
	snap := d.F64sN(nil, n)
	return vecShare{snap: snap, shared: d.Err() == nil}
}

// set installs a decoded snapshot, reusing s's memory.
func (s *vecShare) set(o vecShare) {
	s.shared = o.shared
	if !o.shared {
		return
	}
	if len(s.snap) != len(o.snap) {
		s.snap = make([]float64, len(o.snap))
	}
	copy(s.snap, o.snap)
}
