// Package kinds tells learners the feature kinds of a features.Encoder's
// coordinates (learner.KindAware). It is apart from package features so
// that package features does not import package learner (whose tests use
// features).
package kinds

import (
	"okstream/features"
	"okstream/learner"
)

// Declarer tells learners the encoder's feature kinds (learner.KindAware:
// the self-tuning wrapper then leaves indicators unstandardised and scales a
// numeric coordinate that appears after its warm-up from its own first
// values). Call Declare after every Encode and before any learner sees the
// event: it calls SetFeatureKinds only when the encoder has allocated
// coordinates since the last call, so the learners see the same
// declarations at the same events in every run (determinism) and the steady
// state costs one comparison. After a restore, call Reset and then Declare
// once, so that learners restored without the kinds they had (a
// one-vs-rest learner keeps them outside its state) get them again.
type Declarer struct {
	coords int
	kinds  []learner.FeatureKind
}

// Reset makes the next Declare call SetFeatureKinds whatever the encoder's
// coordinates.
func (d *Declarer) Reset() { d.coords = -1 }

// Declare gives every learner in ls that is learner.KindAware the kinds of
// e's coordinates if they changed since the last call. An error (a learner
// refusing the kinds: a runtime bug, see learner.KindAware) is returned as
// is; the learners before it have taken the kinds.
func (d *Declarer) Declare(e *features.Encoder, ls ...any) error {
	n := e.Stats().Coords
	if n == d.coords {
		return nil
	}
	d.coords = n
	d.kinds = d.kinds[:0]
	for _, k := range e.Kinds() {
		d.kinds = append(d.kinds, learner.FeatureKind(k))
	}
	for _, l := range ls {
		if ka, ok := l.(learner.KindAware); ok {
			if err := ka.SetFeatureKinds(d.kinds); err != nil {
				return err
			}
		}
	}
	return nil
}
