package consumer

import (
	"container/list"
	"math"
	"slices"

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
//   - by accounted bytes (lim.maxBytes): each entry counts
//     impressionOverhead + len(id) + len(key) + 8·dim (its features) +
//     16·models (its scores and update counts), an estimate of its memory
//     that ids of any length and any dimension cannot escape;
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
// feedback in flight.
type pending struct {
	lim   pendingLimits
	dim   int
	order *list.List               // *impression, oldest first
	byID  map[string]*list.Element // id → element
	bytes int64                    // accounted bytes of the entries

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

// impressionOverhead is what an entry costs besides its strings and
// slices: the impression struct, its list element and map entry, and the
// three slice headers' allocations (an estimate, rounded up).
const impressionOverhead = 256

type impression struct {
	id      string
	key     string // the entity's key ("" if the impression had none)
	offset  int64
	ts      int64
	hasTS   bool
	x       []float64
	scores  []float64 // per model, at impression time; NaN: unknown (the model was added after the impression)
	updates []uint64  // per model, at impression time
}

// cost is the entry's accounted bytes.
func (im *impression) cost() int64 {
	return impressionOverhead + int64(len(im.id)+len(im.key)) + 8*int64(len(im.x)) + 16*int64(len(im.scores))
}

func newPending(lim pendingLimits, dim int) *pending {
	return &pending{lim: lim, dim: dim, order: list.New(), byID: map[string]*list.Element{}}
}

func (p *pending) enabled() bool { return p.lim.max > 0 }
func (p *pending) len() int      { return p.order.Len() }

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
	p.byID[im.id] = p.order.PushBack(im)
	p.bytes += c
	for p.order.Len() > p.lim.max {
		p.remove(p.order.Front())
		r.size++
	}
	for p.lim.maxBytes > 0 && p.bytes > p.lim.maxBytes {
		p.remove(p.order.Front())
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
	for e := p.order.Front(); e != nil; e = p.order.Front() {
		im := e.Value.(*impression)
		if !im.hasTS || now-im.ts <= p.lim.maxAge {
			break
		}
		p.remove(e)
		evicted++
	}
	return evicted
}

// take removes and returns the impression with the given id, if the
// feedback's key matches (see pending). It returns nil, false if no
// impression has that id, and the impression (left pending) and true if it
// belongs to another key.
func (p *pending) take(id, key string) (im *impression, keyMismatch bool) {
	e, ok := p.byID[id]
	if !ok {
		return nil, false
	}
	im = e.Value.(*impression)
	if im.key != "" && im.key != key {
		return im, true
	}
	p.remove(e)
	return im, false
}

func (p *pending) remove(e *list.Element) {
	im := e.Value.(*impression)
	delete(p.byID, im.id)
	p.bytes -= im.cost()
	p.order.Remove(e)
}

// encode appends the buffer, oldest first, then the watermark window
// (payload version 3; versions 2 and 3 differ by the entries' keys and the
// window).
func (p *pending) encode(e *state.Encoder) {
	e.U32(uint32(p.order.Len()))
	for el := p.order.Front(); el != nil; el = el.Next() {
		im := el.Value.(*impression)
		e.String(im.id)
		e.String(im.key)
		e.I64(im.offset)
		e.Bool(im.hasTS)
		e.I64(im.ts)
		e.F64s(im.x)
		e.F64s(im.scores)
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
// window (it refills from the next events).
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
	n := int(d.U32())
	for i := 0; i < n && d.Err() == nil; i++ {
		im := &impression{id: d.String()}
		if version >= 3 {
			im.key = d.String()
		}
		im.offset, im.hasTS, im.ts = d.I64(), d.Bool(), d.I64()
		im.x = d.F64sN(nil, p.dim)
		scores := d.F64sN(nil, len(saved))
		m := int(d.U32())
		if d.Err() == nil && m != len(saved) {
			d.Fail("pending entry has %d update counters, want %d", m, len(saved))
		}
		updates := make([]uint64, len(saved))
		for j := range updates {
			updates[j] = d.U64()
		}
		if d.Err() != nil {
			break
		}
		im.scores = make([]float64, len(current))
		im.updates = make([]uint64, len(current))
		for k, j := range where {
			if j < 0 {
				im.scores[k] = math.NaN()
				continue
			}
			im.scores[k], im.updates[k] = scores[j], updates[j]
		}
		if _, dup := q.byID[im.id]; dup {
			d.Fail("pending entry %d repeats id %q", i, im.id)
			break
		}
		q.byID[im.id] = q.order.PushBack(im)
		q.bytes += im.cost()
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
	for q.lim.max > 0 && q.order.Len() > q.lim.max {
		q.remove(q.order.Front())
	}
	for q.lim.maxBytes > 0 && q.bytes > q.lim.maxBytes {
		q.remove(q.order.Front())
	}
	return q
}
