package learner

// Online standardisation with outlier-robust running statistics.
//
// A standardiser keeps, for each of its coordinates, a running centre m and
// scale s, and maps a value v to z = clip((v − m)/s, ±clipOut) (z = 0 while
// s = 0, i.e. while the coordinate has looked constant). It has two phases:
//
//   - Warm-up (the first W events, which the self-tuning wrapper buffers
//     anyway): m is the lower median of the values seen so far and s is
//     1.4826·MAD (the normal-consistent median absolute deviation); when the
//     MAD is 0 (sparse or nearly constant coordinates) s is the RMS deviation
//     from the median with the single largest deviation left out. Both
//     ignore one arbitrary outlier once three values have been seen.
//   - Afterwards: Welford's running mean and variance, started from the
//     warm-up estimates with a pseudo-count of W, updated with each value
//     clipped to m ± clipUpdate·s (m ± clipUpdate·max(1, |m|) while s = 0).
//     A value farther than clipUpdate·s from the mean has probability at most
//     1/clipUpdate² = 0.25 % for any distribution (Chebyshev), so honest data
//     is almost never clipped, while one event with a feature of 1e300 moves
//     the variance by at most a factor 1 + clipUpdate²/n, a bump that decays
//     as 1/n afterwards (TestStandardiserOutlier).
//
// The statistics are part of the model's state; they are deterministic
// functions of the input sequence. Guarantees: z is always finite and
// |z| ≤ clipOut; m and s stay finite for finite inputs below ~1e150 in
// magnitude (larger honest values can overflow the variance; they are not
// data any real stream carries).

import (
	"math"
	"slices"

	"okstream/learner/state"
)

const (
	// clipUpdate bounds, in running standard deviations, how far a value may
	// pull the running statistics (Chebyshev: ≤ 0.25 % of honest values).
	clipUpdate = 20.0
	// clipOut bounds the standardised output, so that no single feature can
	// dominate a kernel distance by more than this many standard deviations.
	clipOut = 10.0
	// madToSigma makes the MAD a consistent estimator of σ for normal data.
	madToSigma = 1.4826
)

// standardiser holds running statistics for k coordinates.
type standardiser struct {
	n  float64   // count (pseudo-count W after warm-up)
	m  []float64 // centres
	m2 []float64 // Welford sums of squared deviations (after warm-up)
	s  []float64 // scales (derived: from the buffer in warm-up, sqrt(m2/(n−1)) after)
	// col is scratch for the warm-up estimates (W floats).
	col []float64
}

func newStandardiser(k, w int) *standardiser {
	return &standardiser{m: make([]float64, k), m2: make([]float64, k), s: make([]float64, k), col: make([]float64, 0, w)}
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

// finishWarmup turns the current (warm-up) estimates into Welford
// statistics with pseudo-count w.
func (st *standardiser) finishWarmup(w int) {
	st.n = float64(w)
	for j, s := range st.s {
		st.m2[j] = s * s * (st.n - 1)
	}
}

// add adds value x of coordinate j (after warm-up), clipped as the file
// comment describes, as the (n+1)-th value; the caller increments n once
// every coordinate of the event has been added.
func (st *standardiser) add(j int, x float64) {
	n := st.n + 1
	m, s := st.m[j], st.s[j]
	half := clipUpdate * s
	if s == 0 {
		half = clipUpdate * math.Max(1, math.Abs(m))
	}
	x = math.Max(m-half, math.Min(m+half, x))
	d := x - m
	m += d / n
	st.m[j] = m
	st.m2[j] += d * (x - m)
	st.s[j] = math.Sqrt(math.Max(0, st.m2[j]) / (n - 1))
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

// encode writes the post-warm-up statistics (the scales are derived).
func (st *standardiser) encode(e *state.Encoder) {
	e.F64(st.n)
	e.F64s(st.m)
	e.F64s(st.m2)
}

// decode reads statistics written by encode into st, which must have been
// built for the same number of coordinates.
func (st *standardiser) decode(d *state.Decoder) {
	st.n = d.F64()
	st.m = d.F64sN(st.m, len(st.m))
	st.m2 = d.F64sN(st.m2, len(st.m2))
	if d.Err() != nil {
		return
	}
	if !(st.n >= 2) || math.IsInf(st.n, 0) {
		d.Fail("standardiser count %v", st.n)
		return
	}
	for j := range st.m {
		if math.IsNaN(st.m[j]) || math.IsInf(st.m[j], 0) || !(st.m2[j] >= 0) || math.IsInf(st.m2[j], 0) {
			d.Fail("standardiser statistic %d not finite", j)
			return
		}
		st.s[j] = math.Sqrt(st.m2[j] / (st.n - 1))
	}
}
