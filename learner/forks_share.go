package learner

// FORKS shared across partitions (issue 17; the contract is Sharer in
// share.go). Enabled by "shared=true" in the spec; the design and its
// deviations from the paper are in forks.go's opening comment ("Sharing
// across partitions") and docs/algorithms/forks-and-baselines.md.
//
// In short: every copy keeps the same basis because everything that
// defines it (the INIT buffer, the SJLT rows and landmarks drawn from the
// common seed, the update-round examples) changes only inside ShareMerge,
// from the bytes every copy receives, in the order given. Between sync
// points a copy learns locally in that basis; its delta is the Stage-1
// buffer entries it added (kernel OGD terms, which add) or, in Stage 2, the
// sufficient statistics of its ONS surrogate losses, ΔA = Σ s g gᵀ and
// Δb = Σ (s g gᵀ w − g), which add. Merging adds the other partitions'
// statistics to the own model (which already holds its own learning) and
// solves for v with A⁻¹ recomputed from A. The other partitions' sums are
// the sums over every delta of the sync point less the own one(s)
// (ShareMix/ShareApply: one decode and one sum per process instead of per
// copy; another rounding of the same sums than summing the others
// directly, which only a merge with late Stage-1 entries still does).

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"okstream/learner/linalg"
	"okstream/learner/state"
)

// forksDeltaName is the header name of a FORKS delta (not a state: a delta
// can never be restored as one, nor a state merged as a delta).
const forksDeltaName = "forks-delta"

// Delta kinds.
const (
	forksDeltaStage1 = 1 // buffer entries (x, a) added by Stage 1
	forksDeltaStage2 = 2 // ONS change in a basis
)

// maxForksRounds bounds a delta's round count (and the merged total) so
// that sums cannot overflow.
const maxForksRounds = 1 << 48

var errForksNotShared = errors.New("learner forks: sharing needs shared=true in the spec (the basis must change only at sync points from the first event on)")

// forksShare is the sync bookkeeping of a shared FORKS copy; all of it is
// part of the marshalled state.
type forksShare struct {
	k, dim      int
	buf         shareBuf // Stage 1 (sharebuf.go)
	transferred bool     // transient: aSnap already holds the transferred A
	// Stage 2.
	basis   uint64    // identity of the basis (never 0 in Stage 2)
	rounds  int       // own Stage-2 rounds since the last ShareMerge
	global  int       // Stage-2 rounds of all partitions merged since INIT
	aSnap   []float64 // k×k: A after the last ShareMerge or reset
	dA      []float64 // k(k+1)/2, packed upper triangle: Σ s g gᵀ since the last ShareMerge
	db      []float64 // k: Σ (s g gᵀ w − g) since the last ShareMerge
	cand    []float64 // dim: the first Stage-2 example since the last ShareMerge
	hasCand bool
	// Transient (not state): ShareMerge's decoding and merging scratch.
	scratch            []float64
	fds                []forksDelta
	mdb, mdA, ma, minv []float64
	mcands             [][]float64
	mmix               []float64 // ShareMerge's M
	inv                spdInvWork
}

func newForksShare(k, dim int) *forksShare {
	return &forksShare{k: k, dim: dim, db: make([]float64, k), aSnap: make([]float64, k*k),
		dA: make([]float64, k*(k+1)/2), cand: make([]float64, dim)}
}

// bytes is the memory of the bookkeeping (0 for an unshared model).
func (sh *forksShare) bytes() int {
	if sh == nil {
		return 0
	}
	return 8 * (len(sh.aSnap) + len(sh.dA) + len(sh.db) + len(sh.cand) + cap(sh.buf.labels))
}

// observe records a Stage-2 round on x (before its step).
func (sh *forksShare) observe(x []float64) {
	sh.rounds++
	if !sh.hasCand {
		copy(sh.cand, x)
		sh.hasCand = true
	}
}

