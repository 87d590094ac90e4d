package consumer

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"okstream/codec"
	"okstream/eval"
	"okstream/features"
	"okstream/features/kinds"
	"okstream/label"
	"okstream/learner"
	"okstream/learner/state"
	"okstream/share"
)

// Stats are a model's progressive-validation statistics on one partition:
// every labelled event is scored before the model learns from it.
type Stats struct {
	Labeled  uint64  // labelled events seen
	Mistakes uint64  // classification: sign(score) ≠ y (a score of 0 is a mistake)
	SqErr    float64 // sum of (score − y)², for regression (and as a calibration signal for classifiers); non-finite terms are left out
	// Resets counts the times the model was reset to a fresh learner
	// because its state had become non-finite (see modelSet.step). It is
	// checkpointed (payload version 3 on), so it covers the whole history.
	Resets uint64
}

// MistakeRate is Mistakes/Labeled (NaN before the first label).
func (s Stats) MistakeRate() float64 { return float64(s.Mistakes) / float64(s.Labeled) }

// MSE is SqErr/Labeled.
func (s Stats) MSE() float64 { return s.SqErr / float64(s.Labeled) }

type model struct {
	name, spec string
	// flex is the configured spec of a model whose task follows the labels
	// (label.Flexible) while the partition's task is undecided, and alt its
	// regression candidate (spec with loss=square), which learns every
	// label as it is while the model learns it as the binary candidate
	// (−1/+1) and publishes its scores. The decision keeps one of the two
	// (modelSet.mapLabel). "" and nil otherwise.
	flex string
	alt  *model
	// malt is the multi-class candidate of a Flexible model while an
	// undecided partition's labels are strings (label.Map.Multi): it
	// learns each label's class index while the model learns it as the
	// binary candidate. nil otherwise.
	malt *model
	l    learner.Learner
	// mc is a multi-class model's learner (l is nil then), with its class
	// map (labels.go): cls[j] the dictionary class of the model's class j,
	// inv the reverse (−1: not learnt); pm, pd and top are buffers for its
	// distributions and published top k.
	mc       learner.Multi
	cls      []int
	inv      []int32
	pm, pd   []float64
	top      []codec.ClassProb
	classify bool // binary or multi-class
	updates  uint64
	stats    Stats
	// detects: the learner detects changes (learner.ChangeCount); changes
	// is the count last seen.
	detects bool
	changes int64
	tally   tally // since the worker last drained it into the counters
	// calib is the online Platt calibration of a classifier's score
	// (eval.Platt) that gives the probability published with each
	// prediction (codec.ModelScore.Prob) and scored by the log loss, for a
	// learner without a probability of its own (eval.Prober); it learns
	// from each label after the event's probability was computed. It is
	// checkpointed (payload version 6), so a restored model publishes the
	// probabilities an uninterrupted one does; a reset model starts it
	// afresh.
	calib eval.Platt
}

// tally counts a model's work since the worker last exported it to the
// per-model counters (okstream_model_*_total): kept in plain fields so the
// per-event path does no atomic or map operation, and drained once per
// micro-batch. It is not checkpointed: the counters count this process's
// work, events reprocessed after a recovery included.
type tally struct {
	predictions uint64  // scores computed for events (labelled or not)
	updates     uint64  // learning steps (labelled events, resolved feedback)
	labeled     uint64  // labelled events counted in Stats
	mistakes    uint64  // of which classification mistakes
	loss        float64 // Σ (score − y)² over them, non-finite terms left out (as in Stats.SqErr)
	logLoss     float64 // classification: Σ −log p(y), p the calibrated probability (eval.LogLoss)
	absErr      float64 // Σ |score − y|, non-finite terms left out
	nonFinite   uint64  // non-finite scores the learner returned (each one resets the model; see step)
}

// baseline is a partition's trivial predictor on the same labelled events
// as its models, the reference their counters are read against: the
// running class prior (eval.Prior: Laplace's rule, majority decision;
// meaningful for labels ±1) and the running mean (eval.RunningMean). It is
// process-local, like the counters: it starts afresh when the partition is
// restored.
type baseline struct {
	prior   eval.Prior
	mean    eval.RunningMean
	classes classPrior // multi-class streams (labels.go)
	tally   baselineTally
}

// baselineTally is what the baseline did since the last drain.
type baselineTally struct {
	labeled, mistakes      uint64
	logLoss, sqErr, absErr float64
}

// count scores label y with the prior and the mean, then learns it.
func (b *baseline) count(y float64) {
	t := &b.tally
	t.labeled++
	if learner.Mistake(b.prior.Score(), y) {
		t.mistakes++
	}
	t.logLoss += eval.LogLoss(b.prior.Prob(), y)
	b.prior.Add(y)
	m := b.mean.Predict()
	if d := (m - y) * (m - y); finite(d) {
		t.sqErr += d
		t.absErr += math.Abs(m - y)
	}
	b.mean.Add(y)
}

// modelSet is the models of one partition: every configured model, built
// for the pipeline's dimension, with its statistics. It is the unit that is
// checkpointed.
type modelSet struct {
	dim    int
	models []*model
	pend   *pending // impressions awaiting delayed feedback

	// The non-finite guard (step, checkBeforeCheckpoint).
	lastX   []float64 // features of the last labelled event every model learnt with a finite score
	learnt  bool      // a model learnt since the last checkpoint (lastX is then set)
	onReset func(m *model, reason string)
	// onChange reports a change the model detected in its stream and acted
	// on (learner.ChangeCount: auto restarting its bank, auto_track.go).
	onChange func(m *model, changes, alarms int64)

	// share is the partition's position in the sharing schedule (nil: no
	// shared model), checkpointed with the models (payload version 4).
	share *share.State

	base baseline // the trivial predictor beside the models (not checkpointed)
	// topK is the number of classes a multi-class model's record lists
	// (DefaultTopK; 0: all).
	topK int
	// labels maps the partition's labels to what the models learn and holds
	// its task and class dictionary, checkpointed with the models (payload
	// version 5). nil without models.
	labels *label.Map
	// rawY is the label of the event being learnt as the regression
	// candidates (model.alt) learn it, and rawC its class index as the
	// multi-class ones learn it (−1: none; set by mapLabel).
	rawY float64
	rawC int

	// enc encodes named-feature events ("f") into the models' dense input
	// (package features), one per partition, of configuration fcfg; nil
	// until the partition's first named event (a dense stream never pays
	// for it) or a restore of a named partition.
	// fkind is the kind of features the partition's events carry, fixed
	// by its first event with features (featNone until then). Both are
	// checkpointed (payload version 9): the encoder's dictionary is part
	// of what the models learnt.
	enc   *features.Encoder
	kinds kinds.Declarer // the encoder's kinds as last declared to the models
	fcfg  features.Config
	fkind uint8
}

