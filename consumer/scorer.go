package consumer

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"

	"okstream/codec"
	"okstream/label"
)

// Scorer is a predict-only copy of one partition's models, built from a
// checkpoint payload (NewScorer): it scores events as the pipeline would
// publish them for a partition whose models are in the payload's state, and
// never learns.
//
// One scoring path: a Scorer runs the pipeline's own code (modelSet.restore
// builds its models, modelSet.encode maps named features, modelSet.admit
// checks the feature kind, modelSet.score with no label predicts), so a
// Scorer's ModelScore values — score, decision, probability (the learner's
// own or the checkpointed Platt calibration's), update count, a multi-class
// model's class, probability and top classes — are bit for bit those of the
// prediction record the pipeline publishes for the same event at the
// payload's state (tested against the pipeline: TestScorerEqualsPipeline).
//
// Concurrency: learners keep scratch buffers (package learner), and the
// named-feature encoder changes its dictionary and running means as it
// encodes, so a Scorer keeps a free list of private copies of the models
// (each restored from the payload) and scores each event on a copy no other
// goroutine is using. A copy whose state an event changed in a way that
// outlives the event (an encoder that allocated coordinates and declared
// their kinds to the models, a model the non-finite guard reset) is
// dropped, and a copy's encoder is restored from the payload after every
// named event, so every event is scored against the payload's state
// exactly: the answer for an event never depends on the events scored
// before it. Memory: at most one copy per concurrent Score call, and
// GOMAXPROCS + 1 copies kept between calls.
type Scorer struct {
	payload []byte
	desc    Payload
	names   []string
	shared  bool
	opts    ScorerOptions
	enc     []byte // the named-feature encoder's checkpointed state (nil for a dense partition)
	// labels holds the restored label map (read only: scoring without a
	// label never changes it), for ClassName.
	labels *modelSet
	// hot is a one-copy fast path in front of free: a request scoring its
	// events one after another takes and returns the same copy with an
	// atomic swap instead of two channel operations per event.
	hot  atomic.Pointer[scoreCopy]
	free chan *scoreCopy
}

// ScorerOptions are the pipeline configuration a checkpoint payload does
// not hold and that changes what a prediction record says (not its
// scores).
type ScorerOptions struct {
	// TopK is the number of classes a multi-class model's answer lists
	// (okstream run --top-k): 0 takes DefaultTopK, negative lists all.
	TopK int
	// Positive is the positive class of string labels (okstream run
	// --positive), which names a binary decision (Scorer.ClassName).
	Positive string
}

// scoreCopy is one private copy of the models and its buffers.
type scoreCopy struct {
	ms    *modelSet
	x     []float64
	dirty bool // an event changed the copy beyond repair: drop it
}

// NewScorer builds a predict-only copy of one partition's models from a
// checkpoint payload (consumer's payload format; DescribePayload decodes
// it), with the default options. The payload is untrusted: a payload that
// does not decode, or whose states a learner refuses, is an error, never a
// panic. The Scorer keeps payload (the caller must not change it).
func NewScorer(payload []byte) (*Scorer, error) {
	return NewScorerWith(payload, ScorerOptions{})
}

// NewScorerWith is NewScorer with options.
func NewScorerWith(payload []byte, opts ScorerOptions) (*Scorer, error) {
	desc, err := DescribePayload(payload)
	if err != nil {
		return nil, err
	}
	s := &Scorer{payload: payload, desc: desc, shared: desc.Share != nil, opts: opts,
		free: make(chan *scoreCopy, runtime.GOMAXPROCS(0))}
	for _, m := range desc.Models {
		s.names = append(s.names, m.Name)
	}
	if desc.Features != nil {
		if s.enc, err = desc.Features.MarshalBinary(); err != nil {
			return nil, fmt.Errorf("checkpoint payload: feature encoder: %w", err)
		}
	}
	c, err := s.newCopy()
	if err != nil {
		return nil, err
	}
	s.labels = &modelSet{labels: c.ms.labels}
	s.put(c)
	return s, nil
}

