package consumer

import (
	"math"
	"slices"
	"unsafe"

	"okstream/codec"
	"okstream/learner/state"
)

// pending holds the impressions of one partition that may still receive
// delayed feedback: an impression (an unlabelled event with an explicit id)
// is scored at once; when a feedback event refers to its id, every model
// learns from (the impression's features, the feedback's label) and the
// impression-time scores are reported with the label.
//
// The buffer is bounded three ways, and evicts oldest first (in arrival
// order):
//   - by a number of entries (lim.max);
//   - by accounted bytes (lim.maxBytes, --feedback-buffer-bytes, 64 MiB by
//     default): what an entry costs the process, counted by cost — its
//     heap (the impression struct, its id and key strings, one array for
//     its features and scores, one for its update counts, each rounded up
//     to the allocator's size class as the runtime does, and its share of
//     the id index, a Go map) plus its encoding in a checkpoint, which a
//     checkpoint holds beside the buffer while it is written. So the buffer
//     and one checkpoint of it together hold about the bound, never more
//     (measured: TestPendingMemoryBound); an impression whose cost alone is
//     above it is refused (counted as too_large). The index's table keeps
//     the size of the most entries it held (Go maps do not shrink); the
//     count limit bounds that;
//   - by age in event time (lim.maxAge): an entry is evicted once it is
//     older than maxAge before the partition's event-time watermark (never
//     the wall clock). The watermark is the lower median of the ts of the
//     last watermarkWindow events that had one, so one event with a far
//     future (or far past) ts cannot move it, and cannot purge the buffer:
//     it takes more than half of a window of consecutive events to move it.
//     Age eviction goes through the entries in arrival order and stops at
//     the first that is not too old, so an entry with a future ts delays the
//     age eviction of the entries after it until it is evicted itself (by
//     count, bytes or age); the count and byte limits hold regardless.
//
// An entry is its struct (which also links it in arrival order), its id
// and key strings (as the event decoder allocated them), one array of its
// features and scores, one of its update counts, and a slot of the id
// index, whose key is the entry's own id string: an id is held once.
//
// An id identifies one impression while it is pending: a second impression
// with an id already pending is not remembered (the first one wins; it was
// scored and published as usual) — so an impression cannot replace another
// entity's. Feedback must come from the same entity as its impression: if
// the impression had a key (the event's "key", else the Kafka record key),
// a feedback event with another key does not resolve it (it is
// dead-lettered and the impression stays pending).
//
// All of this is a pure function of the partition's event sequence, so the
// buffer — and therefore the models — are too. It is checkpointed with the
// models (watermark window included), so recovery stays exact with
// feedback in flight; encodedSize is the exact size of its encoding, so
// that a checkpoint is written into one buffer of the right size (no
// copies while it grows).
type pending struct {
	lim        pendingLimits
	dim        int
	head, tail *impression            // oldest and newest entry
	n          int                    // entries
	byID       map[string]*impression // id → entry
	bytes      int64                  // accounted bytes of the entries (cost)
	enc        int64                  // encoded bytes of the entries (encoded)

	// The event-time watermark: the ts of the last events.
	tsWindow
}

// tsWindow is a ring of the timestamps of the last watermarkWindow events
// that had one; its watermark is their lower median. The pending buffer
// checkpoints its window (eviction by age depends on it); the worker keeps
// another one, never checkpointed, for the event-time watermark gauge.
type tsWindow struct {
	window [watermarkWindow]int64
	nts    int // timestamps in window (≤ watermarkWindow)
	next   int // where the next one goes
}

// push puts an event's timestamp (ms) into the window.
func (t *tsWindow) push(ts int64) {
	t.window[t.next] = ts
	t.next = (t.next + 1) % watermarkWindow
	t.nts = min(t.nts+1, watermarkWindow)
}

// watermark is the lower median of the timestamps in the window (call with
// nts > 0).
func (t *tsWindow) watermark() int64 {
	var buf [watermarkWindow]int64
	w := buf[:t.nts]
	copy(w, t.window[:t.nts]) // the window is filled from index 0 on
	slices.Sort(w)
	return w[(len(w)-1)/2]
}