// addStep adds one ONS step's surrogate statistics — s g gᵀ to ΔA (packed)
// and s g (gᵀw) − g to Δb, where w is the point the gradient g was taken
// at — in O(k²/2) without allocating.
func (sh *forksShare) addStep(g, w []float64, s float64) {
	k, p := len(g), 0
	gw := s * dot(g, w)
	for i := range k {
		sh.db[i] += gw*g[i] - g[i]
		si := s * g[i]
		for j := i; j < k; j++ {
			sh.dA[p] += si * g[j]
			p++
		}
	}
}

// addPacked adds the packed upper triangle u to the full symmetric k×k a.
func addPacked(a, u []float64, k int) {
	p := 0
	for i := range k {
		for j := i; j < k; j++ {
			a[i*k+j] += u[p]
			if j != i {
				a[j*k+i] += u[p]
			}
			p++
		}
	}
}

// resetONS starts a sync period in a new basis: A_sync = A (αI after a
// reset), no pending increments.
func (sh *forksShare) resetONS(o *ons) {
	if !sh.transferred {
		clear(sh.aSnap)
		for i := range sh.k {
			sh.aSnap[i*sh.k+i] = o.alpha
		}
	}
	sh.transferred = false
	clear(sh.dA)
	clear(sh.db)
	sh.rounds, sh.hasCand = 0, false
}

// hashFloats folds the bit patterns of xs into h (FNV-1a over 64-bit
// words); the basis identity is such a hash of the INIT buffer and of every
// update-round example since, so copies whose bases differ (a runtime that
// grouped deltas differently) never mix their ONS states.
func hashFloats(h uint64, xs []float64) uint64 {
	for _, v := range xs {
		h ^= math.Float64bits(v)
		h *= 1099511628211
	}
	return h | 1
}

// forksDelta is a decoded delta.
type forksDelta struct {
	own     bool
	kind    uint8
	entries bufEntries // Stage 1
	basis   uint64     // Stage 2
	rounds  int
	b, dA   []float64
	cand    []float64 // nil: none
}

// ShareDelta encodes this copy's learning since its last ShareMerge: in
// Stage 1 the buffer entries (x_i, a_i) it stored, in Stage 2 the basis
// identity, its number of Stage-2 rounds, Δb (below), the curvature
// increment ΔA = Σ s g gᵀ (packed upper triangle) and the first Stage-2
// example of the period (a candidate for an update round). It changes
// nothing. ΔA and Δb = Σ (s g gᵀ w_t − g_t) are the sufficient statistics
// of the period's ONS surrogate losses g_tᵀw + (s/2)(g_tᵀ(w − w_t))²
// (Hazan, Agarwal & Kale 2007: ONS without projection is follow-the-leader
// on them, A v = αv₀ + Σ (s g gᵀ w − g)), which add across partitions.
// Size: Stage 1 8(d+1) bytes per stored entry; Stage 2 about
// 8(k + k(k+1)/2 + d) bytes (k = 10, d = 8: 0.6 KB).
func (l *FORKS) ShareDelta() ([]byte, error) {
	sh, sk := l.sh, l.sk
	if sh == nil {
		return nil, errForksNotShared
	}
	size := 8 * (sh.k*(sh.k+5)/2 + l.dim + 8)
	if !sk.ready {
		size = 8 * (sk.n() - sh.buf.mark + 1) * (l.dim + 2)
	}
	e := state.NewEncoder(64 + len(l.spec) + size)
	e.Header(forksDeltaName, l.spec, l.dim)
	if !sk.ready {
		e.U8(forksDeltaStage1)
		sh.buf.encodeDelta(e, sk.stored, sk.coef)
		return e.Bytes(), nil
	}
	e.U8(forksDeltaStage2)
	e.U64(sh.basis)
	e.Int(sh.rounds)
	e.F64s(sh.db)
	e.F64s(sh.dA)
	sh.encodeCand(e)
	return e.Bytes(), nil
}