// The kinds of features a partition takes (modelSet.fkind). The first event
// with features fixes it; an event of the other kind is dead-lettered
// (reasonFeatureKind): a dense x and the encoder's coordinates would mean
// different things in the same model.
const (
	featNone  uint8 = 0 // no event with features yet
	featDense uint8 = 1 // x or xi/xv
	featNamed uint8 = 2 // f, through enc
)

// featKindName names a feature kind for messages and okstream inspect.
func featKindName(k uint8) string {
	switch k {
	case featDense:
		return "dense"
	case featNamed:
		return "named"
	}
	return "none"
}

// setFeatures sets the configuration of the partition's named-feature
// encoder (its Dim must be the models' dimension; the encoder itself is
// made at the first named event). It is called once, before any event or
// restore.
func (ms *modelSet) setFeatures(cfg features.Config) error {
	if cfg.Dim != ms.dim {
		return fmt.Errorf("features: encoder dimension %d, models %d", cfg.Dim, ms.dim)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	ms.fcfg = features.New(cfg).Config() // the defaults filled in (once, at start)
	return nil
}

// Reasons for a model reset (the reason label of okstream_model_resets_total).
const (
	// resetNonFinite: the model returned a non-finite score for an event.
	resetNonFinite = "non_finite"
	// resetCheckpoint: the check before a checkpoint found a non-finite
	// prediction (the backstop; see checkBeforeCheckpoint).
	resetCheckpoint = "non_finite_at_checkpoint"
	// resetFeatureKinds: a restored model refused the named features'
	// kinds (declareKinds): only a forged or mismatched checkpoint.
	resetFeatureKinds = "feature_kinds"
)

// newModelSet is newModelSetTask with the models' own task (Undecided when
// every model is label.Flexible) and no positive class.
func newModelSet(cfg []Model, dim int, lim pendingLimits) (*modelSet, error) {
	task, _ := modelsTask(cfg, max(dim, 1), label.Undecided)
	return newModelSetTask(cfg, dim, lim, task, "")
}

// newModelSetTask builds the models of a partition of task t (Undecided: the
// warm-up's labels decide it), with positive the positive class of string
// labels. While t is Undecided a Flexible model runs as configured (the
// binary candidate, whose scores are published) with its regression
// candidate (alt).
//
// A multi-class partition (t MultiClass) runs every model in its
// multi-class form (learner.NewMulti of label.ResolveSpec(spec)); it cannot
// take delayed feedback (an error here: okstream run refuses it at start).
// While t is Undecided a Flexible model also gets a multi-class candidate
// (malt), kept while the labels are strings, unless delayed feedback is on
// (label.Map.NoMulti: strings are then binary at once, as before).
func newModelSetTask(cfg []Model, dim int, lim pendingLimits, t label.Task, positive string) (*modelSet, error) {
	ms := &modelSet{dim: dim, pend: newPending(lim, dim), topK: DefaultTopK, rawC: -1}
	if len(cfg) > 0 {
		ms.labels = label.New(t, positive)
		ms.labels.NoMulti = ms.pend.enabled()
	}
	if t == label.MultiClass && len(cfg) > 0 && ms.pend.enabled() {
		return nil, errMultiFeedback
	}
	for _, c := range cfg {
		if t == label.MultiClass {
			m, err := newMultiModel(Model{Name: c.Name, Spec: multiSpec(c.Spec)}, dim)
			if err != nil {
				return nil, err
			}
			ms.models = append(ms.models, m)
			continue
		}
		m, err := newModel(Model{Name: c.Name, Spec: label.ResolveSpec(c.Spec, t)}, dim)
		if err != nil {
			return nil, err
		}
		if t == label.Undecided && label.Flexible(c.Spec) {
			m.flex = c.Spec
			if m.alt, err = newModel(Model{Name: c.Name, Spec: label.ResolveSpec(c.Spec, label.Regression)}, dim); err != nil {
				return nil, err
			}
			if !ms.labels.NoMulti {
				if m.malt, err = newMultiModel(Model{Name: c.Name, Spec: multiSpec(c.Spec)}, dim); err != nil {
					return nil, err
				}
			}
		}
		ms.models = append(ms.models, m)
	}
	return ms, nil
}

// errMultiFeedback refuses multi-class models with delayed feedback.
var errMultiFeedback = errors.New("multi-class models do not take delayed feedback (--feedback-buffer): an outcome record carries one score per model, not a class distribution; run multi-class streams without --feedback-buffer")

// setClassOptions sets the multi-class options as a configuration gives
// them: the class dictionary's cap (label.Map.MaxClasses; 0 keeps
// label.DefaultMaxClasses) and the number of classes a record lists (topK;
// 0 keeps DefaultTopK, negative lists every class).
func (ms *modelSet) setClassOptions(maxClasses, topK int) {
	if ms.labels != nil && maxClasses > 0 {
		ms.labels.MaxClasses = maxClasses
	}
	switch {
	case topK > 0:
		ms.topK = topK
	case topK < 0:
		ms.topK = 0 // multiScore: all
	}
}

// mapLabel returns the value the models learn from for the labelled event
// ev, or a *label.Error for a label that does not fit the partition's task
// (dead-lettered as invalid_label), and sets rawY for the regression
// candidates. The labels of an undecided partition's warm-up decide its
// task (package label); at the decision each Flexible model keeps the
// candidate of that task — for regression, the one that has learnt every
// label as it is since the start. Without models every label passes as it
// is.
//
// For multi-class: on a multi-class partition the value is the class index
// (as a float64: the record's y); on an undecided one whose labels are
// strings, the multi-class candidates learn the class index (rawC) while
// the models learn the binary value, and a third string keeps them. The
// candidates a partition's labels rule out are dropped at its first label
// (numbers and bools: the multi-class ones; strings: the regression ones).
func (ms *modelSet) mapLabel(ev *codec.Event) (float64, error) {
	ms.rawY, ms.rawC = ev.Y, -1
	if ms.labels == nil {
		return ev.Y, nil
	}
	if ms.labels.Task == label.MultiClass && ms.labels.RequirePositive {
		return 0, errMultiShared
	}
	undecided := ms.labels.Task == label.Undecided
	y, err := ms.labels.Apply(ev)
	if err != nil || !undecided {
		ms.rawC = ms.labels.Class()
		return y, err
	}
	ms.rawC = ms.labels.Class()
	if ms.labels.Task == label.Undecided {
		ms.pruneCandidates()
		return y, nil
	}
	for i, m := range ms.models {
		if m.flex == "" {
			continue
		}
		switch ms.labels.Task {
		case label.Regression:
			ms.models[i] = m.alt
		case label.MultiClass:
			ms.models[i] = m.malt
		}
		m.flex, m.alt, m.malt = "", nil, nil
	}
	return y, nil
}

// pruneCandidates drops the candidates an undecided partition's labels
// rule out: the multi-class ones unless its labels may still decide
// multi-class (none yet, or strings), the regression ones once they are
// strings.
func (ms *modelSet) pruneCandidates() {
	if ms.labels == nil || ms.labels.Task != label.Undecided {
		return
	}
	multi, strs := ms.labels.MayBeMulti(), ms.labels.Multi()
	for _, m := range ms.models {
		if !multi {
			m.malt = nil
		}
		if strs {
			m.alt = nil
		}
	}
}

// taskKind names a model's task kind in errors.
func taskKind(multi bool) string {
	if multi {
		return "multi-class"
	}
	return "binary or regression"
}

// restoreClasses installs a checkpointed class map, which must name one
// dictionary class per class the restored learner has.
func (m *model) restoreClasses(cls []int) error {
	if len(cls) != m.mc.Classes() {
		return fmt.Errorf("%w: a class map of %d classes for a learner of %d", state.ErrCorrupt, len(cls), m.mc.Classes())
	}
	m.setClasses(cls)
	return nil
}

// errMultiShared refuses multi-class labels on shared models (okstream run
// refuses --share with --task multiclass at start).
var errMultiShared = errors.New("multi-class models cannot be shared across partitions (--share): run them unshared")

// classes is the size of the partition's class dictionary.
func (ms *modelSet) classes() int {
	if ms.labels == nil {
		return 0
	}
	return len(ms.labels.Classes)
}

func newModel(c Model, dim int) (*model, error) {
	l, err := learner.New(c.Spec, dim)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", c.Name, err)
	}
	_, _, detects := learner.ChangeCount(l)
	return &model{name: c.Name, spec: l.Info().Spec, l: l, classify: l.Info().Task == learner.Classification, calib: eval.NewPlatt(), detects: detects}, nil
}

