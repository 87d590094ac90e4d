package learner

// NOGD shared across partitions ("shared=true", learner.Sharer; issue 17).
//
// Phase 1 (kernel OGD into the budget) is shareBuf's (sharebuf.go): the
// buffer grows only at sync points, from every partition's entries in
// delta order, and the Nyström map is built in every copy at the first
// sync point where the merged buffer holds B entries, from its first B —
// the same map everywhere, and it never changes afterwards. The warm start
// is the Nyström projection of the merged kernel OGD model, Σ_i a_i
// κ(x_i, ·) ≈ (Σ_i a_i z(x_i))ᵀ z(·): Λ M a for the first B entries (as the
// plain learner), plus a_i z(x_i) for every further merged entry, divided
// by the number of deltas of that sync point (the merged model is the sum
// of the partitions' models; phase 2 averages, so it starts from their
// mean); the entries of Stage-1 deltas that arrive after the switch (the
// lag) are projected likewise, divided by their number of deltas.
//
// Phase 2 is linear OGD in that fixed basis: a delta is Δw = w − w_sync,
// and merging moves the shared w by the mean of the sync point's deltas
// (iterative parameter mixing with uniform weights, McDonald, Hall & Mann,
// NAACL 2010; parallelized SGD, Zinkevich, Weimer, Smola & Li, NIPS 2010):
// the copy's w becomes w − Σ_own Δw + (1/k) Σ_q Δw_q over the k deltas of
// its basis (its own steps, in place, replaced by their share). NOGD is a
// Mixer: Σ_q Δw_q is summed once per process and sync point (ShareMix)
// and each copy subtracts only its own (ShareApply), so a copy's merge
// costs O(r) instead of O(P·r) decodes and sums; the direct form
// (mergeLate, kept for sync points with late Stage-1 deltas) agrees within
// rounding (TestNOGDShareMixMatchesDirectSum). The Nyström map of the
// switch is made once per process too (sharedBuildMap), and so are the
// projections of merged entries onto it (project). Adding the deltas instead (one SGD over all events
// with delays, Langford, Smola & Zinkevich, NIPS 2009) diverges at NOGD's
// constant η = 0.2: on cod-rna at P = 16, S = 100 the delay is 1,600
// events and the mistake rate 19.6 % (13.5 averaged). Every delta carries
// the basis identity (a hash of the B entries); a Δw of another basis is
// never mixed.

import (
	"errors"
	"fmt"
	"slices"

	"okstream/learner/state"
)

const nogdDeltaName = "nogd-delta"

var errNOGDNotShared = errors.New("learner nogd: sharing needs shared=true in the spec (the basis must be built at a sync point)")

type nogdShare struct {
	buf   shareBuf  // phase 1
	basis uint64    // phase 2 (never 0)
	wSnap []float64 // phase 2: w after the last ShareMerge
	// Merge scratch (not state): the decoded deltas, their Δw storage and
	// ShareMerge's M.
	nds     []nogdDelta
	scratch []float64
	mmix    []float64
}

type nogdDelta struct {
	own     bool
	kind    uint8
	entries bufEntries // phase 1
	basis   uint64     // phase 2
	dw      []float64
}

// ShareDelta encodes this copy's learning since its last ShareMerge: the
// buffer entries (x_i, a_i, y_i) it stored (phase 1), or the basis identity
// and Δw = w − w_sync (phase 2, 8r bytes). It changes nothing.
func (l *NOGD) ShareDelta() ([]byte, error) {
	sh := l.sh
	if sh == nil {
		return nil, errNOGDNotShared
	}
	e := state.NewEncoder(64 + len(l.spec) + 8*(l.sv.Len()-sh.buf.mark)*(l.dim+2) + 8*l.r)
	e.Header(nogdDeltaName, l.spec, l.dim)
	if !l.primal() {
		e.U8(forksDeltaStage1)
		sh.buf.encodeDelta(e, l.sv, l.alpha)
		return e.Bytes(), nil
	}
	dw := make([]float64, l.r)
	for i := range dw {
		dw[i] = l.w[i] - sh.wSnap[i]
	}
	e.U8(forksDeltaStage2)
	e.U64(sh.basis)
	e.F64s(dw)
	return e.Bytes(), nil
}