// pendingLimits bounds a pending buffer; see pending.
type pendingLimits struct {
	max      int   // entries (0: the buffer is off)
	maxBytes int64 // accounted bytes (0: no byte limit)
	maxAge   int64 // ms of event time (0: no age limit)
}

// watermarkWindow is the number of recent event timestamps whose lower
// median is the watermark. 15 tolerates 7 outliers among 15 consecutive
// events, and lags the newest timestamp by about 7 events — nothing next to
// any sensible maximum age.
const watermarkWindow = 15

type impression struct {
	id         string
	key        string // the entity's key ("" if the impression had none)
	offset     int64
	ts         int64
	hasTS      bool
	x          []float64 // the features: x and scores share one array (newImpression)
	scores     []float64 // per model, at impression time; NaN: unknown (the model was added after the impression)
	probs      []float64 // per model, the probability published at impression time (classifiers); NaN: unknown (a regression model, a model added after the impression, or a buffer restored from a payload older than version 8)
	updates    []uint64  // per model, at impression time
	prev, next *impression
}

// newImpression is an entry for an impression with features x (copied)
// and room for the scores, probabilities and update counts of models
// models, which the caller fills in.
func newImpression(id, key string, offset, ts int64, hasTS bool, x []float64, models int) *impression {
	v := make([]float64, len(x)+2*models)
	copy(v, x)
	return &impression{id: id, key: key, offset: offset, ts: ts, hasTS: hasTS,
		x: v[:len(x):len(x)], scores: v[len(x) : len(x)+models : len(x)+models], probs: v[len(x)+models:],
		updates: make([]uint64, models)}
}

// record fills in the models' scores, update counts and published
// probabilities (NaN for a model without one) at impression time.
func (im *impression) record(scores []codec.ModelScore) {
	for i, s := range scores {
		im.scores[i], im.updates[i], im.probs[i] = s.Score, s.Updates, math.NaN()
		if s.HasProb {
			im.probs[i] = s.Prob
		}
	}
}

// mapEntryBytes is an entry's share of the id index: a slot of a Go map
// from string to pointer is 24 bytes and a control byte, at a load between
// 7/16 (just after the table doubled) and 7/8.
const mapEntryBytes = 64

// cost is the entry's accounted bytes: its heap (see pending) and its
// encoding. It depends only on fields that never change while the entry
// is pending.
func (im *impression) cost() int64 {
	heap := allocSize(int(unsafe.Sizeof(impression{}))) + allocSize(len(im.id)) + allocSize(len(im.key)) +
		allocSize(8*(cap(im.x)+cap(im.scores)+cap(im.probs))) + allocSize(8*cap(im.updates)) + mapEntryBytes
	return int64(heap) + im.encoded()
}

// encoded is the size of the entry's encoding (see pending.encode).
func (im *impression) encoded() int64 {
	return 4 + int64(len(im.id)) + 4 + int64(len(im.key)) + 8 + 1 + 8 +
		4 + 8*int64(len(im.x)) + 4 + 8*int64(len(im.scores)) + 4 + 8*int64(len(im.probs)) + 4 + 8*int64(len(im.updates))
}

