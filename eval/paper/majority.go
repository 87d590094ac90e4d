package paper

import (
	"fmt"
	"math"

	"okstream/dataset"
)

// Cells at the majority-class rate.
//
// A mistake rate within MajorityBand points of the rate of the constant
// predictor that always answers the file's majority class is, for the
// purpose of these tables, that predictor: a learner "within the band of
// the paper" there has learnt nothing. Every generator of a mistake-rate
// table in this package marks such cells with MajorityMark (markMajority),
// so that a regenerated section keeps the marks; the footnote
// majorityNote explains the mark under the table.

// MajorityBand is the half-width, in percentage points, of the band around
// the majority-class rate whose cells are marked.
const MajorityBand = 0.1

// MajorityMark is appended to a cell at the majority-class rate.
const MajorityMark = " ≈maj"

// atMajority reports whether a mistake rate v (%) is within MajorityBand of
// the majority-class rate maj (%). maj ≤ 0 (unknown, or regression) never
// matches. The comparison allows 1e-9 of rounding so that a value printed
// as exactly maj ± 0.1 is inside.
func atMajority(v, maj float64) bool {
	return maj > 0 && !math.IsNaN(v) && math.Abs(v-maj) <= MajorityBand+1e-9
}

// markMajority returns s (the printed cell of value v) with MajorityMark
// appended when v is at the majority-class rate maj.
func markMajority(s string, v, maj float64) string {
	if atMajority(v, maj) {
		return s + MajorityMark
	}
	return s
}

// majorityNote is the footnote under a table whose majority-class rate is
// maj (%), or "" when maj is unknown.
func majorityNote(maj float64) string {
	if maj <= 0 {
		return ""
	}
	return fmt.Sprintf("Majority-class predictor: %.3f %% mistakes; `%s` marks a cell within %g point of it (the constant predictor).", maj, MajorityMark[1:], MajorityBand)
}

// MajorityRate returns the mistake rate (%) of always predicting the more
// frequent of the labels ±1 in ds (0 for an empty dataset).
func MajorityRate(ds *dataset.Dataset) float64 {
	n := ds.Len()
	if n == 0 {
		return 0
	}
	pos := 0
	for _, y := range ds.Y {
		if y > 0 {
			pos++
		}
	}
	return 100 * float64(min(pos, n-pos)) / float64(n)
}
