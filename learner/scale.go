package learner

// Online standardisation with outlier-robust statistics, frozen after the
// warm-up.
//
// A standardiser keeps, for each of its coordinates, a centre m and scale s,
// and maps a value v to z = clip((v − m)/s, ±clipOut) (z = 0 while s = 0,
// which only happens during the warm-up). It has two phases:
//
//   - Warm-up (the first W events, which the self-tuning wrapper buffers
//     anyway): m is the lower median of the values seen so far and s is
//     1.4826·MAD (the normal-consistent median absolute deviation); when the
//     MAD is 0 (sparse or nearly constant coordinates) s is the RMS deviation
//     from the median with the single largest deviation left out. Both
//     ignore one arbitrary outlier once three values have been seen.
//   - At the end of the warm-up m and s are frozen for good. A coordinate
//     that was constant over the whole window (s = 0, e.g. a sparse feature
//     not seen yet) gets the unit scale max(1, |m|): it enters the model in
//     its own units around the value it had, instead of being ignored.
//
// Why frozen. The inner learners store examples (support vectors, FORKS'
// sketch, NOGD's Nyström landmarks) or weights in the scaled coordinates of
// the time they learned them; a scale that keeps moving afterwards makes
// those stored coordinates inconsistent with new inputs. Running (Welford)
// statistics did exactly that: on cod-rna the scale of a heavy-tailed
// feature kept growing, about 3.5× by event 3000, and NOGD's support vectors
// drifted out of place until one permutation fell to the majority rate. A
// scale must be a fixed change of units for a model that keeps examples, so
// the only consistent choices are freezing, or changing the scale only where
// every member is rebuilt (which throws away what was learned). Freezing
// after the robust warm-up is the simple one: median and MAD of W events are
// consistent estimators whose error does not depend on the tails (a
// heavy-tailed feature gets a scale of its bulk, and its tail is clipped at
// clipOut), so no single outlier — during or after the warm-up — can wreck
// them (TestStandardiserOutlier), and the cost per event after the warm-up
// is one subtraction and one division per feature. The price: a stream
// whose distribution shifts after the warm-up is standardised with the
// first W events' units (the clip keeps the inputs bounded regardless).
//
// The statistics are part of the model's state; they are deterministic
// functions of the first W events. Guarantees: z is always finite and
// |z| ≤ clipOut; m and s are finite for finite inputs (a non-finite scale
// counts as 0).

import (
	"math"
	"slices"

	"okstream/learner/state"
)

const (
	// clipOut bounds the standardised output, so that no single feature can
	// dominate a kernel distance by more than this many standard deviations.
	clipOut = 10.0
	// madToSigma makes the MAD a consistent estimator of σ for normal data.
	madToSigma = 1.4826
)

// standardiser holds the statistics of k coordinates.
type standardiser struct {
	m []float64 // centres
	s []float64 // scales
	// col is scratch for the warm-up estimates (W floats).
	col []float64
}

func newStandardiser(k, w int) *standardiser {
	return &standardiser{m: make([]float64, k), s: make([]float64, k), col: make([]float64, 0, w)}
}

// fromBuffer sets m and s to the robust warm-up estimates of the t rows in
// buf (row-major, stride k values per row, coordinate j at offset j).
func (st *standardiser) fromBuffer(buf []float64, stride, t int) {
	for j := range st.m {
		col := st.col[:0]
		for i := 0; i < t; i++ {
			col = append(col, buf[i*stride+j])
		}
		st.m[j], st.s[j] = robustLocScale(col)
		st.col = col
	}
}

// robustLocScale returns the lower median of v and a robust scale (see the
// file comment). It reorders v. With no values it returns 0, 0.
func robustLocScale(v []float64) (loc, scale float64) {
	t := len(v)
	if t == 0 {
		return 0, 0
	}
	slices.Sort(v)
	loc = v[(t-1)/2]
	for i, x := range v {
		v[i] = math.Abs(x - loc)
	}
	slices.Sort(v)
	scale = madToSigma * v[(t-1)/2]
	if scale == 0 && t >= 2 {
		var ss float64
		for _, d := range v[:t-1] { // without the largest deviation
			ss += d * d
		}
		scale = math.Sqrt(ss / float64(t-1))
	}
	if math.IsNaN(scale) || math.IsInf(scale, 0) {
		scale = 0
	}
	return loc, scale
}

// freeze ends the warm-up: a coordinate without spread gets the unit scale
// max(1, |m|) (see the file comment); the statistics do not change again.
func (st *standardiser) freeze() {
	for j, s := range st.s {
		if s == 0 {
			st.s[j] = math.Max(1, math.Abs(st.m[j]))
		}
	}
	st.col = nil
}

// z standardises value v of coordinate j.
func (st *standardiser) z(j int, v float64) float64 {
	s := st.s[j]
	if s == 0 {
		return 0
	}
	z := (v - st.m[j]) / s
	return math.Max(-clipOut, math.Min(clipOut, z))
}

// encode writes the frozen statistics.
func (st *standardiser) encode(e *state.Encoder) {
	e.F64s(st.m)
	e.F64s(st.s)
}

// decode reads statistics written by encode into st, which must have been
// built for the same number of coordinates.
func (st *standardiser) decode(d *state.Decoder) {
	st.m = d.F64sN(st.m, len(st.m))
	st.s = d.F64sN(st.s, len(st.s))
	if d.Err() != nil {
		return
	}
	for j := range st.m {
		if math.IsNaN(st.m[j]) || math.IsInf(st.m[j], 0) || !(st.s[j] > 0) || math.IsInf(st.s[j], 0) {
			d.Fail("standardiser statistic %d not finite (or scale not positive)", j)
			return
		}
	}
}