// score predicts x with every model — and, if the event is labelled, lets
// each model learn from y after predicting — appending one ModelScore per
// model to out. If obs is not nil, model i's step is timed into obs[i].
// Every model goes through step, the non-finite guard.
func (ms *modelSet) score(x []float64, y float64, hasY bool, out []codec.ModelScore, obs []prometheus.Observer) []codec.ModelScore {
	allFinite := true
	d := ms.classes()
	for i, m := range ms.models {
		var start time.Time
		if obs != nil {
			start = time.Now()
		}
		if m.mc != nil { // a multi-class partition: y is the class index
			pd, before := ms.stepMulti(m, x, int(y), d, hasY)
			m.tally.predictions++
			allFinite = allFinite && finiteAll(pd)
			if hasY {
				m.countMulti(pd, int(y))
			}
			if obs != nil {
				obs[i].Observe(time.Since(start).Seconds())
			}
			out = append(out, ms.multiScore(m, pd, before))
			continue
		}
		f, before := ms.step(m, x, y, hasY)
		m.tally.predictions++
		allFinite = allFinite && finite(f)
		p, own := m.prob(f) // before the label reaches the calibration
		if hasY {
			m.count(f, y, p, own)
		}
		if a := m.alt; a != nil { // the regression candidate of an undecided partition
			g, _ := ms.step(a, x, ms.rawY, hasY)
			allFinite = allFinite && finite(g)
			if hasY {
				a.count(g, ms.rawY, 0, false)
			}
		}
		if a := m.malt; a != nil { // the multi-class candidate of an undecided partition of strings
			learn := hasY && ms.rawC >= 0
			pd, _ := ms.stepMulti(a, x, ms.rawC, d, learn)
			allFinite = allFinite && finiteAll(pd)
			if learn {
				a.countMulti(pd, ms.rawC)
			}
		}
		if obs != nil {
			obs[i].Observe(time.Since(start).Seconds())
		}
		out = append(out, m.modelScore(f, before, p))
	}
	if hasY {
		ms.noteLearnt(x, allFinite)
		switch {
		case ms.labels != nil && ms.labels.Task == label.MultiClass:
			ms.base.countClass(int(y))
		default:
			ms.base.count(y)
			if ms.rawC >= 0 && ms.labels.MayBeMulti() {
				ms.base.classes.add(ms.rawC) // the class prior a multi-class decision continues
			}
		}
	}
	return out
}

// step is one model's predict (hasY false) or predict-then-learn (hasY
// true) on x, guarded against a model whose state is no longer finite. It
// returns the score to publish and the model's update count before the
// event.
//
// A finite input can still drive a learner's state to ±Inf or NaN (features
// or labels of ±1e308 overflow a kernel's squares; the value limits, on by
// default, make this rare), and from then on every score is NaN. So when the
// model returns a non-finite score, its state is taken as poisoned: the model
// is replaced by a fresh learner of the same spec and dimension (same seed:
// learner.New is deterministic), the reset is counted (Stats.Resets, the
// resets metric, an error log with the partition, model and offset), and the
// event is scored (and learnt) again by the fresh model, whose score is the
// one published. If even the fresh model's score is non-finite, the event
// itself cannot be learnt: the model is reset once more (so the event leaves
// no trace in its state) and the non-finite score is published as it is.
//
// The decision depends only on the model's state and the event, so an
// uninterrupted run and a run recovered from any checkpoint take it at the
// same event, and exact recovery holds.
//
// A non-finite score is taken as proof of a poisoned state even when the
// input alone is to blame (no state could score it: features of ±1e308 make
// random features cos(±Inf) = NaN), because Learn has already updated the
// state with it and nothing cheaper than a snapshot per event could undo
// that. Such a model (bogd, say, whose state would have stayed finite)
// loses its history. Inputs like that are dead-lettered by the value limit
// (on by default): within |v| ≤ 1e9 no kernel computation overflows.
func (ms *modelSet) step(m *model, x []float64, y float64, hasY bool) (f float64, before uint64) {
	run := func() float64 {
		before = m.updates
		if !hasY {
			return m.l.Predict(x)
		}
		m.updates++
		m.tally.updates++
		return m.l.Learn(x, y)
	}
	if f = run(); finite(f) {
		if hasY && m.detects {
			ms.noteChanges(m)
		}
		return f, before
	}
	m.tally.nonFinite++
	ms.reset(m, resetNonFinite)
	if f = run(); !finite(f) {
		m.tally.nonFinite++
		ms.reset(m, resetNonFinite)
	}
	return f, before
}

// noteChanges reports the model's newly detected changes (the counts are
// part of its state, so a restored model does not report old ones again).
func (ms *modelSet) noteChanges(m *model) {
	c, a := m.changeCount()
	if c > m.changes && ms.onChange != nil {
		ms.onChange(m, c, a)
	}
	m.changes = c
}

// changeCount is the learner's learner.ChangeCount (MultiChangeCount for
// a multi-class model).
func (m *model) changeCount() (changes, alarms int64) {
	if m.mc != nil {
		changes, alarms, _ = learner.MultiChangeCount(m.mc)
	} else {
		changes, alarms, _ = learner.ChangeCount(m.l)
	}
	return changes, alarms
}