// decodeDelta decodes one delta; a Stage-2 Δw goes into dst's storage
// when it has room.
func (l *NOGD) decodeDelta(b []byte, dst []float64) (nogdDelta, error) {
	var nd nogdDelta
	d, kind, err := openDelta(b, nogdDeltaName, l.spec, l.dim)
	if err != nil {
		return nd, err
	}
	nd.kind = kind
	switch nd.kind {
	case forksDeltaStage1:
		nd.entries = decodeBufDelta(d, l.dim, "nogd delta entries")
	case forksDeltaStage2:
		nd.basis = d.U64()
		nd.dw = d.F64s(dst[:0])
		finite(d, "nogd delta", nd.dw)
	default:
		if d.Err() == nil {
			d.Fail("nogd delta: kind %d", nd.kind)
		}
	}
	return nd, d.Done()
}

// decodeDeltas decodes the deltas (ownOnly: only the Own ones) into the
// reused scratch, and checks a Δw of this copy's basis for its length
// (one of another length is corrupt; one of another basis is ignored by
// the merge). Nothing of them is kept after the merge.
func (l *NOGD) decodeDeltas(deltas []SharedDelta, ownOnly bool) ([]nogdDelta, error) {
	sh := l.sh
	per := max(l.r, l.k)
	if need := per * len(deltas); cap(sh.scratch) < need {
		sh.scratch = make([]float64, need)
	}
	nds := sh.nds[:0]
	for i, sd := range deltas {
		if ownOnly && !sd.Own {
			continue
		}
		nd, err := l.decodeDelta(sd.Data, sh.scratch[i*per:(i+1)*per:(i+1)*per])
		if err == nil && l.primal() && nd.kind == forksDeltaStage2 && nd.basis == sh.basis && len(nd.dw) != l.r {
			err = fmt.Errorf("%w: Δw of %d weights, rank %d", state.ErrCorrupt, len(nd.dw), l.r)
		}
		if err != nil {
			return nds, fmt.Errorf("learner nogd: delta of partition %d, epoch %d: %w", sd.Partition, sd.Epoch, err)
		}
		nd.own = sd.Own
		nds = append(nds, nd)
	}
	return nds, nil
}

// ShareMerge applies one sync point's deltas (see Sharer and the comment
// above): phase 1 merges the buffer entries and, once B are merged, builds
// the map and the warm start in every copy; phase 2 mixes the partitions'
// Δw made in this basis (a Δw of another length or basis is ignored only
// if its basis differs; one of this basis and another length is corrupt)
// and projects late Stage-1 entries. A refused merge (ErrCorrupt) leaves
// the model unchanged.
//
// In phase 2 with only Stage-2 deltas, the merge is ShareApply of
// ShareMix's M (the Mixer contract): w ← w − Σ_own Δw + (1/k) Σ_q Δw_q,
// the sum over the k deltas of this basis taken from zero in delta order.
func (l *NOGD) ShareMerge(deltas []SharedDelta) error {
	sh := l.sh
	if sh == nil {
		return errNOGDNotShared
	}
	nds, err := l.decodeDeltas(deltas, false)
	defer func() { clear(nds); sh.nds = nds[:0] }() // drop the references to Stage-1 entries
	if err != nil {
		return err
	}
	if !l.primal() {
		return l.mergeStage1(nds)
	}
	if m := nogdMix(nds, sh.mmix); m != nil {
		sh.mmix = m
		return l.applyMix(m, nds)
	}
	return l.mergeLate(nds)
}

// ShareMix (Mixer) decodes every delta once for all the copies of a
// process that merge the same ones: M (nogdMix) holds, for each basis the
// deltas were made in, their count and Σ Δw. Deltas holding Stage-1
// entries are not mixed: M is then [nogdNoMix] and ShareApply merges with
// ShareMerge. M is a function of the deltas alone (any copy of the spec,
// in either phase, computes the same). Errors are ShareMerge's.
func (l *NOGD) ShareMix(deltas []SharedDelta) ([]float64, error) {
	sh := l.sh
	if sh == nil {
		return nil, errNOGDNotShared
	}
	nds, err := l.decodeDeltas(deltas, false)
	defer func() { clear(nds); sh.nds = nds[:0] }()
	if err != nil {
		return nil, err
	}
	if m := nogdMix(nds, nil); m != nil {
		return m, nil
	}
	return []float64{nogdNoMix}, nil
}