// decodeDelta decodes and validates one delta (untrusted input: every size
// is checked against the configuration or the bytes present, every value
// must be finite).
func (l *FORKS) decodeDelta(b []byte, buf []float64) (forksDelta, error) {
	var fd forksDelta
	k, kk := l.sh.k, l.sh.k*(l.sh.k+1)/2
	d, kind, err := openDelta(b, forksDeltaName, l.spec, l.dim)
	if err != nil {
		return fd, err
	}
	fd.kind = kind
	switch fd.kind {
	case forksDeltaStage1:
		fd.entries = decodeBufDelta(d, l.dim, "forks delta entries")
	case forksDeltaStage2:
		fd.basis = d.U64()
		fd.rounds = d.IntIn(0, maxForksRounds, "forks delta rounds")
		fd.b = d.F64sN(buf[0:0:k], k)
		fd.dA = d.F64sN(buf[k:k:k+kk], kk)
		if d.Bool() {
			fd.cand = d.F64sN(buf[k+kk:k+kk:k+kk+l.dim], l.dim)
		}
		finite(d, "forks delta", fd.b, fd.dA, fd.cand)
		for i, p := 0, 0; d.Err() == nil && i < k; p, i = p+k-i, i+1 {
			if fd.dA[p] < 0 {
				d.Fail("forks delta: curvature increment has a negative diagonal entry")
			}
		}
	default:
		if d.Err() == nil {
			d.Fail("forks delta: kind %d", fd.kind)
		}
	}
	return fd, d.Done()
}

// finite records an error in d if a value of xs is NaN or infinite.
func finite(d *state.Decoder, what string, xs ...[]float64) {
	for _, x := range xs {
		for _, v := range x {
			if d.Err() == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
				d.Fail("%s: non-finite value", what)
				return
			}
		}
	}
}

// ShareMerge applies one sync point's deltas (see Sharer) and then makes
// the basis changes that are due, identically in every copy:
//
//   - Stage 1: the entries of every delta are appended to the merged
//     buffer in the order given (an Own delta's entries are taken out of
//     this copy's own unmerged entries, which must begin with them); the
//     copy's remaining own entries follow. When the merged buffer holds B̃
//     entries, INIT runs on its first B̃ (same seed, same buffer ⇒ same
//     SJLT rows, landmarks, factors and map in every copy); the other
//     entries are dropped and Stage 2 starts from w = 0 (or warm=lsq).
//   - Stage 2: the other partitions' surrogate statistics (ΔA_q, Δb_q)
//     made in this copy's basis are added to its own quadratic model:
//     A' = A + Σ ΔA_q, v' = A'⁻¹(A v + Σ Δb_q), with A'⁻¹ from the
//     Cholesky factor of A' (O(k³)); deltas of an earlier basis, made
//     before a reset that every copy has since done, are ignored. Every
//     delta's round count is added to the global Stage-2 count; while that
//     count has passed the next multiple of ρ, an update round folds one
//     candidate example into the sketches (the deltas' candidates in the
//     order given, starting at the update number modulo their count; at
//     most one per delta per sync point), refreshes TISVD and Z, and the
//     ONS is reset (A = αI, v = 0) in every copy.
//
// A delta that does not decode, is of another spec or dimension, holds a
// non-finite value, or an Own delta that is not this copy's own pending
// learning is refused with an error wrapping state.ErrCorrupt, and the
// model is unchanged; so is a merged A that is not positive definite.
func (l *FORKS) ShareMerge(deltas []SharedDelta) error {
	sh, sk := l.sh, l.sk
	if sh == nil {
		return errForksNotShared
	}
	fds, err := l.decodeDeltas(deltas, false)
	defer func() { clear(fds); sh.fds = fds[:0] }() // drop the references to Stage-1 entries
	if err != nil {
		return err
	}
	if !sk.ready {
		return l.mergeStage1(fds)
	}
	if m := l.mixStage2(fds, sh.mmix); m != nil {
		sh.mmix = m
		return l.applyStage2(m, fds)
	}
	return l.mergeStage2(fds)
}

