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
// the copy adds (1/P)Δw_q for the others and rescales its own, which is in
// place, by (1/P − 1). Adding the deltas instead (one SGD over all events
// with delays, Langford, Smola & Zinkevich, NIPS 2009) diverges at NOGD's
// constant η = 0.2: on cod-rna at P = 16, S = 100 the delay is 1,600
// events and the mistake rate 19.6 % (13.5 averaged). Every delta carries
// the basis identity (a hash of the B entries); a Δw of another basis is
// never mixed.

import (
	"errors"
	"fmt"

	"okstream/learner/state"
)

const nogdDeltaName = "nogd-delta"

var errNOGDNotShared = errors.New("learner nogd: sharing needs shared=true in the spec (the basis must be built at a sync point)")

type nogdShare struct {
	buf   shareBuf  // phase 1
	basis uint64    // phase 2 (never 0)
	wSnap []float64 // phase 2: w after the last ShareMerge
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

func (l *NOGD) decodeDelta(b []byte) (nogdDelta, error) {
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
		nd.dw = d.F64s(nil)
		finite(d, "nogd delta", nd.dw)
	default:
		if d.Err() == nil {
			d.Fail("nogd delta: kind %d", nd.kind)
		}
	}
	return nd, d.Done()
}

// ShareMerge applies one sync point's deltas (see Sharer and the comment
// above): phase 1 merges the buffer entries and, once B are merged, builds
// the map and the warm start in every copy; phase 2 adds the other
// partitions' Δw made in this basis (a Δw of another length or basis is
// ignored only if its basis differs; one of this basis and another length
// is corrupt) and projects late Stage-1 entries. A refused merge
// (ErrCorrupt) leaves the model unchanged.
func (l *NOGD) ShareMerge(deltas []SharedDelta) error {
	sh := l.sh
	if sh == nil {
		return errNOGDNotShared
	}
	nds := make([]nogdDelta, len(deltas))
	for i, sd := range deltas {
		nd, err := l.decodeDelta(sd.Data)
		if err == nil && l.primal() && nd.kind == forksDeltaStage2 && nd.basis == sh.basis && len(nd.dw) != l.r {
			err = fmt.Errorf("%w: Δw of %d weights, rank %d", state.ErrCorrupt, len(nd.dw), l.r)
		}
		if err != nil {
			return fmt.Errorf("learner nogd: delta of partition %d, epoch %d: %w", sd.Partition, sd.Epoch, err)
		}
		nd.own = sd.Own
		nds[i] = nd
	}
	if !l.primal() {
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
		l.buildMap()
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
	var mix []nogdDelta
	late := 0 // Stage-1 deltas arriving after the switch (the lag)
	for _, nd := range nds {
		if nd.kind == forksDeltaStage1 {
			late++
		}
	}
	for _, nd := range nds {
		switch {
		case nd.kind == forksDeltaStage1:
			l.project(nd.entries.rows, nd.entries.coef, 1/float64(late))
		case nd.basis == sh.basis:
			mix = append(mix, nd)
		}
	}
	// Averaging: the shared w moves by the mean of the deltas; the own
	// delta, in place with weight 1, is scaled to its share.
	mu := 1 / float64(max(1, len(mix)))
	for _, nd := range mix {
		if nd.own {
			axpy(mu-1, nd.dw, l.w)
		} else {
			axpy(mu, nd.dw, l.w)
		}
	}
	sh.wSnap = append(sh.wSnap[:0], l.w...)
	return nil
}

// project adds the Nyström projection of the kernel OGD terms
// mu Σ_i a_i κ(x_i, ·) to w: w += mu Σ_i a_i z(x_i).
func (l *NOGD) project(rows, coef []float64, mu float64) {
	for i, a := range coef {
		l.Predict(rows[i*l.dim : (i+1)*l.dim]) // leaves z(x_i) in l.z
		axpy(mu*a, l.z[:l.r], l.w)
	}
}
