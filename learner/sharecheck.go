package learner

import (
	"errors"
	"fmt"
	"math"

	"okstream/learner/linalg"
	"okstream/learner/state"
)

// DeltaChecker is implemented by the Sharers whose deltas a runtime can
// check before it stores them (issue 37): CheckDelta fully decodes one
// delta of this model's spec and dimension, as ShareMerge would, and
// refuses it unless every size matches, every value is finite and every
// magnitude is within the learner's documented bound. It changes nothing,
// allocates no more than the bytes present, and is a function of the bytes
// alone (any copy of the spec gives the same answer), so every instance
// accepts or refuses a delta alike. A delta it accepts does not make
// ShareMerge fail for a reason of its own (an Own delta that is not the
// copy's own learning still does). Errors wrap ErrDeltaInvalid.
type DeltaChecker interface {
	CheckDelta(data []byte) error
}

// ErrDeltaInvalid marks a delta CheckDelta refused.
var ErrDeltaInvalid = errors.New("invalid shared delta")

// Magnitude bounds of shared deltas (CheckDelta).
const (
	// MaxWeightDelta bounds |Δw_i| of FOGD's delta (its 8-bit codes'
	// largest magnitude, 127·scale): the change of one weight over one
	// sync period. FOGD's random features have ‖z‖ = 1, so a weight change
	// of Δ moves a score by up to Δ; 10^6 in one sync period is a diverged
	// or forged model, not learning (labels are ±1 for classification and
	// should be scaled for regression; --max-abs-value caps them at 10^9).
	MaxWeightDelta = 1e6
	// MaxSampleDelta bounds every value of the deltas that carry examples
	// or second-order statistics in a learnt basis (FORKS, NOGD): the
	// buffered features, labels and coefficients, ΔA, Δb and Δw. 10^15 is
	// 10^6 times the default --max-abs-value (10^9).
	MaxSampleDelta = 1e15
	// MaxStatDelta bounds every value of the sufficient statistics' deltas
	// (linear ridge: ΔG = Σ x̃x̃ᵀ, Δb = Σ y x̃; PKAWV-Taylor: ΔS, Δb): sums
	// of products of two values of at most 10^9 (--max-abs-value) over a
	// sync period, i.e. up to 10^18 per event; 10^30 leaves 10^12 events
	// per period and keeps the sum of any number of partitions' deltas far
	// from float64 overflow.
	MaxStatDelta = 1e30
)

func deltaInvalid(name string, err error) error {
	if errors.Is(err, ErrDeltaInvalid) {
		return err
	}
	return fmt.Errorf("learner %s: %w: %w", name, ErrDeltaInvalid, err)
}

// checkBounded reports an error if a value of xs is non-finite or of
// magnitude above bound.
func checkBounded(what string, bound float64, xs ...[]float64) error {
	for _, x := range xs {
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: non-finite value", what)
			}
			if math.Abs(v) > bound {
				return fmt.Errorf("%s: magnitude %g above the bound %g", what, math.Abs(v), bound)
			}
		}
	}
	return nil
}

// check is CheckDelta for a vecShare over n values (bound: the largest
// magnitude accepted).
func (s *vecShare) check(b *base, n int, data []byte, bound float64) error {
	_, err := s.checked(b, n, data, bound)
	return err
}

// checked is check returning the decoded values of an exact (not 8-bit)
// delta (nil for an 8-bit one).
func (s *vecShare) checked(b *base, n int, data []byte, bound float64) ([]float64, error) {
	sd := SharedDelta{Data: data}
	if s.mean {
		x, err := decodeQ8(b, sd, n)
		if err != nil {
			return nil, deltaInvalid(b.name, err)
		}
		// Q8sRawN refuses a negative or infinite scale, not a NaN one (a
		// diverged copy's; see state.Quantize8): refused here.
		if x.scale != x.scale {
			return nil, deltaInvalid(b.name, errors.New("8-bit delta with a NaN scale"))
		}
		if amax := 127 * x.scale; amax > bound {
			return nil, deltaInvalid(b.name, fmt.Errorf("8-bit delta of magnitude up to %g, above the bound %g", amax, bound))
		}
		for _, q := range x.codes {
			if int8(q) == -128 { // Quantize8 writes codes in [-127, 127]
				return nil, deltaInvalid(b.name, errors.New("8-bit delta with code -128"))
			}
		}
		return nil, nil
	}
	d := state.NewDecoder(data)
	d.Header(b.name, b.spec, b.dim)
	x := d.F64sN(nil, n) // sized by the bytes present (F64sN checks them first)
	if err := deltaErr(b, sd, d); err != nil {
		return nil, deltaInvalid(b.name, err)
	}
	if err := checkBounded("delta", bound, x); err != nil {
		return nil, deltaInvalid(b.name, err)
	}
	return x, nil
}