// ShareApply (Mixer) is ShareMerge with ShareMix's result precomputed:
// only the copy's own deltas are decoded.
func (l *NOGD) ShareApply(deltas []SharedDelta, mix []float64) error {
	sh := l.sh
	if sh == nil {
		return errNOGDNotShared
	}
	if !l.primal() || len(mix) == 0 || mix[0] == nogdNoMix {
		return l.ShareMerge(deltas)
	}
	nds, err := l.decodeDeltas(deltas, true)
	defer func() { clear(nds); sh.nds = nds[:0] }()
	if err != nil {
		return err
	}
	return l.applyMix(mix, nds)
}

// nogdNoMix is the M of deltas that are not all Stage-2 ones.
const nogdNoMix = -1

// nogdMix returns the M of decoded deltas (nil if one is not a Stage-2
// delta, or two of one basis differ in length): [G, then G groups of
// (basis high 32 bits, basis low 32 bits, count, n, Σ Δw (n))] for the G
// distinct bases in order of first appearance, each sum from zero in delta
// order. M is appended to dst[:0] (ShareMerge reuses its scratch;
// ShareMix passes nil, since its M is shared with the other copies).
func nogdMix(nds []nogdDelta, dst []float64) []float64 {
	var bases []uint64
	var ns []int
	size := 1
	for _, nd := range nds {
		if nd.kind != forksDeltaStage2 {
			return nil
		}
		if i := slices.Index(bases, nd.basis); i >= 0 {
			if ns[i] != len(nd.dw) {
				return nil
			}
			continue
		}
		bases, ns = append(bases, nd.basis), append(ns, len(nd.dw))
		size += 4 + len(nd.dw)
	}
	m := append(slices.Grow(dst[:0], size), float64(len(bases)))
	for i, b := range bases {
		off := len(m)
		m = append(m, float64(b>>32), float64(b&(1<<32-1)), 0, float64(ns[i]))
		m = m[:off+4+ns[i]] // within the capacity grown above
		sum := m[off+4:]
		clear(sum)
		for _, nd := range nds {
			if nd.basis == b {
				m[off+2]++
				axpy(1, nd.dw, sum)
			}
		}
	}
	return m
}

// applyMix is the phase-2 merge from M (nogdMix) and the copy's decoded
// deltas (only the Own ones are read): w ← w − Σ_own Δw + (1/k) Σ Δw for
// the k deltas of this copy's basis (none: w unchanged). An own Δw of
// another basis was made before a switch every copy has since made; it is
// ignored, as the others of that basis are.
func (l *NOGD) applyMix(m []float64, nds []nogdDelta) error {
	sh := l.sh
	g, off := int(m[0]), 1
	for range g {
		if off+4 > len(m) {
			break
		}
		b := uint64(m[off])<<32 | uint64(m[off+1])
		count, n := m[off+2], int(m[off+3])
		if off+4+n > len(m) {
			break
		}
		if b != sh.basis {
			off += 4 + n
			continue
		}
		if n != l.r {
			return fmt.Errorf("learner nogd: %w: a mix of Δw of %d weights, rank %d", state.ErrCorrupt, n, l.r)
		}
		for _, nd := range nds {
			if nd.own && nd.kind == forksDeltaStage2 && nd.basis == sh.basis {
				axpy(-1, nd.dw, l.w)
			}
		}
		axpy(1/max(1, count), m[off+4:off+4+n], l.w)
		break
	}
	sh.wSnap = append(sh.wSnap[:0], l.w...)
	return nil
}

// mergeStage1 is the phase-1 merge: the buffer entries of the Stage-1
// deltas, and the switch once B are merged.
func (l *NOGD) mergeStage1(nds []nogdDelta) error {
	sh := l.sh
	var ds []bufEntries
	for _, nd := range nds {
		if nd.kind == forksDeltaStage1 {
			nd.entries.own = nd.own
			ds = append(ds, nd.entries)
		}
	}
	alpha, all, full, err := sh.buf.merge(l.sv, l.alpha, ds, l.budget)
	if err != nil {
		return fmt.Errorf("learner nogd: %w", err)
	}
	l.alpha = append(l.alpha[:0], alpha...)
	if !full {
		return nil
	}
	// The merged buffer holds B entries or more: the first B are the
	// support set (buildMap's warm start projects their terms), the
	// others' terms are projected onto the map.
	l.sharedBuildMap()
	sh.basis = hashFloats(14695981039346656037, l.sv.Data())
	l.project(all.rows[l.budget*l.dim:], all.coef[l.budget:], 1)
	// The merged model is the sum of the partitions' kernel OGD models;
	// phase 2 averages, so the warm start is their mean.
	for i := range l.w {
		l.w[i] /= float64(max(1, len(ds)))
	}
	sh.wSnap = append(sh.wSnap[:0], l.w...)
	return nil
}

