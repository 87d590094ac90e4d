package consumer

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"okstream/codec"
	"okstream/learner"
	"okstream/learner/state"
)

// Stats are a model's progressive-validation statistics on one partition:
// every labelled event is scored before the model learns from it.
type Stats struct {
	Labeled  uint64  // labelled events seen
	Mistakes uint64  // classification: sign(score) ≠ y (a score of 0 is a mistake)
	SqErr    float64 // sum of (score − y)², for regression (and as a calibration signal for classifiers)
}

// MistakeRate is Mistakes/Labeled (NaN before the first label).
func (s Stats) MistakeRate() float64 { return float64(s.Mistakes) / float64(s.Labeled) }

// MSE is SqErr/Labeled.
func (s Stats) MSE() float64 { return s.SqErr / float64(s.Labeled) }

type model struct {
	name, spec string
	l          learner.Learner
	classify   bool
	updates    uint64
	stats      Stats
}

// modelSet is the models of one partition: every configured model, built
// for the pipeline's dimension, with its statistics. It is the unit that is
// checkpointed.
type modelSet struct {
	dim    int
	models []*model
	pend   *pending // impressions awaiting delayed feedback
}

func newModelSet(cfg []Model, dim int, pendingMax int, pendingMaxAge int64) (*modelSet, error) {
	ms := &modelSet{dim: dim, pend: newPending(pendingMax, pendingMaxAge, dim)}
	for _, c := range cfg {
		m, err := newModel(c, dim)
		if err != nil {
			return nil, err
		}
		ms.models = append(ms.models, m)
	}
	return ms, nil
}

func newModel(c Model, dim int) (*model, error) {
	l, err := learner.New(c.Spec, dim)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", c.Name, err)
	}
	return &model{name: c.Name, spec: l.Info().Spec, l: l, classify: l.Info().Task == learner.Classification}, nil
}

// score predicts x with every model — and, if the event is labelled, lets
// each model learn from y after predicting — appending one ModelScore per
// model to out. If obs is not nil, model i's step is timed into obs[i].
func (ms *modelSet) score(x []float64, y float64, hasY bool, out []codec.ModelScore, obs []prometheus.Observer) []codec.ModelScore {
	for i, m := range ms.models {
		var start time.Time
		if obs != nil {
			start = time.Now()
		}
		var f float64
		before := m.updates
		if hasY {
			f = m.l.Learn(x, y)
			m.updates++
			m.stats.Labeled++
			if m.classify && learner.Mistake(f, y) {
				m.stats.Mistakes++
			}
			m.stats.SqErr += (f - y) * (f - y)
		} else {
			f = m.l.Predict(x)
		}
		if obs != nil {
			obs[i].Observe(time.Since(start).Seconds())
		}
		s := codec.ModelScore{Name: m.name, Score: f, Updates: before}
		if m.classify {
			s.Classify = true
			s.Decision = codec.Decision(f)
		}
		out = append(out, s)
	}
	return out
}

// Payload versions: 1 = models; 2 = models + the pending-feedback buffer.
// learnDelayed lets every model learn from a resolved impression: the
// models' impression-time scores (recomputed now for a model added after
// the impression) are the progressive-validation scores, counted in the
// statistics and reported in the outcome record.
func (ms *modelSet) learnDelayed(im *impression, y float64, out []codec.ModelScore, obs []prometheus.Observer) []codec.ModelScore {
	for i, m := range ms.models {
		var start time.Time
		if obs != nil {
			start = time.Now()
		}
		f, before := im.scores[i], im.updates[i]
		if math.IsNaN(f) {
			f, before = m.l.Predict(im.x), m.updates
		}
		m.l.Learn(im.x, y)
		m.updates++
		m.stats.Labeled++
		if m.classify && learner.Mistake(f, y) {
			m.stats.Mistakes++
		}
		m.stats.SqErr += (f - y) * (f - y)
		if obs != nil {
			obs[i].Observe(time.Since(start).Seconds())
		}
		s := codec.ModelScore{Name: m.name, Score: f, Updates: before}
		if m.classify {
			s.Classify = true
			s.Decision = codec.Decision(f)
		}
		out = append(out, s)
	}
	return out
}

const (
	payloadMagic   = 0x534d4b4f // "OKMS"
	payloadVersion = 2
)

// marshal encodes every model's state and statistics (deterministically).
func (ms *modelSet) marshal() ([]byte, error) {
	e := state.NewEncoder(1024)
	e.U32(payloadMagic)
	e.U32(payloadVersion)
	e.Int(ms.dim)
	e.U32(uint32(len(ms.models)))
	for _, m := range ms.models {
		st, err := m.l.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", m.name, err)
		}
		e.String(m.name)
		e.String(m.spec)
		e.U64(m.updates)
		e.U64(m.stats.Labeled)
		e.U64(m.stats.Mistakes)
		e.F64(m.stats.SqErr)
		e.Blob(st)
	}
	ms.pend.encode(e)
	return e.Bytes(), nil
}