// decodeDeltas decodes the deltas (ownOnly: only the Own ones) into the
// reused scratch: a sync point decodes P deltas in every copy; nothing of
// them is kept after the merge (the update rounds copy their example).
func (l *FORKS) decodeDeltas(deltas []SharedDelta, ownOnly bool) ([]forksDelta, error) {
	sh := l.sh
	per := sh.k + sh.k*(sh.k+1)/2 + l.dim
	if need := per * len(deltas); cap(sh.scratch) < need {
		sh.scratch = make([]float64, need)
	}
	fds := sh.fds[:0]
	for i, sd := range deltas {
		if ownOnly && !sd.Own {
			continue
		}
		fd, err := l.decodeDelta(sd.Data, sh.scratch[i*per:(i+1)*per])
		if err != nil {
			return fds, fmt.Errorf("learner forks: delta of partition %d, epoch %d: %w", sd.Partition, sd.Epoch, err)
		}
		fd.own = sd.Own
		fds = append(fds, fd)
	}
	return fds, nil
}

// ShareMix (Mixer) decodes every delta once for all the copies of a
// process that merge the same ones (the runtime shares the result, see
// Mixer). M holds what the Stage-2 merge reads of the deltas: the sum of
// their round counts, their update candidates in delta order, and, for
// each basis they were made in, their count and the sums Σ Δb and Σ ΔA
// (summed from zero in delta order); layout in mixStage2. Deltas holding
// Stage-1 entries (before INIT, or late after it) are not mixed: M is then
// [forksNoMix] and ShareApply merges with ShareMerge. Errors are
// ShareMerge's.
func (l *FORKS) ShareMix(deltas []SharedDelta) ([]float64, error) {
	sh := l.sh
	if sh == nil {
		return nil, errForksNotShared
	}
	fds, err := l.decodeDeltas(deltas, false)
	defer func() { clear(fds); sh.fds = fds[:0] }()
	if err != nil {
		return nil, err
	}
	if m := l.mixStage2(fds, nil); m != nil {
		return m, nil
	}
	return []float64{forksNoMix}, nil
}

// ShareApply (Mixer) is ShareMerge with ShareMix's result precomputed:
// only the copy's own deltas are decoded; the others' statistics are M's
// sums less the own ones.
func (l *FORKS) ShareApply(deltas []SharedDelta, mix []float64) error {
	sh := l.sh
	if sh == nil {
		return errForksNotShared
	}
	if !l.sk.ready || len(mix) == 0 || mix[0] == forksNoMix {
		return l.ShareMerge(deltas)
	}
	fds, err := l.decodeDeltas(deltas, true)
	defer func() { clear(fds); sh.fds = fds[:0] }()
	if err != nil {
		return err
	}
	return l.applyStage2(mix, fds)
}

// forksNoMix is the M of deltas that are not all Stage-2 ones.
const forksNoMix = -1

// mixStage2 returns the M of decoded deltas (nil if one is not a Stage-2
// delta): [G, rounds, C, C candidates of d values, then G groups of
// (basis high 32 bits, basis low 32 bits, count, Σ Δb (k), Σ ΔA (k(k+1)/2))]
// for the G distinct bases in order of first appearance. Every value is an
// integer below 2⁵³ or a sum, so M is exact data. M is appended to
// dst[:0] (ShareMerge reuses its scratch; ShareMix passes nil, since its M
// is shared with the other copies).
func (l *FORKS) mixStage2(fds []forksDelta, dst []float64) []float64 {
	k, kk := l.sh.k, len(l.sh.dA)
	rounds, c := 0, 0
	var bases []uint64
	for _, fd := range fds {
		if fd.kind != forksDeltaStage2 {
			return nil
		}
		rounds = min(rounds+fd.rounds, maxForksRounds)
		if fd.cand != nil {
			c++
		}
		if !slices.Contains(bases, fd.basis) {
			bases = append(bases, fd.basis)
		}
	}
	m := append(slices.Grow(dst[:0], 3+c*l.dim+len(bases)*(3+k+kk)), float64(len(bases)), float64(rounds), float64(c))
	for _, fd := range fds {
		if fd.cand != nil {
			m = append(m, fd.cand...)
		}
	}
	for _, b := range bases {
		off := len(m)
		m = append(m, float64(b>>32), float64(b&(1<<32-1)), 0)
		m = m[:off+3+k+kk] // within the capacity grown above
		clear(m[off+3:])
		db, dA := m[off+3:off+3+k], m[off+3+k:]
		for _, fd := range fds {
			if fd.basis == b {
				m[off+2]++
				axpy(1, fd.b, db)
				axpy(1, fd.dA, dA)
			}
		}
	}
	return m
}