// prob is a classifier's probability that y = +1 for its score f: the
// learner's own (own true) when it is an eval.Prober that gives one and f
// is finite, else the online Platt calibration's (0.5 for a non-finite f).
// It reads the calibration without changing it; count updates it with the
// label. 0 for a regression model.
func (m *model) prob(f float64) (p float64, own bool) {
	if !m.classify {
		return 0, false
	}
	if pr, ok := m.l.(eval.Prober); ok && finite(f) {
		if p, ok := pr.Probability(f); ok {
			return p, true
		}
	}
	return m.calib.Prob(f), false
}

// count adds a labelled event's progressive-validation score f, and for a
// classifier its probability p from prob (computed before the label was
// known), to the model's statistics, and lets the calibration learn the
// label unless the probability is the learner's own. A non-finite score
// counts as labelled (and, for a classifier, as a mistake) but, like a
// squared error that overflows (a label of 1e308 with the value limit
// off), stays out of SqErr, which would otherwise be NaN or +Inf for ever.
func (m *model) count(f, y, p float64, own bool) { m.countAt(f, y, p, p, own) }

// countAt is count where the probability the calibration learns from (p,
// its own prediction now) and the one reported (pub, published earlier:
// an impression's) differ; the log loss is pub's.
func (m *model) countAt(f, y, p, pub float64, own bool) {
	m.stats.Labeled++
	m.tally.labeled++
	if m.classify && learner.Mistake(f, y) {
		m.stats.Mistakes++
		m.tally.mistakes++
	}
	if d := (f - y) * (f - y); finite(d) {
		m.stats.SqErr += d
		m.tally.loss += d
		m.tally.absErr += math.Abs(f - y)
	}
	if m.classify {
		if !own {
			m.calib.Update(f, p, y)
		}
		m.tally.logLoss += eval.LogLoss(pub, y)
	}
}

func (m *model) modelScore(f float64, before uint64, p float64) codec.ModelScore {
	s := codec.ModelScore{Name: m.name, Score: f, Updates: before}
	if m.classify {
		s.Classify = true
		s.Decision = codec.Decision(f)
		s.Prob, s.HasProb = p, true
	}
	return s
}

// className is the record's predicted class (codec.Prediction.Class): the
// name, in the partition's label map, of the decision of the first
// classification model in scores ("" when there is none, its decision is
// 0, or the class's name is not known yet: label.Map.ClassName).
func (ms *modelSet) className(scores []codec.ModelScore) string {
	if ms.labels == nil {
		return ""
	}
	for i := range scores {
		if scores[i].Multi {
			return scores[i].Class
		}
		if scores[i].Classify {
			return ms.labels.ClassName(scores[i].Decision)
		}
	}
	return ""
}

// reset replaces m's learner by a fresh one of the same spec (learner.New
// is deterministic, so every run resets to the same state) and counts it.
// The statistics are kept: they describe the partition's history, not the
// state; the update count restarts at 0 with the state it describes.
func (ms *modelSet) reset(m *model, reason string) {
	if m.mc != nil {
		l, err := learner.NewMulti(m.spec, ms.dim)
		if err != nil { // the spec built this model before: cannot happen
			panic(fmt.Sprintf("consumer: rebuilding multi-class model %s from its own spec %q: %v", m.name, m.spec, err))
		}
		m.mc, m.updates, m.changes = l, 0, 0
		m.setClasses(nil) // the fresh model learns the classes anew
	} else {
		l, err := learner.New(m.spec, ms.dim)
		if err != nil { // the spec built this model before: cannot happen
			panic(fmt.Sprintf("consumer: rebuilding model %s from its own spec %q: %v", m.name, m.spec, err))
		}
		m.l, m.updates, m.changes = l, 0, 0
	}
	if ks := ms.kinds.Current(); ks != nil {
		// The fresh learner takes the named features' kinds as the others
		// have them; it has seen nothing, so it cannot refuse them.
		if err := m.declareKinds(ks); err != nil {
			panic(fmt.Sprintf("consumer: a fresh model %s refused the feature kinds: %v", m.name, err))
		}
	}
	m.calib = eval.NewPlatt() // the fresh model's scores are another scale
	m.stats.Resets++
	if ms.onReset != nil {
		ms.onReset(m, reason)
	}
}

// noteLearnt remembers the features of a labelled event every model learnt
// with a finite score, for checkBeforeCheckpoint.
func (ms *modelSet) noteLearnt(x []float64, allFinite bool) {
	if !allFinite {
		return // a poisonous input: a fresh model may be non-finite on it
	}
	ms.lastX = append(ms.lastX[:0], x...)
	ms.learnt = true
}

