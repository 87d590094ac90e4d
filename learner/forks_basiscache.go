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
// This cache keeps the results of that basis-only work, keyed by what
// determines them, for the other copies of the process: the sketch after
// INIT on the merged buffer (with its warm start), the sketch after an
// update round (as its encoded state, installed by the next copy instead of
// recomputed) and the transfer's fit M = Φ_new^† Φ_old and M⁻¹ between two
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
// before. Safe for concurrent copies (workers of one process); two copies
// that miss at once both compute the same result.

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
	sketch []byte    // the sketch's encoded state after INIT
	w0     []float64 // the warm start INIT computed (not in the state)
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
	upd  boundedMap[forksUpdKey, []byte] // the sketch's encoded state after the round
	xfer boundedMap[forksXferKey, forksXfer]
	init boundedMap[forksInitKey, forksInit]
	hits int // results served (tests)
}

// boundedMap is a map of at most forksCacheEntries entries; put drops the
// oldest first and keeps the first value stored under a key.
type boundedMap[K comparable, V any] struct {
	m    map[K]V
	keys []K // insertion order
}

func (b *boundedMap[K, V]) get(k K) (V, bool) {
	v, ok := b.m[k]
	return v, ok
}

func (b *boundedMap[K, V]) put(k K, v V) {
	if b.m == nil {
		b.m = map[K]V{}
	}
	if _, dup := b.m[k]; dup {
		return
	}
	if len(b.keys) >= forksCacheEntries {
		delete(b.m, b.keys[0])
		b.keys = slices.Delete(b.keys, 0, 1)
	}
	b.m[k] = v
	b.keys = append(b.keys, k)
}

// cacheGet looks k up in one of forksCache's maps, counting a hit.
func cacheGet[K comparable, V any](b *boundedMap[K, V], k K) (V, bool) {
	forksCache.mu.Lock()
	defer forksCache.mu.Unlock()
	v, ok := b.get(k)
	if ok {
		forksCache.hits++
	}
	return v, ok
}

// cachePut stores v under k in one of forksCache's maps.
func cachePut[K comparable, V any](b *boundedMap[K, V], k K, v V) {
	forksCache.mu.Lock()
	defer forksCache.mu.Unlock()
	b.put(k, v)
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
	if v, ok := cacheGet(&forksCache.init, key); ok {
		d := state.NewDecoder(v.sketch)
		st := sk.decode(d)
		if d.Done() == nil {
			sk.install(st)
			sk.w0 = slices.Clone(v.w0)
			return
		}
	}
	sk.initSketch()
	e := state.NewEncoder(0)
	sk.encode(e)
	cachePut(&forksCache.init, key, forksInit{e.Bytes(), slices.Clone(sk.w0)})
}

// sharedUpdate is sk.update(x) for a shared copy, through the cache.
func (l *FORKS) sharedUpdate(x []float64) {
	sk := l.sk
	if forksCacheOff {
		sk.update(x)
		return
	}
	key := forksUpdKey{spec: l.spec, dim: l.dim, basis: l.sh.basis, nUpd: sk.nUpd, evict: sk.evict, n: sk.n(), x: floatKey(x)}
	if enc, ok := cacheGet(&forksCache.upd, key); ok {
		d := state.NewDecoder(enc)
		st := sk.decode(d)
		if d.Done() == nil {
			rounds := sk.rounds // the copy's own
			sk.install(st)
			sk.rounds = rounds
			return
		}
		// Cannot happen (this process encoded it); recompute.
	}
	sk.update(x)
	e := state.NewEncoder(0)
	sk.encode(e)
	cachePut(&forksCache.upd, key, e.Bytes())
}

// transferMaps returns the fit M (k×k) of the old features by the new ones
// on the stored examples and M⁻¹, from po() (n×k: the stored examples' old
// features) and the current map; nil, nil if M is not invertible. A
// function of the two bases only: cached under (from, to) when from ≠ 0
// (po is then not called on a hit).
func (l *FORKS) transferMaps(from uint64, po func() []float64) (m, mi []float64) {
	sk, k := l.sk, l.sh.k
	key := forksXferKey{spec: l.spec, dim: l.dim, from: from, to: l.sh.basis}
	if from != 0 && !forksCacheOff {
		if v, ok := cacheGet(&forksCache.xfer, key); ok {
			return v.m, v.mi
		}
	}
	n := sk.n()
	pn := make([]float64, n*k)
	for i := range n {
		copy(pn[i*k:i*k+k], sk.features(sk.stored.Row(i)))
	}
	zp := make([]float64, k*n)
	if r, err := linalg.Pinv(zp, pn, n, k, -1, nil); err == nil && r >= k {
		m = make([]float64, k*k)
		linalg.Mul(m, zp, po(), k, n, k)
		mi = make([]float64, k*k)
		if r, err := linalg.Pinv(mi, m, k, k, -1, nil); err != nil || r < k {
			m, mi = nil, nil
		}
	}
	if from != 0 && !forksCacheOff {
		cachePut(&forksCache.xfer, key, forksXfer{m, mi}) // read-only from here on
	}
	return m, mi
}
