package learner

import (
	"errors"
	"fmt"
	"slices"

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
	mean bool
	// own (with mean): keep the own steps at full weight and add the
	// average of the others' (w ← w + (1/k) Σ_{q≠p} d_q) instead of
	// replacing them by the average of all. For partitions that hold
	// different populations (a topic keyed by user): a partition's own
	// recent steps are the most relevant to its next events, and mixing
	// scales them by 1/k at every sync point. See merge.
	own     bool
	snap    []float64 // the vector at the last sync; nil until shared
	shared  bool
	bufs    [][]float64 // merge scratch: the decoded deltas
	scratch []float64   // mix's M
}

// delta encodes v − snap under b's header (so that a delta of another spec
// or dimension is refused by the receiver).
//
// With mean (parameter mixing) the delta is rounded to float32: half the
// bytes on the sync topic, which dominated the cost of a sync point
// (issue 17: FOGD B = 100 at S = 16 wrote 6.4 KB per 16 events). Every copy,
// the producing one included, merges the same rounded values (merge decodes
// its own delta from the bytes too), so the copies stay deterministic and
// the simulator equal to the pipeline; the rounding residual of the own
// delta (relative 2⁻²⁴) stays in the own copy only. Statistics (the sum
// mode) stay exact float64s: their merge promises the exact fit.
func (s *vecShare) delta(b *base, v []float64) []byte {
	if s.mean {
		e := state.NewEncoder(4*len(v) + 64 + len(b.spec))
		e.Header(b.name, b.spec, b.dim)
		var snap []float64
		if s.shared {
			snap = s.snap
		}
		e.F32sDiff(v, snap)
		return e.Bytes()
	}
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
//   - mean with own (personalised mixing): v ← v − (1/k) Σ_{own} d + (1/k)
//     Σ_all d, i.e. v + (1/k) Σ_{non-own} d: each copy keeps its own steps
//     and adds the others' average. On partitions keyed by an entity (a
//     KuaiRec replay keyed by user) plain mixing was worse than independent
//     models and this better than both; on round-robin partitions (shuffled
//     cod-rna) it is worse than plain mixing (docs/sharing.md, "Keyed
//     partitions"). The mixing term M = (1/k) Σ_all d is the same, so
//     Mixer's shared M serves both.
func (s *vecShare) merge(b *base, v []float64, deltas []SharedDelta) error {
	for len(s.bufs) < len(deltas) {
		s.bufs = append(s.bufs, nil)
	}
	if s.mean {
		return s.mix(b, v, deltas)
	}
	decoded := s.bufs[:len(deltas)] // reused across merges: no allocation once warm
	for i, sd := range deltas {
		d := state.NewDecoder(sd.Data)
		d.Header(b.name, b.spec, b.dim)
		x := d.F64sN(decoded[i], len(v))
		if err := deltaErr(b, sd, d); err != nil {
			return err
		}
		decoded[i] = x
	}
	for i, sd := range deltas {
		if sd.Own {
			continue
		}
		for j, x := range decoded[i] {
			v[j] += x
		}
	}
	s.snapshot(v)
	return nil
}

// snapshot takes v as the new sync point.
func (s *vecShare) snapshot(v []float64) {
	if s.snap == nil {
		s.snap = make([]float64, len(v))
	}
	copy(s.snap, v)
	s.shared = true
}

// deltaErr is the error of a delta that did not decode (nil if it did).
func deltaErr(b *base, sd SharedDelta, d *state.Decoder) error {
	err := d.Done()
	if err == nil {
		return nil
	}
	if !errors.Is(err, state.ErrCorrupt) { // a delta of another spec or dimension
		err = fmt.Errorf("%w: %w", state.ErrCorrupt, err)
	}
	return fmt.Errorf("learner %s: shared delta of partition %d, epoch %d: %w", b.name, sd.Partition, sd.Epoch, err)
}

// mix is merge's mean mode: w ← w − Σ own + M, M = (1/k) Σ all, k the
// partitions present (mixSum, then mixApply).
func (s *vecShare) mix(b *base, v []float64, deltas []SharedDelta) error {
	m, err := s.mixSum(b, len(v), deltas, s.scratch)
	if err != nil {
		return err
	}
	s.scratch = m
	return s.mixApply(b, v, deltas, m)
}

// mixSum computes M = (1/k) Σ d over the deltas, in their order, starting
// from zero, reading each float32 delta straight from its bytes, into dst's
// storage (every delta is checked first).
func (s *vecShare) mixSum(b *base, n int, deltas []SharedDelta, dst []float64) ([]float64, error) {
	raw := make([][]byte, 0, len(deltas))
	for _, sd := range deltas {
		d := state.NewDecoder(sd.Data)
		d.Header(b.name, b.spec, b.dim)
		x := d.F32sRawN(n)
		if err := deltaErr(b, sd, d); err != nil {
			return nil, err
		}
		raw = append(raw, x)
	}
	scale := 1 / float64(max(1, partitionsPresent(deltas)))
	if cap(dst) < n {
		dst = make([]float64, n)
	}
	m := dst[:n]
	clear(m)
	for _, x := range raw {
		for j := range m {
			m[j] += scale * state.F32At(x, j)
		}
	}
	return m, nil
}

// partitionsPresent is the number k of distinct partitions among deltas.
func partitionsPresent(deltas []SharedDelta) int {
	k := 0
	for i, sd := range deltas {
		if !slices.ContainsFunc(deltas[:i], func(o SharedDelta) bool { return o.Partition == sd.Partition }) {
			k++
		}
	}
	return k
}

// mixApply sets v ← v − c·Σ own + m and takes the new snapshot: c = 1
// (parameter mixing: the own steps end with weight 1/k like everyone's), or
// with own, c = 1/k (the own steps keep weight 1, the others' are averaged;
// see vecShare.own).
func (s *vecShare) mixApply(b *base, v []float64, deltas []SharedDelta, m []float64) error {
	if len(m) != len(v) {
		return fmt.Errorf("learner %s: a mix of %d values for %d weights", b.name, len(m), len(v))
	}
	var own [][]byte // checked before v changes
	for _, sd := range deltas {
		if !sd.Own {
			continue
		}
		d := state.NewDecoder(sd.Data)
		d.Header(b.name, b.spec, b.dim)
		x := d.F32sRawN(len(v))
		if err := deltaErr(b, sd, d); err != nil {
			return err
		}
		own = append(own, x)
	}
	c := 1.0
	if s.own {
		c = 1 / float64(max(1, partitionsPresent(deltas)))
	}
	for _, x := range own {
		for j := range v {
			v[j] -= c * state.F32At(x, j)
		}
	}
	for j := range v {
		v[j] += m[j]
	}
	s.snapshot(v)
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
