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

// Changed returns e's kinds (as learner.FeatureKind; valid until the next
// call) and true when e allocated coordinates since the last call (or a
// Reset), else nil and false.
func (d *Declarer) Changed(e *features.Encoder) ([]learner.FeatureKind, bool) {
	n := e.Stats().Coords
	if n == d.coords {
		return nil, false
	}
	d.coords = n
	d.kinds = d.kinds[:0]
	for _, k := range e.Kinds() {
		d.kinds = append(d.kinds, learner.FeatureKind(k))
	}
	return d.kinds, true
}

// Current returns the kinds last returned by Changed (nil before).
func (d *Declarer) Current() []learner.FeatureKind { return d.kinds }

// Declare gives every learner in ls that is learner.KindAware the kinds of
// e's coordinates if they changed since the last call. An error (a learner
// refusing the kinds: a runtime bug, see learner.KindAware) is returned as
// is; the learners before it have taken the kinds.
func (d *Declarer) Declare(e *features.Encoder, ls ...any) error {
	ks, ok := d.Changed(e)
	if !ok {
		return nil
	}
	return Give(ks, ls...)
}

// Give declares kinds to every learner in ls that is learner.KindAware.
func Give(kinds []learner.FeatureKind, ls ...any) error {
	for _, l := range ls {
		if ka, ok := l.(learner.KindAware); ok {
			if err := ka.SetFeatureKinds(kinds); err != nil {
				return err
			}
		}
	}
	return nil
}
