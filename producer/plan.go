package producer

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/dataset"
	"okstream/learner/rng"
)

// Salts that separate the hash streams drawn from Config.Seed (the
// permutations use rng.Derive(Seed, pass) directly, via dataset.Permutation).
const (
	saltKeys   = 0x6b6579732d72706c // "keys-rpl"
	saltLabels = 0x6c61626c2d72706c // "labl-rpl"
)

// Plan is the exact event sequence a Config makes of a dataset, computed
// without Kafka: Replay sends Plan.Message(0), Plan.Message(1), ... in that
// order. A Plan is not safe for concurrent use (it caches the current
// pass's permutation).
type Plan struct {
	ds    *dataset.Dataset
	cfg   Config // with defaults
	n     int
	total int64 // -1: endless

	keySeed, labelSeed uint64

	permPass int // pass whose permutation perm is; -1 none
	perm     []int

	// scratch for the sparse form
	xi []uint32
	xv []float64
}

// NewPlan checks cfg against ds (Kafka settings aside) and returns the
// plan. ds must have at least one row and one feature; its rows are used,
// not copied, and must not change while the plan is in use.
func NewPlan(ds *dataset.Dataset, cfg Config) (*Plan, error) {
	if ds == nil || ds.Len() == 0 {
		return nil, errors.New("producer: the dataset has no rows")
	}
	if ds.Dim == 0 {
		return nil, fmt.Errorf("producer: dataset %s has no features (an event needs at least one)", ds.Name)
	}
	if len(ds.X) != ds.Len() {
		return nil, fmt.Errorf("producer: dataset %s has %d rows but %d labels", ds.Name, len(ds.X), ds.Len())
	}
	if err := cfg.check(ds.Len()); err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	c := cfg.withDefaults()
	p := &Plan{ds: ds, cfg: c, n: ds.Len(), permPass: -1}
	switch {
	case !c.Loop && c.Limit > 0:
		p.total = min(c.Limit, int64(p.n))
	case !c.Loop:
		p.total = int64(p.n)
	case c.Limit > 0:
		p.total = c.Limit
	default:
		p.total = -1
	}
	p.keySeed = rng.Derive(c.Seed, saltKeys)
	p.labelSeed = rng.Derive(c.Seed, saltLabels)
	return p, nil
}

// Len returns the number of events, or -1 for an endless replay (Loop
// without Limit).
func (p *Plan) Len() int64 { return p.total }

// Rows returns the number of dataset rows (events per pass).
func (p *Plan) Rows() int { return p.n }

// Row returns which pass over the data event i belongs to and which dataset
// row (index in file order) it sends.
func (p *Plan) Row(i int64) (pass, row int) {
	pass, pos := int(i/int64(p.n)), int(i%int64(p.n))
	if !p.cfg.Permute {
		return pass, pos
	}
	if p.permPass != pass {
		p.perm = dataset.Permutation(p.n, p.cfg.Seed, pass)
		p.permPass = pass
	}
	return pass, p.perm[pos]
}

// Key returns the key of event i.
func (p *Plan) Key(i int64) string {
	switch p.cfg.Keys {
	case KeyColumn:
		_, row := p.Row(i)
		return p.cfg.RowKeys[row]
	case KeyRandom:
		j := rng.Derive(p.keySeed, uint64(i)) % uint64(p.cfg.KeySpace)
		return "k-" + strconv.FormatUint(j, 10)
	default:
		_, row := p.Row(i)
		return strconv.Itoa(row)
	}
}

// ID returns the id of event i: IDPrefix + "<pass>-<row>".
func (p *Plan) ID(i int64) string {
	pass, row := p.Row(i)
	b := make([]byte, 0, len(p.cfg.IDPrefix)+24)
	b = append(b, p.cfg.IDPrefix...)
	b = strconv.AppendInt(b, int64(pass), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(row), 10)
	return string(b)
}

// Labelled reports whether event i carries its label.
func (p *Plan) Labelled(i int64) bool {
	u := p.cfg.Unlabelled
	switch {
	case u <= 0:
		return true
	case u >= 1:
		return false
	}
	v := float64(rng.Derive(p.labelSeed, uint64(i))>>11) * (1.0 / (1 << 53))
	return v >= u
}

