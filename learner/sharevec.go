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
	own    bool
	snap   []float64 // the vector at the last sync; nil until shared
	shared bool
	// res (mean mode): the part of the own published deltas that their
	// 8-bit codes did not carry, added to the next delta (error feedback;
	// see delta). nil until the first merge (zero).
	res     []float64
	dec     []float64 // sum-mode scratch: one decoded delta
	owns    []float64 // sum-mode scratch: the own deltas, concatenated
	scratch []float64 // mix's M
	dbuf    []float64 // scratch: the delta before quantisation
	qbuf    []byte    // scratch: its codes
	// The last delta's codes (qbuf, scale qscale) are still those of the
	// current state while qok and b.updates == qupd (delta sets them; a
	// merge or a restore clears qok): the merge that follows a delta at a
	// sync point then need not quantise again.
	qok    bool
	qupd   uint64
	qscale float64
}

// delta encodes v − snap under b's header (so that a delta of another spec
// or dimension is refused by the receiver).
//
// With mean (parameter mixing) the delta is d = v − snap + res quantised
// to 8 bits with one scale (state.Q8s: an eighth of the float64 bytes; the
// sync topic's bytes were most of a sync point's cost, issue 17), with
// error feedback: what the codes do not carry, res = d − dequant(codes),
// stays in the own copy at full weight and is added to the next delta, so
// nothing learnt is lost, only delayed by a sync period (Seide, Fu, Droppo,
// Li & Yu, "1-bit stochastic gradient descent…", Interspeech 2014;
// Karimireddy, Rebjock, Stich & Jaggi, "Error feedback fixes SignSGD…",
// ICML 2019). Every copy, the producing one included, merges the decoded
// values (merge decodes its own delta from the bytes too), so the copies
// stay deterministic and the simulator equal to the pipeline. res is
// updated at the merge that follows the delta at the same sync point
// (ShareDelta changes nothing), from the same state. Statistics (the sum
// mode) stay exact float64s: their merge promises the exact fit.
func (s *vecShare) delta(b *base, v []float64) []byte {
	if s.mean {
		e := state.NewEncoder(len(v) + 72 + len(b.spec))
		e.Header(b.name, b.spec, b.dim)
		s.quantise(b, v)
		e.Q8Codes(s.qscale, s.qbuf[:len(v)])
		return e.Bytes()
	}
	e := state.NewEncoder(8*len(v) + 64 + len(b.spec))
	e.Header(b.name, b.spec, b.dim)
	if cap(s.dbuf) < len(v) {
		s.dbuf = make([]float64, len(v))
	}
	d := s.dbuf[:len(v)] // scratch (sum mode does not keep it)
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
//   - sum (statistics): v ← v − Σ_{own} d + Σ_all d (Σ_all from zero in
//     the order given; sumAll, then sumApply), i.e. v plus the others'
//     deltas: the own delta is already in v, so v holds the statistics of
//     every event whose delta was merged plus the own events since. The
//     term Σ_all d is the same for every copy, so a Mixer computes it once
//     per process and sync point (it used to be v + Σ_{non-own} d summed
//     into v directly: the same sums rounded in another order,
//     TestVecShareSumMixMatchesDirectSum);
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
	if s.mean {
		return s.mix(b, v, deltas)
	}
	m, err := s.sumAll(b, len(v), deltas, s.scratch)
	if err != nil {
		return err
	}
	s.scratch = m
	return s.sumApply(b, v, deltas, m)
}

// sumAll is the sum mode's mixing term M = Σ_all d: every delta decoded
// (exact float64s) and summed from zero in the order given, into dst's
// storage if it has room (ShareMix passes nil: its M is shared with the
// other copies of the process). Errors are merge's.
func (s *vecShare) sumAll(b *base, n int, deltas []SharedDelta, dst []float64) ([]float64, error) {
	if cap(dst) < n {
		dst = make([]float64, n)
	}
	m := dst[:n]
	clear(m)
	for _, sd := range deltas {
		x, err := s.decodeSum(b, sd, n)
		if err != nil {
			return nil, err
		}
		for j, v := range x {
			m[j] += v
		}
	}
	return m, nil
}