// mergeLate is the phase-2 merge of a sync point with late Stage-1 deltas
// (made before the switch, arriving after it with the lag): their entries
// are projected onto the map, divided by their number of deltas, and the
// Δw of this basis are averaged, the own one in place with weight 1 scaled
// to its share.
func (l *NOGD) mergeLate(nds []nogdDelta) error {
	sh := l.sh
	late, k := 0, 0
	var rows, coef []float64
	for _, nd := range nds {
		switch {
		case nd.kind == forksDeltaStage1:
			late++
			rows, coef = append(rows, nd.entries.rows...), append(coef, nd.entries.coef...)
		case nd.basis == sh.basis:
			k++
		}
	}
	mu := 1 / float64(max(1, k))
	for _, nd := range nds {
		switch {
		case nd.kind == forksDeltaStage1, nd.basis != sh.basis:
		case nd.own:
			axpy(mu-1, nd.dw, l.w)
		default:
			axpy(mu, nd.dw, l.w)
		}
	}
	if late > 0 {
		l.project(rows, coef, 1/float64(late))
	}
	sh.wSnap = append(sh.wSnap[:0], l.w...)
	return nil
}

// project adds the Nyström projection of the kernel OGD terms
// mu Σ_i a_i κ(x_i, ·) to w: w += mu s with s = Σ_i a_i z(x_i), summed
// from zero in entry order. s is a function of the map and the entries
// alone, the same in every copy that projects them (the merged buffer's
// surplus at the switch, a sync point's late Stage-1 entries), so a shared
// copy takes it from the cache (forks_basiscache.go) when another copy of
// the process has made it: at P = 64 the projections were a quarter of the
// shared copies' CPU, each made by all 64 copies.
func (l *NOGD) project(rows, coef []float64, mu float64) {
	if len(coef) == 0 {
		return
	}
	compute := func() []float64 {
		s := make([]float64, l.r)
		for i, a := range coef {
			l.Predict(rows[i*l.dim : (i+1)*l.dim]) // leaves z(x_i) in l.z
			axpy(a, l.z[:l.r], s)
		}
		return s
	}
	var s []float64
	if forksCacheOff || l.sh == nil {
		s = compute()
	} else {
		key := nogdProjKey{spec: l.spec, dim: l.dim, basis: l.sh.basis, rows: floatKey(rows), coef: floatKey(coef)}
		s, _ = cacheDo(&forksCache.nogdProj, key, compute) // read-only
	}
	axpy(mu, s, l.w)
}

// nogdProjKey is what determines a projection (NOGD.project): the spec, the
// dimension, the map (through the basis identity, a hash of the B rows it
// was built from) and the entries, bit for bit.
type nogdProjKey struct {
	spec       string
	dim        int
	basis      uint64
	rows, coef string
}

// nogdMapKey is what determines a shared copy's Nyström map: the spec (the
// kernel and k), the dimension and the merged buffer's B rows, bit for bit.
type nogdMapKey struct {
	spec string
	dim  int
	sv   string // floatKey of the B stored rows
}

// nogdMap is a cached map (read-only): rank r, M (r×B) and the kept
// eigenvalues.
type nogdMap struct {
	r       int
	m, vals []float64
}

// sharedBuildMap is buildMap for a shared copy, with the map made once per
// process (the basis cache, forks_basiscache.go): every copy that switches
// from the same merged buffer gets the same map bit for bit, and only the
// warm start, from the copy's own coefficients, is its own. The copy takes
// a copy of M, so no two models share a buffer.
func (l *NOGD) sharedBuildMap() {
	if forksCacheOff {
		l.buildMap()
		return
	}
	key := nogdMapKey{spec: l.spec, dim: l.dim, sv: floatKey(l.sv.Data())}
	v, _ := cacheDo(&forksCache.nogd, key, func() nogdMap {
		r, m, vals := l.nystrom()
		return nogdMap{r, m, vals}
	})
	l.installMap(v.r, slices.Clone(v.m), v.vals)
}
