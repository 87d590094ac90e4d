// Package linalg holds okstream's shared numerical building blocks on top of
// gonum: symmetric eigendecompositions, pseudo-inverses, rank-one updates,
// Cholesky growth and updates, the truncated incremental SVD and the
// sketches. There is one implementation of each; learners call these rather
// than re-deriving them.
//
// Conventions (as in gonum): matrices are dense row-major []float64 with an
// explicit shape stated in each doc comment; results are written into a
// destination the caller can reuse; functions panic on shape mismatches
// (programming errors) and return errors only for numerical failures.
package linalg