// checkBeforeCheckpoint is the backstop of the non-finite guard: step
// notices a poisoned state only at the model's next event, so a checkpoint
// taken in between would save it. Before a checkpoint, each model (if any
// learnt since the last one) predicts the features of the last labelled
// event it learnt; a non-finite prediction resets the model as step does
// (reason non_finite_at_checkpoint), so a NaN model is never checkpointed
// silently.
//
// This is the one decision that depends on when checkpoints happen: a run
// checkpointing at another offset resets the model one event later, in
// step, which gives the same state and the same published score whenever
// the poisoned model's score on that next event is non-finite too — as it
// is for the kernel learners, where a NaN coefficient makes every score
// NaN. Only a state that is non-finite in a way that one input exposes and
// another does not can make the two runs differ, and with the value limits
// on (the default) finite inputs do not produce such states.
func (ms *modelSet) checkBeforeCheckpoint() {
	if !ms.learnt {
		return
	}
	for _, m := range ms.models {
		if !m.finiteOn(ms.lastX) {
			ms.reset(m, resetCheckpoint)
		}
		if a := m.alt; a != nil && !a.finiteOn(ms.lastX) {
			ms.reset(a, resetCheckpoint)
		}
		if a := m.malt; a != nil && !a.finiteOn(ms.lastX) {
			ms.reset(a, resetCheckpoint)
		}
	}
	ms.learnt = false
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// finiteOn reports whether the model's prediction of x is finite (every
// class's probability, for a multi-class model).
func (m *model) finiteOn(x []float64) bool {
	if m.mc != nil {
		return finiteAll(m.mc.PredictProba(x, m.scratch()))
	}
	return finite(m.l.Predict(x))
}

// learnDelayed lets every model learn from a resolved impression: the
// models' impression-time scores (recomputed now for a model added after
// the impression) are the progressive-validation scores, counted in the
// statistics and reported in the outcome record.
//
// The learning step goes through step, the non-finite guard, like score.
func (ms *modelSet) learnDelayed(im *impression, y float64, out []codec.ModelScore, obs []prometheus.Observer) []codec.ModelScore {
	allFinite := true
	for i, m := range ms.models {
		if m.mc != nil { // cannot happen: multi-class partitions take no feedback (errMultiFeedback)
			out = append(out, codec.ModelScore{Name: m.name, Multi: true})
			continue
		}
		var start time.Time
		if obs != nil {
			start = time.Now()
		}
		f, before := im.scores[i], im.updates[i]
		if math.IsNaN(f) { // unknown: the model was added after the impression (or its score was NaN)
			f, before = ms.step(m, im.x, 0, false)
			m.tally.predictions++
		}
		g, _ := ms.step(m, im.x, y, true)
		allFinite = allFinite && finite(g)
		// The calibration learns from the impression-time score with its
		// probability as the calibration gives it now (learning changed the
		// learner, not the calibration; a reset in step started it
		// afresh); the statistics and the outcome record report the
		// probability published at impression time (im.probs, payload
		// version 8), or this one where it is not known.
		p, own := m.prob(f)
		pub := p
		if q := im.probs[i]; !math.IsNaN(q) && !math.IsNaN(im.scores[i]) {
			pub = q
		}
		m.countAt(f, y, p, pub, own)
		if a := m.alt; a != nil { // its pre-update score is its progressive one
			h, _ := ms.step(a, im.x, ms.rawY, true)
			allFinite = allFinite && finite(h)
			a.count(h, ms.rawY, 0, false)
		}
		if obs != nil {
			obs[i].Observe(time.Since(start).Seconds())
		}
		out = append(out, m.modelScore(f, before, pub))
	}
	ms.noteLearnt(im.x, allFinite)
	ms.base.count(y)
	return out
}

// Payload versions: 1 = models; 2 = models + the pending-feedback buffer;
// 3 = each model's Stats.Resets, and the buffer's impression keys and
// event-time watermark window (see pending.encode); 4 = the sharing
// schedule's state (records consumed, partition count, merge frontier),
// after the buffer; 5 = the label state (task, label kind, class
// dictionary: package label), after the sharing state; 6 = each model's
// probability calibration (eval.Platt: A, B), after the regression
// candidates; 7 = multi-class models, after the calibrations: per model a
// flag (1: its state is a learner.Multi's) and then its class map (model
// class → dictionary class), then per model its multi-class candidate
// (flag, spec, updates, statistics, state, class map) — the label state
// (version 5) holds the class dictionary and the multi-class task; 8 =
// each pending impression's published probabilities (pending.encode),
// which its outcome record reports; 9 = the partition's feature kind
// (u8: 0 none yet, 1 dense, 2 named) and, for named, the feature
// encoder's state (a blob: features.Encoder.MarshalBinary), at the end.
// This build reads all nine and writes 9; a model restored from a payload
// older than 6 starts its calibration afresh, and a payload older than 9
// restores as a partition that has seen no named event (an older build
// dead-lettered them).
const (
	payloadMagic   = 0x534d4b4f // "OKMS"
	payloadVersion = 9
)

// state returns the learner's state, multi-class or not.
func (m *model) state() ([]byte, error) {
	if m.mc != nil {
		return m.mc.MarshalBinary()
	}
	return m.l.MarshalBinary()
}

// unmarshal restores the learner's state.
func (m *model) unmarshal(b []byte) error {
	var err error
	if m.mc != nil {
		err = m.mc.UnmarshalBinary(b)
	} else {
		err = m.l.UnmarshalBinary(b)
	}
	if err == nil {
		m.changes, _ = m.changeCount() // reported before the checkpoint
	}
	return err
}

// marshal encodes every model's state and statistics (deterministically)
// into one buffer of the payload's exact size: the pending buffer can be
// most of it, and a buffer grown by appending would allocate several times
// its size while the checkpoint is written.
func (ms *modelSet) marshal() ([]byte, error) { return ms.marshalInto(nil) }

// marshalInto is marshal writing into buf's storage when it is large
// enough (the worker keeps its last checkpoint's buffer: a checkpoint of a
// large feedback buffer then leaves no garbage of its size behind for the
// collector, which would otherwise let the heap grow by that much at every
// checkpoint). The result aliases buf; it is valid until the next call.
func (ms *modelSet) marshalInto(buf []byte) ([]byte, error) {
	states := make([][]byte, len(ms.models))
	alts := make([][]byte, len(ms.models))  // the regression candidates' states
	malts := make([][]byte, len(ms.models)) // the multi-class candidates' states
	size := 4 + 4 + 8 + 4 + ms.pend.encodedSize() + 1 + 1 + len(ms.models) + 16*len(ms.models) + 2*len(ms.models)
	for i, m := range ms.models {
		st, err := m.state()
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", m.name, err)
		}
		states[i] = st
		size += 4 + len(m.name) + 4 + len(m.spec) + 5*8 + 4 + len(st)
		if m.mc != nil {
			size += 4 + 8*len(m.cls)
		}
		if m.alt != nil {
			if alts[i], err = m.alt.state(); err != nil {
				return nil, fmt.Errorf("model %s (regression candidate): %w", m.name, err)
			}
			size += 4 + len(m.alt.spec) + 5*8 + 4 + len(alts[i])
		}
		if m.malt != nil {
			if malts[i], err = m.malt.state(); err != nil {
				return nil, fmt.Errorf("model %s (multi-class candidate): %w", m.name, err)
			}
			size += 4 + len(m.malt.spec) + 5*8 + 4 + len(malts[i]) + 4 + 8*len(m.malt.cls)
		}
	}
	if ms.share != nil {
		size += 8 + 4 + 8*len(ms.share.Frontier)
	}
	if ms.labels != nil {
		size += ms.labels.EncodedSize()
	}
	var encState []byte
	size++                     // the feature kind (version 9)
	if ms.fkind == featNamed { // enc is set with the kind (modelSet.featuresOf)
		var err error
		if encState, err = ms.enc.MarshalBinary(); err != nil {
			return nil, fmt.Errorf("feature encoder: %w", err)
		}
		size += 4 + len(encState)
	}
	e := state.NewEncoderInto(buf, size)
	e.U32(payloadMagic)
	e.U32(payloadVersion)
	e.Int(ms.dim)
	e.U32(uint32(len(ms.models)))
	for i, m := range ms.models {
		st := states[i]
		e.String(m.name)
		e.String(m.spec)
		e.U64(m.updates)
		e.U64(m.stats.Labeled)
		e.U64(m.stats.Mistakes)
		e.F64(m.stats.SqErr)
		e.U64(m.stats.Resets)
		e.Blob(st)
	}
	ms.pend.encode(e)
	if ms.share == nil {
		e.U8(0)
	} else {
		e.U8(1)
		e.I64(ms.share.Count)
		e.U32(uint32(len(ms.share.Frontier)))
		for _, v := range ms.share.Frontier {
			e.I64(v)
		}
	}
	if ms.labels == nil {
		e.U8(0)
	} else {
		e.U8(1)
		ms.labels.Encode(e)
	}
	for i, m := range ms.models { // the regression candidates (undecided partitions)
		if m.alt == nil {
			e.U8(0)
			continue
		}
		st := alts[i]
		e.U8(1)
		e.String(m.alt.spec)
		e.U64(m.alt.updates)
		e.U64(m.alt.stats.Labeled)
		e.U64(m.alt.stats.Mistakes)
		e.F64(m.alt.stats.SqErr)
		e.U64(m.alt.stats.Resets)
		e.Blob(st)
	}
	for _, m := range ms.models { // the calibrations (version 6)
		e.F64(m.calib.A)
		e.F64(m.calib.B)
	}
	for _, m := range ms.models { // multi-class models (version 7)
		if m.mc == nil {
			e.U8(0)
			continue
		}
		e.U8(1)
		e.Ints(m.cls)
	}
	for i, m := range ms.models { // the multi-class candidates (version 7)
		a := m.malt
		if a == nil {
			e.U8(0)
			continue
		}
		e.U8(1)
		e.String(a.spec)
		e.U64(a.updates)
		e.U64(a.stats.Labeled)
		e.U64(a.stats.Mistakes)
		e.F64(a.stats.SqErr)
		e.U64(a.stats.Resets)
		e.Blob(malts[i])
		e.Ints(a.cls)
	}
	e.U8(ms.fkind) // version 9
	if ms.fkind == featNamed {
		e.Blob(encState)
	}
	return e.Bytes(), nil
}

