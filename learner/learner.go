// Package learner defines the contract every online learner in okstream
// satisfies, the registry that builds learners from textual specs, and the
// learners themselves (one file per algorithm, each opening with its paper
// reference and its deviations from the paper).
//
// A learner is a deterministic state machine. It imports no Kafka, no clock,
// no network and no files: the same spec, seed and input sequence give
// bit-identical scores and state, also after MarshalBinary/UnmarshalBinary at
// any point. That is what makes the runtime's recovery exact.
//
// Protocol (progressive validation): for every event the caller asks for the
// score first (Predict for unlabelled events, Learn for labelled ones, which
// returns the score it had before updating), so no label is ever used before
// its own prediction.
//
// Learners are not safe for concurrent use: they keep scratch buffers so that
// Predict and Learn do not allocate in steady state. The runtime gives every
// partition its own learner instance.
package learner

import (
	"encoding"
	"fmt"
)

// Learner is an online learner. x always has the dimension the learner was
// built with (the runtime validates events before they get here); a learner
// may panic on a wrong-length x.
type Learner interface {
	// Predict returns the score f_t(x). It never changes the model.
	Predict(x []float64) float64
	// Learn predicts x, then updates the model with label y, and returns the
	// pre-update score. For classification y is −1 or +1.
	Learn(x []float64, y float64) (score float64)
	// MarshalBinary returns the complete state (model, counters, RNG state).
	encoding.BinaryMarshaler
	// UnmarshalBinary restores a state written by MarshalBinary of a learner
	// built from the same canonical spec and dimension; it refuses any other
	// state with an error and leaves the learner unchanged in that case.
	// The bytes are untrusted: the error wraps state.ErrCorrupt (or is a
	// *state.MismatchError for a state of another configuration), no input
	// makes it panic, and a state of n bytes never costs more than O(n) +
	// O(configured budget) allocation (see package state).
	encoding.BinaryUnmarshaler
	// Info describes the learner and its resource use.
	Info() Info
}

// Task is what a learner predicts.
type Task int

const (
	// Classification is binary classification with labels −1/+1; the decision
	// is sign(score) and a score of exactly 0 counts as a mistake.
	Classification Task = iota + 1
	// Regression predicts a real label; the loss reported is the square loss.
	Regression
)

func (t Task) String() string {
	switch t {
	case Classification:
		return "classification"
	case Regression:
		return "regression"
	}
	return fmt.Sprintf("Task(%d)", int(t))
}

// Info describes a learner.
type Info struct {
	Name    string // registry name, e.g. "fogd"
	Spec    string // canonical spec: every parameter, defaults included, keys sorted
	Task    Task
	Dim     int    // input dimension
	Updates uint64 // number of Learn calls so far
	// Budget is the configured size of the model (stored examples, features,
	// dictionary cap); 0 if the learner has none.
	Budget int
	// Used is how much of it is in use now (stored examples or features).
	Used int
	// Bytes is the approximate memory held by the model's state.
	Bytes int
}

// Mistake reports whether score is a mistake on label y under the
// classification rule sign(score), with a score of exactly 0 a mistake —
// and a NaN score too (a diverged model must not count as right; codec's
// Decision maps NaN to 0 for the same reason). Every mistake count in
// okstream (eval, the consumer's statistics, the perceptron updates) uses
// this rule.
func Mistake(score, y float64) bool {
	return !(score*y > 0)
}

// FeatureKind is what an input coordinate holds, as the runtime's feature
// encoder (package features) knows it. Its values equal features.Kind's
// (KindUnused, KindNumeric, KindIndicator, KindMissing), so the runtime
// converts with a cast; TestFeatureKindMatchesEncoder checks it.
type FeatureKind uint8

const (
	// FeatureUnknown: nothing declared (the default for every coordinate,
	// and what a dense event's coordinates always are): standardised as a
	// number with the warm-up statistics (scale.go).
	FeatureUnknown FeatureKind = iota
	// FeatureNumeric: a number. Declared before the first Learn it is
	// standardised as FeatureUnknown; declared later (a field that appears
	// mid-stream) it is a late numeric coordinate: its input is 0 until it
	// has W values of its own, whose robust centre and scale are then
	// frozen (docs/algorithms/selftune.md "Indicators and late numbers").
	FeatureNumeric
	// FeatureIndicator: a 0/1 indicator of a categorical value. Not
	// standardised: centre 0, scale 1.
	FeatureIndicator
	// FeatureMissing: a 0/1 missing-value indicator; treated as
	// FeatureIndicator.
	FeatureMissing
)

func (k FeatureKind) String() string {
	switch k {
	case FeatureUnknown:
		return "unknown"
	case FeatureNumeric:
		return "numeric"
	case FeatureIndicator:
		return "indicator"
	case FeatureMissing:
		return "missing"
	}
	return fmt.Sprintf("FeatureKind(%d)", uint8(k))
}

// KindAware is implemented by a learner (or a multi-class learner) whose
// input transform depends on what its coordinates hold: the self-tuning
// wrapper with scale=standard (selftune.go). A learner that does not
// implement it (raw features: scale=none, an explicit σ, linear) treats
// every coordinate alike, and the runtime has nothing to tell it.
//
// Protocol: the runtime calls SetFeatureKinds with its encoder's kinds
// (features.Encoder.Kinds, converted element by element) after every
// Encode that allocated a coordinate and before the models see that
// event, so a coordinate is declared no later than the first event in
// which it can be non-zero. The kinds are part of the learner's state
// (MarshalBinary), so a restored learner needs no call; calling again with
// the same kinds is a no-op, which makes "declare after every restore" safe
// too. A learner whose SetFeatureKinds was never called behaves, and
// writes its state, exactly as before the interface existed.
type KindAware interface {
	// SetFeatureKinds declares the kinds of coordinates 0..len(kinds)−1
	// (len(kinds) ≤ the input dimension; FeatureUnknown entries declare
	// nothing). A coordinate's kind can be declared once: an entry that
	// differs from an earlier declaration of the same coordinate, an
	// unknown kind value, too many entries, or (during the warm-up) a
	// coordinate that was already non-zero in a buffered event gets an
	// error and the learner is left unchanged. It does not allocate once
	// every coordinate has been declared.
	SetFeatureKinds(kinds []FeatureKind) error
}