// applyStage2 is the Stage-2 merge from M (mixStage2) and the copy's own
// decoded deltas (own may hold the others too; only Own ones are read):
// the other partitions' sums in this copy's basis are M's group sums less
// the own deltas of that basis.
func (l *FORKS) applyStage2(m []float64, own []forksDelta) error {
	sh, k, kk, dim := l.sh, l.sh.k, len(l.sh.dA), l.dim
	g, rounds, c := int(m[0]), int(m[1]), int(m[2])
	cands := sh.mcands[:0]
	for i := range c {
		cands = append(cands, m[3+i*dim:3+(i+1)*dim])
	}
	sh.mcands = cands
	defer clear(cands) // M is the runtime's
	var db, dA []float64
	for i, off := 0, 3+c*dim; i < g; i, off = i+1, off+3+k+kk {
		if uint64(m[off])<<32|uint64(m[off+1]) != sh.basis {
			continue
		}
		others := int(m[off+2])
		for _, fd := range own {
			if fd.own && fd.basis == sh.basis {
				others--
			}
		}
		if others <= 0 {
			break
		}
		sh.mdb = append(sh.mdb[:0], m[off+3:off+3+k]...)
		sh.mdA = append(sh.mdA[:0], m[off+3+k:off+3+k+kk]...)
		db, dA = sh.mdb, sh.mdA
		for _, fd := range own {
			if fd.own && fd.basis == sh.basis {
				axpy(-1, fd.b, db)
				axpy(-1, fd.dA, dA)
			}
		}
		break
	}
	return l.finishStage2(db, dA, rounds, cands, nil, nil)
}

func (l *FORKS) mergeStage1(fds []forksDelta) error {
	sh, sk := l.sh, l.sk
	var ds []bufEntries
	for _, fd := range fds {
		if fd.kind == forksDeltaStage1 { // (Stage-2 deltas cannot occur before INIT)
			fd.entries.own = fd.own
			ds = append(ds, fd.entries)
		}
	}
	coef, all, full, err := sh.buf.merge(sk.stored, sk.coef, ds, sk.buffer)
	if err != nil {
		return fmt.Errorf("learner forks: %w", err)
	}
	sk.coef = append(sk.coef[:0], coef...)
	if !full {
		return nil
	}
	// INIT on the first B̃ merged entries (once per process:
	// forks_basiscache.go).
	l.sharedInit()
	l.ons.reset(sk.k)
	if sk.w0 != nil {
		copy(l.ons.v, sk.w0)
		sk.w0 = nil
	}
	sh.basis = hashFloats(14695981039346656037, sk.stored.Data())
	if l.loc != nil {
		l.transferLocal()
	}
	sh.resetONS(l.ons)
	sh.global = 0
	l.replay(all.rows, all.labels)
	return nil
}

// replay takes ONS steps, in order, on merged Stage-1 entries (every
// copy replays the same entries, so the result is shared knowledge and is
// folded into A_sync rather than into this copy's next delta). Stage 1
// stores exactly the examples with non-zero loss, which the ONS has not
// seen; replaying them after INIT starts Stage 2 from what Stage 1 learnt
// across all partitions instead of from w = 0.
func (l *FORKS) replay(rows, labels []float64) {
	if len(labels) == 0 {
		return
	}
	sh, sk, dim := l.sh, l.sk, l.dim
	db := slices.Clone(sh.db)
	dA := slices.Clone(sh.dA)
	clear(sh.db)
	clear(sh.dA)
	for i, y := range labels {
		x := rows[i*dim : (i+1)*dim]
		f := l.ons.predict(sk.features(x))
		l.step(x, y, f, false)
	}
	addPacked(sh.aSnap, sh.dA, sh.k)
	copy(sh.db, db)
	copy(sh.dA, dA)
}