// decodeSum decodes one sum-mode delta of n floats into reused scratch.
func (s *vecShare) decodeSum(b *base, sd SharedDelta, n int) ([]float64, error) {
	d := state.NewDecoder(sd.Data)
	d.Header(b.name, b.spec, b.dim)
	x := d.F64sN(s.dec, n)
	if err := deltaErr(b, sd, d); err != nil {
		return nil, err
	}
	s.dec = x
	return x, nil
}

// sumApply is the sum mode's merge with M = Σ_all d precomputed (sumAll):
// v ← v − Σ_own d + M, i.e. v plus the others' deltas (the own ones are in
// v already), then the new snapshot. Only the own deltas are decoded, and
// every one is checked before v changes.
func (s *vecShare) sumApply(b *base, v []float64, deltas []SharedDelta, m []float64) error {
	if len(m) != len(v) {
		return fmt.Errorf("learner %s: a mix of %d values for %d weights", b.name, len(m), len(v))
	}
	n := len(v)
	own := s.owns[:0]
	for _, sd := range deltas {
		if !sd.Own {
			continue
		}
		x, err := s.decodeSum(b, sd, n)
		if err != nil {
			return err
		}
		own = append(own, x...)
	}
	s.owns = own
	for o := 0; o < len(own); o += n {
		for j, x := range own[o : o+n] {
			v[j] -= x
		}
	}
	for j, x := range m {
		v[j] += x
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

// pending is the mean mode's delta before quantisation, v − snap + res
// (snap and res zero before the first merge), in s.dbuf, and its largest
// magnitude (state.AbsMax: NaN if an element is), tracked in the same pass.
func (s *vecShare) pending(v []float64) ([]float64, float64) {
	if cap(s.dbuf) < len(v) {
		s.dbuf = make([]float64, len(v))
	}
	d := s.dbuf[:len(v)]
	snap, res := s.snap, s.res
	if !s.shared {
		snap = nil
	}
	var amax float64
	switch {
	case len(snap) == len(v) && len(res) == len(v):
		for i, x := range v {
			y := x - snap[i] + res[i]
			d[i] = y
			amax = state.AbsMax(amax, y)
		}
	default: // before the first merge, or a snapshot without a residual
		for i, x := range v {
			if i < len(snap) {
				x -= snap[i]
			}
			if i < len(res) {
				x += res[i]
			}
			d[i] = x
			amax = state.AbsMax(amax, x)
		}
	}
	return d, amax
}

// quantise sets dbuf, qbuf and qscale to the current delta (pending(v))
// and its codes, unless they are still valid (see qok; dbuf is written
// only here, so it is then still the delta of the same state).
func (s *vecShare) quantise(b *base, v []float64) {
	if s.qok && s.qupd == b.updates && len(s.qbuf) == len(v) {
		return
	}
	if len(s.qbuf) != len(v) {
		s.qbuf = make([]byte, len(v))
	}
	d, amax := s.pending(v)
	s.qscale = state.Quantize8Max(d, amax, s.qbuf)
	s.qok, s.qupd = true, b.updates
}

// q8 is one delta's 8-bit codes and scale.
type q8 struct {
	scale float64
	codes []byte
}

// decodeQ8 checks a mean-mode delta of n values and returns its codes.
func decodeQ8(b *base, sd SharedDelta, n int) (q8, error) {
	d := state.NewDecoder(sd.Data)
	d.Header(b.name, b.spec, b.dim)
	sc, codes := d.Q8sRawN(n)
	return q8{sc, codes}, deltaErr(b, sd, d)
}

// mixSum computes M = (1/k) Σ d over the deltas, in their order, starting
// from zero, reading each 8-bit delta straight from its bytes, into dst's
// storage (every delta is checked first).
func (s *vecShare) mixSum(b *base, n int, deltas []SharedDelta, dst []float64) ([]float64, error) {
	raw := make([]q8, 0, len(deltas))
	for _, sd := range deltas {
		x, err := decodeQ8(b, sd, n)
		if err != nil {
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
		sk := scale * x.scale // (1/k)·code·scale in one product
		for j, q := range x.codes {
			m[j] += float64(float64(int8(q)) * sk)
		}
	}
	return m, nil
}

// partitionsPresent is the number k of distinct partitions among deltas:
// one pass when they come in partition order (as the schedule lists them,
// share.Due), else a quadratic count (at P = 64 the quadratic one was a
// mix=own copy's largest cost at a sync point).
func partitionsPresent(deltas []SharedDelta) int {
	if slices.IsSortedFunc(deltas, func(a, b SharedDelta) int { return a.Partition - b.Partition }) {
		k := 0
		for i, sd := range deltas {
			if i == 0 || sd.Partition != deltas[i-1].Partition {
				k++
			}
		}
		return k
	}
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
	var ownBuf [2]q8
	own := ownBuf[:0] // checked before v changes
	for _, sd := range deltas {
		if !sd.Own {
			continue
		}
		x, err := decodeQ8(b, sd, len(v))
		if err != nil {
			return err
		}
		own = append(own, x)
	}
	// Error feedback: the delta published at this sync point (from this
	// same state, just before) leaves res = d − dequant(codes) unsent.
	s.quantise(b, v)
	d, codes := s.dbuf[:len(v)], s.qbuf[:len(v)]
	if len(s.res) != len(v) {
		s.res = make([]float64, len(v))
	}
	if len(s.snap) != len(v) {
		s.snap = make([]float64, len(v))
	}
	s.qok = false
	c := 1.0
	if s.own {
		c = 1 / float64(max(1, partitionsPresent(deltas)))
	}
	// One pass: the residual, v − c·Σ own + m (the own deltas in the
	// order given, then m), and the new snapshot. The decoded values come
	// from tables of the 256 codes (the same products, so the same bits):
	// cheaper than converting and scaling each code.
	res, snap := s.res[:len(v)], s.snap[:len(v)]
	var deq, ownDeq [256]float64
	for q := range deq {
		deq[q] = state.Dequant8(byte(q), s.qscale)
	}
	if len(own) == 1 { // the usual case: one own delta per sync point
		o := own[0]
		for q := range ownDeq {
			ownDeq[q] = float64(c * state.Dequant8(byte(q), o.scale))
		}
		oc := o.codes[:len(v)]
		for j, x := range v {
			res[j] = d[j] - deq[codes[j]]
			x -= ownDeq[oc[j]]
			x += m[j]
			v[j] = x
			snap[j] = x
		}
		s.shared = true
		return nil
	}
	for j := range v {
		res[j] = d[j] - deq[codes[j]]
		x := v[j]
		for _, o := range own {
			x -= float64(c * state.Dequant8(o.codes[j], o.scale))
		}
		x += m[j]
		v[j] = x
		snap[j] = x
	}
	s.shared = true
	return nil
}

// encode appends the snapshot to a state, if the model has merged, and in
// mean mode the unsent residual (marker 2; marker 1: snapshot only).
func (s *vecShare) encode(e *state.Encoder) { s.encodeMapped(e, nil) }

// encodeMapped is encode with the snapshot written as conv(snap) (conv nil:
// as it is): for a model whose state format lays the vector out otherwise
// than its memory (the linear model keeps G packed, its state the whole
// matrix).
func (s *vecShare) encodeMapped(e *state.Encoder, conv func([]float64) []float64) {
	if !s.shared {
		return
	}
	snap := s.snap
	if conv != nil {
		snap = conv(snap)
	}
	if s.res != nil {
		e.U8(2)
		e.F64s(snap)
		e.F64s(s.res)
		return
	}
	e.U8(1)
	e.F64s(snap)
}

// decode reads what encode wrote (nothing, for a model that never merged)
// into a vecShare to install with set once the whole state has decoded.
func decodeVecShare(d *state.Decoder, n int) vecShare {
	if d.Remaining() == 0 {
		return vecShare{}
	}
	mark := d.U8()
	if mark != 1 && mark != 2 && d.Err() == nil {
		d.Fail("shared snapshot marker")
	}
	snap := d.F64sN(nil, n)
	var res []float64
	if mark == 2 {
		res = d.F64sN(nil, n)
	}
	return vecShare{snap: snap, res: res, shared: d.Err() == nil}
}

// set installs a decoded snapshot, reusing s's memory.
func (s *vecShare) set(o vecShare) {
	s.shared = o.shared
	s.res = nil
	s.qok = false
	if !o.shared {
		return
	}
	if len(s.snap) != len(o.snap) {
		s.snap = make([]float64, len(o.snap))
	}
	copy(s.snap, o.snap)
	if o.res != nil {
		s.res = slices.Clone(o.res)
	}
}
