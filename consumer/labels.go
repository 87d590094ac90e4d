package consumer

import (
	"fmt"

	"okstream/codec"
	"okstream/eval"
	"okstream/label"
	"okstream/learner"
)

// ReasonInvalidLabel is the dead-letter reason of an event whose label does
// not fit its partition's task: a number other than -1/+1, 0/1 on a binary
// stream (or the second of -1 and 0), a third string class on a binary
// stream, a new class beyond --max-classes on a multi-class one, a bool or
// string on a regression stream, a label of another kind than the
// partition's earlier labels. Package label has the rules; each partition's
// mapping (task, class dictionary) is checkpointed with its models.
const ReasonInvalidLabel = reasonBadLabel

// DefaultTopK is the number of classes a multi-class model's prediction
// record lists (codec.ModelScore.Dist, "pd"; okstream run --top-k): the
// most probable first. 0 lists every class.
const DefaultTopK = 3

// Multi-class models.
//
// A multi-class model (model.mc, a learner.Multi) learns the classes of
// its partition's class dictionary (label.Map: indices 0..D−1 in order of
// first appearance). A learner's own classes grow online only by learning
// one (LearnClass with c == K), so a model that starts after the
// dictionary has grown — a model added to the configuration, or one reset
// by the non-finite guard — meets classes in another order: cls maps the
// model's class j to the dictionary's class cls[j] (the identity for a
// model that has run from the start), and inv back (−1: a class the model
// has not learnt, whose probability is 0). cls is checkpointed with the
// model (payload version 7).

// newMultiModel builds a multi-class model of spec c.Spec.
func newMultiModel(c Model, dim int) (*model, error) {
	l, err := learner.NewMulti(c.Spec, dim)
	if err != nil {
		return nil, fmt.Errorf("model %s (multi-class): %w", c.Name, err)
	}
	_, _, detects := learner.MultiChangeCount(l)
	return &model{name: c.Name, spec: l.Info().Spec, mc: l, classify: true, calib: eval.NewPlatt(), detects: detects}, nil
}

// multiSpec is the multi-class form of a configured spec (label.ResolveSpec).
func multiSpec(spec string) string { return label.ResolveSpec(spec, label.MultiClass) }

// dictClass returns the model class of dictionary class c, or −1.
func (m *model) dictClass(c int) int {
	if c < len(m.inv) {
		return int(m.inv[c])
	}
	return -1
}

// setClasses installs the class map cls (model class j → dictionary class).
func (m *model) setClasses(cls []int) {
	m.cls = append(m.cls[:0], cls...)
	m.inv = m.inv[:0]
	for j, c := range m.cls {
		for len(m.inv) <= c {
			m.inv = append(m.inv, -1)
		}
		m.inv[c] = int32(j)
	}
}

// dist spreads the model's distribution q (over its K classes) over the d
// dictionary classes into m.pd and returns m.pd[:d].
func (m *model) dist(q []float64, d int) []float64 {
	if cap(m.pd) < d {
		m.pd = make([]float64, d, 2*d)
	}
	pd := m.pd[:d]
	clear(pd)
	for j, v := range q {
		if c := m.cls[j]; c < d {
			pd[c] = v
		}
	}
	return pd
}

// scratch returns the model's buffer for a distribution over its classes
// and one more (LearnClass's new class).
func (m *model) scratch() []float64 {
	if k := m.mc.Classes() + 1; cap(m.pm) < k {
		m.pm = make([]float64, k, 2*k)
	}
	return m.pm[:cap(m.pm)]
}

// stepMulti is step for a multi-class model: its distribution of x over
// the d dictionary classes (predict, hasY false; predict-then-learn class
// c, hasY true), under the same non-finite guard: a distribution with a
// non-finite entry resets the model to a fresh learner of its spec and the
// event is run again; if the fresh model's is not finite either (or its
// prediction of x after learning it), it is reset once more, so the event
// leaves no trace, and the distribution is published as it is.
func (ms *modelSet) stepMulti(m *model, x []float64, c, d int, hasY bool) (pd []float64, before uint64) {
	run := func() []float64 {
		before = m.updates
		if !hasY {
			return m.dist(m.mc.PredictProba(x, m.scratch()), d)
		}
		m.updates++
		m.tally.updates++
		j := m.dictClass(c)
		if j < 0 {
			j = m.mc.Classes()
		}
		q := m.mc.LearnClass(x, j, m.scratch())
		if j == len(m.cls) { // a class new to the model
			m.cls = append(m.cls, c)
			for len(m.inv) <= c {
				m.inv = append(m.inv, -1)
			}
			m.inv[c] = int32(j)
		}
		return m.dist(q, d)
	}
	if pd = run(); finiteAll(pd) {
		if hasY && m.detects {
			ms.noteChanges(m)
		}
		return pd, before
	}
	m.tally.nonFinite++
	ms.reset(m, resetNonFinite)
	// The fresh model knows no class, so its distribution is empty and
	// says nothing: whether the event poisoned it shows in its prediction
	// after learning.
	if pd = run(); !finiteAll(pd) || (hasY && !m.finiteOn(x)) {
		m.tally.nonFinite++
		ms.reset(m, resetNonFinite)
	}
	return pd, before
}