// mergeStage2 is the Stage-2 merge of deltas among which some hold Stage-1
// entries (those that arrive after INIT, the lag): the other partitions'
// statistics are summed directly, the entries replayed.
func (l *FORKS) mergeStage2(fds []forksDelta) error {
	sh, k := l.sh, l.sh.k
	rounds := 0
	var cands [][]float64
	var db, dA, replay, replayY []float64
	for _, fd := range fds {
		if fd.kind != forksDeltaStage2 {
			// Stage-1 entries stored before INIT (own included: the ONS has
			// not seen them): replayed below.
			replay = append(replay, fd.entries.rows...)
			replayY = append(replayY, fd.entries.labels...)
			continue
		}
		rounds = min(rounds+fd.rounds, maxForksRounds)
		if fd.cand != nil {
			cands = append(cands, fd.cand)
		}
		if fd.own || fd.basis != sh.basis {
			continue
		}
		if db == nil {
			sh.mdb = slices.Grow(sh.mdb[:0], k)[:k]
			sh.mdA = slices.Grow(sh.mdA[:0], len(sh.dA))[:len(sh.dA)]
			db, dA = sh.mdb, sh.mdA
			clear(db)
			clear(dA)
		}
		axpy(1, fd.b, db)
		axpy(1, fd.dA, dA)
	}
	return l.finishStage2(db, dA, rounds, cands, replay, replayY)
}

// finishStage2 merges the other partitions' Stage-2 statistics db, dA (nil:
// none in this basis), adds the sync point's rounds to the global count,
// replays late Stage-1 entries and makes the update rounds that are due
// from the candidates (see ShareMerge).
func (l *FORKS) finishStage2(db, dA []float64, rounds int, cands [][]float64, replay, replayY []float64) error {
	sh, sk, k := l.sh, l.sk, l.sh.k
	// The own model is the quadratic with minimum v and Hessian A = A_sync +
	// own ΔA; adding the other partitions' surrogates moves the minimum to
	// (A + Σ ΔA_q) v' = A v + Σ Δb_q (one Newton step; exact without the
	// slab projection, c = 0).
	sh.ma = append(sh.ma[:0], sh.aSnap...) // A = A_sync + ΔA (sh.current, in scratch)
	a := sh.ma
	addPacked(a, sh.dA, k)
	if db != nil {
		v := l.ons.v[:k]
		for i := range k {
			db[i] += dot(a[i*k:i*k+k], v)
		}
		addPacked(a, dA, k)
		sh.minv = slices.Grow(sh.minv[:0], k*k)[:k*k]
		ainv, err := sh.inv.inverse(sh.minv, a, k)
		if err != nil {
			return fmt.Errorf("learner forks: %w: merged ONS matrix A: %v", state.ErrCorrupt, err)
		}
		linalg.MatVec(v, ainv, k, k, db)
		copy(l.ons.ainv[:k*k], ainv)
	}
	copy(sh.aSnap, a)
	clear(sh.dA)
	clear(sh.db)
	sh.rounds, sh.hasCand = 0, false
	sh.global = min(sh.global+rounds, maxForksRounds)
	l.replay(replay, replayY)
	// Update rounds that are due, one candidate each.
	if len(cands) == 0 {
		return nil
	}
	start, done := sk.nUpd%len(cands), 0
	var zOld []float64
	from := sh.basis
	for done < len(cands) && sh.global >= (sk.nUpd+1)*sk.rho {
		if zOld == nil {
			zOld = slices.Clone(sk.z)
		}
		x := cands[(start+done)%len(cands)]
		l.sharedUpdate(x) // sk.update(x), once per process (forks_basiscache.go)
		sh.basis = hashFloats(sh.basis, x)
		done++
	}
	if done > 0 {
		if sk.replace || !l.transfer(zOld, from) {
			l.ons.reset(sk.k)
		}
		sh.resetONS(l.ons)
		sk.rounds = 0
	}
	return nil
}