// ErrModelChanged reports a checkpointed model whose spec differs from the
// configured one.
var ErrModelChanged = errors.New("model configuration changed since the checkpoint")

// ModelSummary describes one model saved in a checkpoint payload.
type ModelSummary struct {
	Name    string
	Spec    string
	Updates uint64
	Stats   Stats
	State   []byte // the learner's MarshalBinary
}

// Payload is a decoded checkpoint payload.
type Payload struct {
	Dim     int
	Models  []ModelSummary
	Pending int // impressions awaiting feedback
}

// DescribePayload decodes a checkpoint payload written by the runtime (any
// version this build knows).
func DescribePayload(payload []byte) (Payload, error) {
	p, _, err := decodePayload(payload, nil, nil)
	return p, err
}

// decodePayload decodes a payload; if pend is not nil the pending buffer is
// decoded with its limits for the current model names.
func decodePayload(payload []byte, pend *pending, current []string) (Payload, *pending, error) {
	var p Payload
	d := state.NewDecoder(payload)
	magic, version := d.U32(), d.U32()
	if d.Err() != nil {
		return p, nil, fmt.Errorf("checkpoint payload: %w", d.Err())
	}
	if magic != payloadMagic || version < 1 || version > payloadVersion {
		return p, nil, fmt.Errorf("checkpoint payload: not an okstream model set of a version this build reads (magic %#x, version %d)", magic, version)
	}
	p.Dim = d.Int()
	n := int(d.U32())
	for i := 0; i < n && d.Err() == nil; i++ {
		var m ModelSummary
		m.Name = d.String()
		m.Spec = d.String()
		m.Updates = d.U64()
		m.Stats.Labeled = d.U64()
		m.Stats.Mistakes = d.U64()
		m.Stats.SqErr = d.F64()
		m.State = d.Blob()
		p.Models = append(p.Models, m)
	}
	var names []string
	for _, m := range p.Models {
		names = append(names, m.Name)
	}
	var q *pending
	if version >= 2 {
		if pend == nil {
			pend = newPending(0, 0, p.Dim)
		}
		if current == nil {
			current = names
		}
		q = pend.decode(d, names, current)
		p.Pending = q.len()
	} else if pend != nil {
		q = newPending(pend.max, pend.maxAge, pend.dim)
	}
	if err := d.Done(); err != nil {
		return p, nil, fmt.Errorf("checkpoint payload: %w", err)
	}
	return p, q, nil
}

// restore loads a payload written by marshal. Models are matched by name; a
// configured model missing from the payload starts fresh; a payload model no
// longer configured is dropped. A model whose spec changed is an error
// wrapping ErrModelChanged unless reset is true, in which case it starts
// fresh. On error ms is unchanged. It returns the names of models that
// started fresh.
func (ms *modelSet) restore(payload []byte, reset bool) (fresh []string, err error) {
	var current []string
	for _, m := range ms.models {
		current = append(current, m.name)
	}
	dim, err := peekDim(payload)
	if err != nil {
		return nil, err
	}
	if dim != ms.dim {
		return nil, fmt.Errorf("checkpoint payload is for dimension %d, the pipeline is configured with --dim %d", dim, ms.dim)
	}
	pl, pend, err := decodePayload(payload, ms.pend, current)
	if err != nil {
		return nil, err
	}
	byName := map[string]ModelSummary{}
	for _, m := range pl.Models {
		byName[m.Name] = m
	}
	// Build the restored models aside, then swap them in.
	next := make([]*model, len(ms.models))
	for i, m := range ms.models {
		s, ok := byName[m.name]
		if !ok {
			next[i] = m
			fresh = append(fresh, m.name)
			continue
		}
		if s.Spec != m.spec {
			if !reset {
				return nil, fmt.Errorf("%w: model %s was %q, is now %q; restore the old --model, give the new one another name, or run with --on-model-change=reset to start it fresh",
					ErrModelChanged, m.name, s.Spec, m.spec)
			}
			next[i] = m
			fresh = append(fresh, m.name)
			continue
		}
		nm, err := newModel(Model{Name: m.name, Spec: m.spec}, ms.dim)
		if err != nil {
			return nil, err
		}
		if err := nm.l.UnmarshalBinary(s.State); err != nil {
			return nil, fmt.Errorf("model %s: %w", m.name, err)
		}
		nm.updates = s.Updates
		nm.stats = s.Stats
		next[i] = nm
	}
	ms.models = next
	ms.pend = pend
	return fresh, nil
}

// peekDim reads the dimension of a payload without decoding the rest.
func peekDim(payload []byte) (int, error) {
	d := state.NewDecoder(payload)
	d.U32()
	d.U32()
	dim := d.Int()
	return dim, d.Err()
}
