package learner

// The basis work of shared FORKS copies, done once per process.
//
// A shared FORKS model (shared=true, forks_share.go) makes, at its sync
// points, the update rounds of one model over the whole stream: each an
// update of the sketch by a candidate example (TISVD update, refresh of Z)
// and then the transfer of the ONS state to the new basis. Every copy makes
// the same ones, from the same basis (that is what keeps their bases equal),
// so P copies in one process repeated P times the work of one: with P = 16
// on cod-rna it was two thirds of the copies' merge time (docs/sharing.md).
//
// Shared NOGD copies switch to phase 2 at the same sync point from the same
// merged buffer, so the Nyström map (a Gram matrix and an eigendecomposition,
// O(B³)) is made once per process too (nogd_share.go, sharedBuildMap), and so
// are the projections of merged kernel OGD terms onto it (NOGD.project).
//
// This cache keeps the results of that basis-only work, keyed by what
// determines them, for the other copies of the process: the sketch after
// INIT on the merged buffer (with its warm start), the sketch after an
// update round (as a decoded state, copied into the next copies' buffers
// instead of recomputed) and the transfer's fit M = Φ_new^† Φ_old and M⁻¹ between two
// bases (the copy then maps its own v and A with them). The key holds the
// spec and dimension, the basis identity before the round (the hash chain of
// the INIT buffer and of every update example, forksShare.basis), the update
// count and the candidate example itself: two copies with the same key hold
// the same sketch (every part of it that the round reads is a function of
// that history), so the cached result is the one the copy would compute, bit
// for bit (TestForksBasisCacheExact compares the states of every shared
// configuration with the cache and without). Only the basis is shared: each
// copy's own rounds counter, ONS weights and curvature stay its own.
//
// Bounded: at most forksCacheEntries results of each kind (tens of KB each at
// B = 100), the oldest dropped first; a copy that finds nothing computes, as
// before. Safe for concurrent copies (workers of one process), and single
// flight: a copy that looks up a result another copy is computing waits for
// it (cacheDo). The copies reach a sync point together, so without the wait
// they all missed: at P = 16 on cod-rna each transfer was computed by all 16
// copies before the first had stored it.

import (
	"math"
	"slices"
	"sync"

	"okstream/learner/linalg"
	"okstream/learner/state"
)

// forksCacheEntries bounds each of the cache's maps. The copies of one
// process reach a sync point within a few epochs of each other, so only the
// last few rounds are ever looked up.
const forksCacheEntries = 32

// forksCacheOff disables the cache (tests compare the two).
var forksCacheOff bool

type forksUpdKey struct {
	spec        string
	dim         int
	basis       uint64
	nUpd, evict int
	n           int    // stored examples
	x           string // the candidate's float64 bits
}

type forksInitKey struct {
	spec       string
	dim        int
	hi, lo     uint64 // the sketch's random source
	rows, coef string // the merged buffer's float64 bits
}

type forksInit struct {
	sketch *sketchState // the sketch's state after INIT (read-only)
	w0     []float64    // the warm start INIT computed (not in the state)
}

type forksXferKey struct {
	spec     string
	dim      int
	from, to uint64
}

type forksXfer struct {
	m, mi []float64 // k×k; nil: the transfer fails (the caller resets the ONS)
}

var forksCache struct {
	mu   sync.Mutex
	upd  boundedMap[forksUpdKey, *sketchState] // the sketch's state after the round (read-only)
	xfer boundedMap[forksXferKey, forksXfer]
	init boundedMap[forksInitKey, forksInit]
	nogd boundedMap[nogdMapKey, nogdMap] // shared NOGD's switch (nogd_share.go)
	// shared NOGD's projections onto the map (NOGD.project; read-only)
	nogdProj boundedMap[nogdProjKey, []float64]
	hits     int // results served (tests)
}

// flight is one cached result, or the promise of one: done is closed when
// v is set (ok) or its computation failed (!ok, a panic in the copy that
// computed it).
type flight[V any] struct {
	done chan struct{}
	v    V
	ok   bool
}

// boundedMap is a map of at most forksCacheEntries entries, the oldest
// dropped first.
type boundedMap[K comparable, V any] struct {
	m    map[K]*flight[V]
	keys []K // insertion order
}