// CheckDelta (DeltaChecker): the 8-bit codes of len(w) weights, a finite
// scale, and |Δw_i| ≤ MaxWeightDelta.
func (l *FOGD) CheckDelta(data []byte) error {
	return l.sh.check(&l.base, len(l.w), data, MaxWeightDelta)
}

// CheckDelta (DeltaChecker; regression only): ΔG and Δb of the model's
// size, finite, each |value| ≤ MaxStatDelta.
func (l *Linear) CheckDelta(data []byte) error {
	if l.st == nil {
		return errLinearNotShared
	}
	return l.sh.check(&l.base, len(l.st), data, MaxStatDelta)
}

// CheckDelta (DeltaChecker; basis=taylor only): ΔS and Δb of the model's
// size, finite, each |value| ≤ MaxStatDelta, and ΔS positive semidefinite
// up to psdSlack·λ (a genuine ΔS is a sum of φφᵀ, up to rounding): the
// merge refactors λI + S, which deltas with negative eigenvalues could make
// indefinite, and a refused merge stops the partition (found by
// FuzzCheckDelta). The check factors psdSlack·λ·I + ΔS, O(r³/3) per delta
// (about 30 µs at r = 55).
func (l *PKAWV) CheckDelta(data []byte) error {
	if l.ny != nil {
		return fmt.Errorf("learner pkawv: %s", errNystromShare)
	}
	x, err := l.sh.checked(&l.base, len(l.st), data, MaxStatDelta)
	if err != nil || x == nil {
		return err
	}
	r := l.r
	a := make([]float64, r*r)
	for i := range r {
		copy(a[i*r:i*r+i+1], x[tri(i):tri(i+1)])
		a[i*r+i] += psdSlack * l.lambda
	}
	if linalg.NewCholesky(r).Factorize(a, r) != nil {
		return deltaInvalid(l.name, fmt.Errorf("ΔS is not positive semidefinite (an eigenvalue below -%g·λ)", psdSlack))
	}
	return nil
}

// psdSlack is how far below zero (relative to λ) an eigenvalue of a
// PKAWV-Taylor ΔS may be, for rounding. A genuine ΔS = S − S_sync, its S
// accumulated entry by entry over an epoch of k events, carries an error
// of at most about r·k·ε·max|S| in norm (1.9·10⁻¹³·max|S| at r = 55, k =
// 16), so genuine deltas pass until max|S| — about the number of events
// merged, Taylor features being at most 1 — reaches 5·10⁹ (λ = 1). A forged
// delta that passes lowers an eigenvalue of the merged λI + S by at most
// 10⁻³·λ: a thousand of them would be needed to break the factor (with a
// control secret, none passes).
const psdSlack = 1e-3

// CheckDelta (DeltaChecker): a Stage-1 delta's entries (of the model's
// dimension) or a Stage-2 delta's statistics (of its rank), decoded as the
// merge does (finite, a non-negative curvature diagonal), every value at
// most MaxSampleDelta in magnitude.
func (l *FORKS) CheckDelta(data []byte) error {
	if l.sh == nil {
		return errForksNotShared
	}
	k, kk := l.sh.k, l.sh.k*(l.sh.k+1)/2
	var buf []float64
	if len(data) >= 8*(k+kk) { // a Stage-2 delta holds at least these floats
		buf = make([]float64, k+kk+l.dim)
	} else {
		if _, kind, err := openDelta(data, forksDeltaName, l.spec, l.dim); err == nil && kind == forksDeltaStage2 {
			return deltaInvalid("forks", errors.New("stage-2 delta shorter than its statistics"))
		}
	}
	fd, err := l.decodeDelta(data, buf) // buf is used only by a Stage-2 delta
	if err != nil {
		return deltaInvalid("forks", err)
	}
	if err := checkBounded("forks delta", MaxSampleDelta, fd.entries.rows, fd.entries.coef, fd.entries.labels, fd.b, fd.dA, fd.cand); err != nil {
		return deltaInvalid("forks", err)
	}
	return nil
}

// CheckDelta (DeltaChecker): a phase-1 delta's entries (of the model's
// dimension) or a phase-2 Δw, decoded as the merge does, finite, every
// value at most MaxSampleDelta in magnitude (Δw's length is the basis's
// rank, which depends on the data: the merge checks it against its own).
func (l *NOGD) CheckDelta(data []byte) error {
	if l.sh == nil {
		return errNOGDNotShared
	}
	nd, err := l.decodeDelta(data, nil)
	if err != nil {
		return deltaInvalid("nogd", err)
	}
	if err := checkBounded("nogd delta", MaxSampleDelta, nd.entries.rows, nd.entries.coef, nd.entries.labels, nd.dw); err != nil {
		return deltaInvalid("nogd", err)
	}
	return nil
}