// ErrPartitionsChanged reports a checkpoint of shared models taken when the
// input topic had another partition count: the sharing schedule (who merges
// whose deltas) is not defined across that change.
var ErrPartitionsChanged = errors.New("input partition count changed since the checkpoint of shared models")

// ErrDimensionChanged reports a checkpoint payload of another dimension
// than the configured one: a configuration change (--dim), so when it is
// why no checkpoint of a partition can be restored, the pipeline stops
// (like ErrModelChanged) instead of failing the partitions one by one.
var ErrDimensionChanged = errors.New("feature dimension changed since the checkpoint")

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
	// Alt is the regression candidate of a model whose task the labels of
	// an undecided partition are still deciding (payload version 5; nil
	// otherwise).
	Alt *ModelSummary
	// Calib is the model's probability calibration (payload version 6;
	// eval.NewPlatt() for an older payload).
	Calib eval.Platt
	// Multi marks a multi-class model (payload version 7): State is a
	// learner.Multi's (learner.NewMulti(Spec)), Classes its class map
	// (the model's class j is the label dictionary's class Classes[j]).
	Multi   bool
	Classes []int
	// MultiAlt is the multi-class candidate of a model whose undecided
	// partition's labels are strings (payload version 7; nil otherwise).
	MultiAlt *ModelSummary
}

// Payload is a decoded checkpoint payload.
type Payload struct {
	Dim     int
	Models  []ModelSummary
	Pending int // impressions awaiting feedback
	// Share is the sharing schedule's state (nil: no shared models, or a
	// payload older than version 4).
	Share *share.State
	// Labels is the label state: the task, the labels' kind and the class
	// dictionary (nil: no models, or a payload older than version 5).
	Labels *label.Map
	// FeatureKind is the kind of features the partition takes: "none" (no
	// event with features yet) or "" (a payload older than version 9,
	// which predates named features), "dense" (x or xi/xv) or "named" (f).
	FeatureKind string
	// Features is the named-feature encoder's state (FeatureKind "named";
	// nil otherwise): its Names and Kinds list the coordinates in use.
	Features *features.Encoder
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
		if version >= 3 {
			m.Stats.Resets = d.U64()
		}
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
			pend = newPending(pendingLimits{}, p.Dim)
		}
		if current == nil {
			current = names
		}
		q = pend.decode(d, version, names, current)
		p.Pending = q.len()
	} else if pend != nil {
		q = newPending(pend.lim, pend.dim)
	}
	if version >= 4 && d.U8() == 1 {
		st := share.State{Count: d.I64()}
		n := int(d.U32())
		if d.Err() == nil && (n < 1 || n > 1<<16) {
			d.Fail("share state of %d partitions", n)
		}
		if d.Need(n, 8, "share frontier") {
			st.Frontier = make([]int64, n)
			for i := range st.Frontier {
				st.Frontier[i] = d.I64()
			}
		}
		if d.Err() == nil && st.Count < 0 {
			d.Fail("share state: negative record count")
		}
		p.Share = &st
	}
	if version >= 5 {
		if d.U8() == 1 {
			p.Labels = label.New(label.Undecided, "")
			p.Labels.Decode(d)
		}
		for i := 0; i < len(p.Models) && d.Err() == nil; i++ {
			if d.U8() != 1 {
				continue
			}
			a := &ModelSummary{Name: p.Models[i].Name, Spec: d.String(), Updates: d.U64()}
			a.Stats = Stats{Labeled: d.U64(), Mistakes: d.U64(), SqErr: d.F64(), Resets: d.U64()}
			a.State = d.Blob()
			p.Models[i].Alt = a
		}
	}
	for i := range p.Models {
		p.Models[i].Calib = eval.NewPlatt()
		if version >= 6 {
			p.Models[i].Calib = eval.Platt{A: d.F64(), B: d.F64()}
		}
	}
	if version >= 7 {
		for i := 0; i < len(p.Models) && d.Err() == nil; i++ {
			switch d.U8() {
			case 0:
			case 1:
				p.Models[i].Multi = true
				p.Models[i].Classes = decodeClassMap(d)
			default:
				d.Fail("model %d: multi-class flag not 0 or 1", i)
			}
		}
		for i := 0; i < len(p.Models) && d.Err() == nil; i++ {
			if d.U8() != 1 {
				continue
			}
			a := &ModelSummary{Name: p.Models[i].Name, Spec: d.String(), Updates: d.U64(), Multi: true}
			a.Stats = Stats{Labeled: d.U64(), Mistakes: d.U64(), SqErr: d.F64(), Resets: d.U64()}
			a.State = d.Blob()
			a.Classes = decodeClassMap(d)
			p.Models[i].MultiAlt = a
		}
	}
	var fk uint8
	if version >= 9 {
		fk = d.U8()
		switch fk {
		case featNone, featDense:
		case featNamed:
			p.Features = decodeEncoder(d, d.Blob())
		default:
			d.Fail("feature kind %d", fk)
		}
	}
	if version >= 9 {
		p.FeatureKind = featKindName(fk)
	}
	if err := d.Done(); err != nil {
		return p, nil, fmt.Errorf("checkpoint payload: %w", err)
	}
	return p, q, nil
}

// decodeEncoder restores a feature encoder from its state b, with the
// configuration the state records (its header: package features' state
// format), failing d if b is not a valid state.
func decodeEncoder(d *state.Decoder, b []byte) *features.Encoder {
	if d.Err() != nil {
		return nil
	}
	h := state.NewDecoder(b)
	h.U32()
	h.U8()
	cfg := features.Config{Dim: h.Int(), MaxValuesPerName: h.Int(), Missing: features.Missing(h.U8()), MissingCategory: h.Bool()}
	if h.Err() != nil || cfg.Validate() != nil {
		d.Fail("feature encoder state: bad header")
		return nil
	}
	enc := features.New(cfg)
	if err := enc.UnmarshalBinary(b); err != nil {
		d.Fail("feature encoder state: %v", err)
		return nil
	}
	return enc
}

