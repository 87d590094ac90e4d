package learner

import "fmt"

// Merger is implemented by learners whose state can absorb another model's:
// after a.Merge(b), a is the model trained on a's data and then b's.
//
// It exists for learners whose state is a sufficient statistic of the data
// seen, so that models trained on different partitions of a stream (one per
// Kafka partition, say) combine into exactly the model trained on all their
// data:
//
//   - PKAWV with the Taylor basis (pkawv.go): the state is A = λI + Σφφᵀ
//     and b = Σyφ, plain sums, so merging adds them (and refactors A, O(r³));
//     the result equals single-stream training up to floating-point
//     rounding (TestMergeTaylorHalvesEqualsConcatenation: 1e-9).
//   - Exact Kernel-AWV (kawv.go): the state holds every point, so merging
//     appends b's points to a in b's order, which is bit for bit the model
//     trained on a's stream followed by b's.
//
// PKAWV with the Nyström basis is not mergeable (its Merge returns an
// error saying why): its dictionary is drawn online and its Gram factor
// couples every past point with every dictionary point, so two models
// trained apart lack the cross terms κ(x_a, x̃_b) a merged model needs.
//
// Merge refuses, with an error and without changing the receiver, a model
// of another learner, spec or dimension, and any state the receiver cannot
// absorb exactly. other is never modified; a learner may be merged with
// itself (its data then counts twice). Info().Updates of the result is the
// sum of both.
type Merger interface {
	Merge(other Learner) error
}

// Merge merges src into dst (see Merger), or explains why dst's learner
// cannot merge.
func Merge(dst, src Learner) error {
	m, ok := dst.(Merger)
	if !ok {
		return fmt.Errorf("learner %s does not support merging (its state is not a sufficient statistic of the data)", dst.Info().Name)
	}
	return m.Merge(src)
}

// mergeCompatible checks that other is a model of the same learner, spec
// and dimension as b.
func (b *base) mergeCompatible(other Learner) error {
	oi := other.Info()
	if oi.Name != b.name || oi.Spec != b.spec || oi.Dim != b.dim {
		return fmt.Errorf("learner %s: cannot merge a model of %q (dimension %d) into %q (dimension %d): specs and dimensions must be identical", b.name, oi.Spec, oi.Dim, b.spec, b.dim)
	}
	return nil
}