// transfer carries the ONS state (v, A) over a change of the map from
// φ = Z_oldᵀκ_L to φ' = Zᵀκ_L (fixed landmarks): with M the least-squares
// fit φ(x) ≈ Mᵀφ'(x) over the stored examples, the model φᵀv is
// φ'ᵀ(Mv) and the curvature Σ s g gᵀ = Mᵀ(Σ s g' g'ᵀ)M; hence v' = M v and
// A' = αI + M⁻ᵀ(A − αI)M⁻¹, A'⁻¹ through its Cholesky factor. It reports
// false (the caller resets the ONS) when M is not invertible or A' not
// positive definite. Shared copies only (every copy does the same); the
// paper resets the ONS at every update round. O(n(s_m d + s_m k + k²) + k³)
// for n stored examples.
func (l *FORKS) transfer(zOld []float64, from uint64) bool {
	k := l.sh.k
	m, mi := l.transferMaps(from, k, k, func() []float64 { return l.oldFeatures(zOld, k) })
	return l.transferApply(m, mi, l.sh.aSnap, l.ons.v[:k])
}

// oldFeatures returns the stored examples' features under the map
// φ = Z_oldᵀκ_L (n×k, row-major) with the current landmarks.
func (l *FORKS) oldFeatures(zOld []float64, k int) []float64 {
	sk := l.sk
	n := sk.n()
	po := make([]float64, n*k)
	for i := range n {
		kl := sk.kern.Row(sk.kl, sk.lmx, sk.stored.Row(i))
		linalg.MatTVec(po[i*k:i*k+k], zOld, sk.sm, k, kl)
	}
	return po
}

// transferFrom sets the ONS state (v, A⁻¹, A_sync) in the current map from
// a state (vOld, aOld) whose features on the stored examples are the rows
// of po (n×k): M = Φ_new^† Φ_old fits the old features by the new ones in
// function space (not Z's coefficients: with a wide kernel Z is
// ill-conditioned and Z^† Z_old is meaningless).
func (l *FORKS) transferFrom(po, aOld, vOld []float64) bool {
	m, mi := l.transferMaps(0, l.sh.k, l.sh.k, func() []float64 { return po })
	return l.transferApply(m, mi, aOld, vOld)
}

// transferApply is transferFrom's part that is the copy's own: with M and
// M⁻¹ (transferMaps; nil: not invertible, false), v' = M v and A' = αI +
// M⁻ᵀ(A − αI)M⁻¹ (carryONS).
func (l *FORKS) transferApply(m, mi, aOld, vOld []float64) bool {
	sh, k := l.sh, l.sh.k
	v, at, ainv, ok := carryONS(m, mi, aOld, vOld, l.ons.alpha, k)
	if !ok {
		return false
	}
	copy(l.ons.v[:k], v)
	copy(l.ons.ainv[:k*k], ainv)
	copy(sh.aSnap, at)
	sh.transferred = true
	return true
}

// carryONS maps an ONS state (v, A) of k features over a change of feature
// map whose least-squares fit is φ_old ≈ Mᵀφ_new (M and M⁻¹ k×k,
// row-major; nil M: not invertible): v' = M v and A' = αI +
// M⁻ᵀ(A − αI)M⁻¹, with A'⁻¹. ok is false when M is nil or A' is not
// positive definite (the caller resets the ONS).
func carryONS(m, mi, aOld, vOld []float64, alpha float64, k int) (v, at, ainv []float64, ok bool) {
	if m == nil {
		return nil, nil, nil, false
	}
	// A − αI (the folded A_sync: the accumulators are empty after a merge).
	a := slices.Clone(aOld)
	for i := range k {
		a[i*k+i] -= alpha
	}
	t := make([]float64, k*k)
	linalg.Mul(t, a, mi, k, k, k) // (A − αI) M⁻¹
	at = make([]float64, k*k)
	for i := range k { // M⁻ᵀ t
		for j := range k {
			var s float64
			for r := range k {
				s += mi[r*k+i] * t[r*k+j]
			}
			at[i*k+j] = s
		}
	}
	linalg.Symmetrize(at, k)
	for i := range k {
		at[i*k+i] += alpha
	}
	ainv, err := konsSPDInverse(at, k)
	if err != nil {
		return nil, nil, nil, false
	}
	v = make([]float64, k)
	linalg.MatVec(v, m, k, k, vOld)
	return v, at, ainv, true
}

// encodeCand appends the period's candidate update example, if any.
func (sh *forksShare) encodeCand(e *state.Encoder) {
	e.Bool(sh.hasCand)
	if sh.hasCand {
		e.F64s(sh.cand)
	}
}