// decodeClassMap reads a multi-class model's class map: distinct
// dictionary classes, each below learner.MaxClasses.
func decodeClassMap(d *state.Decoder) []int {
	cls := d.Ints(nil)
	if d.Err() != nil {
		return nil
	}
	if len(cls) > learner.MaxClasses {
		d.Fail("class map of %d classes", len(cls))
		return nil
	}
	seen := make(map[int]bool, len(cls))
	for _, c := range cls {
		if c < 0 || c >= learner.MaxClasses || seen[c] {
			d.Fail("class map entry %d out of range or repeated", c)
			return nil
		}
		seen[c] = true
	}
	return cls
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
	if dim != ms.dim && dim != 0 {
		return nil, fmt.Errorf("%w: the checkpoint payload is for dimension %d, the pipeline is configured with --dim %d", ErrDimensionChanged, dim, ms.dim)
	}
	pl, pend, err := decodePayload(payload, ms.pend, current)
	if err != nil {
		return nil, err
	}
	if dim == 0 && (len(pl.Models) > 0 || pend.len() > 0) {
		return nil, errors.New("checkpoint payload of dimension 0 (a reset) holds models or impressions")
	}
	byName := map[string]ModelSummary{}
	for _, m := range pl.Models {
		byName[m.Name] = m
	}
	labels := ms.restoredLabels(pl)
	if labels != nil && labels.Task == label.MultiClass && ms.pend.enabled() {
		return nil, fmt.Errorf("the checkpoint is of a multi-class partition: %w", errMultiFeedback)
	}
	// Build the restored models aside, then swap them in.
	next := make([]*model, len(ms.models))
	for i, m := range ms.models {
		if m.flex != "" && labels != nil && labels.Task != label.Undecided {
			// The checkpoint decided the task: the model as it runs for it.
			var dm *model
			var err error
			if labels.Task == label.MultiClass {
				dm, err = newMultiModel(Model{Name: m.name, Spec: multiSpec(m.flex)}, ms.dim)
			} else {
				dm, err = newModel(Model{Name: m.name, Spec: label.ResolveSpec(m.flex, labels.Task)}, ms.dim)
			}
			if err != nil {
				return nil, err
			}
			m = dm
		}
		s, ok := byName[m.name]
		if !ok {
			next[i] = m
			fresh = append(fresh, m.name)
			continue
		}
		if s.Spec != m.spec || s.Multi != (m.mc != nil) {
			if !reset {
				if s.Spec == m.spec {
					return nil, fmt.Errorf("%w: model %s was %s, is now %s (the task changed); restore the old --task, give the model another name, or run with --on-model-change=reset to start it fresh",
						ErrModelChanged, m.name, taskKind(s.Multi), taskKind(m.mc != nil))
				}
				return nil, fmt.Errorf("%w: model %s was %q, is now %q; restore the old --model, give the new one another name, or run with --on-model-change=reset to start it fresh",
					ErrModelChanged, m.name, s.Spec, m.spec)
			}
			next[i] = m
			fresh = append(fresh, m.name)
			continue
		}
		var nm *model
		if m.mc != nil {
			nm, err = newMultiModel(Model{Name: m.name, Spec: m.spec}, ms.dim)
		} else {
			nm, err = newModel(Model{Name: m.name, Spec: m.spec}, ms.dim)
		}
		if err != nil {
			return nil, err
		}
		nm.flex = m.flex
		if m.malt != nil { // still undecided: the multi-class candidate as checkpointed (fresh if it was not)
			if nm.malt, err = newMultiModel(Model{Name: m.name, Spec: m.malt.spec}, ms.dim); err != nil {
				return nil, err
			}
			if a := s.MultiAlt; a != nil && a.Spec == m.malt.spec {
				if err := nm.malt.unmarshal(a.State); err != nil {
					return nil, fmt.Errorf("model %s (multi-class candidate): %w", m.name, err)
				}
				if err := nm.malt.restoreClasses(a.Classes); err != nil {
					return nil, fmt.Errorf("model %s (multi-class candidate): %w", m.name, err)
				}
				nm.malt.updates, nm.malt.stats = a.Updates, a.Stats
			}
		}
		if m.alt != nil { // still undecided: the candidate as checkpointed (fresh if it was not)
			if nm.alt, err = newModel(Model{Name: m.name, Spec: m.alt.spec}, ms.dim); err != nil {
				return nil, err
			}
			if s.Alt != nil && s.Alt.Spec == m.alt.spec {
				if err := nm.alt.l.UnmarshalBinary(s.Alt.State); err != nil {
					return nil, fmt.Errorf("model %s (regression candidate): %w", m.name, err)
				}
				nm.alt.updates, nm.alt.stats = s.Alt.Updates, s.Alt.Stats
			}
		}
		if err := nm.unmarshal(s.State); err != nil {
			return nil, fmt.Errorf("model %s: %w", m.name, err)
		}
		if nm.mc != nil {
			if err := nm.restoreClasses(s.Classes); err != nil {
				return nil, fmt.Errorf("model %s: %w", m.name, err)
			}
		}
		nm.updates = s.Updates
		nm.stats = s.Stats
		nm.calib = s.Calib
		next[i] = nm
	}
	if ms.share != nil && pl.Share != nil {
		if len(pl.Share.Frontier) != len(ms.share.Frontier) {
			return nil, fmt.Errorf("%w: it had %d partitions, it has %d now (shared models need a fixed partition count: keep it, or start them fresh with another --group or --checkpoint-topic)",
				ErrPartitionsChanged, len(pl.Share.Frontier), len(ms.share.Frontier))
		}
	}
	if ms.share != nil {
		if pl.Share != nil {
			*ms.share = pl.Share.Clone()
		} else {
			*ms.share = share.NewState(len(ms.share.Frontier))
		}
	}
	var enc *features.Encoder
	if pl.Features != nil {
		if pl.Features.Config() != ms.fcfg {
			return nil, fmt.Errorf("%w: the checkpoint's named-feature encoder is %s, the pipeline is configured with %s; restore the old --max-values-per-name, --missing and --missing-category, or give the partition fresh models (okstream checkpoints reset, or another --group)",
				ErrModelChanged, encoderFlags(pl.Features.Config()), encoderFlags(ms.fcfg))
		}
		enc = pl.Features
	}
	ms.models = next
	ms.labels = labels
	ms.enc, ms.fkind = enc, 0
	switch pl.FeatureKind {
	case "dense":
		ms.fkind = featDense
	case "named":
		ms.fkind = featNamed
	}
	if ms.fkind == featNone && pl.FeatureKind == "" && ms.anyLearnt() {
		// A payload before version 9: its models learnt from dense
		// events, the only kind before named features, so a named event
		// must not reach them. (A later payload that says none although
		// its models learnt is forged: declareKinds resets a model that
		// refuses the kinds.)
		ms.fkind = featDense
	}
	ms.pruneCandidates()
	ms.pend = pend
	ms.learnt = false // the restored states were checked before they were checkpointed
	ms.kinds = kinds.Declarer{}
	if ms.enc != nil {
		// The restored learners hold the kinds they were given (a
		// one-vs-rest learner keeps them outside its state, and a model
		// restored fresh has none): declare them again, a no-op where
		// they are known.
		if ks, ok := ms.kinds.Changed(ms.enc); ok {
			ms.declareKinds(ks)
		}
	}
	return fresh, nil
}