// cacheDo returns the result stored under k in one of forksCache's maps,
// waiting for it if another copy is computing it, or else computes it with
// compute and stores it. Single flight: the copies of a process reach a
// sync point at nearly the same time (they run in lockstep), so without
// the wait every copy missed and computed (measured: 16 of 16 copies made
// every transfer at P = 16). hit reports that the value came from another
// copy; a computation that panics is retried by the waiting copies.
func cacheDo[K comparable, V any](b *boundedMap[K, V], k K, compute func() V) (v V, hit bool) {
	forksCache.mu.Lock()
	if f, ok := b.m[k]; ok {
		forksCache.mu.Unlock()
		<-f.done
		if f.ok {
			forksCache.mu.Lock()
			forksCache.hits++
			forksCache.mu.Unlock()
			return f.v, true
		}
		return compute(), false
	}
	f := &flight[V]{done: make(chan struct{})}
	if b.m == nil {
		b.m = map[K]*flight[V]{}
	}
	if len(b.keys) >= forksCacheEntries {
		delete(b.m, b.keys[0])
		b.keys = slices.Delete(b.keys, 0, 1)
	}
	b.m[k] = f
	b.keys = append(b.keys, k)
	forksCache.mu.Unlock()
	defer func() {
		if !f.ok { // compute panicked: forget the entry, release the waiters
			forksCache.mu.Lock()
			if b.m[k] == f {
				delete(b.m, k)
				if i := slices.Index(b.keys, k); i >= 0 {
					b.keys = slices.Delete(b.keys, i, i+1)
				}
			}
			forksCache.mu.Unlock()
		}
		close(f.done)
	}()
	f.v = compute()
	f.ok = true
	return f.v, false
}

// floatKey is the exact bits of xs as a map key.
func floatKey(xs []float64) string {
	b := make([]byte, 0, 8*len(xs))
	for _, v := range xs {
		u := math.Float64bits(v)
		b = append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24), byte(u>>32), byte(u>>40), byte(u>>48), byte(u>>56))
	}
	return string(b)
}

// sharedInit is sk.initSketch() for a shared copy (INIT on the merged
// buffer, the same in every copy), through the cache.
func (l *FORKS) sharedInit() {
	sk := l.sk
	if forksCacheOff {
		sk.initSketch()
		return
	}
	hi, lo := sk.rnd.State()
	key := forksInitKey{spec: l.spec, dim: l.dim, hi: hi, lo: lo, rows: floatKey(sk.stored.Data()), coef: floatKey(sk.coef)}
	v, hit := cacheDo(&forksCache.init, key, func() forksInit {
		sk.initSketch()
		return forksInit{sk.snapshot(), slices.Clone(sk.w0)}
	})
	if !hit {
		return
	}
	if v.sketch == nil || !v.sketch.ready { // cannot happen (see snapshot)
		sk.initSketch()
		return
	}
	sk.installCopy(v.sketch)
	sk.w0 = slices.Clone(v.w0)
}

// snapshot is the map's state as the cache keeps it: encoded and decoded
// again, so that it shares no buffer with the map (nil if that fails, which
// cannot happen for a state this process made: the copies then compute).
func (s *sketchMap) snapshot() *sketchState {
	e := state.NewEncoder(0)
	s.encode(e)
	d := state.NewDecoder(e.Bytes())
	st := s.decode(d)
	if d.Done() != nil {
		return nil
	}
	return &st
}

// sharedUpdate is sk.update(x) for a shared copy, through the cache.
func (l *FORKS) sharedUpdate(x []float64) {
	sk := l.sk
	if forksCacheOff {
		sk.update(x)
		return
	}
	key := forksUpdKey{spec: l.spec, dim: l.dim, basis: l.sh.basis, nUpd: sk.nUpd, evict: sk.evict, n: sk.n(), x: floatKey(x)}
	st, hit := cacheDo(&forksCache.upd, key, func() *sketchState {
		sk.update(x)
		return sk.snapshot()
	})
	if !hit {
		return
	}
	if st == nil || !st.ready { // cannot happen (see snapshot)
		sk.update(x)
		return
	}
	rounds := sk.rounds // the copy's own
	sk.installCopy(st)
	sk.rounds = rounds
}

// transferMaps returns the fit M (k×k) of the old features by the new ones
// on the stored examples and M⁻¹, from po() (n×k: the stored examples' old
// features) and the current map; nil, nil if M is not invertible. A
// function of the two bases only: cached under (from, to) when from ≠ 0
// (po is then not called on a hit).
func (l *FORKS) transferMaps(from uint64, k, minRank int, po func() []float64) (m, mi []float64) {
	sk := l.sk
	compute := func() forksXfer {
		n := sk.n()
		pn := make([]float64, n*k)
		for i := range n {
			copy(pn[i*k:i*k+k], sk.features(sk.stored.Row(i)))
		}
		zp := make([]float64, k*n)
		if r, err := linalg.Pinv(zp, pn, n, k, -1, nil); err == nil && r >= minRank {
			m := make([]float64, k*k)
			linalg.Mul(m, zp, po(), k, n, k)
			mi := make([]float64, k*k)
			if r, err := linalg.Pinv(mi, m, k, k, -1, nil); err == nil && r >= minRank {
				return forksXfer{m, mi}
			}
		}
		return forksXfer{}
	}
	if from == 0 || forksCacheOff {
		x := compute()
		return x.m, x.mi
	}
	x, _ := cacheDo(&forksCache.xfer, forksXferKey{spec: l.spec, dim: l.dim, from: from, to: l.sh.basis}, compute)
	return x.m, x.mi // read-only
}
