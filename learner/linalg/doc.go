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
//
// # Contents
//
//   - Dense helpers: Dot, Axpy, MatVec, MatTVec, Mul, Symmetrize (gonum's
//     BLAS level 1–2 assembly kernels from length 8 on, plain loops below).
//   - Spectral: SymEig (all eigenpairs); SymTopK (the k largest eigenpairs:
//     tridiagonal reduction, Dsterf eigenvalues, dstein-style
//     inverse iteration, 3–5× faster than SymEig at n = 1000); TruncSVD with
//     TruncatedSVD (exact, via one full SVD), TruncatedSymPSD (exact, PSD
//     input, via SymTopK; FORKS' and SkeGD's Φ_pp) and RandomizedSVD
//     (Halko–Martinsson–Tropp, SkeGD); Pinv with the MATLAB tolerance
//     PinvTol.
//   - TISVD: truncated incremental SVD under low-rank updates (FORKS).
//   - Sketches: SJLT (sparse JL / CountSketch S_p in streaming form) with the
//     batch products Φ_pm, Φ_pp and the incremental Insert; SampleColumns
//     (S_m); SketchedNystromMap (Z = Φ_pm^† V Σ^{1/2}; FORKS, SkeGD).
//   - Second-order online steps: ShermanMorrison (A⁻¹ under A += s g gᵀ) and
//     SlabProject/Clip (the A-norm projection of ONS with a generalized
//     projection; FORKS, PROS-N-KONS, NONS-ALD).
//   - Cholesky: a growing lower factor (append a row, forward/back solves,
//     ALD's projection residual) with rank-one update and downdate (ALD,
//     NONS-ALD, KORS/PKAWV).
//
// # Allocation
//
// Per-event routines never allocate: Dot, Axpy, MatVec, MatTVec, Mul, ShermanMorrison,
// SlabProject, the Cholesky solves, ProjectionResidual, RankOneUpdate and
// RankOneDowndate, Cholesky.Append and SJLT.AddRow/Insert below the
// capacity given at construction. Per-update-round routines hold their
// scratch in a receiver or an *SVDWork and do not allocate once warmed up:
// TISVD.Update (pre-sized by NewTISVD, so not even the first call
// allocates), Pinv and SketchedNystromMap with a reused SVDWork, and
// TruncatedSVD, TruncatedSymPSD (with a reused SymTopKWork) and
// RandomizedSVD into a reused TruncSVD, and SymTopK, with one caveat:
// on larger matrices (about 128 in both dimensions, or 192 in one) gonum's
// blocked LAPACK reaches its parallel Dgemm, which starts goroutines and
// allocates a little (the results stay deterministic). Initialization routines (SketchPP,
// TISVD.Init, SampleColumns, SymEig) may allocate.
//
// # Determinism
//
// Nothing here draws random numbers except from an explicit *rng.Source
// argument (SJLT.AddRow/Insert, RandomizedSVD, SampleColumns), with the draw
// order documented, so results are a pure function of the inputs and the
// generator's state. Every routine is a fixed sequence of floating-point
// operations: the same inputs give bit-identical outputs on the same
// platform. Last-bit agreement across architectures is not promised (gonum
// uses assembly kernels on amd64, and the Go compiler may fuse
// multiply-adds on arm64), as in package kernel.
//
// # Errors
//
// ErrNotFinite (NaN or ±Inf input), ErrNotPositiveDefinite (a factor or an
// update would not be numerically positive definite), ErrNoConvergence
// (LAPACK's SVD or eigenvalue iteration, or SymTopK's inverse iteration,
// failed), ErrLostOrthogonality (a corrupted TISVD
// state), ErrBadSketch (inconsistent SJLT hash pairs on restore). A routine
// that returns one of them leaves its destination or receiver unchanged
// unless its doc comment says otherwise.
package linalg
