package learner

// shareBuf is the first phase of a two-phase learner shared across
// partitions (learner.Sharer): kernel OGD into a buffer of stored examples
// from which the second phase's basis is built once the buffer is full
// (FORKS' Stage 1 and INIT, NOGD's phase 1 and Nyström map). Shared, the
// buffer must be the same in every copy when the basis is built, so it
// grows only at sync points, from the entries every copy receives:
//
//   - The stored rows [0, nShared) are the merged buffer, in the order of
//     the sync points, then of the deltas in each (partition order), then
//     of the events; rows [nShared, n) are this copy's own entries not yet
//     merged back (still part of its kernel OGD model), rows [mark, n)
//     those stored since its last sync point (its next delta).
//   - A delta carries those entries: the rows x_i, the coefficients
//     a_i = −η ℓ'(f, y_i) and the labels y_i (for the replay into the
//     second phase).
//   - merge appends every delta's entries to the merged buffer (an Own
//     delta's entries are taken out of the copy's unmerged ones, which
//     must begin with them) and keeps the remaining own entries after
//     them; once the merged buffer holds the basis size, the caller builds
//     the basis from its first entries.
//
// The kernel OGD terms of different partitions add (f = Σ a_i κ(x_i, ·)),
// so the merged model is the sum of every partition's Stage-1 learning.

import (
	"errors"
	"fmt"
	"slices"

	"okstream/learner/kernel"
	"okstream/learner/state"
)

// readShared reads the "shared" parameter of a learner that implements
// Sharer. It is resolved (and so part of the canonical spec, which the
// state header carries) only when the spec sets it, so that the canonical
// specs, and the checkpoints, of unshared models are those of before
// sharing existed.
func readShared(p *Params) bool {
	return p.Has("shared") && p.Bool("shared", false)
}

// openDelta starts decoding a delta of the learner named name (its header
// carries the delta name, the canonical spec and the dimension; a delta of
// another learner, spec or dimension is corrupt input here, not a
// state.MismatchError) and reads its kind byte.
func openDelta(b []byte, name, spec string, dim int) (*state.Decoder, uint8, error) {
	d := state.NewDecoder(b)
	d.Header(name, spec, dim)
	if err := d.Err(); err != nil {
		if !errors.Is(err, state.ErrCorrupt) {
			err = fmt.Errorf("%w: %v", state.ErrCorrupt, err)
		}
		return nil, 0, err
	}
	return d, d.U8(), nil
}

type shareBuf struct {
	nShared, mark int
	labels        []float64 // the label of every stored row
}

// bufEntries is a decoded phase-1 delta.
type bufEntries struct {
	own                bool
	rows, coef, labels []float64
}

// encode appends the entries stored since the last sync point.
func (b *shareBuf) encodeDelta(e *state.Encoder, stored *kernel.Matrix, coef []float64) {
	e.F64s(stored.Data()[b.mark*stored.Dim():])
	e.F64s(coef[b.mark:])
	e.F64s(b.labels[b.mark:])
}

// decodeBufDelta reads what encodeDelta wrote (untrusted: lengths are
// checked against the bytes present and each other, values must be
// finite).
func decodeBufDelta(d *state.Decoder, dim int, what string) bufEntries {
	var be bufEntries
	be.rows = d.F64s(nil)
	be.coef = d.F64s(nil)
	be.labels = d.F64s(nil)
	if d.Err() == nil && (len(be.rows) != len(be.coef)*dim || len(be.labels) != len(be.coef)) {
		d.Fail("%s: %d values and %d labels for %d entries of dimension %d", what, len(be.rows), len(be.labels), len(be.coef), dim)
	}
	finite(d, what, be.rows, be.coef, be.labels)
	return be
}

// merge appends the entries of ds (in order) to the merged buffer of
// stored and coef, keeps this copy's remaining own entries after them, and
// returns the new coefficients. With full (the merged buffer holds at
// least size entries) the stored set is cut to the first size merged
// entries and all holds every merged entry, for the caller to build the
// basis from the stored set and to use the others. An Own delta that is
// not this copy's pending learning is refused (ErrCorrupt) before anything
// changes.
func (b *shareBuf) merge(stored *kernel.Matrix, coef []float64, ds []bufEntries, size int) (newCoef []float64, all bufEntries, full bool, err error) {
	dim, data, n := stored.Dim(), stored.Data(), stored.Len()
	own := b.nShared // next own pending row
	var addRows, addCoef, addLabels []float64
	for _, be := range ds {
		if be.own {
			m := len(be.coef)
			if own+m > n || !slices.Equal(be.rows, data[own*dim:(own+m)*dim]) || !slices.Equal(be.coef, coef[own:own+m]) ||
				!slices.Equal(be.labels, b.labels[own:own+m]) {
				return nil, all, false, fmt.Errorf("%w: an Own delta is not this model's pending learning", state.ErrCorrupt)
			}
			own += m
		}
		addRows = append(addRows, be.rows...)
		addCoef = append(addCoef, be.coef...)
		addLabels = append(addLabels, be.labels...)
	}
	cat := func(a []float64, w int, add []float64) []float64 {
		out := make([]float64, 0, len(a)+len(add))
		out = append(out, a[:b.nShared*w]...)
		out = append(out, add...)
		return append(out, a[own*w:]...)
	}
	rows := cat(data, dim, addRows)
	newCoef = cat(coef, 1, addCoef)
	labels := cat(b.labels, 1, addLabels)
	b.nShared += len(addCoef)
	if full = b.nShared >= size; full {
		all = bufEntries{rows: rows[:b.nShared*dim], coef: newCoef[:b.nShared], labels: labels[:b.nShared]}
		rows, newCoef = rows[:size*dim], newCoef[:size]
	}
	if err := stored.SetData(rows); err != nil {
		panic(fmt.Sprintf("learner: merged buffer: %v", err))
	}
	b.labels = labels
	b.mark = stored.Len()
	if full {
		b.nShared, b.mark, b.labels = 0, 0, nil
	}
	return newCoef, all, full, nil
}

// encode/decode the bookkeeping (phase 1 only); n is the number of stored
// rows of the decoded state, size the basis size.
func (b *shareBuf) encode(e *state.Encoder) {
	e.Int(b.nShared)
	e.Int(b.mark)
	e.F64s(b.labels)
}

func decodeShareBuf(d *state.Decoder, n, size int, what string) shareBuf {
	var b shareBuf
	b.nShared = d.IntIn(0, min(n, size-1), what+" merged buffer size")
	b.mark = d.IntIn(b.nShared, n, what+" sync mark")
	b.labels = d.F64sN(nil, n)
	return b
}