// encode appends the sync bookkeeping to a state.
func (sh *forksShare) encode(e *state.Encoder, ready bool) {
	if !ready {
		sh.buf.encode(e)
		return
	}
	e.U64(sh.basis)
	e.Int(sh.rounds)
	e.Int(sh.global)
	e.F64s(sh.aSnap)
	e.F64s(sh.dA)
	e.F64s(sh.db)
	sh.encodeCand(e)
}

// decode reads what encode wrote into a fresh forksShare, validating it
// against the decoded stage: n stored examples, buffer B̃.
func (sh *forksShare) decode(d *state.Decoder, ready bool, n, buffer int) *forksShare {
	st := newForksShare(sh.k, sh.dim)
	if !ready {
		st.buf = decodeShareBuf(d, n, buffer, "forks")
		return st
	}
	st.basis = d.U64()
	st.rounds = d.IntIn(0, maxForksRounds, "forks rounds since sync")
	st.global = d.IntIn(0, maxForksRounds, "forks merged rounds")
	st.aSnap = d.F64sN(st.aSnap, sh.k*sh.k)
	st.dA = d.F64sN(st.dA, sh.k*(sh.k+1)/2)
	st.db = d.F64sN(st.db, sh.k)
	if d.Bool() {
		st.cand = d.F64sN(st.cand, sh.dim)
		st.hasCand = true
	}
	if d.Err() == nil && st.basis == 0 {
		d.Fail("forks: basis identity 0 in Stage 2")
	}
	return st
}

// localSeed derives the generator seed of a copy's local basis from the
// shared one (the local basis never meets another copy's).
const localSeed = 0x9e3779b97f4a7c15

// localInit builds this copy's local basis (a shared copy in Stage 1 whose
// own view of the buffer — merged and own entries — holds B̃ entries
// before a sync point has merged B̃): INIT on the first B̃ entries with its
// own generator, an ONS from w = 0. Until the shared INIT the copy
// predicts and learns with it, as an independent FORKS would (without
// update rounds), while the shadow kernel OGD keeps feeding the shared
// buffer exactly as before.
func (l *FORKS) localInit() {
	sk := l.sk
	loc := newSketchMap(sk.sketchOpts, sk.kern, l.dim, l.seed^localSeed)
	n := sk.buffer
	if err := loc.stored.SetData(sk.stored.Data()[:n*l.dim]); err != nil {
		panic(fmt.Sprintf("learner forks: local buffer: %v", err))
	}
	loc.coef = append(loc.coef[:0], sk.coef[:n]...)
	loc.initSketch()
	l.loc = loc
	l.locONS = newONS(loc.k, l.alpha, l.c)
	l.locONS.reset(loc.k)
	if loc.w0 != nil {
		copy(l.locONS.v, loc.w0)
		loc.w0 = nil
	}
}

// learnLocal predicts x with the local basis and takes the local ONS step
// (not part of any delta).
func (l *FORKS) learnLocal(x []float64, y float64) float64 {
	phi := l.loc.features(x)
	f := l.locONS.predict(phi)
	l.loc.rounds++
	s := l.onsSigma + l.onsEta
	if l.sqrtSched {
		s = l.onsSigma + math.Sqrt(float64(l.loc.k)/(l.lip*l.lip*float64(l.loc.rounds)))
	}
	_ = l.locONS.update(phi, l.loss.Deriv(f, y), l.lambda, s, l.newInv)
	return f
}

// transferLocal carries the local ONS state into the shared basis just
// built (fitted on the shared INIT's buffer) and drops the local basis.
func (l *FORKS) transferLocal() {
	k, n := l.sh.k, l.sk.n()
	po := make([]float64, n*k)
	for i := range n {
		copy(po[i*k:i*k+k], l.loc.features(l.sk.stored.Row(i)))
	}
	if a, err := konsSPDInverse(l.locONS.ainv[:k*k], k); err == nil {
		l.transferFrom(po, a, l.locONS.v[:k])
	}
	l.loc, l.locONS = nil, nil
}