func finiteAll(p []float64) bool {
	for _, v := range p {
		if !finite(v) {
			return false
		}
	}
	return true
}

// countMulti adds a labelled event of class c, with the model's
// distribution pd before it learned, to its statistics: a mistake when the
// most probable class (argmax, first on ties; none while pd is all 0) is
// not c; the log loss −log pd[c] (clipped as eval.LogLoss clips); the Brier
// score Σ_k (pd_k − [k = c])², kept in SqErr (so Stats.MSE is the Brier
// score) and in the loss counter.
func (m *model) countMulti(pd []float64, c int) {
	m.stats.Labeled++
	m.tally.labeled++
	if best := argmaxPos(pd); best != c {
		m.stats.Mistakes++
		m.tally.mistakes++
	}
	pc := 0.0
	if c < len(pd) {
		pc = pd[c]
	}
	if b := brier(pd, c); finite(b) {
		m.stats.SqErr += b
		m.tally.loss += b
	}
	m.tally.logLoss += eval.LogLoss(pc, 1)
}

// argmaxPos is the most probable class of pd, first on ties, or −1 when
// no entry is positive.
func argmaxPos(pd []float64) int {
	best := learner.ArgMax(pd)
	if best >= 0 && !(pd[best] > 0) {
		return -1
	}
	return best
}

// brier is Σ_k (p_k − [k = c])² over p (a class c beyond p counts 1).
func brier(p []float64, c int) float64 {
	s := 0.0
	for k, v := range p {
		if k == c {
			v -= 1
		}
		s += v * v
	}
	if c >= len(p) {
		s++
	}
	return s
}

// multiScore is the published score of a multi-class model: its most
// probable class (Class, "" while none; ClassIndex its dictionary index,
// −1), that class's probability (Score)
// and the top k classes (Dist, most probable first, ties in dictionary
// order; k = 0: all), named by the partition's dictionary. Dist aliases
// the model's buffer. It allocates only when the dictionary grows.
func (ms *modelSet) multiScore(m *model, pd []float64, before uint64) codec.ModelScore {
	best := argmaxPos(pd)
	s := codec.ModelScore{Name: m.name, Updates: before, Multi: true, ClassIndex: best}
	if best >= 0 {
		s.Class, s.Score = ms.labels.ClassNameOf(best), pd[best]
	}
	k := ms.topK
	if k <= 0 || k > len(pd) {
		k = len(pd)
	}
	if cap(m.top) < k {
		m.top = make([]codec.ClassProb, 0, k)
	}
	top := m.top[:0]
	for i, v := range pd { // insertion into the sorted top k: O(len(pd)·k)
		if len(top) == k && !(v > top[k-1].Prob) {
			continue
		}
		if len(top) < k {
			top = append(top, codec.ClassProb{})
		}
		j := len(top) - 1
		for ; j > 0 && v > top[j-1].Prob; j-- {
			top[j] = top[j-1]
		}
		top[j] = codec.ClassProb{Class: ms.labels.ClassNameOf(i), Prob: v}
	}
	m.top = top
	s.Dist = top
	return s
}

// classPrior is the multi-class baseline: the running class frequencies
// with Laplace's rule over the D classes seen before each event,
// p_k = (n_k + 1)/(N + D) (a class never seen: 0), deciding the most
// frequent class (the first to reach the largest count). It is the
// multi-class form of eval.Prior, and like the rest of the baseline it is
// process-local. O(1) per event: Σ_k (n_k + 1)² is kept for the Brier
// score.
type classPrior struct {
	n    []uint64 // per dictionary class
	sum  uint64   // N
	sq   float64  // Σ_k (n_k + 1)²
	best int      // the most frequent class (−1: none yet)
	init bool
}

// add learns class c.
func (b *classPrior) add(c int) {
	if !b.init {
		b.best, b.init = -1, true
	}
	for len(b.n) <= c {
		b.n = append(b.n, 0)
		b.sq++
	}
	b.sq += float64(2*b.n[c] + 3) // (n+2)² − (n+1)²
	b.n[c]++
	b.sum++
	if b.best < 0 || b.n[c] > b.n[b.best] {
		b.best = c
	}
}

// countClass scores class c with the class prior (mistake, log loss,
// Brier score into the tally's sqErr), then learns it.
func (b *baseline) countClass(c int) {
	p := &b.classes
	t := &b.tally
	t.labeled++
	d := float64(len(p.n))
	pc, norm := 0.0, float64(p.sum)+d
	if c < len(p.n) {
		pc = float64(p.n[c]+1) / norm
	}
	if !p.init || p.best != c {
		t.mistakes++
	}
	t.logLoss += eval.LogLoss(pc, 1)
	if norm > 0 {
		t.sqErr += p.sq/(norm*norm) - 2*pc + 1
	} else {
		t.sqErr++
	}
	p.add(c)
}
