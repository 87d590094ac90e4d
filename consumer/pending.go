package consumer

import (
	"container/list"
	"math"

	"okstream/learner/state"
)

// pending holds the impressions of one partition that may still receive
// delayed feedback: an impression (an unlabelled event with an explicit id)
// is scored at once; when a feedback event refers to its id, every model
// learns from (the impression's features, the feedback's label) and the
// impression-time scores are reported with the label.
//
// The buffer is bounded by a number of entries and by an age measured in
// event time (the ts field of the events, never the wall clock), and
// evicts oldest first, so its contents — and therefore the models — are a
// pure function of the partition's event sequence. It is checkpointed with
// the models, so recovery stays exact with feedback in flight.
type pending struct {
	max    int   // entries (0: the buffer is off)
	maxAge int64 // ms of event time (0: no age limit)
	dim    int
	order  *list.List               // *impression, oldest first
	byID   map[string]*list.Element // id → element
}

type impression struct {
	id      string
	offset  int64
	ts      int64
	hasTS   bool
	x       []float64
	scores  []float64 // per model, at impression time; NaN: unknown (the model was added after the impression)
	updates []uint64  // per model, at impression time
}

func newPending(max int, maxAge int64, dim int) *pending {
	return &pending{max: max, maxAge: maxAge, dim: dim, order: list.New(), byID: map[string]*list.Element{}}
}

func (p *pending) enabled() bool { return p.max > 0 }
func (p *pending) len() int      { return p.order.Len() }

// add stores an impression (replacing an older one with the same id) and
// evicts the oldest entries above the size limit; it returns how many were
// evicted.
func (p *pending) add(im *impression) (evicted int) {
	if old, ok := p.byID[im.id]; ok {
		p.order.Remove(old)
	}
	p.byID[im.id] = p.order.PushBack(im)
	for p.order.Len() > p.max {
		p.remove(p.order.Front())
		evicted++
	}
	return evicted
}

// expire evicts entries older than maxAge before event time now (ms).
func (p *pending) expire(now int64) (evicted int) {
	if p.maxAge <= 0 {
		return 0
	}
	for e := p.order.Front(); e != nil; e = p.order.Front() {
		im := e.Value.(*impression)
		if !im.hasTS || now-im.ts <= p.maxAge {
			break
		}
		p.remove(e)
		evicted++
	}
	return evicted
}

// take removes and returns the impression with the given id.
func (p *pending) take(id string) *impression {
	e, ok := p.byID[id]
	if !ok {
		return nil
	}
	p.remove(e)
	return e.Value.(*impression)
}

func (p *pending) remove(e *list.Element) {
	delete(p.byID, e.Value.(*impression).id)
	p.order.Remove(e)
}

// encode appends the buffer, oldest first.
func (p *pending) encode(e *state.Encoder) {
	e.U32(uint32(p.order.Len()))
	for el := p.order.Front(); el != nil; el = el.Next() {
		im := el.Value.(*impression)
		e.String(im.id)
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
}

// decode reads entries written by encode into a fresh buffer with p's
// limits. saved are the model names of the payload (the order of the
// stored scores), current the configured ones: scores are matched by name,
// and a model absent from the payload gets NaN (its score is computed when
// the feedback arrives). Entries above the current size limit are evicted,
// oldest first.
func (p *pending) decode(d *state.Decoder, saved, current []string) *pending {
	q := newPending(p.max, p.maxAge, p.dim)
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
		im := &impression{id: d.String(), offset: d.I64(), hasTS: d.Bool(), ts: d.I64()}
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
		q.byID[im.id] = q.order.PushBack(im)
	}
	for q.max > 0 && q.order.Len() > q.max {
		q.remove(q.order.Front())
	}
	return q
}