// ts returns the timestamp of event i (ms) and whether it has one; now is
// the TimeNow stamp.
func (p *Plan) ts(i int64, row int, now int64) (int64, bool) {
	switch p.cfg.Time {
	case TimeNow:
		return now, true
	case TimeColumn:
		return p.cfg.RowTimes[row], true
	case TimeSynthetic:
		return p.cfg.TimeStart + i*p.cfg.TimeStep, true
	}
	return 0, false
}

// Event returns event i. now is its timestamp under TimeNow (ignored
// otherwise). A dense event's X is the dataset row itself (do not modify
// it); a sparse event's XI and XV are new slices.
func (p *Plan) Event(i int64, now time.Time) codec.Event {
	ev := p.event(i, now.UnixMilli())
	if ev.XI != nil {
		ev.XI = append([]uint32(nil), ev.XI...)
		ev.XV = append([]float64(nil), ev.XV...)
	}
	return ev
}

// event builds event i with the sparse form in the plan's scratch slices.
func (p *Plan) event(i int64, nowMS int64) codec.Event {
	_, row := p.Row(i)
	ev := codec.Event{Version: 1, ID: p.ID(i), Key: p.Key(i)} // v1: readable by every okstream version (v2 is only needed for feedback)
	ev.TS, ev.HasTS = p.ts(i, row, nowMS)
	if nd := p.ds.Named; nd != nil {
		// A file of named features (text or missing cells, JSON lines
		// with "f") is sent as it was written: named fields, event version
		// 3, which the runtime encodes as its stream arrives (not the
		// file-order vectors eval's loader made).
		ev.Version, ev.F = codec.NamedEventVersion, nd.Records[row]
		if p.Labelled(i) {
			ev.Y, ev.HasY = p.ds.Y[row], true
		}
		return ev
	}
	x := p.ds.X[row]
	if p.cfg.Sparse {
		p.xi, p.xv = p.xi[:0], p.xv[:0]
		for j, v := range x {
			if math.Float64bits(v) != 0 { // -0.0 is kept, so values survive bit for bit
				p.xi = append(p.xi, uint32(j))
				p.xv = append(p.xv, v)
			}
		}
		if len(p.xi) == 0 { // an event needs a feature: send one explicit zero
			p.xi, p.xv = append(p.xi, 0), append(p.xv, 0)
		}
		ev.XI, ev.XV = p.xi, p.xv
	} else {
		ev.X = x
	}
	if p.Labelled(i) {
		ev.Y, ev.HasY = p.ds.Y[row], true
	}
	return ev
}

// Message returns event i as the Kafka record Replay writes: key, value
// (codec.AppendEvent, or codec.AppendEventJSON with Config.JSON) and record time (zero under TimeNone).
func (p *Plan) Message(i int64, now time.Time) (kafka.Message, error) {
	var b []byte
	b, ks, ve, ts, err := p.appendRecord(b, i, now.UnixMilli())
	if err != nil {
		return kafka.Message{}, err
	}
	return kafka.Message{Key: b[:ks:ks], Value: b[ks:ve:ve], Time: ts}, nil
}

// appendRecord appends event i's key and then its value to b; the key is
// b[start:ks] and the value b[ks:ve] for the start len(b) on entry.
func (p *Plan) appendRecord(b []byte, i int64, nowMS int64) (_ []byte, ks, ve int, ts time.Time, err error) {
	ev := p.event(i, nowMS)
	b = append(b, ev.Key...)
	ks = len(b)
	b, err = appendEvent(b, &ev, p.cfg.JSON)
	if err != nil {
		pass, row := p.Row(i)
		return b, 0, 0, time.Time{}, fmt.Errorf("producer: event %d (pass %d, row %d): %w", i, pass, row, err)
	}
	if ev.HasTS {
		ts = time.UnixMilli(ev.TS)
	}
	return b, ks, len(b), ts, nil
}

// Partition returns the partition, among partitions, that Replay's
// balancer (kafka-go's Murmur2Balancer, the Java client's default
// partitioner) sends key to.
func Partition(key string, partitions int) int {
	ps := make([]int, partitions)
	for i := range ps {
		ps[i] = i
	}
	return kafka.Murmur2Balancer{}.Balance(kafka.Message{Key: []byte(key)}, ps...)
}

// appendEvent appends ev's record value: JSON (codec.AppendEventJSON) or
// msgpack (codec.AppendEvent).
func appendEvent(b []byte, ev *codec.Event, json bool) ([]byte, error) {
	if json {
		return codec.AppendEventJSON(b, ev)
	}
	return codec.AppendEvent(b, ev)
}