// encoderFlags spells an encoder configuration as okstream run's flags.
func encoderFlags(c features.Config) string {
	return fmt.Sprintf("--dim %d --max-values-per-name %d --missing %s --missing-category=%v", c.Dim, c.MaxValuesPerName, c.Missing, c.MissingCategory)
}

// admit reports whether the partition takes an event whose features are of
// kind (featDense or featNamed): "" if so, else the dead-letter reason and
// detail. It changes nothing (the caller sets the kind once the event is
// accepted). shared: some models are shared across partitions, whose
// feature dictionaries differ, so named events cannot be learnt.
func (ms *modelSet) admit(kind uint8, shared bool) (reason, detail string) {
	if kind == featNamed {
		if shared {
			return reasonNamedFeatures, "named features (\"f\") with shared models (--share): each partition learns its own feature dictionary, so the partitions' coordinates differ and their models cannot be merged; send the features as x or xi/xv, or run without --share"
		}
		if ms.fcfg.Dim == 0 {
			return reasonNamedFeatures, fmt.Sprintf("named features (\"f\") need --dim at most %d (the feature dictionary's coordinates); it is %d", features.MaxDim, ms.dim)
		}
	}
	if ms.fkind == featNone || ms.fkind == kind {
		return "", ""
	}
	return reasonFeatureKind, fmt.Sprintf("a %s event in a partition of %s events: the partition's first event with features fixed the kind (a dense x and the named-feature dictionary's coordinates would mean different things to the same models); send every event of the partition as %s, or give the partition fresh models (okstream checkpoints reset --to-offset) when the producers change",
		featKindName(kind), featKindName(ms.fkind), kindSpelling(ms.fkind))
}

// kindSpelling is how an event carries features of kind k.
func kindSpelling(k uint8) string {
	if k == featNamed {
		return "named features (\"f\")"
	}
	return "x or xi/xv"
}

// encode returns the models' input for named fields (reusing dst), through
// the partition's encoder (made at its first named event); the partition's
// feature kind is named from then on. The error is the encoder's (a
// *features.MissingError under --missing refuse), and then nothing changed.
func (ms *modelSet) encode(fields []codec.Field, dst []float64) ([]float64, error) {
	if ms.enc == nil {
		ms.enc = features.New(ms.fcfg)
	}
	x, err := ms.enc.Encode(fields, dst)
	if err == nil {
		ms.fkind = featNamed
		if ks, changed := ms.kinds.Changed(ms.enc); changed {
			ms.declareKinds(ks)
		}
	}
	return x, err
}

// anyLearnt reports whether a model or candidate has learnt an event.
func (ms *modelSet) anyLearnt() bool {
	for _, m := range ms.models {
		for _, x := range [...]*model{m, m.alt, m.malt} {
			if x != nil && x.updates > 0 {
				return true
			}
		}
	}
	return false
}

// declareKinds gives every model (and candidate) the kinds of the
// encoder's coordinates (learner.KindAware: the self-tuning wrapper leaves
// indicators unstandardised and scales a numeric coordinate that appears
// after its warm-up from its own first values), before any of them sees
// the event that allocated them: at every event that allocated
// coordinates, after a restore, and to a model rebuilt by a reset.
// Deterministic: the same events give the same declarations. A learner
// that refuses them (it has seen values where the encoder says a new
// coordinate starts: only a forged or mismatched checkpoint gets there,
// the runtime never feeds a partition both kinds of features) is reset
// and the fresh learner takes them; never fatal.
func (ms *modelSet) declareKinds(ks []learner.FeatureKind) {
	for _, m := range ms.models {
		for _, x := range [...]*model{m, m.alt, m.malt} {
			if x != nil && x.declareKinds(ks) != nil {
				ms.reset(x, resetFeatureKinds) // reset declares the kinds to the fresh learner
			}
		}
	}
}

// declareKinds gives m's own learner the kinds (not its candidates').
func (m *model) declareKinds(ks []learner.FeatureKind) error {
	var l any = m.l
	if m.mc != nil {
		l = m.mc
	}
	return kinds.Give(ks, l)
}

// restoredLabels is the label state a restore of pl resumes with (nil
// without models): the checkpoint's, unless the configured task is another
// (--task changed: the configured one starts afresh); for a payload older
// than version 5, the configured task, or for an undecided one the task of
// the checkpointed models if they learnt anything (an older build ran the
// default model as a binary classifier).
func (ms *modelSet) restoredLabels(pl Payload) *label.Map {
	if ms.labels == nil {
		return nil
	}
	cur := ms.labels
	l := label.New(cur.Task, cur.Positive)
	l.RequirePositive, l.Warmup = cur.RequirePositive, cur.Warmup
	l.MaxClasses, l.NoMulti = cur.MaxClasses, cur.NoMulti
	if pl.Labels != nil {
		if cur.Task != label.Undecided && pl.Labels.Task != cur.Task {
			return l
		}
		r := *pl.Labels
		r.Positive, r.RequirePositive, r.Warmup = cur.Positive, cur.RequirePositive, cur.Warmup
		r.MaxClasses, r.NoMulti = cur.MaxClasses, cur.NoMulti
		return &r
	}
	if l.Task == label.Undecided {
		for _, s := range pl.Models {
			if s.Stats.Labeled == 0 && s.Updates == 0 {
				continue
			}
			if lr, err := learner.New(s.Spec, max(ms.dim, 1)); err == nil {
				l.Task = label.OfLearner(lr.Info().Task)
				break
			}
		}
	}
	return l
}

// ResetPayload is a checkpoint payload with no models and no pending
// impressions, of dimension 0, which a pipeline of any dimension restores
// as "every configured model fresh": what okstream checkpoints reset
// --to-offset saves, so that a partition resumes at a chosen offset with
// fresh models.
func ResetPayload() []byte {
	ms := &modelSet{pend: newPending(pendingLimits{}, 0)}
	b, err := ms.marshal()
	if err != nil { // no learner to marshal: cannot happen
		panic(err)
	}
	return b
}

// peekDim reads the dimension of a payload without decoding the rest.
func peekDim(payload []byte) (int, error) {
	d := state.NewDecoder(payload)
	d.U32()
	d.U32()
	dim := d.Int()
	return dim, d.Err()
}
