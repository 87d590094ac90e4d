// Package drift holds change detectors for a stream of numbers (a loss, an
// error indicator, a feature's value): ADWIN (adwin.go) and the
// Page-Hinkley test (pagehinkley.go).
//
// Both are deterministic: the same sequence of Add calls gives the same
// detections and the same state bytes, on every platform (logarithms come
// from okstream/learner/rng's portable Log, products are never fused into
// an add). Both checkpoint with MarshalBinary/UnmarshalBinary in the
// okstream/learner/state format: a header naming the detector and its
// canonical configuration, then the state; a restored detector continues
// bit for bit as the original would have. Untrusted state bytes never make
// a decoder panic, nothing is allocated from a size read before the bytes
// are checked, and a detector whose UnmarshalBinary fails is unchanged.
//
// Inputs: a NaN, an infinite x or one with |x| > MaxInput is ignored (Add
// returns false and the state does not change), so that no input can turn a
// detector's statistics non-finite.
//
// No Add allocates: ADWIN sizes its bucket rows once, from its window cap,
// when it is built; Page-Hinkley keeps a handful of numbers.
package drift

import (
	"encoding"
	"math"
)

// MaxInput bounds |x| for Add: larger inputs are ignored (squares of
// values up to 1e100 summed over a window of up to 2^40 stay finite).
const MaxInput = 1e100

// Detector is what ADWIN and PageHinkley have in common.
type Detector interface {
	// Add feeds one value and reports whether a change was detected
	// at this value.
	Add(x float64) bool
	// Width is the number of values the current statistics are over.
	Width() int
	// Mean is their mean (0 for an empty window).
	Mean() float64
	// Variance is their population variance (0 for an empty window).
	Variance() float64
	// Detections is the number of changes detected since construction.
	Detections() int64
	// Reset forgets the statistics (not the detection count).
	Reset()
	// Spec is the canonical configuration, stored in the state header.
	Spec() string
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// usable reports whether Add should take x.
func usable(x float64) bool { return math.Abs(x) <= MaxInput } // false for NaN

var (
	_ Detector = (*ADWIN)(nil)
	_ Detector = (*PageHinkley)(nil)
)