// sizeClasses are the Go allocator's size classes up to 32 KiB
// (runtime/sizeclasses.go; TestAllocSize checks them against the runtime).
var sizeClasses = [...]int{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048,
	2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880,
	12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// classBy8 and classBy128 map a size to its class's index in sizeClasses,
// by steps of 8 bytes up to 1 KiB and 128 bytes above (as the runtime's
// size_to_class tables do), so that allocSize is a look-up.
var classBy8, classBy128 = func() (by8 [1024/8 + 1]uint8, by128 [(32768-1024)/128 + 1]uint8) {
	for i := range by8 {
		c, _ := slices.BinarySearch(sizeClasses[:], i*8)
		by8[i] = uint8(c)
	}
	for i := range by128 {
		c, _ := slices.BinarySearch(sizeClasses[:], 1024+i*128)
		by128[i] = uint8(c)
	}
	return by8, by128
}()

// allocSize is the bytes the allocator takes for an object of n bytes: its
// size class, or whole 8 KiB pages above 32 KiB; 0 for 0.
func allocSize(n int) int {
	switch {
	case n <= 0:
		return 0
	case n <= 1024:
		return sizeClasses[classBy8[(n+7)/8]]
	case n <= 32768:
		return sizeClasses[classBy128[(n-1024+127)/128]]
	}
	return (n + 8191) &^ 8191
}

func newPending(lim pendingLimits, dim int) *pending {
	return &pending{lim: lim, dim: dim, byID: map[string]*impression{}}
}

func (p *pending) enabled() bool { return p.lim.max > 0 }
func (p *pending) len() int      { return p.n }

// encodedSize is the exact size of what encode appends.
func (p *pending) encodedSize() int {
	return 4 + int(p.enc) + 4 + 4 + 8*p.nts
}

// link appends im (not pending, of cost c) as the newest entry.
func (p *pending) link(im *impression, c int64) {
	im.prev, im.next = p.tail, nil
	if p.tail != nil {
		p.tail.next = im
	} else {
		p.head = im
	}
	p.tail = im
	p.n++
	p.byID[im.id] = im
	p.bytes += c
	p.enc += im.encoded()
}

// addResult says what add did.
type addResult struct {
	duplicate bool // the id was already pending: im was not stored
	tooLarge  bool // im alone is above the byte limit: it was not stored
	size      int  // entries evicted by the count limit
	bytes     int  // entries evicted by the byte limit
}

// add stores an impression — unless its id is already pending, or it alone
// exceeds the byte limit — and evicts the oldest entries above the count
// and byte limits.
func (p *pending) add(im *impression) (r addResult) {
	if _, ok := p.byID[im.id]; ok {
		r.duplicate = true
		return r
	}
	c := im.cost()
	if p.lim.maxBytes > 0 && c > p.lim.maxBytes {
		r.tooLarge = true
		return r
	}
	p.link(im, c)
	for p.n > p.lim.max {
		p.remove(p.head)
		r.size++
	}
	for p.lim.maxBytes > 0 && p.bytes > p.lim.maxBytes {
		p.remove(p.head)
		r.bytes++
	}
	return r
}

// observe adds an event's timestamp to the watermark window and evicts the
// entries older than maxAge before the new watermark; it returns how many
// were evicted.
func (p *pending) observe(ts int64) (evicted int) {
	p.push(ts)
	if p.lim.maxAge <= 0 {
		return 0
	}
	return p.expire(p.watermark())
}

// expire evicts entries, oldest first, older than maxAge before event time
// now (ms), stopping at the first that is not.
func (p *pending) expire(now int64) (evicted int) {
	for im := p.head; im != nil; im = p.head {
		if !im.hasTS || now-im.ts <= p.lim.maxAge {
			break
		}
		p.remove(im)
		evicted++
	}
	return evicted
}

// take removes and returns the impression with the given id, if the
// feedback's key matches (see pending). It returns nil, false if no
// impression has that id, and the impression (left pending) and true if it
// belongs to another key.
func (p *pending) take(id, key string) (im *impression, keyMismatch bool) {
	im, ok := p.byID[id]
	if !ok {
		return nil, false
	}
	if im.key != "" && im.key != key {
		return im, true
	}
	p.remove(im)
	return im, false
}

// remove unlinks im, a pending entry.
func (p *pending) remove(im *impression) {
	delete(p.byID, im.id)
	p.bytes -= im.cost()
	p.enc -= im.encoded()
	if im.prev != nil {
		im.prev.next = im.next
	} else {
		p.head = im.next
	}
	if im.next != nil {
		im.next.prev = im.prev
	} else {
		p.tail = im.prev
	}
	im.prev, im.next = nil, nil
	p.n--
}

// encode appends the buffer, oldest first, then the watermark window
// (payload version 8; versions 2 and 3 differ by the entries' keys and the
// window, 8 adds the probabilities): encodedSize bytes. An entry is its id
// and key (each once), its offset, ts, features, scores, probabilities and
// update counts; nothing else.
func (p *pending) encode(e *state.Encoder) {
	e.U32(uint32(p.n))
	for im := p.head; im != nil; im = im.next {
		e.String(im.id)
		e.String(im.key)
		e.I64(im.offset)
		e.Bool(im.hasTS)
		e.I64(im.ts)
		e.F64s(im.x)
		e.F64s(im.scores)
		e.F64s(im.probs)
		e.U32(uint32(len(im.updates)))
		for _, u := range im.updates {
			e.U64(u)
		}
	}
	e.U32(uint32(p.nts))
	e.U32(uint32(p.next))
	for _, ts := range p.window[:p.nts] {
		e.I64(ts)
	}
}

// decode reads entries written by encode (of payload version 2 or 3) into a
// fresh buffer with p's limits. saved are the model names of the payload
// (the order of the stored scores), current the configured ones: scores
// are matched by name, and a model absent from the payload gets NaN (its
// score is computed when the feedback arrives). Entries above the current
// limits are evicted, oldest first. A version 2 buffer has no keys (its
// impressions accept feedback with any key, as before) and no watermark
// window (it refills from the next events). Each entry is allocated as
// add's are (newImpression), so its cost is the same as before the
// checkpoint.
func (p *pending) decode(d *state.Decoder, version uint32, saved, current []string) *pending {
	q := newPending(p.lim, p.dim)
	where := make([]int, len(current))
	for i, name := range current {
		where[i] = -1
		for j, s := range saved {
			if s == name {
				where[i] = j
			}
		}
	}
	var scores, probs []float64
	updates := make([]uint64, len(saved))
	n := int(d.U32())
	for i := 0; i < n && d.Err() == nil; i++ {
		id := d.String()
		var key string
		if version >= 3 {
			key = d.String()
		}
		offset, hasTS, ts := d.I64(), d.Bool(), d.I64()
		v := make([]float64, p.dim+2*len(current))
		d.F64sN(v[:0:p.dim], p.dim)
		scores = d.F64sN(scores[:0], len(saved))
		if version >= 8 {
			probs = d.F64sN(probs[:0], len(saved))
			for _, q := range probs {
				if !math.IsNaN(q) && !(q >= 0 && q <= 1) {
					d.Fail("pending entry %d has probability %v outside [0, 1]", i, q)
				}
			}
		}
		m := int(d.U32())
		if d.Err() == nil && m != len(saved) {
			d.Fail("pending entry has %d update counters, want %d", m, len(saved))
		}
		for j := range updates {
			updates[j] = d.U64()
		}
		if d.Err() != nil {
			break
		}
		nm := len(current)
		im := &impression{id: id, key: key, offset: offset, ts: ts, hasTS: hasTS,
			x: v[:p.dim:p.dim], scores: v[p.dim : p.dim+nm : p.dim+nm], probs: v[p.dim+nm:], updates: make([]uint64, nm)}
		for k, j := range where {
			im.probs[k] = math.NaN()
			if j < 0 {
				im.scores[k] = math.NaN()
				continue
			}
			im.scores[k], im.updates[k] = scores[j], updates[j]
			if version >= 8 {
				im.probs[k] = probs[j]
			}
		}
		if _, dup := q.byID[im.id]; dup {
			d.Fail("pending entry %d repeats id %q", i, im.id)
			break
		}
		q.link(im, im.cost())
	}
	if version >= 3 && d.Err() == nil {
		nts, next := int(d.U32()), int(d.U32())
		if d.Err() == nil && (nts > watermarkWindow || next >= watermarkWindow || (nts < watermarkWindow && next != nts)) {
			d.Fail("pending watermark window of %d timestamps at %d, want at most %d", nts, next, watermarkWindow)
		}
		for i := 0; i < nts && d.Err() == nil; i++ {
			q.window[i] = d.I64()
		}
		q.nts, q.next = nts, next
	}
	for q.lim.max > 0 && q.n > q.lim.max {
		q.remove(q.head)
	}
	for q.lim.maxBytes > 0 && q.bytes > q.lim.maxBytes {
		q.remove(q.head)
	}
	return q
}