// newCopy restores a private copy of the payload's models, through
// modelSet.restore (the pipeline's restore path), into a model set
// configured with the payload's own models (name, spec, multi-class or
// not) and its label task. The regression and multi-class candidates of
// an undecided partition are not restored: they publish nothing.
func (s *Scorer) newCopy() (*scoreCopy, error) {
	d := s.desc
	ms := &modelSet{dim: d.Dim, pend: newPending(pendingLimits{}, d.Dim), topK: DefaultTopK, rawC: -1}
	for _, pm := range d.Models {
		var m *model
		var err error
		if pm.Multi {
			m, err = newMultiModel(Model{Name: pm.Name, Spec: pm.Spec}, d.Dim)
		} else {
			m, err = newModel(Model{Name: pm.Name, Spec: pm.Spec}, d.Dim)
		}
		if err != nil {
			return nil, fmt.Errorf("checkpoint payload: %w", err)
		}
		ms.models = append(ms.models, m)
	}
	if len(ms.models) > 0 {
		t := label.Undecided
		if d.Labels != nil {
			t = d.Labels.Task
		}
		ms.labels = label.New(t, s.opts.Positive)
	}
	if d.Features != nil {
		ms.fcfg = d.Features.Config()
	}
	ms.setClassOptions(0, s.opts.TopK)
	if _, err := ms.restore(s.payload, false); err != nil {
		return nil, fmt.Errorf("checkpoint payload: %w", err)
	}
	c := &scoreCopy{ms: ms}
	ms.onReset = func(*model, string) { c.dirty = true }
	return c, nil
}

// get takes a free copy, or restores a new one.
func (s *Scorer) get() (*scoreCopy, error) {
	if c := s.hot.Swap(nil); c != nil {
		return c, nil
	}
	select {
	case c := <-s.free:
		return c, nil
	default:
		return s.newCopy()
	}
}

// put returns a copy to the free list (dropped when the list is full or
// the copy is dirty).
func (s *Scorer) put(c *scoreCopy) {
	if c.dirty {
		return
	}
	if s.hot.CompareAndSwap(nil, c) {
		return
	}
	select {
	case s.free <- c:
	default:
	}
}

// Errors of Score: an event the pipeline would not score (it dead-letters
// it, or it is a feedback event).
var (
	// ErrScoreFeedback: a feedback event (ref) has no features to score.
	ErrScoreFeedback = errors.New("a feedback event (ref) has no features to score")
	// ErrScoreFeatures: the event's features do not fit the partition
	// (wrong dimension, a non-finite value, an index out of range, a
	// feature kind the partition does not take, a value missing under
	// --missing refuse).
	ErrScoreFeatures = errors.New("the event's features do not fit the model")
)

// Score appends to out one ModelScore per model of the payload, in the
// payload's order, for ev: what the pipeline publishes for ev as an
// unlabelled event at the payload's state (ev's label, if any, is
// ignored: Score never learns). It never
// changes the Scorer's state and is safe for concurrent use; the result
// (Dist included) does not alias the Scorer.
//
// An event the pipeline would dead-letter is an error wrapping
// ErrScoreFeatures (features of the wrong dimension or kind, a non-finite
// value, a sparse index out of range or out of order, a missing value
// under --missing refuse), or ErrScoreFeedback for a feedback event; out
// is then returned unchanged. A payload without models scores nothing.
func (s *Scorer) Score(ev *codec.Event, out []codec.ModelScore) ([]codec.ModelScore, error) {
	if ev.IsFeedback() {
		return out, ErrScoreFeedback
	}
	kind := featDense
	if ev.Named() {
		kind = featNamed
		if s.desc.Features == nil && len(s.names) > 0 && s.kind() != featDense {
			// The pipeline's encoder configuration (--max-values-per-name,
			// --missing) is in the payload only with its dictionary.
			return out, fmt.Errorf("%w: named features (\"f\"), but the models have learnt no named event (the checkpoint holds no feature dictionary): send x or xi/xv", ErrScoreFeatures)
		}
	} else if err := s.checkDense(ev); err != nil {
		return out, err
	}
	c, err := s.get()
	if err != nil {
		return out, err
	}
	ms := c.ms
	if reason, detail := ms.admit(kind, s.shared); reason != "" {
		s.put(c)
		return out, fmt.Errorf("%w: %s (%s)", ErrScoreFeatures, detail, reason)
	}
	var x []float64
	if kind == featNamed {
		coords := 0
		if ms.enc != nil {
			coords = ms.enc.Stats().Coords
		}
		x, err = ms.encode(ev.F, c.x)
		if err != nil || ms.enc.Stats().Coords != coords {
			// New coordinates were declared to the models: the copy is
			// no longer the payload's (or the encoder refused the event).
			c.dirty = err == nil
		}
		if err != nil {
			s.restoreEncoder(c)
			s.put(c)
			return out, fmt.Errorf("%w: %v", ErrScoreFeatures, err)
		}
	} else {
		x = ev.Dense(c.x, ms.dim)
	}
	c.x = x
	n := len(out)
	out = ms.score(x, 0, false, out, nil)
	for i := n; i < len(out); i++ {
		if out[i].Dist != nil { // aliases the copy's buffer
			out[i].Dist = append([]codec.ClassProb(nil), out[i].Dist...)
		}
	}
	if kind == featNamed {
		s.restoreEncoder(c)
	}
	s.put(c)
	return out, nil
}

// restoreEncoder puts the payload's encoder state back into c (encoding
// changed its running means and caches), or marks c dirty.
func (s *Scorer) restoreEncoder(c *scoreCopy) {
	ms := c.ms
	if s.enc == nil {
		// The payload's partition had seen no named event: the copy's
		// encoder was made by this event.
		ms.enc, ms.fkind = nil, s.kind()
		if ms.kinds.Current() != nil {
			c.dirty = true
		}
		return
	}
	if err := ms.enc.UnmarshalBinary(s.enc); err != nil {
		c.dirty = true
	}
	ms.fkind = featNamed
}

// kind is the payload's feature kind.
func (s *Scorer) kind() uint8 {
	switch s.desc.FeatureKind {
	case "dense":
		return featDense
	case "named":
		return featNamed
	}
	return featNone
}

// checkDense refuses a dense or sparse event that does not fit the models
// (the codec's decoder with the pipeline's limits refuses it first; Score
// checks again, since its event may come from anywhere).
func (s *Scorer) checkDense(ev *codec.Event) error {
	dim := s.desc.Dim
	if ev.X != nil {
		if len(ev.X) != dim {
			return fmt.Errorf("%w: %d dense features, the model's dimension is %d", ErrScoreFeatures, len(ev.X), dim)
		}
		for _, v := range ev.X {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: a non-finite feature value", ErrScoreFeatures)
			}
		}
		return nil
	}
	if len(ev.XI) != len(ev.XV) {
		return fmt.Errorf("%w: %d sparse indices and %d values", ErrScoreFeatures, len(ev.XI), len(ev.XV))
	}
	for i, j := range ev.XI {
		if int64(j) >= int64(dim) || (i > 0 && j <= ev.XI[i-1]) {
			return fmt.Errorf("%w: sparse index %d out of range [0, %d) or out of order", ErrScoreFeatures, j, dim)
		}
		if v := ev.XV[i]; math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: a non-finite feature value", ErrScoreFeatures)
		}
	}
	return nil
}

// ClassName is the class a prediction record names for scores (a Score
// result): codec.Prediction.Class, "" when there is none.
func (s *Scorer) ClassName(scores []codec.ModelScore) string {
	return s.labels.className(scores)
}

// Names are the models' names, in the order Score answers.
func (s *Scorer) Names() []string { return s.names }

// Dim is the models' feature dimension.
func (s *Scorer) Dim() int { return s.desc.Dim }

// Describe is the decoded payload (DescribePayload).
func (s *Scorer) Describe() Payload { return s.desc }
